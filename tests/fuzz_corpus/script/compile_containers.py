from typing import Dict, List, Optional, Tuple
import torch


def g(xs: List[float], d: Dict[str, int], t: Tuple[int, str], o: Optional[int] = None) -> List[float]:
    if o is None:
        o = 1
    ys = [x + float(d["k"]) for x in xs if x > 0]
    for i, y in enumerate(ys):
        ys[i] = y * o
    s = "{} {}".format(t[1], len(ys))
    print(s)
    return ys


def h(x: torch.Tensor, n: int) -> Tuple[torch.Tensor, int]:
    a, b = x.chunk(2, 0)
    while n > 0:
        n -= 1
        if n == 3:
            break
        a = a + b if n % 2 else torch.relu(a)
    return a[0, 1:], n
