# RUN: %kiln graph %s | FileCheck %s
# Builtins whose operator the compiler picks: torch.nn.functional's max
# pools by a constant return_indices (1.13's boolean dispatch; the flag is
# not passed on), torch.jit.is_tracing() as False, the legacy constructors
# as aten::tensor / aten::empty with their dtype, and a tensor `dims` of
# tensordot split into two lists at run time.
from typing import Tuple

import torch


def pool_indices(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    return torch.nn.functional.max_pool1d(x, 2, return_indices=True)


def pool_plain(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.max_pool1d(x, 2, None, 0, 1, False, False)


def adaptive(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.adaptive_max_pool2d(x, 2)


def tracing(x: torch.Tensor) -> torch.Tensor:
    if torch.jit.is_tracing():
        return x + 1
    return x - 1


def legacy():
    return torch.LongTensor([3]), torch.FloatTensor(2, 3)


def tensordot_tensor(a: torch.Tensor, b: torch.Tensor, dims: torch.Tensor) -> torch.Tensor:
    return torch.tensordot(a, b, dims=dims)

# CHECK-LABEL: # pool_indices
# CHECK: aten::max_pool1d_with_indices(%x
# CHECK-LABEL: # pool_plain
# CHECK: %[[EMPTY:[^ ]+]] : int[] = prim::ListConstruct()
# CHECK: aten::max_pool1d(%x{{[.0-9]*}}, %{{[^,]+}}, %[[EMPTY]],
# CHECK-LABEL: # adaptive
# CHECK: %[[VALUES:[0-9]+]] : Tensor, %{{[0-9]+}} : Tensor = aten::adaptive_max_pool2d(%x
# CHECK-NEXT: return (%[[VALUES]])
# CHECK-LABEL: # tracing
# CHECK-NOT: prim::If
# CHECK: aten::sub
# CHECK-LABEL: # legacy
# CHECK: aten::tensor
# CHECK: aten::empty
# CHECK-LABEL: # tensordot_tensor
# CHECK: aten::numel(%dims
# CHECK: prim::If
# CHECK: prim::tolist
# CHECK: aten::item
# CHECK: aten::tensordot
