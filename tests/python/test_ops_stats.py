"""The selection and statistics operators of kiln/ops/stats_ops.cpp against
torch 1.13: median, nanmedian, kthvalue, mode, quantile, nanquantile,
aminmax, cummax, cummin, logcumsumexp, dist, diff, cov, corrcoef, cdist,
pdist, renorm and the internal operators behind them. Values (ties, NaN and
infinities included: which index a selection reports must be torch's),
dtypes, named-tuple results, every overload (dim/keepdim, out=, in-place),
non-contiguous inputs, errors, scripts, and gradients (against torch and by
float64 finite differences)."""
import numpy as np
import pytest
import torch

import kiln
from autograd_check import assert_gradients_match_torch, away_from_kinks, gradcheck
from conftest import assert_same

NAN = np.nan
INF = np.inf


def _both(a):
    return torch.from_numpy(np.array(a).copy()), kiln.from_numpy(np.array(a).copy())


def _ties(shape, dtype=np.float32, seed=0, nan=False):
    """Small integers (many ties), with NaNs sprinkled in when asked."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, shape).astype(dtype)
    if nan:
        a[rng.random(shape) < 0.2] = NAN
    return a


def _call(lib, name, *args, **kwargs):
    return getattr(lib, name)(*args, **kwargs)


def _same_error(fn, exception=RuntimeError, exact=True):
    """kiln raises what torch raises for fn(lib) (the same message when `exact`)."""
    with pytest.raises(exception) as theirs:
        fn(torch)
    with pytest.raises(exception) as ours:
        fn(kiln)
    if exact:
        assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


# ---- median, nanmedian, kthvalue, mode ---------------------------------------------------

SELECTIONS = {
    "median": lambda lib, x, dim, keepdim: lib.median(x, dim, keepdim),
    "nanmedian": lambda lib, x, dim, keepdim: lib.nanmedian(x, dim, keepdim),
    "mode": lambda lib, x, dim, keepdim: lib.mode(x, dim, keepdim),
    "kthvalue": lambda lib, x, dim, keepdim: lib.kthvalue(x, 2, dim, keepdim),
}


@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("name", sorted(SELECTIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_selection_values_and_indices(name, dtype, nan):
    if nan and dtype not in (np.float32, np.float64):
        pytest.skip("integers have no NaN")
    for seed in range(4):
        a = _ties((5, 7, 6), dtype, seed, nan)
        t, k = _both(a)
        for dim in [0, 1, 2, -1]:
            for keepdim in [False, True]:
                theirs = SELECTIONS[name](torch, t, dim, keepdim)
                ours = SELECTIONS[name](kiln, k, dim, keepdim)
                # Ties and NaNs: the index must be torch's, not just a valid one.
                assert_same(ours.values, theirs.values)
                assert_same(ours.indices, theirs.indices)


@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selection_nan_rules(name):
    rows = [[1.0, NAN, 2.0, NAN, 2.0, 1.0], [3.0, NAN, NAN, 0.0, -0.0, 0.0], [NAN, NAN, NAN, NAN, NAN, NAN],
            [INF, -INF, INF, 0.0, NAN, -INF], [2.0, 2.0, 1.0, 1.0, 3.0, 3.0]]
    t, k = _both(np.array(rows, dtype=np.float32))
    theirs = SELECTIONS[name](torch, t, 1, False)
    ours = SELECTIONS[name](kiln, k, 1, False)
    assert_same(ours.values, theirs.values)
    assert_same(ours.indices, theirs.indices)


@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selection_named_tuple_and_out(name):
    t, k = _both(_ties((4, 5), seed=3))
    theirs = SELECTIONS[name](torch, t, 1, False)
    ours = SELECTIONS[name](kiln, k, 1, False)
    values, indices = ours  # unpacks like torch's
    assert_same(values, theirs[0])
    assert_same(indices, theirs[1])
    assert type(ours).__name__ == name and ours._fields == ("values", "indices")
    # The out= form (kiln names the outputs as the schema does: values=, indices=), resized to the result.
    values, indices = kiln.empty(0), kiln.empty(0, dtype=kiln.int64)
    args = (k, 2, 1) if name == "kthvalue" else (k, 1)
    result = getattr(kiln, name)(*args, values=values, indices=indices)
    assert_same(values, theirs.values)
    assert_same(indices, theirs.indices)
    assert result[0].data_ptr() == values.data_ptr()


@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selection_noncontiguous_and_methods(name):
    a = _ties((6, 8), seed=5, nan=True)
    t = torch.from_numpy(a.copy()).t()[::2]
    k = kiln.from_numpy(a.copy()).t()[::2]
    for dim in [0, 1]:
        theirs = SELECTIONS[name](torch, t, dim, False)
        ours = SELECTIONS[name](kiln, k, dim, False)
        assert_same(ours.values, theirs.values)
        assert_same(ours.indices, theirs.indices)
    method = getattr(k, name)(*([2, 0] if name == "kthvalue" else [0]))
    expected = getattr(t, name)(*([2, 0] if name == "kthvalue" else [0]))
    assert_same(method.values, expected.values)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_median_all(name):
    for a in [_ties((7, 5), seed=1), _ties((6, 4), seed=2), _ties((4, 4), seed=3, nan=True),
              np.array([NAN, NAN], np.float32), np.array([1.0, NAN, 3.0, 2.0], np.float64),
              np.array([5, 1, 4, 2], np.int64), np.array(3.5, np.float32), np.zeros(0, np.float32)]:
        t, k = _both(a)
        assert_same(getattr(kiln, name)(k), getattr(torch, name)(t))
        out = kiln.empty(3, dtype=k.dtype)
        getattr(kiln, name)(k, out=out)
        assert_same(out, getattr(torch, name)(t))
    t, k = _both(_ties((6, 5), seed=4))
    assert_same(getattr(kiln, name)(k.t()), getattr(torch, name)(t.t()))


def test_mode_bool_and_zero_dim():
    for a in [np.array([True, False, True]), np.array(3.0, np.float32), np.array([[1, 1], [2, 2]], np.int64)]:
        t, k = _both(a)
        assert_same(tuple(kiln.mode(k)), tuple(torch.mode(t)))
    t, k = _both(np.array(5.0, np.float32))
    assert_same(tuple(kiln.kthvalue(k, 1)), tuple(torch.kthvalue(t, 1)))
    assert_same(tuple(kiln.median(k, 0)), tuple(torch.median(t, 0)))


def test_selection_empty():
    t, k = _both(np.zeros((0, 3), np.float32))
    for name in SELECTIONS:
        assert_same(tuple(SELECTIONS[name](kiln, k, 1, False)), tuple(SELECTIONS[name](torch, t, 1, False)))
        _same_error(lambda lib: SELECTIONS[name](lib, lib.from_numpy(np.zeros((0, 3), np.float32)), 0, False),
                    IndexError)


def test_selection_errors():
    b = np.array([True, False])
    _same_error(lambda lib: lib.median(lib.from_numpy(b.copy())))
    _same_error(lambda lib: lib.median(lib.from_numpy(b.copy()), 0))
    _same_error(lambda lib: lib.kthvalue(lib.from_numpy(b.copy()), 1))
    x = np.array([1.0, 2.0], np.float32)
    _same_error(lambda lib: lib.kthvalue(lib.from_numpy(x.copy()), 3))
    _same_error(lambda lib: lib.kthvalue(lib.from_numpy(x.copy()), 0))
    _same_error(lambda lib: lib.median(lib.from_numpy(x.copy()), 5), IndexError, exact=False)
    for name in SELECTIONS:
        args = (2, 0) if name == "kthvalue" else (0,)
        for values, indices in [(np.float64, np.int64), (np.float32, np.float32)]:
            v, i = np.zeros(0, values), np.zeros(0, indices)
            with pytest.raises(RuntimeError):
                getattr(torch, name)(torch.from_numpy(x.copy()), *args, out=(torch.from_numpy(v), torch.from_numpy(i)))
            with pytest.raises(RuntimeError):
                getattr(kiln, name)(kiln.from_numpy(x.copy()), *args, values=kiln.from_numpy(v),
                                    indices=kiln.from_numpy(i))


# ---- quantile, nanquantile ---------------------------------------------------------------

INTERPOLATIONS = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", INTERPOLATIONS)
def test_quantile(name, interpolation):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 5, 6)).astype(np.float64)
    a[0, 0, :3] = NAN
    a[1, :, 2] = NAN
    a[2, 1, :] = NAN
    t, k = _both(a)
    qs = [0.0, 0.25, 0.5, 0.7, 1.0]
    for dim in [None, 0, 1, -1]:
        for keepdim in [False, True]:
            for q in [0.3, 0.5, 1.0]:
                theirs = _call(torch, name, t, q, dim, keepdim, interpolation=interpolation)
                ours = _call(kiln, name, k, q, dim, keepdim, interpolation=interpolation)
                assert_same(ours, theirs, rtol=1e-12, atol=1e-12)
            tq, kq = _both(np.array(qs))
            theirs = _call(torch, name, t, tq, dim, keepdim, interpolation=interpolation)
            ours = _call(kiln, name, k, kq, dim, keepdim, interpolation=interpolation)
            assert_same(ours, theirs, rtol=1e-12, atol=1e-12)
    # float32, 0-dim q tensor, a 0-dim input, a method, out=.
    t32, k32 = _both(a.astype(np.float32))
    tq, kq = _both(np.array(0.4, np.float32))
    assert_same(getattr(k32, name)(kq, 1, interpolation=interpolation),
                getattr(t32, name)(tq, 1, interpolation=interpolation))
    t0, k0 = _both(np.array(2.5, np.float32))
    assert_same(_call(kiln, name, k0, 0.5, 0), _call(torch, name, t0, 0.5, 0))
    out = kiln.empty(0, dtype=kiln.float64)
    _call(kiln, name, k, 0.25, 2, interpolation=interpolation, out=out)
    assert_same(out, _call(torch, name, t, 0.25, 2, interpolation=interpolation))
    out = kiln.empty(0, dtype=kiln.float64)
    _call(kiln, name, k, kiln.from_numpy(np.array([0.1, 0.9])), interpolation=interpolation, out=out)
    assert_same(out, _call(torch, name, t, torch.tensor([0.1, 0.9], dtype=torch.float64),
                           interpolation=interpolation))


def test_quantile_errors():
    f = np.ones(3, np.float32)
    _same_error(lambda lib: lib.quantile(lib.from_numpy(np.zeros(0, np.float32)), 0.5))
    _same_error(lambda lib: lib.quantile(lib.from_numpy(f.copy()), lib.from_numpy(np.ones((2, 2), np.float32))))
    _same_error(lambda lib: lib.quantile(lib.from_numpy(np.ones(3, np.int64)), 0.5))
    _same_error(lambda lib: lib.quantile(lib.from_numpy(f.copy()), lib.from_numpy(np.ones(2))))
    _same_error(lambda lib: lib.quantile(lib.from_numpy(f.copy()), 1.5))
    _same_error(lambda lib: lib.nanquantile(lib.from_numpy(f.copy()), lib.from_numpy(np.array([1.5], np.float32))))
    _same_error(lambda lib: lib.quantile(lib.from_numpy(f.copy()), 0.5, interpolation="foo"))


# ---- aminmax -------------------------------------------------------------------------------

def test_aminmax():
    for a in [_ties((4, 5), seed=1, nan=True), _ties((4, 5), np.int32, seed=2), np.array([True, False]),
              np.array(2.0, np.float32)]:
        t, k = _both(a)
        for kwargs in [{}, {"keepdim": True}, {"dim": 0}, {"dim": -1, "keepdim": True}]:
            ours = kiln.aminmax(k, **kwargs)
            theirs = torch.aminmax(t, **kwargs)
            assert_same(ours.min, theirs.min)
            assert_same(ours.max, theirs.max)
            lo, hi = ours
            assert_same(lo, theirs[0])
    t, k = _both(_ties((3, 4), seed=3))
    lo, hi = kiln.empty(0), kiln.empty(0)
    kiln.aminmax(k, dim=1, min=lo, max=hi)
    assert_same((lo, hi), tuple(torch.aminmax(t, dim=1)))
    assert_same(tuple(k.aminmax(dim=1)), tuple(t.aminmax(dim=1)))
    _same_error(lambda lib: lib.aminmax(lib.from_numpy(np.zeros(0, np.float32))))
    _same_error(lambda lib: lib.aminmax(lib.from_numpy(np.zeros((2, 0), np.float32)), dim=1), IndexError)


# ---- cummax, cummin, logcumsumexp ----------------------------------------------------------

@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cumulative_extrema(name):
    for a in [_ties((5, 6), seed=1), _ties((5, 6), seed=2, nan=True), _ties((4, 5), np.int64, seed=3),
              np.array([True, False, True, True]), np.array(2.0, np.float32), np.zeros((0, 3), np.float32),
              np.array([1.0, NAN, 3.0, NAN, 0.0, INF], np.float64)]:
        t, k = _both(a)
        for dim in range(-max(a.ndim, 1), max(a.ndim, 1)):
            ours = getattr(kiln, name)(k, dim)
            theirs = getattr(torch, name)(t, dim)
            assert_same(ours.values, theirs.values)
            assert_same(ours.indices, theirs.indices)
    t, k = _both(_ties((6, 4), seed=4, nan=True))
    assert_same(tuple(getattr(k.t(), name)(1)), tuple(getattr(t.t(), name)(1)))
    values, indices = kiln.empty(0), kiln.empty(0, dtype=kiln.int64)
    getattr(kiln, name)(k, 0, values=values, indices=indices)
    assert_same((values, indices), tuple(getattr(torch, name)(t, 0)))
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch, name)(torch.ones(3, dtype=torch.int64), 0,
                             out=(torch.empty(0, dtype=torch.int32), torch.empty(0, dtype=torch.int64)))
    with pytest.raises(RuntimeError) as ours:
        getattr(kiln, name)(kiln.ones(3, dtype=kiln.int64), 0, values=kiln.empty(0, dtype=kiln.int32),
                            indices=kiln.empty(0, dtype=kiln.int64))
    assert str(ours.value) == str(theirs.value)


def test_logcumsumexp():
    rng = np.random.default_rng(3)
    for dtype in [np.float32, np.float64]:
        a = (rng.standard_normal((5, 7)) * 30).astype(dtype)
        a[0, :4] = [-INF, INF, 1.0, NAN]
        a[1, :3] = [-INF, -INF, 2.0]
        a[2, :3] = [INF, INF, -INF]
        t, k = _both(a)
        for dim in [0, 1, -1]:
            assert_same(kiln.logcumsumexp(k, dim), torch.logcumsumexp(t, dim), rtol=1e-6)
        assert_same(k.t().logcumsumexp(0), t.t().logcumsumexp(0), rtol=1e-6)
    t, k = _both(np.array(2.0, np.float32))
    assert_same(kiln.logcumsumexp(k, 0), torch.logcumsumexp(t, 0))
    t, k = _both(np.ones((2, 3), np.float32))
    out = kiln.empty(0)
    kiln.logcumsumexp(k, 1, out=out)
    assert_same(out, torch.logcumsumexp(t, 1))
    _same_error(lambda lib: lib.logcumsumexp(lib.from_numpy(np.array([1, 2])), 0))
    _same_error(lambda lib: lib.logcumsumexp(lib.from_numpy(np.ones(2, np.float32)), 0, out=lib.empty(0, dtype=lib.float64)))


# ---- dist, diff ----------------------------------------------------------------------------

def test_dist():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4,)).astype(np.float32)
    (ta, ka), (tb, kb) = _both(a), _both(b)
    for p in [2, 1, 0, 3.5, 0.5, -1, INF, -INF]:
        assert_same(kiln.dist(ka, kb, p), torch.dist(ta, tb, p), rtol=1e-5)
    assert_same(ka.dist(kb.double()), ta.dist(tb.double()), rtol=1e-5)
    out = kiln.empty(0)
    kiln.dist(ka, kb, 3, out=out)
    assert_same(out, torch.dist(ta, tb, 3), rtol=1e-5)
    _same_error(lambda lib: lib.dist(lib.from_numpy(np.array([1, 2])), lib.from_numpy(np.array([3, 4]))),
                exact=False)


def test_diff():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    t, k = _both(a)
    pre, app = rng.standard_normal((4, 2)).astype(np.float32), rng.standard_normal((4, 1)).astype(np.float64)
    (tp, kp), (ta, ka) = _both(pre), _both(app)
    for n in [0, 1, 2, 3, 7]:
        for dim in [0, 1, -1]:
            assert_same(kiln.diff(k, n, dim), torch.diff(t, n, dim))
        assert_same(kiln.diff(k, n, 1, prepend=kp, append=ka), torch.diff(t, n, 1, prepend=tp, append=ta))
        assert_same(kiln.diff(k, n, -1, append=ka), torch.diff(t, n, -1, append=ta))
    for arr in [np.array([True, False, False, True]), np.array([3, 1, 4, 1, 5], np.int64)]:
        tt, kk = _both(arr)
        assert_same(kiln.diff(kk), torch.diff(tt))
        assert_same(kk.diff(2), tt.diff(2))
    assert_same(kiln.diff(k.t(), dim=0), torch.diff(t.t(), dim=0))
    out = kiln.empty(0)
    kiln.diff(k, out=out)
    assert_same(out, torch.diff(t))
    _same_error(lambda lib: lib.diff(lib.from_numpy(np.array(1.0))))
    _same_error(lambda lib: lib.diff(lib.from_numpy(a.copy()), 1, 0, prepend=lib.ones(2)))
    _same_error(lambda lib: lib.diff(lib.from_numpy(a.copy()), 1, 0, prepend=lib.ones(2, 3)))
    assert_same(kiln.diff(k, -1), torch.diff(t, -1))  # torch 1.13 takes no differences


# ---- cov, corrcoef -------------------------------------------------------------------------

def test_cov_and_corrcoef():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 6))
    fw = rng.integers(0, 4, 6)
    aw = rng.random(6)
    t, k = _both(x)
    (tf, kf), (ta, ka) = _both(fw), _both(aw)
    for correction in [0, 1, 2]:
        assert_same(kiln.cov(k, correction=correction), torch.cov(t, correction=correction), rtol=1e-10)
        assert_same(kiln.cov(k, correction=correction, fweights=kf), torch.cov(t, correction=correction, fweights=tf),
                    rtol=1e-10)
        assert_same(kiln.cov(k, correction=correction, aweights=ka), torch.cov(t, correction=correction, aweights=ta),
                    rtol=1e-10)
        assert_same(kiln.cov(k, correction=correction, fweights=kf, aweights=ka),
                    torch.cov(t, correction=correction, fweights=tf, aweights=ta), rtol=1e-10)
    for arr in [x[0], x[:, :1], np.array([[1, 2, 4]], np.int64), x.astype(np.float32), x.T[:4]]:
        tt, kk = _both(arr)
        assert_same(kiln.cov(kk), torch.cov(tt), rtol=1e-5)
        assert_same(kk.corrcoef(), tt.corrcoef(), rtol=1e-5)
    assert_same(kiln.corrcoef(k.t()), torch.corrcoef(t.t()), rtol=1e-10)
    x2 = np.ones((2, 2, 2))
    _same_error(lambda lib: lib.cov(lib.from_numpy(x2.copy())))
    _same_error(lambda lib: lib.corrcoef(lib.from_numpy(x2.copy())))
    _same_error(lambda lib: lib.cov(lib.from_numpy(np.array([True]))))
    xs = rng.standard_normal((3, 4)).astype(np.float32)
    _same_error(lambda lib: lib.cov(lib.from_numpy(xs.copy()), fweights=lib.ones(4)))
    _same_error(lambda lib: lib.cov(lib.from_numpy(xs.copy()), fweights=lib.ones(3, dtype=lib.int64)))
    _same_error(lambda lib: lib.cov(lib.from_numpy(xs.copy()), fweights=-lib.ones(4, dtype=lib.int64)))
    _same_error(lambda lib: lib.cov(lib.from_numpy(xs.copy()), aweights=lib.ones(4, dtype=lib.int64)))
    _same_error(lambda lib: lib.cov(lib.from_numpy(xs.copy()), aweights=lib.zeros(4)))


# ---- cdist, pdist, renorm ------------------------------------------------------------------

@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, INF])
def test_cdist(p):
    rng = np.random.default_rng(8)
    for s1, s2 in [((5, 3), (4, 3)), ((2, 5, 3), (4, 3)), ((30, 4), (7, 4)), ((2, 1, 28, 3), (3, 6, 3))]:
        a, b = rng.standard_normal(s1).astype(np.float32), rng.standard_normal(s2).astype(np.float32)
        (ta, ka), (tb, kb) = _both(a), _both(b)
        for mode in ["use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"]:
            assert_same(kiln.cdist(ka, kb, p, compute_mode=mode), torch.cdist(ta, tb, p, compute_mode=mode),
                        rtol=1e-5, atol=1e-5)
    a = rng.standard_normal((3, 2)).astype(np.float32)
    ta, ka = _both(a)
    assert_same(kiln.cdist(ka, ka, p), torch.cdist(ta, ta, p), atol=1e-5)  # zero distances
    assert_same(kiln.cdist(ka[:0], ka, p), torch.cdist(ta[:0], ta, p))
    assert_same(kiln.cdist(ka[:, :0], ka[:, :0], p), torch.cdist(ta[:, :0], ta[:, :0], p))


def test_cdist_errors():
    _same_error(lambda lib: lib.cdist(lib.ones(3), lib.ones(3)))
    _same_error(lambda lib: lib.cdist(lib.ones(3, 2), lib.ones(3, 3)))
    _same_error(lambda lib: lib.cdist(lib.ones(3, 2, dtype=lib.int64), lib.ones(3, 2, dtype=lib.int64)))
    _same_error(lambda lib: lib.cdist(lib.ones(3, 2), lib.ones(3, 2), -1.0))
    _same_error(lambda lib: lib.cdist(lib.ones(3, 2), lib.ones(3, 2, dtype=lib.float64)))
    _same_error(lambda lib: (torch._C._VariableFunctions.cdist if lib is torch else kiln._functions.op("cdist"))(
        lib.ones(3, 2), lib.ones(3, 2), 2.0, 5))
    _same_error(lambda lib: lib.cdist(lib.ones(3, 2), lib.ones(3, 2), compute_mode="foo"), ValueError)


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, 3.0, INF])
def test_pdist(p):
    rng = np.random.default_rng(9)
    for shape in [(5, 3), (1, 3), (4, 0), (6, 2)]:
        a = rng.standard_normal(shape)
        t, k = _both(a)
        assert_same(kiln.pdist(k, p), torch.pdist(t, p), rtol=1e-10, atol=1e-12)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    t, k = _both(a)
    assert_same(kiln.pdist(k.t(), p), torch.pdist(t.t(), p), rtol=1e-5, atol=1e-6)
    _same_error(lambda lib: lib.pdist(lib.ones(3)))
    _same_error(lambda lib: lib.pdist(lib.ones(3, 2, dtype=lib.int64)))
    _same_error(lambda lib: lib.pdist(lib.ones(3, 2), -1.0))


def test_renorm():
    rng = np.random.default_rng(10)
    a = rng.standard_normal((4, 3, 5)).astype(np.float32)
    t, k = _both(a)
    for p in [1, 2, 3.5, INF]:
        for dim in [0, 1, -1]:
            for maxnorm in [0.0, 0.5, 2.0, 100.0]:
                assert_same(kiln.renorm(k, p, dim, maxnorm), torch.renorm(t, p, dim, maxnorm), rtol=1e-5)
    assert_same(k.transpose(0, 2).renorm(2, 1, 1.0), t.transpose(0, 2).renorm(2, 1, 1.0), rtol=1e-5)
    kk, tt = k.clone(), t.clone()
    kk.renorm_(2, 0, 1.5)
    tt.renorm_(2, 0, 1.5)
    assert_same(kk, tt, rtol=1e-5)
    out = kiln.empty(0)
    kiln.renorm(k, 2, 1, 0.7, out=out)
    assert_same(out, torch.renorm(t, 2, 1, 0.7), rtol=1e-5)
    _same_error(lambda lib: lib.renorm(lib.ones(3), 2, 0, 1))
    _same_error(lambda lib: lib.renorm(lib.ones(3, 2), 0, 0, 1))
    _same_error(lambda lib: lib.renorm(lib.ones(3, 2), 2, 0, -1))
    _same_error(lambda lib: lib.renorm(lib.ones(3, 2, dtype=lib.int64), 2, 0, 1))


# ---- scripts -------------------------------------------------------------------------------

SCRIPT = """
def f(x: Tensor, y: Tensor):
    m = torch.median(x, 1)
    k = torch.kthvalue(x, 2, 0, True)
    mo = x.mode()
    c = torch.cummax(x, 1)
    q = torch.quantile(x, 0.3, 1, interpolation="midpoint")
    lo, hi = torch.aminmax(x, dim=0)
    return (m.values, m.indices, k[0], k[1], mo.values, c.indices, q, lo, hi, torch.nanmedian(x),
            torch.logcumsumexp(x, 0), torch.diff(x, 2, 1, prepend=y), torch.cov(x), torch.corrcoef(x),
            torch.cdist(x, y), torch.pdist(x), torch.dist(x, y, 3.0), torch.renorm(x, 2.0, 0, 1.0),
            torch.nanquantile(x, torch.tensor([0.25, 0.75]), 0), torch.cummin(x, 0)[0], torch.median(x))
"""


def test_scripted_matches_torch():
    x = _ties((4, 6), np.float32, seed=11, nan=False)
    x[1, 2] = 0.5
    y = np.random.default_rng(12).standard_normal((4, 6)).astype(np.float32)
    theirs = torch.jit.CompilationUnit(SCRIPT).f(torch.from_numpy(x.copy()), torch.from_numpy(y.copy()))
    ours = kiln.compile(SCRIPT).f(kiln.from_numpy(x.copy()), kiln.from_numpy(y.copy()))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert_same(o, t, rtol=1e-5, atol=1e-5)


# ---- gradients -----------------------------------------------------------------------------

GRADIENTS = {
    "median": (lambda lib, x: lib.median(x), [(4, 5)]),
    "median_dim": (lambda lib, x: lib.median(x, 1).values, [(4, 5)]),
    "median_dim_keepdim": (lambda lib, x: lib.median(x, 0, True).values, [(4, 5)]),
    "nanmedian": (lambda lib, x: lib.nanmedian(x), [(3, 5)]),
    "nanmedian_dim": (lambda lib, x: lib.nanmedian(x, -1).values, [(3, 5)]),
    "kthvalue": (lambda lib, x: lib.kthvalue(x, 3, 1).values, [(4, 5)]),
    "mode": (lambda lib, x: lib.mode(x, 0).values, [(4, 5)]),
    "cummax": (lambda lib, x: lib.cummax(x, 1).values, [(4, 5)]),
    "cummin": (lambda lib, x: lib.cummin(x, 0).values, [(4, 5)]),
    "logcumsumexp": (lambda lib, x: lib.logcumsumexp(x, 1), [(4, 5)]),
    "quantile_linear": (lambda lib, x: lib.quantile(x, 0.3, 1), [(4, 5)]),
    "quantile_tensor_q": (lambda lib, x: lib.quantile(x, lib.tensor([0.2, 0.5, 0.9], dtype=x.dtype), 0, True),
                          [(4, 5)]),
    "quantile_all": (lambda lib, x: lib.quantile(x, 0.6, interpolation="midpoint"), [(4, 5)]),
    "quantile_lower": (lambda lib, x: lib.quantile(x, 0.4, -1, interpolation="lower"), [(4, 5)]),
    "nanquantile_nearest": (lambda lib, x: lib.nanquantile(x, 0.8, 0, interpolation="nearest"), [(4, 5)]),
    "dist": (lambda lib, x, y: lib.dist(x, y), [(3, 4), (4,)]),
    "dist_p3": (lambda lib, x, y: lib.dist(x, y, 3), [(3, 4), (3, 4)]),
    "dist_inf": (lambda lib, x, y: lib.dist(x, y, float("inf")), [(3, 4), (3, 4)]),
    "diff": (lambda lib, x: lib.diff(x, 2, 1), [(3, 5)]),
    "diff_prepend_append": (lambda lib, x, p, a: lib.diff(x, 2, 0, prepend=p, append=a), [(3, 4), (2, 4), (1, 4)]),
    "cov": (lambda lib, x: lib.cov(x), [(3, 6)]),
    "cov_weights": (lambda lib, x: lib.cov(x, correction=0, fweights=lib.from_numpy(np.array([1, 2, 0, 3, 1, 1])),
                                           aweights=lib.from_numpy(np.array([0.5, 1.0, 2.0, 0.1, 0.3, 1.5],
                                                                            np.float32))), [(3, 6)]),
    "cov_vector": (lambda lib, x: lib.cov(x), [(6,)]),
    "corrcoef": (lambda lib, x: lib.corrcoef(x), [(3, 6)]),
    "cdist": (lambda lib, x, y: lib.cdist(x, y), [(4, 3), (5, 3)]),
    "cdist_p1": (lambda lib, x, y: lib.cdist(x, y, 1.0), [(4, 3), (5, 3)]),
    "cdist_p3": (lambda lib, x, y: lib.cdist(x, y, 3.0), [(2, 4, 3), (5, 3)]),
    "cdist_p_half": (lambda lib, x, y: lib.cdist(x, y, 0.5), [(4, 3), (5, 3)]),
    "cdist_inf": (lambda lib, x, y: lib.cdist(x, y, float("inf")), [(4, 3), (5, 3)]),
    "cdist_mm": (lambda lib, x, y: lib.cdist(x, y, compute_mode="use_mm_for_euclid_dist"), [(2, 4, 3), (5, 3)]),
    "cdist_large": (lambda lib, x, y: lib.cdist(x, y), [(27, 3), (5, 3)]),
    "pdist": (lambda lib, x: lib.pdist(x), [(5, 3)]),
    "pdist_p1": (lambda lib, x: lib.pdist(x, 1.0), [(5, 3)]),
    "pdist_p3": (lambda lib, x: lib.pdist(x, 3.0), [(5, 3)]),
    "renorm": (lambda lib, x: lib.renorm(x, 2, 0, 1.0), [(4, 5)]),
    "renorm_p3": (lambda lib, x: lib.renorm(x, 3, 1, 0.8), [(4, 5)]),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_match_torch(name):
    fn, shapes = GRADIENTS[name]
    rng = np.random.default_rng(13)
    values = away_from_kinks([rng.standard_normal(s).astype(np.float32) for s in shapes])
    assert_gradients_match_torch(fn, values)
    if all(len(s) >= 2 for s in shapes):
        assert_gradients_match_torch(fn, values, noncontiguous=True)


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradcheck(name):
    fn, shapes = GRADIENTS[name]
    rng = np.random.default_rng(14)
    values = away_from_kinks([rng.standard_normal(s) for s in shapes])
    gradcheck(fn, values, tol=1e-4)


def test_gradient_ties_and_nan():
    # Ties and NaNs: the gradient goes where torch sends it.
    a = np.array([[1.0, 2.0, 2.0, NAN, 1.0], [3.0, 3.0, 3.0, 0.0, 0.0]], np.float32)
    for fn in [lambda lib, x: lib.median(x), lambda lib, x: lib.nanmedian(x), lambda lib, x: lib.cummax(x, 1)[0],
               lambda lib, x: lib.mode(x, 1)[0], lambda lib, x: lib.median(x, 1)[0]]:
        assert_gradients_match_torch(fn, [a])


def test_internal_ops():
    rng = np.random.default_rng(15)
    x1, x2 = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    (t1, k1), (t2, k2) = _both(x1), _both(x2)
    op = kiln._functions.op
    assert_same(op("_euclidean_dist")(k1, k2), torch.ops.aten._euclidean_dist(t1, t2), rtol=1e-10)
    assert_same(op("_cdist_forward")(k1, k2, 1.0, None), torch.ops.aten._cdist_forward(t1, t2, 1.0, None), rtol=1e-10)
    g = rng.standard_normal((4, 5))
    tg, kg = _both(g)
    for p in [1.0, 2.0, 3.0]:
        tc = torch.cdist(t1, t2, p)
        assert_same(op("_cdist_backward")(kg, k1, k2, p, kiln.from_numpy(tc.numpy().copy())),
                    torch.ops.aten._cdist_backward(tg, t1, t2, p, tc), rtol=1e-8)
    tp = torch.pdist(t1)
    gp = rng.standard_normal(tp.shape)
    assert_same(op("_pdist_forward")(k1, 2.0), torch.ops.aten._pdist_forward(t1, 2.0), rtol=1e-10)
    assert_same(op("_pdist_backward")(kiln.from_numpy(gp.copy()), k1, 2.0, kiln.from_numpy(tp.numpy().copy())),
                torch.ops.aten._pdist_backward(torch.from_numpy(gp.copy()), t1, 2.0, tp), rtol=1e-8)
    values, indices = torch.cummax(t1, 1)
    assert_same(op("cummaxmin_backward")(kg[:, :3], k1, kiln.from_numpy(indices.numpy().copy()), 1),
                torch.ops.aten.cummaxmin_backward(tg[:, :3], t1, indices, 1))
    m = torch.median(t1, 1)
    assert_same(op("value_selecting_reduction_backward")(kg[:, 0], 1, kiln.from_numpy(m.indices.numpy().copy()),
                                                         [4, 3], False),
                torch.ops.aten.value_selecting_reduction_backward(tg[:, 0], 1, m.indices, [4, 3], False))
    assert_same(op("_logcumsumexp")(k1, 0), torch.ops.aten._logcumsumexp(t1, 0), rtol=1e-10)
    assert_same(tuple(op("_aminmax")(k1)), tuple(torch.ops.aten._aminmax(t1)))
    assert_same(tuple(op("_aminmax")(k1, 1, True)), tuple(torch.ops.aten._aminmax(t1, 1, True)))
    values_k, indices_k = kiln.empty(4, 3, dtype=kiln.float64), kiln.empty(4, 3, dtype=kiln.int64)
    op("_cummin_helper")(k1, values_k, indices_k, 0)
    assert_same((values_k, indices_k), tuple(torch.cummin(t1, 0)))


SECOND_ORDER = {
    "median_dim": lambda lib, x: lib.median(x, 1).values ** 2,
    "cummax": lambda lib, x: lib.cummax(x, 1).values ** 2,
    "logcumsumexp": lambda lib, x: lib.logcumsumexp(x, 1),
    "renorm": lambda lib, x: lib.renorm(x, 2, 0, 1.0),
    "quantile": lambda lib, x: lib.quantile(x, 0.3, 1) ** 2,
    "cov": lambda lib, x: lib.cov(x),
    "diff": lambda lib, x: lib.diff(x, 2) ** 2,
    "value_selecting_reduction_backward": lambda lib, x: _value_selecting(lib, x),
}


def _value_selecting(lib, x):
    indices = lib.from_numpy(np.array([0, 2, 1, 4]))
    fn = torch.ops.aten.value_selecting_reduction_backward if lib is torch else \
        kiln._functions.op("value_selecting_reduction_backward")
    return fn(x.sum(1) ** 2, 1, indices, [4, 5], False) ** 2


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_gradients(name):
    a = np.random.default_rng(16).standard_normal((4, 5))

    def grads(lib):
        x = lib.from_numpy(a.copy()).requires_grad_(True)
        out = SECOND_ORDER[name](lib, x)
        g, = lib.autograd.grad([out.sum()], [x], create_graph=True)
        gg, = lib.autograd.grad([(g * g).sum()], [x])
        return g.detach().numpy(), gg.detach().numpy()

    for theirs, ours in zip(grads(torch), grads(kiln)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)


def test_scripted_gradient_matches_torch():
    src = """
def f(x: Tensor):
    return (torch.median(x, 1).values.sum() + torch.quantile(x, 0.25) + torch.cov(x).sum() + torch.cdist(x, x).sum()
            + torch.logcumsumexp(x, 0).sum() + torch.cummin(x, 1)[0].sum() + torch.diff(x).pow(2).sum()
            + torch.renorm(x, 2., 1, 0.5).sum() + torch.pdist(x).sum() + torch.dist(x, x * 0.5))
"""
    a = np.random.default_rng(17).standard_normal((4, 5))
    theirs = torch.jit.CompilationUnit(src).f
    ours = kiln.compile(src).f
    for _ in range(3):  # the executor's profiling and optimized runs
        xt, xk = torch.from_numpy(a.copy()).requires_grad_(True), kiln.from_numpy(a.copy()).requires_grad_(True)
        t, k = theirs(xt), ours(xk)
        t.backward()
        k.backward()
        assert float(k) == pytest.approx(float(t), rel=1e-12)
        np.testing.assert_allclose(xk.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_gradients_of_q_and_aweights():
    rng = np.random.default_rng(18)
    x = away_from_kinks([rng.standard_normal((3, 6))])[0]
    for name in ["quantile", "nanquantile"]:
        for interpolation in INTERPOLATIONS:
            def fn(lib, x, q):
                return getattr(lib, name)(x, q, 1, interpolation=interpolation)
            if interpolation == "linear":
                assert_gradients_match_torch(fn, [x.astype(np.float32), np.array([0.15, 0.45, 0.83], np.float32)])
            else:
                # Rounded ranks and midpoint's fixed weight: torch's graph does not reach q
                # (its gradient is None); kiln's formula gives zeros.
                q = kiln.from_numpy(np.array([0.15, 0.45, 0.83])).requires_grad_(True)
                fn(kiln, kiln.from_numpy(x.copy()), q).sum().backward()
                assert not q.grad.numpy().any()
            gradcheck(fn, [x, np.array([0.15, 0.45, 0.83])], tol=1e-4)
        assert_gradients_match_torch(lambda lib, x, q: getattr(lib, name)(x, q), [x.astype(np.float32),
                                                                                  np.array(0.35, np.float32)])
    for correction in [0, 1, 2]:
        def cov(lib, x, a):
            return lib.cov(x, correction=correction, fweights=lib.from_numpy(np.array([1, 2, 1, 3, 1, 2])),
                           aweights=a)
        a = np.abs(rng.standard_normal(6)) + 0.5
        assert_gradients_match_torch(cov, [x.astype(np.float32), a.astype(np.float32)])
        gradcheck(cov, [x, a], tol=1e-4)
        assert_gradients_match_torch(lambda lib, x, a: lib.cov(x, correction=correction, aweights=a),
                                     [x.astype(np.float32), a.astype(np.float32)])


def test_internal_ops_check_their_arguments():
    op = kiln._functions.op
    with pytest.raises(RuntimeError):
        op("_pdist_backward")(kiln.ones(2), kiln.ones(4, 3), 2.0, kiln.ones(6))
    with pytest.raises(RuntimeError):
        op("_cdist_backward")(kiln.ones(2, 2), kiln.ones(3, 2), kiln.ones(4, 2), 2.0, kiln.ones(3, 4))
    with pytest.raises(RuntimeError):
        op("_cummax_helper")(kiln.ones(3, 4), kiln.empty(2), kiln.empty(2, dtype=kiln.int64), 0)


@pytest.mark.parametrize("name", sorted(SELECTIONS))
def test_selection_long_lines(name):
    # Past std::sort's and std::nth_element's insertion-sort cutoff (16):
    # ties and NaNs still pick torch's index.
    for seed in range(3):
        a = _ties((3, 300), np.float64, seed, nan=seed > 0)
        t, k = _both(a)
        theirs = SELECTIONS[name](torch, t, 1, False)
        ours = SELECTIONS[name](kiln, k, 1, False)
        assert_same(ours.values, theirs.values)
        assert_same(ours.indices, theirs.indices)
