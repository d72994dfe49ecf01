# RUN: %kiln graph %s | FileCheck %s
# A script class in a source: construction is prim::CreateObject then a
# prim::CallMethod of __init__; attributes are prim::GetAttr/prim::SetAttr;
# method calls are prim::CallMethod. __init__ defines the attributes; the
# methods of the class print after the functions, in the order they were
# compiled (bump calls scaled, which compiles first).
from typing import List


class Counter:
    def __init__(self, start: int):
        self.count = start
        self.history: List[int] = []

    def bump(self, k: int) -> int:
        self.count += k
        self.history.append(self.count)
        return self.scaled(10)

    def scaled(self, factor: int) -> int:
        return self.count * factor


def f(n: int) -> int:
    c = Counter(n)
    c.count = 3
    return c.bump(2) + c.count

# CHECK-LABEL: # f
# CHECK: graph(%n{{[.0-9]*}} : int):
# CHECK: %[[C:[^ ]+]] : __torch__.Counter = prim::CreateObject()
# CHECK-NEXT: NoneType = prim::CallMethod[name="__init__"](%[[C]], %n
# CHECK-NEXT: = prim::SetAttr[name="count"](%[[C]], %{{[^ ]+}})
# CHECK-NEXT: int = prim::CallMethod[name="bump"](%[[C]], %{{[^ ]+}})
# CHECK-NEXT: %count : int = prim::GetAttr[name="count"](%[[C]])
# CHECK-NEXT: aten::add

# CHECK-LABEL: # __torch__.Counter.__init__
# CHECK: graph(%self{{[.0-9]*}} : __torch__.Counter,
# CHECK: = prim::SetAttr[name="count"]
# CHECK: int[] = prim::ListConstruct()
# CHECK: = prim::SetAttr[name="history"]

# CHECK-LABEL: # __torch__.Counter.scaled
# CHECK: prim::GetAttr[name="count"]
# CHECK: aten::mul

# CHECK-LABEL: # __torch__.Counter.bump
# CHECK: %count{{[.0-9]*}} : int = prim::GetAttr[name="count"]
# CHECK: aten::add
# CHECK: = prim::SetAttr[name="count"]
# CHECK: %history : int[] = prim::GetAttr[name="history"]
# CHECK: aten::append
# CHECK: int = prim::CallMethod[name="scaled"](%self
