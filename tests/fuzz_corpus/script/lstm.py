def lstm_cell(input: Tensor, hidden: Tuple[Tensor, Tensor], w_ih: Tensor, w_hh: Tensor) -> Tuple[Tensor, Tensor]:
    hx, cx = hidden
    gates = torch.mm(input, w_ih.t()) + torch.mm(hx, w_hh.t())
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    cy = (torch.sigmoid(forgetgate) * cx) + (torch.sigmoid(ingate) * torch.tanh(cellgate))
    return torch.sigmoid(outgate) * torch.tanh(cy), cy
