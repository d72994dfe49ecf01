"""Python that torch 1.13's TorchScript refuses but kiln compiles on purpose
(issue 5: "accepting it is a plus"): chained comparisons, comprehension
filters, `//=`, enumerate over a tuple (1.13 fails inside). The oracle is Python itself running the same source."""
import math  # noqa: F401  (the sources use it)
from typing import Dict, List, Optional, Tuple  # noqa: F401

import pytest
import torch

import kiln

PROGRAMS = [
    ("chained_comparison", """
def f(a: int, b: int, c: int) -> bool:
    return a < b <= c
""", [(1, 2, 2), (1, 2, 1), (3, 2, 5), (0, 0, 0)]),
    ("chained_comparison_mixed_ops", """
def f(a: int, b: int, c: int, d: int) -> bool:
    return a != b < c == d
""", [(1, 2, 3, 3), (2, 2, 3, 3), (1, 2, 3, 4), (5, 2, 1, 1)]),
    ("chained_comparison_evaluates_middle_once", """
def bump(xs: List[int]) -> int:
    xs.append(1)
    return len(xs)

def f(n: int) -> Tuple[bool, int]:
    xs: List[int] = []
    r = 0 < bump(xs) < n
    return r, len(xs)
""", [(5,), (1,), (0,)]),
    ("chained_comparison_short_circuits", """
def bump(xs: List[int]) -> int:
    xs.append(1)
    return len(xs)

def f(n: int) -> Tuple[bool, int]:
    xs: List[int] = []
    r = n < 0 < bump(xs)
    return r, len(xs)
""", [(-1,), (3,)]),
    ("list_comprehension_filter", """
def f(xs: List[int]) -> List[int]:
    return [x * 2 for x in xs if x % 2 == 1]
""", [([1, 2, 3, 4, 5],), ([],), ([2, 4],)]),
    ("list_comprehension_filter_over_range", """
def f(n: int) -> List[int]:
    return [i for i in range(n) if i * i > n]
""", [(10,), (0,), (1,)]),
    ("dict_comprehension_filter", """
def f(xs: List[str]) -> Dict[str, int]:
    return {x: len(x) for x in xs if len(x) > 1}
""", [(["a", "bb", "ccc"],), ([],)]),
    ("floor_divide_assign", """
def f(a: int, b: float) -> Tuple[int, float]:
    a //= 3
    b //= 2.0
    return a, b
""", [(7, 5.0), (-7, -5.0)]),
    ("enumerate_over_tuple_unrolls", """
def f(t: Tuple[int, float, int]) -> float:
    s = 0.0
    for i, v in enumerate(t):
        s += i * v
    return s
""", [((2, 3.5, 4),)]),
    ("not_not", """
def f(a: int) -> bool:
    return not not a
""", [(0,), (3,)]),
]


def python_function(src, name):
    scope = {"List": List, "Dict": Dict, "Tuple": Tuple, "Optional": Optional, "math": math}
    exec(compile(src, "<test>", "exec"), scope)
    return scope[name]


@pytest.mark.parametrize("name, src, calls", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_extension_agrees_with_python(name, src, calls):
    cu = kiln.compile(src)
    expected_fn = python_function(src, "f")
    for args in calls:
        assert cu.f(*args) == expected_fn(*args), args


@pytest.mark.parametrize("name, src, calls", PROGRAMS[:2] + PROGRAMS[4:5], ids=["chain", "chain_mixed", "filter"])
def test_torch_refuses_what_kiln_accepts(name, src, calls):
    with pytest.raises(Exception):
        torch.jit.CompilationUnit(src, _frames_up=0)
