# RUN: %kiln_python %s | FileCheck %s
# Tracing a module (kiln.trace of a kiln.nn.Module), as torch.jit.trace of an
# nn.Module prints it: the module is the first input, its parameters and
# buffers are read with prim::GetAttr chains, and each submodule call is a
# prim::CallMethod of a forward traced into the submodule's type (a second
# call of the same submodule gets forward1).
import kiln


class Block(kiln.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = kiln.nn.Parameter(kiln.ones(3))
        self.register_buffer("shift", kiln.zeros(3))

    def forward(self, x):
        return x * self.w + self.shift


class Net(kiln.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = kiln.nn.ModuleList([Block(), Block()])
        self.again = Block()

    def forward(self, x):
        for b in self.blocks:
            x = kiln.relu(b(x))
        return self.again(self.again(x))


traced = kiln.trace(Net(), (kiln.ones(2, 3),))
print(traced.graph)
print(traced.again.forward1.graph)

# CHECK: graph(%self.1 : __torch__.{{.*}}Net,
# CHECK-NEXT: %x{{[.0-9]*}} : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
# CHECK-DAG: prim::GetAttr[name="blocks"](%self.1)
# CHECK-DAG: prim::GetAttr[name="0"]
# CHECK-DAG: prim::GetAttr[name="1"]
# CHECK-DAG: prim::GetAttr[name="again"](%self.1)
# CHECK: prim::CallMethod[name="forward"]
# CHECK: aten::relu
# CHECK: prim::CallMethod[name="forward"]
# CHECK: aten::relu
# CHECK: prim::CallMethod[name="forward"]
# CHECK: prim::CallMethod[name="forward1"]
# CHECK: return
# CHECK-NOT: aten::mul
#
# The second call's method reads the submodule's own parameter and buffer.
# CHECK: graph(%self{{.*}} : __torch__.{{.*}}Block,
# CHECK-DAG: prim::GetAttr[name="w"](%self
# CHECK-DAG: prim::GetAttr[name="shift"](%self
# CHECK: aten::mul
# CHECK: aten::add
# CHECK: return
