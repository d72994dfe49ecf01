# RUN: %kiln graph %s | FileCheck %s
# RUN: %kiln graph %s g | FileCheck %s --check-prefix=G
# Every function of the file in definition order; a call between them is a
# prim::CallFunction of a Function constant.
import torch


def f(x: float) -> float:
    return x * 2.0


def g(x: float) -> float:
    return f(x) + 1.0

# CHECK: # f
# CHECK: graph(%x{{[.0-9]*}} : float):
# CHECK: aten::mul
# CHECK: # g
# CHECK: graph(%x{{[.0-9]*}} : float):
# CHECK: %[[F:[^ ]+]] : Function = prim::Constant[name="f"]()
# CHECK: prim::CallFunction(%[[F]], %x
# CHECK: aten::add

# G-NOT: # f
# G-NOT: aten::mul
# G: prim::CallFunction
