# RUN: %kiln opt %s lstm_cell -p optimize,fuse | FileCheck %s
# Seed 001's LSTM cell with the declared types only (`Tensor`: ranks and
# dtypes unknown). The chunk cannot move above the gate adds, since an
# operand could be a 0-dim tensor whose chunks would promote differently
# (lstm_cell.ir, with ranks, is one group): the adds form one group, and the
# chunk joins the cell's group, reading the gates as a group input.

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

# CHECK:      %[[G:.+]] : Tensor(device=cpu) = prim::FusionGroup_0(%b_hh.1, %b_ih.1, %{{[0-9]+}}, %{{[0-9]+}})
# CHECK-NEXT: %hy.1 : Tensor(device=cpu), %cy.1 : Tensor(device=cpu) = prim::FusionGroup_1(%cx.1, %[[G]])
# CHECK:      with prim::FusionGroup_0 = graph(
# CHECK-COUNT-3: aten::add(
# CHECK-NEXT: return
# CHECK-NEXT: with prim::FusionGroup_1 = graph(%cx.1 : Tensor,
# CHECK-NEXT: %gates.1 : Tensor(device=cpu)):
# CHECK-NEXT: prim::ConstantChunk[chunks=4, dim=1](%gates.1)
# CHECK:      return (%hy.1, %cy.1)
