# RUN: %kiln graph %s | FileCheck %s
# isinstance on a Union, Optional, Any or Scalar value is a run-time
# prim::isinstance (its types in 1.13's Union order); the true branch sees the
# members that matched any of the types, the false branch the others.

def tuple_rhs(x: Union[int, float, List[str]]) -> str:
    if isinstance(x, (int, float)):
        if isinstance(x, int):
            return str(x)
        return "foo"
    return x[0]

# CHECK-LABEL: graph(%x{{[.0-9]*}} : Union(str[], float, int)):
# CHECK: %[[C:[0-9]+]] : bool = prim::isinstance[types=[float, int]](%x.1)
# CHECK: prim::If(%[[C]])
# CHECK: block0():
# CHECK: %[[N:x.[0-9]+]] : Union(float, int) = prim::unchecked_cast(%x.1)
# CHECK: prim::isinstance[types=[int]](%[[N]])
# CHECK: int = prim::unchecked_cast(%[[N]])
# CHECK: aten::str
# CHECK: block1():
# CHECK: str[] = prim::unchecked_cast(%x.1)
# CHECK: aten::__getitem__

def optional_union(x: Optional[Union[int, str]]) -> str:
    if isinstance(x, int):
        return "int"
    elif x is None:
        return "none"
    return x

# CHECK-LABEL: graph(%x{{[.0-9]*}} : Union(int, str)?):
# CHECK: prim::isinstance[types=[int]](%x.1)
# CHECK: block1():
# CHECK: str? = prim::unchecked_cast(%x.1)

def every_member(x: Union[List[int], int]) -> int:
    if isinstance(x, (int, List[int])):
        return 1
    return 0

# Every member matches: no check at all.
# CHECK-LABEL: graph(%x{{[.0-9]*}} : Union(int[], int)):
# CHECK-NOT: prim::isinstance
# CHECK: return

def scalar(t: Tensor) -> bool:
    return isinstance(t.item(), int)

# CHECK-LABEL: graph(%t
# CHECK: %[[S:[0-9x.]+]] : Scalar = aten::item
# CHECK: bool = prim::isinstance[types=[int]](%[[S]])
