"""Derivatives of kiln's tensor operators (reductions, scans, sorts, shape,
indexing, linear algebra, copies) against torch 1.13: gradients on random
inputs, contiguous and stored transposed, a float64 finite-difference
gradcheck of each formula, and gradients at ties and duplicate indices,
where they must equal torch's exactly."""
import numpy as np
import pytest
import torch

import kiln
from autograd_check import arrays, assert_gradients_match_torch, away_from_kinks, gradcheck, run_backward, to_numpy


def _aten(name):
    """torch.<name>, or kiln's aten::<name> (also those Python does not expose, as _softmax)."""
    def get(lib):
        return getattr(torch, name) if lib is torch else kiln._functions.op(name)
    return get


# name: (function of (lib, *inputs), input shapes, positive inputs, kinked)
# Kinked ops (max, sort, ...) get distinct inputs away from ties for gradcheck.
OPS = {
    # ----- reductions -----
    "prod": (lambda m, a: a.prod(), [(3, 4)], False, False),
    "prod_dim": (lambda m, a: a.prod(1), [(3, 4)], False, False),
    "prod_dim_keepdim": (lambda m, a: a.prod(0, keepdim=True), [(3, 4)], False, False),
    "prod_dtype": (lambda m, a: a.prod(dtype=m.float64), [(3, 4)], False, False),
    "amax": (lambda m, a: a.amax(1), [(3, 4)], False, True),
    "amax_dims_keepdim": (lambda m, a: a.amax([0, 2], keepdim=True), [(3, 4, 2)], False, True),
    "amin": (lambda m, a: a.amin(-1), [(3, 4)], False, True),
    "amin_all": (lambda m, a: a.amin([0, 1]), [(3, 4)], False, True),
    "var": (lambda m, a: a.var(), [(3, 4)], False, False),
    "var_biased": (lambda m, a: a.var(unbiased=False), [(3, 4)], False, False),
    "var_dim": (lambda m, a: a.var(1), [(3, 4)], False, False),
    "var_dims_keepdim": (lambda m, a: a.var([0, 2], keepdim=True), [(3, 4, 2)], False, False),
    "var_correction": (lambda m, a: m.var(a, 0, correction=2), [(5, 4)], False, False),
    "std": (lambda m, a: a.std(), [(3, 4)], False, False),
    "std_dim": (lambda m, a: a.std(0, unbiased=False), [(3, 4)], False, False),
    "std_correction": (lambda m, a: m.std(a, [1], correction=0, keepdim=True), [(3, 4)], False, False),
    "var_mean": (lambda m, a: m.var_mean(a), [(3, 4)], False, False),
    "var_mean_dim": (lambda m, a: m.var_mean(a, 1, keepdim=True), [(3, 4)], False, False),
    "var_mean_correction": (lambda m, a: m.var_mean(a, [0], correction=0), [(3, 4)], False, False),
    "std_mean": (lambda m, a: m.std_mean(a), [(3, 4)], False, False),
    "std_mean_dim": (lambda m, a: m.std_mean(a, [1]), [(3, 4)], False, False),
    "std_mean_correction": (lambda m, a: m.std_mean(a, [1], correction=2), [(3, 5)], False, False),
    "norm": (lambda m, a: a.norm(), [(3, 4)], False, False),
    "norm_p1": (lambda m, a: a.norm(1), [(3, 4)], False, True),
    "norm_p3": (lambda m, a: a.norm(3), [(3, 4)], False, False),
    "norm_p1_5": (lambda m, a: a.norm(1.5), [(3, 4)], False, True),
    "norm_p0_5": (lambda m, a: a.norm(0.5), [(3, 4)], True, False),
    "norm_inf": (lambda m, a: a.norm(float("inf")), [(3, 4)], False, True),
    "norm_dim": (lambda m, a: a.norm(2, 1), [(3, 4)], False, False),
    "norm_dim_keepdim_p3": (lambda m, a: a.norm(3, [0], keepdim=True), [(3, 4)], False, False),
    "norm_dim_inf": (lambda m, a: a.norm(float("-inf"), 1), [(3, 4)], False, True),
    "logsumexp": (lambda m, a: a.logsumexp(1), [(3, 4)], False, False),
    "logsumexp_keepdim": (lambda m, a: a.logsumexp([0, 1], keepdim=True), [(3, 4)], False, False),
    "_log_softmax": (lambda m, a: _aten("_log_softmax")(m)(a, 1, False), [(3, 4)], False, False),
    "_softmax": (lambda m, a: _aten("_softmax")(m)(a, 0, False), [(3, 4)], False, False),
    "softmax_dtype": (lambda m, a: a.softmax(1, dtype=m.float64), [(3, 4)], False, False),
    "cumsum": (lambda m, a: a.cumsum(1), [(3, 4)], False, False),
    "cumsum_0d": (lambda m, a: a.sum().cumsum(0), [(3, 4)], False, False),
    "cumsum_dtype": (lambda m, a: a.cumsum(0, dtype=m.float64), [(3, 4)], False, False),
    "cumprod": (lambda m, a: a.cumprod(1), [(3, 4)], False, False),
    "cumprod_dim0": (lambda m, a: a.cumprod(0), [(3, 4)], False, False),
    "topk": (lambda m, a: a.topk(2, 1)[0], [(3, 4)], False, True),
    "topk_smallest": (lambda m, a: a.topk(3, 0, largest=False)[0], [(4, 3)], False, True),
    "sort": (lambda m, a: a.sort(1)[0], [(3, 4)], False, True),
    "sort_descending": (lambda m, a: a.sort(0, descending=True)[0], [(3, 4)], False, True),
    "sort_stable": (lambda m, a: a.sort(stable=True, dim=1)[0], [(3, 4)], False, True),
    "msort": (lambda m, a: a.msort(), [(3, 4)], False, True),
    "max_binary": (lambda m, a, b: m.max(a, b), [(3, 4), (3, 4)], False, True),
    "min_dim_keepdim": (lambda m, a: a.min(0, keepdim=True)[0], [(3, 4)], False, True),
}


@pytest.mark.parametrize("noncontiguous", [False, True], ids=["contiguous", "noncontiguous"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_gradients_match_torch(name, noncontiguous):
    fn, shapes, positive, _ = OPS[name]
    assert_gradients_match_torch(fn, arrays(shapes, positive), noncontiguous)


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck_float64(name):
    fn, shapes, positive, kinked = OPS[name]
    values = arrays(shapes, positive, dtype=np.float64)
    if kinked:
        values = away_from_kinks(values)
    gradcheck(fn, values)


def _exactly_as_torch(fn, values):
    """Gradients equal to torch's exactly (ties, zeros, duplicate indices)."""
    t_outs, t_grads, g = run_backward(torch, fn, values)
    k_outs, k_grads, _ = run_backward(kiln, fn, values, grad_arrays=g)
    for t_grad, k_grad in zip(t_grads, k_grads):
        assert (k_grad is None) == (t_grad is None)
        if t_grad is not None:
            np.testing.assert_allclose(to_numpy(k_grad), to_numpy(t_grad), rtol=1e-6, atol=1e-7)


_TIES = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 5.0, 0.0, 5.0]], dtype=np.float32)
_ZEROS = np.array([[1.5, 0.0, 2.0, 3.0], [0.0, 2.0, 0.0, 4.0], [1.0, 2.0, 0.5, -1.0]], dtype=np.float32)

# name: (function, inputs with ties, zeros or duplicates)
EXACT = {
    "max_ties": (lambda m, a: a.max(), [_TIES]),
    "min_ties": (lambda m, a: a.min(), [_TIES]),
    "max_dim_ties": (lambda m, a: a.max(1)[0], [_TIES]),
    "min_dim_ties": (lambda m, a: a.min(0)[0], [_TIES]),
    "amax_ties": (lambda m, a: a.amax(1), [_TIES]),
    "amin_ties": (lambda m, a: a.amin([0, 1]), [_TIES]),
    "max_binary_ties": (lambda m, a, b: m.max(a, b), [_TIES, _TIES[::-1].copy()]),
    "norm_inf_ties": (lambda m, a: a.norm(float("inf"), 1), [_TIES]),
    "norm_zero_rows": (lambda m, a: (a * 0).norm(2, 1), [_TIES]),
    "std_zero": (lambda m, a: (a * 0).std(1), [_TIES]),
    "sort_ties": (lambda m, a: a.sort(1)[0], [_TIES]),
    "sort_ties_descending": (lambda m, a: a.sort(1, descending=True)[0], [_TIES]),
    # (torch's topk orders tied values as its partial sort leaves them: rows where that is input order)
    "topk_ties": (lambda m, a: a.topk(2, 1)[0], [_TIES[[0, 2]].copy()]),
    "msort_ties": (lambda m, a: a.msort(), [_TIES.T.copy()]),
    "prod_zero": (lambda m, a: a[0].prod(), [_ZEROS]),
    "prod_two_zeros": (lambda m, a: a.prod(), [_ZEROS]),
    "prod_dim_zeros": (lambda m, a: a.prod(1), [_ZEROS]),
    "prod_dim0_zeros": (lambda m, a: a.prod(0, keepdim=True), [_ZEROS]),
    "cumprod_zeros": (lambda m, a: a.cumprod(1), [_ZEROS]),
    "cumprod_dim0_zeros": (lambda m, a: a.cumprod(0), [_ZEROS]),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact_at_ties_and_duplicates(name):
    fn, values = EXACT[name]
    _exactly_as_torch(fn, values)
