# RUN: %kiln run %s add 2 3 | FileCheck %s --check-prefix=ADD
# RUN: %kiln run %s scale '[1, 2.5]' 2 | FileCheck %s --check-prefix=SCALE
# RUN: %kiln run %s pair "'ab'" | FileCheck %s --check-prefix=PAIR
# RUN: not %kiln run %s add 2 x 2>&1 | FileCheck %s --check-prefix=BAD
# `kiln run` takes Python literals and prints the result as Python would.
from typing import List, Tuple


def add(a: int, b: int = 10) -> int:
    return a + b


def scale(xs: List[float], k: float) -> List[float]:
    return [x * k for x in xs]


def pair(s: str) -> Tuple[str, int, float, bool]:
    return s, len(s), 0.5, True

# ADD: 5
# SCALE: [2.0, 5.0]
# PAIR: ('ab', 2, 0.5, True)
# BAD: kiln: error: argument 2 ('b' of add): {{.*}}not a literal
