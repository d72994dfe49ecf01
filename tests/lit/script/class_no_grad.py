# RUN: %kiln graph %s | FileCheck %s
# torch.no_grad() is a TorchScript class, as in 1.13: created, entered and
# exited around the body; its methods save and restore the grad mode.
import torch


def f(x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        y = x * 2
    return y + 1

# CHECK-LABEL: # f
# CHECK: %[[G:[0-9]+]] : __torch__.torch.autograd.grad_mode.no_grad = prim::CreateObject()
# CHECK-NEXT: NoneType = prim::CallMethod[name="__init__"](%[[G]])
# CHECK-NEXT: NoneType = prim::Enter(%[[G]])
# CHECK-NEXT: aten::mul
# CHECK-NEXT: NoneType = prim::Exit(%[[G]])
# CHECK-NEXT: aten::add

# CHECK-LABEL: # __torch__.torch.autograd.grad_mode.no_grad.__enter__
# CHECK: %[[P:[0-9]+]] : bool = aten::is_grad_enabled()
# CHECK-NEXT: = prim::SetAttr[name="prev"](%self{{[.0-9]*}}, %[[P]])
# CHECK-NEXT: = aten::set_grad_enabled(

# CHECK-LABEL: # __torch__.torch.autograd.grad_mode.no_grad.__exit__
# CHECK: %prev : bool = prim::GetAttr[name="prev"]
# CHECK-NEXT: = aten::set_grad_enabled(%prev)
