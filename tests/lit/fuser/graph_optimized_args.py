# RUN: /usr/bin/python3 -c "import numpy; numpy.save('%t.npy', numpy.ones((4, 8), 'float32'))"
# RUN: %kiln graph --optimized %s f %t.npy | FileCheck %s
# RUN: env KILN_FUSION=0 %kiln graph --optimized %s f %t.npy | FileCheck %s --check-prefix=OFF
# `kiln graph --optimized` with arguments prints the plan the executor runs:
# the pointwise chain is one group with complete types, and its subgraph
# follows the graph, as 1.13 prints fusion groups.

def f(x):
    return torch.tanh(x * 2 + 1) * torch.sigmoid(x) + x

# CHECK: graph(%x.1 : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu)):
# CHECK-NEXT: %[[G:.*]] : Float(4, 8{{.*}}) = prim::FusionGroup_0(%x.1)
# CHECK-NEXT: return (%[[G]])
# CHECK: with prim::FusionGroup_0 = graph(%[[X:.*]] : Float(4, 8, strides=[8, 1], requires_grad=0, device=cpu)):
# CHECK: aten::mul(%[[X]]
# CHECK: aten::tanh
# CHECK: aten::sigmoid(%[[X]])
# CHECK: return

# OFF-NOT: FusionGroup
# OFF: aten::tanh
# OFF-NOT: FusionGroup
