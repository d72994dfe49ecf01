# RUN: %kiln graph %s | FileCheck %s
# torch.linalg.name (and kiln.linalg.name) is the operator aten::linalg_name,
# as in torch.jit.script; the legacy names stay themselves.
from typing import Tuple

import torch


def solve(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.linalg.solve(a, b, left=False)


def decompose(a: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    q, r = torch.linalg.qr(a, "complete")
    return torch.linalg.matrix_norm(q, "nuc"), torch.inverse(r)

# CHECK-LABEL: # solve
# CHECK: aten::linalg_solve(%a{{[^,]*}}, %b{{[^,]*}}, %{{[^ ]+}})
# CHECK-LABEL: # decompose
# CHECK: = aten::linalg_qr(%a{{[^,]*}}, %{{[^ ]+}})
# CHECK: aten::linalg_matrix_norm(
# CHECK: aten::inverse(
