"""The everyday operators of kiln/ops/pointwise_more_ops.cpp against torch 1.13:
values (NaN and infinities included), dtypes, every overload (in-place,
out=, Scalar forms), non-contiguous inputs, errors, scripts, fusion and
gradients (against torch and by float64 finite differences)."""
import numpy as np
import pytest
import torch

import kiln
from autograd_check import assert_gradients_match_torch, gradcheck
from conftest import Fusion, assert_same

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-30, 30.0, -30.0]


def _floats(dtype=np.float32, n=67, lo=-5, hi=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(lo, hi, n)
    x[: len(SPECIALS)] = SPECIALS
    return x.astype(dtype)


def _ints(dtype=np.int64, n=30, seed=1):
    return np.random.default_rng(seed).integers(-9, 10, n).astype(dtype)


def _bools(n=30):
    return np.arange(n) % 3 == 0


def _pair(lib, a):
    return lib.from_numpy(a.copy())


def _same_error(fn_torch, fn_kiln, prefixed=False):
    """The same message; `prefixed`: kiln's may start with the op's name."""
    with pytest.raises(RuntimeError) as theirs:
        fn_torch()
    with pytest.raises(RuntimeError) as ours:
        fn_kiln()
    if prefixed:
        assert str(ours.value).endswith(str(theirs.value))
    else:
        assert str(ours.value) == str(theirs.value)


UNARY = ["log2", "exp2", "square", "frac", "deg2rad", "rad2deg", "sinc", "logit", "erfinv", "digamma", "i0", "sgn",
         "signbit", "nan_to_num", "isreal"]
INPLACE = {"log2", "exp2", "square", "frac", "deg2rad", "rad2deg", "sinc", "logit", "erfinv", "digamma", "i0", "sgn",
           "nan_to_num"}
OUT = INPLACE | {"signbit"}
# Ops whose inputs are mapped to their domain, and tolerance.
TOL = {"digamma": 1e-4, "erfinv": 1e-5, "i0": 1e-5}


def _input(name, dtype):
    if name == "erfinv":
        return _floats(dtype, lo=-1, hi=1)
    if name == "logit":
        return _floats(dtype, lo=0, hi=1)
    return _floats(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", UNARY)
def test_unary_float_values(name, dtype):
    x = _input(name, dtype)
    t = getattr(torch, name)(_pair(torch, x))
    k = getattr(kiln, name)(_pair(kiln, x))
    assert_same(k, t, rtol=TOL.get(name, 2e-6 if dtype == np.float32 else 1e-12), atol=1e-6)
    # Strided input.
    wide = np.repeat(x, 2)
    assert_same(getattr(kiln, name)(kiln.from_numpy(wide)[::2]), t, rtol=TOL.get(name, 2e-6), atol=1e-6)


@pytest.mark.parametrize("kind", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name", UNARY + ["positive"])
def test_unary_other_dtypes(name, kind):
    x = _bools() if kind == "bool" else _ints(kind)
    if kind == "uint8":
        x = np.abs(x).astype(np.uint8)
    try:
        t = getattr(torch, name)(_pair(torch, x))
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as ours:
            getattr(kiln, name)(_pair(kiln, x))
        assert str(ours.value) == str(e)
        return
    assert_same(getattr(kiln, name)(_pair(kiln, x)), t, rtol=TOL.get(name, 2e-6), atol=1e-6)


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_unary_inplace_and_out(name):
    x = _input(name, np.float32)
    expected = getattr(torch, name)(_pair(torch, x))
    k = _pair(kiln, x)
    r = getattr(kiln, name + "_")(k)
    assert r is not None
    assert_same(k, expected, rtol=TOL.get(name, 2e-6), atol=1e-6)
    out = kiln.empty([len(x)], dtype=kiln.float32)
    getattr(kiln, name)(_pair(kiln, x), out=out)
    assert_same(out, expected, rtol=TOL.get(name, 2e-6), atol=1e-6)


@pytest.mark.parametrize("name", ["log2", "exp2", "sinc", "deg2rad", "erfinv", "digamma", "i0", "logit"])
def test_promoting_inplace_on_integers_raises_as_torch(name):
    x = _ints()
    _same_error(lambda: getattr(_pair(torch, x), name + "_")(), lambda: getattr(_pair(kiln, x), name + "_")(),
                prefixed=True)
    _same_error(lambda: getattr(torch, name)(_pair(torch, _floats()), out=torch.zeros(67, dtype=torch.int64)),
                lambda: getattr(kiln, name)(_pair(kiln, _floats()), out=kiln.zeros([67], dtype=kiln.int64)),
                prefixed=True)


def test_signbit_out():
    x = _floats()
    out = kiln.empty([len(x)], dtype=kiln.bool)
    kiln.signbit(_pair(kiln, x), out=out)
    assert_same(out, torch.signbit(_pair(torch, x)))


# (eps > 0.5 is left out: torch's vector and scalar loops clamp it differently.)
@pytest.mark.parametrize("eps", [None, 0.0, 0.1, 0.45, -1.0])
def test_logit_eps(eps):
    x = _floats(np.float64, lo=-0.5, hi=1.5)
    assert_same(kiln.logit(_pair(kiln, x), eps), torch.logit(_pair(torch, x), eps), rtol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"nan": 1.5}, {"nan": 2.0, "posinf": 7.0, "neginf": -7.0}, {"posinf": 1e300}])
def test_nan_to_num_arguments(kwargs):
    for dtype in [np.float32, np.float64]:
        x = _floats(dtype)
        assert_same(kiln.nan_to_num(_pair(kiln, x), **kwargs), torch.nan_to_num(_pair(torch, x), **kwargs))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4])
def test_polygamma(n):
    x = _floats(np.float64, lo=-4, hi=6)
    assert_same(kiln.polygamma(n, _pair(kiln, x)), torch.polygamma(n, _pair(torch, x)), rtol=1e-7, atol=1e-7)
    # float32 in place (away from the poles, where torch's float32 sin(pi x) is not 0).
    x32 = np.abs(x).astype(np.float32) + np.float32(0.25)
    k = _pair(kiln, x32)
    k.polygamma_(n)
    assert_same(k, torch.polygamma(n, _pair(torch, x32)), rtol=1e-4, atol=1e-4)
    pos = np.abs(_ints()) + 1
    assert_same(kiln.polygamma(n, _pair(kiln, pos)), torch.polygamma(n, _pair(torch, pos)), rtol=1e-5,
                atol=1e-5)
    _same_error(lambda: torch.polygamma(-1, _pair(torch, x)), lambda: kiln.polygamma(-1, _pair(kiln, x)))


def test_positive_returns_self():
    x = kiln.ones([3])
    assert kiln.positive(x) is x or kiln.positive(x).data_ptr() == x.data_ptr()


BINARY = ["hypot", "logaddexp", "logaddexp2", "fmax", "fmin", "nextafter", "xlogy", "float_power", "heaviside"]
BINARY_INPLACE = {"hypot", "nextafter", "xlogy", "float_power", "heaviside"}


def _binary_inputs(dtype):
    a = _floats(dtype, seed=3)
    b = _floats(dtype, seed=4)
    b[12:24] = SPECIALS
    b[24:36] = SPECIALS[::-1]
    return a, b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", BINARY)
def test_binary_float_values(name, dtype):
    a, b = _binary_inputs(dtype)
    t = getattr(torch, name)(_pair(torch, a), _pair(torch, b))
    k = getattr(kiln, name)(_pair(kiln, a), _pair(kiln, b))
    assert_same(k, t, rtol=2e-6 if dtype == np.float32 else 1e-12, atol=1e-6)
    # Broadcasting and a strided operand.
    t2 = getattr(torch, name)(_pair(torch, a.reshape(67, 1)), torch.from_numpy(np.repeat(b[:5], 2))[::2])
    k2 = getattr(kiln, name)(_pair(kiln, a.reshape(67, 1)), kiln.from_numpy(np.repeat(b[:5], 2))[::2])
    assert_same(k2, t2, rtol=2e-6 if dtype == np.float32 else 1e-12, atol=1e-6)
    out = kiln.empty([67], dtype=k.dtype)
    getattr(kiln, name)(_pair(kiln, a), _pair(kiln, b), out=out)
    assert_same(out, t, rtol=2e-6, atol=1e-6)
    if name in BINARY_INPLACE and (name != "float_power" or dtype == np.float64):
        x = _pair(kiln, a)
        getattr(x, name + "_")(_pair(kiln, b))
        assert_same(x, t, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("kinds", [("int64", "int64"), ("int32", "int64"), ("bool", "bool"), ("int64", "float32"),
                                   ("float32", "float64"), ("int32", "int32")])
@pytest.mark.parametrize("name", BINARY + ["lcm"])
def test_binary_dtypes(name, kinds):
    def make(kind, seed):
        if kind == "bool":
            return _bools(67)
        if kind.startswith("int"):
            return _ints(kind, 67, seed)
        return _floats(getattr(np, kind), seed=seed)
    a, b = make(kinds[0], 5), make(kinds[1], 6)
    try:
        t = getattr(torch, name)(_pair(torch, a), _pair(torch, b))
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as ours:
            getattr(kiln, name)(_pair(kiln, a), _pair(kiln, b))
        assert str(ours.value) == str(e)
        return
    assert_same(getattr(kiln, name)(_pair(kiln, a), _pair(kiln, b)), t, rtol=2e-6, atol=1e-6)


def test_lcm_values_and_inplace():
    a, b = _ints(n=67, seed=7), _ints(n=67, seed=8)
    assert_same(kiln.lcm(_pair(kiln, a), _pair(kiln, b)), torch.lcm(_pair(torch, a), _pair(torch, b)))
    x = _pair(kiln, a)
    x.lcm_(_pair(kiln, b))
    assert_same(x, torch.lcm(_pair(torch, a), _pair(torch, b)))


def test_xlogy_scalar_overloads():
    a, b = _binary_inputs(np.float32)
    for other in [2, 0.5, 0.0]:
        assert_same(kiln.xlogy(_pair(kiln, a), other), torch.xlogy(_pair(torch, a), other))
        assert_same(kiln.xlogy(other, _pair(kiln, b)), torch.xlogy(other, _pair(torch, b)))
    out = kiln.empty([67])
    kiln.xlogy(3, _pair(kiln, b), out=out)
    assert_same(out, torch.xlogy(3, _pair(torch, b)))
    kiln.xlogy(_pair(kiln, a), 3.0, out=out)
    assert_same(out, torch.xlogy(_pair(torch, a), 3.0))
    x = _pair(kiln, a)
    x.xlogy_(2.0)
    assert_same(x, torch.xlogy(_pair(torch, a), 2.0))
    # Integers promote to float.
    assert_same(kiln.xlogy(_pair(kiln, _ints()), 2), torch.xlogy(_pair(torch, _ints()), 2))


def test_float_power_overloads():
    a = _floats(np.float32, lo=0.1, hi=3)
    for e in [2, 0.5, -1.5]:
        assert_same(kiln.float_power(_pair(kiln, a), e), torch.float_power(_pair(torch, a), e), rtol=1e-12)
        assert_same(kiln.float_power(e, _pair(kiln, a)), torch.float_power(e, _pair(torch, a)), rtol=1e-12)
    assert_same(kiln.float_power(_pair(kiln, _ints()), 2), torch.float_power(_pair(torch, _ints()), 2))
    _same_error(lambda: _pair(torch, a).float_power_(2), lambda: _pair(kiln, a).float_power_(2))
    _same_error(lambda: torch.float_power(_pair(torch, a), 2, out=torch.empty(67)),
                lambda: kiln.float_power(_pair(kiln, a), 2, out=kiln.empty([67])))
    x = _pair(kiln, a.astype(np.float64))
    x.float_power_(2)
    assert_same(x, torch.float_power(_pair(torch, a), 2))


def test_heaviside_mismatched_dtypes_raise():
    _same_error(lambda: torch.heaviside(torch.ones(3), torch.ones(3, dtype=torch.float64)),
                lambda: kiln.heaviside(kiln.ones([3]), kiln.ones([3], dtype=kiln.float64)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
@pytest.mark.parametrize("kwargs", [{}, {"rtol": 0.0, "atol": 0.0}, {"equal_nan": True}, {"rtol": 0.1, "atol": 1.0}])
def test_isclose_allclose_equal(dtype, kwargs):
    a, b = _binary_inputs(np.float64)
    b = np.where(np.arange(67) % 2 == 0, a, a + 1e-9)
    b[40:45] = a[40:45] + 0.5
    a, b = a.astype(dtype), b.astype(dtype)
    assert_same(kiln.isclose(_pair(kiln, a), _pair(kiln, b), **kwargs), torch.isclose(_pair(torch, a), _pair(torch, b), **kwargs))
    if dtype.startswith("float"):
        a2, b2 = a[12:], b[12:]  # no NaN
        assert kiln.allclose(_pair(kiln, a2), _pair(kiln, b2), **kwargs) == torch.allclose(
            _pair(torch, a2), _pair(torch, b2), **kwargs)
    assert kiln.equal(_pair(kiln, a), _pair(kiln, a)) == torch.equal(_pair(torch, a), _pair(torch, a))
    assert kiln.equal(_pair(kiln, a), _pair(kiln, b)) == torch.equal(_pair(torch, a), _pair(torch, b))
    assert kiln.equal(_pair(kiln, a), _pair(kiln, a[:3])) == torch.equal(_pair(torch, a), _pair(torch, a[:3]))


def test_isclose_errors():
    _same_error(lambda: torch.isclose(torch.ones(2), torch.ones(2, dtype=torch.float64)),
                lambda: kiln.isclose(kiln.ones([2]), kiln.ones([2], dtype=kiln.float64)))
    _same_error(lambda: torch.isclose(torch.ones(2), torch.ones(2), rtol=-1.0),
                lambda: kiln.isclose(kiln.ones([2]), kiln.ones([2]), rtol=-1.0))
    _same_error(lambda: torch.isclose(torch.ones(2), torch.ones(2), atol=-1.0),
                lambda: kiln.isclose(kiln.ones([2]), kiln.ones([2]), atol=-1.0))


@pytest.mark.parametrize("invert", [False, True])
def test_isin(invert):
    e, t = _ints(n=50, seed=2), _ints(n=7, seed=3)
    assert_same(kiln.isin(_pair(kiln, e), _pair(kiln, t), invert=invert),
                torch.isin(_pair(torch, e), _pair(torch, t), invert=invert))
    f = _floats()
    assert_same(kiln.isin(_pair(kiln, f), _pair(kiln, f[5:9]), invert=invert),
                torch.isin(_pair(torch, f), _pair(torch, f[5:9]), invert=invert))
    # Mixed dtypes promote; Scalar forms.
    assert_same(kiln.isin(_pair(kiln, e), _pair(kiln, np.array([1.0, 2.5])), invert=invert),
                torch.isin(_pair(torch, e), _pair(torch, np.array([1.0, 2.5])), invert=invert))
    assert_same(kiln.isin(_pair(kiln, e), 3, invert=invert), torch.isin(_pair(torch, e), 3, invert=invert))
    assert_same(kiln.isin(3, _pair(kiln, e), invert=invert), torch.isin(3, _pair(torch, e), invert=invert))
    out = kiln.empty([50], dtype=kiln.bool)
    kiln.isin(_pair(kiln, e), _pair(kiln, t), invert=invert, out=out)
    assert_same(out, torch.isin(_pair(torch, e), _pair(torch, t), invert=invert))


SCRIPT = """
def f(x, y, i):
    a = torch.log2(x) + torch.exp2(x) + torch.square(x) + torch.frac(x) + torch.deg2rad(x) + torch.rad2deg(x)
    b = torch.sinc(x) + torch.logit(x, 0.01) + torch.erfinv(x / 10) + torch.digamma(x) + torch.polygamma(1, x)
    c = torch.i0(x) + torch.sgn(x) + torch.positive(x) + torch.nan_to_num(x, 0.0)
    d = torch.hypot(x, y) + torch.xlogy(x, y) + torch.logaddexp(x, y) + torch.logaddexp2(x, y) + torch.fmax(x, y)
    e = torch.fmin(x, y) + torch.nextafter(x, y) + torch.float_power(x, 2).float() + torch.heaviside(x, y)
    f = torch.lcm(i, i + 1) + torch.isclose(x, y).long() + torch.isin(i, i).long() + torch.signbit(x).long()
    g = torch.isreal(x).long() + torch.xlogy(2.0, y) + torch.xlogy(x, 2.0)
    return a + b + c + d + e, f + g.long(), torch.allclose(x, y), torch.equal(x, x)
"""


def test_scripted_matches_torch():
    x = _floats(np.float32, lo=0.1, hi=5)
    y = _floats(np.float32, lo=0.1, hi=5, seed=9)
    x[:12] = np.linspace(0.2, 3, 12)
    y[:12] = np.linspace(0.3, 4, 12)
    i = _ints(n=67)
    theirs = torch.jit.CompilationUnit(SCRIPT).f(_pair(torch, x), _pair(torch, y), _pair(torch, i))
    for fusion in [False, True]:
        with Fusion(fusion):
            ours = kiln.compile(SCRIPT).f(_pair(kiln, x), _pair(kiln, y), _pair(kiln, i))
        assert_same(ours[0], theirs[0], rtol=1e-4, atol=1e-4)
        assert_same(ours[1], theirs[1], rtol=1e-4, atol=1e-4)
        assert ours[2] == theirs[2] and ours[3] == theirs[3]


FUSED = ["log2", "exp2", "deg2rad", "rad2deg", "sinc", "sgn"]


@pytest.mark.parametrize("name", FUSED)
def test_pointwise_ops_fuse_bit_identical(name):
    x = _floats(np.float32, n=1001, seed=3)
    src = f"def f(x):\n    return torch.{name}(x) * 2.0 + 1.0\n"
    with Fusion(True):
        unit = kiln.compile(src)
        kiln._C._reset_fusion_stats()
        fused = unit.f(_pair(kiln, x))
        graph = str(unit.f.graph_for(_pair(kiln, x)))
        assert kiln._C._fusion_stats()["kernel_runs"] >= 1
    assert "prim::FusionGroup" in graph and f"aten::{name}" in graph, graph
    eager = getattr(kiln, name)(_pair(kiln, x))
    np.testing.assert_array_equal(fused.numpy(), eager.numpy() * np.float32(2) + np.float32(1))


def test_shape_propagation():
    unit = kiln.compile("def f(x, i):\n    return torch.log2(i), torch.square(i), torch.signbit(x), torch.hypot(x, x)\n")
    graph = str(unit.f.graph_for(kiln.ones([2, 3]), kiln.ones([2, 3], dtype=kiln.int64)))
    assert "Float(2, 3" in graph and "Long(2, 3" in graph and "Bool(2, 3" in graph, graph
    unit = kiln.compile("def f(x):\n    return torch.float_power(x, 2), torch.heaviside(x, x)\n")
    graph = str(unit.f.graph_for(kiln.ones([2, 3])))
    assert "Double(2, 3" in graph and "Float(" in graph, graph


# (program, input shapes, positive inputs)
GRADIENTS = {
    "log2": (lambda lib, x: lib.log2(x), [(3, 4)], True),
    "exp2": (lambda lib, x: lib.exp2(x), [(3, 4)], False),
    "square": (lambda lib, x: lib.square(x), [(3, 4)], False),
    "frac": (lambda lib, x: lib.frac(x), [(3, 4)], True),
    "deg2rad": (lambda lib, x: lib.deg2rad(x), [(3, 4)], False),
    "rad2deg": (lambda lib, x: lib.rad2deg(x), [(3, 4)], False),
    "sinc": (lambda lib, x: lib.sinc(x), [(3, 4)], False),
    "logit": (lambda lib, x: lib.logit(x * 0.1), [(3, 4)], True),
    "logit_eps": (lambda lib, x: lib.logit(x * 0.2, 0.15), [(3, 4)], True),
    "erfinv": (lambda lib, x: lib.erfinv(x * 0.3), [(3, 4)], False),
    "digamma": (lambda lib, x: lib.digamma(x), [(3, 4)], True),
    "polygamma": (lambda lib, x: lib.polygamma(2, x), [(3, 4)], True),
    "i0": (lambda lib, x: lib.i0(x), [(3, 4)], False),
    "sgn": (lambda lib, x: lib.sgn(x) * x, [(3, 4)], False),
    "nan_to_num": (lambda lib, x: lib.nan_to_num(x.log()), [(3, 4)], False),
    "hypot": (lambda lib, x, y: lib.hypot(x, y), [(3, 4), (3, 4)], True),
    "hypot_broadcast": (lambda lib, x, y: lib.hypot(x, y), [(3, 4), (1, 4)], True),
    "xlogy": (lambda lib, x, y: lib.xlogy(x, y), [(3, 4), (3, 4)], True),
    "xlogy_scalar_other": (lambda lib, x: lib.xlogy(x, 3.0), [(3, 4)], True),
    "xlogy_scalar_self": (lambda lib, y: lib.xlogy(3.0, y), [(3, 4)], True),
    "logaddexp": (lambda lib, x, y: lib.logaddexp(x, y), [(3, 4), (3, 4)], False),
    "logaddexp2": (lambda lib, x, y: lib.logaddexp2(x, y), [(3, 4), (3, 4)], False),
    "fmax": (lambda lib, x, y: lib.fmax(x, y), [(3, 4), (3, 4)], False),
    "fmin": (lambda lib, x, y: lib.fmin(x, y), [(3, 4), (3, 4)], False),
    "float_power": (lambda lib, x, y: lib.float_power(x, y), [(3, 4), (3, 4)], True),
    "float_power_scalar": (lambda lib, x: lib.float_power(x, 2.5), [(3, 4)], True),
    "float_power_scalar_self": (lambda lib, y: lib.float_power(2.5, y), [(3, 4)], True),
}


def _arrays(shapes, positive, dtype, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for k, s in enumerate(shapes):
        a = rng.standard_normal(s)
        a = np.abs(a) + 0.5 if positive else a
        # fmax/fmin: distinct operands, away from ties.
        out.append((a + k * 0.37).astype(dtype))
    return out


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_match_torch(name):
    fn, shapes, positive = GRADIENTS[name]
    values = _arrays(shapes, positive, np.float32)
    assert_gradients_match_torch(fn, values, rtol=1e-3, atol=1e-4)
    assert_gradients_match_torch(fn, values, noncontiguous=True, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", sorted(set(GRADIENTS) - {"sgn"}))
def test_gradcheck_float64(name):
    fn, shapes, positive = GRADIENTS[name]
    values = _arrays(shapes, positive, np.float64, seed=4)
    if name == "frac":
        values = [v + 0.25 for v in values]
    gradcheck(fn, values, tol=1e-4)


def test_timing_is_reasonable():
    """The kernels run in the same order of time as torch's (a loose bound: the machine is noisy)."""
    import timeit
    x = np.random.default_rng(0).uniform(0.1, 2, 1 << 16).astype(np.float32)
    kx, tx = _pair(kiln, x), _pair(torch, x)
    for name in ["log2", "hypot", "sinc", "logit"]:
        args_k = (kx, kx) if name == "hypot" else (kx,)
        args_t = (tx, tx) if name == "hypot" else (tx,)
        tk = min(timeit.repeat(lambda: getattr(kiln, name)(*args_k), number=20, repeat=5))
        tt = min(timeit.repeat(lambda: getattr(torch, name)(*args_t), number=20, repeat=5))
        assert tk < 20 * tt + 1e-3, (name, tk, tt)


def test_float_power_inplace_gradient():
    a = np.abs(np.random.default_rng(5).standard_normal((3, 4))) + 0.5
    e = np.random.default_rng(6).standard_normal((3, 4))
    for lib in (torch, kiln):
        x = lib.from_numpy(a.copy())
        x.requires_grad_(True)
        y = lib.from_numpy(e.copy())
        y.requires_grad_(True)
        z = x * 1.0
        z.float_power_(y)
        z.sum().backward()
        if lib is torch:
            expected = (x.grad.numpy(), y.grad.numpy())
        else:
            np.testing.assert_allclose(x.grad.numpy(), expected[0], rtol=1e-10)
            np.testing.assert_allclose(y.grad.numpy(), expected[1], rtol=1e-10)
        x2 = lib.from_numpy(a.copy())
        x2.requires_grad_(True)
        z2 = x2 * 1.0
        z2.float_power_(2.5)
        z2.sum().backward()
        np.testing.assert_allclose(x2.grad.numpy(), 2.5 * a ** 1.5, rtol=1e-10)


def test_nondifferentiable_ops_raise_like_torch():
    x = kiln.ones([3], requires_grad=True)
    with pytest.raises(RuntimeError):
        kiln.heaviside(x, x).sum().backward()


# --- reductions (kiln/ops/reduce_more_ops.cpp) ---------------------------------------

def _with_nans(dtype=np.float32, shape=(4, 5), seed=11):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    a.flat[::3] = np.nan
    return a


@pytest.mark.parametrize("kwargs", [{}, {"dim": 0}, {"dim": [0, 1]}, {"dim": 1, "keepdim": True},
                                    {"dtype": torch.float64}])
@pytest.mark.parametrize("name", ["nansum", "nanmean"])
def test_nan_reductions(name, kwargs):
    a = _with_nans()
    kk = dict(kwargs)
    if "dtype" in kk:
        kk["dtype"] = kiln.float64
    assert_same(getattr(kiln, name)(_pair(kiln, a), **kk), getattr(torch, name)(_pair(torch, a), **kwargs),
                rtol=1e-5)
    # Non-contiguous.
    assert_same(getattr(kiln, name)(_pair(kiln, a).t(), **kk), getattr(torch, name)(_pair(torch, a).t(), **kwargs),
                rtol=1e-5)
    out = kiln.empty([0], dtype=kiln.float64 if "dtype" in kk else kiln.float32)
    getattr(kiln, name)(_pair(kiln, a), **kk, out=out)
    assert_same(out, getattr(torch, name)(_pair(torch, a), **kwargs), rtol=1e-5)


def test_nansum_integers_and_nanmean_error():
    i = _ints().reshape(5, 6)
    assert_same(kiln.nansum(_pair(kiln, i)), torch.nansum(_pair(torch, i)))
    assert_same(kiln.nansum(_pair(kiln, _bools())), torch.nansum(_pair(torch, _bools())))
    _same_error(lambda: torch.nanmean(_pair(torch, i)), lambda: kiln.nanmean(_pair(kiln, i)))


@pytest.mark.parametrize("dim", [None, 0, 1, -1, [0, 1]])
def test_count_nonzero(dim):
    a = np.array([[0, 1, 2], [0, 0, 3]], dtype=np.float32)
    if dim is None:
        assert_same(kiln.count_nonzero(_pair(kiln, a)), torch.count_nonzero(_pair(torch, a)))
    else:
        assert_same(kiln.count_nonzero(_pair(kiln, a), dim), torch.count_nonzero(_pair(torch, a), dim))
    assert_same(kiln.count_nonzero(_pair(kiln, a > 0)), torch.count_nonzero(_pair(torch, a > 0)))


def test_trace():
    for a in [_floats(np.float32, n=12).reshape(3, 4), _ints(n=12).reshape(4, 3), _ints(np.int32, n=9).reshape(3, 3)]:
        a = np.nan_to_num(a)
        # (kiln.trace is the tracer, as torch.jit.trace; the op is the method.)
        assert_same(_pair(kiln, a).trace(), torch.trace(_pair(torch, a)))
        assert_same(_pair(kiln, a).t().trace(), torch.trace(_pair(torch, a).t()))
    _same_error(lambda: torch.trace(torch.ones(3)), lambda: kiln.ones([3]).trace())
    _same_error(lambda: torch.trace(torch.ones(2, 2, dtype=torch.bool)),
                lambda: kiln.ones([2, 2], dtype=kiln.bool).trace())


@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_cumulative_inplace(name):
    a = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    for dim in [0, 1, -1]:
        k, t = _pair(kiln, a), _pair(torch, a)
        getattr(k, name)(dim)
        getattr(t, name)(dim)
        assert_same(k, t)
    k = _pair(kiln, _ints(n=12).reshape(3, 4))
    _same_error(lambda: getattr(_pair(torch, _ints(n=12).reshape(3, 4)), name)(0, dtype=torch.float32),
                lambda: getattr(k, name)(0, dtype=kiln.float32))


REDUCTION_SCRIPT = """
def f(x, i):
    return (torch.nansum(x), torch.nansum(x, [1], True), torch.nanmean(x, 0), torch.count_nonzero(i),
            torch.count_nonzero(i, [0]), torch.trace(x), torch.trace(i), x.clone().cumsum_(1), x.clone().cumprod_(0))
"""


def test_reductions_scripted():
    a = _with_nans()
    i = _ints(n=20).reshape(4, 5)
    theirs = torch.jit.CompilationUnit(REDUCTION_SCRIPT).f(_pair(torch, a), _pair(torch, i))
    ours = kiln.compile(REDUCTION_SCRIPT).f(_pair(kiln, a), _pair(kiln, i))
    for k, t in zip(ours, theirs):
        assert_same(k, t, rtol=1e-5)


REDUCTION_GRADIENTS = {
    "nansum": (lambda lib, x: lib.nansum(x), [(3, 4)]),
    "nansum_dim": (lambda lib, x: lib.nansum(x, 1, True), [(3, 4)]),
    "nanmean": (lambda lib, x: lib.nanmean(x), [(3, 4)]),
    "nanmean_dim": (lambda lib, x: lib.nanmean(x, [0]), [(3, 4)]),
    "trace": (lambda lib, x: x.trace(), [(3, 4)]),
    "cumsum_": (lambda lib, x: (x * 1.0).cumsum_(1), [(3, 4)]),
    "cumprod_": (lambda lib, x: (x * 1.0).cumprod_(0), [(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(REDUCTION_GRADIENTS))
def test_reduction_gradients(name):
    fn, shapes = REDUCTION_GRADIENTS[name]
    values = _arrays(shapes, True, np.float32)
    assert_gradients_match_torch(fn, values, rtol=1e-3, atol=1e-4)
    assert_gradients_match_torch(fn, values, noncontiguous=True, rtol=1e-3, atol=1e-4)
    gradcheck(fn, _arrays(shapes, True, np.float64, seed=3), tol=1e-4)


def test_nansum_gradient_skips_nans():
    a = _with_nans(np.float64)
    grads = []
    for lib in (torch, kiln):
        x = lib.from_numpy(a.copy())
        x.requires_grad_(True)
        lib.nanmean(x, 1).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


# --- shape ops (kiln/ops/shape_more_ops.cpp) ------------------------------------------

SHAPE_INPUTS = [(), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 2)]


def _shaped(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast(name):
    for shape in SHAPE_INPUTS:
        a = _shaped(shape)
        assert_same(getattr(kiln, name)(_pair(kiln, a)), getattr(torch, name)(_pair(torch, a)))
    arrays = [_shaped(s, i) for i, s in enumerate(SHAPE_INPUTS)]
    ours = getattr(kiln, name)([_pair(kiln, a) for a in arrays])
    theirs = getattr(torch, name)([_pair(torch, a) for a in arrays])
    for k, t in zip(ours, theirs):
        assert_same(k, t)


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack", "row_stack"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_stacks(name, shape):
    if name == "column_stack" and len(shape) > 2:
        shape = (3, 2)
    arrays = [_shaped(shape, 1), _shaped(shape, 2), _shaped(shape, 3).astype(np.float64)]
    theirs = getattr(torch, name)([_pair(torch, a) for a in arrays])
    assert_same(getattr(kiln, name)([_pair(kiln, a) for a in arrays]), theirs)
    out = kiln.empty([0], dtype=kiln.float64)
    getattr(kiln, name)([_pair(kiln, a) for a in arrays], out=out)
    assert_same(out, theirs)
    _same_error(lambda: getattr(torch, name)([]), lambda: getattr(kiln, name)([]))


def test_flips_tile_broadcast_to():
    for shape in [(2, 3), (2, 3, 4)]:
        a = _shaped(shape)
        assert_same(kiln.fliplr(_pair(kiln, a)), torch.fliplr(_pair(torch, a)))
        assert_same(kiln.flipud(_pair(kiln, a)), torch.flipud(_pair(torch, a)))
        assert_same(kiln.flipud(_pair(kiln, a).transpose(0, 1)), torch.flipud(_pair(torch, a).transpose(0, 1)))
    _same_error(lambda: torch.fliplr(torch.ones(3)), lambda: kiln.fliplr(kiln.ones([3])))
    _same_error(lambda: torch.flipud(torch.tensor(1.0)), lambda: kiln.flipud(kiln.tensor(1.0)))
    a = _shaped((2, 3))
    for dims in [(2,), (2, 2), (1, 2, 3), (3, 1)]:
        assert_same(kiln.tile(_pair(kiln, a), dims), torch.tile(_pair(torch, a), dims))
    b = _shaped((3,))
    for size in [(3,), (2, 3), (4, 2, 3), (-1,), (2, -1)]:
        k = kiln.broadcast_to(_pair(kiln, b), size)
        assert_same(k, torch.broadcast_to(_pair(torch, b), size))
    _same_error(lambda: torch.broadcast_to(torch.ones(3), (2, 4)), lambda: kiln.broadcast_to(kiln.ones([3]), (2, 4)),
                prefixed=True)


SHAPE_SCRIPT = """
def f(x, y):
    return (torch.hstack([x, y]), torch.vstack([x, y]), torch.dstack([x, y]), torch.column_stack([x, y]),
            torch.row_stack([x, y]), torch.atleast_3d(x), torch.atleast_1d([x, y])[1], torch.fliplr(x),
            torch.flipud(x), torch.tile(x, [2, 1]), torch.broadcast_to(x, [3, 2, 3]))
"""


def test_shape_ops_scripted():
    a, b = _shaped((2, 3), 1), _shaped((2, 3), 2)
    theirs = torch.jit.CompilationUnit(SHAPE_SCRIPT).f(_pair(torch, a), _pair(torch, b))
    ours = kiln.compile(SHAPE_SCRIPT).f(_pair(kiln, a), _pair(kiln, b))
    for k, t in zip(ours, theirs):
        assert_same(k, t)


SHAPE_GRADIENTS = {
    "hstack": lambda lib, x, y: lib.hstack([x, y]),
    "vstack": lambda lib, x, y: lib.vstack([x, y.sum(0)]),
    "dstack": lambda lib, x, y: lib.dstack([x, y]),
    "column_stack": lambda lib, x, y: lib.column_stack([x, y]),
    "atleast_3d": lambda lib, x, y: lib.atleast_3d(x) * lib.atleast_3d([y])[0],
    "fliplr": lambda lib, x, y: lib.fliplr(x) * y,
    "flipud": lambda lib, x, y: lib.flipud(x) * y,
    "tile": lambda lib, x, y: lib.tile(x, [2, 1, 2]) + 0 * y.sum(),
    "broadcast_to": lambda lib, x, y: lib.broadcast_to(x.sum(0), [4, 3]) + 0 * y.sum(),
}


@pytest.mark.parametrize("name", sorted(SHAPE_GRADIENTS))
def test_shape_op_gradients(name):
    fn = SHAPE_GRADIENTS[name]
    assert_gradients_match_torch(fn, _arrays([(2, 3), (2, 3)], False, np.float32))
    assert_gradients_match_torch(fn, _arrays([(2, 3), (2, 3)], False, np.float32), noncontiguous=True)
    gradcheck(fn, _arrays([(2, 3), (2, 3)], False, np.float64, seed=2))


def test_composite_timing():
    """Compositions of views and cat: about torch's time."""
    import timeit
    a = [_shaped((64, 64), i) for i in range(4)]
    ks, ts = [_pair(kiln, x) for x in a], [_pair(torch, x) for x in a]
    for name in ["hstack", "vstack", "dstack"]:
        tk = min(timeit.repeat(lambda: getattr(kiln, name)(ks), number=50, repeat=5))
        tt = min(timeit.repeat(lambda: getattr(torch, name)(ts), number=50, repeat=5))
        assert tk < 10 * tt + 1e-3, (name, tk, tt)
