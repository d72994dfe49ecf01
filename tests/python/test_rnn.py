"""Recurrent networks against torch 1.13: aten::lstm / gru / rnn_tanh /
rnn_relu on padded and packed sequences, their cells, packing and padding,
in eager calls, in scripts, in shape propagation and in torch-saved scripted
modules loaded by kiln; and the kiln.nn layers (RNN, LSTM, GRU, the cells)
with torch's state dicts."""
import io
import math
import warnings
from typing import List, Optional, Tuple  # noqa: F401  (TorchScript sources below)

import numpy as np
import pytest
import torch
from torch import Tensor  # noqa: F401

from conftest import assert_same, check_both, convert
import kiln

OPS = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}


class _Private:
    """kiln's aten operators with a leading underscore (kiln does not make
    them module functions; torch does)."""

    def __getattr__(self, name):
        return kiln._functions.op(name)


def private(lib):
    return _Private() if lib is kiln else torch


def torch_module(mode, input_size=4, hidden_size=5, dtype=torch.float32, **kwargs):
    """A torch layer of `mode` (its flat weights are the ops' params)."""
    torch.manual_seed(len(kwargs) * 7 + input_size)
    if mode == "LSTM":
        m = torch.nn.LSTM(input_size, hidden_size, **kwargs)
    elif mode == "GRU":
        m = torch.nn.GRU(input_size, hidden_size, **kwargs)
    else:
        m = torch.nn.RNN(input_size, hidden_size, nonlinearity="tanh" if mode == "RNN_TANH" else "relu", **kwargs)
    return m.to(dtype)


def flat_weights(m):
    return [w.detach().numpy().copy() for w in m._flat_weights]


def hidden_states(mode, layers, batch, hidden, dtype, rng, cell=None):
    h = rng.standard_normal((layers, batch, hidden)).astype(dtype)
    if mode == "LSTM":
        c = rng.standard_normal((layers, batch, cell or hidden)).astype(dtype)
        return [h, c]
    return h


def call_stacked(lib, mode, input, hx, params, *flags):
    return getattr(lib, OPS[mode])(input, hx, params, *flags)


# --- the stacked ops on padded sequences ----------------------------------------------------

@pytest.mark.parametrize("mode", list(OPS))
@pytest.mark.parametrize("num_layers,bidirectional,batch_first", [(1, False, False), (2, True, False),
                                                                  (2, False, True), (3, True, True)])
def test_stacked_matches_torch(mode, num_layers, bidirectional, batch_first, rng):
    m = torch_module(mode, num_layers=num_layers, bidirectional=bidirectional)
    d = 2 if bidirectional else 1
    x = rng.standard_normal((3, 6, 4) if batch_first else (6, 3, 4)).astype(np.float32)
    hx = hidden_states(mode, num_layers * d, 3, 5, np.float32, rng)
    check_both(call_stacked, mode, x, hx, flat_weights(m), True, num_layers, 0.0, False, bidirectional, batch_first,
               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", list(OPS))
def test_stacked_float64_without_biases(mode, rng):
    m = torch_module(mode, num_layers=2, bidirectional=True, bias=False, dtype=torch.float64)
    x = rng.standard_normal((5, 2, 4))
    hx = hidden_states(mode, 4, 2, 5, np.float64, rng)
    check_both(call_stacked, mode, x, hx, flat_weights(m), False, 2, 0.0, False, True, False, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("bias", [True, False])
def test_lstm_with_projections(bias, rng):
    m = torch_module("LSTM", hidden_size=6, num_layers=2, bidirectional=True, proj_size=3, bias=bias)
    x = rng.standard_normal((4, 2, 4)).astype(np.float32)
    hx = hidden_states("LSTM", 4, 2, 3, np.float32, rng, cell=6)
    check_both(call_stacked, "LSTM", x, hx, flat_weights(m), bias, 2, 0.0, False, True, True, rtol=1e-4, atol=1e-5)


def test_stacked_single_sequence_and_empty_batch(rng):
    m = torch_module("LSTM", num_layers=2)
    # One sequence (the hidden projection is a GEMV) and a batch of none.
    for batch in (1, 0):
        x = rng.standard_normal((7, batch, 4)).astype(np.float32)
        hx = hidden_states("LSTM", 2, batch, 5, np.float32, rng)
        check_both(call_stacked, "LSTM", x, hx, flat_weights(m), True, 2, 0.0, False, False, False, rtol=1e-4,
                   atol=1e-5)


def test_batch_first_output_is_a_transposed_view(rng):
    m = torch_module("GRU")
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    hx = rng.standard_normal((1, 2, 5)).astype(np.float32)
    out = kiln.gru(kiln.from_numpy(x), kiln.from_numpy(hx), convert(flat_weights(m), "kiln"), True, 1, 0.0, False,
                   False, True)[0]
    ref = torch.gru(torch.from_numpy(x), torch.from_numpy(hx), m._flat_weights, True, 1, 0.0, False, False, True)[0]
    assert tuple(out.stride()) == tuple(ref.stride())


def test_dropout_between_layers_in_training(rng):
    m = torch_module("LSTM", num_layers=2)
    x = rng.standard_normal((5, 3, 4)).astype(np.float32)
    hx = hidden_states("LSTM", 2, 3, 5, np.float32, rng)
    # p = 1 zeroes the second layer's input in both libraries: comparable.
    check_both(call_stacked, "LSTM", x, hx, flat_weights(m), True, 2, 1.0, True, False, False, rtol=1e-4, atol=1e-5)
    args = [kiln.from_numpy(x), convert(hx, "kiln"), convert(flat_weights(m), "kiln"), True, 2, 0.5]
    kiln.manual_seed(3)
    a = kiln.lstm(*args, True, False, False)[0].numpy()
    kiln.manual_seed(3)
    b = kiln.lstm(*args, True, False, False)[0].numpy()
    evaluated = kiln.lstm(*args, False, False, False)[0].numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, evaluated)
    # One layer: nothing to drop, whatever the probability.
    one = torch_module("GRU")
    check_both(call_stacked, "GRU", x, hx[0][:1], flat_weights(one), True, 1, 0.5, True, False, False, rtol=1e-4,
               atol=1e-5)


# --- packed sequences -------------------------------------------------------------------------------

def packed(rng, lengths, features=4, dtype=np.float32):
    """(data, batch_sizes) of sequences with these (sorted) lengths, as torch packs them."""
    x = torch.from_numpy(rng.standard_normal((max(lengths), len(lengths), features)).astype(dtype))
    data, batch_sizes = torch._pack_padded_sequence(x, torch.tensor(lengths), False)
    return data.numpy(), batch_sizes.numpy()


@pytest.mark.parametrize("mode", list(OPS))
@pytest.mark.parametrize("num_layers,bidirectional", [(1, False), (2, True)])
def test_packed_matches_torch(mode, num_layers, bidirectional, rng):
    m = torch_module(mode, num_layers=num_layers, bidirectional=bidirectional)
    d = 2 if bidirectional else 1
    data, batch_sizes = packed(rng, [6, 4, 4, 1])
    hx = hidden_states(mode, num_layers * d, 4, 5, np.float32, rng)

    def run(lib, data, batch_sizes, hx, params):
        return getattr(lib, OPS[mode])(data, batch_sizes, hx, params, True, num_layers, 0.0, False, bidirectional)

    check_both(run, data, batch_sizes, hx, flat_weights(m), rtol=1e-4, atol=1e-5)


def test_packed_lstm_with_projections_float64(rng):
    m = torch_module("LSTM", hidden_size=6, num_layers=2, bidirectional=True, proj_size=2, dtype=torch.float64)
    data, batch_sizes = packed(rng, [5, 3, 2], dtype=np.float64)
    hx = hidden_states("LSTM", 4, 3, 2, np.float64, rng, cell=6)
    check_both(lambda lib, *a: lib.lstm(*a, True, 2, 0.0, False, True), data, batch_sizes, hx, flat_weights(m),
               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_pack_and_pad(batch_first, dtype, rng):
    x = (rng.standard_normal((5, 4, 3, 2)) * 10).astype(dtype)
    lengths = np.array([4, 3, 3, 1, 1]) if batch_first else np.array([4, 4, 2])
    if not batch_first:
        x = x[:4, :3]
    check_both(lambda lib, x, n: private(lib)._pack_padded_sequence(x, n, batch_first), x, lengths)
    data, batch_sizes = torch._pack_padded_sequence(torch.from_numpy(x), torch.from_numpy(lengths), batch_first)
    for total_length, padding in ((0, 0.0), (7, -1.5), (lengths.max(), 3)):
        check_both(lambda lib, d, b: private(lib)._pad_packed_sequence(d, b, batch_first, padding, int(total_length)),
                   data.numpy(), batch_sizes.numpy())


def test_pack_out_overload(rng):
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)

    def run(lib, x, n, out0, out1):
        return private(lib)._pack_padded_sequence(x, n, False, out0=out0, out1=out1)

    out = kiln._C._overload("aten::_pack_padded_sequence.out")
    a, b = kiln.empty(0), kiln.empty(0, dtype=kiln.int64)
    out(kiln.from_numpy(x), kiln.tensor([3, 2]), False, out0=a, out1=b)
    data, batch_sizes = torch._pack_padded_sequence(torch.from_numpy(x), torch.tensor([3, 2]), False)
    assert_same(a, data)
    assert_same(b, batch_sizes)


@pytest.mark.parametrize("fn,message", [
    (lambda lib, x: private(lib)._pack_padded_sequence(x, lib.tensor([2, 3]), False), "must be sorted in decreasing order"),
    (lambda lib, x: private(lib)._pack_padded_sequence(x, lib.tensor([3, 0]), False), "greater than 0"),
    (lambda lib, x: private(lib)._pack_padded_sequence(x, lib.tensor([3]), False), "Expected `len(lengths)`"),
    (lambda lib, x: private(lib)._pack_padded_sequence(x, lib.tensor([3.0, 2.0]), False),
     "'lengths' argument should be a 1D CPU int64 tensor, but got 1D cpu Float tensor"),
    (lambda lib, x: private(lib)._pack_padded_sequence(x, lib.tensor([3, 2], dtype=lib.int32), False),
     "but got 1D cpu Int tensor"),
    (lambda lib, x: private(lib)._pad_packed_sequence(x[:, 0], lib.tensor([2, 2, 1]), False, 0.0, 2),
     "Expected total_length to be at least the length of the longest sequence"),
    (lambda lib, x: private(lib)._pad_packed_sequence(x[:, 0], lib.tensor([2, 2, 1], dtype=lib.int32), False, 0.0, 3),
     "'lengths' argument should be a 1D CPU int64 tensor"),
])
def test_packing_errors(fn, message, rng):
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)
    for lib in (kiln, torch):
        with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
            fn(lib, convert(x, "kiln" if lib is kiln else "torch"))


# --- cells -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,gates", [("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("biases", ["both", "none", "ih"])
def test_cells_match_torch(name, gates, dtype, biases, rng):
    batch, features, hidden = 3, 4, 5
    x = rng.standard_normal((batch, features)).astype(dtype)
    h = rng.standard_normal((batch, hidden)).astype(dtype)
    hx = [h, rng.standard_normal((batch, hidden)).astype(dtype)] if name == "lstm_cell" else h
    w_ih = rng.standard_normal((gates * hidden, features)).astype(dtype) * 0.5
    w_hh = rng.standard_normal((gates * hidden, hidden)).astype(dtype) * 0.5
    b_ih = rng.standard_normal(gates * hidden).astype(dtype) if biases != "none" else None
    b_hh = rng.standard_normal(gates * hidden).astype(dtype) if biases == "both" else None
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    check_both(lambda lib, *a: getattr(lib, name)(*a), x, hx, w_ih, w_hh, b_ih, b_hh, **tol)


def test_cell_errors(rng):
    m = torch_module("LSTM")
    w = flat_weights(m)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    h = np.zeros((2, 5), np.float32)
    cases = [
        ((rng.standard_normal((2, 3)).astype(np.float32), [h, h]), "input has inconsistent input_size: got 3 expected 4"),
        ((x, [h[:1], h]), "Input batch size 2 doesn't match hidden0 batch size 1"),
        ((x, [np.zeros((2, 6), np.float32), h]), "hidden0 has inconsistent hidden_size: got 6, expected 5"),
        ((x, [h]), "lstm_cell expects two hidden states"),
        ((x.astype(np.float64), [h.astype(np.float64)] * 2), "mat1 and mat2 must have the same dtype"),
    ]
    for (inp, hx), message in cases:
        for lib, name in ((kiln, "kiln"), (torch, "torch")):
            with pytest.raises(RuntimeError, match=message):
                lib.lstm_cell(convert(inp, name), convert(hx, name), *convert(w, name))
    with pytest.raises(IndexError):
        kiln.gru_cell(kiln.zeros(4), kiln.zeros(5), *convert(flat_weights(torch_module("GRU")), "kiln"))


def test_stacked_errors(rng):
    m = torch_module("LSTM")
    w = flat_weights(m)
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)
    h = np.zeros((1, 2, 5), np.float32)
    cases = [
        ((rng.standard_normal((3, 2, 6)).astype(np.float32), [h, h], w, 1), r"mat1 and mat2 shapes cannot be "
                                                                            r"multiplied \(6x6 and 4x20\)"),
        ((x, [h], w, 1), "lstm expects two hidden states"),
        ((x, [h, h], w[:3], 1), "got an incorrect number of RNN parameters"),
        ((x, [h, h], w, 2), "Expected more hidden states in stacked_rnn"),
        ((x.astype(np.float64), [h, h], w, 1), "mat1 and mat2 must have the same dtype"),
        ((x, [np.zeros((1, 3, 5), np.float32), h], w, 1), "The size of tensor a \\(3\\) must match the size of "
                                                          "tensor b \\(2\\) at non-singleton dimension 0"),
        ((rng.standard_normal((0, 2, 4)).astype(np.float32), [h, h], w, 1),
         "Expected sequence length to be larger than 0 in RNN"),
    ]
    for (inp, hx, params, layers), message in cases:
        for lib, name in ((kiln, "kiln"), (torch, "torch")):
            with pytest.raises(RuntimeError, match=message):
                lib.lstm(convert(inp, name), convert(hx, name), convert(params, name), True, layers, 0.0, False,
                         False, False)
    # Bidirectional needs pairs; int data is not a recurrent input.
    with pytest.raises(RuntimeError, match="Odd number of params or hiddens given to a bidirectional RNN"):
        kiln.gru(kiln.from_numpy(x), kiln.zeros(2, 2, 5), convert(flat_weights(torch_module("GRU")), "kiln"), True,
                 1, 0.0, False, True, False)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        kiln.rnn_tanh(kiln.zeros(3, 2, 4, dtype=kiln.int64), kiln.zeros(1, 2, 5, dtype=kiln.int64),
                      [kiln.zeros(5, 4, dtype=kiln.int64), kiln.zeros(5, 5, dtype=kiln.int64)], False, 1, 0.0, False,
                      False, False)
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Int"):
        kiln.lstm(kiln.zeros(5, 4), kiln.tensor([2, 2, 1], dtype=kiln.int32), [kiln.zeros(1, 2, 5)] * 2,
                  convert(w, "kiln"), True, 1, 0.0, False, False)


# --- in scripts -----------------------------------------------------------------------------------------------

SCRIPT = """
def stacked(x: Tensor, h: Tensor, c: Tensor, params: List[Tensor]):
    out, hy, cy = torch.lstm(x, [h, c], params, True, 2, 0.0, False, True, False)
    return out, hy, cy

def gru_packed(x: Tensor, lengths: Tensor, h: Tensor, params: List[Tensor]):
    data, batch_sizes = torch._pack_padded_sequence(x, lengths, True)
    out, hy = torch.gru(data, batch_sizes, h, params, True, 1, 0.0, False, False)
    padded, lens = torch._pad_packed_sequence(out, batch_sizes, True, 0.0, 0)
    return padded, lens, hy

def cells(x: Tensor, h: Tensor, c: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor):
    hy, cy = torch.lstm_cell(x, [h, c], w_ih, w_hh, b_ih, b_hh)
    return hy, cy
"""


def test_in_scripts(rng):
    unit = kiln.compile(SCRIPT)
    reference = torch.jit.CompilationUnit(SCRIPT)
    lstm = torch_module("LSTM", num_layers=2, bidirectional=True)
    x = rng.standard_normal((5, 3, 4)).astype(np.float32)
    h, c = hidden_states("LSTM", 4, 3, 5, np.float32, rng)
    args = [x, h, c, flat_weights(lstm)]
    assert_same(unit.stacked(*convert(args, "kiln")), reference.stacked(*convert(args, "torch")), rtol=1e-4,
                atol=1e-5)
    gru = torch_module("GRU")
    args = [rng.standard_normal((3, 6, 4)).astype(np.float32), np.array([6, 4, 2]), np.zeros((1, 3, 5), np.float32),
            flat_weights(gru)]
    assert_same(unit.gru_packed(*convert(args, "kiln")), reference.gru_packed(*convert(args, "torch")), rtol=1e-4,
                atol=1e-5)
    w = flat_weights(torch_module("LSTM"))
    args = [x[0], h[0], c[0]] + w
    assert_same(unit.cells(*convert(args, "kiln")), reference.cells(*convert(args, "torch")), rtol=1e-4, atol=1e-5)


def test_shape_propagation():
    unit = kiln.compile(SCRIPT)
    lstm = torch_module("LSTM", num_layers=2, bidirectional=True)
    graph = str(unit.stacked.graph_for(kiln.zeros(5, 3, 4), kiln.zeros(4, 3, 5), kiln.zeros(4, 3, 5),
                                       convert(flat_weights(lstm), "kiln")))
    assert "Float(5, 3, 10" in graph and "Float(4, 3, 5" in graph, graph
    graph = str(unit.cells.graph_for(kiln.zeros(3, 4), kiln.zeros(3, 5), kiln.zeros(3, 5),
                                     *convert(flat_weights(torch_module("LSTM")), "kiln")))
    assert "Float(3, 5" in graph, graph


# --- torch-saved scripted modules ---------------------------------------------------------------------------------

class Padded(torch.nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x: Tensor):
        return self.rnn(x)


class Packed(torch.nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x: Tensor, lengths: Tensor):
        batch_first = self.rnn.batch_first
        p = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=False)
        out, hidden = self.rnn(p)
        padded, lens = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first, total_length=7)
        return padded, lens, hidden


def round_trip(module):
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(module.eval()), buffer)
    return torch.jit.load(io.BytesIO(buffer.getvalue())), kiln.load(io.BytesIO(buffer.getvalue()))


@pytest.mark.parametrize("mode,kwargs", [
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(num_layers=2, proj_size=3, batch_first=True, dropout=0.3)),
    ("GRU", dict(num_layers=2, batch_first=True)),
    ("RNN_TANH", dict(bidirectional=True)),
    ("RNN_RELU", dict(num_layers=2, bias=False)),
])
def test_torch_saved_modules(mode, kwargs, rng):
    rnn = torch_module(mode, **kwargs)
    x = rng.standard_normal((3, 6, 4)).astype(np.float32)
    ours_in, theirs_in = convert([x], "kiln"), convert([x], "torch")
    reference, loaded = round_trip(Padded(rnn))
    assert_same(loaded(*ours_in), reference(*theirs_in), rtol=1e-4, atol=1e-5)
    # Unbatched.
    assert_same(loaded(ours_in[0][0]), reference(theirs_in[0][0]), rtol=1e-4, atol=1e-5)
    reference, loaded = round_trip(Packed(rnn))
    lengths = np.array([4, 6, 2]) if rnn.batch_first else np.array([3, 1, 2, 3, 3, 2])
    args = [x, lengths]
    assert_same(loaded(*convert(args, "kiln")), reference(*convert(args, "torch")), rtol=1e-4, atol=1e-5)


def test_torch_saved_cells(rng):
    class Cells(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTMCell(4, 5)
            self.gru = torch.nn.GRUCell(5, 5)
            self.rnn = torch.nn.RNNCell(5, 3, nonlinearity="relu")

        def forward(self, x: Tensor):
            h, c = self.lstm(x)
            g = self.gru(h)
            return self.rnn(g), c

    torch.manual_seed(0)
    reference, loaded = round_trip(Cells())
    x = rng.standard_normal((2, 4)).astype(np.float32)
    assert_same(loaded(kiln.from_numpy(x)), reference(torch.from_numpy(x)), rtol=1e-4, atol=1e-5)
    assert_same(loaded(kiln.from_numpy(x[0])), reference(torch.from_numpy(x[0])), rtol=1e-4, atol=1e-5)


def test_torch_saved_module_errors(rng):
    reference, loaded = round_trip(Padded(torch_module("LSTM")))
    x = rng.standard_normal((3, 2, 6)).astype(np.float32)
    with pytest.raises(torch.jit.Error, match="input.size\\(-1\\) must be equal to input_size. Expected 4, got 6"):
        reference(torch.from_numpy(x))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 4, got 6"):
        loaded(kiln.from_numpy(x))


# --- kiln.nn layers ----------------------------------------------------------------------------------------------

def kiln_layer(torch_layer, cls, *args, **kwargs):
    layer = getattr(kiln.nn, cls)(*args, **kwargs)
    state = {k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in torch_layer.state_dict().items()}
    assert list(layer.state_dict()) == list(state)
    layer.load_state_dict(state)
    return layer


LAYERS = [
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(proj_size=3, batch_first=True)),
    ("GRU", dict(num_layers=2, batch_first=True, bidirectional=True)),
    ("RNN", dict(nonlinearity="relu", num_layers=2)),
    ("RNN", dict(bias=False)),
]


@pytest.mark.parametrize("cls,kwargs", LAYERS)
def test_nn_layers(cls, kwargs, rng):
    torch.manual_seed(1)
    theirs = getattr(torch.nn, cls)(4, 6, **kwargs)
    ours = kiln_layer(theirs, cls, 4, 6, **kwargs)
    assert repr(ours) == repr(theirs)
    x = rng.standard_normal((3, 5, 4)).astype(np.float32)
    tol = dict(rtol=1e-4, atol=1e-5)
    with torch.no_grad():
        assert_same(ours(kiln.from_numpy(x)), theirs(torch.from_numpy(x)), **tol)
        assert_same(ours(kiln.from_numpy(x[0])), theirs(torch.from_numpy(x[0])), **tol)
        scripted = kiln.script(ours)
        assert_same(scripted(kiln.from_numpy(x)), theirs(torch.from_numpy(x)), **tol)
        # With a given hidden state.
        t_out, t_hidden = theirs(torch.from_numpy(x))
        hidden = convert(tuple(h.numpy() for h in t_hidden) if cls == "LSTM" else t_hidden.numpy(), "kiln")
        assert_same(ours(kiln.from_numpy(x), hidden), theirs(torch.from_numpy(x), t_hidden), **tol)
        assert_same(scripted(kiln.from_numpy(x), hidden), theirs(torch.from_numpy(x), t_hidden), **tol)
        # Packed, sorted here.
        lengths = [2, 5, 3] if ours.batch_first else [3, 1, 2, 3, 3]
        t_packed = torch.nn.utils.rnn.pack_padded_sequence(torch.from_numpy(x), torch.tensor(lengths),
                                                           batch_first=ours.batch_first, enforce_sorted=False)
        k_packed = kiln.nn.utils.rnn.pack_padded_sequence(kiln.from_numpy(x), lengths, batch_first=ours.batch_first,
                                                          enforce_sorted=False)
        t_out, t_hidden = theirs(t_packed)
        k_out, k_hidden = ours(k_packed)
        assert isinstance(k_out, kiln.nn.utils.rnn.PackedSequence)
        assert_same(k_hidden, t_hidden, **tol)
        assert_same(tuple(k_out), tuple(t_out), **tol)
        t_padded = torch.nn.utils.rnn.pad_packed_sequence(t_out, batch_first=ours.batch_first, padding_value=-1.0)
        k_padded = kiln.nn.utils.rnn.pad_packed_sequence(k_out, batch_first=ours.batch_first, padding_value=-1.0)
        assert_same(k_padded, t_padded, **tol)


def test_nn_layer_float64_and_conversion(rng):
    torch.manual_seed(2)
    theirs = torch.nn.GRU(3, 4).double()
    ours = kiln.nn.GRU(3, 4, dtype=kiln.float64)
    ours.load_state_dict({k: kiln.from_numpy(v.numpy().copy()) for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((2, 2, 3))
    with torch.no_grad():
        assert_same(ours(kiln.from_numpy(x)), theirs(torch.from_numpy(x)), rtol=1e-10, atol=1e-12)
    # .float() replaces the parameters: the flat weight list follows.
    ours.float()
    assert all(w.dtype == kiln.float32 for w in ours._flat_weights)
    out, _ = ours(kiln.from_numpy(x.astype(np.float32)))
    assert out.dtype == kiln.float32


@pytest.mark.parametrize("cls", ["LSTMCell", "GRUCell", "RNNCell"])
def test_nn_cells(cls, rng):
    torch.manual_seed(3)
    theirs = getattr(torch.nn, cls)(4, 5)
    ours = kiln_layer(theirs, cls, 4, 5)
    assert repr(ours) == repr(theirs)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    with torch.no_grad():
        for inp in (x, x[0]):
            assert_same(ours(kiln.from_numpy(inp)), theirs(torch.from_numpy(inp)), rtol=1e-4, atol=1e-5)
            assert_same(kiln.script(ours)(kiln.from_numpy(inp)), theirs(torch.from_numpy(inp)), rtol=1e-4,
                        atol=1e-5)


def test_nn_parameters_and_init():
    kiln.manual_seed(0)
    lstm = kiln.nn.LSTM(3, 8, num_layers=2, bidirectional=True, proj_size=2)
    reference = torch.nn.LSTM(3, 8, num_layers=2, bidirectional=True, proj_size=2)
    assert [(n, tuple(p.shape)) for n, p in lstm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in reference.named_parameters()]
    assert lstm._flat_weights_names == reference._flat_weights_names
    bound = 1 / math.sqrt(8)
    for p in lstm.parameters():
        values = p.numpy()
        assert values.min() >= -bound and values.max() <= bound and values.std() > bound / 4
    cell = kiln.nn.GRUCell(3, 4, bias=False)
    assert [n for n, _ in cell.named_parameters()] == ["weight_ih", "weight_hh"]
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        kiln.nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        kiln.nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        kiln.nn.GRU(3, 4, dropout=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'gelu'"):
        kiln.nn.RNN(3, 4, nonlinearity="gelu")


def test_nn_errors(rng):
    lstm = kiln.nn.LSTM(4, 5)
    scripted = kiln.script(lstm)
    reference = torch.nn.LSTM(4, 5)
    for fn in (lstm, scripted):
        with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 4, got 6"):
            fn(kiln.zeros(3, 2, 6))
        with pytest.raises(RuntimeError, match="Expected hidden\\[0\\] size \\(1, 2, 5\\), got \\[1, 3, 5\\]"):
            fn(kiln.zeros(3, 2, 4), (kiln.zeros(1, 3, 5), kiln.zeros(1, 2, 5)))
        with pytest.raises(RuntimeError, match="For batched 3-D input, hx and cx should also be 3-D"):
            fn(kiln.zeros(3, 2, 4), (kiln.zeros(3, 5), kiln.zeros(3, 5)))
    with pytest.raises(RuntimeError, match="Expected hidden\\[0\\] size \\(1, 2, 5\\), got \\[1, 3, 5\\]"):
        reference(torch.zeros(3, 2, 4), (torch.zeros(1, 3, 5), torch.zeros(1, 2, 5)))
    gru = kiln.nn.GRU(4, 5)
    with pytest.raises(RuntimeError, match="Expected hidden size \\(1, 2, 5\\), got \\[1, 2, 6\\]"):
        gru(kiln.zeros(3, 2, 4), kiln.zeros(1, 2, 6))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"):
        kiln.script(gru)(kiln.zeros(3, 4), kiln.zeros(1, 1, 5))


# --- a language model, as torch saves it and as kiln.nn writes it ---------------------------------------------------

class TorchLanguageModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Linear(8, 16)
        self.lstm = torch.nn.LSTM(16, 32, 2, batch_first=True)
        self.gru = torch.nn.GRU(32, 16, 2, bidirectional=True)
        self.out = torch.nn.Linear(32, 8)

    def forward(self, x):
        y, (h, c) = self.lstm(self.embed(x))
        z, g = self.gru(y)
        return self.out(z), h, c, g


class KilnLanguageModel(kiln.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = kiln.nn.Linear(8, 16)
        self.lstm = kiln.nn.LSTM(16, 32, 2, batch_first=True)
        self.gru = kiln.nn.GRU(32, 16, 2, bidirectional=True)
        self.out = kiln.nn.Linear(32, 8)

    def forward(self, x):
        y, (h, c) = self.lstm(self.embed(x))
        z, g = self.gru(y)
        return self.out(z), h, c, g


@pytest.mark.parametrize("how", ["script", "trace", "freeze"])
def test_language_model_archives(how, rng):
    torch.manual_seed(4)
    model = TorchLanguageModel().eval()
    x = torch.from_numpy(rng.standard_normal((3, 7, 8)).astype(np.float32))
    if how == "trace":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", torch.jit.TracerWarning)  # torch's own size checks
            saved = torch.jit.trace(model, x)
    elif how == "script":
        saved = torch.jit.script(model)
    else:
        saved = torch.jit.freeze(torch.jit.script(model))
    buffer = io.BytesIO()
    torch.jit.save(saved, buffer)
    loaded = kiln.load(io.BytesIO(buffer.getvalue()))
    with torch.no_grad():
        expected = model(x)
    assert_same(loaded(kiln.from_numpy(x.numpy().copy())), expected, rtol=1e-4, atol=1e-5)


def test_language_model_in_kiln_nn(rng):
    torch.manual_seed(5)
    theirs = TorchLanguageModel().eval()
    ours = KilnLanguageModel().eval()
    ours.load_state_dict({k: kiln.from_numpy(v.numpy().copy()) for k, v in theirs.state_dict().items()})
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x))
    assert_same(ours(kiln.from_numpy(x)), expected, rtol=1e-4, atol=1e-5)
    assert_same(kiln.script(ours)(kiln.from_numpy(x)), expected, rtol=1e-4, atol=1e-5)
