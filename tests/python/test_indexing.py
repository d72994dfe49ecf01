"""Gather/scatter, masks, advanced indexing and Python t[...] / t[...] = v,
differential against torch 1.13."""
import numpy as np
import pytest
import torch

import kiln
from conftest import check_both


def aten(lib, name):
    """The op as torch.ops.aten has it (for forms torch's Python API lacks), or kiln's function."""
    return getattr(torch.ops.aten, name) if lib is torch else getattr(kiln, name)


def with_out(call):
    """call(lib, out, *args) on a resizable copy of the out array; returns (result, out)."""
    def fn(lib, o, *args):
        out = o.clone()
        return call(lib, out, *args), out
    return fn


def T(lib, data, dtype=None):
    """A tensor of `lib` from Python data (numpy decides the dtype unless given)."""
    array = np.array(data, dtype=dtype)
    return kiln.from_numpy(array) if lib is kiln else torch.from_numpy(array)


@pytest.fixture
def x(rng):
    return rng.standard_normal((3, 4, 5)).astype(np.float32)


# ---- index_select / gather / take ----

def test_index_select(rng, x):
    idx = np.array([2, 0, 2])
    for dim in [0, 1, -1]:
        check_both(lambda lib, a, i: a.index_select(dim, i), x, idx)
        check_both(lambda lib, a, i: a.transpose(0, 2).index_select(dim, i), x, idx)
        check_both(lambda lib, a, i: lib.index_select(a, dim, i), x, idx.astype(np.int32))
    check_both(lambda lib, a, i: a.index_select(1, i), x, np.array(3))
    check_both(lambda lib, a, i: a.index_select(1, i), x, np.zeros(0, np.int64))
    check_both(lambda lib, a, i: a.index_select(1, i), rng.integers(0, 2, (2, 3)).astype(bool), idx)
    check_both(lambda lib, a, i: a.index_select(0, i), np.array(5.0), np.array([0, 0]))
    check_both(lambda lib, a, i: a.index_select(0, i), np.array(5.0), np.array(0))
    # errors: out of range (both signs), 2-D index, float index, bad dim
    for bad in [np.array([4]), np.array([-1]), np.array([[0, 1]]), np.array([1.0])]:
        check_both(lambda lib, a, i: a.index_select(0, i), x, bad)
    check_both(lambda lib, a, i: a.index_select(3, i), x, idx)
    check_both(with_out(lambda lib, o, a, i: lib.index_select(a, 1, i, out=o)), np.zeros(2, np.float32), x, idx)
    check_both(with_out(lambda lib, o, a, i: lib.index_select(a, 1, i, out=o)), np.zeros(2), x, idx)


def test_gather(rng, x):
    idx = rng.integers(0, 3, (3, 2, 5))
    check_both(lambda lib, a, i: a.gather(0, i), x, rng.integers(0, 3, (2, 4, 5)))
    check_both(lambda lib, a, i: a.gather(1, i), x, rng.integers(0, 4, (3, 6, 2)))
    check_both(lambda lib, a, i: a.gather(-1, i), x, rng.integers(0, 5, (2, 3, 7)))
    check_both(lambda lib, a, i: a.transpose(0, 2).gather(1, i), x, rng.integers(0, 4, (5, 4, 3)))
    check_both(lambda lib, a, i: a.gather(2, i.transpose(0, 1)), x, rng.integers(0, 5, (2, 3, 5)))
    check_both(lambda lib, a, i: a.gather(1, i), x, idx)
    check_both(lambda lib, a, i: a.gather(1, i), x, np.zeros((0,), np.int64))
    check_both(lambda lib, a, i: a.gather(0, i), np.array(5.0), np.array(0))
    check_both(lambda lib, a, i: a.gather(0, i), np.array(5.0), np.array([0, 0]))
    check_both(lambda lib, a, i: a.gather(0, i), np.arange(4), np.array(3))
    # errors: out of range, negative, int32, rank, too large a dim elsewhere
    check_both(lambda lib, a, i: a.gather(1, i), x, np.full((3, 1, 5), 4))
    check_both(lambda lib, a, i: a.gather(1, i), x, np.full((3, 1, 5), -1))
    check_both(lambda lib, a, i: a.gather(1, i), x, idx.astype(np.int32))
    check_both(lambda lib, a, i: a.gather(1, i), x, idx[0])
    check_both(lambda lib, a, i: a.gather(1, i), x, rng.integers(0, 3, (4, 2, 5)))
    check_both(with_out(lambda lib, o, a, i: lib.gather(a, 1, i, out=o)), np.zeros(0, np.float32), x, idx)
    check_both(with_out(lambda lib, o, a, i: lib.gather(a, 1, i, out=o)), np.zeros(0), x, idx)


def test_take(x):
    check_both(lambda lib, a, i: a.take(i), x, np.array([[0, 59], [-1, 7]]))
    check_both(lambda lib, a, i: a.transpose(0, 1).take(i), x, np.array([0, 5, 17]))
    check_both(lambda lib, a, i: a.take(i), x, np.array([60]))
    check_both(lambda lib, a, i: a.take(i), x, np.array([1], np.int32))
    check_both(lambda lib, a, i: a.take(i), np.array(2.0), np.array([0, 0]))


# ---- scatter family ----

def permutation_index(rng, shape, dim, size):
    """An index for scatter along `dim` with no repeated target (deterministic results)."""
    idx = np.empty(shape, np.int64)
    for pos in np.ndindex(*[s for d, s in enumerate(shape) if d != dim]):
        perm = rng.permutation(size)[:shape[dim]]
        sl = list(pos)
        sl.insert(dim, slice(None))
        idx[tuple(sl)] = perm
    return idx


def test_scatter(rng, x):
    src = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for dim, shape in [(0, (2, 4, 5)), (1, (3, 3, 2)), (-1, (2, 2, 4))]:
        idx = permutation_index(rng, shape, dim % 3, x.shape[dim])
        check_both(lambda lib, a, i, s: a.scatter(dim, i, s), x, idx, src)
        check_both(lambda lib, a, i, s: a.scatter(dim, i, 2.5), x, idx, src)
        check_both(lambda lib, a, i, s: a.scatter_(dim, i, s), x, idx, src)
        check_both(lambda lib, a, i, s: a.transpose(0, 1).scatter_(dim, i.transpose(0, 1), s.transpose(0, 1)),
                   x, idx, src)
        check_both(lambda lib, a, i, s: a.scatter(dim, i, s, reduce="add"), x, idx, src)
        check_both(lambda lib, a, i, s: a.scatter(dim, i, s, reduce="multiply"), x, idx, src)
        check_both(lambda lib, a, i, s: a.scatter_(dim, i, 3.0, reduce="multiply"), x, idx, src)
    ints = rng.integers(-9, 9, (3, 4))
    idx = permutation_index(rng, (3, 2), 1, 4)
    check_both(lambda lib, a, i: a.scatter(1, i, 5.7), ints, idx)
    check_both(lambda lib, a, i: a.scatter(1, i, True), ints, idx)
    check_both(lambda lib, a, i: a.scatter(0, i, 1.0), np.array(0.0), np.array(0))
    check_both(lambda lib, a, i, s: a.scatter(1, i, s), x, np.zeros(0, np.int64), src)


def test_scatter_errors(rng, x):
    src = rng.standard_normal((3, 4, 5)).astype(np.float32)
    idx = permutation_index(rng, (3, 2, 5), 1, 4)
    check_both(lambda lib, a, i, s: a.scatter(1, i, s), x, idx, src.astype(np.float64))  # dtype
    check_both(lambda lib, a, i, s: a.scatter(1, i, s), x, idx.astype(np.int32), src)
    check_both(lambda lib, a, i, s: a.scatter(1, i, s), x, np.full((3, 2, 5), 4), src)  # out of range
    check_both(lambda lib, a, i, s: a.scatter(1, i, s), x, np.full((3, 2, 5), -1), src)
    check_both(lambda lib, a, i, s: a.scatter(1, i, s[:, :1]), x, idx, src)  # src too small
    check_both(lambda lib, a, i, s: a.scatter(1, i, s), x, idx[0], src)  # rank
    check_both(lambda lib, a, i, s: a.scatter(1, i, s, reduce="sum"), x, idx, src)
    check_both(lambda lib, a, i, s: a.expand(2, 3, 4, 5).scatter_(1, i, s), x, idx[None], src[None])


def test_scatter_add_and_out_forms(rng, x):
    src = rng.standard_normal((3, 4, 5)).astype(np.float32)
    idx = rng.integers(0, 4, (3, 6, 5))  # repeated targets accumulate
    big_src = rng.standard_normal((3, 6, 5)).astype(np.float32)
    check_both(lambda lib, a, i, s: a.scatter_add(1, i, s), x, idx, big_src)
    check_both(lambda lib, a, i, s: a.scatter_add_(1, i, s), x, idx, big_src)
    check_both(lambda lib, a, i, s: a.scatter(1, i, s, reduce="add"), x, idx, big_src)
    ints = rng.integers(-5, 5, (4, 3))
    check_both(lambda lib, a, i, s: a.scatter_add(0, i, s), ints, rng.integers(0, 4, (5, 3)),
               rng.integers(-5, 5, (5, 3)))
    check_both(lambda lib, a, i, s: a.scatter_add(0, i, s), np.zeros(0, np.float32), np.array([0]),
               np.ones(1, np.float32))
    idx = permutation_index(rng, (3, 2, 5), 1, 4)
    for name, extra in [("scatter", ()), ("scatter_add", ())]:
        check_both(with_out(lambda lib, o, a, i, s: aten(lib, name)(a, 1, i, s, *extra, out=o)),
                   np.zeros(0, np.float32), x, idx, src)
        check_both(with_out(lambda lib, o, a, i, s: aten(lib, name)(a, 1, i, s, *extra, out=o)),
                   np.zeros(0), x, idx, src)
    check_both(with_out(lambda lib, o, a, i: aten(lib, "scatter")(a, 1, i, 2.0, out=o)), np.zeros(0, np.float32),
               x, idx)
    check_both(with_out(lambda lib, o, a, i, s: aten(lib, "scatter")(a, 1, i, s, reduce="add", out=o)),
               np.zeros(0, np.float32), x, idx, src)


def test_index_add_and_fill(rng, x):
    src = rng.standard_normal((3, 6, 5)).astype(np.float32)
    idx = np.array([0, 3, 3, 1, 0, 2])
    check_both(lambda lib, a, i, s: a.index_add(1, i, s), x, idx, src)
    check_both(lambda lib, a, i, s: a.index_add(1, i, s, alpha=-2), x, idx, src)
    check_both(lambda lib, a, i, s: a.transpose(0, 2).index_add_(1, i, s.transpose(0, 2)), x, idx, src)
    check_both(lambda lib, a, i, s: a.index_add(1, i, s), x, idx.astype(np.int32), src)
    check_both(lambda lib, a, i, s: a.index_add(0, i, s), np.array(3), np.array([0]), np.array(7))
    check_both(lambda lib, a, i, s: a.index_add(1, i, s), x, np.array([0, 4, 1, 1, 1, 1]), src)  # out of range
    check_both(lambda lib, a, i, s: a.index_add(1, i, s), x, idx[:5], src)  # count mismatch
    check_both(lambda lib, a, i, s: a.index_add(1, i, s), x, idx, src.astype(np.float64))
    check_both(lambda lib, a, i, s: a.index_add(1, i, s), x, idx, src[:2])
    check_both(with_out(lambda lib, o, a, i, s: aten(lib, "index_add")(a, 1, i, s, out=o)), np.zeros(0, np.float32),
               x, idx, src)
    fill_idx = np.array([0, -1, 2])
    check_both(lambda lib, a, i: a.index_fill(2, i, 7.5), x, fill_idx)
    check_both(lambda lib, a, i: a.index_fill_(-1, i, -1), x, fill_idx)
    check_both(lambda lib, a, i: a.transpose(0, 2).index_fill_(0, i, 2), x, fill_idx)
    check_both(lambda lib, a, i, v: a.index_fill(2, i, v), x, fill_idx, np.array(3.0))
    check_both(lambda lib, a, i, v: a.index_fill(2, i, v), x, fill_idx, np.array([3.0]))
    check_both(lambda lib, a, i: a.index_fill(2, i, 7.5), x, np.array([5]))
    check_both(lambda lib, a, i: a.index_fill(2, i, 7.5), x, fill_idx.astype(np.int32))
    check_both(lambda lib, a, i: a.index_fill(0, i, 7.5), np.array(1.0), np.array([0]))
    check_both(with_out(lambda lib, o, a, i: aten(lib, "index_fill")(a, 2, i, 1, out=o)), np.zeros(0, np.int64),
               x, fill_idx)


# ---- masks ----

def test_masked_fill(rng, x):
    mask = rng.integers(0, 2, (3, 4, 5)).astype(bool)
    row = rng.integers(0, 2, (4, 1)).astype(bool)
    ints = rng.integers(-9, 9, (3, 4, 5))
    check_both(lambda lib, a, m: a.masked_fill(m, -1.5), x, mask)
    check_both(lambda lib, a, m: a.masked_fill(m, 2), x, row)
    check_both(lambda lib, a, m: a.masked_fill(m, 2.7), ints, mask)
    check_both(lambda lib, a, m: a.masked_fill(m, True), mask, mask)
    check_both(lambda lib, a, m, v: a.masked_fill(m, v), x, mask, np.array(4.0))
    check_both(lambda lib, a, m, v: a.masked_fill(m, v), ints, mask, np.array(4.5))
    check_both(lambda lib, a, m, v: a.masked_fill(m, v), x, mask, np.array([4.0]))  # value must be 0-dim
    check_both(lambda lib, a, m: a.masked_fill_(m, 0), x, row)
    check_both(lambda lib, a, m: a.transpose(0, 2).masked_fill_(m.transpose(0, 2), 0), x, mask)
    check_both(lambda lib, a, m: a[:, 1:3].masked_fill_(m[:, 1:3], 9), x, mask)
    check_both(lambda lib, a, m, v: a.masked_fill_(m, v), x, mask, np.array(1, np.int64))
    check_both(lambda lib, a, m: a.masked_fill(m, 0), x[0, 0], np.array([[True], [False]]))  # broadcasts self
    check_both(lambda lib, a, m: a.masked_fill_(m, 0), x[0, 0], np.array([[True], [False]]))  # can't
    check_both(lambda lib, a, m: a.masked_fill(m, 1), x, mask.astype(np.uint8))
    check_both(lambda lib, a, m: a.masked_fill(m, 1), x, mask.astype(np.uint8) * 2)
    check_both(lambda lib, a, m: a.masked_fill(m, 1), x, mask.astype(np.int64) * 2)
    check_both(lambda lib, a, m: a.masked_fill(m, 1), np.array(2.0), np.array(True))
    check_both(with_out(lambda lib, o, a, m: aten(lib, "masked_fill")(a, m, 1, out=o)), np.zeros(0, np.int32),
               x, mask)


def test_masked_select_and_nonzero(rng, x):
    mask = rng.integers(0, 2, (3, 4, 5)).astype(bool)
    check_both(lambda lib, a, m: a.masked_select(m), x, mask)
    check_both(lambda lib, a, m: a.transpose(0, 1).masked_select(m.transpose(0, 1)), x, mask)
    check_both(lambda lib, a, m: a.masked_select(m), x, mask[0, :, :1])
    check_both(lambda lib, a, m: a.masked_select(m), x[0, 0], mask)  # self broadcasts too
    check_both(lambda lib, a, m: a.masked_select(m), np.array(2.0), np.array(True))
    check_both(lambda lib, a, m: a.masked_select(m), x, mask.astype(np.uint8))
    check_both(lambda lib, a, m: a.masked_select(m), x, mask.astype(np.int32))
    check_both(with_out(lambda lib, o, a, m: lib.masked_select(a, m, out=o)), np.zeros(0, np.float32), x, mask)
    ints = rng.integers(-2, 3, (4, 5)).astype(np.int16)
    floats = np.array([[0.0, -0.0, np.nan], [1e-30, 0.0, -2.0]], np.float32)
    for a in [ints, floats, mask, ints.astype(np.uint8), np.array(3.0), np.array(0), np.zeros((2, 0, 3))]:
        check_both(lambda lib, t: t.nonzero(), a)
    check_both(lambda lib, t: t.transpose(0, 1).nonzero(), ints)
    check_both(with_out(lambda lib, o, t: lib.nonzero(t, out=o)), np.zeros(0, np.int64), ints)
    check_both(with_out(lambda lib, o, t: lib.nonzero(t, out=o)), np.zeros(0, np.float32), ints)


# ---- aten::index / index_put ----

INDEX_CASES = {
    "first": lambda lib: [T(lib, [2, 0, -1])],
    "middle": lambda lib: [None, T(lib, [[1, 3], [0, 0]])],
    "last": lambda lib: [None, None, T(lib, [4, -5])],
    "adjacent_pair": lambda lib: [None, T(lib, [0, 3]), T(lib, [[1], [4]])],
    "split_pair": lambda lib: [T(lib, [0, 2]), None, T(lib, [1, 4])],
    "all_three": lambda lib: [T(lib, [0, 2]), T(lib, [1, 1]), T(lib, [4, 0])],
    "mask_full": lambda lib: [T(lib, np.arange(60).reshape(3, 4, 5) % 3 == 0)],
    "mask_prefix": lambda lib: [T(lib, [[True, False, True, False]] * 3)],
    "mask_middle": lambda lib: [None, T(lib, [True, False, False, True])],
    "mask_uint8": lambda lib: [T(lib, [1, 0, 1], np.uint8)],
    "mask_transposed": lambda lib: [T(lib, np.arange(12).reshape(4, 3) % 5 < 2).t()],
    "mask_none_set": lambda lib: [None, T(lib, [False] * 4)],
    "mask_and_int": lambda lib: [T(lib, [True, False, True]), None, T(lib, [1, 2])],
    "empty_index": lambda lib: [None, T(lib, [], np.int64)],
    "zero_dim_index": lambda lib: [T(lib, 1)],
    # errors
    "out_of_range": lambda lib: [None, T(lib, [4])],
    "negative_out_of_range": lambda lib: [T(lib, [-4])],
    "broadcast_mismatch": lambda lib: [T(lib, [0, 1]), T(lib, [0, 1, 2])],
    "too_many": lambda lib: [T(lib, [0])] * 4,
    "int32": lambda lib: [T(lib, [0, 1], np.int32)],
    "float": lambda lib: [T(lib, [0.0])],
    "mask_shape": lambda lib: [T(lib, [True, False])],
}


@pytest.mark.parametrize("name", list(INDEX_CASES))
def test_aten_index(x, name):
    case = INDEX_CASES[name]
    check_both(lambda lib, a: aten(lib, "index")(a, case(lib)), x)
    check_both(lambda lib, a: aten(lib, "index")(a.transpose(0, 2).transpose(1, 2), case(lib)), x.transpose(1, 2, 0).copy())
    values = np.float32(7.5)
    check_both(lambda lib, a: aten(lib, "index_put_")(a, case(lib), T(lib, values)), x)
    check_both(lambda lib, a: aten(lib, "index_put")(a.transpose(1, 2).transpose(0, 1), case(lib), T(lib, values)),
               x.transpose(0, 2, 1).copy())


def test_index_put_values_and_accumulate(rng, x):
    idx = np.array([0, 2, 0])
    check_both(lambda lib, a, i, v: a.index_put_((i,), v), x, idx[:2], rng.standard_normal((2, 4, 5)).astype(np.float32))
    check_both(lambda lib, a, i, v: a.index_put_((i,), v), x, idx[:2], rng.standard_normal((4, 1)).astype(np.float32))
    check_both(lambda lib, a, i, v: a.index_put_((i,), v, accumulate=True), x, idx,
               rng.standard_normal(5).astype(np.float32))
    check_both(lambda lib, a, i, v: aten(lib, "index_put")(a, [None, i], v, True), x, idx,
               rng.standard_normal(5).astype(np.float32))
    ints = rng.integers(-5, 5, (6,))
    check_both(lambda lib, a, i, v: a.index_put_((i,), v, True), ints, rng.integers(0, 6, 20), rng.integers(0, 5, 20))
    check_both(lambda lib, a, i, v: a.index_put_((i,), v, True), np.zeros(3, bool), np.array([0, 0, 1]), np.array(True))
    # errors: dtype mismatch, values too large, values overlapping self
    check_both(lambda lib, a, i, v: a.index_put_((i,), v), x, idx, np.ones(5))
    check_both(lambda lib, a, i, v: a.index_put_((i,), v), x, idx, np.ones((2, 4, 5), np.float32))
    check_both(lambda lib, a, i: a.index_put_((i,), a[0]), x, idx)
    check_both(with_out(lambda lib, o, a, i, v: aten(lib, "index_put")(a, [i], v, out=o)), np.zeros(0, np.int64),
               x, idx, np.array(2.0, np.float32))
    check_both(with_out(lambda lib, o, a, i: aten(lib, "index")(a, [i], out=o)), np.zeros(0, np.float32), x, idx)


# ---- Python indexing ----

GETITEM_CASES = {
    "int": lambda lib: 1,
    "neg_int": lambda lib: -3,
    "int_oob": lambda lib: 3,
    "neg_int_oob": lambda lib: -4,
    "numpy_int": lambda lib: np.int64(2),
    "tuple_ints": lambda lib: (1, -1, 4),
    "too_many": lambda lib: (0, 0, 0, 0),
    "slice": lambda lib: slice(1, None),
    "slice_step": lambda lib: (slice(None), slice(None, None, 2)),
    "slice_clamp": lambda lib: (slice(-100, 100), slice(2, 1)),
    "slice_neg_step": lambda lib: slice(None, None, -1),
    "slice_zero_step": lambda lib: slice(None, None, 0),
    "full_slice": lambda lib: slice(None),
    "none": lambda lib: None,
    "none_mid": lambda lib: (0, None, slice(None), None),
    "ellipsis": lambda lib: ...,
    "ellipsis_int": lambda lib: (..., 2),
    "int_ellipsis": lambda lib: (1, ..., 2),
    "two_ellipsis": lambda lib: (..., ...),
    "true": lambda lib: True,
    "false": lambda lib: False,
    "bool_in_tuple": lambda lib: (0, True, slice(1, 3)),
    "list": lambda lib: [2, 0],
    "list_neg": lambda lib: [-1, -3, 1],
    "list_empty": lambda lib: [],
    "list_bool": lambda lib: [True, False, True],
    "list_nested": lambda lib: [[0, 1], [2, 2]],
    "list_as_tuple": lambda lib: [[0, 1]],
    "list_with_slice": lambda lib: [0, slice(None)],
    "list_of_floats": lambda lib: [1.0, 2.0],
    "numpy_array": lambda lib: np.array([1, 2]),
    "tensor": lambda lib: T(lib, [2, 1]),
    "tensor_2d": lambda lib: T(lib, [[2, 1], [0, 0]]),
    "tensor_0dim": lambda lib: T(lib, 1),
    "tensor_0dim_in_tuple": lambda lib: (slice(None), T(lib, -1)),
    "tensor_0dim_bool": lambda lib: T(lib, True),
    "tensor_0dim_false": lambda lib: (0, T(lib, False)),
    "mask": lambda lib: T(lib, np.arange(60).reshape(3, 4, 5) % 7 == 1),
    "mask_2d": lambda lib: T(lib, np.arange(12).reshape(3, 4) % 2 == 0),
    "mask_after_slice": lambda lib: (slice(None), T(lib, [True, False, True, True])),
    "mask_uint8": lambda lib: T(lib, [1, 0, 1], np.uint8),
    "adv_then_slice": lambda lib: ([0, 2], slice(1, 3)),
    "slice_then_adv": lambda lib: (slice(None), [0, 3], slice(None, None, 2)),
    "two_adv_adjacent": lambda lib: (slice(None), [0, 3], [1, 4]),
    "two_adv_split": lambda lib: ([0, 2], slice(None), [1, 4]),
    "int_and_adv_split": lambda lib: (1, slice(None), [1, 4]),
    "adv_broadcast": lambda lib: (T(lib, [[0], [2]]), slice(None), T(lib, [1, 4])),
    "none_and_adv": lambda lib: (None, [0, 1], ..., [1, 2]),
    "ellipsis_adv": lambda lib: (..., [0, 0, 4]),
    "adv_oob": lambda lib: (slice(None), [4]),
    "adv_mismatch": lambda lib: ([0, 1], [0, 1, 2]),
    "adv_int32": lambda lib: T(lib, [0, 1], np.int32),
    "adv_float": lambda lib: T(lib, [0.0, 1.0]),
    "mask_wrong_shape": lambda lib: T(lib, [True, False]),
    "float": lambda lib: 1.5,
    "string": lambda lib: "a",
}


@pytest.mark.parametrize("name", list(GETITEM_CASES))
def test_getitem(x, name):
    case = GETITEM_CASES[name]
    check_both(lambda lib, a: a[case(lib)], x)
    check_both(lambda lib, a: a.transpose(0, 1).transpose(1, 2).transpose(0, 1)[case(lib)],
               x.transpose(0, 2, 1).copy())


def test_getitem_error_types(x):
    k = kiln.from_numpy(x)
    with pytest.raises(IndexError, match="out of bounds"):
        k[3]
    with pytest.raises(IndexError, match="too many indices"):
        k[0, 0, 0, 0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        k[::-1]
    with pytest.raises(IndexError, match="only integers"):
        k[1.5]
    with pytest.raises(IndexError):
        k[kiln.from_numpy(np.array([3]))]
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        kiln.from_numpy(np.array(1.0))[0]


def test_getitem_zero_dim_and_empty():
    for index in [..., None, True, False, (None, ...), (), 0, slice(None), [0]]:
        check_both(lambda lib, a: a[index], np.array(2.5, np.float32))
    for index in [0, slice(None), (slice(None), 0), [0], (slice(None), [0, 0]), (..., None)]:
        check_both(lambda lib, a: a[index], np.zeros((0, 3), np.float32))


def test_getitem_basic_results_are_views(x):
    k = kiln.from_numpy(x)
    for index in [0, (slice(None), 1), (..., None), (1, slice(0, 4, 2)), slice(None), ...]:
        r = k[index]
        assert r._storage_ptr() == k._storage_ptr() and not r._same_tensor(k)
    assert k[[0, 1]]._storage_ptr() != k._storage_ptr()
    idx = kiln.from_numpy(np.array(1))
    assert k[idx]._storage_ptr() == k._storage_ptr()


SETITEM_CASES = {
    "int": (lambda lib: 0, 1.5),
    "neg_int": (lambda lib: -1, 7),
    "int_oob": (lambda lib: 3, 7),
    "slice_step": (lambda lib: (slice(None), slice(None, None, 2)), -1),
    "slice_neg_step": (lambda lib: slice(None, None, -1), 1),
    "tuple": (lambda lib: (1, 2, 3), 9),
    "ellipsis": (lambda lib: ..., 4),
    "none": (lambda lib: None, 4),
    "true": (lambda lib: True, 3),
    "false": (lambda lib: False, 3),
    "list": (lambda lib: [0, 2], 5),
    "list_bool": (lambda lib: [True, False, True], 5),
    "mask": (lambda lib: T(lib, np.arange(60).reshape(3, 4, 5) % 3 == 0), 0),
    "mask_prefix": (lambda lib: T(lib, np.arange(12).reshape(3, 4) % 2 == 0), -2.5),
    "mixed": (lambda lib: (slice(None), [0, 3], slice(1, 3)), 8),
    "split_adv": (lambda lib: ([0, 2], slice(None), [1, 4]), 8),
    "bool_value": (lambda lib: 1, True),
    "tensor_0dim": (lambda lib: T(lib, 2), 6),
    "adv_oob": (lambda lib: [5], 1),
    "bad_value": (lambda lib: 0, "x"),
}


@pytest.mark.parametrize("name", list(SETITEM_CASES))
def test_setitem_number(x, name):
    index, value = SETITEM_CASES[name]

    def f(lib, a):
        a[index(lib)] = value
        return a
    check_both(f, x)
    check_both(f, (x * 10).astype(np.int32))
    check_both(lambda lib, a: f(lib, a.transpose(0, 1).transpose(1, 2).transpose(0, 1)), x.transpose(0, 2, 1).copy())


def setitem(index):
    def f(lib, a, v):
        a[index] = v
        return a
    return f


def test_setitem_tensor_values(rng, x):
    row = rng.standard_normal(5).astype(np.float32)
    block = rng.standard_normal((3, 2, 5)).astype(np.float32)
    check_both(setitem((slice(None), slice(1, 3))), x, block)
    check_both(setitem((slice(None), slice(1, 3))), x, block[None, None])  # leading 1s are dropped
    check_both(setitem((slice(None), slice(1, 3))), x, block[:, :1])  # broadcast
    check_both(setitem((slice(None), slice(1, 3))), x, block[:2])  # mismatch
    check_both(setitem(0), x, row)
    check_both(setitem(0), x, row.astype(np.float64))  # basic indexing converts dtype
    check_both(setitem(0), x, (row * 10).astype(np.int64))
    check_both(setitem(0), x, np.array(3, np.int64))
    check_both(setitem([0, 2]), x, row)
    check_both(setitem([0, 2]), x, row[None, None, None])
    check_both(setitem([0, 2]), x, row.astype(np.float64))  # index_put_ needs equal dtypes
    check_both(setitem([0, 2]), x, block[:2, :1])
    check_both(setitem((slice(None), [0, 3], [1, 1])), x, rng.standard_normal((3, 2)).astype(np.float32))
    check_both(setitem(...), x, block[:, :1])
    mask = np.arange(12).reshape(3, 4) % 3 == 1
    check_both(lambda lib, a, m, v: setitem(m)(lib, a, v), x, mask, rng.standard_normal((4, 5)).astype(np.float32))
    check_both(lambda lib, a, m, v: setitem((slice(None), m[0]))(lib, a, v), x, mask,
               rng.standard_normal((3, 1, 5)).astype(np.float32))
    check_both(lambda lib, a: setitem((slice(None), slice(1, 3)))(lib, a, a.transpose(1, 2)[:, 1:3].transpose(1, 2)), x)
    check_both(lambda lib, a: setitem(slice(1, None))(lib, a, a[:-1]), x)  # partial overlap: both raise
    check_both(lambda lib, a: setitem(slice(0, 1))(lib, a, a[2:]), x)


def test_augmented_assignment_and_view_writes(x):
    def f(lib, a):
        a[0] += 1
        a[:, 1] += a[:, 2]
        b = a.view(-1)
        b[[0, 5, 5]] += 2
        a.transpose(0, 2)[1, 2, 0] = 42
        return a
    check_both(f, x)


def test_setitem_expanded_destination(x):
    check_both(lambda lib, a: setitem(...)(lib, a.unsqueeze(0).expand(2, 3, 4, 5), 1.0), x)
    check_both(lambda lib, a, v: setitem(...)(lib, a.unsqueeze(0).expand(2, 3, 4, 5), v), x, np.ones(5, np.float32))
    check_both(lambda lib, a: setitem(0)(lib, a.unsqueeze(0).expand(2, 3, 4, 5), 1.0), x)


def test_delitem_is_type_error(x):
    with pytest.raises(TypeError):
        del kiln.from_numpy(x)[0]


def test_iteration_uses_getitem(x):
    check_both(lambda lib, a: list(a), x)


def test_mask_put_with_one_value_acts_as_masked_fill(rng, x):
    """torch sends a single mask with a one-element value to masked_fill_: no dtype match needed."""
    mask = rng.integers(0, 2, (3, 4)).astype(bool)
    check_both(lambda lib, a, m, v: a.index_put_((m,), v), x, mask, np.array(5))
    check_both(lambda lib, a, m, v: a.index_put_((m,), v), x, mask, np.array([2.5]))
    check_both(lambda lib, a, m, v: aten(lib, "index_put_")(a, [None, m[0]], v), x, mask, np.array([2.5]))
    check_both(lambda lib, a, m, v: a.index_put_((m,), v, accumulate=True), x, mask, np.array(5))
    check_both(lambda lib, a, m, v: a.index_put_((m[0],), v), x, mask, np.array(5.0))  # mask shape
    check_both(lambda lib, a, m, v: setitem(m)(lib, a, v), x, mask, np.array([7.0]))
    check_both(lambda lib, a, m: setitem(m)(lib, a, a[0, 0]), x, mask)
