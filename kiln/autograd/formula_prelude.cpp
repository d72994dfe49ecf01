#include "kiln/autograd/formula_prelude.h"

namespace kiln::autograd {

const char* formulaPrelude() {
  return R"(
def _reversed_cumsum(x: Tensor, dim: int) -> Tensor:
    return x.flip([dim]).cumsum(dim).flip([dim])

def _mean_backward(grad: Tensor, self: Tensor, dim: Optional[List[int]], keepdim: bool) -> Tensor:
    return _sum_backward(grad, self.size(), dim, keepdim) / _reduced_count(self.size(), dim)

def _var_backward(grad: Tensor, self: Tensor, dim: Optional[List[int]], keepdim: bool, correction: Optional[int]) -> Tensor:
    c = 1 if correction is None else correction
    # A tensor divided by the count: no ZeroDivisionError when there are no more
    # elements than the correction; the gradient is then inf or nan, as torch's.
    return _sum_backward(grad, self.size(), dim, keepdim) * (self - self.mean(dim, True)) * 2.0 / (_reduced_count(self.size(), dim) - c)

def _std_backward(grad: Tensor, self: Tensor, result: Tensor, dim: Optional[List[int]], keepdim: bool, correction: Optional[int]) -> Tensor:
    # d std = d var / (2 std), 0 where std is 0.
    return _var_backward((grad / (result * 2)).masked_fill(result == 0, 0), self, dim, keepdim, correction)

def _prod_backward_with_zeros(grad: Tensor, x: Tensor, d: int) -> Tensor:
    # Where x holds zeros: the product of the others, as the exclusive
    # cumulative products from both ends along d.
    n = x.size(d) - 1
    before = torch.cat([torch.ones_like(x.narrow(d, 0, 1)), x.narrow(d, 0, n)], d).cumprod(d)
    after = torch.cat([torch.ones_like(x.narrow(d, 0, 1)), x.flip([d]).narrow(d, 0, n)], d).cumprod(d).flip([d])
    return grad * before * after

def _prod_backward(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    if self.dim() == 0:
        return grad
    if not bool((self == 0).any()):
        return grad * result / self
    return _prod_backward_with_zeros(grad, self.reshape(-1), 0).reshape(self.size())

def _prod_dim_backward(grad: Tensor, self: Tensor, result: Tensor, dim: int, keepdim: bool) -> Tensor:
    if self.dim() == 0:
        return grad
    if not keepdim:
        grad = grad.unsqueeze(dim)
        result = result.unsqueeze(dim)
    if not bool((self == 0).any()):
        return grad * result / self
    return _prod_backward_with_zeros(grad, self, dim)

def _amax_backward(grad: Tensor, self: Tensor, result: Tensor, dim: List[int], keepdim: bool) -> Tensor:
    # Shared evenly by the elements equal to the result.
    mask = self == _sum_backward(result, self.size(), dim, keepdim)
    return _sum_backward(grad, self.size(), dim, keepdim) * mask / mask.sum(dim, True)

def _norm_backward(grad: Tensor, self: Tensor, result: Tensor, p: float, dim: Optional[List[int]], keepdim: bool) -> Tensor:
    g = grad
    r = result
    if dim is not None:
        g = _sum_backward(grad, self.size(), dim, keepdim)
        r = _sum_backward(result, self.size(), dim, keepdim)
    if p == 0.0:
        return torch.zeros_like(self)
    if p == 1.0:
        return self.sign() * g
    if p == 2.0:
        return self * (g / r).masked_fill(r == 0, 0)
    if abs(p) > 1.7e308:
        # inf and -inf: shared evenly by the elements of that magnitude.
        mask = self.abs() == r
        if dim is None:
            return self.sign() * g * mask / mask.sum()
        return self.sign() * g * mask / mask.sum(dim, True)
    if p < 1.0:
        return self.sign() * self.abs().pow(p - 1.0).masked_fill(self == 0, 0) * g * r.pow(1.0 - p)
    if p < 2.0:
        return self.sign() * self.abs().pow(p - 1.0) * (g / r.pow(p - 1.0)).masked_fill(r == 0, 0)
    return self * self.abs().pow(p - 2.0) * (g / r.pow(p - 1.0)).masked_fill(r == 0, 0)

def _cumprod_backward(grad: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    if self.dim() == 0 or self.numel() == 0:
        return grad
    # Before the first zero of a slice: the reversed cumulative sum of
    # grad * result over self; at the first zero, the products with it left
    # out; after it, 0.
    zeros_before = (self == 0).cumsum(dim)
    first_zero = (self == 0).logical_and(zeros_before == 1)
    before = _reversed_cumsum(grad * result, dim) / self
    at = _reversed_cumsum(grad * self.masked_fill(first_zero, 1).cumprod(dim), dim)
    return torch.where(zeros_before == 0, before, torch.where(first_zero, at, torch.zeros_like(grad)))

def _nll_loss_nd_backward(grad: Tensor, self: Tensor, target: Tensor, weight: Optional[Tensor], reduction: int, ignore_index: int) -> Tensor:
    # As torch's nll_loss_nd: nll_loss_backward for 1 or 2 dims, else
    # nll_loss2d_backward on the (N, C, 1, -1) view.
    if self.dim() < 3:
        total_weight = torch.nll_loss_forward(self, target, weight, reduction, ignore_index)[1]
        return torch.nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight)
    view = self.reshape([self.size(0), self.size(1), 1, -1])
    target_view = target.reshape([self.size(0), 1, -1])
    g = grad if reduction != 0 else grad.reshape([self.size(0), 1, -1])
    total_weight = torch.nll_loss2d_forward(view, target_view, weight, reduction, ignore_index)[1]
    return torch.nll_loss2d_backward(g, view, target_view, weight, reduction, ignore_index, total_weight).reshape(self.size())

def _class_weighted(x: Tensor, weight: Optional[Tensor], self: Tensor, d: int) -> Tensor:
    # x times the class weight viewed along class dim d (x when there is none).
    if weight is None:
        return x
    return x * weight.reshape([-1] + [1 for _ in range(self.dim() - d - 1)])

def _cross_entropy_probability_scale(grad: Tensor, self: Tensor, reduction: int, d: int) -> Tensor:
    if reduction == 0:
        return grad.unsqueeze(d)
    if reduction == 1:
        return grad / (self.numel() // self.size(d))
    return grad

def _cross_entropy_backward(grad: Tensor, self: Tensor, target: Tensor, weight: Optional[Tensor], reduction: int, ignore_index: int, label_smoothing: float) -> Tensor:
    d = 1 if self.dim() >= 2 else 0
    # g, the gradient of the loss with respect to log_softmax(self).
    if self.size() != target.size():
        # Class indices: nll's, plus label smoothing's term.
        g = _nll_loss_nd_backward(grad, self, target, weight, reduction, ignore_index)
        if label_smoothing != 0:
            kept = target != ignore_index
            scale = grad
            if reduction == 1:
                if weight is not None:
                    scale = grad / weight.index_select(0, target.masked_select(kept)).sum()
                else:
                    scale = grad / kept.sum()
            smooth = (-_class_weighted((kept * scale).unsqueeze(d), weight, self, d)).expand_as(self)
            g = (1 - label_smoothing) * g + (label_smoothing / self.size(d)) * smooth
    else:
        # Class probabilities: -target * weight.
        t = target * (1 - label_smoothing) + label_smoothing / self.size(d) if label_smoothing > 0 else target
        g = -_class_weighted(t, weight, self, d) * _cross_entropy_probability_scale(grad, self, reduction, d)
    # log_softmax's backward.
    return g - self.softmax(d) * g.sum(d, keepdim=True)

def _cross_entropy_backward_target(grad: Tensor, self: Tensor, weight: Optional[Tensor], reduction: int, label_smoothing: float) -> Tensor:
    d = 1 if self.dim() >= 2 else 0
    return -_class_weighted(self.log_softmax(d), weight, self, d) * _cross_entropy_probability_scale(grad, self, reduction, d) * (1 - label_smoothing)

def _evenly_distribute_nan(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    # Shared by the elements equal to the result; a NaN result by the NaNs.
    mask = (self == result).logical_or(self.isnan().logical_and(result.isnan()))
    return mask * (grad / mask.sum())

def _value_selecting_reduction_double_backward(grad: Tensor, dim: int, indices: Tensor, sizes: List[int], keepdim: bool) -> Tensor:
    if not keepdim and len(sizes) > 0:
        return grad.gather(dim, indices.unsqueeze(dim)).squeeze(dim)
    return grad.gather(dim, indices)

def _logcumsumexp_backward(grad: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    if grad.dim() == 0 or grad.numel() == 0:
        return grad
    # grad's positive and negative parts in log space (the dtype's lowest
    # value standing for none), each through the reversed logcumsumexp.
    lowest = -3.4028234663852886e+38 if grad.dtype == torch.float32 else -1.7976931348623157e+308
    log_abs = grad.abs().log()
    positive = torch.where(grad > 0, log_abs, torch.full_like(grad, lowest))
    negative = torch.where(grad < 0, log_abs, torch.full_like(grad, lowest))
    out_positive = ((positive - result).flip([dim]).logcumsumexp(dim).flip([dim]) + self).exp()
    out_negative = ((negative - result).flip([dim]).logcumsumexp(dim).flip([dim]) + self).exp()
    return out_positive - out_negative

def _diff_backward(grad: Tensor, self: Tensor, n: int, dim: int, prepend: Optional[Tensor], append: Optional[Tensor], part: int) -> Tensor:
    # The gradient of part 0 (prepend), 1 (self) or 2 (append) of
    # diff(cat([prepend, self, append], dim), n): n steps of the adjoint of
    # one difference, which pads with a zero on each side and subtracts.
    d = dim if dim >= 0 else dim + self.dim()
    before = 0
    after = 0
    if n > 0 and prepend is not None:
        before = prepend.size(d)
    if n > 0 and append is not None:
        after = append.size(d)
    if n == 0 and part == 0 and prepend is not None:
        return torch.zeros_like(prepend)  # diff with n = 0 is a copy of self alone
    if n == 0 and part == 2 and append is not None:
        return torch.zeros_like(append)
    length = self.size(d) + before + after
    g = grad
    for _ in range(min(n, length)):
        shape = g.size()
        shape[d] = 1
        zero = torch.zeros(shape, dtype=g.dtype)
        g = torch.cat([zero, g], d) - torch.cat([g, zero], d)
    if part == 0:
        return g.narrow(d, 0, before)
    if part == 2:
        return g.narrow(d, before + self.size(d), after)
    return g.narrow(d, before, self.size(d))

def _cov_backward(grad: Tensor, self: Tensor, correction: int, fweights: Optional[Tensor], aweights: Optional[Tensor]) -> Tensor:
    # c = xc diag(w) xc^T / f with xc = x - x w / sum(w): d xc = (g + g^T) xc diag(w) / f,
    # then through the weighted mean.
    x = self.reshape([1, -1]) if self.dim() < 2 else self
    w = torch.ones([x.size(1)], dtype=x.dtype)
    if fweights is not None:
        w = w * fweights
    if aweights is not None:
        w = w * aweights
    w_sum = w.sum()
    factor = w_sum - correction
    if aweights is not None and correction != 0:
        factor = w_sum - correction * (w * aweights).sum() / w_sum
    if bool(factor <= 0):
        factor = factor * 0
    centered = x - (x * w).sum(1, True) / w_sum
    g = grad.reshape([x.size(0), x.size(0)])
    g_centered = (g + g.t()).mm(centered * w) / factor
    return (g_centered - g_centered.sum(1, True) * w / w_sum).reshape(self.size())

def _corrcoef_backward(grad: Tensor, self: Tensor, result: Tensor) -> Tensor:
    # corrcoef = clip(c / s_i / s_j, -1, 1) with s = sqrt(diag(c)), c = cov(self).
    c = torch.cov(self)
    if c.dim() == 0:
        g_c = grad / c - grad * c / (c * c)
    else:
        s = c.diagonal().sqrt()
        r = c / s.reshape([-1, 1]) / s.reshape([1, -1])
        g_r = grad * (r >= -1).logical_and(r <= 1)
        g_s = -((g_r * r).sum(1) + (g_r * r).sum(0)) / s
        g_c = g_r / s.reshape([-1, 1]) / s.reshape([1, -1]) + torch.eye(c.size(0), dtype=c.dtype) * (g_s / (2 * s))
    return _cov_backward(g_c, self, 1, None, None)

def _euclidean_dist_grad_x1(grad: Tensor, x1: Tensor, x2: Tensor, result: Tensor) -> Tensor:
    ratio = (grad / result).masked_fill(result == 0, 0)
    return x1 * ratio.sum(-1, True) - ratio.matmul(x2)

def _cdist_grad_x1(grad: Tensor, x1: Tensor, x2: Tensor, p: float, compute_mode: Optional[int], result: Tensor) -> Tensor:
    # Along the path cdist's forward took: _euclidean_dist for p = 2 when
    # asked (mode 1) or by default past 25 rows, else _cdist_forward.
    mode = 0 if compute_mode is None else compute_mode
    r1 = x1.size(-2)
    r2 = x2.size(-2)
    if x1.numel() > 0 and x2.numel() > 0 and p == 2.0 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        return _euclidean_dist_grad_x1(grad, x1, x2, result)
    return torch._cdist_backward(grad.contiguous(), x1, x2, p, result)

def _renorm_backward(grad: Tensor, self: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    d = dim if dim >= 0 else dim + self.dim()
    others: List[int] = []
    for i in range(self.dim()):
        if i != d:
            others.append(i)
    norm = self.norm(p, others, True)
    norm_grad = _norm_backward((self * grad).sum(others, True), self, norm, p, others, True)
    inverse = 1.0 / (norm + 1e-7)
    return torch.where(norm > maxnorm, inverse * maxnorm * (grad - inverse * norm_grad), grad)

def _quantile_sorted(self: Tensor, dim: Optional[int]) -> Tuple[Tensor, Tensor, List[int]]:
    # As quantile's forward (kiln/ops/stats_ops.cpp): the reduced elements
    # as sorted rows [lines, n], the sort's permutation, and the unsorted
    # lines' shape (self with the reduced dim moved last, or flattened).
    x = self.reshape([-1])
    if dim is not None and self.dim() > 0:
        x = self.movedim(dim, -1)
    n = x.size(-1)
    values, order = x.reshape([x.numel() // n, n]).sort(-1)
    return values, order, x.size()

def _quantile_ranks(values: Tensor, q: Tensor, ignore_nan: bool) -> Tensor:
    # q as fractional ranks [lines, len(q)]: among the non-NaN values
    # (nanquantile), or the last rank in a line holding NaN (quantile).
    qs = q.reshape([-1])
    if ignore_nan:
        ranks = qs * (values.isnan().logical_not().sum(-1, True) - 1)
        return ranks.masked_fill(ranks < 0, 0)
    n = values.size(1)
    return (qs * (n - 1) + torch.zeros([values.size(0), 1], dtype=qs.dtype)).masked_fill(values.isnan().any(-1, True), n - 1)

def _quantile_grad_lines(grad: Tensor, q: Tensor, lines: int) -> Tensor:
    # grad (q's dim first, then the reduced shape) as [lines, len(q)].
    return grad.reshape([lines, 1]) if q.dim() == 0 else grad.reshape([q.numel(), lines]).t()

def _quantile_backward(grad: Tensor, self: Tensor, q: Tensor, dim: Optional[int], keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
    # grad goes to the gathered ranks, split as lerp splits it, then back
    # through the sort's permutation.
    values, order, shape = _quantile_sorted(self, dim)
    ranks = _quantile_ranks(values, q, ignore_nan)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.to(torch.long)
    g = _quantile_grad_lines(grad, q, values.size(0))
    g_sorted = torch.zeros_like(values)
    if interpolation == "linear" or interpolation == "midpoint":
        weight = ranks - below if interpolation == "linear" else torch.full_like(ranks, 0.5)
        above = ranks.ceil().to(torch.long)
        g_sorted = g_sorted.scatter_add(-1, below, g * (1 - weight)).scatter_add(-1, above, g * weight)
    else:
        g_sorted = g_sorted.scatter_add(-1, below, g)
    g_x = torch.zeros_like(values).scatter(-1, order, g_sorted).reshape(shape)
    if dim is not None and self.dim() > 0:
        g_x = g_x.movedim(-1, dim)
    return g_x.reshape(self.size())

def _quantile_q_backward(grad: Tensor, self: Tensor, q: Tensor, dim: Optional[int], interpolation: str, ignore_nan: bool) -> Tensor:
    # Only linear interpolation's weight (rank - floor(rank)) depends on q:
    # d result / d q = (value above - value below) * d rank / d q.
    if interpolation != "linear":
        return torch.zeros_like(q)
    values, order, shape = _quantile_sorted(self, dim)
    ranks = _quantile_ranks(values, q, ignore_nan)
    spread = values.gather(-1, ranks.ceil().to(torch.long)) - values.gather(-1, ranks.to(torch.long))
    if ignore_nan:
        # Ranks clamped at 0 (all-NaN lines) carry no gradient.
        scale = (values.isnan().logical_not().sum(-1, True) - 1) * (ranks >= 0)
    else:
        scale = values.isnan().any(-1, True).logical_not() * (values.size(1) - 1)
    g = _quantile_grad_lines(grad, q, values.size(0))
    return (g * spread * scale).sum(0).reshape(q.size())

def _cov_aweights_grad(grad: Tensor, self: Tensor, correction: int, fweights: Optional[Tensor], aweights: Tensor) -> Tensor:
    # c = xc diag(w) xc^T / f with w = fweights * aweights, xc = x - x w / sum(w)
    # and f = sum(w) - correction * sum(w * aweights) / sum(w) (or
    # sum(w) - correction when correction is 0): w enters directly, through
    # the mean and through f, and aweights also enters f directly.
    x = self.reshape([1, -1]) if self.dim() < 2 else self
    frequencies = torch.ones_like(aweights)
    if fweights is not None:
        frequencies = fweights.to(aweights.dtype)
    w = frequencies * aweights
    w_sum = w.sum()
    weighted_sum = (w * aweights).sum()
    factor = w_sum - correction * weighted_sum / w_sum if correction != 0 else w_sum - correction
    # torch zeroes a factor <= 0 in place: no gradient flows through it then.
    through_factor = not bool(factor <= 0)
    if not through_factor:
        factor = factor * 0
    centered = x - (x * w).sum(1, True) / w_sum
    g = grad.reshape([x.size(0), x.size(0)])
    h = (g + g.t()).mm(centered * w) / factor
    g_w = (centered * g.mm(centered)).sum(0) / factor - (h.sum(1, True) * centered).sum(0) / w_sum
    g_a = frequencies * g_w
    if through_factor:
        g_factor = -(g * centered.mm((centered * w).t())).sum() / (factor * factor)
        d_factor_d_w = 1 - correction * (aweights / w_sum - weighted_sum / (w_sum * w_sum))
        g_a = g_a + frequencies * g_factor * d_factor_d_w - g_factor * correction * w / w_sum
    return g_a.reshape(aweights.size())

def _cov_aweights_backward(grad: Tensor, self: Tensor, correction: int, fweights: Optional[Tensor], aweights: Optional[Tensor]) -> Tensor:
    if aweights is not None:  # always: only a tensor has a gradient
        return _cov_aweights_grad(grad, self, correction, fweights, aweights)
    return grad
)";
}

}  // namespace kiln::autograd
