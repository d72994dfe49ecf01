"""LayerNorm, as torch.nn.LayerNorm (weight ones, bias zeros)."""
import numbers
from typing import Tuple

from .. import _functions
from . import functional as F
from .module import Module
from .parameter import Parameter


class LayerNorm(Module):
    _jit_override_qualname = "__torch__.torch.nn.modules.normalization.LayerNorm"
    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]
    normalized_shape: Tuple[int, ...]
    eps: float
    elementwise_affine: bool

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_functions.op("ones")(list(self.normalized_shape)))
            self.bias = Parameter(_functions.op("zeros")(list(self.normalized_shape)))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)
