# RUN: %kiln opt --split-input-file %s f -p inline,constant_pooling,dce | FileCheck %s --match-full-lines
# RUN: %kiln opt --split-input-file %s f -p inline | FileCheck %s --check-prefix=INLINE --match-full-lines
# Inlining f's calls, then constant pooling and dead code elimination (what
# 1.13's graphs are compared with), one program per `# -----` part (cases
# moved from tests/cpp/inliner_test.cpp, each headed by its test's name):
# whole graphs, line by line, with their debug names; numbered values as
# variables. Parts checked with the prefix INLINE are checked in the run
# that only inlines (as their C++ tests do, which also run the graphs).

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
# CHECK-NEXT: # -----

# -----
# Inliner.InlinesCallsOfCalleesAndInNestedBlocksWithDefaultsAndTuples
# Inlining only (checked with the prefix INLINE, in the run with `-p
# inline`): no calls are left, in the loop and the if either, with the
# default argument and the tuple results. The names are 1.13's: each callee
# is inlined into a copy of its own graph first, then that copy into the
# caller.
def g(x: int, y: int = 2):
    z = x + y
    if z > 3:
        z = z * 2
    return z, x

def h(a: int):
    b, c = g(a)
    return b + c

def f(x: int):
    y = h(x)
    for i in range(3):
        if x > 1:
            y = y + g(i, 5)[0]
    return y + h(y)

# INLINE-LABEL: graph(%x.1 : int):{{( # .*)?}}
# INLINE-NEXT:    [[V1:%[0-9]+]] : int = prim::Constant[value=0](){{( # .*)?}}
# INLINE-NEXT:    [[V2:%[0-9]+]] : Function = prim::Constant[name="g"](){{( # .*)?}}
# INLINE-NEXT:    [[V3:%[0-9]+]] : int = prim::Constant[value=5](){{( # .*)?}}
# INLINE-NEXT:    [[V4:%[0-9]+]] : int = prim::Constant[value=1](){{( # .*)?}}
# INLINE-NEXT:    [[V5:%[0-9]+]] : bool = prim::Constant[value=1](){{( # .*)?}}
# INLINE-NEXT:    [[V6:%[0-9]+]] : int = prim::Constant[value=3](){{( # .*)?}}
# INLINE-NEXT:    [[V7:%[0-9]+]] : Function = prim::Constant[name="h"](){{( # .*)?}}
# INLINE-NEXT:    [[V19:%[0-9]+]] : Function = prim::Constant[name="g"](){{( # .*)?}}
# INLINE-NEXT:    [[V20:%[0-9]+]] : int = prim::Constant[value=2](){{( # .*)?}}
# INLINE-NEXT:    [[V21:%[0-9]+]] : int = prim::Constant[value=2](){{( # .*)?}}
# INLINE-NEXT:    [[V22:%[0-9]+]] : int = prim::Constant[value=3](){{( # .*)?}}
# INLINE-NEXT:    %z.2 : int = aten::add(%x.1, [[V20]]){{( # .*)?}}
# INLINE-NEXT:    [[V24:%[0-9]+]] : bool = aten::gt(%z.2, [[V22]]){{( # .*)?}}
# INLINE-NEXT:    %z.4 : int = prim::If([[V24]]){{( # .*)?}}
# INLINE-NEXT:      block0():{{( # .*)?}}
# INLINE-NEXT:        %z.8 : int = aten::mul(%z.2, [[V21]]){{( # .*)?}}
# INLINE-NEXT:        -> (%z.8){{( # .*)?}}
# INLINE-NEXT:      block1():{{( # .*)?}}
# INLINE-NEXT:        -> (%z.2){{( # .*)?}}
# INLINE-NEXT:    [[V27:%[0-9]+]] : (int, int) = prim::TupleConstruct(%z.4, %x.1){{( # .*)?}}
# INLINE-NEXT:    %b.2 : int, %c.2 : int = prim::TupleUnpack([[V27]]){{( # .*)?}}
# INLINE-NEXT:    %y.1 : int = aten::add(%b.2, %c.2){{( # .*)?}}
# INLINE-NEXT:    %y : int = prim::Loop([[V6]], [[V5]], %y.1){{( # .*)?}}
# INLINE-NEXT:      block0(%i.1 : int, %y.13 : int):{{( # .*)?}}
# INLINE-NEXT:        [[V12:%[0-9]+]] : bool = aten::gt(%x.1, [[V4]]){{( # .*)?}}
# INLINE-NEXT:        %y.11 : int = prim::If([[V12]]){{( # .*)?}}
# INLINE-NEXT:          block0():{{( # .*)?}}
# INLINE-NEXT:            [[V31:%[0-9]+]] : int = prim::Constant[value=2](){{( # .*)?}}
# INLINE-NEXT:            [[V32:%[0-9]+]] : int = prim::Constant[value=3](){{( # .*)?}}
# INLINE-NEXT:            %z.10 : int = aten::add(%i.1, [[V3]]){{( # .*)?}}
# INLINE-NEXT:            [[V34:%[0-9]+]] : bool = aten::gt(%z.10, [[V32]]){{( # .*)?}}
# INLINE-NEXT:            %z.12 : int = prim::If([[V34]]){{( # .*)?}}
# INLINE-NEXT:              block0():{{( # .*)?}}
# INLINE-NEXT:                %z.14 : int = aten::mul(%z.10, [[V31]]){{( # .*)?}}
# INLINE-NEXT:                -> (%z.14){{( # .*)?}}
# INLINE-NEXT:              block1():{{( # .*)?}}
# INLINE-NEXT:                -> (%z.10){{( # .*)?}}
# INLINE-NEXT:            [[V37:%[0-9]+]] : (int, int) = prim::TupleConstruct(%z.12, %i.1){{( # .*)?}}
# INLINE-NEXT:            [[V15:%[0-9]+]] : int = prim::TupleIndex([[V37]], [[V1]]){{( # .*)?}}
# INLINE-NEXT:            %y.5 : int = aten::add(%y.13, [[V15]]){{( # .*)?}}
# INLINE-NEXT:            -> (%y.5){{( # .*)?}}
# INLINE-NEXT:          block1():{{( # .*)?}}
# INLINE-NEXT:            -> (%y.13){{( # .*)?}}
# INLINE-NEXT:        -> ([[V5]], %y.11){{( # .*)?}}
# INLINE-NEXT:    [[V38:%[0-9]+]] : Function = prim::Constant[name="g"](){{( # .*)?}}
# INLINE-NEXT:    [[V39:%[0-9]+]] : int = prim::Constant[value=2](){{( # .*)?}}
# INLINE-NEXT:    [[V40:%[0-9]+]] : int = prim::Constant[value=2](){{( # .*)?}}
# INLINE-NEXT:    [[V41:%[0-9]+]] : int = prim::Constant[value=3](){{( # .*)?}}
# INLINE-NEXT:    %z.1 : int = aten::add(%y, [[V39]]){{( # .*)?}}
# INLINE-NEXT:    [[V43:%[0-9]+]] : bool = aten::gt(%z.1, [[V41]]){{( # .*)?}}
# INLINE-NEXT:    %z : int = prim::If([[V43]]){{( # .*)?}}
# INLINE-NEXT:      block0():{{( # .*)?}}
# INLINE-NEXT:        %z.7 : int = aten::mul(%z.1, [[V40]]){{( # .*)?}}
# INLINE-NEXT:        -> (%z.7){{( # .*)?}}
# INLINE-NEXT:      block1():{{( # .*)?}}
# INLINE-NEXT:        -> (%z.1){{( # .*)?}}
# INLINE-NEXT:    [[V46:%[0-9]+]] : (int, int) = prim::TupleConstruct(%z, %y){{( # .*)?}}
# INLINE-NEXT:    %b.1 : int, %c.1 : int = prim::TupleUnpack([[V46]]){{( # .*)?}}
# INLINE-NEXT:    [[V49:%[0-9]+]] : int = aten::add(%b.1, %c.1){{( # .*)?}}
# INLINE-NEXT:    [[V18:%[0-9]+]] : int = aten::add(%y, [[V49]]){{( # .*)?}}
# INLINE-NEXT:    return ([[V18]]){{( # .*)?}}
# INLINE-NEXT: # -----

# -----
# Inliner.KeywordArgumentsAndNoneResults
# Inlining only (checked with the prefix INLINE): keyword arguments and
# defaults are filled in, and p's assert leaves its prim::RaiseException.
def g(x: int, y: int = 4, z: float = 1.5):
    return x * y, z

def p(x: int):
    assert x < 100

def f(a: int):
    b, c = g(a)
    d, e = g(a, z=2.0)
    p(b)
    return b + d, c + e

# INLINE-LABEL: graph(%a.1 : int):{{( # .*)?}}
# INLINE-NEXT:    [[V1:%[0-9]+]] : Function = prim::Constant[name="p"](){{( # .*)?}}
# INLINE-NEXT:    [[V2:%[0-9]+]] : float = prim::Constant[value=2.](){{( # .*)?}}
# INLINE-NEXT:    [[V3:%[0-9]+]] : Function = prim::Constant[name="g"](){{( # .*)?}}
# INLINE-NEXT:    [[V4:%[0-9]+]] : float = prim::Constant[value=1.5](){{( # .*)?}}
# INLINE-NEXT:    [[V5:%[0-9]+]] : int = prim::Constant[value=4](){{( # .*)?}}
# INLINE-NEXT:    [[V16:%[0-9]+]] : int = aten::mul(%a.1, [[V5]]){{( # .*)?}}
# INLINE-NEXT:    [[V17:%[0-9]+]] : (int, float) = prim::TupleConstruct([[V16]], [[V4]]){{( # .*)?}}
# INLINE-NEXT:    %b.1 : int, %c.1 : float = prim::TupleUnpack([[V17]]){{( # .*)?}}
# INLINE-NEXT:    [[V18:%[0-9]+]] : int = aten::mul(%a.1, [[V5]]){{( # .*)?}}
# INLINE-NEXT:    [[V19:%[0-9]+]] : (int, float) = prim::TupleConstruct([[V18]], [[V2]]){{( # .*)?}}
# INLINE-NEXT:    %d.1 : int, %e.1 : float = prim::TupleUnpack([[V19]]){{( # .*)?}}
# INLINE-NEXT:    [[V20:%[0-9]+]] : NoneType = prim::Constant(){{( # .*)?}}
# INLINE-NEXT:    [[V21:%[0-9]+]] : str = prim::Constant[value="AssertionError: "](){{( # .*)?}}
# INLINE-NEXT:    [[V22:%[0-9]+]] : int = prim::Constant[value=100](){{( # .*)?}}
# INLINE-NEXT:    [[V23:%[0-9]+]] : bool = aten::lt(%b.1, [[V22]]){{( # .*)?}}
# INLINE-NEXT:     = prim::If([[V23]]){{( # .*)?}}
# INLINE-NEXT:      block0():{{( # .*)?}}
# INLINE-NEXT:        -> (){{( # .*)?}}
# INLINE-NEXT:      block1():{{( # .*)?}}
# INLINE-NEXT:         = prim::RaiseException([[V21]], [[V20]]){{( # .*)?}}
# INLINE-NEXT:        -> (){{( # .*)?}}
# INLINE-NEXT:    [[V13:%[0-9]+]] : int = aten::add(%b.1, %d.1){{( # .*)?}}
# INLINE-NEXT:    [[V14:%[0-9]+]] : float = aten::add(%c.1, %e.1){{( # .*)?}}
# INLINE-NEXT:    [[V15:%[0-9]+]] : (int, float) = prim::TupleConstruct([[V13]], [[V14]]){{( # .*)?}}
# INLINE-NEXT:    return ([[V15]]){{( # .*)?}}
