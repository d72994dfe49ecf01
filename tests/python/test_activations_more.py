"""The activations with number parameters (kiln/ops/activation_ops.cpp:
hardtanh, relu6, hardswish, hardsigmoid, elu, selu, celu, leaky_relu,
softplus, softshrink, hardshrink, threshold, log_sigmoid) and prelu, glu,
gelu(approximate='tanh'): against torch 1.13 eagerly, in place, through out=,
in scripts (with torch.nn.functional's signatures), fused (the kernel computes
the eager op's bits), in shape propagation, as kiln.nn layers, and from a
torch-saved scripted module."""
import io

import numpy as np
import pytest
import torch

import kiln
import kiln.nn as knn
import torch.nn as tnn
from conftest import Fusion, assert_same

SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 20.0, -20.0, 88.0, -100.0, 0.5, -0.5, 3.0,
                     -3.0, 6.0, 1.0, -1.0], dtype=np.float64)


def _values(dtype, n=257, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-8, 8, n)
    x[: len(SPECIALS)] = SPECIALS
    return x.astype(dtype)


# (aten name, positional number arguments, has in-place form, has out= form)
OPS = [
    ("hardtanh", (), True, True),
    ("hardtanh", (-0.5, 2.5), True, True),
    ("relu6", (), True, False),
    ("hardswish", (), True, True),
    ("hardsigmoid", (), True, True),
    ("elu", (), True, True),
    ("elu", (0.5, 1.5, 2.0), True, True),
    ("selu", (), True, False),
    ("celu", (), True, True),
    ("celu", (0.3,), True, True),
    ("leaky_relu", (), True, True),
    ("leaky_relu", (0.2,), True, True),
    ("softplus", (), False, True),
    ("softplus", (2, 3), False, True),
    ("softplus", (0.5, 4.0), False, True),
    ("softshrink", (), False, True),
    ("softshrink", (1.5,), False, True),
    ("hardshrink", (), False, True),
    ("hardshrink", (2,), False, True),
    ("threshold", (0.25, -7.0), True, True),
    ("log_sigmoid", (), False, True),
]
IDS = [f"{name}{args}" for name, args, _, _ in OPS]


def _torch_op(name):
    return getattr(torch._C._nn, name, None) or getattr(torch, name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,args,inplace,out", OPS, ids=IDS)
def test_eager_matches_torch(name, args, inplace, out, dtype):
    x = _values(dtype)
    expected = _torch_op(name)(torch.from_numpy(x.copy()), *args)
    tol = 2e-6 if dtype == np.float32 else 1e-12
    assert_same(getattr(kiln, name)(kiln.from_numpy(x.copy()), *args), expected, rtol=tol, atol=1e-30)
    # A strided input gives the same values.
    wide = np.repeat(x, 2)
    assert_same(getattr(kiln, name)(kiln.from_numpy(wide)[::2], *args), expected, rtol=tol, atol=1e-30)


@pytest.mark.parametrize("name,args,inplace,out", OPS, ids=IDS)
def test_in_place_and_out_forms(name, args, inplace, out):
    x = _values(np.float32)
    expected = _torch_op(name)(torch.from_numpy(x.copy()), *args)
    assert hasattr(kiln, name + "_") == inplace
    if inplace:
        t = kiln.from_numpy(x.copy())
        getattr(kiln, name + "_")(t, *args)
        assert_same(t, expected, rtol=2e-6, atol=1e-30)
    if out:
        o = kiln.empty([len(x)], dtype=kiln.float32)
        getattr(kiln, name)(kiln.from_numpy(x.copy()), *args, out=o)
        assert_same(o, expected, rtol=2e-6, atol=1e-30)
        with pytest.raises(RuntimeError, match="Found dtype"):
            getattr(kiln, name)(kiln.from_numpy(x.copy()), *args, out=kiln.empty([len(x)], dtype=kiln.float64))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8"])
@pytest.mark.parametrize("name,args", [("hardtanh", (-1.5, 2.5)), ("relu6", ()), ("threshold", (0.5, 9.7)),
                                       ("threshold", (2, -1))])
def test_integer_dtypes_as_torch(name, args, dtype):
    x = np.array([-3, 1, 7, 0, 2, 100], dtype=dtype)
    if dtype == "uint8" and any(isinstance(a, (int, float)) and a < 0 for a in args):
        return
    assert_same(getattr(kiln, name)(kiln.from_numpy(x.copy()), *args), _torch_op(name)(torch.from_numpy(x.copy()),
                                                                                          *args))


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
@pytest.mark.parametrize("name", ["hardtanh", "relu6", "hardswish", "hardsigmoid", "elu", "selu", "celu", "leaky_relu",
                                  "softplus", "softshrink", "hardshrink", "threshold", "log_sigmoid"])
def test_other_dtypes_raise_as_torch(name, dtype):
    values = np.array([1, 0, 1]).astype(dtype)
    args = (0.5, 1.0) if name == "threshold" else ()
    try:
        theirs = _torch_op(name)(torch.from_numpy(values.copy()), *args)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as ours:
            getattr(kiln, name)(kiln.from_numpy(values.copy()), *args)
        assert str(ours.value) == str(e)
    else:
        assert_same(getattr(kiln, name)(kiln.from_numpy(values.copy()), *args), theirs)


def test_celu_alpha_zero_raises():
    with pytest.raises(RuntimeError, match="ZeroDivisionError: alpha cannot be 0 for CELU"):
        kiln.celu(kiln.ones([2]), 0.0)


def test_gelu_both_modes():
    x = _values(np.float32)
    for mode in ["none", "tanh"]:
        assert_same(kiln.nn.functional.gelu(kiln.from_numpy(x.copy()), approximate=mode),
                    torch.nn.functional.gelu(torch.from_numpy(x.copy()), approximate=mode), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("shape,wshape", [((2, 3, 4), (3,)), ((2, 3, 4), (1,)), ((2, 3), (3,)), ((5,), (1,)),
                                          ((), (1,)), ((), ()), ((2, 3, 4, 5), (3,))])
def test_prelu(shape, wshape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    expected = torch.nn.functional.prelu(torch.from_numpy(x.copy()), torch.from_numpy(w.copy()))
    assert_same(kiln.prelu(kiln.from_numpy(x.copy()), kiln.from_numpy(w.copy())), expected)
    out = kiln.empty(list(shape))
    kiln.prelu(kiln.from_numpy(x.copy()), kiln.from_numpy(w.copy()), out=out)
    assert_same(out, expected)


@pytest.mark.parametrize("shape,wshape", [((2, 3, 4), (4,)), ((3,), (3,)), ((2, 3), (2, 3))])
def test_prelu_errors_as_torch(shape, wshape):
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.prelu(torch.ones(shape), torch.ones(wshape))
    with pytest.raises(RuntimeError) as ours:
        kiln.prelu(kiln.ones(list(shape)), kiln.ones(list(wshape)))
    if len(wshape) == 1:
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape,dim", [((4, 6), -1), ((4, 6), 0), ((2, 4, 3), 1)])
def test_glu(shape, dim):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    expected = torch.nn.functional.glu(torch.from_numpy(x.copy()), dim)
    assert_same(kiln.glu(kiln.from_numpy(x.copy()), dim), expected)
    assert_same(kiln.nn.functional.glu(kiln.from_numpy(x.copy()), dim), expected)


@pytest.mark.parametrize("shape,dim", [((5,), 0), ((), 0)])
def test_glu_errors_as_torch(shape, dim):
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.functional.glu(torch.ones(shape), dim)
    with pytest.raises(RuntimeError) as ours:
        kiln.glu(kiln.ones(list(shape)), dim)
    assert str(ours.value) == str(theirs.value)


def test_log_sigmoid_forward():
    x = _values(np.float32)
    out, buf = kiln.log_sigmoid_forward(kiln.from_numpy(x.copy()))
    t_out, t_buf = torch.ops.aten.log_sigmoid_forward(torch.from_numpy(x.copy()))
    assert_same(out, t_out)
    assert_same(buf, t_buf)


def script_all(x):
    F = torch.nn.functional
    a = F.hardtanh(x, -2.0, 2.0) + F.relu6(x) + F.hardswish(x) + F.hardsigmoid(x)
    b = F.elu(x, 0.5) + F.selu(x) + F.celu(x, 0.7) + F.leaky_relu(x, 0.2)
    c = F.softplus(x, 2.0, 3.0) + F.softshrink(x, 0.3) + F.hardshrink(x, 0.3) + F.threshold(x, 0.1, 2.0)
    d = F.logsigmoid(x) + F.gelu(x, approximate="tanh") + F.silu(x) + F.mish(x)
    return a * b + c * d


def script_inplace(x):
    F = torch.nn.functional
    y = x.clone()
    F.hardtanh(y, -2.0, 2.0, True)
    F.elu(y, 0.5, True)
    F.leaky_relu(y, 0.2, True)
    F.threshold(y, 0.1, 2.0, True)
    F.relu6(y, inplace=True)
    F.celu(y, 0.7, inplace=True)
    F.selu(y, True)
    F.hardswish(y, True)
    return y


def script_other(x, w):
    F = torch.nn.functional
    return F.prelu(x, w), F.glu(x, 1), F.softmax(x, 1), F.log_softmax(x, dim=-1), F.softmax(x)


@pytest.mark.parametrize("fusion", [False, True])
@pytest.mark.parametrize("fn", [script_all, script_inplace])
def test_scripted_with_torch_signatures(fn, fusion):
    x = _values(np.float32, n=64 * 9).reshape(64, 9)
    x = np.nan_to_num(x, nan=0.0, posinf=5.0, neginf=-5.0)
    expected = fn(torch.from_numpy(x.copy()))
    with Fusion(fusion):
        scripted = kiln.script(fn)
        for _ in range(3):
            got = scripted(kiln.from_numpy(x.copy()))
    assert_same(got, expected, rtol=2e-5, atol=1e-5)
    # The functions with an `inplace` flag are calls, as torch.jit.script makes them.
    assert "prim::CallFunction" in str(scripted.graph)


def test_scripted_prelu_glu_softmax():
    x = np.random.default_rng(3).standard_normal((2, 4, 3)).astype(np.float32)
    w = np.array([0.1, -0.2, 0.3, 0.25], dtype=np.float32)
    expected = script_other(torch.from_numpy(x.copy()), torch.from_numpy(w.copy()))
    assert_same(kiln.script(script_other)(kiln.from_numpy(x.copy()), kiln.from_numpy(w.copy())), expected)


FUSED = """
def f(x, a: float, b: float):
    F = torch.nn.functional
    y = F.hardtanh(x, a, b) + F.elu(x, a) + F.leaky_relu(x, a) + F.softplus(x, b, 2.0)
    return y + torch.threshold(x, a, b) + torch.celu(x, b) + F.softshrink(x, b) + F.hardshrink(x, b)
"""


def test_fusion_with_runtime_and_constant_parameters():
    x = _values(np.float32, n=1001, seed=5)
    expected = torch.jit.CompilationUnit(FUSED).f(torch.from_numpy(x.copy()), -0.5, 1.25)
    with Fusion(True):
        unit = kiln.compile(FUSED)
        kiln._C._reset_fusion_stats()
        got = unit.f(kiln.from_numpy(x.copy()), -0.5, 1.25)
        graph = str(unit.f.graph_for(kiln.from_numpy(x.copy()), -0.5, 1.25))
        stats = kiln._C._fusion_stats()
    assert "prim::FusionGroup" in graph, graph
    assert stats["kernel_runs"] >= 1, stats
    assert_same(got, expected, rtol=2e-5, atol=1e-5)


FUSABLE = [("hardtanh", "-0.5, 2.5"), ("relu6", ""), ("hardswish", ""), ("hardsigmoid", ""), ("elu", "0.5, 1.5, 2.0"),
           ("selu", ""), ("celu", "0.3"), ("leaky_relu", "0.2"), ("softplus", "2, 3"), ("softshrink", "1.5"),
           ("hardshrink", "2"), ("threshold", "0.25, -7.0"), ("log_sigmoid", "")]


@pytest.mark.parametrize("name,args", FUSABLE)
def test_fused_single_op_is_bit_identical(name, args):
    """A group of the op and a doubling (exact) computes the op's bits exactly."""
    x = _values(np.float32, n=1001, seed=3)
    call = f"kiln.{name}(x{', ' + args if args else ''})"
    src = f"def f(x):\n    return {call} * 2.0\n"
    with Fusion(True):
        kiln._C._reset_fusion_stats()
        fused = kiln.compile(src).f(kiln.from_numpy(x.copy()))
        assert kiln._C._fusion_stats()["kernel_runs"] == 1
    eager = eval(call, {"kiln": kiln, "x": kiln.from_numpy(x.copy())})
    np.testing.assert_array_equal(fused.numpy(), eager.numpy() * np.float32(2))


def test_shape_propagation_types_the_results():
    unit = kiln.compile("def f(x):\n    return torch.elu(x, 0.5), torch.hardtanh(x.double()), torch.glu(x, 1), "
                        "torch.prelu(x, torch.ones([3]))\n")
    graph = str(unit.f.graph_for(kiln.ones([2, 4], dtype=kiln.float32)))
    assert "Float(2, 4" in graph and "Double(2, 4" in graph and "Float(2, 2" in graph, graph


LAYERS = [("Hardtanh", (-0.5, 0.5)), ("ReLU6", ()), ("ReLU6", (True,)), ("Hardswish", ()), ("Hardsigmoid", ()),
          ("SiLU", ()), ("Mish", ()), ("ELU", (0.5,)), ("ELU", (1.0, True)), ("CELU", (0.7,)), ("SELU", ()),
          ("LeakyReLU", (0.2,)), ("Softplus", (2, 5)), ("Softshrink", (0.3,)), ("Hardshrink", (0.3,)),
          ("Threshold", (0.1, 3.0)), ("LogSigmoid", ()), ("GELU", ()), ("GELU", ("tanh",)), ("GLU", (1,)),
          ("Softmax", (1,)), ("LogSoftmax", (-1,)), ("PReLU", ()), ("PReLU", (4, 0.1))]


@pytest.mark.parametrize("name,args", LAYERS, ids=[f"{n}{a}" for n, a in LAYERS])
def test_layers_match_torch(name, args):
    x = np.random.default_rng(4).standard_normal((2, 4, 3)).astype(np.float32)
    km, tm = getattr(knn, name)(*args), getattr(tnn, name)(*args)
    assert repr(km) == repr(tm)
    assert sorted(km.state_dict().keys()) == sorted(tm.state_dict().keys())
    for key, value in tm.state_dict().items():
        assert_same(km.state_dict()[key], value)
    expected = tm(torch.from_numpy(x.copy()))
    assert_same(km(kiln.from_numpy(x.copy())), expected)
    scripted = kiln.script(km)
    assert_same(scripted(kiln.from_numpy(x.copy())), expected)
    assert scripted.graph is not None


class TorchActivations(tnn.Module):
    def __init__(self):
        super().__init__()
        self.body = tnn.Sequential(tnn.Hardtanh(-2., 2.), tnn.ReLU6(), tnn.Hardswish(), tnn.ELU(0.5), tnn.SELU(),
                                   tnn.CELU(0.9), tnn.LeakyReLU(0.2), tnn.Softplus(2, 5), tnn.Softshrink(0.1),
                                   tnn.Hardshrink(0.1), tnn.Threshold(0.05, -1.0), tnn.LogSigmoid(),
                                   tnn.GELU("tanh"), tnn.Hardsigmoid(), tnn.SiLU(), tnn.Mish(), tnn.PReLU(4))
        self.glu = tnn.GLU(1)

    def forward(self, x):
        y = self.body(x)
        return y, self.glu(y), torch.nn.functional.softmax(y, 1), torch.nn.functional.elu(x, 2.0, True)


def test_torch_saved_module_loads():
    module = torch.jit.script(TorchActivations().eval())
    buf = io.BytesIO()
    torch.jit.save(module, buf)
    x = np.random.default_rng(6).standard_normal((2, 4, 3, 5)).astype(np.float32)
    expected = module(torch.from_numpy(x.copy()))
    loaded = kiln.load(io.BytesIO(buf.getvalue()))
    assert_same(loaded(kiln.from_numpy(x.copy())), expected, rtol=2e-5, atol=1e-6)


def test_overflowing_parameters_raise_eager_and_scripted():
    src = "def f(x):\n    return torch.nn.functional.elu(x, 1e300) * 2.0\n"
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        kiln.hardtanh(kiln.ones([3]), -1e300, 1e300)
    for fusion in [False, True]:
        with Fusion(fusion):
            with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
                kiln.compile(src).f(kiln.ones([4]))
