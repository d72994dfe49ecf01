"""The activation functions that torch.nn.functional writes in Python (for
their `inplace` flag, defaults or dim inference), with torch 1.13's
signatures, written in TorchScript so kiln.script compiles calls to them as
torch.jit.script does (prim::CallFunction of a function of the same name)."""
from typing import Optional

import kiln


def hardtanh(input, min_val: float = -1., max_val: float = 1., inplace: bool = False):
    if inplace:
        return kiln.hardtanh_(input, min_val, max_val)
    return kiln.hardtanh(input, min_val, max_val)


def relu6(input, inplace: bool = False):
    if inplace:
        return kiln.relu6_(input)
    return kiln.relu6(input)


def elu(input, alpha: float = 1.0, inplace: bool = False):
    if inplace:
        return kiln.elu_(input, alpha)
    return kiln.elu(input, alpha)


def selu(input, inplace: bool = False):
    if inplace:
        return kiln.selu_(input)
    return kiln.selu(input)


def celu(input, alpha: float = 1., inplace: bool = False):
    if inplace:
        return kiln.celu_(input, alpha)
    return kiln.celu(input, alpha)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False):
    if inplace:
        return kiln.leaky_relu_(input, negative_slope)
    return kiln.leaky_relu(input, negative_slope)


def hardswish(input, inplace: bool = False):
    if inplace:
        return kiln.hardswish_(input)
    return kiln.hardswish(input)


def hardsigmoid(input, inplace: bool = False):
    if inplace:
        return kiln.hardsigmoid_(input)
    return kiln.hardsigmoid(input)


def silu(input, inplace: bool = False):
    if inplace:
        return kiln.silu_(input)
    return kiln.silu(input)


def mish(input, inplace: bool = False):
    if inplace:
        return kiln.mish_(input)
    return kiln.mish(input)


def threshold(input, threshold: float, value: float, inplace: bool = False):
    if inplace:
        return kiln.threshold_(input, threshold, value)
    return kiln.threshold(input, threshold, value)


def glu(input, dim: int = -1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return kiln.glu(input, dim)


def logsigmoid(input):
    return kiln.log_sigmoid(input)


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    if ndim == 0 or ndim == 1 or ndim == 3:
        return 0
    return 1


def softmax(input, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Optional[int] = None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is None:
        return input.softmax(dim)
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Optional[int] = None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is None:
        return input.log_softmax(dim)
    return input.log_softmax(dim, dtype=dtype)


__all__ = ["hardtanh", "relu6", "elu", "selu", "celu", "leaky_relu", "hardswish", "hardsigmoid", "silu", "mish",
           "threshold", "glu", "logsigmoid", "softmax", "log_softmax"]
