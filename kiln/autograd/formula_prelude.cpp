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

)";
}

}  // namespace kiln::autograd
