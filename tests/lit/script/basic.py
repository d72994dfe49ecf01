# RUN: %kiln graph %s | FileCheck %s
# RUN: %kiln graph %s f | FileCheck %s --check-prefix=ONE
# The graph of one function, as torch 1.13 prints `f.graph`.

def f(x, y: int):
    return x * y + 1

# CHECK: # f
# CHECK-NEXT: graph(%x{{[.0-9]*}} : Tensor,
# CHECK-NEXT: %y{{[.0-9]*}} : int):
# CHECK: prim::Constant[value=1]()
# CHECK: %[[MUL:[^ ]+]] : Tensor = aten::mul(%x
# CHECK: %[[ADD:[^ ]+]] : Tensor = aten::add(%[[MUL]],
# CHECK: return (%[[ADD]])

# With a function named, its graph alone.
# ONE-NOT: # f
# ONE: graph(%x
