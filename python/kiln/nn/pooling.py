"""Pooling layers (MaxPool, AvgPool, AdaptiveAvgPool, AdaptiveMaxPool,
MaxUnpool in 1d/2d/3d, LPPool in 1d/2d, FractionalMaxPool in 2d/3d) with torch 1.13's constructor
arguments, attributes and extra_repr, and TorchScript-compilable forwards
over the aten operators."""
from typing import List, Optional

import kiln

from . import functional as F
from .module import Module


def _ntuple(n):
    def parse(x):
        if isinstance(x, (list, tuple)):
            return tuple(x)
        return tuple([x] * n)
    return parse


_single = _ntuple(1)
_pair = _ntuple(2)
_triple = _ntuple(3)


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]
    return_indices: bool
    ceil_mode: bool

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.MaxPool1d"

    def forward(self, input):
        if self.return_indices:
            return F.max_pool1d_with_indices(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                             self.ceil_mode)
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)


class MaxPool2d(_MaxPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.MaxPool2d"

    def forward(self, input):
        if self.return_indices:
            return F.max_pool2d_with_indices(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                             self.ceil_mode)
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)


class MaxPool3d(_MaxPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.MaxPool3d"

    def forward(self, input):
        if self.return_indices:
            return F.max_pool3d_with_indices(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                             self.ceil_mode)
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.AvgPool1d"
    ceil_mode: bool
    count_include_pad: bool

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPool23d(_AvgPoolNd):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]
    ceil_mode: bool
    count_include_pad: bool

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override


class AvgPool2d(_AvgPool23d):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.AvgPool2d"

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AvgPool3d(_AvgPool23d):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.AvgPool3d"

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.AdaptiveAvgPool1d"

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.AdaptiveAvgPool2d"

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.AdaptiveAvgPool3d"

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]
    return_indices: bool

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.AdaptiveMaxPool1d"

    def forward(self, input):
        if self.return_indices:
            return kiln.adaptive_max_pool1d(input, self.output_size)
        return kiln.adaptive_max_pool1d(input, self.output_size)[0]


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.AdaptiveMaxPool2d"

    def forward(self, input):
        if self.return_indices:
            return kiln.adaptive_max_pool2d(input, self.output_size)
        return kiln.adaptive_max_pool2d(input, self.output_size)[0]


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.AdaptiveMaxPool3d"

    def forward(self, input):
        if self.return_indices:
            return kiln.adaptive_max_pool3d(input, self.output_size)
        return kiln.adaptive_max_pool3d(input, self.output_size)[0]


class _MaxUnpoolNd(Module):
    """The inverse of a max pool: each value put back where its index says,
    zeros elsewhere. kernel_size, stride and padding are stored as tuples."""

    def __init__(self, kernel_size, stride, padding, ntuple):
        super().__init__()
        self.kernel_size = ntuple(kernel_size)
        self.stride = ntuple(stride if stride is not None else kernel_size)
        self.padding = ntuple(padding)

    def extra_repr(self):
        return "kernel_size={}, stride={}, padding={}".format(self.kernel_size, self.stride, self.padding)


class MaxUnpool1d(_MaxUnpoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.MaxUnpool1d"

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__(kernel_size, stride, padding, _single)

    def forward(self, input, indices, output_size: Optional[List[int]] = None):
        return F.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.MaxUnpool2d"

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__(kernel_size, stride, padding, _pair)

    def forward(self, input, indices, output_size: Optional[List[int]] = None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool3d(_MaxUnpoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.MaxUnpool3d"

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__(kernel_size, stride, padding, _triple)

    def forward(self, input, indices, output_size: Optional[List[int]] = None):
        return F.max_unpool3d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class _LPPoolNd(Module):
    """The norm_type-norm over each pooling window."""

    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    ceil_mode: bool

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return "norm_type={}, kernel_size={}, stride={}, ceil_mode={}".format(self.norm_type, self.kernel_size,
                                                                             self.stride, self.ceil_mode)


class LPPool1d(_LPPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.LPPool1d"

    def forward(self, input):
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.LPPool2d"

    def forward(self, input):
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class _FractionalMaxPoolNd(Module):
    """Max pooling over windows placed at pseudo-random, increasing starts
    (Graham's fractional max pooling); `_random_samples`, when given, fixes
    the placement (a buffer, as in torch)."""

    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    return_indices: bool

    def __init__(self, kernel_size, output_size, output_ratio, return_indices, _random_samples, ntuple, name):
        super().__init__()
        self.kernel_size = ntuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = ntuple(output_size) if output_size is not None else None
        self.output_ratio = ntuple(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError("output_ratio must be between 0 and 1 (got {})".format(output_ratio))


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.FractionalMaxPool2d"

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__(kernel_size, output_size, output_ratio, return_indices, _random_samples, _pair,
                         "FractionalMaxPool2d")

    def forward(self, input):
        if self.return_indices:
            return F.fractional_max_pool2d_with_indices(input, self.kernel_size, self.output_size, self.output_ratio,
                                                        self.return_indices, _random_samples=self._random_samples)
        return F._fractional_max_pool2d(input, self.kernel_size, self.output_size, self.output_ratio,
                                        self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.pooling.FractionalMaxPool3d"

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__(kernel_size, output_size, output_ratio, return_indices, _random_samples, _triple,
                         "FractionalMaxPool3d")

    def forward(self, input):
        if self.return_indices:
            return F.fractional_max_pool3d_with_indices(input, self.kernel_size, self.output_size, self.output_ratio,
                                                        self.return_indices, _random_samples=self._random_samples)
        return F._fractional_max_pool3d(input, self.kernel_size, self.output_size, self.output_ratio,
                                        self.return_indices, _random_samples=self._random_samples)
