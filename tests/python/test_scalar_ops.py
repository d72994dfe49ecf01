"""TorchScript's operators on Python numbers (arithmetic, comparisons, math.*,
conversions) and the tensor-property prims, against torch 1.13: each overload
is called as `kiln._C._overload("aten::X.overload")` and as
`torch.ops.aten.X.overload` over grids of values (negatives, zero, int64
limits, inf, nan, bools in Scalar slots); results must match exactly,
Python type included, and raise together. Operators torch.ops cannot call
(generic `t` arguments) are compared with scripted torch functions."""
import math
import struct
import warnings  # noqa: F401 - the scripted warn test resolves it

import numpy as np
import pytest
import torch

import kiln

INF, NAN = float("inf"), float("nan")
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1

INTS = [0, 1, -1, 2, -2, 3, -3, 7, -7, 10, -10, 2**31 - 1, -2**31, 2**31, 2**32 + 5, 2**40 + 1,
        2**62, INT64_MAX, INT64_MIN]
FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.1, -7.25, 3.0, 7.0, 1e10, -1e10, 3e9, 1e300,
          -1e-300, 5e-324, 2.0**63, -2.0**63, INF, -INF, NAN]
BOOLS = [False, True]
SCALARS = INTS + FLOATS + BOOLS
# Grids for binary ops (every pair is tried): edge values plus random ones.
_rng = np.random.default_rng(7)
BINARY_INTS = [0, 1, -1, 2, -3, 5, -5, 7, -7, 12, -18, 1000003, 2**31 - 1, -2**31, 2**31, 2**62, -2**62,
               INT64_MAX, INT64_MIN] + [int(v) for v in _rng.integers(-2**40, 2**40, 6)]
BINARY_FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 3.0, -3.0, 7.0, 0.1, -7.25, 1e10, 1e300, -1e-300, 5e-324, 2.0**63,
                 INF, -INF, NAN] + [float(v) for v in _rng.standard_normal(6) * 100]
BINARY_SCALARS = [0, 3, -7, 2**40, INT64_MIN, 0.0, -0.0, -2.5, 0.1, 7.0, INF, NAN, True, False]


def torch_overload(qualified):
    namespace, rest = qualified.split("::")
    name, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), name), overload or "default")


def outcome(fn, args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - raising is part of the result
        return None, e


def same_value(k, t):
    """Equal with the same Python type; floats bit for bit (NaNs equal, -0.0 != 0.0)."""
    if isinstance(t, torch.Tensor):
        return (isinstance(k, kiln.Tensor) and k.dtype._name == str(t.dtype)[6:] and tuple(k.shape) == tuple(t.shape)
                and np.array_equal(k.numpy(), t.numpy(), equal_nan=t.dtype.is_floating_point))
    if isinstance(t, torch.device):
        return k == str(t)
    if type(k) is not type(t):
        return False
    if isinstance(t, tuple):
        return len(k) == len(t) and all(same_value(a, b) for a, b in zip(k, t))
    if isinstance(t, float):
        if math.isnan(t):
            return math.isnan(k)
        return struct.pack("<d", k) == struct.pack("<d", t)
    return k == t


def check(qualified, *args):
    """The overload in kiln and in torch: same result (and type), or both raise."""
    (kr, ke), (tr, te) = outcome(kiln._C._overload(qualified), args), outcome(torch_overload(qualified), args)
    if te is not None:
        assert ke is not None, f"{qualified}{args}: torch raised {te!r}, kiln returned {kr!r}"
        return
    assert ke is None, f"{qualified}{args}: kiln raised {ke!r}, torch returned {tr!r}"
    assert same_value(kr, tr), f"{qualified}{args}: kiln {kr!r} ({type(kr).__name__}), torch {tr!r} ({type(tr).__name__})"


def kiln_call(qualified, *args):
    return kiln._C._overload(qualified)(*args)


# torch 1.13 traps (SIGFPE) on these integer divisions instead of raising, so
# they are checked in kiln alone (test_integer_division_edges).
def torch_traps(name, a, b):
    if name not in ("floordiv", "remainder", "divmod", "__round_to_zero_floordiv", "gcd"):
        return False
    if not (isinstance(a, int) and isinstance(b, int)):  # bools included
        return False
    if b == 0 and name in ("remainder", "__round_to_zero_floordiv"):
        return True
    return a == INT64_MIN and b == -1 or name == "gcd" and INT64_MIN in (a, b)


GRIDS = {"int": BINARY_INTS, "float": BINARY_FLOATS, "Scalar": BINARY_SCALARS, "bool": BOOLS}
# The operand types of each overload name.
OPERANDS = {"int": ("int", "int"), "int_int": ("int", "int"), "int_to_int": ("int", "int"),
            "float": ("float", "float"), "float_float": ("float", "float"), "int_float": ("int", "float"),
            "float_int": ("float", "int"), "default": ("Scalar", "Scalar"), "Scalar_Scalar": ("Scalar", "Scalar"),
            "bool": ("bool", "bool")}


def binary_grid(overload):
    left, right = OPERANDS[overload]
    return [(a, b) for a in GRIDS[left] for b in GRIDS[right]]


def check_binary(name, overload, namespace="aten"):
    qualified = f"{namespace}::{name}" + ("" if overload == "default" else f".{overload}")
    for a, b in binary_grid(overload):
        if not torch_traps(name, a, b):
            check(qualified, a, b)


ARITHMETIC = [(name, ov) for name in ("add", "sub", "mul", "floordiv", "remainder", "pow", "eq", "ne", "lt", "le",
                                      "gt", "ge", "fmod", "copysign", "mathremainder", "atan2")
              for ov in ("int", "float", "int_float", "float_int")]
ARITHMETIC += [(name, "default") for name in ("add", "sub", "mul", "div", "floordiv", "remainder", "eq", "ne", "lt",
                                              "le", "gt", "ge", "fmod", "copysign", "mathremainder")]
ARITHMETIC += [("div", "int"), ("div", "float"), ("pow", "Scalar_Scalar"), ("atan2", "Scalar_Scalar"),
               ("pow", "int_to_int"), ("eq", "bool"), ("ne", "bool"), ("divmod", "int"), ("divmod", "float"),
               ("divmod", "int_float"), ("divmod", "float_int"), ("log", "int_int"), ("log", "float_float"),
               ("log", "int_float"), ("log", "float_int"), ("log", "Scalar_Scalar"), ("gcd", "int"),
               ("__round_to_zero_floordiv", "int"), ("__and__", "int"), ("__or__", "int"), ("__xor__", "int"),
               ("__and__", "bool"), ("__or__", "bool"), ("__xor__", "bool"), ("__lshift__", "int"),
               ("__rshift__", "int")]


@pytest.mark.parametrize("name,overload", ARITHMETIC, ids=[f"{n}.{o}" for n, o in ARITHMETIC])
def test_binary_number_ops(name, overload):
    check_binary(name, overload)


@pytest.mark.parametrize("name", ["min", "max"])
@pytest.mark.parametrize("overload", ["int", "float", "int_float", "float_int", "default"])
def test_prim_min_max(name, overload):
    check_binary(name, overload, namespace="prim")


def test_pow_int_to_int_is_a_float_as_in_torch():
    # 1.13's kernel pushes the float power despite the schema's `int`.
    assert kiln_call("aten::pow.int_to_int", 3, 5) == 243.0
    assert type(kiln_call("aten::pow.int_to_int", 3, 5)) is float


def test_shift_counts_wrap_mod_64():
    for a in (1, -1, 3, -8, INT64_MAX, INT64_MIN):
        for b in (0, 1, 62, 63, 64, 65, 70, -1, -64, 2**40):
            check("aten::__lshift__.int", a, b)
            check("aten::__rshift__.int", a, b)


def test_integer_division_edges():
    """Where torch 1.13 traps, kiln raises (division by zero) or wraps like C++."""
    for qualified in ("aten::remainder.int", "aten::remainder", "aten::__round_to_zero_floordiv.int",
                      "aten::floordiv.int", "aten::floordiv", "aten::divmod.int"):
        with pytest.raises(RuntimeError, match="ZeroDivisionError|division by 0"):
            kiln_call(qualified, 7, 0)
    assert kiln_call("aten::floordiv.int", INT64_MIN, -1) == INT64_MIN
    assert kiln_call("aten::floordiv", INT64_MIN, -1) == INT64_MIN
    assert kiln_call("aten::remainder.int", INT64_MIN, -1) == 0
    assert kiln_call("aten::__round_to_zero_floordiv.int", INT64_MIN, -1) == INT64_MIN
    assert kiln_call("aten::divmod.int", INT64_MIN, -1) == (INT64_MIN, 0)
    assert kiln_call("aten::gcd.int", INT64_MIN, -1) == 1
    assert kiln_call("aten::gcd.int", INT64_MIN, 0) == INT64_MIN
    with pytest.raises(RuntimeError, match="ZeroDivisionError: float divmod"):
        kiln_call("aten::divmod.float", 1.0, 0.0)


def test_python_semantics_spot_checks():
    """A few results spelled out, so a wrong oracle call cannot hide a bug."""
    assert kiln_call("aten::floordiv.int", -7, 2) == -4
    assert kiln_call("aten::remainder.int", -7, 2) == 1
    assert kiln_call("aten::remainder.float", -7.0, 2.0) == 1.0
    assert kiln_call("aten::div.int", 7, 2) == 3.5
    assert kiln_call("aten::add.int", INT64_MAX, 1) == INT64_MIN
    assert kiln_call("aten::add", 1, 2) == 3 and type(kiln_call("aten::add", 1, 2)) is int
    assert type(kiln_call("aten::add", 1, 2.0)) is float
    assert kiln_call("aten::divmod.int", -7, 2) == (-4, 1)
    with pytest.raises(RuntimeError, match="0.0 cannot be raised to a negative power"):
        kiln_call("aten::pow.int", 0, -1)
    assert kiln_call("aten::pow.Scalar_Scalar", 0, -1) == INF


UNARY_FLOAT_MATH = ["sqrt", "exp", "expm1", "log", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan",
                    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "gamma", "lgamma", "fabs",
                    "degrees", "radians", "round", "angle", "floor", "ceil", "neg"]


@pytest.mark.parametrize("name", UNARY_FLOAT_MATH)
def test_unary_math(name):
    for a in INTS:
        check(f"aten::{name}.int", a)
    for a in FLOATS + [-NAN, 0.49999999999999994, 4503599627370497.0, 1e-310]:
        check(f"aten::{name}.float", a)
    for a in SCALARS + [-NAN]:
        check(f"aten::{name}.Scalar", a)


@pytest.mark.parametrize("overload,values", [("int", INTS), ("float", FLOATS), ("Scalar", SCALARS)])
def test_prim_abs(overload, values):
    for a in values:
        check(f"prim::abs.{overload}", a)


def test_scalar_overloads_round_through_cpp_float_and_int():
    exp1 = kiln_call("aten::exp.Scalar", 1)
    assert exp1 == struct.unpack("<f", struct.pack("<f", math.e))[0] and exp1 != math.e
    assert kiln_call("aten::exp.float", 1.0) == math.e
    assert kiln_call("aten::floor.Scalar", 1e10) == 1410065408  # 10**10 narrowed to 32 bits
    assert kiln_call("aten::neg.Scalar", 2**40) == 0


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_float_predicates(name):
    for a in FLOATS + [-NAN]:
        check(f"aten::{name}.float", a)


def test_factorial_gcd_frexp_ldexp_modf():
    for n in list(range(-3, 80)) + [100, 1000, 2**32 + 5, 2**40, -2**40]:
        check("aten::factorial.int", n)
    for a in BINARY_INTS + [12, -18, 35]:
        for b in BINARY_INTS + [12, -18, 35]:
            if not torch_traps("gcd", a, b):
                check("aten::gcd.int", a, b)
    for a in FLOATS + [8.0, -1e-310, 1e308]:
        check("aten::frexp", a)
        check("aten::modf", a)
        for i in (0, 3, -3, 1100, -1100, 2**32 + 3, 2**40, -2**31):
            check("aten::ldexp", a, i)


def test_not_and_bool_bitwise():
    for a in BOOLS:
        check("aten::__not__", a)


# --- conversions ----------------------------------------------------------------

def test_number_conversions():
    for a in INTS:
        check("aten::Bool.int", a)
        check("aten::Float.int", a)
    for a in FLOATS:
        check("aten::Bool.float", a)
        check("aten::Int.float", a)
    for a in BOOLS:
        check("aten::Int.bool", a)
        check("aten::Float.bool", a)
    for a in SCALARS + [2147483647.9, 2147483648.0, -2147483648.5, -2147483649.0]:
        check("aten::Int.Scalar", a)
        check("aten::Float.Scalar", a)


STRINGS = ["0", "12", "-12", "+12", " 12", "\t12", "12 ", "012", "1.5", "1e3", "0x10", "abc", "", " ", "1_000",
           "99999999999999999999", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "inf",
           "-inf", "INF", "infinity", "nan", "-nan", "nan(123)", "  1.5", "1.5 ", "1.5x", ".5", "5.", "0x1p3",
           "1e999", "1e-400", "-0", "1e-310"]


@pytest.mark.parametrize("overload", ["Int.str", "Float.str"])
def test_string_conversions(overload):
    for s in STRINGS:
        check(f"aten::{overload}", s)


def test_string_conversion_messages():
    with pytest.raises(RuntimeError, match=r"invalid literal for int\(\) with base 10: '1.5'"):
        kiln_call("aten::Int.str", "1.5")
    with pytest.raises(RuntimeError, match="could not convert string to float: 'abc'"):
        kiln_call("aten::Float.str", "abc")


def tensor_pair(array):
    array = np.asarray(array)
    return kiln.from_numpy(array.copy()), torch.from_numpy(array.copy())


with np.errstate(over="ignore"):  # 1e30 as float16 is inf
    CONVERSION_ARRAYS = [np.array(v, dtype=d) for d in ("float16", "float32", "float64")
                         for v in (2.7, -2.7, 0.0, -0.0, NAN, INF, 1e30, 3e9, 2.0**63, 0.5)]
CONVERSION_ARRAYS += [np.array(v, dtype=d) for d in ("int64", "int32", "int16", "int8", "uint8")
                      for v in (0, 7, 100)]
CONVERSION_ARRAYS += [np.array(True), np.array(False), np.array(INT64_MIN), np.array([2.5], dtype="float32"),
                      np.array([[3]]), np.array([1, 2]), np.array([], dtype="float32"), np.zeros((2, 0)),
                      np.array([True])]


@pytest.mark.parametrize("qualified", ["aten::Int.Tensor", "aten::Float.Tensor", "aten::Bool.Tensor",
                                       "aten::ScalarImplicit", "aten::IntImplicit", "aten::FloatImplicit",
                                       "aten::is_nonzero"])
def test_tensor_conversions(qualified):
    for array in CONVERSION_ARRAYS:
        k, t = tensor_pair(array)
        (kr, ke), (tr, te) = outcome(kiln._C._overload(qualified), (k,)), outcome(torch_overload(qualified), (t,))
        assert (ke is None) == (te is None), f"{qualified}({array!r}): kiln {kr!r} / {ke!r}, torch {tr!r} / {te!r}"
        if te is None:
            assert same_value(kr, tr), f"{qualified}({array!r}): kiln {kr!r}, torch {tr!r}"


def test_tensor_conversion_messages():
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        kiln_call("aten::Int.Tensor", kiln.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="Cannot input a tensor of dimension other than 0 as a scalar argument"):
        kiln_call("aten::IntImplicit", kiln.tensor([2]))
    with pytest.raises(RuntimeError, match="Cannot input a tensor of type Float as an integral argument"):
        kiln_call("aten::IntImplicit", kiln.tensor(2.5))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        kiln_call("aten::Bool.Tensor", kiln.tensor([]))
    with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t without overflow"):
        kiln_call("aten::Int.Tensor", kiln.tensor(NAN))


def test_num_to_tensor():
    for a in INTS + FLOATS + BOOLS:
        check("prim::NumToTensor.Scalar", a)
    for a in BOOLS:
        check("prim::NumToTensor.bool", a)
    # A plain 0-dim tensor, not a wrapped number: it wins promotion against a 0-dim int8.
    for lib, num_to_tensor in ((kiln, kiln._C._overload("prim::NumToTensor.Scalar")),
                               (torch, torch.ops.prim.NumToTensor.Scalar)):
        small = lib.tensor(1, dtype=lib.int8)
        assert str((num_to_tensor(3) + small).dtype).endswith("int64")
        assert str((num_to_tensor(2.5) + lib.tensor(1.0)).dtype).endswith("float64")


# --- tensor properties -------------------------------------------------------

PROPERTY_ARRAYS = [np.zeros((2, 3), dtype=d) for d in ("float16", "float32", "float64", "int64", "int32", "int16",
                                                       "int8", "uint8", "bool")]
PROPERTIES = ["prim::dtype", "prim::layout", "prim::device", "prim::requires_grad", "prim::is_cpu", "prim::is_cuda",
              "prim::is_xpu", "prim::is_sparse", "prim::is_sparse_csr", "prim::is_mkldnn", "prim::is_mps",
              "prim::is_vulkan", "prim::is_ipu", "prim::is_quantized", "prim::is_meta", "prim::is_ort",
              "prim::is_nested", "aten::element_size", "aten::is_floating_point", "aten::is_signed",
              "aten::is_complex", "aten::get_device", "aten::is_contiguous", "aten::storage_offset", "aten::is_conj",
              "aten::is_neg"]


@pytest.mark.parametrize("qualified", PROPERTIES)
def test_tensor_properties(qualified):
    for array in PROPERTY_ARRAYS + [np.array(1.5), np.zeros((0, 4), dtype="float32")]:
        k, t = tensor_pair(array)
        views = [(k, t)]
        if t.dim() == 2:  # a transposed view and an offset slice
            views += [(k.t(), t.t()), (k[1:], t[1:])]
        for kv, tv in views:
            kr, tr = kiln._C._overload(qualified)(kv), torch_overload(qualified)(tv)
            assert same_value(kr, tr), f"{qualified}({array.dtype}, {tuple(tv.shape)}): kiln {kr!r}, torch {tr!r}"


def test_prim_data_shares_storage():
    k = kiln.from_numpy(np.arange(6, dtype="float32").reshape(2, 3)).t()
    d = kiln_call("prim::data", k)
    assert d._storage_ptr() == k._storage_ptr() and d.shape == k.shape and not d._same_tensor(k)
    np.testing.assert_array_equal(d.numpy(), k.numpy())
    assert kiln_call("prim::name", k) is None


def test_dtype_arithmetic():
    dtypes = [kiln.uint8, kiln.int8, kiln.int16, kiln.int32, kiln.int64, kiln.float16, kiln.float32, kiln.float64,
              kiln.bool, kiln.bfloat16]
    for a in dtypes:
        for b in dtypes:
            ta, tb = getattr(torch, a._name), getattr(torch, b._name)
            kr = kiln_call("aten::promote_types", a, b)
            assert kr == torch.ops.aten.promote_types(ta, tb), (a, b)
            assert kiln_call("aten::can_cast", a, b) == torch.ops.aten.can_cast(ta, tb), (a, b)
    for a in BINARY_SCALARS:
        for b in BINARY_SCALARS:
            check("aten::result_type.Scalar_Scalar", a, b)


# --- devices, identity, optionals, loops, warnings -----------------------------

def test_device_from_string():
    for s in ("cpu", "cuda", "cuda:2", "meta", "bogus", "cuda:x", ""):
        check("aten::device", s)


SCRIPTS = torch.jit.CompilationUnit("""
def is_int(a: int, b: int) -> bool:
    return a is b
def is_float(a: float, b: float) -> bool:
    return a is b
def isnot_int_float(a: int, b: float) -> bool:
    return a is not b
def is_tensor(a: Tensor, b: Tensor) -> bool:
    return a is b
def is_none(a: Optional[int]) -> bool:
    return a is None
def range_sum(lo: int, hi: int, step: int) -> int:
    s = 0
    for i in range(lo, hi, step):
        s += i
    return s
""")


def test_is_and_isnot():
    is_ = kiln._C._overload("aten::__is__")
    isnot = kiln._C._overload("aten::__isnot__")
    for a in (0, 1, -7, INT64_MIN):
        for b in (0, 1, -7, INT64_MIN):
            assert is_(a, b) == SCRIPTS.is_int(a, b)
            assert isnot(a, float(b)) == SCRIPTS.isnot_int_float(a, float(b))
    for a in (0.0, -0.0, 1.5, NAN, INF):
        for b in (0.0, -0.0, 1.5, NAN, INF):
            assert is_(a, b) == SCRIPTS.is_float(a, b), (a, b)
    x, y = kiln.ones(2), kiln.ones(2)
    tx, ty = torch.ones(2), torch.ones(2)
    assert is_(x, x) == SCRIPTS.is_tensor(tx, tx) is True
    assert is_(x, y) == SCRIPTS.is_tensor(tx, ty) is False
    assert is_(None, None) == SCRIPTS.is_none(None) is True
    assert is_(3, None) == SCRIPTS.is_none(3) is False
    assert isnot(x, y) is True


def test_unwrap_optional():
    check("aten::_unwrap_optional", None)
    assert kiln_call("aten::_unwrap_optional", 3) == 3
    x = kiln.ones(2)
    assert kiln_call("prim::unchecked_unwrap_optional", x)._same_tensor(x)


def test_range_helpers():
    for lo, hi, step in [(0, 10, 3), (10, 0, -3), (0, 10, 0), (10, 0, 3), (0, 0, 1), (-5, 5, 1), (5, -5, -2),
                         (INT64_MIN, INT64_MAX, 1), (INT64_MAX, INT64_MIN, -1), (-5, 5, INT64_MIN), (0, 7, INT64_MAX)]:
        check("aten::__range_length", lo, hi, step)
    for index, start, step in [(2, 1, 3), (0, 5, -1), (2**62, 5, 4), (7, INT64_MAX, 1)]:
        check("aten::__derive_index", index, start, step)
    # What the loop computes in TorchScript, with the helpers' results.
    for lo, hi, step in [(0, 10, 3), (10, -4, -3), (3, 3, 1)]:
        n = kiln_call("aten::__range_length", lo, hi, step)
        total = sum(kiln_call("aten::__derive_index", i, lo, step) for i in range(n))
        assert total == SCRIPTS.range_sum(lo, hi, step)


def test_warn_prints_a_user_warning(capfd):
    kiln_call("aten::warn", "careful", 2)
    assert capfd.readouterr().err == "UserWarning: careful\n"
    cu = torch.jit.CompilationUnit("def f(x: int) -> int:\n    warnings.warn('careful')\n    return x\n",
                                   _frames_up=0)
    with pytest.warns(UserWarning, match="careful"):
        cu.f(1)
