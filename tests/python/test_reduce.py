"""Reductions, softmax and scans, differential against torch 1.13."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same, check_both

pytestmark = pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")

INF = math.inf
NAN = math.nan
ALL_DTYPES = ["float32", "float64", "int64", "int32", "int8", "uint8", "bool"]
FLOAT_DTYPES = ["float32", "float64"]


def make(rng, dtype, shape):
    """Random values of `dtype`: small integers (so sums and products stay exact), normals for floats."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "uint8":
        return rng.integers(0, 4, shape).astype(np.uint8)
    if dtype.startswith("int"):
        return rng.integers(-3, 4, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def check_view(fn, base, index, *, rtol=1e-5, atol=1e-6):
    """check_both for a non-contiguous view base[index], which check_both's copies would make contiguous."""
    kb, tb = base.copy(), base.copy()
    k, t = kiln.from_numpy(kb[index]), torch.from_numpy(tb[index])
    assert not k.is_contiguous()
    try:
        tr, te = fn(torch, t), None
    except Exception as e:  # noqa: BLE001
        tr, te = None, e
    if te is not None:
        with pytest.raises(Exception):
            fn(kiln, k)
        return
    assert_same(fn(kiln, k), tr, rtol, atol)


def resizable(lib, t):
    # torch cannot grow numpy-backed storage, so out= tensors of the wrong size get their own.
    return lib.tensor(t.numpy())


def check_out(fn, *args, **kwargs):
    """check_both for fn(lib, *inputs, out): `out` (the last argument) gets resizable storage,
    and is compared after the call too."""
    def call(lib, *call_args):
        *inputs, out = call_args
        out = resizable(lib, out)
        return fn(lib, *inputs, out), out
    check_both(call, *args, **kwargs)


DIMS = [None, 0, 1, -1, (0, 2), (-1, 0), (0, 1, 2), []]


def dim_kwargs(dim):
    return {} if dim is None else {"dim": dim}


# ---------------------------------------------------------------------------
# sum, mean, prod


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_sum_dims_and_promotion(rng, dtype):
    x = make(rng, dtype, (3, 4, 5))
    for dim in DIMS:
        for keepdim in (False, True):
            if dim is None:
                check_both(lambda lib, a: a.sum(), x)
                continue
            check_both(lambda lib, a: lib.sum(a, dim, keepdim), x)


def test_sum_dtype_argument_and_out(rng):
    f = make(rng, "float32", (4, 6)) * 3
    i = make(rng, "int32", (4, 6))
    b = make(rng, "bool", (4, 6))
    check_both(lambda lib, a: a.sum(dtype=lib.float64), f)
    check_both(lambda lib, a: a.sum(1, dtype=lib.int64), f)
    check_both(lambda lib, a: a.sum(0, True, dtype=lib.float32), i)
    check_both(lambda lib, a: a.sum(dtype=lib.int32), i)
    check_both(lambda lib, a: a.sum(dtype=lib.uint8), b)
    check_both(lambda lib, a: a.sum(dtype=lib.bool), b)
    for out_dtype in ("float32", "float64", "int64", "bool"):
        check_out(lambda lib, a, o: lib.sum(a, 1, out=o), f, np.zeros(3, dtype=out_dtype))
        check_out(lambda lib, a, o: lib.sum(a, [0, 1], True, out=o), i, np.zeros(0, dtype=out_dtype))
    # out= with dtype=: they must agree.
    check_out(lambda lib, a, o: lib.sum(a, 0, dtype=lib.float64, out=o), f, np.zeros(6, dtype=np.float32))
    check_out(lambda lib, a, o: lib.sum(a, 0, dtype=lib.float64, out=o), f, np.zeros(6, dtype=np.float64))


def test_sum_full_out_overload(rng):
    x = make(rng, "float32", (5, 7))
    sum_out = {kiln: kiln.sum, torch: torch.ops.aten.sum.out}
    check_out(lambda lib, a, o: sum_out[lib](a, out=o), x, np.zeros(4, dtype=np.float32))
    check_out(lambda lib, a, o: sum_out[lib](a, dtype=lib.float64, out=o), x, np.zeros(0, dtype=np.float64))


def test_sum_special_inputs(rng):
    check_both(lambda lib, a: a.sum(), np.array(2.5, dtype=np.float32))
    check_both(lambda lib, a: a.sum(0), np.array(2.5, dtype=np.float32))
    check_both(lambda lib, a: a.sum(-1, True), np.array(7, dtype=np.int32))
    check_both(lambda lib, a: a.sum([0, -1]), np.array(2.5, dtype=np.float32))  # the same dim twice
    check_both(lambda lib, a: a.sum(), np.zeros((0, 3), dtype=np.float32))
    check_both(lambda lib, a: a.sum(0), np.zeros((0, 3), dtype=np.int32))
    check_both(lambda lib, a: a.sum(1), np.zeros((0, 3), dtype=np.float32))
    check_both(lambda lib, a: a.sum((0, 1), True), np.zeros((2, 0), dtype=np.float64))
    check_both(lambda lib, a: a.sum(1), np.array([[1.0, NAN, 2.0], [INF, -INF, 1.0]], dtype=np.float32))
    check_both(lambda lib, a: a.sum(), np.array([200, 200], dtype=np.uint8))
    x = make(rng, "float32", (3, 4))
    for bad in (2, -3, (0, 0), (1, -1)):
        check_both(lambda lib, a: a.sum(bad), x)


def test_sum_float32_accuracy(rng):
    # Cascade/pairwise summation keeps large float32 sums close to torch's.
    big = rng.random(1 << 22).astype(np.float32)
    check_both(lambda lib, a: a.sum(), big, rtol=2e-6)
    check_both(lambda lib, a: a.mean(), big, rtol=2e-6)
    rows = rng.random((200000, 20)).astype(np.float32)
    check_both(lambda lib, a: a.sum(0), rows, rtol=2e-6)
    check_both(lambda lib, a: a.sum(1), rows, rtol=2e-6)
    check_both(lambda lib, a: a.sum(0), rng.random((1 << 20, 3)).astype(np.float32), rtol=2e-6)


def test_sum_noncontiguous(rng):
    base = make(rng, "float32", (6, 8, 10))
    for index in (np.s_[:, ::2], np.s_[::2, :, 1::3], np.s_[1:, 2:7, 3:]):
        for dim in (0, 1, 2, (0, 2), (1, 2), None):
            check_view(lambda lib, a: a.sum(**dim_kwargs(dim)), base, index)
    # Transposed (column-major) inputs go through check_both's copies unchanged.
    t = np.asfortranarray(make(rng, "float64", (5, 7, 3)))
    for dim in (0, 1, 2, (0, 1), (1, 2)):
        check_both(lambda lib, a: (a.is_contiguous(), a.sum(dim)), t)
    ints = np.asfortranarray(make(rng, "int32", (64, 33)))
    check_both(lambda lib, a: a.sum(0), ints)
    check_both(lambda lib, a: a.sum(1, True), ints)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_mean(rng, dtype):
    x = make(rng, dtype, (3, 4, 5))
    for dim in DIMS:
        for keepdim in (False, True):
            if dim is None:
                check_both(lambda lib, a: a.mean(), x)
                continue
            check_both(lambda lib, a: lib.mean(a, dim, keepdim), x)
    check_both(lambda lib, a: a.mean(1, dtype=lib.float64), x)
    check_both(lambda lib, a: a.mean(), np.zeros((0, 2), dtype=dtype))
    check_both(lambda lib, a: a.mean(0), np.zeros((0, 2), dtype=dtype))
    check_view(lambda lib, a: a.mean((0, 2)), x, np.s_[:, ::3])


def test_mean_dtype_rules_and_out(rng):
    i = make(rng, "int64", (3, 4))
    f = make(rng, "float32", (3, 4))
    check_both(lambda lib, a: a.mean(), i)  # raises: integer input
    check_both(lambda lib, a: a.mean(0), make(rng, "bool", (3, 4)))
    check_both(lambda lib, a: a.mean(dtype=lib.float64), i)
    check_both(lambda lib, a: a.mean(dtype=lib.int64), f)  # raises: integer dtype
    check_out(lambda lib, a, o: lib.mean(a, 1, out=o), f, np.zeros(3, dtype=np.float32))
    check_out(lambda lib, a, o: lib.mean(a, 1, out=o), f, np.zeros(5, dtype=np.float64))
    check_out(lambda lib, a, o: lib.mean(a, 1, out=o), f, np.zeros(3, dtype=np.int64))
    check_out(lambda lib, a, o: lib.mean(a, 1, out=o), i, np.zeros(3, dtype=np.float32))
    check_out(lambda lib, a, o: lib.mean(a, 1, dtype=lib.float64, out=o), f, np.zeros(3, dtype=np.float32))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_prod(rng, dtype):
    x = make(rng, dtype, (3, 4, 5))
    check_both(lambda lib, a: a.prod(), x)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            check_both(lambda lib, a: a.prod(dim, keepdim), x)
    check_both(lambda lib, a: a.prod(1, dtype=lib.float64), x)
    check_both(lambda lib, a: a.prod(), np.zeros((0, 3), dtype=dtype))
    check_both(lambda lib, a: a.prod(0), np.zeros((0, 3), dtype=dtype))
    check_both(lambda lib, a: a.prod(0), np.array(3, dtype=dtype))


def test_prod_out_and_views(rng):
    x = make(rng, "float32", (4, 5))
    check_out(lambda lib, a, o: lib.prod(a, 1, out=o), x, np.zeros(7, dtype=np.float32))
    check_out(lambda lib, a, o: lib.prod(a, 1, out=o), x, np.zeros(0, dtype=np.int64))
    check_out(lambda lib, a, o: lib.prod(a, 0, dtype=lib.float64, out=o), x, np.zeros(0, dtype=np.float32))
    prod_out = {kiln: kiln.prod, torch: torch.ops.aten.prod.out}
    check_out(lambda lib, a, o: prod_out[lib](a, out=o), x, np.zeros(0, dtype=np.float32))
    check_view(lambda lib, a: a.prod(0), make(rng, "float64", (6, 9)), np.s_[::2, 1::2])
    check_both(lambda lib, a: a.prod(1), np.asfortranarray(make(rng, "int32", (30, 7))))


# ---------------------------------------------------------------------------
# max, min, argmax, argmin, amax, amin


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_max_min_full_and_dim(rng, dtype):
    x = make(rng, dtype, (4, 5, 6))  # small integers: many ties
    for lib_fn in ("max", "min"):
        check_both(lambda lib, a: getattr(a, lib_fn)(), x)
        for dim in (0, 1, 2, -1):
            for keepdim in (False, True):
                check_both(lambda lib, a: getattr(lib, lib_fn)(a, dim, keepdim), x)
        check_both(lambda lib, a: getattr(lib, lib_fn)(a, dim=-2), x)


def test_max_dim_named_result(rng):
    x = make(rng, "float32", (3, 4))
    for name in ("max", "min"):
        r = getattr(kiln, name)(kiln.from_numpy(x), 1)
        t = getattr(torch, name)(torch.from_numpy(x), 1)
        assert_same(r.values, t.values)
        assert_same(r.indices, t.indices)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8"])
def test_argmax_argmin(rng, dtype):
    x = make(rng, dtype, (4, 5, 6))
    for name in ("argmax", "argmin"):
        check_both(lambda lib, a: getattr(a, name)(), x)
        check_both(lambda lib, a: getattr(lib, name)(a, None, True), x)
        for dim in (0, 1, 2, -1):
            for keepdim in (False, True):
                check_both(lambda lib, a: getattr(lib, name)(a, dim, keepdim), x)


def test_argmax_ties_and_flattening(rng):
    ties = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [0, 0, 5, 5]], dtype=np.int64)
    for name in ("argmax", "argmin"):
        check_both(lambda lib, a: getattr(a, name)(1), ties)
        check_both(lambda lib, a: getattr(a, name)(0), ties)
        check_both(lambda lib, a: getattr(a, name)(), ties)
        check_both(lambda lib, a: getattr(lib, name[3:])(a, 1), ties)
        # Without dim the index is into the row-major flattening, whatever the layout.
        check_both(lambda lib, a: getattr(a, name)(), np.asfortranarray(make(rng, "float32", (7, 9))))
        check_view(lambda lib, a: getattr(a, name)(), make(rng, "float32", (8, 10)), np.s_[1::2, ::3])
        check_view(lambda lib, a: getattr(a, name)(0), make(rng, "float32", (8, 10)), np.s_[1::2, ::3])
    # Long contiguous runs take the two-pass path; the extremum sits late, twice.
    long = np.zeros(10000, dtype=np.float32)
    long[[7000, 9000]] = 3.0
    long[[100, 8000]] = -3.0
    check_both(lambda lib, a: (a.argmax(), a.argmin(), a.max(0), a.min(0)), long)
    check_both(lambda lib, a: (a.argmax(1), a.max(1)), long.reshape(10, 1000))


def test_extremum_nan_propagation():
    x = np.array([[1.0, NAN, 3.0, NAN], [2.0, -1.0, INF, -INF], [NAN, NAN, NAN, NAN]], dtype=np.float32)
    for name in ("max", "min"):
        check_both(lambda lib, a: getattr(a, name)(), x)
        check_both(lambda lib, a: getattr(a, name)(1), x)
        check_both(lambda lib, a: getattr(a, name)(0), x)
        check_both(lambda lib, a: getattr(a, "a" + name)(1), x)
        check_both(lambda lib, a: getattr(a, "arg" + name)(1), x)
        check_both(lambda lib, a: getattr(a, "arg" + name)(), x)
    long = np.arange(5000, dtype=np.float64)
    long[[1234, 4000]] = NAN
    for name in ("max", "min", "amax", "amin", "argmax", "argmin"):
        check_both(lambda lib, a: getattr(a, name)(), long)
    check_both(lambda lib, a: (a.amax(0), a.amin(0), a.max(0)), long.reshape(50, 100))


def test_extremum_empty_and_0dim():
    empty = np.zeros((0, 3), dtype=np.float32)
    for name in ("max", "min", "amax", "amin", "argmax", "argmin"):
        check_both(lambda lib, a: getattr(a, name)(), empty)  # raises
        check_both(lambda lib, a: getattr(a, name)(0), empty)  # raises
        check_both(lambda lib, a: getattr(a, name)(1), empty)  # fine: no outputs
        check_both(lambda lib, a: getattr(a, name)(0), np.array(4.5, dtype=np.float32))
        check_both(lambda lib, a: getattr(a, name)(-1), np.array(4.5, dtype=np.float32))
        check_both(lambda lib, a: getattr(a, name)(1), np.array(4.5, dtype=np.float32))  # raises
    check_both(lambda lib, a: a.max(), np.array(4.5, dtype=np.float32))
    check_both(lambda lib, a: a.argmax(None, True), np.array(4.5, dtype=np.float32))
    check_both(lambda lib, a: a.amax((0, 1)), empty)  # raises
    check_both(lambda lib, a: a.argmax(), np.array([True, False]))  # raises: bool


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_amax_amin(rng, dtype):
    x = make(rng, dtype, (3, 4, 5))
    for name in ("amax", "amin"):
        check_both(lambda lib, a: getattr(a, name)(), x)
        for dim in (0, -1, (0, 2), [1, 0], (0, 1, 2)):
            for keepdim in (False, True):
                check_both(lambda lib, a: getattr(lib, name)(a, dim, keepdim), x)
        check_both(lambda lib, a: getattr(a, name)((1, 1)), x)  # raises


def test_extremum_out_forms(rng):
    x = make(rng, "float32", (3, 4))
    f32, f64, i64, i32 = (np.zeros(0, dtype=d) for d in ("float32", "float64", "int64", "int32"))
    for name in ("amax", "amin"):
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), x, np.zeros(5, dtype=np.float32))
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), x, f64)  # raises
    for name in ("argmax", "argmin"):
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), x, np.zeros(9, dtype=np.int64))
        check_out(lambda lib, a, o: getattr(lib, name)(a, out=o), x, i64)
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), x, i32)  # raises

    def dim_out(name):
        def fn(lib, a, v, i):
            v, i = resizable(lib, v), resizable(lib, i)
            if lib is torch:
                result = getattr(torch, name)(a, 1, True, out=(v, i))
            else:
                index_name = "max_values" if name == "max" else "min_indices"
                result = getattr(kiln, name)(a, 1, True, **{name: v, index_name: i})
            return result, v, i
        return fn

    for name in ("max", "min"):
        check_both(dim_out(name), x, f32, i64)
        check_both(dim_out(name), x, np.zeros((2, 2), dtype=np.float32), np.zeros(7, dtype=np.int64))
        check_both(dim_out(name), x, f64, i64)  # raises
        check_both(dim_out(name), x, f32, i32)  # raises


def test_binary_max_min(rng):
    a = make(rng, "float32", (3, 4))
    b = make(rng, "float32", (4,))
    i = make(rng, "int32", (3, 4))
    u = make(rng, "uint8", (3, 4))
    bo = make(rng, "bool", (3, 4))
    for name in ("max", "min"):
        check_both(lambda lib, x, y: getattr(lib, name)(x, y), a, b)
        check_both(lambda lib, x, y: getattr(x, name)(y), a, a.T.copy().T)
        check_both(lambda lib, x, y: getattr(lib, name)(x, y), i, a)
        check_both(lambda lib, x, y: getattr(lib, name)(x, y), i, u)
        check_both(lambda lib, x, y: getattr(lib, name)(x, y), bo, bo[::-1].copy())
        check_both(lambda lib, x, y: getattr(lib, name)(x, y), i, np.array(1.5, dtype=np.float32))
        check_both(lambda lib, x, y: getattr(lib, name)(x, y), a, np.zeros(3, dtype=np.float32))  # raises
        check_both(lambda lib, x, y: getattr(lib, name)(x, y),
                   np.array([1.0, NAN, NAN, 2.0], dtype=np.float32), np.array([NAN, 1.0, NAN, 3.0], dtype=np.float32))
        check_out(lambda lib, x, y, o: getattr(lib, name)(x, y, out=o), a, b, np.zeros(0, dtype=np.float64))
        check_out(lambda lib, x, y, o: getattr(lib, name)(x, y, out=o), a, b, np.zeros(0, dtype=np.int64))  # raises
        check_view(lambda lib, x: getattr(lib, name)(x, x.sum(1, True)), make(rng, "float64", (6, 6)),
                   np.s_[::2, 1::2])


# ---------------------------------------------------------------------------
# all, any


@pytest.mark.parametrize("dtype", ALL_DTYPES + ["int16"])
def test_all_any(rng, dtype):
    x = make(rng, dtype, (3, 4, 5))
    ones = np.ones((3, 4), dtype=dtype)
    for name in ("all", "any"):
        check_both(lambda lib, a: getattr(a, name)(), x)
        check_both(lambda lib, a: getattr(a, name)(), ones)
        for dim in (0, 1, -1):
            for keepdim in (False, True):
                check_both(lambda lib, a: getattr(lib, name)(a, dim, keepdim), x)
        check_both(lambda lib, a: getattr(a, name)(0), np.zeros((0, 3), dtype=dtype))
        check_both(lambda lib, a: getattr(a, name)(), np.zeros((0, 3), dtype=dtype))
        check_both(lambda lib, a: getattr(a, name)(0), np.array(1, dtype=dtype))
        check_both(lambda lib, a: getattr(a, name)(1), np.array(1, dtype=dtype))  # raises


def test_all_any_floats_out_and_views(rng):
    f = np.array([[1.0, NAN, 0.0], [2.0, -1.0, INF]], dtype=np.float32)
    for name in ("all", "any"):
        check_both(lambda lib, a: (getattr(a, name)(), getattr(a, name)(1), getattr(a, name)(0)), f)
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), f, np.zeros(0, dtype=bool))
        # A uint8 out converts the input to uint8 first: 0.5 counts as false.
        halves = np.array([[0.5, 2.0], [3.0, 1.0]], dtype=np.float32)
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), halves, np.zeros(0, dtype=np.uint8))
        check_out(lambda lib, a, o: getattr(lib, name)(a, out=o), halves, np.zeros(0, dtype=np.uint8))
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), f, np.zeros(0, dtype=np.float32))  # raises
        check_out(lambda lib, a, o: getattr(lib, name)(a, out=o), f, np.zeros(3, dtype=bool))
        check_out(lambda lib, a, o: getattr(lib, name)(a, out=o), f, np.zeros(3, dtype=np.int64))  # raises
        check_view(lambda lib, a: getattr(a, name)(1), make(rng, "int32", (6, 40)), np.s_[::2, ::3])
        big = np.ones(100000, dtype=np.float32)
        big[77777] = 0
        check_both(lambda lib, a: getattr(a, name)(), big)


# ---------------------------------------------------------------------------
# var, std


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_var_std(rng, dtype):
    x = make(rng, dtype, (3, 4, 5)) * 3 + 1
    for name in ("var", "std"):
        check_both(lambda lib, a: getattr(a, name)(), x)
        check_both(lambda lib, a: getattr(a, name)(False), x)
        for dim in (0, -1, (0, 2), [], None):
            for unbiased in (False, True):
                for keepdim in (False, True):
                    check_both(lambda lib, a: getattr(lib, name)(a, dim, unbiased, keepdim), x)
        for correction in (0, 1, 2, 7, None, -1):
            check_both(lambda lib, a: getattr(lib, name)(a, 1, correction=correction), x)
            check_both(lambda lib, a: getattr(lib, name)(a, None, correction=correction, keepdim=True), x)
        check_both(lambda lib, a: getattr(a, name)(), np.zeros(0, dtype=dtype))
        check_both(lambda lib, a: getattr(a, name)(1), np.zeros((2, 0), dtype=dtype))
        check_both(lambda lib, a: getattr(a, name)(), np.array(3.0, dtype=dtype))
        check_both(lambda lib, a: getattr(lib, name)(a, None, correction=0), np.array(3.0, dtype=dtype))
        check_both(lambda lib, a: getattr(a, name)(0), np.ones(1, dtype=dtype))
        check_both(lambda lib, a: getattr(a, name)((1, -1)), x)  # raises


def test_var_std_rules_out_and_views(rng):
    x = make(rng, "float32", (6, 8)) + 10
    for name in ("var", "std"):
        check_both(lambda lib, a: getattr(a, name)(), make(rng, "int64", (3, 4)))  # raises
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), x, np.zeros(0, dtype=np.float32))
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), x, np.zeros(2, dtype=np.float64))
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, correction=0, out=o), x, np.zeros(0, dtype=np.float32))
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), x, np.zeros(0, dtype=np.int64))  # raises
        check_view(lambda lib, a: getattr(a, name)(0), x, np.s_[::2, 1::3])
        check_both(lambda lib, a: getattr(a, name)(1), np.asfortranarray(x))
    big = (rng.standard_normal(300000) * 0.01 + 1000).astype(np.float32)  # a large mean: two passes matter
    check_both(lambda lib, a: (a.var(), a.std()), big, rtol=1e-4)


def test_var_mean_std_mean(rng):
    x = make(rng, "float64", (4, 5))
    for name in ("var_mean", "std_mean"):
        check_both(lambda lib, a: getattr(lib, name)(a), x)
        check_both(lambda lib, a: getattr(lib, name)(a, False), x)
        check_both(lambda lib, a: getattr(lib, name)(a, 1, False, True), x)
        check_both(lambda lib, a: getattr(lib, name)(a, [0], correction=0), x)
        check_both(lambda lib, a: getattr(lib, name)(a, None, correction=2, keepdim=True), x)

    def out_form(name):
        def fn(lib, a, o0, o1):
            o0, o1 = resizable(lib, o0), resizable(lib, o1)
            f = getattr(torch.ops.aten, name).correction_out if lib is torch else getattr(kiln, name)
            return f(a, [1], correction=1, out0=o0, out1=o1), o0, o1
        return fn

    for name in ("var_mean", "std_mean"):
        check_both(out_form(name), x, np.zeros(0), np.zeros(3, dtype=np.float32))


# ---------------------------------------------------------------------------
# norm


@pytest.mark.parametrize("p", [0, 1, 2, 3, 0.5, -1, -2.5, INF, -INF])
def test_norm(rng, p):
    x = make(rng, "float32", (3, 4, 5))
    x[0, 0, 0] = 0.0
    check_both(lambda lib, a: lib.norm(a, p), x, rtol=2e-5)
    for dim in ([1], [0, 2], [-1], (0, 1, 2)):
        for keepdim in (False, True):
            check_both(lambda lib, a: lib.norm(a, p, dim, keepdim), x, rtol=2e-5)
    check_both(lambda lib, a: lib.norm(a, p, [1]), np.zeros((2, 0), dtype=np.float32))
    check_both(lambda lib, a: lib.norm(a, p), np.zeros(0, dtype=np.float64))
    check_both(lambda lib, a: lib.norm(a, p), np.zeros(4, dtype=np.float64))
    check_both(lambda lib, a: lib.norm(a, p, [0]), np.array(-2.0, dtype=np.float64))
    check_view(lambda lib, a: lib.norm(a, p, [0]), make(rng, "float64", (6, 8)), np.s_[::2, 1::2])


def test_norm_variants(rng):
    x = make(rng, "float32", (4, 6))
    check_both(lambda lib, a: lib.norm(a), x)
    check_both(lambda lib, a: a.norm(2), x)
    check_both(lambda lib, a: lib.norm(a, 2, [1], False, dtype=lib.float64), x)
    check_both(lambda lib, a: lib.norm(a, 3, dtype=lib.float64), x)
    check_both(lambda lib, a: lib.norm(a, 2, [1], True, dtype=lib.float32), x.astype(np.float64))
    check_both(lambda lib, a: lib.norm(a, 2, [1], False, dtype=lib.int64), x)  # raises
    check_both(lambda lib, a: lib.norm(a, 2), make(rng, "int64", (3,)))  # raises
    check_both(lambda lib, a: lib.norm(a, 2, [1, 1]), x)  # raises
    check_both(lambda lib, a: lib.norm(a, INF), np.array([1.0, NAN, -3.0], dtype=np.float32))
    check_both(lambda lib, a: lib.norm(a, 2), np.array([1.0, INF], dtype=np.float32))
    check_out(lambda lib, a, o: lib.norm(a, 2, [1], out=o), x, np.zeros(0, dtype=np.float64))
    check_out(lambda lib, a, o: lib.norm(a, 2, [1], out=o), x, np.zeros(0, dtype=np.int64))  # raises
    check_out(lambda lib, a, o: lib.norm(a, 2, [1], False, dtype=lib.float64, out=o), x, np.zeros(0, dtype=np.float64))
    check_out(lambda lib, a, o: lib.norm(a, 1, out=o), x, np.zeros(3, dtype=np.float32))
    # torch's float32 norm accumulation drifts by ~1e-5 over a million elements (kiln's is exact to ~1e-7).
    check_both(lambda lib, a: lib.norm(a, 2), rng.random(1 << 20).astype(np.float32), rtol=2e-5)


# ---------------------------------------------------------------------------
# logsumexp, softmax, log_softmax


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_logsumexp(rng, dtype):
    x = make(rng, dtype, (3, 4, 5)) * 10
    for dim in (0, 1, -1, (0, 2), [2, 0, 1]):
        for keepdim in (False, True):
            check_both(lambda lib, a: lib.logsumexp(a, dim, keepdim), x)
    check_both(lambda lib, a: lib.logsumexp(a, [], True), x)
    check_both(lambda lib, a: lib.logsumexp(a, []), x)  # raises in 1.13
    check_both(lambda lib, a: lib.logsumexp(a, []), np.array(2.0, dtype=dtype))
    check_both(lambda lib, a: lib.logsumexp(a, 0), np.array(2.0, dtype=dtype))
    check_both(lambda lib, a: lib.logsumexp(a, 1), np.zeros((2, 0), dtype=dtype))
    check_both(lambda lib, a: lib.logsumexp(a, 0), np.zeros((2, 0), dtype=dtype))
    check_both(lambda lib, a: lib.logsumexp(a, (1, 1)), x)  # raises
    special = np.array([[INF, 1.0], [-INF, -INF], [NAN, 1.0], [1000.0, 1000.0], [-1000.0, -999.0]], dtype=dtype)
    check_both(lambda lib, a: lib.logsumexp(a, 1), special)
    check_view(lambda lib, a: lib.logsumexp(a, 0), x, np.s_[:, ::2, 1::2])


def test_logsumexp_integers_and_out(rng):
    check_both(lambda lib, a: lib.logsumexp(a, 1), make(rng, "int64", (3, 4)))
    check_both(lambda lib, a: lib.logsumexp(a, 0), make(rng, "bool", (3, 4)))
    x = make(rng, "float32", (3, 4))
    check_out(lambda lib, a, o: lib.logsumexp(a, 1, out=o), x, np.zeros(0, dtype=np.float64))
    check_out(lambda lib, a, o: lib.logsumexp(a, 1, out=o), x, np.zeros(0, dtype=np.int64))  # raises


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax(rng, name, dtype):
    x = make(rng, dtype, (3, 4, 37)) * 5
    for dim in (0, 1, 2, -1, -3):
        check_both(lambda lib, a: getattr(a, name)(dim), x)
    check_both(lambda lib, a: getattr(a, name)(3), x)  # raises
    check_both(lambda lib, a: getattr(a, name)(0), np.array(1.5, dtype=dtype))
    check_both(lambda lib, a: getattr(a, name)(-1), np.array(1.5, dtype=dtype))
    check_both(lambda lib, a: getattr(a, name)(1), np.zeros((0, 3), dtype=dtype))
    check_both(lambda lib, a: getattr(a, name)(0), np.zeros((0, 3), dtype=dtype))
    special = np.array([[INF, 1.0, 0.0], [-INF, -INF, -INF], [-INF, 1.0, 2.0], [NAN, 1.0, 2.0],
                        [1000.0, 999.0, -1000.0], [88.0, 89.0, 90.0]], dtype=dtype)
    check_both(lambda lib, a: getattr(a, name)(1), special)
    check_both(lambda lib, a: getattr(a, name)(0), special.T.copy())
    check_view(lambda lib, a: getattr(a, name)(1), x, np.s_[:, ::2, 1::3])
    check_view(lambda lib, a: getattr(a, name)(0), x, np.s_[:, ::2, 1::3])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_line_lengths_around_vector_widths(rng, dtype):
    """Lines that fill whole vectors, end in a partial one, or are only a partial one, at either width
    (8 or 16 floats, 4 or 8 doubles); along the last dim and along an inner one."""
    for n in (1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 129):
        x = make(rng, dtype, (3, n)) * 10
        check_both(lambda lib, a: (a.softmax(1), a.log_softmax(1), lib.logsumexp(a, 1), a.sum(1), a.mean(1)), x)
        check_both(lambda lib, a: (a.softmax(0), a.log_softmax(0), lib.logsumexp(a, 0)), x)


def test_vector_width_env_var():
    """The eager kernels run at AVX-512 width where the CPU has it, unless KILN_DISABLE_AVX512=1."""
    def isa(**extra):
        env = {k: v for k, v in os.environ.items() if k != "KILN_DISABLE_AVX512"}
        env.update(extra)
        code = "import kiln; print(kiln._C._vec_isa())"
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True).stdout.strip()

    with open("/proc/cpuinfo") as f:
        flags = set(f.read().split())
    has_avx512 = {"avx512f", "avx512dq", "avx512bw", "avx512vl", "avx512cd"} <= flags
    assert isa() == ("avx512" if has_avx512 else "avx2")
    assert isa(KILN_DISABLE_AVX512="1") == "avx2"
    assert isa(KILN_DISABLE_AVX512="0") == isa()


def test_softmax_dtypes_and_out(rng):
    f = make(rng, "float32", (5, 19))
    i = make(rng, "int64", (5, 19))
    for name in ("softmax", "log_softmax"):
        check_both(lambda lib, a: getattr(a, name)(1), i)  # raises
        check_both(lambda lib, a: getattr(a, name)(1), make(rng, "bool", (2, 3)))  # raises
        check_both(lambda lib, a: getattr(a, name)(1, dtype=lib.float64), i)
        check_both(lambda lib, a: getattr(a, name)(0, lib.float64), f)
        check_both(lambda lib, a: getattr(a, name)(0, dtype=lib.float32), f.astype(np.float64))

        def out_form(lib, a, o, dtype=None):
            if lib is torch:
                return getattr(torch.ops.aten, name).int_out(a, 1, dtype, out=o)
            return getattr(kiln, name)(a, 1, dtype, out=o)

        check_out(out_form, f, np.zeros(0, dtype=np.float32))
        check_out(out_form, f, np.zeros(3, dtype=np.float64))  # raises: out dtype
        check_out(lambda lib, a, o: out_form(lib, a, o, lib.float64), f, np.zeros(0, dtype=np.float64))
        check_out(lambda lib, a, o: out_form(lib, a, o, lib.float64), f, np.zeros(0, dtype=np.float32))  # raises

        private = "_" + name

        def private_form(lib, a, half_to_float=False):
            return (getattr(torch, private) if lib is torch else kiln._functions.op(private))(a, 1, half_to_float)

        check_both(private_form, f)
        check_both(lambda lib, a: private_form(lib, a, True), f)  # raises on CPU
        check_both(private_form, i)  # raises

        def private_out(lib, a, o):
            if lib is torch:
                return getattr(torch.ops.aten, private).out(a, 1, False, out=o)
            return kiln._functions.op(private)(a, 1, False, out=o)

        check_out(private_out, f, np.zeros(0, dtype=np.float32))
        check_out(private_out, f, np.zeros(0, dtype=np.float64))  # raises


def test_softmax_large_rows(rng):
    x = (rng.standard_normal((64, 1000)) * 4).astype(np.float32)
    check_both(lambda lib, a: (a.softmax(1), a.log_softmax(1), lib.logsumexp(a, [1])), x)
    check_both(lambda lib, a: (a.softmax(0), a.log_softmax(0)), x)


# ---------------------------------------------------------------------------
# cumsum, cumprod


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cumsum_cumprod(rng, name, dtype):
    x = make(rng, dtype, (3, 4, 5))
    for dim in (0, 1, 2, -1, -3):
        check_both(lambda lib, a: getattr(a, name)(dim), x)
    check_both(lambda lib, a: getattr(a, name)(3), x)  # raises
    check_both(lambda lib, a: getattr(a, name)(0), np.array(3, dtype=dtype))
    check_both(lambda lib, a: getattr(a, name)(1), np.array(3, dtype=dtype))  # raises
    check_both(lambda lib, a: getattr(a, name)(1), np.zeros((0, 3), dtype=dtype))
    check_both(lambda lib, a: getattr(a, name)(1, dtype=lib.float64), x)
    check_both(lambda lib, a: getattr(a, name)(0, dtype=lib.int32), x)


def test_cumsum_cumprod_out_views_and_specials(rng):
    f = make(rng, "float32", (4, 300))
    for name in ("cumsum", "cumprod"):
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), f, np.zeros(0, dtype=np.float32))
        check_out(lambda lib, a, o: getattr(lib, name)(a, 1, out=o), f, np.zeros(7, dtype=np.float64))
        check_out(lambda lib, a, o: getattr(lib, name)(a, 0, out=o), f * 3, np.zeros(0, dtype=np.int64))
        check_out(lambda lib, a, o: getattr(lib, name)(a, 0, dtype=lib.float64, out=o), f,
                   np.zeros(0, dtype=np.float32))  # raises
        check_view(lambda lib, a: getattr(a, name)(0), f, np.s_[::2, 1::3])
        check_view(lambda lib, a: getattr(a, name)(1), f, np.s_[::2, 1::3])
        check_both(lambda lib, a: getattr(a, name)(0), np.asfortranarray(f))
        check_both(lambda lib, a: getattr(a, name)(0), np.array([1.0, NAN, 2.0, INF], dtype=np.float32))
    check_both(lambda lib, a: a.cumsum(0), np.array([200, 100], dtype=np.uint8))
    check_both(lambda lib, a: a.cumsum(0), rng.random(100000).astype(np.float32), rtol=2e-6)


# ---------------------------------------------------------------------------
# Threads: the parallel paths (outputs split, rows split and merged) agree too.


def test_parallel_reductions(rng):
    kiln.set_num_threads(2)
    try:
        x = rng.random(1 << 20).astype(np.float32)
        m = rng.standard_normal((512, 700)).astype(np.float32)
        check_both(lambda lib, a: (a.sum(), a.amax(), a.argmin(), a.all(), a.prod()), x, rtol=2e-6)
        check_both(lambda lib, a: a.norm(), x, rtol=2e-5)
        check_both(lambda lib, a: (a.sum(0), a.sum(1), a.max(0), a.max(1), a.var(1), a.softmax(0), a.softmax(1),
                                   a.cumsum(0), a.cumsum(1), lib.logsumexp(a, [0])), m, atol=5e-5)
        check_both(lambda lib, a: (a.sum(0), a.argmax(0)), rng.standard_normal((200000, 2)).astype(np.float32),
                   rtol=2e-6)
    finally:
        kiln.set_num_threads(1)
