"""Activation layers with torch.nn's constructor arguments, attributes,
extra_repr and TorchScript names (their forwards call kiln.nn.functional
with torch's signatures, so scripted modules compile as torch's do)."""
from typing import Optional

from .. import _functions
from . import functional as F
from .module import Module
from .parameter import Parameter

_Q = "__torch__.torch.nn.modules.activation."


def _inplace_repr(inplace, first=False):
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class Threshold(Module):
    _jit_override_qualname = _Q + "Threshold"
    __constants__ = ["threshold", "value", "inplace"]
    threshold: float
    value: float
    inplace: bool

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return "threshold={}, value={}{}".format(self.threshold, self.value, _inplace_repr(self.inplace))


class Hardtanh(Module):
    _jit_override_qualname = _Q + "Hardtanh"
    __constants__ = ["min_val", "max_val", "inplace"]
    min_val: float
    max_val: float
    inplace: bool

    def __init__(self, min_val=-1., max_val=1., inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        assert self.max_val > self.min_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return "min_val={}, max_val={}{}".format(self.min_val, self.max_val, _inplace_repr(self.inplace))


class ReLU6(Hardtanh):
    _jit_override_qualname = _Q + "ReLU6"

    def __init__(self, inplace=False):
        super().__init__(0., 6., inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace, first=True)


class SiLU(Module):
    _jit_override_qualname = _Q + "SiLU"
    __constants__ = ["inplace"]
    inplace: bool

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace, first=True)


class Mish(Module):
    _jit_override_qualname = _Q + "Mish"
    __constants__ = ["inplace"]
    inplace: bool

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace, first=True)


class Hardswish(Module):
    _jit_override_qualname = _Q + "Hardswish"
    __constants__ = ["inplace"]
    inplace: bool

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Hardsigmoid(Module):
    _jit_override_qualname = _Q + "Hardsigmoid"
    __constants__ = ["inplace"]
    inplace: bool

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class ELU(Module):
    _jit_override_qualname = _Q + "ELU"
    __constants__ = ["alpha", "inplace"]
    alpha: float
    inplace: bool

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return "alpha={}{}".format(self.alpha, _inplace_repr(self.inplace))


class CELU(Module):
    _jit_override_qualname = _Q + "CELU"
    __constants__ = ["alpha", "inplace"]
    alpha: float
    inplace: bool

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return "alpha={}{}".format(self.alpha, _inplace_repr(self.inplace))


class SELU(Module):
    _jit_override_qualname = _Q + "SELU"
    __constants__ = ["inplace"]
    inplace: bool

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace, first=True)


class GLU(Module):
    _jit_override_qualname = _Q + "GLU"
    __constants__ = ["dim"]
    dim: int

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return "dim={}".format(self.dim)


class GELU(Module):
    _jit_override_qualname = _Q + "GELU"
    __constants__ = ["approximate"]
    approximate: str

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return "approximate={}".format(repr(self.approximate))


class Hardshrink(Module):
    _jit_override_qualname = _Q + "Hardshrink"
    __constants__ = ["lambd"]
    lambd: float

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return "{}".format(self.lambd)


class LeakyReLU(Module):
    _jit_override_qualname = _Q + "LeakyReLU"
    __constants__ = ["inplace", "negative_slope"]
    inplace: bool
    negative_slope: float

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return "negative_slope={}{}".format(self.negative_slope, _inplace_repr(self.inplace))


class LogSigmoid(Module):
    _jit_override_qualname = _Q + "LogSigmoid"

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    _jit_override_qualname = _Q + "Softplus"
    __constants__ = ["beta", "threshold"]
    beta: int
    threshold: int

    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return "beta={}, threshold={}".format(self.beta, self.threshold)


class Softshrink(Module):
    _jit_override_qualname = _Q + "Softshrink"
    __constants__ = ["lambd"]
    lambd: float

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class PReLU(Module):
    """x where x > 0, else weight * x; one weight, or one per channel (dim 1)."""

    _jit_override_qualname = _Q + "PReLU"
    __constants__ = ["num_parameters"]
    num_parameters: int

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        weight = _functions.op("empty")([num_parameters]) if dtype is None else \
            _functions.op("empty")([num_parameters], dtype=dtype)
        self.weight = Parameter(weight.fill_(init))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return "num_parameters={}".format(self.num_parameters)


class Softmax(Module):
    _jit_override_qualname = _Q + "Softmax"
    __constants__ = ["dim"]
    dim: Optional[int]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return "dim={dim}".format(dim=self.dim)


class LogSoftmax(Module):
    _jit_override_qualname = _Q + "LogSoftmax"
    __constants__ = ["dim"]
    dim: Optional[int]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return "dim={dim}".format(dim=self.dim)


class RReLU(Module):
    """Leaky ReLU whose negative slope is drawn uniformly from [lower, upper]
    per element in training, and is their mean in evaluation."""

    _jit_override_qualname = _Q + "RReLU"
    __constants__ = ["lower", "upper", "inplace"]
    lower: float
    upper: float
    inplace: bool

    def __init__(self, lower=1. / 8, upper=1. / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return "lower={}, upper={}{}".format(self.lower, self.upper, _inplace_repr(self.inplace))


class Softmin(Module):
    _jit_override_qualname = _Q + "Softmin"
    __constants__ = ["dim"]
    dim: Optional[int]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return "dim={dim}".format(dim=self.dim)


class Softmax2d(Module):
    """Softmax over the channels of each location of a (N, C, H, W) or (C, H, W) input."""

    _jit_override_qualname = _Q + "Softmax2d"

    def forward(self, input):
        assert input.dim() == 4 or input.dim() == 3, "Softmax2d requires a 3D or 4D tensor as input"
        return F.softmax(input, -3, _stacklevel=5)


class Softsign(Module):
    _jit_override_qualname = _Q + "Softsign"

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    _jit_override_qualname = _Q + "Tanhshrink"

    def forward(self, input):
        return F.tanhshrink(input)


__all__ = ["Threshold", "Hardtanh", "ReLU6", "SiLU", "Mish", "Hardswish", "Hardsigmoid", "ELU", "CELU", "SELU",
           "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softmax",
           "LogSoftmax", "RReLU", "Softmin", "Softmax2d", "Softsign", "Tanhshrink"]
