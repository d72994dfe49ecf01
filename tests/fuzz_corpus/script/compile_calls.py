# Every function of the file in definition order; a call between them is a
# prim::CallFunction of a Function constant.
import torch


def f(x: float) -> float:
    return x * 2.0


def g(x: float) -> float:
    return f(x) + 1.0


