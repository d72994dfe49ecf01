"""kiln.nn.functional's embedding and embedding_bag, with
torch.nn.functional's signatures (the input before the weight, padding_idx
checked and wrapped, mode given by name). TorchScript, so kiln.script of a
module that calls them compiles them too."""
from typing import Optional

import kiln
from kiln import Tensor


def embedding(input: Tensor, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    pad = -1
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
            pad = padding_idx
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            pad = weight.size(0) + padding_idx
        else:
            pad = padding_idx
    if max_norm is not None:
        input = input.contiguous()
        with kiln.no_grad():  # as torch: renormalizing the weight is not part of the graph
            kiln.embedding_renorm_(weight, input, max_norm, norm_type)
    return kiln.embedding(weight, input, pad, scale_grad_by_freq, sparse)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Optional[Tensor] = None, max_norm: Optional[float] = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Optional[Tensor] = None, include_last_offset: bool = False,
                  padding_idx: Optional[int] = None) -> Tensor:
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError("embedding_bag: If per_sample_weights ({}) is not None, then it must have the same "
                         "shape as the input ({})".format(per_sample_weights.size(), input.size()))
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type <unknown>")
        offsets = kiln.arange(0, input.numel(), input.size(1), dtype=input.dtype)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError("input has to be 1D or 2D Tensor, but got Tensor of dimension {}".format(input.dim()))
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        with kiln.no_grad():
            kiln.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  "supported for mode='sum' (got mode='{}'). Please open a feature request on "
                                  "GitHub.".format(mode))
    pad: Optional[int] = padding_idx
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "padding_idx must be within the number of embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "padding_idx must be within the number of embeddings"
            pad = weight.size(0) + padding_idx
    assert offsets is not None
    ret, _, _, _ = kiln.embedding_bag(weight, input, offsets, scale_grad_by_freq, mode_enum, sparse,
                                      per_sample_weights, include_last_offset, pad)
    return ret
