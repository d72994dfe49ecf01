# RUN: %kiln graph --code %s | FileCheck %s --match-full-lines --strict-whitespace
# RUN: %kiln graph --code %s helper | FileCheck %s --check-prefix=ONE --match-full-lines
# kiln's Python printer: the text torch 1.13's `.code` gives for these
# functions (the CHECK lines are torch's output), then the class as
# torch.jit.save writes it.

def helper(x: Tensor, k: float = 0.5) -> Tensor:
    return x * k


def f(x: Tensor, n: int, o: Optional[int] = None) -> Tuple[Tensor, List[int], str]:
    sizes: List[int] = []
    i = 0
    while i < n:
        sizes.append(i)
        i += 1
    if o is None:
        m = 0
    else:
        m = o
    a, b = x.chunk(2)
    s = "a rather long string constant that gets its own line"
    y = torch.zeros([2], dtype=torch.float64)
    return helper(a + b, 1.0) + m + x.sum(dim=[0], keepdim=True) + y[0], sizes, s


class Box:
    def __init__(self, v: int):
        self.v = v

    def get(self, d: Dict[str, int]) -> int:
        return self.v + d["k"]

# CHECK:def helper(x: Tensor,
# CHECK-NEXT:    k: float=0.5) -> Tensor:
# CHECK-NEXT:  return torch.mul(x, k)
# CHECK-EMPTY:
# CHECK-NEXT:def f(x: Tensor,
# CHECK-NEXT:    n: int,
# CHECK-NEXT:    o: Optional[int]=None) -> Tuple[Tensor, List[int], str]:
# CHECK-NEXT:  s = "a rather long string constant that gets its own line"
# CHECK-NEXT:  sizes = annotate(List[int], [])
# CHECK-NEXT:  i = 0
# CHECK-NEXT:  _0 = torch.lt(0, n)
# CHECK-NEXT:  while _0:
# CHECK-NEXT:    _1 = torch.append(sizes, i)
# CHECK-NEXT:    i0 = torch.add(i, 1)
# CHECK-NEXT:    _0, i = torch.lt(i0, n), i0
# CHECK-NEXT:  if torch.__is__(o, None):
# CHECK-NEXT:    m = 0
# CHECK-NEXT:  else:
# CHECK-NEXT:    m = unchecked_cast(int, o)
# CHECK-NEXT:  a, b, = torch.chunk(x, 2)
# CHECK-NEXT:  y = torch.zeros([2], dtype=7)
# CHECK-NEXT:  _2 = torch.add(helper(torch.add(a, b), 1., ), m)
# CHECK-NEXT:  _3 = torch.add(_2, torch.sum(x, [0], True))
# CHECK-NEXT:  _4 = (torch.add(_3, torch.select(y, 0, 0)), sizes, s)
# CHECK-NEXT:  return _4
# CHECK-EMPTY:
# CHECK-NEXT:class Box:
# CHECK-NEXT:  v : int
# CHECK-NEXT:  def __init__(self: __torch__.Box,
# CHECK-NEXT:    v: int) -> NoneType:
# CHECK-NEXT:    self.v = v
# CHECK-NEXT:    return None
# CHECK-NEXT:  def get(self: __torch__.Box,
# CHECK-NEXT:    d: Dict[str, int]) -> int:
# CHECK-NEXT:    v = self.v
# CHECK-NEXT:    return torch.add(v, d["k"])

# With a function named, its code alone.
# ONE: def helper(x: Tensor,
# ONE-NEXT:     k: float=0.5) -> Tensor:
# ONE-NEXT:   return torch.mul(x, k)
# ONE-NOT: def
