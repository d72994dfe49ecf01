# RUN: %kiln opt --split-input-file %s f -p batch_mm | FileCheck %s --match-full-lines
# batch_mm on f of many programs, one per `# -----` part (cases moved from
# tests/cpp/batch_mm_test.cpp, each headed by its test's name): whole graphs,
# line by line, with their debug names; numbered values as variables. The
# C++ tests still run f before and after the pass.

# BatchMM.UnrolledLoopProgram
# What unrolling `for i in range(4): acc = acc + x[i].mm(w)` leaves: the
# four products and their sums become one prim::MMTreeReduce.
def f(x, w, h):
    return h + (x[0].mm(w) + x[1].mm(w) + x[2].mm(w) + x[3].mm(w))

# CHECK-LABEL: graph(%x.1 : Tensor,{{( # .*)?}}
# CHECK-NEXT:        %w.1 : Tensor,{{( # .*)?}}
# CHECK-NEXT:        %h.1 : Tensor):{{( # .*)?}}
# CHECK-NEXT:    [[V3:%[0-9]+]] : int = prim::Constant[value=3](){{( # .*)?}}
# CHECK-NEXT:    [[V4:%[0-9]+]] : int = prim::Constant[value=2](){{( # .*)?}}
# CHECK-NEXT:    [[V5:%[0-9]+]] : int = prim::Constant[value=1](){{( # .*)?}}
# CHECK-NEXT:    [[V6:%[0-9]+]] : int = prim::Constant[value=0](){{( # .*)?}}
# CHECK-NEXT:    [[V7:%[0-9]+]] : Tensor = aten::select(%x.1, [[V6]], [[V6]]){{( # .*)?}}
# CHECK-NEXT:    [[V9:%[0-9]+]] : Tensor = aten::select(%x.1, [[V6]], [[V5]]){{( # .*)?}}
# CHECK-NEXT:    [[V12:%[0-9]+]] : Tensor = aten::select(%x.1, [[V6]], [[V4]]){{( # .*)?}}
# CHECK-NEXT:    [[V15:%[0-9]+]] : Tensor = aten::select(%x.1, [[V6]], [[V3]]){{( # .*)?}}
# CHECK-NEXT:    [[V19:%[0-9]+]] : Tensor = prim::MMTreeReduce([[V15]], [[V12]], [[V9]], [[V7]], %w.1, %w.1, %w.1, %w.1){{( # .*)?}}
# CHECK-NEXT:    [[V18:%[0-9]+]] : Tensor = aten::add(%h.1, [[V19]], [[V5]]){{( # .*)?}}
# CHECK-NEXT:    return ([[V18]]){{( # .*)?}}
