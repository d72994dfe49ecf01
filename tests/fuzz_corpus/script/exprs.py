import torch.nn as nn
from typing import (List, Dict as D,)
x = a[1:2, ::3, None, ...] @ b.c(d=1.5e-3, e=.5)
y = {k: v for k, v in d.items()} if ~m else {'a': r'\d', "b": """t
q"""}
z = -2**2 - (1,) + () + 0o17 + 0b1 + 1_000 \
    + 3.
class A(B):
    w: int
    def forward(self, x):  # type: (Tensor) -> Tensor
        return x
