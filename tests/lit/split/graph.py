# RUN: not %kiln graph --split-input-file %s 2>&1 | FileCheck %s
# RUN: not %kiln graph --split-input-file %s f 2>&1 | FileCheck %s --check-prefix=FN
# `kiln graph --split-input-file` on TorchScript source: each part is
# compiled on its own (`# -----` is a comment in Python too); errors and
# source locations give the lines of the whole file.

def f(x: int):
    return x + 1

# CHECK:      # f
# CHECK-NEXT: graph(%x.1 : int):
# CHECK:        aten::add(%x.1, {{%[0-9]+}}) # {{.*}}graph.py:[[@LINE-4]]:11
# CHECK:      # -----
# FN:         graph(%x.1 : int):
# FN:         # -----
# FN-NEXT:    kiln: error: undefined value undefined_name:
# FN:         # -----

# -----
def g(y: int):
    return y + undefined_name

# CHECK-NEXT: kiln: error: undefined value undefined_name:
# CHECK-NEXT:   File "{{.*}}graph.py", line [[@LINE-3]]
# CHECK:      # -----

# -----
# The same name in another part is another compilation.
def f(x: float):
    return x * 2.0

# CHECK-NEXT: # f
# CHECK-NEXT: graph(%x.1 : float):
# FN-NEXT:    graph(%x.1 : float):
