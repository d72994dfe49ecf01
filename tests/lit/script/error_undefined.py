# RUN: not %kiln graph %s 2>&1 | FileCheck %s
# An undefined name: TorchScript's message, the file and line, and the line
# with `~ <--- HERE` under the name.

def f(x):
    return x + z

# CHECK: kiln: error:
# CHECK: undefined value z
# CHECK: File "{{.*}}error_undefined.py", line 6
# CHECK-NEXT: return x + z
# CHECK-NEXT: {{^ +}}~ <--- HERE
