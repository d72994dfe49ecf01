"""Distance layers (PairwiseDistance, CosineSimilarity), as torch.nn 1.13's:
the same constructor arguments and script constants, forwards over the
aten operators."""
from kiln import Tensor
from . import functional as F
from .module import Module

_Q = "__torch__.torch.nn.modules.distance."


class PairwiseDistance(Module):
    """The p-norm of x1 - x2 + eps over the last dim."""

    _jit_override_qualname = _Q + "PairwiseDistance"
    __constants__ = ["norm", "eps", "keepdim"]
    norm: float
    eps: float
    keepdim: bool

    def __init__(self, p=2., eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """The cosine of the angle between x1 and x2 along `dim`."""

    _jit_override_qualname = _Q + "CosineSimilarity"
    __constants__ = ["dim", "eps"]
    dim: int
    eps: float

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


__all__ = ["PairwiseDistance", "CosineSimilarity"]
