"""Differential tests of single operator overloads: each is called by its full
name, kiln._C._overload("aten::X.overload") against torch.ops.aten.X.overload
(or a scripted torch function where torch.ops cannot take the argument), on
copies of the same inputs. Covers the overloads tools/schema_coverage.py found
missing and the out= forms PyTorch generates from a functional op (computed,
then copied into `out` of any dtype)."""
import os
import sys
import warnings

import numpy as np
import pytest
import torch

from conftest import assert_same, check_both, kiln

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import schema_coverage  # noqa: E402

# torch warns when it resizes a non-empty out= tensor; resizing is what is tested.
warnings.filterwarnings("ignore", message="An output with one or more elements was resized")


def aten(lib, qualified):
    """The overload `qualified` ("add.Scalar_out") of kiln or torch."""
    if lib is kiln:
        return kiln._C._overload("aten::" + qualified)
    name, _, overload = qualified.partition(".")
    return getattr(getattr(torch.ops.aten, name), overload or "default")


def dtype_of(lib, name):
    return getattr(lib, name)


def empty_out(lib, dtype, shape=(0,)):
    return lib.empty(list(shape), dtype=dtype_of(lib, dtype))


def ones_out(lib, dtype, shape):
    """An out= tensor with elements (torch warns when it resizes one; kiln is silent)."""
    return lib.ones(list(shape), dtype=dtype_of(lib, dtype))


OUT_DTYPES = ["float32", "float64", "int64", "int32", "bool"]


def test_every_tensor_overload_is_registered_with_torchs_schema():
    missing, _, mismatched, kiln_only = schema_coverage.coverage()
    assert missing == []
    assert mismatched == []
    assert kiln_only == []


# ---- out= forms generated from the functional op: any out dtype ----

X_FLOAT = np.array([[-2.5, -1.0, 0.5], [1.5, 3.0, 7.25]], dtype=np.float32)
X_INT = np.array([[-7, -2, 0], [1, 5, 9]], dtype=np.int64)
X_BOOL = np.array([[True, False, True], [False, False, True]])

def shift_amount(x):
    """Non-negative shift counts of x's dtype (bool stays bool)."""
    return x if str(x.dtype).endswith("bool") else x.abs()


SCALAR_OUTS = [
    ("add.Scalar_out", lambda op, x, out: op(x, 2.5, 2, out=out)),
    ("add.Scalar_out", lambda op, x, out: op(x, 3, out=out)),
    ("sub.Scalar_out", lambda op, x, out: op(x, 1.5, 2, out=out)),
    ("sub.Scalar_out", lambda op, x, out: op(x, 4, out=out)),
    ("mul.Scalar_out", lambda op, x, out: op(x, -1.5, out=out)),
    ("mul.Scalar_out", lambda op, x, out: op(x, 3, out=out)),
    ("div.Scalar_out", lambda op, x, out: op(x, 4, out=out)),
    ("div.Scalar_mode_out", lambda op, x, out: op(x, 4, rounding_mode="floor", out=out)),
    ("div.Scalar_mode_out", lambda op, x, out: op(x, -2.5, rounding_mode="trunc", out=out)),
    ("remainder.Scalar_Tensor_out", lambda op, x, out: op(7, x, out=out)),
    ("remainder.Scalar_Tensor_out", lambda op, x, out: op(2.5, x, out=out)),
    ("bitwise_and.Scalar_Tensor_out", lambda op, x, out: op(6, x, out=out)),
    ("bitwise_or.Scalar_Tensor_out", lambda op, x, out: op(6, x, out=out)),
    ("bitwise_xor.Scalar_Tensor_out", lambda op, x, out: op(6, x, out=out)),
    ("bitwise_left_shift.Scalar_Tensor_out", lambda op, x, out: op(3, shift_amount(x), out=out)),
    ("bitwise_right_shift.Scalar_Tensor_out", lambda op, x, out: op(1024, shift_amount(x), out=out)),
    ("__lshift__.Scalar_out", lambda op, x, out: op(x, 2, out=out)),
    ("__rshift__.Scalar_out", lambda op, x, out: op(x, 1, out=out)),
    ("__lshift__.Tensor_out", lambda op, x, out: op(x, shift_amount(x), out=out)),
    ("__rshift__.Tensor_out", lambda op, x, out: op(x, shift_amount(x), out=out)),
]


@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("x", [X_FLOAT, X_INT, X_BOOL], ids=["float", "int", "bool"])
@pytest.mark.parametrize("name,call", SCALAR_OUTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCALAR_OUTS)])
def test_pointwise_generated_out_forms(name, call, x, out_dtype):
    check_both(lambda lib, x: call(aten(lib, name), x, empty_out(lib, out_dtype)), x)


@pytest.mark.parametrize("name,call", SCALAR_OUTS[:6] + SCALAR_OUTS[11:12],
                         ids=[n for n, _ in SCALAR_OUTS[:6] + SCALAR_OUTS[11:12]])
def test_generated_out_writes_through_a_strided_view(name, call):
    # The out tensor has the result's shape but is a transposed view: written in place, base and all.
    def fn(lib, x, base):
        out = base.t()
        result = call(aten(lib, name), x, out)
        return result, out, base

    check_both(fn, X_INT, np.zeros((3, 2), dtype=np.int64))


@pytest.mark.parametrize("x,out_dtype,shape", [(X_FLOAT, "float64", (5,)), (X_FLOAT, "int32", (20,)),
                                               (np.zeros((0, 3), np.float32), "int64", (2,))])
def test_generated_out_resizes_a_wrong_shaped_out_and_returns_it(x, out_dtype, shape):
    def fn(lib, x):
        out = ones_out(lib, out_dtype, shape)
        result = aten(lib, "add.Scalar_out")(x, 1, out=out)
        return result, out, result.data_ptr() == out.data_ptr()

    check_both(fn, x)


def test_generated_out_of_a_0dim_input():
    check_both(lambda lib, x: aten(lib, "mul.Scalar_out")(x, 2.5, out=ones_out(lib, "int32", (2, 2))),
               np.array(3, np.int64))


def test_generated_out_errors_match():
    # The functional op's own errors still come first.
    check_both(lambda lib, x: aten(lib, "sub.Scalar_out")(x, True, out=empty_out(lib, "int64")), X_BOOL)
    check_both(lambda lib, x: aten(lib, "div.Scalar_mode_out")(x, 0, rounding_mode="floor",
                                                               out=empty_out(lib, "float32")), X_INT)
    check_both(lambda lib, x: aten(lib, "bitwise_and.Scalar_Tensor_out")(1.5, x, out=empty_out(lib, "int64")),
               X_INT)
    check_both(lambda lib, x: aten(lib, "add.Scalar_out")(x, 300, out=empty_out(lib, "uint8")), X_INT)


REDUCE_OUTS = [
    ("sum.out", lambda op, x, out: op(x, out=out)),
    ("sum.out", lambda op, x, out: op(x, dtype=dtype_of(kiln if isinstance(x, kiln.Tensor) else torch, "float64"),
                                      out=out)),
    ("prod.out", lambda op, x, out: op(x, out=out)),
    ("norm.Scalar_out", lambda op, x, out: op(x, 3, out=out)),
    ("norm.ScalarOpt_dtype_out", lambda op, x, out: op(
        x, 1, dtype=dtype_of(kiln if isinstance(x, kiln.Tensor) else torch, "float64"), out=out)),
]


@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("x", [X_FLOAT, X_INT, X_BOOL, np.zeros((0, 2), np.float32), np.array(-1.5, np.float32)],
                         ids=["float", "int", "bool", "empty", "0dim"])
@pytest.mark.parametrize("name,call", REDUCE_OUTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(REDUCE_OUTS)])
def test_reduction_generated_out_forms(name, call, x, out_dtype):
    check_both(lambda lib, x: call(aten(lib, name), x, empty_out(lib, out_dtype)), x, rtol=1e-5)


@pytest.mark.parametrize("x", [X_INT, X_BOOL, X_FLOAT], ids=["int", "bool", "float"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_norm_with_a_dtype_converts_the_input_first(x, dtype):
    for p in (0, 1, 2, 3.5, float("inf")):
        check_both(lambda lib, x: aten(lib, "norm.ScalarOpt_dtype")(x, p, dtype=dtype_of(lib, dtype)), x)
        check_both(lambda lib, x: aten(lib, "norm.ScalarOpt_dim_dtype")(x, p, [1], True, dtype=dtype_of(lib, dtype)),
                   x)
    check_both(lambda lib, x: aten(lib, "norm.ScalarOpt_dim")(x, 2, [0]), x)


@pytest.mark.parametrize("name", ["var_mean.correction_out", "std_mean.correction_out"])
@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int64", "float64"), ("bool", "int32")])
@pytest.mark.parametrize("dim,keepdim", [([0], False), ([1], True), (None, False)])
def test_moment_pair_out_forms(name, dtypes, dim, keepdim):
    def fn(lib, x):
        out0 = empty_out(lib, dtypes[0])
        out1 = ones_out(lib, dtypes[1], (7,))
        result = aten(lib, name)(x, dim, correction=1, keepdim=keepdim, out0=out0, out1=out1)
        return result, out0, out1

    check_both(fn, X_FLOAT * 3)


def test_moment_pair_out_errors_match():
    check_both(lambda lib, x: aten(lib, "var_mean.correction_out")(
        x, [0], correction=1, out0=empty_out(lib, "float32"), out1=empty_out(lib, "float32")), X_INT)
    check_both(lambda lib, x: aten(lib, "std_mean.correction_out")(
        x, [5], correction=1, out0=empty_out(lib, "float32"), out1=empty_out(lib, "float32")), X_FLOAT)


# ---- scans and contiguous ----

@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("x", [X_FLOAT, X_INT, X_BOOL, np.zeros((0,), np.float32), np.array(True)],
                         ids=["float", "int", "bool", "empty", "0dim"])
def test_scans_to_bool(name, x):
    check_both(lambda lib, x: getattr(lib, name)(x, 0, dtype=lib.bool), x)
    check_both(lambda lib, x: aten(lib, name + ".out")(x, 0, out=empty_out(lib, "bool")), x)
    check_both(lambda lib, x: aten(lib, name + ".out")(x, 0, out=empty_out(lib, "int16")), x)


@pytest.mark.parametrize("make", [lambda t: t, lambda t: t.t(), lambda t: t[:, 1:], lambda t: t[0]],
                         ids=["contiguous", "transposed", "sliced", "row"])
def test_contiguous_with_preserve_format(make):
    # Preserve is accepted when no copy is needed; otherwise both raise.
    def fn(lib, x):
        fmt = torch.preserve_format if lib is torch else 1
        v = make(x)
        r = aten(lib, "contiguous")(v, memory_format=fmt)
        return r, r.data_ptr() == v.data_ptr()

    check_both(fn, X_FLOAT)


# ---- factories ----

NEW_OUTS = [
    ("new_zeros.out", lambda op, x, size, out: op(x, size, out=out)),
    ("new_ones.out", lambda op, x, size, out: op(x, size, out=out)),
    ("new_full.out", lambda op, x, size, out: op(x, size, 7.5, out=out)),
    ("new_full.out", lambda op, x, size, out: op(x, size, -3, out=out)),
    ("new_full.out", lambda op, x, size, out: op(x, size, True, out=out)),
]


@pytest.mark.parametrize("out_dtype", OUT_DTYPES + ["uint8"])
@pytest.mark.parametrize("size", [[2, 3], [0], []], ids=["2x3", "empty", "0dim"])
@pytest.mark.parametrize("name,call", NEW_OUTS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(NEW_OUTS)])
def test_new_factory_out_forms(name, call, size, out_dtype):
    def fn(lib, x):
        out = ones_out(lib, out_dtype, (4,))
        return call(aten(lib, name), x, size, out), out

    check_both(fn, X_INT)


def test_new_factory_out_into_a_strided_view_and_errors():
    def fn(lib, x, base):
        out = base.t()
        return aten(lib, "new_full.out")(x, [3, 2], 4, out=out), base

    check_both(fn, X_FLOAT, np.zeros((2, 3), np.float32))
    check_both(lambda lib, x: aten(lib, "new_full.out")(x, [2], 300, out=empty_out(lib, "uint8")), X_FLOAT)
    check_both(lambda lib, x: aten(lib, "new_zeros.out")(x, [-1], out=empty_out(lib, "float32")), X_FLOAT)


@pytest.mark.parametrize("name", ["new_empty.out", "empty_strided.out"])
@pytest.mark.parametrize("out_dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("start", [(0,), (6,), (3, 2)])
def test_uninitialized_out_forms_take_the_size(name, out_dtype, start):
    # The values are uninitialized: compare shape, strides, dtype and identity only.
    def fn(lib, x):
        out = empty_out(lib, out_dtype, start)
        if name == "new_empty.out":
            r = aten(lib, name)(x, [2, 3], out=out)
        else:
            r = aten(lib, name)([2, 3], [1, 2], out=out)
        return tuple(r.shape), tuple(r.stride()), str(r.dtype).split(".")[-1], r.data_ptr() == out.data_ptr()

    check_both(fn, X_FLOAT)


@pytest.mark.parametrize("size,stride", [([2, 3], [-1, 2]), ([2, 3], [1]), ([2, -3], [1, 2]), ([2, 3], [0, 0])])
def test_empty_strided_out_checks_like_the_functional_op(size, stride):
    check_both(lambda lib: tuple(aten(lib, "empty_strided.out")(size, stride, out=empty_out(lib, "float32")).shape))


NUMBERS = [3, -7, 0, 2 ** 40, 2.5, -0.0, 1e300, float("inf"), float("nan"), True, False]


@pytest.mark.parametrize("value", NUMBERS, ids=[repr(v) for v in NUMBERS])
@pytest.mark.parametrize("dtype", [None, "float64", "int64", "uint8", "int8", "bool", "float32"])
@pytest.mark.parametrize("name", ["tensor", "as_tensor"])
def test_tensor_of_a_number(name, value, dtype):
    overload = {bool: "bool", int: "int", float: "float"}[type(value)]

    def fn(lib):
        kw = {} if dtype is None else {"dtype": dtype_of(lib, dtype)}
        return aten(lib, f"{name}.{overload}")(value, **kw)

    check_both(fn)


def test_tensor_of_a_number_options():
    check_both(lambda lib: aten(lib, "tensor.int")(3, device="cpu"))
    check_both(lambda lib: aten(lib, "as_tensor.float")(2.5, dtype=lib.float64, device="cpu"))
    # Only floating tensors can require gradients.
    check_both(lambda lib: aten(lib, "tensor.int")(3, requires_grad=True))
    check_both(lambda lib: aten(lib, "tensor.float")(3.0, dtype=lib.int32, requires_grad=True))
    check_both(lambda lib: aten(lib, "tensor.float")(3.0, requires_grad=True).detach())


# torch.ops cannot pass a generic `t[]`: the torch side runs TorchScript, whose
# annotations type the lists as kiln's Python binding types list literals.
_LIST_FUNCTIONS = torch.jit.CompilationUnit("""
def tensor_ints(x: List[int], dtype: Optional[int]):
    return torch.tensor(x, dtype=dtype)
def tensor_ints2(x: List[List[int]], dtype: Optional[int]):
    return torch.tensor(x, dtype=dtype)
def tensor_floats(x: List[float], dtype: Optional[int]):
    return torch.tensor(x, dtype=dtype)
def tensor_floats3(x: List[List[List[float]]], dtype: Optional[int]):
    return torch.tensor(x, dtype=dtype)
def tensor_bools2(x: List[List[bool]], dtype: Optional[int]):
    return torch.tensor(x, dtype=dtype)
def tensor_tensors(x: List[Tensor], dtype: Optional[int]):
    return torch.tensor(x, dtype=dtype)
def as_tensor_ints2(x: List[List[int]], dtype: Optional[int]):
    return torch.as_tensor(x, dtype=dtype)
def as_tensor_floats(x: List[float], dtype: Optional[int]):
    return torch.as_tensor(x, dtype=dtype)
""")

LISTS = [
    ("tensor_ints", [1, -2, 3]),
    ("tensor_ints", [300, -1, 2 ** 40]),
    ("tensor_ints2", [[1, 2, 3], [4, 5, 6]]),
    ("tensor_ints2", [[1, 2], [3]]),
    ("tensor_ints2", [[1], [2, 3]]),
    ("tensor_floats", [1.5, -2.25, 1e300, float("nan")]),
    ("tensor_floats", [-2.7, 300.0, 0.5]),
    ("tensor_floats3", [[[1.0, 2.0]], [[3.0, 4.0]], [[5.0, 6.0]]]),
    ("tensor_floats3", [[[1.0]], [[2.0], [3.0]]]),
    ("tensor_bools2", [[True, False], [False, True]]),
    ("as_tensor_ints2", [[7, 8], [9, 10]]),
    ("as_tensor_floats", [0.25, 4.0]),
]


@pytest.mark.parametrize("dtype", [None, "float64", "int32", "uint8", "int8", "bool"])
@pytest.mark.parametrize("fn,data", LISTS, ids=[f"{f}-{i}" for i, (f, _) in enumerate(LISTS)])
def test_tensor_of_a_list(fn, data, dtype):
    name = "as_tensor.list" if fn.startswith("as_tensor") else "tensor"

    def call(lib):
        if lib is torch:
            return getattr(_LIST_FUNCTIONS, fn)(data, None if dtype is None else getattr(torch, dtype))
        kw = {} if dtype is None else {"dtype": getattr(kiln, dtype)}
        return aten(kiln, name)(data, **kw)

    check_both(call)


def test_tensor_of_a_list_of_tensors_raises():
    check_both(lambda lib, t: (_LIST_FUNCTIONS.tensor_tensors([t], None) if lib is torch
                               else aten(kiln, "tensor")([t])), np.ones(2, np.float32))


def test_as_tensor_of_a_tensor():
    def fn(lib, x, dtype):
        r = aten(lib, "as_tensor")(x) if dtype is None else aten(lib, "as_tensor")(x, dtype=dtype_of(lib, dtype))
        # Without a conversion the result is `x` itself: writes reach it.
        r.add_(1)
        return r, x, r.data_ptr() == x.data_ptr()

    for dtype in (None, "int64", "float64", "bool"):
        check_both(fn, X_INT, dtype)
    check_both(fn, X_FLOAT.T, None)
    check_both(fn, np.array(2.5), "float32")


# ---- size queries and Tensor lists ----

@pytest.mark.parametrize("shape", [(3,), (0, 2), (4, 1, 2), ()])
def test_len_of_a_tensor(shape):
    check_both(lambda lib, x: aten(lib, "len.Tensor")(x), np.zeros(shape, np.float32))
    check_both(lambda lib, x: aten(lib, "len.Tensor")(x.t() if x.dim() == 2 else x), np.zeros(shape, np.float32))


def _tensors(*values):
    return [np.array(v) for v in values]


TENSOR_LIST_PAIRS = [
    (_tensors(1, 2.0), _tensors(1.0, 2)),  # equal across dtypes
    (_tensors(1, 2), _tensors(1, 3)),
    ([], []),
    (_tensors(1), []),
    (_tensors(2, [1.0, 2.0]), _tensors(1, [1.0, 2.0])),  # decided before the ambiguous pair
    (_tensors([1.0, 2.0]), _tensors([1.0, 2.0])),  # bool() of two values raises
    (_tensors([5]), _tensors(5)),  # one element after broadcasting
    (_tensors(np.zeros(0)), _tensors(np.zeros(0))),  # no values raises
    (_tensors([1.0, 2.0]), _tensors([1.0, 2.0, 3.0])),  # shapes do not broadcast
    (_tensors(np.nan), _tensors(np.nan)),
    (_tensors(True), _tensors(1)),
]


@pytest.mark.parametrize("name", ["eq.Tensor_list", "ne.Tensor_list"])
@pytest.mark.parametrize("a,b", TENSOR_LIST_PAIRS, ids=[str(i) for i in range(len(TENSOR_LIST_PAIRS))])
def test_tensor_list_comparison(name, a, b):
    check_both(lambda lib, a, b: aten(lib, name)(a, b), a, b)


def test_tensor_list_comparison_has_no_identity_shortcut():
    # Python lists compare `x is y or x == y`; TorchScript's Tensor lists do not.
    check_both(lambda lib, t: aten(lib, "eq.Tensor_list")([t], [t]), np.array(np.nan))
    check_both(lambda lib, t: aten(lib, "ne.Tensor_list")([t], [t]), np.array(np.nan))


INDEX_CASES = [
    (_tensors(1, 2, 2), np.array(2)),
    (_tensors(1, 2), np.array(2.0)),
    (_tensors(1, 2), np.array(3)),  # not in list
    ([], np.array(3)),
    (_tensors([1, 2], 3), np.array(3)),  # the first element is ambiguous
    (_tensors(3, [1, 2]), np.array(3)),  # found before the ambiguous one
    (_tensors(np.nan), np.array(np.nan)),
]


@pytest.mark.parametrize("items,el", INDEX_CASES, ids=[str(i) for i in range(len(INDEX_CASES))])
def test_index_of_a_tensor_in_a_list(items, el):
    check_both(lambda lib, items, el: aten(lib, "index.list_Tensor")(items, el), items, el)


def test_index_of_a_missing_tensor_says_not_in_list():
    with pytest.raises(RuntimeError, match="is not in list"):
        aten(kiln, "index.list_Tensor")([kiln.tensor(1)], kiln.tensor(2))


# ---- unsafe_split out= forms ----

SPLITS = [
    ("unsafe_split.Tensor_out", lambda op, x, out: op(x, 2, 0, out=out), 3),
    ("unsafe_split.Tensor_out", lambda op, x, out: op(x, 2, 1, out=out), 1),
    ("unsafe_split.Tensor_out", lambda op, x, out: op(x, 1, -2, out=out), 5),
    ("unsafe_split_with_sizes.out", lambda op, x, out: op(x, [1, 4], 0, out=out), 2),
    ("unsafe_split_with_sizes.out", lambda op, x, out: op(x, [0, 2], 1, out=out), 2),
]


@pytest.mark.parametrize("out_dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("name,call,count", SPLITS, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(SPLITS)])
def test_unsafe_split_out_forms(name, call, count, out_dtype):
    def fn(lib, x):
        # The first out has elements (and is resized), the rest start empty.
        outs = [ones_out(lib, out_dtype, (3,))] + [empty_out(lib, out_dtype) for _ in range(count - 1)]
        result = call(aten(lib, name), x, outs)
        return result, outs

    check_both(fn, np.arange(10, dtype=np.float32).reshape(5, 2) - 4.5)


def test_unsafe_split_out_into_views_and_wrong_counts():
    def fn(lib, x, base):
        outs = [base[:2], base[2:4], base[4:]]
        aten(lib, "unsafe_split.Tensor_out")(x, 2, 0, out=outs)
        return base

    check_both(fn, np.arange(5, dtype=np.int64), np.zeros(5, np.int64))

    def wrong(lib, x, n):
        outs = [empty_out(lib, "float32") for _ in range(n)]
        return aten(lib, "unsafe_split_with_sizes.out")(x, [2, 3], 0, out=outs)

    for n in (1, 3):
        check_both(wrong, np.arange(5, dtype=np.float32), n)
    check_both(lambda lib, x: aten(lib, "unsafe_split.Tensor_out")(x, 0, 0, out=[empty_out(lib, "float32")]),
               np.arange(5, dtype=np.float32))


def test_results_alias_their_out_tensors():
    # Every out= overload returns its out tensor (the same memory), not a copy.
    x = kiln.from_numpy(X_INT.copy())
    for name, call in SCALAR_OUTS[:3] + REDUCE_OUTS[:1]:
        out = kiln.empty([0], dtype=kiln.float64)
        r = call(aten(kiln, name), x, out)
        assert r._same_tensor(out), name
    out = kiln.empty([0], dtype=kiln.int32)
    assert aten(kiln, "new_ones.out")(x, [2], out=out)._same_tensor(out)
    assert_same(out, torch.ones(2, dtype=torch.int32))


# ---- edge cases of registered overloads found by calling each one on generic inputs ----

@pytest.mark.parametrize("name", ["mT", "mT.a", "adjoint"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (4, 2, 3)])
def test_matrix_transposes_by_rank(name, shape):
    # A 0-dim tensor is its own transpose; only 1-D tensors raise.
    check_both(lambda lib, x: aten(lib, name)(x), np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))


@pytest.mark.parametrize("name,call", [
    ("copy_", lambda op, t, src: op(t, src)),
    ("copy_.Tensor", lambda op, t, src: op(t, src)),
    ("add_.Scalar", lambda op, t, src: op(t, 1)),
    ("fill_.Scalar", lambda op, t, src: op(t, 2)),
    ("mul.out", lambda op, t, src: op(src, src, out=t)),
])
def test_writes_into_empty_tensors_with_zero_strides(name, call):
    # numpy (and so from_numpy) gives empty arrays zero strides: nothing is written, nothing overlaps.
    check_both(lambda lib, t, src: call(aten(lib, name), t, src), np.zeros((0, 3), np.float32),
               np.zeros((0, 3), np.float32))


# ---- torch's out=(a, b) for operators with several outputs ----

_X = np.array([[3.0, 1.0, 2.0], [0.5, 7.0, -1.0]], np.float32)
_MULTI_OUT = {
    "sort": (lambda lib, x, outs: lib.sort(x, 1, out=outs), ("float32", "int64")),
    "max.dim": (lambda lib, x, outs: lib.max(x, 1, out=outs), ("float32", "int64")),
    "kthvalue": (lambda lib, x, outs: lib.kthvalue(x, 2, 1, out=outs), ("float32", "int64")),
    "aminmax": (lambda lib, x, outs: lib.aminmax(x, out=outs), ("float32", "float32")),
    "linalg_slogdet": (lambda lib, x, outs: lib.linalg.slogdet(x[:, :2], out=outs), ("float32", "float32")),
}


@pytest.mark.parametrize("name", sorted(_MULTI_OUT))
@pytest.mark.parametrize("container", [tuple, list])
def test_several_outputs_take_an_out_tuple(name, container):
    call, dtypes = _MULTI_OUT[name]
    results = {}
    for lib in (torch, kiln):
        outs = container(lib.empty(0, dtype=getattr(lib, d)) for d in dtypes)
        returned = call(lib, lib.from_numpy(_X.copy()), outs)
        results[lib.__name__] = ([r.numpy() for r in returned], [o.numpy() for o in outs])
    for theirs, ours in zip(results["torch"], results["kiln"]):
        for a, b in zip(theirs, ours):
            np.testing.assert_allclose(b, a, rtol=1e-6)
    returned, written = results["kiln"]
    for r, o in zip(returned, written):
        np.testing.assert_array_equal(r, o)  # what comes back is what was written


def test_an_out_tuple_of_the_wrong_length_is_refused():
    x = kiln.from_numpy(_X.copy())
    with pytest.raises(TypeError):
        kiln.sort(x, out=(kiln.empty(0),))
    with pytest.raises(TypeError):
        kiln.sort(x, out=(kiln.empty(0), kiln.empty(0, dtype=kiln.int64), kiln.empty(0)))
