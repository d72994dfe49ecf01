"""kiln.nn: modules (as torch.nn), their parameters, containers, a few stock
layers, and the functional forms of the operators (kiln.nn.functional).

Modules run eagerly; kiln.script(module) compiles them (kiln.nn._script)."""
from . import functional  # noqa: F401
from .parameter import Parameter
from .module import Module
from .container import ModuleList, ModuleDict, Sequential
from .layers import Identity, Linear, ReLU, Tanh, Sigmoid
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, InstanceNorm1d, InstanceNorm2d,
                            InstanceNorm3d)
from .sparse import Embedding, EmbeddingBag
from .loss import (L1Loss, MSELoss, SmoothL1Loss, HuberLoss, NLLLoss, CrossEntropyLoss, BCELoss, BCEWithLogitsLoss,
                   KLDivLoss)

__all__ = ["Parameter", "Module", "ModuleList", "ModuleDict", "Sequential",
           "Identity", "Linear", "ReLU", "Tanh", "Sigmoid", "functional",
           "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "Embedding", "EmbeddingBag", "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss",
           "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss"]
