# RUN: %kiln graph %s | FileCheck %s
# Loops and branches become prim::Loop and prim::If with SSA block arguments
# (no prim::Store/Load left after the frontend).

def f(n: int) -> int:
    s = 0
    for i in range(n):
        if i % 2 == 0:
            s += i
        else:
            s -= 1
    while s > 10:
        s = s // 2
    return s

# CHECK-NOT: prim::Store
# CHECK-NOT: prim::Load
# CHECK: prim::Loop(%n
# CHECK: block0(%i{{[.0-9]*}} : int, %s{{[.0-9]*}} : int):
# CHECK: aten::remainder
# CHECK: aten::eq
# CHECK: prim::If
# CHECK: aten::add
# CHECK: aten::sub
# CHECK: aten::gt
# CHECK: prim::Loop
# CHECK: aten::floordiv
# CHECK: aten::gt
# CHECK: return
