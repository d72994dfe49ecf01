# RUN: not %kiln graph %s 2>&1 | FileCheck %s
# An attribute keeps the type __init__ gave it.


class A:
    def __init__(self):
        self.x = 1

    def f(self):
        self.x = "one"


def g() -> int:
    return A().y

# CHECK: Wrong type for attribute assignment. Expected int but got str
# CHECK: line 10
