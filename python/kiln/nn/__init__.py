"""kiln.nn: modules (as torch.nn), their parameters, containers, a few stock
layers, and the functional forms of the operators (kiln.nn.functional).

Modules run eagerly; kiln.script(module) compiles them (kiln.nn._script)."""
from . import functional  # noqa: F401
from .parameter import Parameter
from .module import Module
from .container import ModuleList, ModuleDict, Sequential
from .layers import Identity, Linear, ReLU, Tanh, Sigmoid
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from . import utils  # noqa: F401

__all__ = ["Parameter", "Module", "ModuleList", "ModuleDict", "Sequential",
           "Identity", "Linear", "ReLU", "Tanh", "Sigmoid", "functional",
           "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "utils"]
