"""kiln.nn: modules (as torch.nn), their parameters, containers, a few stock
layers, and the functional forms of the operators (kiln.nn.functional).

Modules run eagerly; kiln.script(module) compiles them (kiln.nn._script)."""
from . import functional
from .parameter import Parameter
from .module import Module
from .container import ModuleList, ModuleDict, ParameterDict, ParameterList, Sequential
from .layers import Identity, Linear, Bilinear, ReLU, Tanh, Sigmoid
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, AdaptiveAvgPool1d,
                      AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
                      MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, LPPool1d, LPPool2d, FractionalMaxPool2d,
                      FractionalMaxPool3d)
from .normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, InstanceNorm1d, InstanceNorm2d,
                            InstanceNorm3d, LocalResponseNorm, CrossMapLRN2d)
from .sparse import Embedding, EmbeddingBag
from .loss import (L1Loss, MSELoss, SmoothL1Loss, HuberLoss, NLLLoss, NLLLoss2d, CrossEntropyLoss, BCELoss,
                   BCEWithLogitsLoss, KLDivLoss, PoissonNLLLoss, GaussianNLLLoss, HingeEmbeddingLoss,
                   MultiLabelMarginLoss, SoftMarginLoss, MultiLabelSoftMarginLoss, CosineEmbeddingLoss,
                   MarginRankingLoss, MultiMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss, CTCLoss)
from .distance import PairwiseDistance, CosineSimilarity
from . import activation, upsampling, padding, pixelshuffle, fold
from .activation import *
from .upsampling import *
from .padding import *
from .pixelshuffle import *
from .fold import *
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from . import utils
from .layernorm import LayerNorm
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
from .transformer import (MultiheadAttention, TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer,
                          TransformerDecoder, Transformer)

__all__ = [
    "Parameter", "Module", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Sequential", "Identity", "Linear", "ReLU", "Tanh",
    "Sigmoid", "functional", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d",
    "InstanceNorm2d", "InstanceNorm3d", "Embedding", "EmbeddingBag", "L1Loss", "MSELoss", "SmoothL1Loss",
    "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "RNNBase", "RNN",
    "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "utils", "LayerNorm", "Dropout",
    "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "MultiheadAttention",
    "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer", "TransformerDecoder",
    "Transformer", "Bilinear", "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d", "LPPool1d", "LPPool2d", "LocalResponseNorm", "CrossMapLRN2d", "PoissonNLLLoss", "GaussianNLLLoss",
    "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
    "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss",
    "NLLLoss2d", "PairwiseDistance", "CosineSimilarity",
]
