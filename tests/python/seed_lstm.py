"""Seed 003's LSTM, the one copy the tests and benchmarks share: the cell
and the loop over time steps, as TorchScript source; `eager(lib)` runs the
same source as plain Python over torch or kiln."""
from typing import List, Tuple

LSTM_CELL = """
def lstm_cell(input, hidden: Tuple[Tensor, Tensor], w_ih, w_hh, b_ih, b_hh):
    hx, cx = hidden
    gates = torch.mm(input, w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = torch.sigmoid(ingate)
    forgetgate = torch.sigmoid(forgetgate)
    cellgate = torch.tanh(cellgate)
    outgate = torch.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * torch.tanh(cy)
    return hy, cy
"""

# The cell over the first dimension of x; the compilers inline the call.
LSTM_LOOP = LSTM_CELL + """
def lstm(x, hx, cx, w_ih, w_hh, b_ih, b_hh):
    hs: List[Tensor] = []
    for t in range(x.size(0)):
        hx, cx = lstm_cell(x[t], (hx, cx), w_ih, w_hh, b_ih, b_hh)
        hs.append(hx)
    return torch.stack(hs), cx
"""


class _Eager:
    def __init__(self, lib):
        names = {"torch": lib, "Tensor": lib.Tensor, "Tuple": Tuple, "List": List}
        exec(compile(LSTM_LOOP, "<seed_lstm>", "exec"), names)
        self.lstm_cell = names["lstm_cell"]
        self.lstm = names["lstm"]


def eager(lib):
    """The cell and the loop as Python functions over `lib` (torch or kiln):
    eager(lib).lstm_cell, eager(lib).lstm."""
    return _Eager(lib)
