"""sort, argsort, msort and the functional aten::copy, differential against
torch 1.13: values and indices must be torch's exactly, ties included (both
the stable order and the order of torch's unstable sort)."""
import numpy as np
import pytest

import kiln
import torch
from conftest import check_both

DTYPES = ["float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]


def make(rng, dtype, shape, high=5):
    """Small values, so that ties are everywhere."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "uint8":
        return rng.integers(0, high, shape).astype(dtype)
    return rng.integers(-high, high, shape).astype(dtype)


def with_specials(rng, dtype, shape):
    """Floats with NaN, +-inf, -0.0 and 0.0 among repeated numbers."""
    x = rng.integers(-3, 3, shape).astype(dtype)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=dtype)
    mask = rng.random(shape) < 0.3
    x[mask] = specials[rng.integers(0, len(specials), mask.sum())]
    return x


def check_sort(fn, *args):
    """check_both, plus values compared bit for bit (-0.0 is not 0.0 here)."""
    check_both(fn, *args)
    k, t = fn(kiln, *(kiln.from_numpy(a.copy()) for a in args)), fn(torch, *(torch.from_numpy(a.copy()) for a in args))
    for kv, tv in zip(k if isinstance(k, tuple) else (k,), t if isinstance(t, tuple) else (t,)):
        kv, tv = kv.numpy(), tv.numpy()
        if tv.dtype.kind == "f":
            assert np.array_equal(np.signbit(kv), np.signbit(tv))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_dims_and_orders(rng, dtype):
    x = make(rng, dtype, (4, 5, 37))
    for dim in (0, 1, 2, -1, -3):
        for descending in (False, True):
            check_sort(lambda lib, a: lib.sort(a, dim, descending), x)
            for stable in (False, True):
                check_sort(lambda lib, a: lib.sort(a, stable=stable, dim=dim, descending=descending), x)
                check_sort(lambda lib, a: lib.argsort(a, stable=stable, dim=dim, descending=descending), x)
            check_sort(lambda lib, a: lib.argsort(a, dim, descending), x)
    check_sort(lambda lib, a: a.sort(), x)
    check_sort(lambda lib, a: lib.msort(a), x)


@pytest.mark.parametrize("n", [1, 2, 16, 17, 100, 255, 256, 1000, 20000])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
def test_sort_lengths_with_many_ties(rng, dtype, n):
    # Lengths around the insertion-sort (16) and radix (256) thresholds.
    x = with_specials(rng, dtype, (n,)) if dtype.startswith("float") else make(rng, dtype, (n,), high=3)
    for descending in (False, True):
        for stable in (False, True):
            check_sort(lambda lib, a: lib.sort(a, stable=stable, descending=descending), x)


def test_sort_nan_inf_and_zeros(rng):
    x = np.array([1.0, np.nan, -0.0, 0.0, -np.inf, np.nan, np.inf, -0.0, 0.0, -1.0], dtype=np.float32)
    for descending in (False, True):
        for stable in (False, True):
            check_sort(lambda lib, a: lib.sort(a, stable=stable, descending=descending), x)
    for dtype in ("float32", "float64"):
        x = with_specials(rng, dtype, (6, 300))
        for dim in (0, 1):
            for descending in (False, True):
                check_sort(lambda lib, a: lib.sort(a, dim, descending), x)
                check_sort(lambda lib, a: lib.sort(a, stable=True, dim=dim, descending=descending), x)


def test_sort_integer_extremes(rng):
    for dtype in ("int64", "int32", "int16", "int8", "uint8"):
        info = np.iinfo(dtype)
        x = np.concatenate([rng.integers(info.min, info.max, 500, dtype=dtype, endpoint=True),
                            np.array([info.min, info.max, 0, info.min, info.max], dtype=dtype)])
        for descending in (False, True):
            check_sort(lambda lib, a: lib.sort(a, stable=True, descending=descending), x)
            check_sort(lambda lib, a: lib.sort(a, descending=descending), x)


def test_sort_random_floats_large(rng):
    x = rng.standard_normal((3, 50000)).astype(np.float32)
    check_sort(lambda lib, a: lib.sort(a), x)
    check_sort(lambda lib, a: lib.sort(a, stable=True, descending=True), x)
    check_sort(lambda lib, a: lib.sort(a, 0, True), x)


def test_sort_non_contiguous(rng):
    x = make(rng, "float32", (6, 40))
    check_sort(lambda lib, a: lib.sort(a.t(), 1), x)
    check_sort(lambda lib, a: lib.sort(a.t(), 0, True), x)
    check_sort(lambda lib, a: lib.sort(a[::2, 3::3], stable=True, dim=1), x)
    check_sort(lambda lib, a: lib.argsort(a[1:, 5:].t(), dim=0, descending=True), x)
    check_sort(lambda lib, a: lib.sort(a[:, :1].expand(6, 5), 1), x)
    check_sort(lambda lib, a: lib.sort(a[:1].expand(7, 40), 0, True), x)


def test_sort_empty_and_zero_dim(rng):
    for shape in ((0,), (0, 4), (3, 0)):
        x = np.zeros(shape, dtype=np.float32)
        for dim in (0, -1):
            check_sort(lambda lib, a: lib.sort(a, dim), x)
            check_sort(lambda lib, a: lib.argsort(a, dim, True), x)
        check_sort(lambda lib, a: lib.msort(a), x)
    for dtype in ("float32", "int64", "bool"):
        s = np.array(make(rng, dtype, ()))
        for dim in (0, -1):
            check_sort(lambda lib, a: lib.sort(a, dim), s)
            check_sort(lambda lib, a: lib.sort(a, stable=True, dim=dim, descending=True), s)
            check_sort(lambda lib, a: lib.argsort(a, dim), s)
        check_sort(lambda lib, a: lib.msort(a), s)


def test_sort_bad_dims_and_stable_none(rng):
    x = make(rng, "float32", (3, 4))
    for dim in (2, -3, 10):
        check_both(lambda lib, a: lib.sort(a, dim), x)
        check_both(lambda lib, a: lib.argsort(a, dim), x)
    check_both(lambda lib, a: lib.sort(a, 1), np.array(1.0, dtype=np.float32))
    check_both(lambda lib, a: lib.ops.aten.sort.stable(a, stable=None) if lib is torch else lib.sort(a, stable=None), x)


def resizable(lib, a):
    # torch cannot grow numpy-backed storage: out= tensors get their own.
    return lib.tensor(a.numpy())


def test_sort_out_forms(rng):
    x = make(rng, "float32", (3, 40))

    def sort_out(stable, dim, descending):
        def fn(lib, a, v, i):
            v, i = resizable(lib, v), resizable(lib, i)
            kw = {} if stable is None else {"stable": stable}
            if lib is torch:
                result = torch.sort(a, dim=dim, descending=descending, out=(v, i), **kw)
            else:
                result = kiln.sort(a, dim=dim, descending=descending, values=v, indices=i, **kw)
            return tuple(result), v, i
        return fn

    f32, f64 = np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float64)
    i64, i32 = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    for stable in (None, False, True):
        check_both(sort_out(stable, 1, False), x, f32, i64)
        check_both(sort_out(stable, 0, True), x, np.zeros((3, 40), dtype=np.float32), np.zeros(5, dtype=np.int64))
        check_both(sort_out(stable, 1, False), x, f64, i64)  # raises: values dtype
        check_both(sort_out(stable, 1, False), x, f32, i32)  # raises: indices dtype
        check_both(sort_out(stable, 2, False), x, f32, i64)  # raises: dim

    def argsort_out(lib, a, o):
        o = resizable(lib, o)
        op = lib.ops.aten.argsort.stable_out if lib is torch else kiln.argsort
        return op(a, stable=True, dim=0, descending=True, out=o), o

    check_both(argsort_out, x, i64)
    check_both(argsort_out, x, i32)  # any dtype: the indices are converted
    check_both(argsort_out, x, np.zeros(3, dtype=np.float32))

    def msort_out(lib, a, o):
        o = resizable(lib, o)
        return lib.msort(a, out=o), o

    check_both(msort_out, x, np.zeros(7, dtype=np.float32))
    check_both(msort_out, x, f64)  # raises


def test_copy_functional(rng):
    a = make(rng, "int32", (2, 3))
    f = rng.standard_normal((3,)).astype(np.float32) * 4

    def copy(lib, s, src, *rest):
        op = lib.ops.aten.copy if lib is torch else kiln.copy
        return op(s, src, *rest)

    check_both(copy, a, f)
    check_both(copy, a, f, True)
    check_both(lambda lib, s, src: copy(lib, s.t(), src[:2]), a, f)
    check_both(copy, f, a)  # raises: src does not broadcast to self
    check_both(copy, np.zeros((0, 3), dtype=np.float64), f)
    check_both(copy, np.array(1.5), np.array(True))
    check_both(lambda lib, s, src: (copy(lib, s, src), s), a, f)  # self is not written

    def copy_out(lib, s, src, o):
        o = resizable(lib, o)
        op = lib.ops.aten.copy.out if lib is torch else kiln.copy
        return op(s, src, out=o), o

    for out in (np.zeros(0, dtype=np.float32), np.zeros(6, dtype=np.int64), np.zeros((5, 5), dtype=np.float64)):
        check_both(copy_out, a, f, out)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_topk(rng, dtype):
    # Distinct values, so the order of ties (unspecified in torch) never matters.
    x = rng.permutation(60).reshape(5, 12).astype(dtype)
    check_both(lambda lib, t: lib.topk(t, 3), x)
    check_both(lambda lib, t: lib.topk(t, 2, 0, False), x)
    check_both(lambda lib, t: t.topk(12, dim=-1, largest=False), x)
    check_both(lambda lib, t: lib.topk(t, 0), x)
    check_both(lambda lib, t: lib.topk(t, 13), x)  # raises: k too large
    check_both(lambda lib, t: lib.topk(t, 1), np.array(2.5, dtype=dtype))


def test_topk_out(rng):
    x = rng.permutation(24).reshape(4, 6).astype("float32")

    def topk_out(lib, t):
        values, indices = lib.zeros(0), lib.zeros(0, dtype=lib.int64)
        if lib is torch:
            torch.ops.aten.topk.values(t, 2, values=values, indices=indices)
        else:
            kiln.topk(t, 2, values=values, indices=indices)
        return values, indices

    check_both(topk_out, x)
