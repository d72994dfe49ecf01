"""A few stock layers (Identity, Linear, Bilinear, ReLU, Tanh, Sigmoid) over kiln ops.

Their forwards are TorchScript, and they take torch's TorchScript type names,
so a scripted model that uses them prints as torch's does."""
import math

from .. import _functions
from . import functional as F
from .module import Module
from .parameter import Parameter


def _uniform(shape, bound):
    return _functions.op("empty")(shape).uniform_(-bound, bound)


class Identity(Module):
    _jit_override_qualname = "__torch__.torch.nn.modules.linear.Identity"

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x @ weight.T + bias, with torch's default initialisation
    (uniform in +-1/sqrt(in_features), from kiln's random generator)."""

    _jit_override_qualname = "__torch__.torch.nn.modules.linear.Linear"
    __constants__ = ["in_features", "out_features"]
    in_features: int
    out_features: int

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = Parameter(_uniform([out_features, in_features], bound))
        if bias:
            self.bias = Parameter(_uniform([out_features], bound))
        else:
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """y = x1^T A x2 + b per output feature, with torch's initialisation
    (weight and bias uniform in +-1/sqrt(in1_features))."""

    _jit_override_qualname = "__torch__.torch.nn.modules.linear.Bilinear"
    __constants__ = ["in1_features", "in2_features", "out_features"]
    in1_features: int
    in2_features: int
    out_features: int

    def __init__(self, in1_features, in2_features, out_features, bias=True):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in1_features) if in1_features > 0 else 0.0
        self.weight = Parameter(_uniform([out_features, in1_features, in2_features], bound))
        if bias:
            self.bias = Parameter(_uniform([out_features], bound))
        else:
            self.register_parameter("bias", None)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return "in1_features={}, in2_features={}, out_features={}, bias={}".format(
            self.in1_features, self.in2_features, self.out_features, self.bias is not None)


class ReLU(Module):
    _jit_override_qualname = "__torch__.torch.nn.modules.activation.ReLU"
    __constants__ = ["inplace"]
    inplace: bool

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        if self.inplace:
            return F.relu_(input)
        return F.relu(input)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    _jit_override_qualname = "__torch__.torch.nn.modules.activation.Tanh"

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    _jit_override_qualname = "__torch__.torch.nn.modules.activation.Sigmoid"

    def forward(self, input):
        return F.sigmoid(input)
