# RUN: %kiln opt %s lstm_cell -p optimize,fuse | FileCheck %s
# Seed 001's LSTM cell: after the executor's passes, one group from the
# gate adds through hy and cy. The chunk moves above the adds (each operand
# chunked: the biases broadcast first, outside the group), and the four
# prim::ConstantChunk nodes sit at the top of the subgraph, each reading a
# group input.

def lstm_cell(x: Tensor, hx: Tensor, cx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor):
    gates = torch.mm(x, w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = torch.sigmoid(ingate)
    forgetgate = torch.sigmoid(forgetgate)
    cellgate = torch.tanh(cellgate)
    outgate = torch.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * torch.tanh(cy)
    return hy, cy
