# RUN: %kiln opt --split-input-file %s f -p inline,constant_pooling,dce | FileCheck %s --match-full-lines
# Inlining f's calls, then constant pooling and dead code elimination (what
# 1.13's graphs are compared with), one program per `# -----` part (cases
# moved from tests/cpp/inliner_test.cpp, each headed by its test's name):
# whole graphs, line by line, with their debug names; numbered values as
# variables.

# Inliner.InlinesAFunctionCalledTwiceRenamingItsValues
def g(x: int):
    y = x * 2
    return y + 1

def f(a: int):
    b = g(a)
    c = g(b)
    return b + c

# CHECK-LABEL: graph(%a.1 : int):{{( # .*)?}}
# CHECK-NEXT:    [[V6:%[0-9]+]] : int = prim::Constant[value=2](){{( # .*)?}}
# CHECK-NEXT:    [[V5:%[0-9]+]] : int = prim::Constant[value=1](){{( # .*)?}}
# CHECK-NEXT:    %y.2 : int = aten::mul(%a.1, [[V6]]){{( # .*)?}}
# CHECK-NEXT:    %b.1 : int = aten::add(%y.2, [[V5]]){{( # .*)?}}
# CHECK-NEXT:    %y.1 : int = aten::mul(%b.1, [[V6]]){{( # .*)?}}
# CHECK-NEXT:    %c.1 : int = aten::add(%y.1, [[V5]]){{( # .*)?}}
# CHECK-NEXT:    [[V4:%[0-9]+]] : int = aten::add(%b.1, %c.1){{( # .*)?}}
# CHECK-NEXT:    return ([[V4]]){{( # .*)?}}
# CHECK-NEXT: # -----

# -----
# Inliner.ResultNamePassesToTheValueReplacingIt
# g returns its argument: the caller's `a` takes the call's name `b`.
def g(x: int, y: int):
    return x

def f(a: int):
    b = g(a, 3)
    return b + a

# CHECK-LABEL: graph(%b.1 : int):{{( # .*)?}}
# CHECK-NEXT:    [[V4:%[0-9]+]] : int = aten::add(%b.1, %b.1){{( # .*)?}}
# CHECK-NEXT:    return ([[V4]]){{( # .*)?}}
# CHECK-NEXT: # -----

# -----
# Inliner.InlinesTensorCallsKeepingInPlaceOps
def g(x, y):
    return x.add_(y) * 2

def f(a, b):
    c = g(a, b)
    return g(c, a)

# CHECK-LABEL: graph(%a.1 : Tensor,{{( # .*)?}}
# CHECK-NEXT:        %b.1 : Tensor):{{( # .*)?}}
# CHECK-NEXT:    [[V6:%[0-9]+]] : int = prim::Constant[value=1](){{( # .*)?}}
# CHECK-NEXT:    [[V5:%[0-9]+]] : int = prim::Constant[value=2](){{( # .*)?}}
# CHECK-NEXT:    [[V7:%[0-9]+]] : Tensor = aten::add_(%a.1, %b.1, [[V6]]){{( # .*)?}}
# CHECK-NEXT:    %c.1 : Tensor = aten::mul([[V7]], [[V5]]){{( # .*)?}}
# CHECK-NEXT:    [[V11:%[0-9]+]] : Tensor = aten::add_(%c.1, %a.1, [[V6]]){{( # .*)?}}
# CHECK-NEXT:    [[V12:%[0-9]+]] : Tensor = aten::mul([[V11]], [[V5]]){{( # .*)?}}
# CHECK-NEXT:    return ([[V12]]){{( # .*)?}}
