"""kiln.nn: modules (as torch.nn), their parameters, containers, a few stock
layers, and the functional forms of the operators (kiln.nn.functional).

Modules run eagerly; kiln.script(module) compiles them (kiln.nn._script)."""
from . import functional  # noqa: F401
from .parameter import Parameter
from .module import Module
from .container import ModuleList, ModuleDict, Sequential
from .layers import Identity, Linear, ReLU, Tanh, Sigmoid
from . import activation, upsampling, padding, pixelshuffle, fold
from .activation import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403

__all__ = ["Parameter", "Module", "ModuleList", "ModuleDict", "Sequential",
           "Identity", "Linear", "ReLU", "Tanh", "Sigmoid", "functional"]
__all__ += activation.__all__ + upsampling.__all__ + padding.__all__ + pixelshuffle.__all__ + fold.__all__
