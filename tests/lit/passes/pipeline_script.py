# RUN: %kiln graph --optimized %s f | FileCheck %s
# RUN: %kiln graph --optimized %s f | FileCheck %s --check-prefix=GONE
# RUN: %kiln graph %s f | FileCheck %s --check-prefix=PLAIN
# With the declared types only (no arguments): the call to g is inlined, the
# duplicate `x + y` is computed once, the tuple g returns is taken apart, and
# the loop of constant trip count is unrolled; the unoptimized graph keeps
# all of them.

def g(a: Tensor, n: int):
    return a * n, n

def f(x: Tensor, y: Tensor):
    s = x + y
    t = x + y
    u, k = g(s, 2)
    for i in range(2):
        u = u + t
    return u

# CHECK:     graph(%x.1 : Tensor,
# CHECK:     %[[S:.+]] : Tensor{{.*}} = aten::add(%x.1, %y.1, %{{.+}})
# CHECK:     %[[U:.+]] : Tensor{{.*}} = aten::mul(%[[S]], %{{.+}})
# CHECK:     %[[U1:.+]] : Tensor{{.*}} = aten::add(%[[U]], %[[S]], %{{.+}})
# CHECK:     %[[U2:.+]] : Tensor{{.*}} = aten::add(%[[U1]], %[[S]], %{{.+}})
# CHECK:     return (%[[U2]])

# GONE-NOT: prim::CallFunction
# GONE-NOT: prim::Loop
# GONE-NOT: prim::TupleUnpack
# GONE-NOT: prim::TupleConstruct

# PLAIN: prim::CallFunction
# PLAIN: prim::TupleUnpack
# PLAIN: prim::Loop
