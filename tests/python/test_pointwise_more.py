"""More pointwise ops against torch 1.13: inverse trigonometric and hyperbolic
functions, log10, erfc, lgamma, angle, the class tests (isnan, isinf, ...),
frexp, copysign, gcd, ldexp, result_type and is_contiguous(memory_format).
Values (NaN and inf outside the domains), dtypes (integers give float32),
layouts, 0-dim and empty tensors, in-place and out= forms, errors."""
import warnings

import numpy as np
import pytest
import torch

import kiln
from conftest import check_both, check_script

# torch warns when it resizes a non-empty out= tensor; the errors are what is compared.
warnings.filterwarnings("ignore", message="An output with one or more elements was resized")

FLOAT_DTYPES = ["float32", "float64"]
INT_DTYPES = ["int64", "int32", "int16", "int8", "uint8"]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + ["bool"]
NAN, INF = float("nan"), float("inf")

# name -> (alias, range of random values: domain edges and beyond)
FLOAT_OPS = {
    "asin": ("arcsin", 1.3),
    "acos": ("arccos", 1.3),
    "atan": ("arctan", 20.0),
    "sinh": (None, 20.0),
    "cosh": (None, 20.0),
    "asinh": ("arcsinh", 50.0),
    "acosh": ("arccosh", 20.0),
    "atanh": ("arctanh", 1.3),
    "log10": (None, 100.0),
    "erfc": (None, 12.0),
    "lgamma": (None, 12.0),
}
SPECIALS = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, -2.5, 1e-30, -1e-30, 1e-45, 1e30, -1e30,
            80.0, -80.0, 700.0, 1e300, 1.0000001, 0.9999999, 3.0, -3.0, 10.0]


def specials(dtype, repeat=1):
    """SPECIALS in `dtype` (beyond float32's range they become inf)."""
    with np.errstate(over="ignore"):
        return np.array(SPECIALS * repeat, dtype=dtype)


def aten(lib, qualified):
    """The overload `qualified` ("isnan.out") of kiln or torch."""
    if lib is kiln:
        return kiln._C._overload("aten::" + qualified)
    name, _, overload = qualified.partition(".")
    return getattr(getattr(torch.ops.aten, name), overload or "default")


def make(rng, shape, dtype, scale=3.0):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("float"):
        return (rng.uniform(-scale, scale, shape)).astype(dtype)
    low = 0 if dtype == "uint8" else -20
    return rng.integers(low, 21, shape).astype(dtype)


def from_numpy(lib, array):
    return kiln.from_numpy(array) if lib is kiln else torch.from_numpy(array)


def on_view(lib, array, index, fn):
    """Runs fn on a view of a fresh copy of `array`; returns the whole base tensor."""
    base = np.array(array, copy=True)
    fn(from_numpy(lib, base[index]))
    return from_numpy(lib, base)


def library_empty(lib, dtype):
    """An empty out= tensor the library owns (it can grow)."""
    return lib.empty([0], dtype=getattr(lib, dtype))


def resized_out(lib, dtype, fn):
    """Runs fn(out) on an empty out= tensor of `dtype`; returns the tensor."""
    out = library_empty(lib, dtype)
    fn(out)
    return out


def tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-300}


# ---------------------------------------------------------------------------------------------
# Float-valued unary ops


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", FLOAT_OPS)
def test_float_unary_values(rng, name, dtype):
    scale = FLOAT_OPS[name][1]
    x = make(rng, (4099,), dtype, scale)  # the vector loop, its tail, values out of the domain
    check_both(lambda lib, a: getattr(lib, name)(a), x, **tol(dtype))
    values = specials(dtype)
    # Contiguous (vector path) and strided (scalar path) runs of the same special values.
    check_both(lambda lib, a: getattr(lib, name)(a), values, **tol(dtype))
    check_both(lambda lib: getattr(lib, name)(from_numpy(lib, np.repeat(values, 2)[::2])), **tol(dtype))
    # Dense values near the function's own difficult spots (zeros of lgamma, overflow of sinh/cosh, ...).
    dense = np.linspace(-scale, scale, 2003).astype(dtype)
    check_both(lambda lib, a: getattr(lib, name)(a), dense, **tol(dtype))


@pytest.mark.parametrize("name", FLOAT_OPS)
def test_float_unary_forms_and_layouts(rng, name):
    scale = FLOAT_OPS[name][1]
    x = make(rng, (6, 7), "float32", scale)
    check_both(lambda lib, a: getattr(a, name)(), x)
    check_both(lambda lib, a: getattr(a, name + "_")(), x)
    check_both(lambda lib, a: getattr(lib, name)(a), x.T)  # transposed
    check_both(lambda lib: getattr(lib, name)(from_numpy(lib, np.array(x)[1:, ::2])))  # sliced
    check_both(lambda lib: on_view(lib, x, np.s_[:, 1], lambda v: getattr(v, name + "_")()))
    check_both(lambda lib, a: getattr(lib, name)(a), np.array(0.75, "float32"))  # 0-dim
    check_both(lambda lib, a: getattr(lib, name)(a), np.zeros((0, 3), "float64"))  # empty
    # Multi-threaded split.
    check_both(lambda lib, a: getattr(lib, name)(a), make(rng, (70001,), "float32", scale))


@pytest.mark.parametrize("name", FLOAT_OPS)
@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool"])
def test_float_unary_of_integers(rng, name, dtype):
    x = make(rng, (3, 5), dtype)
    check_both(lambda lib, a: getattr(lib, name)(a), x)  # float32 result
    check_both(lambda lib, a: getattr(a, name + "_")(), x)  # both raise: float can't go back into ints
    check_both(lambda lib, a, o: getattr(lib, name)(a, out=o), x, np.zeros((3, 5), "float64"))
    check_both(lambda lib, a, o: getattr(lib, name)(a, out=o), x, np.zeros((3, 5), "int64"))  # both raise


@pytest.mark.parametrize("name", FLOAT_OPS)
def test_float_unary_out(rng, name):
    x = make(rng, (2, 3), "float32", FLOAT_OPS[name][1])
    for out_dtype in ["float32", "float64", "int32", "bool"]:
        check_both(lambda lib, a, o: getattr(lib, name)(a, out=o), x, np.zeros((2, 3), out_dtype))
    check_both(lambda lib, a: resized_out(lib, "float32", lambda o: getattr(lib, name)(a, out=o)), x)


@pytest.mark.parametrize("name", [n for n, (alias, _) in FLOAT_OPS.items() if alias])
def test_aliases(rng, name):
    alias = FLOAT_OPS[name][0]
    x = make(rng, (3, 4), "float64", FLOAT_OPS[name][1])
    check_both(lambda lib, a: getattr(lib, alias)(a), x)
    check_both(lambda lib, a: getattr(a, alias + "_")(), x)
    check_both(lambda lib, a, o: aten(lib, alias + ".out")(a, out=o), x, np.zeros((3, 4), "float32"))
    # The alias computes exactly what the op does.
    k = kiln.from_numpy(x)
    np.testing.assert_array_equal(getattr(kiln, alias)(k).numpy(), getattr(kiln, name)(k).numpy())


# ---------------------------------------------------------------------------------------------
# angle


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_angle(rng, dtype):
    x = make(rng, (5, 9), dtype)
    check_both(lambda lib, a: lib.angle(a), x)
    check_both(lambda lib, a: a.angle(), x)
    check_both(lambda lib, a: lib.angle(a), x.T)
    check_both(lambda lib, a, o: lib.angle(a, out=o), x, np.zeros((5, 9), "float64"))
    check_both(lambda lib, a, o: lib.angle(a, out=o), x, np.zeros((5, 9), "int64"))  # both raise


def test_angle_special_values():
    for dtype in FLOAT_DTYPES:
        x = specials(dtype, 3)
        check_both(lambda lib, a: lib.angle(a), x, rtol=0, atol=0)
        check_both(lambda lib, a: lib.angle(a), x[::3], rtol=0, atol=0)
        check_both(lambda lib, a: lib.angle(a), np.array(-2.0, dtype), rtol=0, atol=0)
    check_both(lambda lib, a: lib.angle(a), np.zeros((0,), "int32"))


# ---------------------------------------------------------------------------------------------
# Class tests

CLASSIFY = ["isnan", "isinf", "isfinite", "isposinf", "isneginf"]


@pytest.mark.parametrize("name", CLASSIFY)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_classify(rng, name, dtype):
    x = make(rng, (4, 6), dtype)
    if dtype.startswith("float"):
        x.flat[::3] = NAN
        x.flat[1::5] = INF
        x.flat[2::7] = -INF
    check_both(lambda lib, a: getattr(lib, name)(a), x)
    check_both(lambda lib, a: getattr(a, name)(), x)
    check_both(lambda lib, a: getattr(lib, name)(a), x.T)
    check_both(lambda lib: getattr(lib, name)(from_numpy(lib, np.array(x)[::2, 1::2])))
    check_both(lambda lib, a: getattr(lib, name)(a), np.array(x[0, 0]))  # 0-dim
    check_both(lambda lib, a: getattr(lib, name)(a), x[:0])  # empty


@pytest.mark.parametrize("name", ["isnan", "isinf", "isposinf", "isneginf"])
@pytest.mark.parametrize("out_dtype", ["bool", "float32", "int64", "uint8"])
def test_classify_out(name, out_dtype):
    x = np.array([1.0, NAN, INF, -INF, -0.0, 3.0], "float32")
    # isnan/isinf cast into any out= dtype; isposinf/isneginf take only bool.
    check_both(lambda lib, a, o: aten(lib, name + ".out")(a, out=o), x, np.zeros(6, out_dtype))
    check_both(lambda lib, a, o: aten(lib, name + ".out")(a, out=o), np.arange(-3, 3, dtype="int32"),
               np.zeros(6, out_dtype))
    check_both(lambda lib, a: resized_out(lib, "bool", lambda o: aten(lib, name + ".out")(a, out=o)), x)


def test_classify_long_runs(rng):
    x = rng.standard_normal(70001)
    x[rng.random(70001) < 0.1] = NAN
    x[rng.random(70001) < 0.1] = -INF
    for name in CLASSIFY:
        for dtype in FLOAT_DTYPES:
            check_both(lambda lib, a: getattr(lib, name)(a), x.astype(dtype))


# ---------------------------------------------------------------------------------------------
# frexp


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_frexp_values(rng, dtype):
    x = (rng.standard_normal(1001) * 10.0 ** rng.integers(-30, 30, 1001)).astype(dtype)
    check_both(lambda lib, a: lib.frexp(a), x, rtol=0, atol=0)
    values = np.concatenate([specials(dtype), np.array([np.finfo(dtype).tiny / 8, -np.finfo(dtype).max], dtype)])
    check_both(lambda lib, a: lib.frexp(a), values, rtol=0, atol=0)
    check_both(lambda lib, a: a.frexp(), values.reshape(4, 7).T, rtol=0, atol=0)
    check_both(lambda lib, a: lib.frexp(a), np.array(3.0, dtype), rtol=0, atol=0)
    check_both(lambda lib, a: lib.frexp(a), np.zeros((0, 3), dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool"])
def test_frexp_rejects_non_float(rng, dtype):
    check_both(lambda lib, a: lib.frexp(a), make(rng, (3,), dtype))


def frexp_out(lib, x, mantissa, exponent):
    return aten(lib, "frexp.Tensor_out")(x, mantissa=mantissa, exponent=exponent)


def test_frexp_out():
    x = np.array([[1.5, -0.0, 1024.0], [NAN, -INF, 3e-3]], "float32")
    for m_dtype, e_dtype in [("float32", "int32"), ("float64", "int32"), ("float32", "int64"),
                             ("float32", "float32")]:
        check_both(frexp_out, x, np.zeros((2, 3), m_dtype), np.zeros((2, 3), e_dtype))
    check_both(lambda lib, a: frexp_out(lib, a, library_empty(lib, "float32"), library_empty(lib, "int32")), x)
    # Into strided views.
    check_both(lambda lib, a: frexp_out(lib, a, from_numpy(lib, np.zeros((2, 6), "float32"))[:, ::2],
                                        from_numpy(lib, np.zeros((3, 2), "int32")).t()), x)


# ---------------------------------------------------------------------------------------------
# copysign

BINARY_DTYPE_PAIRS = [("float32", "float32"), ("float64", "float32"), ("int64", "float32"), ("int32", "int64"),
                      ("uint8", "int8"), ("bool", "bool"), ("bool", "float64"), ("int16", "bool")]


@pytest.mark.parametrize("dtypes", BINARY_DTYPE_PAIRS)
def test_copysign(rng, dtypes):
    a, b = make(rng, (4, 5), dtypes[0]), make(rng, (4, 5), dtypes[1])
    check_both(lambda lib, x, y: lib.copysign(x, y), a, b)
    check_both(lambda lib, x, y: x.copysign(y), a, b)
    check_both(lambda lib, x, y: lib.copysign(x, y), a, b[0])  # broadcast
    check_both(lambda lib, x, y: lib.copysign(x, y), a.T, b.T[:, :1])  # non-contiguous, broadcast
    check_both(lambda lib, x, y: lib.copysign(x, y), a.T, b.T)
    check_both(lambda lib, x, y: x.copysign_(y), a, b)  # raises for integer a
    check_both(lambda lib, x, y, o: lib.copysign(x, y, out=o), a, b, np.zeros((4, 5), "float64"))
    check_both(lambda lib, x, y, o: lib.copysign(x, y, out=o), a, b, np.zeros((4, 5), "int64"))  # both raise


def test_copysign_signs_and_scalars(rng):
    x = specials("float32")
    y = x[::-1].copy()
    y[::2] = -y[::2]
    check_both(lambda lib, a, b: lib.copysign(a, b), x, y, rtol=0, atol=0)
    check_both(lambda lib, a, b: lib.copysign(a, b), x.astype("float64"), np.array(-0.0), rtol=0, atol=0)
    n = np.array([-NAN, NAN], "float64")  # the sign bit of a NaN counts
    check_both(lambda lib, a, b: lib.copysign(a, b), np.array([2.0, -2.0]), n, rtol=0, atol=0)
    for other in [-1, 1, -0.0, 0.0, 2.5, True, False]:
        for dtype in ["float32", "float64", "int64", "uint8", "bool"]:
            a = make(rng, (7,), dtype)
            check_both(lambda lib, t: lib.copysign(t, other), a)
            check_both(lambda lib, t: aten(lib, "copysign.Scalar")(t, other), a)
            check_both(lambda lib, t: aten(lib, "copysign_.Scalar")(t, other), a)
            check_both(lambda lib, t, o: aten(lib, "copysign.Scalar_out")(t, other, out=o), a, np.zeros(7, "float64"))
            check_both(lambda lib, t, o: aten(lib, "copysign.Scalar_out")(t, other, out=o), a, np.zeros(7, "int32"))
    check_both(lambda lib, a: lib.copysign(a, -1.0), np.array(5, "int32"))  # 0-dim
    check_both(lambda lib, a, b: lib.copysign(a, b), np.zeros((0, 2), "float32"), np.ones((1, 2), "float32"))
    check_both(lambda lib: on_view(lib, np.arange(12.0).reshape(3, 4), np.s_[:, 1::2],
                                   lambda v: v.copysign_(from_numpy(lib, np.array([-1.0, 1.0])))))
    check_both(lambda lib, a, b: lib.copysign(a, b), x[:3], x[:4])  # both raise: shapes
    # Long runs: vector path, tail and threads.
    big_a, big_b = rng.standard_normal(70003), rng.standard_normal(70003)
    check_both(lambda lib, a, b: lib.copysign(a, b), big_a.astype("float32"), big_b.astype("float32"))
    check_both(lambda lib, a, b: lib.copysign(a, b), big_a, big_b)


# ---------------------------------------------------------------------------------------------
# gcd


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_gcd(rng, dtype):
    a, b = make(rng, (5, 6), dtype), make(rng, (5, 6), dtype)
    check_both(lambda lib, x, y: lib.gcd(x, y), a, b)
    check_both(lambda lib, x, y: x.gcd(y), a, b)
    check_both(lambda lib, x, y: x.gcd_(y), a, b)
    check_both(lambda lib, x, y: lib.gcd(x, y), a.T, b.T[0])  # non-contiguous, broadcast
    check_both(lambda lib, x, y: lib.gcd(x, y), a, b[2])
    check_both(lambda lib, x, y: lib.gcd(x, y), a, np.array(12, dtype))
    check_both(lambda lib, x, y, o: lib.gcd(x, y, out=o), a, b, np.zeros((5, 6), "float32"))
    check_both(lambda lib, x, y, o: lib.gcd(x, y, out=o), a, b, np.zeros((5, 6), "bool"))  # both raise
    check_both(lambda lib: on_view(lib, a, np.s_[::2], lambda v: v.gcd_(from_numpy(lib, b[0].copy()))))


def test_gcd_edge_values():
    for dtype in ["int64", "int32", "int8"]:
        info = np.iinfo(dtype)
        v = np.array([0, 1, -1, 2, -2, 12, -18, info.min, info.max, info.min + 1], dtype)
        a, b = np.repeat(v, len(v)), np.tile(v, len(v))
        check_both(lambda lib, x, y: lib.gcd(x, y), a, b)
    u = np.array([0, 255, 128, 6, 9], "uint8")
    check_both(lambda lib, x, y: lib.gcd(x, y), np.repeat(u, 5), np.tile(u, 5))
    check_both(lambda lib, x, y: lib.gcd(x, y), np.array([12, -8], "int16"), np.array([-18, 0], "int64"))


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int64", "float64"), ("bool", "bool"),
                                    ("bool", "int64")])
def test_gcd_rejects_non_integers(rng, dtypes):
    check_both(lambda lib, x, y: lib.gcd(x, y), make(rng, (3,), dtypes[0]), make(rng, (3,), dtypes[1]))


# ---------------------------------------------------------------------------------------------
# ldexp


@pytest.mark.parametrize("dtypes", BINARY_DTYPE_PAIRS + [("float64", "int64"), ("float32", "int32")])
def test_ldexp(rng, dtypes):
    a = make(rng, (4, 5), dtypes[0])
    b = make(rng, (4, 5), dtypes[1])
    check_both(lambda lib, x, y: lib.ldexp(x, y), a, b)
    check_both(lambda lib, x, y: x.ldexp(y), a, b)
    check_both(lambda lib, x, y: x.ldexp_(y), a, b)  # raises for integer a
    check_both(lambda lib, x, y: lib.ldexp(x, y), a.T, b[0, :4])
    check_both(lambda lib, x, y, o: lib.ldexp(x, y, out=o), a, b, np.zeros((4, 5), "float64"))
    check_both(lambda lib, x, y, o: lib.ldexp(x, y, out=o), a, b, np.zeros((4, 5), "int64"))  # both raise


def test_ldexp_range():
    x = np.array([1.0, 1e-30, 3.0, -2.0, 0.0, INF, NAN, 1e30], "float32")
    e = np.array([130, 130, -149, -160, 1000, -5, 3, -200], "int32")
    check_both(lambda lib, a, b: lib.ldexp(a, b), x, e, rtol=0, atol=0)
    check_both(lambda lib, a, b: lib.ldexp(a, b), x.astype("float64"), e.astype("int64") * 8, rtol=0, atol=0)
    check_both(lambda lib, a, b: lib.ldexp(a, b), np.array(2.0), np.array(3))
    check_both(lambda lib, a, b: lib.ldexp(a, b), np.zeros((0,), "float32"), np.ones((1,), "int64"))
    check_both(lambda lib: on_view(lib, np.ones((4, 4)), np.s_[:, ::2], lambda v: v.ldexp_(from_numpy(lib, e[:2]))))
    check_both(lambda lib, a, b: lib.ldexp(a, b), x, e[:3])  # both raise: shapes


# ---------------------------------------------------------------------------------------------
# result_type


def operands(lib):
    """Tensors of each tier (dim > 0, 0-dim) and dtype category, and Python numbers."""
    tensors = []
    for dtype in ["uint8", "int8", "int32", "int64", "float32", "float64", "bool"]:
        tensors.append(lib.ones([2], dtype=getattr(lib, dtype)))
        tensors.append(lib.ones([], dtype=getattr(lib, dtype)))
    # (TorchScript passes no bools as Scalar; torch.ops turns them into ints, kiln keeps them bools.)
    return tensors, [1, -1, 300, 2.5, -0.0]


def test_result_type():
    k_tensors, numbers = operands(kiln)
    t_tensors, _ = operands(torch)
    for ka, ta in zip(k_tensors, t_tensors):
        for kb, tb in zip(k_tensors, t_tensors):
            assert aten(kiln, "result_type.Tensor")(ka, kb) == aten(torch, "result_type.Tensor")(ta, tb), (ta, tb)
        for n in numbers:
            expected = aten(torch, "result_type.Scalar")(ta, n)
            assert aten(kiln, "result_type.Scalar")(ka, n) == expected, (ta, n)
            assert aten(kiln, "result_type.Scalar_Tensor")(n, ka) == aten(torch, "result_type.Scalar_Tensor")(n, ta)
    for a in numbers:
        for b in numbers:
            assert aten(kiln, "result_type.Scalar_Scalar")(a, b) == aten(torch, "result_type.Scalar_Scalar")(a, b)


# ---------------------------------------------------------------------------------------------
# is_contiguous(memory_format)

MEMORY_FORMATS = {0: torch.contiguous_format, 1: torch.preserve_format, 2: torch.channels_last,
                  3: torch.channels_last_3d}


def layouts(lib):
    """Tensors of assorted ranks and strides, built the same way in both libraries."""
    def t(shape):
        return lib.zeros(list(shape))
    return [
        t((2, 3, 4, 5)),
        t((2, 3, 4, 5)).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),  # channels last
        t((2, 3, 4, 5, 6)).permute(0, 2, 3, 4, 1).contiguous().permute(0, 4, 1, 2, 3),  # channels last 3d
        t((2, 1, 4, 5)),
        t((2, 3, 1, 1)),
        t((1, 3, 1, 1)).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
        t((2, 3, 4, 5)).transpose(0, 1),
        t((2, 3, 4, 5))[:, :, ::2],
        t((0, 3, 4, 5)),
        t((0, 3, 4, 5)).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
        t((2, 3)),
        t((3,)),
        t(()),
        t((2, 3, 4)),
        t((2, 3, 4, 5, 6)),
    ]


def test_is_contiguous_memory_format():
    for k, tt in zip(layouts(kiln), layouts(torch)):
        for code, fmt in MEMORY_FORMATS.items():
            expected = aten(torch, "is_contiguous.memory_format")(tt, fmt)
            assert aten(kiln, "is_contiguous.memory_format")(k, code) == expected, (tt.shape, tt.stride(), fmt)
    with pytest.raises(RuntimeError):
        aten(kiln, "is_contiguous.memory_format")(kiln.zeros([2]), 9)


def test_new_ops_run_in_scripted_graphs():
    src = """
def f(x: Tensor, y: Tensor):
    m, e = torch.frexp(x)
    return (torch.acos(x / 20.0) + torch.lgamma(x) + torch.copysign(x, y), torch.isnan(x.log10()),
            torch.gcd(y, e), torch.ldexp(m, e), torch.result_type(x, 2.5),
            x.is_contiguous(memory_format=torch.channels_last))
"""
    rng = np.random.default_rng(3)
    check_script(src, "f", rng.standard_normal((2, 3)).astype("float32") * 5,
                 rng.integers(-9, 9, (2, 3)).astype("int32"))


@pytest.mark.parametrize("dtype,low,high", [("float32", 88.0, 89.4), ("float64", 708.0, 710.4)])
@pytest.mark.parametrize("name", ["sinh", "cosh"])
def test_sinh_cosh_near_overflow_are_finite(name, dtype, low, high):
    # torch's contiguous (SLEEF) path gives inf from 88.5 (709); its strided path and
    # kiln's every path give the finite value. kiln matches torch's strided result.
    x = np.linspace(low, high, 101).astype(dtype)
    x = np.concatenate([x, -x])
    check_both(lambda lib: getattr(lib, name)(from_numpy(lib, np.repeat(x, 2)[::2])), rtol=1e-6)
    expected = getattr(torch, name)(torch.from_numpy(np.repeat(x, 2))[::2]).numpy()
    assert np.isfinite(expected).all()
    np.testing.assert_allclose(getattr(kiln, name)(kiln.from_numpy(x)).numpy(), expected, rtol=1e-6)
