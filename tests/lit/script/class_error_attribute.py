# RUN: not %kiln graph %s 2>&1 | FileCheck %s
# Only __init__ defines attributes; elsewhere a new one is an error that
# points at the assignment.


class A:
    def __init__(self):
        self.x = 1

    def f(self):
        self.y = 2

# CHECK: Tried to set nonexistent attribute: y. Did you forget to initialize it in __init__()?
# CHECK: line 11
# CHECK: self.y = 2
# CHECK: ~~~~~~ <--- HERE
