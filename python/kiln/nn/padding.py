"""Padding layers, as torch.nn's (forward: F.pad with the layer's mode)."""
from . import functional as F
from .module import Module

_Q = "__torch__.torch.nn.modules.padding."


def _ntuple(value, n):
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return tuple(value for _ in range(n))


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    value: float

    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return "padding={}, value={}".format(self.padding, self.value)


class ConstantPad1d(_ConstantPadNd):
    _jit_override_qualname = _Q + "ConstantPad1d"

    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 2)


class ConstantPad2d(_ConstantPadNd):
    _jit_override_qualname = _Q + "ConstantPad2d"

    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 4)


class ConstantPad3d(_ConstantPadNd):
    _jit_override_qualname = _Q + "ConstantPad3d"

    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _ntuple(padding, 6)


class ZeroPad2d(ConstantPad2d):
    _jit_override_qualname = _Q + "ZeroPad2d"

    def __init__(self, padding):
        super().__init__(padding, 0.)

    def extra_repr(self):
        return "{}".format(self.padding)


class _ReflectionPadNd(Module):
    __constants__ = ["padding"]

    def forward(self, input):
        return F.pad(input, self.padding, "reflect")

    def extra_repr(self):
        return "{}".format(self.padding)


class ReflectionPad1d(_ReflectionPadNd):
    _jit_override_qualname = _Q + "ReflectionPad1d"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2)


class ReflectionPad2d(_ReflectionPadNd):
    _jit_override_qualname = _Q + "ReflectionPad2d"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 4)


class ReflectionPad3d(_ReflectionPadNd):
    _jit_override_qualname = _Q + "ReflectionPad3d"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 6)


class _ReplicationPadNd(Module):
    __constants__ = ["padding"]

    def forward(self, input):
        return F.pad(input, self.padding, "replicate")

    def extra_repr(self):
        return "{}".format(self.padding)


class ReplicationPad1d(_ReplicationPadNd):
    _jit_override_qualname = _Q + "ReplicationPad1d"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2)


class ReplicationPad2d(_ReplicationPadNd):
    _jit_override_qualname = _Q + "ReplicationPad2d"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 4)


class ReplicationPad3d(_ReplicationPadNd):
    _jit_override_qualname = _Q + "ReplicationPad3d"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 6)


__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d",
           "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d"]
