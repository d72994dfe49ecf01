# RUN: %kiln opt --split-input-file %s f -p remove_mutation | FileCheck %s --match-full-lines
# Mutation removal (kiln/passes/remove_mutation.h) on f of many programs, one
# per `# -----` part (cases moved from tests/cpp/remove_mutation_test.cpp,
# each headed by its test's name): whole graphs, line by line, with their
# debug names; numbered values as variables. The C++ tests still check what
# the pass returns and run f before and after it.

# RemoveMutation.ListProgram
# Every append and the insert become elements of the construct.
def f(a: int, b: int):
    c = a + b
    l = [a]
    l.append(b)
    l.append(c)
    l.insert(-1, 7)
    return l, len(l)

# CHECK-LABEL: graph(%a.1 : int,{{( # .*)?}}
# CHECK-NEXT:        %b.1 : int):{{( # .*)?}}
# CHECK-NEXT:    [[V2:%[0-9]+]] : int = prim::Constant[value=7](){{( # .*)?}}
# CHECK-NEXT:    [[V3:%[0-9]+]] : int = prim::Constant[value=-1](){{( # .*)?}}
# CHECK-NEXT:    %c.1 : int = aten::add(%a.1, %b.1){{( # .*)?}}
# CHECK-NEXT:    %l.1 : int[] = prim::ListConstruct(%a.1, %b.1, [[V2]], %c.1){{( # .*)?}}
# CHECK-NEXT:    [[V8:%[0-9]+]] : int = aten::len(%l.1){{( # .*)?}}
# CHECK-NEXT:    [[V9:%[0-9]+]] : (int[], int) = prim::TupleConstruct(%l.1, [[V8]]){{( # .*)?}}
# CHECK-NEXT:    return ([[V9]]){{( # .*)?}}
# CHECK-NEXT: # -----

# -----
# RemoveMutationAliasDb.ListProgramMovesTheConstruct
# a + b is computed after the list is made: the construct must move after
# it, and the append is gone.
def f(a: int, b: int):
    l = [a]
    l.append(a + b)
    return l, len(l)

# CHECK-LABEL: graph(%a.1 : int,{{( # .*)?}}
# CHECK-NEXT:        %b.1 : int):{{( # .*)?}}
# CHECK-NEXT:    [[V3:%[0-9]+]] : int = aten::add(%a.1, %b.1){{( # .*)?}}
# CHECK-NEXT:    %l.1 : int[] = prim::ListConstruct(%a.1, [[V3]]){{( # .*)?}}
# CHECK-NEXT:    [[V5:%[0-9]+]] : int = aten::len(%l.1){{( # .*)?}}
# CHECK-NEXT:    [[V6:%[0-9]+]] : (int[], int) = prim::TupleConstruct(%l.1, [[V5]]){{( # .*)?}}
# CHECK-NEXT:    return ([[V6]]){{( # .*)?}}
