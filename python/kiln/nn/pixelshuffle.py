"""PixelShuffle, PixelUnshuffle and ChannelShuffle, as torch.nn's."""
from . import functional as F
from .module import Module


class PixelShuffle(Module):
    _jit_override_qualname = "__torch__.torch.nn.modules.pixelshuffle.PixelShuffle"
    __constants__ = ["upscale_factor"]
    upscale_factor: int

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return "upscale_factor={}".format(self.upscale_factor)


class PixelUnshuffle(Module):
    _jit_override_qualname = "__torch__.torch.nn.modules.pixelshuffle.PixelUnshuffle"
    __constants__ = ["downscale_factor"]
    downscale_factor: int

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return "downscale_factor={}".format(self.downscale_factor)


class ChannelShuffle(Module):
    _jit_override_qualname = "__torch__.torch.nn.modules.channelshuffle.ChannelShuffle"
    __constants__ = ["groups"]
    groups: int

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return "groups={}".format(self.groups)


__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]
