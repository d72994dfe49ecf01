"""kiln.nn.functional's losses, with torch.nn.functional's signatures:
reductions by name ('none', 'mean', 'sum'; kl_div also 'batchmean'), the
legacy size_average/reduce flags, torch's checks on target sizes.
TorchScript, so kiln.script of a module that calls them compiles them too."""
from typing import Optional

import kiln
from kiln import Tensor


def _reduction_enum(reduction: str) -> int:
    if reduction == "none":
        return 0
    if reduction == "mean" or reduction == "elementwise_mean":
        return 1
    if reduction == "sum":
        return 2
    raise ValueError("{} is not a valid value for reduction".format(reduction))


def _legacy_reduction(size_average: Optional[bool], reduce: Optional[bool]) -> str:
    average = True if size_average is None else size_average
    reduced = True if reduce is None else reduce
    if average and reduced:
        return "mean"
    if reduced:
        return "sum"
    return "none"


def _reduction_of(size_average: Optional[bool], reduce: Optional[bool], reduction: str) -> int:
    if size_average is not None or reduce is not None:
        return _reduction_enum(_legacy_reduction(size_average, reduce))
    return _reduction_enum(reduction)


def mse_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
             reduction: str = "mean") -> Tensor:
    return kiln.mse_loss(input, target, _reduction_of(size_average, reduce, reduction))


def l1_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
            reduction: str = "mean") -> Tensor:
    return kiln.l1_loss(input, target, _reduction_of(size_average, reduce, reduction))


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Optional[bool] = None,
                   reduce: Optional[bool] = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    if beta == 0.0:
        return kiln.l1_loss(input, target, _reduction_of(size_average, reduce, reduction))
    return kiln.smooth_l1_loss(input, target, _reduction_of(size_average, reduce, reduction), beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    return kiln.huber_loss(input, target, _reduction_enum(reduction), delta)


def nll_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average: Optional[bool] = None,
             ignore_index: int = -100, reduce: Optional[bool] = None, reduction: str = "mean") -> Tensor:
    return kiln.nll_loss_nd(input, target, weight, _reduction_of(size_average, reduce, reduction), ignore_index)


def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                  size_average: Optional[bool] = None, ignore_index: int = -100, reduce: Optional[bool] = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    return kiln.cross_entropy_loss(input, target, weight, _reduction_of(size_average, reduce, reduction),
                                   ignore_index, label_smoothing)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                         size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                         reduction: str = "mean") -> Tensor:
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError("Using a target size ({}) that is different to the input size ({}) is deprecated. "
                         "Please ensure they have the same size.".format(target.size(), input.size()))
    if weight is not None:
        weight = weight.expand(target.size())
    return kiln.binary_cross_entropy(input, target, weight, reduction_enum)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                     size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                                     reduction: str = "mean", pos_weight: Optional[Tensor] = None) -> Tensor:
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError("Target size ({}) must be the same as input size ({})".format(target.size(), input.size()))
    return kiln.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction_enum)


def kl_div(input: Tensor, target: Tensor, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    elif reduction == "batchmean":
        reduction_enum = 2
    else:
        reduction_enum = _reduction_enum(reduction)
    reduced = kiln.kl_div(input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced
