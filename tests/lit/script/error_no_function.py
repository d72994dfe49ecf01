# RUN: not %kiln graph %s g 2>&1 | FileCheck %s
# RUN: not %kiln run %s g 1 2>&1 | FileCheck %s

def f(x: int) -> int:
    return x

# CHECK: kiln: error: {{.*}}error_no_function.py has no function 'g' (it has: f)
