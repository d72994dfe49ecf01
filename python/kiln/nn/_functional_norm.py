"""kiln.nn.functional's batch, instance and group normalization, with
torch.nn.functional's signatures (which differ from the aten operators':
F.batch_norm takes the running statistics before the weight). TorchScript,
so kiln.script of a module that calls them compiles them too."""
from typing import List, Optional

import kiln
from kiln import Tensor


def _verify_batch_size(size: List[int]) -> None:
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size {}".format(size))


def _verify_spatial_size(size: List[int]) -> None:
    size_prods = 1
    for i in range(2, len(size)):
        size_prods *= size[i]
    if size_prods == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size {}".format(size))


def batch_norm(input: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor],
               weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    if training:
        _verify_batch_size(list(input.size()))
    return kiln.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, True)


def instance_norm(input: Tensor, running_mean: Optional[Tensor] = None, running_var: Optional[Tensor] = None,
                  weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    if use_input_stats:
        _verify_spatial_size(list(input.size()))
    return kiln.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, True)


def group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None,
               eps: float = 1e-5) -> Tensor:
    if input.dim() < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received {}".format(input.dim()))
    sizes = list(input.size())
    _verify_batch_size([sizes[0] * sizes[1] // num_groups, num_groups] + sizes[2:])
    return kiln.group_norm(input, num_groups, weight, bias, eps, True)
