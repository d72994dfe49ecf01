# RUN: %kiln opt %s f -p inline | FileCheck %s
# RUN: %kiln opt %s -p inline,dce | FileCheck %s --check-prefix=EACH
# Calls of functions compiled from source are replaced by the callees'
# graphs, callees of callees too, in nested blocks too; values are named as
# torch 1.13's torch._C._jit_pass_inline names them, and the copied nodes
# keep their source locations.

def g(x: int, y: int = 2):
    z = x + y
    if z > 3:
        z = z * 2
    return z, x

def h(a: int):
    b, c = g(a)
    return b + c

def f(x: int):
    y = h(x)
    for i in range(3):
        if x > 1:
            y = y + g(i, 5)[0]
    return y + h(y)

# The calls' function constants stay for dead code elimination.
# CHECK:      graph(%x.1 : int):
# CHECK-NOT:  prim::CallFunction
# CHECK:      %z.2 : int = aten::add(%x.1, {{%[0-9]+}}) # {{.*}}inline.py:9:8
# CHECK-NEXT: [[GT:%[0-9]+]] : bool = aten::gt(%z.2, {{%[0-9]+}}) # {{.*}}inline.py:10:7
# CHECK-NEXT: %z.4 : int = prim::If([[GT]])
# CHECK-NEXT:   block0():
# CHECK-NEXT:     %z.8 : int = aten::mul(%z.2,
# CHECK-NEXT:     -> (%z.8)
# CHECK-NEXT:   block1():
# CHECK-NEXT:     -> (%z.2)
# CHECK-NEXT: [[T:%[0-9]+]] : (int, int) = prim::TupleConstruct(%z.4, %x.1)
# CHECK-NEXT: %b.2 : int, %c.2 : int = prim::TupleUnpack([[T]])
# The call's result name passes to the value that replaces it.
# CHECK-NEXT: %y.1 : int = aten::add(%b.2, %c.2) # {{.*}}inline.py:16:11
# CHECK-NEXT: %y : int = prim::Loop({{%[0-9]+}}, {{%[0-9]+}}, %y.1)
# CHECK:          %z.10 : int = aten::add(%i.1,
# CHECK:          %z.12 : int = prim::If(
# CHECK:              %z.14 : int = aten::mul(%z.10,
# CHECK:          prim::TupleConstruct(%z.12, %i.1)
# CHECK:      %z.1 : int = aten::add(%y,
# CHECK:      %z : int = prim::If(
# CHECK:      prim::TupleConstruct(%z, %y)
# CHECK-NEXT: %b.1 : int, %c.1 : int = prim::TupleUnpack(
# CHECK-NEXT: [[H:%[0-9]+]] : int = aten::add(%b.1, %c.1)
# CHECK-NEXT: [[R:%[0-9]+]] : int = aten::add(%y, [[H]])
# CHECK-NEXT: return ([[R]])
# CHECK-NOT:  prim::CallFunction

# Without a function named, each function's graph, inlined on its own.
# EACH:      # g
# EACH:      # h
# EACH-NEXT: graph(%a.1 : int):
# EACH-NOT:  Function
# EACH:      %z.1 : int = aten::add(%a.1,
# EACH:      # f
# EACH-NOT:  prim::CallFunction
# EACH-NOT:  Function
# EACH:      return
