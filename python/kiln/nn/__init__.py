"""kiln.nn: modules (as torch.nn), their parameters, containers, a few stock
layers, and the functional forms of the operators (kiln.nn.functional).

Modules run eagerly; kiln.script(module) compiles them (kiln.nn._script)."""
from . import functional  # noqa: F401
from .parameter import Parameter
from .module import Module
from .container import ModuleList, ModuleDict, Sequential
from .layers import Identity, Linear, ReLU, Tanh, Sigmoid
from .layernorm import LayerNorm
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
from .transformer import (MultiheadAttention, TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer,
                          TransformerDecoder, Transformer)

__all__ = ["Parameter", "Module", "ModuleList", "ModuleDict", "Sequential",
           "Identity", "Linear", "ReLU", "Tanh", "Sigmoid", "functional",
           "LayerNorm", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
           "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer"]
