"""Eager gradients of the pointwise operators (kiln/ops/pointwise_ops.cpp)
against torch 1.13: every differentiable operator and overload (Tensor and
Scalar forms, in-place forms, broadcasting), contiguous and non-contiguous
inputs, a float64 finite-difference gradcheck, torch's grad_fn names, and
torch's error when an argument that requires grad has no derivative."""
import numpy as np
import pytest
import torch

import kiln
from autograd_check import arrays, assert_gradients_match_torch, away_from_kinks, gradcheck


def _inplace(method, *args, **kwargs):
    """The in-place form `method` on a copy of the first input (leaves can't be changed in place)."""
    def program(m, a, *rest):
        y = a * 1.0
        getattr(y, method)(*rest, *args, **kwargs)
        return y
    return program


# name: (function of (lib, *inputs), input shapes, domain) with domain one of
# None (any real), "positive" (|x| + 0.5), "unit" (inside (-1, 1)), "above1" (> 1).
OPS = {
    # unary
    "abs": (lambda m, a: a.abs(), [(3, 4)], None),
    "absolute": (lambda m, a: m.absolute(a), [(3, 4)], None),
    "neg": (lambda m, a: -a, [(3, 4)], None),
    "negative": (lambda m, a: m.negative(a), [(3, 4)], None),
    "relu": (lambda m, a: m.relu(a), [(3, 4)], None),
    "floor": (lambda m, a: a.floor(), [(3, 4)], None),
    "ceil": (lambda m, a: a.ceil(), [(3, 4)], None),
    "round": (lambda m, a: a.round(), [(3, 4)], None),
    "round_decimals": (lambda m, a: m.round(a, decimals=2), [(3, 4)], None),
    "trunc": (lambda m, a: a.trunc(), [(3, 4)], None),
    "fix": (lambda m, a: m.fix(a), [(3, 4)], None),
    "sign": (lambda m, a: a.sign(), [(3, 4)], None),
    "exp": (lambda m, a: a.exp(), [(3, 4)], None),
    "expm1": (lambda m, a: a.expm1(), [(3, 4)], None),
    "log": (lambda m, a: a.log(), [(3, 4)], "positive"),
    "log1p": (lambda m, a: a.log1p(), [(3, 4)], "positive"),
    "log10": (lambda m, a: a.log10(), [(3, 4)], "positive"),
    "sqrt": (lambda m, a: a.sqrt(), [(3, 4)], "positive"),
    "rsqrt": (lambda m, a: a.rsqrt(), [(3, 4)], "positive"),
    "reciprocal": (lambda m, a: a.reciprocal(), [(3, 4)], "positive"),
    "sin": (lambda m, a: a.sin(), [(3, 4)], None),
    "cos": (lambda m, a: a.cos(), [(3, 4)], None),
    "tan": (lambda m, a: a.tan(), [(3, 4)], "unit"),
    "asin": (lambda m, a: a.asin(), [(3, 4)], "unit"),
    "arcsin": (lambda m, a: m.arcsin(a), [(3, 4)], "unit"),
    "acos": (lambda m, a: a.acos(), [(3, 4)], "unit"),
    "arccos": (lambda m, a: m.arccos(a), [(3, 4)], "unit"),
    "atan": (lambda m, a: a.atan(), [(3, 4)], None),
    "arctan": (lambda m, a: m.arctan(a), [(3, 4)], None),
    "sinh": (lambda m, a: a.sinh(), [(3, 4)], None),
    "cosh": (lambda m, a: a.cosh(), [(3, 4)], None),
    "tanh": (lambda m, a: a.tanh(), [(3, 4)], None),
    "asinh": (lambda m, a: a.asinh(), [(3, 4)], None),
    "arcsinh": (lambda m, a: m.arcsinh(a), [(3, 4)], None),
    "acosh": (lambda m, a: a.acosh(), [(3, 4)], "above1"),
    "arccosh": (lambda m, a: m.arccosh(a), [(3, 4)], "above1"),
    "atanh": (lambda m, a: a.atanh(), [(3, 4)], "unit"),
    "arctanh": (lambda m, a: m.arctanh(a), [(3, 4)], "unit"),
    "sigmoid": (lambda m, a: a.sigmoid(), [(3, 4)], None),
    "erf": (lambda m, a: a.erf(), [(3, 4)], None),
    "erfc": (lambda m, a: a.erfc(), [(3, 4)], None),
    "lgamma": (lambda m, a: a.lgamma(), [(3, 4)], None),
    "lgamma_positive": (lambda m, a: (a * 4.0).lgamma(), [(3, 4)], "positive"),
    "angle": (lambda m, a: a.angle(), [(3, 4)], None),
    "frexp": (lambda m, a: m.frexp(a)[0], [(3, 4)], None),
    "gelu": (lambda m, a: m.nn.functional.gelu(a), [(3, 4)], None),
    "gelu_tanh": (lambda m, a: m.nn.functional.gelu(a, approximate="tanh"), [(3, 4)], None),
    # binary: Tensor and Scalar forms, broadcasting
    "add": (lambda m, a, b: a + b, [(3, 4), (4,)], None),
    "add_alpha": (lambda m, a, b: m.add(a, b, alpha=-1.5), [(3, 1), (1, 4)], None),
    "add_scalar": (lambda m, a: a + 2.5, [(3, 4)], None),
    "sub": (lambda m, a, b: a - b, [(2, 3, 4), (3, 1)], None),
    "subtract": (lambda m, a, b: m.subtract(a, b, alpha=2), [(3, 4), (4,)], None),
    "sub_scalar": (lambda m, a: a - 1.5, [(3, 4)], None),
    "rsub": (lambda m, a, b: m.rsub(a, b, alpha=3), [(3, 4), (4,)], None),
    "rsub_scalar": (lambda m, a: 1.5 - a, [(3, 4)], None),
    "rsub_int": (lambda m, a: 2 - a, [(3, 4)], None),
    "radd": (lambda m, a: 2.5 + a, [(3, 4)], None),
    "rmul": (lambda m, a: -2.0 * a, [(3, 4)], None),
    "rdiv": (lambda m, a: 1.5 / a, [(3, 4)], "positive"),
    "rdiv_int": (lambda m, a: 1 / a, [(3, 4)], "positive"),
    "rdiv_method": (lambda m, a: a.__rtruediv__(2.0), [(3, 4)], "positive"),
    "mul": (lambda m, a, b: a * b, [(3, 4), (3, 1)], None),
    "multiply": (lambda m, a, b: m.multiply(a, b), [(4,), (3, 4)], None),
    "mul_scalar": (lambda m, a: a * -2.0, [(3, 4)], None),
    "div": (lambda m, a, b: a / b, [(3, 4), (4,)], "positive"),
    "divide": (lambda m, a, b: m.divide(a, b), [(3, 1), (3, 4)], "positive"),
    "true_divide": (lambda m, a, b: m.true_divide(a, b), [(3, 4), (3, 4)], "positive"),
    "div_scalar": (lambda m, a: a / 3.0, [(3, 4)], None),
    "div_floor": (lambda m, a, b: m.div(a, b, rounding_mode="floor"), [(3, 4), (4,)], "positive"),
    "div_trunc_scalar": (lambda m, a: m.div(a, 0.3, rounding_mode="trunc"), [(3, 4)], None),
    "remainder": (lambda m, a, b: m.remainder(a, b), [(3, 4), (4,)], "positive"),
    "remainder_scalar": (lambda m, a: m.remainder(a, 0.7), [(3, 4)], None),
    "fmod": (lambda m, a, b: m.fmod(a, b), [(3, 4), (3, 4)], "positive"),
    "fmod_scalar": (lambda m, a: m.fmod(a, 0.7), [(3, 4)], None),
    "pow": (lambda m, a, b: a.pow(b), [(3, 4), (4,)], "positive"),
    "pow_scalar": (lambda m, a: a ** 3, [(3, 4)], None),
    "pow_scalar_zero": (lambda m, a: a ** 0, [(3, 4)], None),
    "pow_scalar_base": (lambda m, b: m.pow(2.5, b), [(3, 4)], None),
    "rpow": (lambda m, b: 1.5 ** b, [(3, 4)], None),
    "atan2": (lambda m, a, b: m.atan2(a, b), [(3, 4), (4,)], None),
    "arctan2": (lambda m, a, b: m.arctan2(a, b), [(3, 4), (3, 4)], None),
    "ldexp": (lambda m, a: m.ldexp(a, m.tensor([1, -2, 3, 0])), [(3, 4)], None),
    "copysign": (lambda m, a, b: m.copysign(a, b), [(3, 4), (4,)], None),
    "copysign_scalar": (lambda m, a: m.copysign(a, -1.0), [(3, 4)], None),
    "maximum": (lambda m, a, b: m.maximum(a, b), [(3, 4), (4,)], None),
    "minimum": (lambda m, a, b: m.minimum(a, b), [(3, 4), (3, 4)], None),
    "clamp": (lambda m, a: a.clamp(-0.5, 0.5), [(3, 4)], None),
    "clamp_max_only": (lambda m, a: a.clamp(max=0.3), [(3, 4)], None),
    "clip": (lambda m, a: a.clip(-0.5, 0.5), [(3, 4)], None),
    "clamp_tensor": (lambda m, a, lo, hi: a.clamp(lo - 1.0, hi + 1.0), [(3, 4), (4,), (3, 1)], None),
    "clamp_tensor_min": (lambda m, a, lo: m.clamp(a, min=lo), [(3, 4), (3, 4)], None),
    "clamp_tensor_max": (lambda m, a, hi: m.clamp(a, max=hi), [(3, 4), (4,)], None),
    "clip_tensor": (lambda m, a, lo, hi: m.clip(a, lo - 1.0, hi + 1.0), [(3, 4), (3, 4), (3, 4)], None),
    "clamp_min": (lambda m, a: m.clamp_min(a, 0.2), [(3, 4)], None),
    "clamp_min_tensor": (lambda m, a, b: m.clamp_min(a, b), [(3, 4), (4,)], None),
    "clamp_max": (lambda m, a: m.clamp_max(a, 0.2), [(3, 4)], None),
    "clamp_max_tensor": (lambda m, a, b: m.clamp_max(a, b), [(3, 4), (3, 4)], None),
    "addcmul": (lambda m, a, b, c: m.addcmul(a, b, c, value=0.5), [(3, 4), (4,), (3, 1)], None),
    "addcdiv": (lambda m, a, b, c: m.addcdiv(a, b, c, value=-2), [(3, 4), (3, 4), (4,)], "positive"),
    "where": (lambda m, a, b: m.where(a > 0, a, b), [(3, 4), (4,)], None),
    "where_scalar_self": (lambda m, a: m.where(a > 0, 1.5, a), [(3, 4)], None),
    "where_scalar_other": (lambda m, a: m.where(a > 0, a, -1.0), [(3, 4)], None),
    "lerp": (lambda m, a, b: m.lerp(a, b, 0.3), [(3, 4), (4,)], None),
    "lerp_tensor": (lambda m, a, b, w: m.lerp(a, b, w), [(3, 4), (3, 4), (4,)], None),
    "abs_script": (lambda m, a: abs(a), [(3, 4)], None),
    # in-place forms
    "abs_": (_inplace("abs_"), [(3, 4)], None),
    "neg_": (_inplace("neg_"), [(3, 4)], None),
    "floor_": (_inplace("floor_"), [(3, 4)], None),
    "exp_": (_inplace("exp_"), [(3, 4)], None),
    "expm1_": (_inplace("expm1_"), [(3, 4)], None),
    "log1p_": (_inplace("log1p_"), [(3, 4)], "positive"),
    "rsqrt_": (_inplace("rsqrt_"), [(3, 4)], "positive"),
    "reciprocal_": (_inplace("reciprocal_"), [(3, 4)], "positive"),
    "tan_": (_inplace("tan_"), [(3, 4)], "unit"),
    "asin_": (_inplace("asin_"), [(3, 4)], "unit"),
    "atan_": (_inplace("atan_"), [(3, 4)], None),
    "sinh_": (_inplace("sinh_"), [(3, 4)], None),
    "erf_": (_inplace("erf_"), [(3, 4)], None),
    "sigmoid_": (_inplace("sigmoid_"), [(3, 4)], None),
    "add_": (_inplace("add_"), [(3, 4), (4,)], None),
    "add_scalar_": (_inplace("add_", 2.0), [(3, 4)], None),
    "sub_alpha_": (_inplace("sub_", alpha=2.0), [(3, 4), (3, 1)], None),
    "mul_": (_inplace("mul_"), [(3, 4), (4,)], None),
    "div_": (_inplace("div_"), [(3, 4), (4,)], "positive"),
    "pow_": (_inplace("pow_"), [(3, 4), (3, 4)], "positive"),
    "pow_scalar_": (_inplace("pow_", 2.0), [(3, 4)], None),
    "remainder_": (_inplace("remainder_"), [(3, 4), (4,)], "positive"),
    "fmod_scalar_": (_inplace("fmod_", 0.7), [(3, 4)], None),
    "atan2_": (_inplace("atan2_"), [(3, 4), (4,)], None),
    "copysign_": (_inplace("copysign_"), [(3, 4), (3, 4)], None),
    "clamp_": (_inplace("clamp_", -0.5, 0.5), [(3, 4)], None),
    "clamp_tensor_": (lambda m, a, lo: (a * 1.0).clamp_(min=lo), [(3, 4), (4,)], None),
    "clamp_min_": (_inplace("clamp_min_", 0.1), [(3, 4)], None),
    "addcmul_": (_inplace("addcmul_"), [(3, 4), (3, 4), (4,)], None),
    "addcdiv_": (_inplace("addcdiv_", value=0.5), [(3, 4), (3, 4), (3, 4)], "positive"),
    "lerp_": (_inplace("lerp_", 0.25), [(3, 4), (3, 4)], None),
    "lerp_tensor_": (_inplace("lerp_"), [(3, 4), (3, 4), (3, 4)], None),
    "gelu_": (lambda m, a: m.nn.functional.gelu(a * 1.0), [(3, 4)], None),
}

# Where the derivative jumps or the op is piecewise constant, finite differences are wrong next to the jumps.
_KINKED = {"abs", "absolute", "relu", "maximum", "minimum", "clamp", "clamp_max_only", "clip", "clamp_tensor",
           "clamp_tensor_min", "clamp_tensor_max", "clip_tensor", "clamp_min", "clamp_min_tensor", "clamp_max",
           "clamp_max_tensor", "where", "where_scalar_self", "where_scalar_other", "abs_", "clamp_", "clamp_tensor_",
           "clamp_min_", "copysign", "copysign_", "copysign_scalar", "abs_script", "remainder", "remainder_scalar",
           "fmod", "fmod_scalar", "remainder_", "fmod_scalar_", "frexp"}
# Piecewise constant: the gradient is zero (finite differences agree away from the steps).
_STEPS = {"floor", "ceil", "round", "round_decimals", "trunc", "fix", "sign", "floor_", "div_floor",
          "div_trunc_scalar"}


def _values(shapes, domain, dtype=np.float32):
    values = arrays(shapes, positive=domain in ("positive", "above1"), dtype=dtype)
    if domain == "unit":
        values = [np.tanh(v).astype(dtype) * 0.9 for v in values]
    if domain == "above1":
        values = [(v + 1.0).astype(dtype) for v in values]
    return values


@pytest.mark.parametrize("noncontiguous", [False, True], ids=["contiguous", "noncontiguous"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_gradients_match_torch(name, noncontiguous):
    fn, shapes, domain = OPS[name]
    values = _values(shapes, domain)
    if name in _KINKED or name in _STEPS:
        values = [v.astype(np.float32) for v in away_from_kinks(values)]
    assert_gradients_match_torch(fn, values, noncontiguous)


# Rounded quotients step wherever a / b crosses an integer: random inputs may sit beside a step.
_NO_GRADCHECK = {"div_floor", "div_trunc_scalar"}


@pytest.mark.parametrize("name", sorted(set(OPS) - _NO_GRADCHECK))
def test_gradcheck_float64(name):
    fn, shapes, domain = OPS[name]
    values = _values(shapes, domain, dtype=np.float64)
    if name in _STEPS:
        # Steps at integers (and at multiples of 0.3 or 0.01): finite differences right beside them are wrong.
        values = [np.floor(v * 10) / 10 + 0.0537 for v in values]
    elif name in _KINKED:
        values = away_from_kinks(values)
    gradcheck(fn, values)


def _grad_fn_name(lib, fn, shapes, domain):
    inputs = [lib.from_numpy(v).requires_grad_(True) for v in _values(shapes, domain)]
    out = fn(lib, *inputs)
    return out.grad_fn.name() if out.grad_fn is not None else None


@pytest.mark.parametrize("name", sorted(OPS))
def test_grad_fn_names(name):
    fn, shapes, domain = OPS[name]
    assert _grad_fn_name(kiln, fn, shapes, domain) == _grad_fn_name(torch, fn, shapes, domain)


def test_reflected_division_records_reciprocal_then_mul():
    """`1.5 / a` is a.reciprocal() * 1.5 in torch 1.13: the same graph, node by node."""
    names = []
    for lib in (torch, kiln):
        a = lib.from_numpy(np.array([0.5, 2.0, 4.0])).requires_grad_(True)
        out = 1.5 / a
        names.append([out.grad_fn.name()] + [f.name() for f, _ in out.grad_fn.next_functions if f is not None])
    assert names[1] == names[0]


# ----- a tensor argument that requires grad but has no derivative -----

def test_pow_scalar_base_exponent_gets_gradient():
    """pow(Scalar, Tensor): the exponent's gradient was silently missing."""
    for lib in (kiln, torch):
        e = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        lib.pow(3.0, e).sum().backward()
        assert e.grad is not None
    assert np.allclose(e.grad.numpy(), (3.0 ** np.array([0.5, -1.0, 2.0])) * np.log(3.0))


def test_clamp_tensor_bounds_get_gradients():
    """clamp(Tensor, Tensor min, Tensor max): the bounds' gradients were silently missing."""
    assert_gradients_match_torch(lambda m, a, lo, hi: m.clamp(a, lo - 0.5, hi + 0.5),
                                 away_from_kinks(arrays([(3, 4), (3, 4), (4,)])))


def test_argument_without_formula_raises_torchs_error():
    """An operator with formulas for some arguments, called with another that requires grad: backward raises
    (never a missing gradient). remainder(Scalar, Tensor) has no derivative in torch either."""
    b = kiln.tensor([1.5, 2.5], requires_grad=True)
    y = kiln.remainder(2.0, b)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::remainder is not implemented"):
        y.sum().backward()
    tb = torch.tensor([1.5, 2.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::remainder is not implemented"):
        torch.remainder(2.0, tb).sum().backward()


def test_floor_divide_has_no_derivative_as_in_torch():
    a = kiln.tensor([1.5, 2.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
        kiln.floor_divide(a, 0.7).sum().backward()


# ----- complex tensors (kiln/ops/complex_ops.cpp, and mul/div's conjugates) -----

def _complex_programs(lib):
    w = lib.tensor([0.7, -1.3])
    return {
        "real": lambda z: lib.real(z) * w,
        "imag": lambda z: lib.imag(z) * w,
        "abs_squared": lambda z: lib.real(z.conj() * z) * w,
        "mul_div": lambda z: lib.imag(z * z / (z + 3.0)) * w,
        "view_as_real": lambda z: lib.view_as_real(z).sum(-1) * w,
        "conj_physical": lambda z: lib.imag(z.conj_physical()) * w,
        "resolve": lambda z: lib.real(z.resolve_conj().resolve_neg()) * w,
    }


@pytest.mark.parametrize("name", sorted(_complex_programs(torch)))
def test_complex_gradients_match_torch(name):
    grads = []
    for lib in (torch, kiln):
        z = lib.complex(lib.tensor([1.0, -0.5]), lib.tensor([2.0, 0.3])).requires_grad_(True)
        _complex_programs(lib)[name](z).sum().backward()
        grads.append(z.grad.detach().numpy() if lib is torch else z.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("program", ["polar", "complex", "view_as_complex"])
def test_complex_constructors_gradients_match_torch(program):
    grads = []
    for lib in (torch, kiln):
        w = lib.tensor([0.7, -1.3])
        a = lib.tensor([0.5, 2.0], requires_grad=True)
        b = lib.tensor([0.3, -1.0], requires_grad=True)
        if program == "polar":
            c = lib.polar(a, b)
        elif program == "complex":
            c = lib.complex(a, b)
        else:
            c = lib.view_as_complex(lib.stack([a, b], -1))
        (lib.real(c) * w + lib.imag(c) * 2.0).sum().backward()
        grads.append([(g.detach() if lib is torch else g).numpy() for g in (a.grad, b.grad)])
    for k, t in zip(grads[1], grads[0]):
        np.testing.assert_allclose(k, t, rtol=1e-5, atol=1e-6)


def test_inplace_comparison_gives_zero_gradient():
    """eq_ and its kin keep a float self: torch records a zero gradient (EqBackward0)."""
    for lib in (kiln, torch):
        a = lib.tensor([0.5, 2.0], requires_grad=True)
        b = lib.tensor([0.5, 1.0], requires_grad=True)
        y = a * 2.0
        y.eq_(1.0)
        z = a * 3.0
        z.lt_(b)
        (y + z).sum().backward()
        np.testing.assert_array_equal((a.grad.detach() if lib is torch else a.grad).numpy(), [0.0, 0.0])
        assert y.grad_fn.name() == "EqBackward0"
