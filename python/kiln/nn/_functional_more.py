"""More of torch.nn.functional that torch 1.13 scripts (issue 20): the
functions it writes in Python (softmin, softsign, normalize, lp_pool, the
margin and embedding losses) and a few ATen composites kiln has no operator
for (cosine_similarity, pairwise_distance, cosine_embedding_loss; F.one_hot
is the operator aten::one_hot),
with 1.13's signatures and formulas, in TorchScript so that scripts calling
F.<name> compile them."""
from typing import List, Optional

import kiln
from kiln import Tensor


def _reduce(loss: Tensor, size_average: Optional[bool], reduce: Optional[bool], reduction: str) -> Tensor:
    if size_average is not None or reduce is not None:
        average = True if size_average is None else size_average
        reduced = True if reduce is None else reduce
        if average and reduced:
            reduction = "mean"
        elif reduced:
            reduction = "sum"
        else:
            reduction = "none"
    if reduction == "none":
        return loss
    if reduction == "mean" or reduction == "elementwise_mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError("{} is not a valid value for reduction".format(reduction))


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


def softmin(input, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Optional[int] = None):
    if dim is None:
        ndim = input.dim()
        dim = 0 if ndim == 0 or ndim == 1 or ndim == 3 else 1
    if dtype is None:
        return (-input).softmax(dim)
    return (-input).softmax(dim, dtype=dtype)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Optional[Tensor] = None) -> Tensor:
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return kiln.div(input, denom, out=out)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    # 1.13: each input divided by its norm (clamped to eps), then the dot product.
    n1 = x1.norm(2.0, dim, keepdim=True).clamp_min(eps)
    n2 = x2.norm(2.0, dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    output_dim = max(x1.dim(), x2.dim()) - 1
    return (x1 - x2 + eps).norm(p, output_dim, keepdim=keepdim)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Optional[List[int]] = None,
              ceil_mode: bool = False) -> Tensor:
    if stride is not None:
        out = kiln.avg_pool1d(input.pow(norm_type), [kernel_size], stride, [0], ceil_mode)
    else:
        out = kiln.avg_pool1d(input.pow(norm_type), [kernel_size], [kernel_size], [0], ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel_size).pow(1.0 / norm_type)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: List[int], stride: Optional[List[int]] = None,
              ceil_mode: bool = False) -> Tensor:
    kw, kh = kernel_size[0], kernel_size[1]
    if stride is not None:
        out = kiln.avg_pool2d(input.pow(norm_type), kernel_size, stride, [0, 0], ceil_mode)
    else:
        out = kiln.avg_pool2d(input.pow(norm_type), kernel_size, kernel_size, [0, 0], ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kw * kh).pow(1.0 / norm_type)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                        reduction: str = "mean") -> Tensor:
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            "input1: {}, input2: {}, target: {} ".format(input1.size(), input2.size(), target.size()))
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce(loss, size_average, reduce, reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: Optional[bool] = None,
                         reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    zeros = kiln.zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    output_margin = kiln.where(target != 1, margin_clamp, zeros)
    output_self = kiln.where(target != -1, input, zeros)
    return _reduce(output_margin + output_self, size_average, reduce, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None,
                     reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    loss = (-target * input).exp().log1p()
    return _reduce(loss, size_average, reduce, reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                                reduction: str = "mean") -> Tensor:
    loss = -(target * kiln.log_sigmoid(input) + (1 - target) * kiln.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if size_average is not None or reduce is not None:
        return _reduce(loss, size_average, reduce, reduction)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                          reduction: str = "mean") -> Tensor:
    dim = input1.dim() - 1
    prod_sum = (input1 * input2).sum(dim)
    mag_square1 = (input1 * input1).sum(dim) + 1e-12
    mag_square2 = (input2 * input2).sum(dim) + 1e-12
    cos = prod_sum / (mag_square1 * mag_square2).sqrt()
    zeros = kiln.zeros_like(cos)
    output_pos = kiln.where(target == 1, 1 - cos, zeros)
    output_neg = kiln.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(output_pos + output_neg, size_average, reduce, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Optional[bool] = None, eps: float = 1e-8, reduce: Optional[bool] = None,
                     reduction: str = "mean") -> Tensor:
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * 3.141592653589793 * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, size_average, reduce, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: Optional[bool] = None,
                        reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = kiln.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = (margin + d_pos - d_neg).clamp_min(0)
    return _reduce(loss, size_average, reduce, reduction)


__all__ = ["softsign", "tanhshrink", "softmin", "normalize", "cosine_similarity", "pairwise_distance",
           "lp_pool1d", "lp_pool2d", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "multilabel_soft_margin_loss", "cosine_embedding_loss", "poisson_nll_loss", "triplet_margin_loss"]
