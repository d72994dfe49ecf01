"""Searching and counting (kiln/ops/search_ops.cpp): searchsorted,
bucketize, bincount, histc, argwhere, unique_consecutive, unique_dim and
unique_dim_consecutive against torch 1.13: values, dtypes, every overload
(Scalar forms, out=), sorter, side/right, NaN, non-contiguous inputs, errors,
scripts, and gradients (none, or torch's error)."""
import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same

A = torch.ops.aten


def _op(lib, name):
    return getattr(torch.ops.aten, name) if lib is torch else kiln._functions.op(name)


def _both(fn, *arrays, **kwargs):
    """fn(lib, *tensors) in torch and in kiln on the same values, compared."""
    t = fn(torch, *[torch.from_numpy(a.copy()) for a in arrays], **kwargs)
    k = fn(kiln, *[kiln.from_numpy(a.copy()) for a in arrays], **kwargs)
    assert_same(k, t)
    return k, t


def _same_error(fn, *arrays, exc=RuntimeError):
    with pytest.raises(exc) as theirs:
        fn(torch, *[torch.from_numpy(a.copy()) for a in arrays])
    with pytest.raises(exc) as ours:
        fn(kiln, *[kiln.from_numpy(a.copy()) for a in arrays])
    assert str(theirs.value).split("\n")[0] in str(ours.value), (str(ours.value), str(theirs.value))


SEQ = np.array([-3.0, -1.0, 0.0, 0.0, 2.0, 2.0, 2.0, 5.0, np.inf], np.float32)
VALUES = np.array([[-5.0, -1.0, 0.0, 1.0], [2.0, 3.0, np.nan, 9.0], [np.inf, -np.inf, 5.0, 2.0]], np.float32)


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("out_int32", [False, True])
def test_searchsorted_1d(right, out_int32):
    _both(lambda lib, s, v: lib.searchsorted(s, v, right=right, out_int32=out_int32), SEQ, VALUES)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_side_and_sorter(side):
    rng = np.random.default_rng(0)
    unsorted = rng.permutation(SEQ[:-1])
    order = np.argsort(unsorted, kind="stable")
    _both(lambda lib, s, v, o: lib.searchsorted(s, v, side=side, sorter=o), unsorted, VALUES, order)
    # side wins over right=False; right=True with side="right" agrees.
    _both(lambda lib, s, v: lib.searchsorted(s, v, right=side == "right", side=side), SEQ, VALUES)


def test_searchsorted_nd_sequences_and_noncontiguous():
    rng = np.random.default_rng(1)
    seq = np.sort(rng.integers(-5, 5, (2, 3, 6)), axis=-1).astype(np.float64)
    vals = rng.integers(-6, 6, (2, 3, 4)).astype(np.float64)
    _both(lambda lib, s, v: lib.searchsorted(s, v), seq, vals)
    _both(lambda lib, s, v: lib.searchsorted(s, v, right=True), seq, vals)
    # Values stored transposed.
    _both(lambda lib, s, v: lib.searchsorted(s, v.transpose(0, 1).contiguous().transpose(0, 1), right=True), seq,
          vals)
    wide = np.repeat(SEQ, 2)
    _both(lambda lib, s, v: lib.searchsorted(s[::2], v), wide, VALUES)


@pytest.mark.parametrize("seq_dtype, val_dtype", [(np.int64, np.float32), (np.int32, np.int64), (np.uint8, np.float64),
                                                  (np.float64, np.int64)])
def test_searchsorted_mixed_dtypes(seq_dtype, val_dtype):
    seq = np.array([1, 2, 2, 3, 7, 9], seq_dtype)
    vals = np.array([0, 2, 2.5, 9, 10, 3], np.float64).astype(val_dtype)
    _both(lambda lib, s, v: lib.searchsorted(s, v), seq, vals)
    _both(lambda lib, s, v: lib.searchsorted(s, v, right=True), seq, vals)


def test_searchsorted_scalar_and_out():
    _both(lambda lib, s: lib.searchsorted(s, 2.0), SEQ)
    _both(lambda lib, s: lib.searchsorted(s, 2, right=True, out_int32=True), SEQ)
    _both(lambda lib, s, v: lib.searchsorted(s, v, out=lib.empty([0], dtype=lib.int64)), SEQ, VALUES)
    _both(lambda lib, s: _op(lib, "searchsorted")(s, 0.0, out_int32=True, out=lib.empty([0], dtype=lib.int32)), SEQ)
    _both(lambda lib, s, v: lib.searchsorted(s, v), np.array([], np.float32), VALUES)
    _both(lambda lib, s, v: lib.searchsorted(s, v), SEQ, np.zeros((0, 3), np.float32))


SEARCH_ERRORS = [
    lambda lib, s, v: lib.searchsorted(s.reshape(3, 3), v.t()),
    lambda lib, s, v: lib.searchsorted(s.reshape(3, 3), 1.0),
    lambda lib, s, v: lib.searchsorted(s, v, sorter=lib.zeros([2], dtype=lib.int64)),
    lambda lib, s, v: lib.searchsorted(s, v, sorter=lib.zeros([9])),
    lambda lib, s, v: lib.searchsorted(s, v, side="middle"),
    lambda lib, s, v: lib.searchsorted(s, v, right=True, side="left"),
    lambda lib, s, v: lib.searchsorted(s[0], v),
    lambda lib, s, v: lib.searchsorted(s, v, out=lib.empty([0], dtype=lib.int32)),
    lambda lib, s, v: lib.bucketize(v, s.reshape(3, 3)),
]


@pytest.mark.parametrize("index", range(len(SEARCH_ERRORS)))
def test_searchsorted_errors(index):
    _same_error(SEARCH_ERRORS[index], SEQ, VALUES)


def test_searchsorted_sorter_out_of_range_raises():
    with pytest.raises(IndexError, match="sorter index"):
        kiln.searchsorted(kiln.from_numpy(SEQ), kiln.from_numpy(VALUES), sorter=kiln.from_numpy(np.full(9, 12)))


@pytest.mark.parametrize("right", [False, True])
def test_bucketize(right):
    b = np.array([-1.0, 0.0, 2.0, 2.0, 5.0], np.float64)
    _both(lambda lib, v, s: lib.bucketize(v, s, right=right), VALUES, b)
    _both(lambda lib, v, s: lib.bucketize(v, s, out_int32=True, right=right), VALUES, b)
    _both(lambda lib, s: lib.bucketize(2, s, right=right), b)
    _both(lambda lib, v, s: lib.bucketize(v, s, right=right, out=lib.empty([0], dtype=lib.int64)), VALUES, b)
    _both(lambda lib, s: _op(lib, "bucketize")(2.0, s, right=right, out=lib.empty([0], dtype=lib.int64)), b)


def test_bincount():
    x = np.array([0, 1, 1, 3, 7, 3, 3], np.int64)
    _both(lambda lib, a: lib.bincount(a), x)
    _both(lambda lib, a: lib.bincount(a, minlength=12), x)
    _both(lambda lib, a: lib.bincount(a[::2]), x)
    for w in [np.linspace(0, 1, 7).astype(np.float32), np.linspace(0, 1, 7), np.arange(7, dtype=np.int64)]:
        _both(lambda lib, a, ww: lib.bincount(a, ww), x, w)
        _both(lambda lib, a, ww: lib.bincount(a, ww, 10), x, w)
    for dtype in [np.uint8, np.int8, np.int16, np.int32]:
        _both(lambda lib, a: lib.bincount(a), x.astype(dtype))
    _both(lambda lib, a: lib.bincount(a, minlength=3), np.array([], np.int64))
    _both(lambda lib, a: _op(lib, "bincount")(a, out=lib.empty([0], dtype=lib.int64)), x)


@pytest.mark.parametrize("fn, arrays", [
    (lambda lib, a: lib.bincount(a), [np.array([-1, 2])]),
    (lambda lib, a: lib.bincount(a), [np.array([[1, 2]])]),
    (lambda lib, a: lib.bincount(a), [np.array([1.0, 2.0], np.float32)]),
    (lambda lib, a: lib.bincount(a, minlength=-1), [np.array([1, 2])]),
    (lambda lib, a, w: lib.bincount(a, w), [np.array([1, 2]), np.ones(3, np.float32)]),
])
def test_bincount_errors(fn, arrays):
    _same_error(fn, *arrays)


def test_histc():
    rng = np.random.default_rng(2)
    for dtype in [np.float32, np.float64]:
        x = rng.uniform(-3, 3, (5, 7)).astype(dtype)
        _both(lambda lib, a: lib.histc(a), x)
        _both(lambda lib, a: lib.histc(a, bins=7), x)
        _both(lambda lib, a: lib.histc(a, 4, -1, 2), x)
        _both(lambda lib, a: lib.histc(a.t(), 5, min=-2.5, max=2.5), x)
        _both(lambda lib, a: lib.histc(a, 3, out=lib.empty([0], dtype=a.dtype)), x)
    # Edges: the last edge in the last bin; constant data; values on bin edges.
    _both(lambda lib, a: lib.histc(a, 3), np.array([0.0, 1, 2, 3], np.float32))
    _both(lambda lib, a: lib.histc(a, 3), np.array([5.0, 5.0], np.float32))
    _both(lambda lib, a: lib.histc(a, 10, 0.1, 0.7), np.array([0.1, 0.2, 0.3, 0.7], np.float32))
    _both(lambda lib, a: lib.histc(a, 3, 0, 3), np.array([0.0, 1, 2, 3, np.inf, -np.inf], np.float32))
    _both(lambda lib, a: lib.histc(a, 4), np.array([], np.float64))


@pytest.mark.parametrize("fn, x", [
    (lambda lib, a: lib.histc(a, 3), np.array([1, 2], np.int64)),
    (lambda lib, a: lib.histc(a, 0), np.array([1.0], np.float32)),
    (lambda lib, a: lib.histc(a, 3, 3, 1), np.array([1.0], np.float32)),
    (lambda lib, a: lib.histc(a, 3), np.array([0.0, np.inf], np.float32)),
])
def test_histc_errors(fn, x):
    _same_error(fn, x)


def test_histc_result_does_not_require_grad():
    x = kiln.from_numpy(np.array([1.0, 2.0], np.float32)).requires_grad_(True)
    assert not kiln.histc(x, 4).requires_grad


def test_argwhere():
    x = np.array([[0, 1.5, 0], [2, 0, np.nan]], np.float32)
    _both(lambda lib, a: lib.argwhere(a), x)
    _both(lambda lib, a: a.argwhere(), x.T.copy())
    _both(lambda lib, a: lib.argwhere(a), np.array(3.0))
    _both(lambda lib, a: lib.argwhere(a), np.array(0, np.int64))
    _both(lambda lib, a: lib.argwhere(a), np.array([True, False, True]))


UNIQUE_INPUTS = [
    np.array([1, 1, 2, 2, 3, 1, 1, 2], np.int64),
    np.array([[2.0, 2, 1], [1, 1, np.nan]], np.float32),
    np.array([np.nan, np.nan, 1.0, 1.0], np.float64),
    np.array([True, True, False, True]),
    np.array(5.0, np.float32),
    np.array([], np.int32),
]


@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("counts", [False, True])
@pytest.mark.parametrize("index", range(len(UNIQUE_INPUTS)))
def test_unique_consecutive(index, inverse, counts):
    _both(lambda lib, a: _op(lib, "unique_consecutive")(a, inverse, counts), UNIQUE_INPUTS[index])


MATRIX = np.array([[1, 1, 2], [1, 1, 2], [0, 0, 1], [1, 1, 2], [0, 0, 1]], np.int64)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_dims(dim):
    for x in [MATRIX, MATRIX.astype(np.float32), np.stack([MATRIX, MATRIX[::-1]]).astype(np.float64)]:
        for flags in [(False, False), (True, True), (True, False)]:
            _both(lambda lib, a: _op(lib, "unique_consecutive")(a, flags[0], flags[1], dim), x)
            _both(lambda lib, a: _op(lib, "unique_dim_consecutive")(a, dim, flags[0], flags[1]), x)
            _both(lambda lib, a: _op(lib, "unique_dim")(a, dim, True, flags[0], flags[1]), x)
            _both(lambda lib, a: _op(lib, "unique_dim")(a, dim, False, flags[0], flags[1]), x)
    # Non-contiguous.
    _both(lambda lib, a: _op(lib, "unique_dim")(a.t(), dim, True, True, True), MATRIX.T.copy())


def test_unique_dim_nan_rows_and_empty():
    x = np.array([[2.0, np.nan], [2.0, np.nan], [1.0, 0.0], [np.nan, 1.0]], np.float32)
    _both(lambda lib, a: _op(lib, "unique_dim")(a, 0, True, True, True), x)
    _both(lambda lib, a: _op(lib, "unique_dim")(a, 0, True, True, True), np.zeros((0, 3), np.float32))


@pytest.mark.parametrize("fn, x, exc", [
    (lambda lib, a: _op(lib, "unique_dim")(a, 2), MATRIX, IndexError),
    (lambda lib, a: _op(lib, "unique_dim")(a, 0), np.array(1.0), IndexError),
    (lambda lib, a: _op(lib, "unique_consecutive")(a, dim=3), MATRIX, IndexError),
    (lambda lib, a: _op(lib, "unique_dim")(a, 0), np.zeros((3, 0)), RuntimeError),
])
def test_unique_errors(fn, x, exc):
    _same_error(fn, x, exc=exc)


def test_unique_out_forms():
    for name, args in [("unique_consecutive", (True, True, None)), ("unique_dim", (0, True, True, True)),
                       ("unique_dim_consecutive", (1, True, True))]:
        def fn(lib, a):
            outs = [lib.empty([0], dtype=lib.int64) for _ in range(3)]
            return _op(lib, name)(a, *args, out0=outs[0], out1=outs[1], out2=outs[2])
        _both(fn, MATRIX)


SCRIPT = """
def f(s: Tensor, v: Tensor, x: Tensor, w: Tensor):
    a = torch.searchsorted(s, v, right=True)
    b = torch.bucketize(v, s, out_int32=True)
    c = torch.bincount(x, w, 9)
    d = torch.histc(v, 5, -2.0, 6.0)
    e = torch.argwhere(x > 2)
    u, i, n = torch.unique_consecutive(x, True, True)
    return a, b, c, d, e, u, i, n
"""


def test_in_script():
    s = np.array([-1.0, 0.0, 2.0, 5.0], np.float32)
    v = np.array([-2.0, 0.5, 2.0, 7.0, 3.0], np.float32)
    x = np.array([0, 0, 3, 4, 4, 4, 8], np.int64)
    w = np.linspace(0, 1, 7)
    expected = torch.jit.CompilationUnit(SCRIPT).f(*[torch.from_numpy(a) for a in (s, v, x, w)])
    got = kiln.compile(SCRIPT).f(*[kiln.from_numpy(a) for a in (s, v, x, w)])
    assert_same(list(got), list(expected))


@pytest.mark.parametrize("fn", [
    lambda lib, w: lib.bincount(lib.from_numpy(np.array([0, 1, 1])), w),
    lambda lib, w: _op(lib, "unique_consecutive")(w)[0],
    lambda lib, w: _op(lib, "unique_dim")(w.reshape(3, 1), 0)[0],
    lambda lib, w: _op(lib, "unique_dim_consecutive")(w.reshape(3, 1), 0)[0],
])
def test_backward_raises_as_torch(fn):
    for lib in (torch, kiln):
        w = lib.from_numpy(np.array([1.0, 2.0, 2.0])).requires_grad_(True)
        out = fn(lib, w)
        assert out.requires_grad
        with pytest.raises(RuntimeError, match="not implemented"):
            out.sum().backward()


def test_shape_propagation_types_the_results():
    unit = kiln.compile("def f(s, v):\n    return torch.searchsorted(s, v, out_int32=True), "
                        "torch.bucketize(v, s), torch.histc(v.double(), 7)\n")
    graph = str(unit.f.graph_for(kiln.ones([5]), kiln.ones([2, 3])))
    assert "Int(2, 3" in graph and "Long(2, 3" in graph and "Double(7" in graph, graph
