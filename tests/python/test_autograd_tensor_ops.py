"""Derivatives of kiln's tensor operators (reductions, scans, sorts, shape,
indexing, linear algebra, copies) against torch 1.13: gradients on random
inputs, contiguous and stored transposed, a float64 finite-difference
gradcheck of each formula, and gradients at ties and duplicate indices,
where they must equal torch's exactly."""
from typing import List

import numpy as np
import pytest
import torch

import kiln
from autograd_check import arrays, assert_gradients_match_torch, away_from_kinks, gradcheck, run_backward, to_numpy


def _aten(name):
    """torch.<name>, or kiln's aten::<name> (also those Python does not expose, as _softmax)."""
    def get(lib):
        if lib is torch:
            return getattr(torch, name) if hasattr(torch, name) else getattr(torch.ops.aten, name)
        return kiln._functions.op(name)
    return get


def _setitem(t, key, value):
    t[key] = value
    return t


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
    # ----- shape -----
    "view_as": (lambda m, a, b: a.contiguous().view_as(b.detach()), [(3, 4), (6, 2)], False, False),
    "reshape_as": (lambda m, a, b: a.reshape_as(b.detach()), [(3, 4), (2, 6)], False, False),
    "ravel": (lambda m, a: a.ravel(), [(3, 4)], False, False),
    "swapaxes": (lambda m, a: a.swapaxes(0, 2), [(2, 3, 4)], False, False),
    "swapdims": (lambda m, a: a.swapdims(-1, 0), [(2, 3, 4)], False, False),
    "numpy_T": (lambda m, a: a.T, [(2, 3, 4)], False, False),
    "mT": (lambda m, a: a.mT, [(2, 3, 4)], False, False),
    "adjoint": (lambda m, a: a.adjoint(), [(2, 3, 4)], False, False),
    "diagonal": (lambda m, a: a.diagonal(), [(3, 4)], False, False),
    "diagonal_offset": (lambda m, a: a.diagonal(-1, 2, 0), [(4, 3, 5)], False, False),
    "unfold": (lambda m, a: a.unfold(1, 2, 1), [(3, 5)], False, False),
    "unfold_step": (lambda m, a: a.unfold(0, 2, 3), [(8, 2)], False, False),
    "movedim": (lambda m, a: a.movedim(0, 2), [(2, 3, 4)], False, False),
    "movedim_list": (lambda m, a: a.movedim([0, 1], [2, 0]), [(2, 3, 4)], False, False),
    "moveaxis": (lambda m, a: a.moveaxis(-1, 0), [(2, 3, 4)], False, False),
    "narrow": (lambda m, a: a.narrow(1, 1, 2), [(3, 4)], False, False),
    "narrow_negative": (lambda m, a: a.narrow(0, -2, 2), [(3, 4)], False, False),
    "narrow_tensor": (lambda m, a: a.narrow(1, m.tensor(1), 3), [(3, 4)], False, False),
    "broadcast_tensors": (lambda m, a, b: m.broadcast_tensors(a, b) if m is torch else m.broadcast_tensors([a, b]), [(3, 1), (2, 1, 4)], False, False),
    "unflatten": (lambda m, a: a.unflatten(1, (2, 2)), [(3, 4)], False, False),
    "split_sizes": (lambda m, a: a.split([1, 3], 1), [(3, 4)], False, False),
    "split_int": (lambda m, a: a.split(2, 0), [(5, 4)], False, False),
    "unsafe_chunk": (lambda m, a: a.unsafe_chunk(2, 1), [(3, 4)], False, False),
    "unsafe_split": (lambda m, a: a.unsafe_split(2, 0)[1], [(5, 4)], False, False),
    "unsafe_split_with_sizes": (lambda m, a: m.unsafe_split_with_sizes(a, [3, 1], 1), [(3, 4)], False, False),
    "tensor_split": (lambda m, a: a.tensor_split(3, 1), [(3, 4)], False, False),
    "tensor_split_indices": (lambda m, a: a.tensor_split([1, 3], 0)[1], [(5, 4)], False, False),
    "tensor_split_tensor": (lambda m, a: a.tensor_split(m.tensor([1, 2]), 1), [(3, 4)], False, False),
    "as_strided": (lambda m, a: a.as_strided((2, 2), (1, 2), 1), [(3, 4)], False, False),
    "as_strided_overlap": (lambda m, a: a.contiguous().as_strided((3, 3), (1, 1)), [(3, 4)], False, False),
    "as_strided_of_slice": (lambda m, a: a[1:].as_strided((2, 2), (1, 2)), [(3, 4)], False, False),
    "repeat": (lambda m, a: a.repeat(2, 1, 3), [(3, 4)], False, False),
    "repeat_same_dims": (lambda m, a: a.repeat(2, 2), [(3, 4)], False, False),
    "select_scatter": (lambda m, a, b: m.select_scatter(a, b, 0, 1), [(3, 4), (4,)], False, False),
    "slice_scatter": (lambda m, a, b: m.slice_scatter(a, b, 1, 1, 4, 2), [(3, 5), (3, 2)], False, False),
    "flip": (lambda m, a: a.flip([0, 1]), [(3, 4)], False, False),
    "roll": (lambda m, a: a.roll(1), [(3, 4)], False, False),
    "roll_dims": (lambda m, a: a.roll([2, -1], [0, 1]), [(3, 4)], False, False),
    "tril": (lambda m, a: a.tril(), [(3, 4)], False, False),
    "triu": (lambda m, a: a.triu(1), [(3, 4)], False, False),
    "copy": (lambda m, a, b: a.clone().copy_(b), [(3, 4), (4,)], False, False),
    "copy_both": (lambda m, a, b: (a * 2).copy_(b.double()) * a, [(3, 4), (3, 4)], False, False),
    "t_": (lambda m, a: (a * 1).t_(), [(3, 4)], False, False),
    "transpose_": (lambda m, a: (a * 1).transpose_(0, 2), [(2, 3, 4)], False, False),
    "swapaxes_": (lambda m, a: (a * 1).swapaxes_(0, 1), [(2, 3, 4)], False, False),
    "swapdims_": (lambda m, a: (a * 1).swapdims_(1, 0), [(2, 3, 4)], False, False),
    "squeeze_": (lambda m, a: (a * 1).squeeze_(), [(3, 1, 4)], False, False),
    "squeeze_dim_": (lambda m, a: (a * 1).squeeze_(1), [(3, 1, 4)], False, False),
    "unsqueeze_": (lambda m, a: (a * 1).unsqueeze_(-1), [(3, 4)], False, False),
    "tril_": (lambda m, a: (a * 1).tril_(-1), [(3, 4)], False, False),
    "triu_": (lambda m, a: (a * 1).triu_(), [(3, 4)], False, False),
    "alias": (lambda m, a: _aten("alias")(m)(a) * 2, [(3, 4)], False, False),
    # ----- indexing -----
    "index_select": (lambda m, a: a.index_select(1, m.tensor([2, 0, 2])), [(3, 4)], False, False),
    "index_select_0d_index": (lambda m, a: a.index_select(0, m.tensor(1)), [(3, 4)], False, False),
    "gather": (lambda m, a: a.gather(1, m.tensor([[0, 0], [1, 3], [2, 2]])), [(3, 4)], False, False),
    "take": (lambda m, a: a.take(m.tensor([[0, 5], [-1, 5]])), [(3, 4)], False, False),
    "scatter_src": (lambda m, a, b: a.scatter(0, m.tensor([[0, 2, 1, 0], [1, 1, 2, 2]]), b), [(3, 4), (2, 4)], False,
                    False),
    "scatter_value": (lambda m, a: a.scatter(1, m.tensor([[0], [2], [3]]), 1.5), [(3, 4)], False, False),
    "scatter_add": (lambda m, a, b: a.scatter_add(0, m.tensor([[0, 2, 1, 0], [0, 0, 1, 2]]), b), [(3, 4), (2, 4)],
                    False, False),
    "index_add": (lambda m, a, b: a.index_add(1, m.tensor([0, 2, 0]), b, alpha=2.0), [(3, 4), (3, 3)], False, False),
    "index_fill": (lambda m, a: a.index_fill(1, m.tensor([0, 2, 2]), -1.0), [(3, 4)], False, False),
    "index_fill_tensor": (lambda m, a, v: a.index_fill(0, m.tensor([1, 1]), v.sum()), [(3, 4), (2,)], False, False),
    "masked_fill": (lambda m, a: a.masked_fill(m.tensor([True, False, True, False]), 0.5), [(3, 4)], False, False),
    "masked_fill_tensor": (lambda m, a, v: a.masked_fill(m.tensor([[True], [False], [True]]), v.sum()),
                           [(3, 4), (2,)], False, False),
    "masked_fill_broadcast": (lambda m, a: a.masked_fill(m.tensor([[True, False, True, False]] * 3), 0.5),
                              [(3, 1)], False, False),
    "masked_select": (lambda m, a: a.masked_select(m.tensor([True, False, True, True])), [(3, 4)], False, False),
    "masked_select_broadcast": (lambda m, a: a.masked_select(m.tensor([[True], [False], [True]])), [(3, 1, 2)],
                                False, False),
    "index_tensor_mask": (lambda m, a: a[a.detach() > 0], [(3, 4)], False, False),
    "index_two": (lambda m, a: a[m.tensor([0, 2, 0]), m.tensor([1, 1, 3])], [(3, 4)], False, False),
    "index_put": (lambda m, a, v: a.index_put((m.tensor([0, 2]),), v), [(3, 4), (4,)], False, False),
    "index_put_accumulate": (lambda m, a, v: a.index_put((m.tensor([0, 2, 0]), m.tensor([1, 1, 1])), v, True),
                             [(3, 4), (3,)], False, False),
    "index_put_mask": (lambda m, a, v: a.index_put((m.tensor([True, False, True]),), v), [(3, 4), (1, 4)], False,
                       False),
    "index_put_": (lambda m, a, v: (a * 1).index_put_((m.tensor([1]), m.tensor([2])), v), [(3, 4), (1,)], False,
                   False),
    "setitem": (lambda m, a, v: _setitem(a * 1, (slice(None), m.tensor([0, 3])), v), [(3, 4), (3, 2)], False, False),
    "scatter_": (lambda m, a, b: (a * 1).scatter_(1, m.tensor([[3, 1], [0, 2], [2, 1]]), b), [(3, 4), (3, 2)], False,
                 False),
    "scatter_value_": (lambda m, a: (a * 1).scatter_(1, m.tensor([[3, 1]]), 2.0), [(3, 4)], False, False),
    "scatter_add_": (lambda m, a, b: (a * 1).scatter_add_(1, m.tensor([[3, 3], [0, 0], [2, 1]]), b), [(3, 4), (3, 2)],
                     False, False),
    "index_add_": (lambda m, a, b: (a * 1).index_add_(0, m.tensor([2, 2]), b), [(3, 4), (2, 4)], False, False),
    "index_fill_": (lambda m, a: (a * 1).index_fill_(0, m.tensor([2]), 3.0), [(3, 4)], False, False),
    "index_fill_tensor_": (lambda m, a, v: (a * 1).index_fill_(1, m.tensor([2, 0]), v.sum()), [(3, 4), (2,)], False,
                           False),
    "masked_fill_": (lambda m, a: (a * 1).masked_fill_(m.tensor([True, False, True, False]), 0.5), [(3, 4)], False,
                     False),
    "masked_fill_tensor_": (lambda m, a, v: (a * 1).masked_fill_(m.tensor([True, False, True, False]), v.sum()),
                            [(3, 4), (2,)], False, False),
    # ----- linear algebra -----
    "baddbmm": (lambda m, c, a, b: m.baddbmm(c, a, b), [(3, 5), (2, 3, 4), (2, 4, 5)], False, False),
    "baddbmm_scaled": (lambda m, c, a, b: m.baddbmm(c, a, b, beta=0.5, alpha=-2.0), [(2, 3, 5), (2, 3, 4), (2, 4, 5)],
                       False, False),
    "mv": (lambda m, a, v: a.mv(v), [(3, 4), (4,)], False, False),
    "addmv": (lambda m, c, a, v: m.addmv(c, a, v), [(1,), (3, 4), (4,)], False, False),
    "addmv_scaled": (lambda m, c, a, v: m.addmv(c, a, v, beta=2.0, alpha=0.5), [(3,), (3, 4), (4,)], False, False),
    "dot": (lambda m, a, b: a.dot(b), [(4,), (4,)], False, False),
    "vdot": (lambda m, a, b: a.vdot(b), [(4,), (4,)], False, False),
    "outer": (lambda m, a, b: a.outer(b), [(3,), (4,)], False, False),
    "ger": (lambda m, a, b: a.ger(b), [(3,), (4,)], False, False),
    "mm_t": (lambda m, a, b: a.mm(b.t()), [(3, 4), (5, 4)], False, False),
    "matmul_4d": (lambda m, a, b: a.matmul(b), [(2, 1, 3, 4), (3, 4, 2)], False, False),
    "addmm_": (lambda m, c, a, b: (c * 1).addmm_(a, b, beta=0.5), [(3, 5), (3, 4), (4, 5)], False, False),
    "baddbmm_": (lambda m, c, a, b: (c * 1).baddbmm_(a, b, alpha=3.0), [(2, 3, 5), (2, 3, 4), (2, 4, 5)], False,
                 False),
    "addmv_": (lambda m, c, a, v: (c * 1).addmv_(a, v), [(3,), (3, 4), (4,)], False, False),
    "copy_scalar_then_mul": (lambda m, a: (a * 2).fill_(2.0) * a, [(3, 4)], False, False),
    # ----- copies, conversions, fills -----
    "fill_": (lambda m, a: (a * 2).fill_(1.5) + a, [(3, 4)], False, False),
    "fill_tensor": (lambda m, a, v: (a * 2).fill_(v.sum()) * a, [(3, 4), (2,)], False, False),
    "zero_": (lambda m, a: (a * 2).zero_() + a * a, [(3, 4)], False, False),
    "uniform_": (lambda m, a: (a * 2).uniform_() * 0 + a, [(3, 4)], False, False),
    "normal_": (lambda m, a: (a * 2).normal_() * 0 + a, [(3, 4)], False, False),
    "type_as": (lambda m, a, b: a.type_as(b.detach().double()), [(3, 4), (2,)], False, False),
    "to_dtype_layout": (lambda m, a: a.to(dtype=m.float64), [(3, 4)], False, False),
    "to_other": (lambda m, a, b: a.to(b.detach().double()), [(3, 4), (2,)], False, False),
    "to_device": (lambda m, a: a.to("cpu", m.float64), [(3, 4)], False, False),
    "as_tensor": (lambda m, a: _aten("as_tensor")(m)(a * 1, dtype=m.float64), [(3, 4)], False, False),
    "contiguous_t": (lambda m, a: a.t().contiguous(), [(3, 4)], False, False),
    # ----- issue 21's last forward ops -----
    "cpu": (lambda m, a: (a * 2).cpu(), [(3, 4)], False, False),
    "mH": (lambda m, a: _aten("mH")(m)(a) * 1, [(2, 3, 4)], False, False),
    "matrix_H": (lambda m, a: _aten("matrix_H")(m)(a) * 1, [(3, 4)], False, False),
    "tensordot": (lambda m, a, b: _aten("tensordot")(m)(a, b, [[1, 2], [1, 0]]) if m is torch
                  else kiln._functions.op("tensordot")(a, b, [1, 2], [1, 0]), [(2, 3, 4), (4, 3, 5)], False, False),
    "tensordot_none": (lambda m, a, b: _aten("tensordot")(m)(a, b, [[], []]) if m is torch
                       else kiln._functions.op("tensordot")(a, b, [], []), [(2, 3), (4,)], False, False),
}


# torch 1.13's masked_select backward scatters into zeros_like(self) in memory
# order: for a transposed input its gradient is transposed (kiln's is right,
# as the float64 gradcheck shows).
_TORCH_WRONG_NONCONTIGUOUS = {"masked_select", "masked_select_broadcast"}


@pytest.mark.parametrize("noncontiguous", [False, True], ids=["contiguous", "noncontiguous"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_gradients_match_torch(name, noncontiguous):
    fn, shapes, positive, _ = OPS[name]
    if noncontiguous and name in _TORCH_WRONG_NONCONTIGUOUS:
        pytest.skip("torch 1.13's gradient is wrong for this input stored transposed")
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
    "index_put_duplicates": (lambda m, a, v: a.index_put((m.tensor([0, 2, 0]),), v), [_TIES, _TIES[:1].copy()]),
    "gather_duplicates": (lambda m, a: a.gather(0, m.tensor([[0, 0, 0, 0], [2, 2, 0, 0]])), [_TIES]),
    "scatter_duplicates": (lambda m, a, b: a.scatter(1, m.tensor([[0, 0], [1, 1], [3, 3]]), b), [_TIES, _TIES[:, :2].copy()]),
    "index_select_duplicates": (lambda m, a: a.index_select(0, m.tensor([1, 1, 1])), [_TIES]),
    "take_duplicates": (lambda m, a: a.take(m.tensor([3, 3, -9])), [_TIES]),
    "index_duplicates": (lambda m, a: a[m.tensor([2, 2]), m.tensor([1, 1])], [_TIES]),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact_at_ties_and_duplicates(name):
    fn, values = EXACT[name]
    _exactly_as_torch(fn, values)


def test_non_differentiable_views():
    a = kiln.ones(3, 4, requires_grad=True)
    assert not a.view(kiln.int32).requires_grad
    assert not a.detach().requires_grad


# Scalars, empty slices and other edges of the formulas.
EDGES = {
    "std_one_per_row": lambda m, a: a[:, :1].std(1),
    "sort_0d": lambda m, a: a.sum().sort()[0],
    "topk_0d": lambda m, a: a.sum().topk(1)[0],
    "amax_0d": lambda m, a: a.sum().amax(),
    "prod_0d": lambda m, a: a.sum().prod(),
    "prod_dim_0d": lambda m, a: a.sum().prod(0),
    "cumprod_0d": lambda m, a: a.sum().cumprod(0),
    "logsumexp_0d": lambda m, a: a.sum().logsumexp(0),
    "norm_0d": lambda m, a: a.sum().norm(),
    "take_0d": lambda m, a: a.sum().take(m.tensor([0, 0])),
    "narrow_empty": lambda m, a: a.narrow(1, 4, 0),
    "repeat_0d": lambda m, a: a.sum().repeat(2, 3),
    "diagonal_3d": lambda m, a: a.reshape(2, 2, 3).diagonal(0, -1, 0),
    "unfold_0d": lambda m, a: a.sum().unfold(0, 1, 1),
    "roll_flat": lambda m, a: a.roll(-5),
    "msort_1d": lambda m, a: a[0].msort(),
    "prod_empty": lambda m, a: a[:, :0].prod(1),
    "cumsum_empty": lambda m, a: a[:0].cumsum(0),
    "amax_all_dims": lambda m, a: a.amax([]),
    "norm_all_dims": lambda m, a: a.norm(2, []),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edges_match_torch(name):
    assert_gradients_match_torch(EDGES[name], arrays([(3, 4)]))


# Second derivatives through the formulas (the formulas are built from
# differentiable operators), where kiln's engine can create graphs.
SECOND = {
    "var_norm": lambda m, a: (a.var(1) * a.norm(3, 1)).sum(),
    "prod_cumprod": lambda m, a: a.cumprod(1).sum() + a.prod(0).sum(),
    "logsumexp_std": lambda m, a: a.logsumexp(1).sum() * a.std(),
    "index_ops": lambda m, a: (a.index_select(1, m.tensor([0, 0, 2])) ** 2).sum() + (a.gather(0, m.tensor([[1, 2]])) ** 3).sum(),
    "shape_ops": lambda m, a: (a.unfold(1, 2, 1) ** 2).sum() + (a.diagonal() ** 3).sum() + (a.repeat(2, 1).flip(0) ** 2).sum(),
}


@pytest.mark.parametrize("name", sorted(SECOND))
def test_second_derivatives_match_torch(name):
    x = arrays([(3, 4)], dtype=np.float64)[0]
    hess = []
    for lib in (torch, kiln):
        a = lib.from_numpy(x.copy())
        a.requires_grad_(True)
        g, = lib.autograd.grad(SECOND[name](lib, a), [a], create_graph=True)
        assert g.requires_grad
        h, = lib.autograd.grad((g * g).sum(), [a])
        hess.append(to_numpy(h))
    np.testing.assert_allclose(hess[1], hess[0], rtol=1e-6, atol=1e-8)


GRAD_FN_NAMES = {
    "prod": lambda m, a: a.prod(), "prod_dim": lambda m, a: a.prod(1), "amax": lambda m, a: a.amax(1),
    "var": lambda m, a: a.var(), "std_dim": lambda m, a: a.std(1), "var_mean": lambda m, a: m.var_mean(a)[0],
    "logsumexp": lambda m, a: a.logsumexp(1), "cumsum": lambda m, a: a.cumsum(1), "cumprod": lambda m, a: a.cumprod(1),
    "topk": lambda m, a: a.topk(2)[0], "sort": lambda m, a: a.sort()[0], "sort_stable": lambda m, a: a.sort(stable=True)[0],
    "view_as": lambda m, a: a.view_as(a), "swapaxes": lambda m, a: a.swapaxes(0, 1), "T": lambda m, a: a.T,
    "diagonal": lambda m, a: a.diagonal(), "unfold": lambda m, a: a.unfold(1, 2, 1), "narrow": lambda m, a: a.narrow(1, 0, 2),
    "split": lambda m, a: a.split([1, 3], 1)[0], "as_strided": lambda m, a: a.as_strided((2, 2), (1, 2)),
    "repeat": lambda m, a: a.repeat(2, 1), "flip": lambda m, a: a.flip(0), "roll": lambda m, a: a.roll(1),
    "tril": lambda m, a: a.tril(), "copy_": lambda m, a: (a * 1).copy_(a), "t_": lambda m, a: (a * 1).t_(),
    "squeeze_": lambda m, a: (a * 1).squeeze_(), "unsqueeze_": lambda m, a: (a * 1).unsqueeze_(0),
    "index_select": lambda m, a: a.index_select(0, m.tensor([0])), "gather": lambda m, a: a.gather(0, m.tensor([[0]])),
    "take": lambda m, a: a.take(m.tensor([0])), "scatter": lambda m, a: a.scatter(0, m.tensor([[0]]), a),
    "scatter_add": lambda m, a: a.scatter_add(0, m.tensor([[0]]), a),
    "index_fill": lambda m, a: a.index_fill(0, m.tensor([0]), 1.0), "masked_fill": lambda m, a: a.masked_fill(a > 0, 1.0),
    "masked_select": lambda m, a: a.masked_select(a > 0), "index_put_": lambda m, a: (a * 1).index_put_((m.tensor([0]),), a[0]),
    "baddbmm": lambda m, a: m.baddbmm(a, a[None], a.t()[None]), "mv": lambda m, a: a.mv(a[0]),
    "dot": lambda m, a: a[0].dot(a[1]), "outer": lambda m, a: a[0].outer(a[1]), "fill_": lambda m, a: (a * 1).fill_(1.0),
    "fill_tensor": lambda m, a: (a * 1).fill_(a[0, 0]), "zero_": lambda m, a: (a * 1).zero_(),
}


@pytest.mark.parametrize("name", sorted(GRAD_FN_NAMES))
def test_grad_fn_names(name):
    names = [GRAD_FN_NAMES[name](lib, lib.ones(4, 4, requires_grad=True)).grad_fn.name() for lib in (torch, kiln)]
    assert names[1] == names[0]


def test_sorted_tensor_list_keeps_each_tensors_history():
    """aten::sorted.Tensor returns its input tensors reordered: as in torch,
    autograd records nothing and each keeps its own grad_fn (or stays a leaf)."""
    fn = kiln.jit.script(_sorted_sum)
    values = [5.0, -1.0, 2.0]
    grads = {}
    for lib in (kiln, torch):
        xs = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in values]
        out = (fn if lib is kiln else torch.jit.script(_sorted_sum))(xs)
        out.backward()
        assert all(x.is_leaf for x in xs)
        grads[lib] = [to_numpy(x.grad) for x in xs]
    np.testing.assert_allclose(grads[kiln], grads[torch])


def _sorted_sum(xs: List[torch.Tensor]) -> torch.Tensor:
    ys = sorted(xs)
    return ys[0] * 1.0 + ys[1] * 2.0 + ys[2] * 3.0 * ys[2]
