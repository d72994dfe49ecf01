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

# CHECK:      %[[L:[0-9]+]] : Tensor[] = prim::ListConstruct(%b_hh.1, %b_ih.1, %[[MM1:[0-9]+]], %[[MM2:[0-9]+]])
# CHECK-NEXT: %[[B:[0-9]+]] : Tensor[] = aten::broadcast_tensors(%[[L]])
# CHECK-NEXT: %[[B0:[0-9]+]] : Tensor, %[[B1:[0-9]+]] : Tensor, %[[B2:[0-9]+]] : Tensor(device=cpu), %[[B3:[0-9]+]] : Tensor(device=cpu) = prim::ListUnpack(%[[B]])
# CHECK-NEXT: %hy.1 : Tensor(device=cpu), %cy.1 : Tensor(device=cpu) = prim::FusionGroup_0(%cx.1, %[[B3]], %[[B2]], %[[B1]], %[[B0]])
# CHECK-NEXT: prim::TupleConstruct(%hy.1, %cy.1)
# CHECK-NOT:  prim::FusionGroup_1
# CHECK:      with prim::FusionGroup_0 = graph(%cx.1 : Tensor,
# CHECK-COUNT-4: prim::ConstantChunk[chunks=4, dim=1](%{{[0-9]+}})
# CHECK-NEXT: prim::Constant[value=1]()
# CHECK-COUNT-12: aten::add(
# CHECK-NEXT: %ingate.5 : Tensor(device=cpu) = aten::sigmoid(
# CHECK-NEXT: %forgetgate.5 : Tensor(device=cpu) = aten::sigmoid(
# CHECK-NEXT: %cellgate.5 : Tensor(device=cpu) = aten::tanh(
# CHECK-NEXT: %outgate.5 : Tensor(device=cpu) = aten::sigmoid(
# CHECK-NEXT: aten::mul(%forgetgate.5, %cx.1)
# CHECK-NEXT: aten::mul(%ingate.5, %cellgate.5)
# CHECK-NEXT: %cy.1 : Tensor(device=cpu) = aten::add(
# CHECK-NEXT: aten::tanh(%cy.1)
# CHECK-NEXT: %hy.1 : Tensor(device=cpu) = aten::mul(%outgate.5,
# CHECK-NEXT: return (%hy.1, %cy.1)
