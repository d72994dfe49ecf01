"""More of torch.nn.functional that torch 1.13 scripts (issue 20): the
functions it writes in Python (softmin, softsign, normalize, lp_pool,
local_response_norm, max_unpool, rrelu, the margin, embedding, Gaussian and
Poisson losses, which check and translate their arguments for the aten
operators), with 1.13's signatures and formulas, in TorchScript so that
scripts calling F.<name> compile them (F.one_hot is the operator
aten::one_hot). cosine_similarity,
pairwise_distance and bilinear are the aten operators themselves."""
import math
from typing import Callable, List, Optional, Tuple, Union

import kiln
from kiln import Tensor
from ._functional_conv import _Eager
from ._functional_loss import _reduction_of, _reduction_enum
from ._functional_resample import _scale_list, _size_list


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


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int,
              stride: Optional[Union[int, List[int], Tuple[int]]] = None, ceil_mode: bool = False) -> Tensor:
    strides = _size_list(stride, 1)
    if strides is None:
        strides = [kernel_size]
    out = kiln.avg_pool1d(input.pow(norm_type), [kernel_size], strides, [0], ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel_size).pow(1.0 / norm_type)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Union[int, List[int], Tuple[int, int]],
              stride: Optional[Union[int, List[int], Tuple[int, int]]] = None, ceil_mode: bool = False) -> Tensor:
    kernel = _size_list(kernel_size, 2)
    assert kernel is not None
    strides = _size_list(stride, 2)
    if strides is None:
        strides = kernel
    out = kiln.avg_pool2d(input.pow(norm_type), kernel, strides, [0, 0], ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kernel[0] * kernel[1]).pow(1.0 / norm_type)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality input (got {} dimensions)".format(dim))
    if input.numel() == 0:
        return input
    # The mean of the squares over `size` neighbouring channels (zero-padded).
    div = input.mul(input).unsqueeze(1)
    if dim == 3:
        div = kiln.constant_pad_nd(div, [0, 0, size // 2, (size - 1) // 2], 0.0)
        div = kiln.avg_pool2d(div, [size, 1], [1, 1]).squeeze(1)
    else:
        sizes = input.size()
        div = div.view([sizes[0], 1, sizes[1], sizes[2], -1])
        div = kiln.constant_pad_nd(div, [0, 0, 0, 0, size // 2, (size - 1) // 2], 0.0)
        div = kiln.avg_pool3d(div, [size, 1, 1], [1, 1, 1]).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def _unpool_output_size(input: Tensor, kernel_size: List[int], stride: List[int], padding: List[int],
                        output_size: Optional[List[int]]) -> List[int]:
    input_size = input.size()
    default_size: List[int] = []
    for d in range(len(kernel_size)):
        default_size.append((input_size[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d])
    if output_size is None:
        return default_size
    if len(output_size) == len(kernel_size) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel_size):
        raise ValueError("output_size should be a sequence containing {} or {} elements, but it has a length of "
                         "'{}'".format(len(kernel_size), len(kernel_size) + 2, len(output_size)))
    for d in range(len(kernel_size)):
        min_size = default_size[d] - stride[d]
        max_size = default_size[d] + stride[d]
        if not (min_size < output_size[d] < max_size):
            raise ValueError('invalid output_size "{}" (dim {} must be between {} and {})'.format(
                output_size, d, min_size, max_size))
    return output_size


def _unpool_args(kernel_size: Union[int, List[int], Tuple[int], Tuple[int, int], Tuple[int, int, int]],
                 stride: Optional[Union[int, List[int], Tuple[int], Tuple[int, int], Tuple[int, int, int]]],
                 padding: Union[int, List[int], Tuple[int], Tuple[int, int], Tuple[int, int, int]],
                 n: int) -> Tuple[List[int], List[int], List[int]]:
    # torch's _single/_pair/_triple of each argument; the stride defaults to the kernel size.
    kernel = _size_list(kernel_size, n)
    assert kernel is not None
    strides = _size_list(stride, n)
    pad = _size_list(padding, n)
    assert pad is not None
    return kernel, kernel if strides is None else strides, pad


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Union[int, List[int], Tuple[int]],
                 stride: Optional[Union[int, List[int], Tuple[int]]] = None,
                 padding: Union[int, List[int], Tuple[int]] = 0,
                 output_size: Optional[List[int]] = None) -> Tensor:
    kernel, strides, pad = _unpool_args(kernel_size, stride, padding, 1)
    size = _unpool_output_size(input, kernel, strides, pad, output_size) + [1]
    return kiln.max_unpool2d(input.unsqueeze(-1), indices.unsqueeze(-1), size).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Union[int, List[int], Tuple[int, int]],
                 stride: Optional[Union[int, List[int], Tuple[int, int]]] = None,
                 padding: Union[int, List[int], Tuple[int, int]] = 0,
                 output_size: Optional[List[int]] = None) -> Tensor:
    kernel, strides, pad = _unpool_args(kernel_size, stride, padding, 2)
    return kiln.max_unpool2d(input, indices, _unpool_output_size(input, kernel, strides, pad, output_size))


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Union[int, List[int], Tuple[int, int, int]],
                 stride: Optional[Union[int, List[int], Tuple[int, int, int]]] = None,
                 padding: Union[int, List[int], Tuple[int, int, int]] = 0,
                 output_size: Optional[List[int]] = None) -> Tensor:
    kernel, strides, pad = _unpool_args(kernel_size, stride, padding, 3)
    return kiln.max_unpool3d(input, indices, _unpool_output_size(input, kernel, strides, pad, output_size), strides,
                             pad)


def _fractional_output_size(input: Tensor, output_size: Optional[List[int]],
                            output_ratio: Optional[List[float]], n: int) -> List[int]:
    if output_size is not None:
        return output_size
    if output_ratio is None:
        raise ValueError("fractional_max_pool{}d requires specifying either an output_size or an output_ratio"
                         .format(n))
    return [int(input.size(i - n) * output_ratio[i]) for i in range(n)]


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Union[int, List[int], Tuple[int, int]],
                                       output_size: Optional[Union[int, List[int], Tuple[int, int]]] = None,
                                       output_ratio: Optional[Union[float, List[float], Tuple[float, float]]] = None,
                                       return_indices: bool = False,
                                       _random_samples: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    size = _fractional_output_size(input, _size_list(output_size, 2), _scale_list(output_ratio, 2), 2)
    if _random_samples is None:
        # One sample per plane and spatial dim, from kiln's generator.
        n_batch = 1 if input.dim() == 3 else input.size(0)
        _random_samples = kiln.rand([n_batch, input.size(-3), 2], dtype=input.dtype)
    kernel = _size_list(kernel_size, 2)
    assert kernel is not None
    return kiln.fractional_max_pool2d(input, kernel, size, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Union[int, List[int], Tuple[int, int, int]],
                                       output_size: Optional[Union[int, List[int], Tuple[int, int, int]]] = None,
                                       output_ratio: Optional[Union[float, List[float],
                                                                    Tuple[float, float, float]]] = None,
                                       return_indices: bool = False,
                                       _random_samples: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    size = _fractional_output_size(input, _size_list(output_size, 3), _scale_list(output_ratio, 3), 3)
    if _random_samples is None:
        n_batch = 1 if input.dim() == 4 else input.size(0)
        _random_samples = kiln.rand([n_batch, input.size(-4), 3], dtype=input.dtype)
    kernel = _size_list(kernel_size, 3)
    assert kernel is not None
    return kiln.fractional_max_pool3d(input, kernel, size, _random_samples)


def _fractional_max_pool2d(input: Tensor, kernel_size: Union[int, List[int], Tuple[int, int]],
                           output_size: Optional[Union[int, List[int], Tuple[int, int]]] = None,
                           output_ratio: Optional[Union[float, List[float], Tuple[float, float]]] = None,
                           return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> Tensor:
    return fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                              _random_samples)[0]


def _fractional_max_pool3d(input: Tensor, kernel_size: Union[int, List[int], Tuple[int, int, int]],
                           output_size: Optional[Union[int, List[int], Tuple[int, int, int]]] = None,
                           output_ratio: Optional[Union[float, List[float], Tuple[float, float, float]]] = None,
                           return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> Tensor:
    return fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                              _random_samples)[0]


def _dispatch_on_indices(name, with_indices, without):
    # torch's boolean_dispatch: the result type follows return_indices (eager only).
    def fn(input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        chosen = with_indices if return_indices else without
        return chosen(input, kernel_size, output_size, output_ratio, return_indices, _random_samples)
    return _Eager(name, fn)


fractional_max_pool2d = _dispatch_on_indices("fractional_max_pool2d", fractional_max_pool2d_with_indices,
                                             _fractional_max_pool2d)
fractional_max_pool3d = _dispatch_on_indices("fractional_max_pool3d", fractional_max_pool3d_with_indices,
                                             _fractional_max_pool3d)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    if inplace:
        return kiln.rrelu_(input, lower, upper, training)
    return kiln.rrelu(input, lower, upper, training)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                        reduction: str = "mean") -> Tensor:
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            "input1: {}, input2: {}, target: {} ".format(input1.size(), input2.size(), target.size()))
    return kiln.margin_ranking_loss(input1, input2, target, margin, reduction_enum)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: Optional[bool] = None,
                         reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    return kiln.hinge_embedding_loss(input, target, margin, _reduction_of(size_average, reduce, reduction))


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None,
                     reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    return kiln.soft_margin_loss(input, target, _reduction_of(size_average, reduce, reduction))


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None,
                           reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    return kiln.multilabel_margin_loss(input, target, _reduction_of(size_average, reduce, reduction))


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Optional[Tensor] = None,
                      size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                      reduction: str = "mean") -> Tensor:
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None:
        if weight.dim() != 1:
            raise ValueError("weight must be one-dimensional")
    return kiln.multi_margin_loss(input, target, p, margin, weight, reduction_enum)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                                reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _reduce_name(size_average, reduce)
    loss = -(target * kiln.log_sigmoid(input) + (1 - target) * kiln.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def _reduce_name(size_average: Optional[bool], reduce: Optional[bool]) -> str:
    average = True if size_average is None else size_average
    reduced = True if reduce is None else reduce
    if average and reduced:
        return "mean"
    if reduced:
        return "sum"
    return "none"


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                          reduction: str = "mean") -> Tensor:
    return kiln.cosine_embedding_loss(input1, input2, target, margin, _reduction_of(size_average, reduce, reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Optional[bool] = None, eps: float = 1e-8, reduce: Optional[bool] = None,
                     reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _reduce_name(size_average, reduce)
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        raise ValueError(reduction + " is not valid")
    return kiln.poisson_nll_loss(input, target, log_input, full, eps, _reduction_enum(reduction))


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    # var of input's size (heteroscedastic), or one short of it / with a last
    # dim of 1 (homoscedastic: broadcast over the last dim).
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = kiln.unsqueeze(var, -1)
        elif input.size()[:-1] == var.size()[:-1] and var.size(-1) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        raise ValueError(reduction + " is not valid")
    if bool(kiln.any(var < 0)):
        raise ValueError("var has negative entry/entries")
    # Clamped for stability without recording the clamp (torch clamps in
    # place under no_grad): the gradient is the unclamped var's.
    var = var.clone()
    with kiln.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (kiln.log(var) + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: Optional[bool] = None,
                        reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    return kiln.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    _reduction_of(size_average, reduce, reduction))


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Optional[Callable[[Tensor, Tensor], Tensor]] = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    # Eager only, as in torch: a Callable argument cannot be scripted.
    if kiln.jit.is_scripting():
        raise NotImplementedError("F.triplet_margin_with_distance_loss does not support JIT scripting: "
                                  "functions requiring Callables cannot be scripted.")
    distance = distance_function if distance_function is not None else kiln.pairwise_distance
    positive_dist = distance(anchor, positive)
    negative_dist = distance(anchor, negative)
    if swap:
        negative_dist = kiln.min(negative_dist, distance(positive, negative))
    output = kiln.clamp(positive_dist - negative_dist + margin, min=0.0)
    reduction_enum = _reduction_enum(reduction)
    if reduction_enum == 1:
        return output.mean()
    if reduction_enum == 2:
        return output.sum()
    return output


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor, target_lengths: Tensor, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    return kiln.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction_enum(reduction),
                         zero_infinity)


__all__ = ["softsign", "tanhshrink", "softmin", "normalize", "lp_pool1d", "lp_pool2d",
           "local_response_norm", "max_unpool1d", "max_unpool2d", "max_unpool3d", "fractional_max_pool2d",
           "fractional_max_pool3d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices",
           "_fractional_max_pool2d", "_fractional_max_pool3d", "rrelu", "margin_ranking_loss",
           "hinge_embedding_loss", "soft_margin_loss", "multilabel_margin_loss", "multi_margin_loss",
           "multilabel_soft_margin_loss", "cosine_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss", "ctc_loss"]
