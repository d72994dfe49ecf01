"""The dropout layers, as torch.nn's: identity in eval mode; in training,
Bernoulli masks from kiln's random generator."""
from . import functional as F
from ._functional_dropout import dropout1d, dropout3d
from .module import Module


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]
    p: float
    inplace: bool

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError("dropout probability has to be between 0 and 1, but got {}".format(p))
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return "p={}, inplace={}".format(self.p, self.inplace)


class Dropout(_DropoutNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.dropout.Dropout"

    def forward(self, input):
        if self.inplace:
            return F.dropout_(input, self.p, self.training)
        return F.dropout(input, self.p, self.training)


class Dropout1d(_DropoutNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.dropout.Dropout1d"

    def forward(self, input):
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.dropout.Dropout2d"

    def forward(self, input):
        if self.inplace:
            return F.feature_dropout_(input, self.p, self.training)
        return F.feature_dropout(input, self.p, self.training)


class Dropout3d(_DropoutNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.dropout.Dropout3d"

    def forward(self, input):
        return dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.dropout.AlphaDropout"

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    _jit_override_qualname = "__torch__.torch.nn.modules.dropout.FeatureAlphaDropout"

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)
