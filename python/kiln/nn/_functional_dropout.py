"""The functional forms of layer norm and the dropouts, with torch 1.13's
signatures (torch.nn.functional.dropout and friends are Python functions
there). Each is TorchScript, so kiln.script of a module calling one compiles
it; eagerly they run on kiln's operators."""
from typing import List, Optional

import kiln
from kiln import Tensor


def _check_p(p: float):
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got {}".format(p))


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    if inplace:
        return kiln.dropout_(input, p, training)
    return kiln.dropout(input, p, training)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    _check_p(p)
    if inplace:
        return kiln.alpha_dropout_(input, p, training)
    return kiln.alpha_dropout(input, p, training)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    _check_p(p)
    if inplace:
        return kiln.feature_alpha_dropout_(input, p, training)
    return kiln.feature_alpha_dropout(input, p, training)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, batched_dim: int) -> Tensor:
    # An unbatched input gains a batch dim, so each of its channels is one draw.
    is_batched = input.dim() == batched_dim
    if not is_batched:
        input = input.unsqueeze(0)
    if inplace:
        result = kiln.feature_dropout_(input, p, training)
    else:
        result = kiln.feature_dropout(input, p, training)
    if not is_batched:
        result = result.squeeze(0)
    return result


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim != 2 and inp_dim != 3:
        raise RuntimeError("dropout1d: Expected 2D or 3D input, but received a {}D input. Note that dropout1d "
                           "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                           "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).".format(inp_dim))
    return _feature_dropout(input, p, training, inplace, 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    # torch 1.13 treats a 3D input as batched 1D (N, C, L), with a warning.
    _check_p(p)
    if inplace:
        return kiln.feature_dropout_(input, p, training)
    return kiln.feature_dropout(input, p, training)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    return _feature_dropout(input, p, training, inplace, 5)


def layer_norm(input: Tensor, normalized_shape: List[int], weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5) -> Tensor:
    return kiln.layer_norm(input, normalized_shape, weight, bias, eps)
