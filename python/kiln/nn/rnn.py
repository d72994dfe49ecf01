"""Recurrent layers: RNN, LSTM, GRU and their cells, as torch.nn's.

Constructor arguments, parameter names (weight_ih_l0, weight_hh_l0_reverse,
bias_ih_l0, weight_hr_l0, ...), initialisation (uniform in
+-1/sqrt(hidden_size), from kiln's generator) and state_dict keys are
torch's, so torch state dicts load as they are. Forwards are TorchScript and
follow torch 1.13's (the same checks and messages); kiln.script compiles them
for padded input. Eagerly, the stacked layers also take a PackedSequence
(kiln.nn.utils.rnn), as torch's do."""
import math

import kiln
import warnings
from typing import List, Optional, Tuple  # noqa: F401  (TorchScript annotations)

from .. import _functions
from .._jit_internal import export
from .._C import Tensor
from . import functional as F
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _empty(shape, dtype):
    return _functions.op("empty")(shape, dtype=dtype) if dtype is not None else _functions.op("empty")(shape)


class RNNBase(Module):
    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          "expects num_layers greater than 1, but got dropout={} and num_layers={}".format(
                              dropout, num_layers))
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gate_size = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gate_size is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size *= hidden_size

        self._flat_weights_names = []
        self._all_weights = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [[gate_size, layer_input_size], [gate_size, real_hidden_size]]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [[gate_size], [gate_size]]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes += [[proj_size, hidden_size]]
                    names += ["weight_hr_l{}{}"]
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(_empty(shape, dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self):
        self._flat_weights = [getattr(self, name) for name in self._flat_weights_names]

    def __setattr__(self, attr, value):
        if "_flat_weights_names" in self.__dict__ and attr in self._flat_weights_names \
                and "_flat_weights" in self.__dict__:
            self._flat_weights[self._flat_weights_names.index(attr)] = value
        super().__setattr__(attr, value)

    def _apply(self, fn):
        result = super()._apply(fn)
        self._init_flat_weights()
        return result

    def flatten_parameters(self):
        """torch's cuDNN weight flattening: nothing to do on the CPU."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        with kiln.no_grad():  # initializing leaves that require grad, as torch.nn.init does
            for weight in self.parameters():
                weight.uniform_(-stdv, stdv)

    @property
    def all_weights(self):
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    @export
    def check_input(self, input: Tensor, batch_sizes: Optional[Tensor]) -> None:
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError("input must have {} dimensions, got {}".format(expected_input_dim, input.dim()))
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected {}, got {}".format(
                self.input_size, input.size(-1)))

    @export
    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Optional[Tensor]) -> Tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        if self.proj_size > 0:
            expected_hidden_size = (self.num_layers * num_directions, mini_batch, self.proj_size)
        else:
            expected_hidden_size = (self.num_layers * num_directions, mini_batch, self.hidden_size)
        return expected_hidden_size

    @export
    def check_hidden_size(self, hx: Tensor, expected_hidden_size: Tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        expected = [expected_hidden_size[0], expected_hidden_size[1], expected_hidden_size[2]]
        if list(hx.size()) != expected:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    @export
    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Optional[Tensor]):
        self.check_input(input, batch_sizes)
        expected_hidden_size = self.get_expected_hidden_size(input, batch_sizes)
        self.check_hidden_size(hidden, expected_hidden_size)

    def __call__(self, *args, **kwargs):
        # Packed input runs eagerly (the compiled forward takes padded tensors).
        if args and isinstance(args[0], PackedSequence):
            return self._forward_packed(*args, **kwargs)
        return super().__call__(*args, **kwargs)

    def _forward_packed(self, input, hx=None):
        data, batch_sizes, sorted_indices, unsorted_indices = input
        max_batch_size = int(batch_sizes[0])
        num_directions = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        if hx is None:
            real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
            h = _functions.op("zeros")([self.num_layers * num_directions, max_batch_size, real_hidden_size],
                                       dtype=data.dtype)
            if lstm:
                c = _functions.op("zeros")([self.num_layers * num_directions, max_batch_size, self.hidden_size],
                                           dtype=data.dtype)
                hx = (h, c)
            else:
                hx = h
        else:
            hx = self._permute(hx, sorted_indices)
        self.check_forward_args(data, hx, batch_sizes)
        if lstm:
            result = F.lstm(data, batch_sizes, [hx[0], hx[1]], self._flat_weights, self.bias, self.num_layers,
                            self.dropout, self.training, self.bidirectional)
            hidden = (result[1], result[2])
        else:
            op = {"GRU": F.gru, "RNN_TANH": F.rnn_tanh, "RNN_RELU": F.rnn_relu}[self.mode]
            result = op(data, batch_sizes, hx, self._flat_weights, self.bias, self.num_layers, self.dropout,
                        self.training, self.bidirectional)
            hidden = result[1]
        output = PackedSequence(result[0], batch_sizes, sorted_indices, unsorted_indices)
        return output, self._permute(hidden, unsorted_indices)

    @staticmethod
    def _permute(hx, permutation):
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_(t-1) W_hh^T + b_hh) (or ReLU)."""

    _jit_override_qualname = "__torch__.torch.nn.modules.rnn.RNN"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError("Unknown nonlinearity '{}'".format(self.nonlinearity))
        super().__init__(mode, *args, **kwargs)

    def __setattr__(self, attr, value):
        if attr == "nonlinearity" and "_parameters" not in self.__dict__:
            object.__setattr__(self, attr, value)  # set before Module.__init__, as torch's RNN does
            return
        super().__setattr__(attr, value)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(
                        "For unbatched 2-D input, hx should also be 2-D but got {}-D tensor".format(hx.dim()))
                hx = hx.unsqueeze(1)
        else:
            if hx is not None and hx.dim() != 3:
                raise RuntimeError("For batched 3-D input, hx should also be 3-D but got {}-D tensor".format(
                    hx.dim()))
        max_batch_size = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            num_directions = 2 if self.bidirectional else 1
            hx = F.zeros([self.num_layers * num_directions, max_batch_size, self.hidden_size], dtype=input.dtype,
                         device=input.device)
        assert hx is not None
        self.check_forward_args(input, hx, None)
        if self.mode == "RNN_TANH":
            result = F.rnn_tanh(input, hx, self._flat_weights, self.bias, self.num_layers, self.dropout,
                                self.training, self.bidirectional, self.batch_first)
        else:
            result = F.rnn_relu(input, hx, self._flat_weights, self.bias, self.num_layers, self.dropout,
                                self.training, self.bidirectional, self.batch_first)
        output = result[0]
        hidden = result[1]
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, hidden


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o, as torch.nn.LSTM (proj_size included)."""

    _jit_override_qualname = "__torch__.torch.nn.modules.rnn.LSTM"

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    @export
    def get_expected_cell_size(self, input: Tensor, batch_sizes: Optional[Tensor]) -> Tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        expected_hidden_size = (self.num_layers * num_directions, mini_batch, self.hidden_size)
        return expected_hidden_size

    @export
    def check_forward_args(self, input: Tensor, hidden: Tuple[Tensor, Tensor],  # type: ignore[override]
                           batch_sizes: Optional[Tensor]):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input: Tensor,
                hx: Optional[Tuple[Tensor, Tensor]] = None) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        max_batch_size = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            num_directions = 2 if self.bidirectional else 1
            real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
            h_zeros = F.zeros([self.num_layers * num_directions, max_batch_size, real_hidden_size],
                              dtype=input.dtype, device=input.device)
            c_zeros = F.zeros([self.num_layers * num_directions, max_batch_size, self.hidden_size],
                              dtype=input.dtype, device=input.device)
            hidden_in = (h_zeros, c_zeros)
        else:
            hidden_in = hx
            if is_batched:
                if hidden_in[0].dim() != 3 or hidden_in[1].dim() != 3:
                    raise RuntimeError(
                        "For batched 3-D input, hx and cx should also be 3-D but got ({}-D, {}-D) tensors".format(
                            hidden_in[0].dim(), hidden_in[1].dim()))
            else:
                if hidden_in[0].dim() != 2 or hidden_in[1].dim() != 2:
                    raise RuntimeError(
                        "For unbatched 2-D input, hx and cx should also be 2-D but got ({}-D, {}-D) tensors".format(
                            hidden_in[0].dim(), hidden_in[1].dim()))
                hidden_in = (hidden_in[0].unsqueeze(1), hidden_in[1].unsqueeze(1))
        self.check_forward_args(input, hidden_in, None)
        result = F.lstm(input, [hidden_in[0], hidden_in[1]], self._flat_weights, self.bias, self.num_layers,
                        self.dropout, self.training, self.bidirectional, self.batch_first)
        output = result[0]
        hidden = (result[1], result[2])
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1))
        return output, hidden


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z, n, as torch.nn.GRU."""

    _jit_override_qualname = "__torch__.torch.nn.modules.rnn.GRU"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(
                        "For unbatched 2-D input, hx should also be 2-D but got {}-D tensor".format(hx.dim()))
                hx = hx.unsqueeze(1)
        else:
            if hx is not None and hx.dim() != 3:
                raise RuntimeError("For batched 3-D input, hx should also be 3-D but got {}-D tensor".format(
                    hx.dim()))
        max_batch_size = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            num_directions = 2 if self.bidirectional else 1
            hx = F.zeros([self.num_layers * num_directions, max_batch_size, self.hidden_size], dtype=input.dtype,
                         device=input.device)
        assert hx is not None
        self.check_forward_args(input, hx, None)
        result = F.gru(input, hx, self._flat_weights, self.bias, self.num_layers, self.dropout, self.training,
                       self.bidirectional, self.batch_first)
        output = result[0]
        hidden = result[1]
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, hidden


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_empty([num_chunks * hidden_size, input_size], dtype))
        self.weight_hh = Parameter(_empty([num_chunks * hidden_size, hidden_size], dtype))
        if bias:
            self.bias_ih = Parameter(_empty([num_chunks * hidden_size], dtype))
            self.bias_hh = Parameter(_empty([num_chunks * hidden_size], dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        with kiln.no_grad():  # initializing leaves that require grad, as torch.nn.init does
            for weight in self.parameters():
                weight.uniform_(-stdv, stdv)


class RNNCell(RNNCellBase):
    _jit_override_qualname = "__torch__.torch.nn.modules.rnn.RNNCell"
    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        if input.dim() != 1 and input.dim() != 2:
            raise AssertionError(
                "RNNCell: Expected input to be 1-D or 2-D but received {}-D tensor".format(input.dim()))
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            state = F.zeros([input.size(0), self.hidden_size], dtype=input.dtype, device=input.device)
        else:
            state = hx.unsqueeze(0) if not is_batched else hx
        if self.nonlinearity == "tanh":
            ret = F.rnn_tanh_cell(input, state, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        elif self.nonlinearity == "relu":
            ret = F.rnn_relu_cell(input, state, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        else:
            ret = input
            raise RuntimeError("Unknown nonlinearity: {}".format(self.nonlinearity))
        if not is_batched:
            ret = ret.squeeze(0)
        return ret


class LSTMCell(RNNCellBase):
    _jit_override_qualname = "__torch__.torch.nn.modules.rnn.LSTMCell"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Optional[Tuple[Tensor, Tensor]] = None) -> Tuple[Tensor, Tensor]:
        if input.dim() != 1 and input.dim() != 2:
            raise AssertionError(
                "LSTMCell: Expected input to be 1-D or 2-D but received {}-D tensor".format(input.dim()))
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = F.zeros([input.size(0), self.hidden_size], dtype=input.dtype, device=input.device)
            state = (zeros, zeros)
        else:
            state = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if not is_batched else hx
        ret = F.lstm_cell(input, [state[0], state[1]], self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        if not is_batched:
            ret = (ret[0].squeeze(0), ret[1].squeeze(0))
        return ret


class GRUCell(RNNCellBase):
    _jit_override_qualname = "__torch__.torch.nn.modules.rnn.GRUCell"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        if input.dim() != 1 and input.dim() != 2:
            raise AssertionError(
                "GRUCell: Expected input to be 1-D or 2-D but received {}-D tensor".format(input.dim()))
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            state = F.zeros([input.size(0), self.hidden_size], dtype=input.dtype, device=input.device)
        else:
            state = hx.unsqueeze(0) if not is_batched else hx
        ret = F.gru_cell(input, state, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        if not is_batched:
            ret = ret.squeeze(0)
        return ret
