"""TorchScript programs for the differential tests of the frontend (issue 5).

Each entry of PROGRAMS is a dict:
  name   - unique id ("corpus_" prefix for the shared corpus programs)
  src    - TorchScript source (no imports: torch, Tensor, math, List, Dict,
           Tuple, Optional resolve in the compiling module)
  fn     - the function to call
  args   - list of argument tuples; numpy arrays stand for tensors, other
           values are passed as they are (containers may hold arrays)
  prints - the function prints: stdout is compared too
  rtol   - relative tolerance for float results

Every source compiles with torch 1.13's `torch.jit.CompilationUnit(src,
_frames_up=0)`; programs torch rejects are in test_script_errors.py.  Whether
a call raises is decided by torch (the tests compare raised-or-not), so
argument tuples that make torch raise are part of the data on purpose.
"""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "corpus"))
from programs import PROGRAMS as CORPUS  # noqa: E402

_R = np.random.default_rng(5)


def f32(*shape):
    return _R.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return _R.standard_normal(shape)


def i64(*shape, low=-5, high=6):
    return _R.integers(low, high, shape).astype(np.int64)


def i32(*shape):
    return _R.integers(-5, 6, shape).astype(np.int32)


def bools(*shape):
    return _R.integers(0, 2, shape).astype(bool)


OWN = []


def program(name, src, fn, args, prints=False, rtol=1e-5):
    assert all(isinstance(a, tuple) for a in args), name
    OWN.append(dict(name=name, src=src, fn=fn, args=args, prints=prints, rtol=rtol))


# ---------------------------------------------------------------- assignment

program("assign_basic", """
def f(x: int, y: float) -> float:
    a = x
    b = a + 1
    c = b * y
    a = 7
    return a + c
""", "f", [(2, 1.5), (-3, 0.25)])

program("assign_tuple_unpack", """
def f(t: Tuple[int, float, str]) -> Tuple[str, float, int]:
    a, b, c = t
    return c, b, a
""", "f", [((1, 2.5, "x"),)])

program("assign_nested_unpack", """
def f(t: Tuple[int, Tuple[int, Tensor]]) -> Tensor:
    a, (b, c) = t
    return c * a + b
""", "f", [((2, (3, f32(3))),)])

program("assign_swap", """
def f(a: int, b: int) -> Tuple[int, int]:
    a, b = b, a
    return a, b
""", "f", [(1, 2)])

program("assign_chained", """
def f(a: int) -> Tuple[int, int]:
    b = c = a + 1
    b += 1
    return b, c
""", "f", [(4,)])

program("assign_unpack_list_literal", """
def f(x: int) -> int:
    a, b = [x, 2]
    return a * 10 + b
""", "f", [(3,)])

program("assign_unpack_chunk", """
def f(x: Tensor) -> Tensor:
    a, b, c = x.chunk(3)
    return a - b * c
""", "f", [(f32(6, 2),)])

program("assign_unpack_call", """
def g(x: int) -> Tuple[int, int]:
    return x // 3, x % 3

def f(x: int) -> int:
    q, r = g(x)
    return q * 100 + r
""", "f", [(17,), (-17,)])

program("assign_annotated_locals", """
def f(n: int) -> Tuple[List[int], Dict[str, float], Optional[int]]:
    xs: List[int] = []
    d: Dict[str, float] = {}
    o: Optional[int] = None
    for i in range(n):
        xs.append(i)
        d[str(i)] = i * 0.5
    if n > 2:
        o = n
    return xs, d, o
""", "f", [(4,), (1,)])

program("assign_rebind_in_loop", """
def f(x: Tensor, n: int) -> Tensor:
    y = x
    for i in range(n):
        y = y + i
        x = y * 2
    return x + y
""", "f", [(f32(3), 3), (f32(3), 0)])

program("assign_rebind_other_type", """
def f(x: int):
    y = x
    y = "a" + str(y)
    return y
""", "f", [(3,)])

program("assign_unpack_tensor_loop", """
def f(x: Tensor) -> Tensor:
    a, b = x.unbind(0)[0], x.unbind(0)[1]
    return a + b
""", "f", [(f32(2, 3),)])

# ------------------------------------------------------ augmented assignment

program("augassign_int", """
def f(x: int, y: int) -> List[int]:
    r: List[int] = []
    x += y
    r.append(x)
    x -= 3
    r.append(x)
    x *= y
    r.append(x)
    x = x // 4
    r.append(x)
    x = x % 5
    r.append(x)
    x &= 6
    x |= 9
    x ^= 3
    r.append(x)
    x <<= 2
    x >>= 1
    r.append(x)
    return r
""", "f", [(7, 3), (-7, 2), (0, -5)])

program("augassign_int_mod_is_fmod", """
def f(x: int, y: int):
    x %= y
    return x
""", "f", [(7, 5), (-7, 5), (7, -5)])

program("augassign_float", """
def f(x: float, y: float) -> List[float]:
    r: List[float] = []
    x += y
    r.append(x)
    x -= 0.5
    r.append(x)
    x *= y
    r.append(x)
    x /= 3.0
    r.append(x)
    x += 1
    r.append(x)
    return r
""", "f", [(1.5, 2.0), (-0.25, -4.0)])

program("augassign_float_div_zero", """
def f(x: float, y: float) -> float:
    x /= y
    return x
""", "f", [(1.0, 0.0), (1.0, 2.0)])

program("augassign_tensor_inplace", """
def f(x: Tensor, y: Tensor) -> Tensor:
    z = x
    x += 1
    x *= y
    x -= 0.5
    x /= 2
    return z
""", "f", [(f32(3, 2), f32(3, 2)), (f32(4), f32(1))])

program("augassign_tensor_view_mutates_base", """
def f(x: Tensor) -> Tensor:
    v = x[0]
    v += 10
    w = x[:, 1]
    w *= -1
    return x.sum()
""", "f", [(f32(3, 3),)])

program("augassign_tensor_int_by_float_fails", """
def f(x: Tensor) -> Tensor:
    x += 1.5
    return x
""", "f", [(i64(3),), (f32(3),)])

program("augassign_tensor_broadcast_fails", """
def f(x: Tensor, y: Tensor) -> Tensor:
    x += y
    return x
""", "f", [(f32(3), f32(2, 3)), (f32(2, 3), f32(3))])

program("augassign_list", """
def f(a: List[int], b: List[int]) -> Tuple[List[int], List[int]]:
    c = a
    a += b
    d = a
    a += [7]
    return c, d
""", "f", [([1, 2], [3]), ([], [])])

program("augassign_list_of_tensors", """
def f(x: Tensor) -> int:
    xs = [x]
    ys = xs
    xs += [x, x]
    return len(ys)
""", "f", [(f32(2),)])

program("augassign_string", """
def f(s: str, n: int) -> str:
    for i in range(n):
        s += str(i)
    return s
""", "f", [("a", 3)])

program("augassign_subscript", """
def f(x: Tensor, l: List[int], d: Dict[str, int]) -> Tuple[Tensor, List[int], Dict[str, int]]:
    x[0] += 1
    x[1:] *= 2
    l[0] += 5
    l[-1] *= 3
    d["a"] -= 4
    return x, l, d
""", "f", [(f32(3), [1, 2, 3], {"a": 1})])

program("augassign_int_tensor_int", """
def f(x: Tensor, k: int) -> Tensor:
    x += k
    x *= 2
    x -= 3
    return x
""", "f", [(i64(4), 3), (i32(4), -1)])

# --------------------------------------------------------------------- if

program("if_elif_else", """
def f(x: int) -> str:
    if x < 0:
        r = "neg"
    elif x == 0:
        r = "zero"
    elif x < 10:
        r = "small"
    else:
        r = "big"
    return r
""", "f", [(-3,), (0,), (5,), (50,)])

program("if_nested", """
def f(a: int, b: int) -> int:
    if a > 0:
        if b > 0:
            r = 1
        else:
            r = 2
    else:
        if b > 0:
            r = 3
        else:
            r = 4
    return r
""", "f", [(1, 1), (1, -1), (-1, 1), (-1, -1)])

program("if_tensor_condition", """
def f(x: Tensor) -> Tensor:
    if x.sum() > 0:
        y = x * 2
    else:
        y = -x
    return y
""", "f", [(np.array([1.0, 2.0], np.float32),), (np.array([-1.0, -2.0], np.float32),)])

program("if_tensor_condition_ambiguous", """
def f(x: Tensor) -> int:
    if x > 0:
        return 1
    return 0
""", "f", [(np.array([1.0], np.float32),), (f32(3),)])

program("if_without_else", """
def f(x: Tensor, flag: bool) -> Tensor:
    y = x
    if flag:
        y = y + 1
    return y
""", "f", [(f32(2), True), (f32(2), False)])

program("if_list_and_string_truthiness", """
def f(a: List[int], s: str) -> Tuple[int, int]:
    r = 0
    if a:
        r = 1
    t = 0
    if s:
        t = 1
    return r, t
""", "f", [([1], "x"), ([], "")])

program("if_var_only_in_one_branch_unused", """
def f(a: int) -> int:
    if a > 0:
        b = 1
        a = a + b
    else:
        c = 2
        a = a - c
    return a
""", "f", [(3,), (-3,)])

program("if_constant_condition", """
def f(x: int) -> int:
    if True:
        x = x + 1
    if False:
        x = x * 100
    return x
""", "f", [(1,)])

program("if_in_loop_accumulate", """
def f(xs: List[int]) -> Tuple[int, int]:
    evens = 0
    odds = 0
    for v in xs:
        if v % 2 == 0:
            evens += v
        else:
            odds += v
    return evens, odds
""", "f", [([1, 2, 3, 4, 5, -6, -7],)])

# ------------------------------------------------------------------ while

program("while_counter", """
def f(n: int) -> int:
    i = 0
    s = 0
    while i < n:
        s += i * i
        i += 1
    return s
""", "f", [(5,), (0,), (-2,)])

program("while_break", """
def f(n: int) -> int:
    i = 0
    while True:
        if i * i > n:
            break
        i += 1
    return i
""", "f", [(50,), (0,)])

program("while_tensor_condition", """
def f(x: Tensor) -> Tensor:
    while bool(x.sum() < 10):
        x = x + 1
    return x
""", "f", [(np.zeros(3, np.float32),), (np.full(3, 5.0, np.float32),)])

program("while_nested", """
def f(n: int) -> List[int]:
    r: List[int] = []
    i = 0
    while i < n:
        j = 0
        while j < i:
            r.append(i * 10 + j)
            j += 1
        i += 1
    return r
""", "f", [(4,)])

program("while_return_inside", """
def f(xs: List[int], target: int) -> int:
    i = 0
    while i < len(xs):
        if xs[i] == target:
            return i
        i += 1
    return -1
""", "f", [([4, 5, 6], 5), ([4, 5, 6], 9)])

program("while_continue_break", """
def f(n: int) -> List[int]:
    r: List[int] = []
    i = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if i > 10:
            break
        r.append(i)
    return r
""", "f", [(20,), (4,)])

program("while_false", """
def f(x: int) -> int:
    while False:
        x = x + 1
    return x
""", "f", [(3,)])

# ------------------------------------------------------------------- for

program("for_range_1", """
def f(n: int) -> List[int]:
    r: List[int] = []
    for i in range(n):
        r.append(i)
    return r
""", "f", [(4,), (0,), (-3,)])

program("for_range_2", """
def f(a: int, b: int) -> List[int]:
    r: List[int] = []
    for i in range(a, b):
        r.append(i)
    return r
""", "f", [(2, 6), (6, 2), (-3, 1)])

program("for_range_3", """
def f(a: int, b: int, c: int) -> List[int]:
    r: List[int] = []
    for i in range(a, b, c):
        r.append(i)
    return r
""", "f", [(0, 10, 3), (10, 0, -3), (0, 10, -1), (1, 2, 0)])

program("for_list", """
def f(xs: List[float]) -> float:
    s = 0.0
    for x in xs:
        s += x * x
    return s
""", "f", [([1.0, 2.5, -3.0],), ([],)])

program("for_list_of_tensors", """
def f(xs: List[Tensor]) -> Tensor:
    acc = xs[0]
    for x in xs:
        acc = torch.max(acc, x)
    return acc
""", "f", [([f32(3), f32(3), f32(3)],)])

program("for_tuple_unrolled", """
def f(t: Tuple[int, float, str, Tensor]) -> List[str]:
    r: List[str] = []
    for v in t:
        r.append(str(v))
    return r
""", "f", [((1, 2.0, "s", f32(1)),)])

program("for_tuple_heterogeneous", """
def f(a: int, b: float, x: Tensor) -> Tensor:
    acc = x
    for v in (a, b, x):
        acc = acc + v
    return acc
""", "f", [(2, 0.5, f32(3))])

program("for_string", """
def f(s: str) -> List[str]:
    r: List[str] = []
    for c in s:
        r.append(c + c)
    return r
""", "f", [("abc",), ("",)])

program("for_dict_keys", """
def f(d: Dict[str, int]) -> Tuple[List[str], int]:
    ks: List[str] = []
    total = 0
    for k in d:
        ks.append(k)
        total += d[k]
    for k in d.keys():
        total += len(k)
    return ks, total
""", "f", [({"b": 2, "a": 1, "cc": 3},)])

program("for_dict_items_values", """
def f(d: Dict[str, float]) -> Tuple[List[str], float]:
    r: List[str] = []
    for k, v in d.items():
        r.append(k + "=" + str(v))
    s = 0.0
    for v in d.values():
        s += v
    return r, s
""", "f", [({"x": 1.5, "y": -2.0},)])

program("for_dict_int_keys", """
def f(d: Dict[int, Tensor]) -> Tensor:
    acc = torch.zeros(2)
    for k, v in d.items():
        acc = acc + v * k
    return acc
""", "f", [({3: f32(2), 1: f32(2)},)])

program("for_tensor_rows", """
def f(x: Tensor) -> List[Tensor]:
    r: List[Tensor] = []
    for row in x:
        r.append(row.sum())
    return r
""", "f", [(f32(4, 3),), (f32(3),)])

program("for_tensor_0dim_fails", """
def f(x: Tensor) -> int:
    n = 0
    for row in x:
        n += 1
    return n
""", "f", [(np.array(1.0, np.float32),), (f32(2, 2),)])

program("for_zip", """
def f(a: List[int], b: List[float]) -> List[float]:
    r: List[float] = []
    for x, y in zip(a, b):
        r.append(x * y)
    return r
""", "f", [([1, 2, 3], [0.5, 1.5]), ([], [1.0])])

program("for_zip3_range", """
def f(a: List[int], b: List[str], x: Tensor) -> List[str]:
    r: List[str] = []
    for i, s, row in zip(range(10), b, x):
        r.append(s + str(i + a[i]) + str(row.size(0)))
    return r
""", "f", [([5, 6, 7], ["p", "q", "r"], f32(3, 2))])

program("for_enumerate", """
def f(xs: List[str]) -> List[str]:
    r: List[str] = []
    for i, s in enumerate(xs):
        r.append(str(i) + s)
    for i, s in enumerate(xs, 5):
        r.append(str(i) + s)
    return r
""", "f", [(["a", "b"],)])

program("for_enumerate_tensor", """
def f(x: Tensor) -> Tensor:
    acc = torch.zeros_like(x[0])
    for i, row in enumerate(x):
        acc = acc + row * i
    return acc
""", "f", [(f32(3, 2),)])

program("for_nested", """
def f(n: int, m: int) -> List[List[int]]:
    r: List[List[int]] = []
    for i in range(n):
        row: List[int] = []
        for j in range(m):
            row.append(i * m + j)
        r.append(row)
    return r
""", "f", [(2, 3), (0, 3)])

program("for_nested_zip_enumerate", """
def f(a: List[List[int]]) -> int:
    s = 0
    for i, row in enumerate(a):
        for j, v in enumerate(row):
            s += i * j * v
    return s
""", "f", [([[1, 2], [3, 4, 5], []],)])

program("for_list_modified_during_loop", """
def f(xs: List[int]) -> List[int]:
    for x in xs:
        if len(xs) < 6:
            xs.append(x * 2)
    return xs
""", "f", [([1, 2],)])

program("for_loop_var_after_loop", """
def f(n: int) -> int:
    i = -1
    for i in range(n):
        pass
    return i
""", "f", [(4,), (0,)])

# ---------------------------------------------------------- break/continue/return

program("break_in_for", """
def f(xs: List[int]) -> int:
    s = 0
    for x in xs:
        if x < 0:
            break
        s += x
    return s
""", "f", [([1, 2, -1, 5],), ([1, 2],)])

program("continue_in_for", """
def f(xs: List[int]) -> int:
    s = 0
    for x in xs:
        if x % 2 == 1:
            continue
        s += x
    return s
""", "f", [([1, 2, 3, 4, 6],)])

program("break_nested_inner", """
def f(n: int) -> List[int]:
    r: List[int] = []
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            r.append(j)
    return r
""", "f", [(4,)])

program("break_continue_same_loop", """
def f(xs: List[int]) -> List[int]:
    r: List[int] = []
    for x in xs:
        if x == 0:
            continue
        elif x > 100:
            break
        else:
            r.append(x)
        r.append(-1)
    return r
""", "f", [([1, 0, 2, 200, 3],)])

program("return_in_for", """
def f(xs: List[int], t: int) -> int:
    for i in range(len(xs)):
        if xs[i] == t:
            return i
    return -1
""", "f", [([3, 4, 5], 4), ([3], 9)])

program("return_in_nested_loops", """
def f(n: int, t: int) -> Tuple[int, int]:
    for i in range(n):
        for j in range(n):
            if i * j == t:
                return i, j
    return -1, -1
""", "f", [(5, 6), (3, 100)])

program("return_in_while_in_if", """
def f(x: int) -> int:
    if x > 0:
        while x > 0:
            if x % 7 == 0:
                return x
            x -= 1
        return -1
    else:
        return 0
""", "f", [(20,), (5,), (-1,)])

program("return_early_both_branches", """
def f(x: Tensor, flag: bool) -> Tensor:
    if flag:
        return x + 1
    else:
        return x - 1
""", "f", [(f32(2), True), (f32(2), False)])

program("return_after_loop_break_tensor", """
def f(x: Tensor) -> Tensor:
    for i in range(10):
        x = x * 2
        if bool(x.abs().sum() > 100):
            break
    return x
""", "f", [(np.ones(2, np.float32),)])

program("break_in_while_in_for", """
def f(n: int) -> int:
    c = 0
    for i in range(n):
        j = 0
        while True:
            j += 1
            c += 1
            if j >= i:
                break
    return c
""", "f", [(5,)])

program("continue_in_nested_while", """
def f(n: int) -> int:
    s = 0
    i = 0
    while i < n:
        i += 1
        for j in range(i):
            if j % 2 == 0:
                continue
            s += j
    return s
""", "f", [(6,)])

program("return_in_loop_with_else_code", """
def f(xs: List[int]) -> str:
    for x in xs:
        if x > 10:
            return "big " + str(x)
        elif x < 0:
            return "neg"
    if len(xs) == 0:
        return "empty"
    return "ok"
""", "f", [([1, 20],), ([-1],), ([],), ([1, 2],)])

# ------------------------------------------------------ pass / assert / raise

program("pass_stmt", """
def f(x: int) -> int:
    if x > 0:
        pass
    else:
        x = -x
    for i in range(2):
        pass
    return x
""", "f", [(3,), (-3,)])

program("assert_no_message", """
def f(x: int) -> int:
    assert x > 0
    return x * 2
""", "f", [(3,), (-3,)])

program("assert_message", """
def f(x: Tensor) -> Tensor:
    assert x.dim() == 2, "need a matrix"
    return x.t()
""", "f", [(f32(2, 3),), (f32(3),)])

program("assert_formatted_message", """
def f(x: int, y: int) -> int:
    assert x < y, "bad order: {} >= {}".format(x, y)
    return y - x
""", "f", [(1, 2), (5, 2)])

program("raise_exception", """
def f(x: int) -> int:
    if x < 0:
        raise Exception("negative")
    return x
""", "f", [(1,), (-1,)])

program("raise_value_error", """
def f(x: float) -> float:
    if x == 0.0:
        raise ValueError("zero: " + str(x))
    return 1.0 / x
""", "f", [(2.0,), (0.0,)])

program("raise_runtime_and_type_errors", """
def f(k: int) -> int:
    if k == 1:
        raise RuntimeError("one")
    elif k == 2:
        raise TypeError("two")
    elif k == 3:
        raise IndexError("three")
    elif k == 4:
        raise KeyError("four")
    return k
""", "f", [(0,), (1,), (2,), (3,), (4,)])

program("raise_exception_class", """
def f(x: int) -> int:
    if x > 1:
        raise Exception
    return x
""", "f", [(1,), (2,)])

program("raise_in_loop", """
def f(xs: List[int]) -> int:
    s = 0
    for x in xs:
        if x == 0:
            raise ValueError("zero in list")
        s += 100 // x
    return s
""", "f", [([1, 2, 3],), ([1, 0],)])

program("raise_only_path", """
def f(x: int) -> int:
    if x > 0:
        return x
    else:
        raise RuntimeError("not positive")
""", "f", [(1,), (0,)])

program("with_no_grad", """
def f(x: Tensor) -> Tensor:
    with torch.no_grad():
        y = x * 2
    return y + 1
""", "f", [(f32(3),)])

# -------------------------------------------------- literals and comprehensions

program("list_literal", """
def f(a: int, b: int) -> Tuple[List[int], List[float], List[List[int]], List[str]]:
    return [a, b, a + b], [1.0, 2.5], [[a], [b, b]], ["x", "y"]
""", "f", [(1, 2)])

program("list_literal_tensors", """
def f(x: Tensor) -> Tensor:
    xs = [x, x * 2, x + 1]
    return torch.stack(xs, 0)
""", "f", [(f32(2),)])

program("list_empty_defaults_to_tensor", """
def f(x: Tensor) -> List[Tensor]:
    xs = []
    xs.append(x)
    return xs
""", "f", [(f32(2),)])

program("dict_literal", """
def f(a: int) -> Tuple[Dict[str, int], Dict[int, str], Dict[str, List[int]]]:
    d = {"a": a, "b": 2}
    e: Dict[int, str] = {}
    e[a] = "x"
    g = {"k": [a, a]}
    return d, e, g
""", "f", [(5,)])

program("dict_empty_defaults", """
def f(x: Tensor) -> Dict[str, Tensor]:
    d = {}
    d["x"] = x
    return d
""", "f", [(f32(2),)])

program("list_comprehension_range", """
def f(n: int) -> List[int]:
    return [i * i for i in range(n)]
""", "f", [(5,), (0,)])

program("list_comprehension_list", """
def f(xs: List[float]) -> List[float]:
    return [x / 2 for x in xs]
""", "f", [([1.0, 3.0],)])

program("list_comprehension_tensor", """
def f(x: Tensor) -> List[Tensor]:
    return [row.sum() for row in x]
""", "f", [(f32(3, 2),)])

program("list_comprehension_nested", """
def f(n: int) -> List[List[int]]:
    return [[i * j for j in range(n)] for i in range(n)]
""", "f", [(3,)])

program("dict_comprehension", """
def f(xs: List[int]) -> Dict[str, int]:
    return {str(x): x * x for x in xs}
""", "f", [([1, 2, 3, 2],)])

program("list_comprehension_calls_function", """
def sq(x: int) -> int:
    return x * x

def f(xs: List[int]) -> List[int]:
    return [sq(x) + 1 for x in xs]
""", "f", [([1, 2, 3],)])

# ------------------------------------------------------------- expressions

program("ternary", """
def f(x: int) -> Tuple[int, str]:
    a = x if x > 0 else -x
    b = "pos" if x > 0 else ("zero" if x == 0 else "neg")
    return a, b
""", "f", [(3,), (0,), (-4,)])

program("ternary_tensor", """
def f(x: Tensor, flag: bool) -> Tensor:
    return x * 2 if flag else x - 2
""", "f", [(f32(2), True), (f32(2), False)])

program("short_circuit_side_effects", """
def g(log: List[int], v: bool, tag: int) -> bool:
    log.append(tag)
    return v

def f(a: bool, b: bool) -> Tuple[bool, bool, bool, List[int]]:
    log: List[int] = []
    r = g(log, a, 1) and g(log, b, 2)
    s = g(log, a, 3) or g(log, b, 4)
    t = not g(log, a, 5)
    return r, s, t, log
""", "f", [(True, True), (True, False), (False, True), (False, False)])

program("short_circuit_guards_index", """
def f(xs: List[int], i: int) -> bool:
    return i < len(xs) and xs[i] > 0
""", "f", [([1, 2], 1), ([1, 2], 5), ([1, -2], 1)])

program("and_or_chains", """
def f(a: int, b: int, c: int) -> Tuple[bool, bool, bool]:
    return a > 0 and b > 0 and c > 0, a > 0 or b > 0 or c > 0, not (a > 0 and b > 0) or c > 0
""", "f", [(1, 1, 1), (1, -1, 1), (-1, -1, -1), (-1, 1, -1)])

program("and_or_tensor_bools", """
def f(x: Tensor) -> bool:
    return bool(x.sum() > 0) and bool(x.max() < 2)
""", "f", [(np.array([0.5, 1.0], np.float32),), (np.array([0.5, 3.0], np.float32),), (np.array([-5.0], np.float32),)])

program("not_operator", """
def f(a: bool, xs: List[int]) -> Tuple[bool, bool, bool]:
    return not a, not xs, not not a
""", "f", [(True, []), (False, [1])])

program("comparison_ops", """
def f(a: int, b: float, s: str, t: str) -> List[bool]:
    return [a < b, a <= b, a > b, a >= b, a == b, a != b, s < t, s == t, s != t, s >= t]
""", "f", [(1, 1.0, "a", "b"), (2, 1.5, "b", "b")])

program("in_operator", """
def f(x: int, xs: List[int], s: str, t: str, d: Dict[str, int]) -> List[bool]:
    return [x in xs, x not in xs, s in t, s not in t, s in d, s not in d]
""", "f", [(1, [1, 2], "a", "cat", {"a": 1}), (5, [1], "z", "cat", {})])

program("is_operator_none", """
def f(x: Optional[int]) -> Tuple[bool, bool]:
    return x is None, x is not None
""", "f", [(None,), (3,)])

program("unary_minus", """
def f(a: int, b: float, x: Tensor) -> Tuple[int, float, Tensor]:
    return -a, -b, -x
""", "f", [(3, -1.5, f32(2))])

program("bitwise_int", """
def f(a: int, b: int) -> List[int]:
    return [a & b, a | b, a ^ b, a << 2, a >> 1]
""", "f", [(12, 10), (-12, 3)])

program("power_ops", """
def f(a: int, b: int, x: float) -> Tuple[float, float, float]:
    return a ** b, x ** 2, 2 ** x
""", "f", [(2, 10, 1.5), (2, -1, 0.5), (0, -1, 2.0)])

program("tensor_bitwise_bool", """
def f(a: Tensor, b: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    return a & b, a | b, a ^ b, ~a
""", "f", [(bools(4), bools(4)), (i64(4), i64(4))])

# --------------------------------------------------------- Optional refinement

program("optional_is_none_int", """
def f(x: Optional[int]) -> int:
    if x is None:
        return -1
    return x + 1
""", "f", [(None,), (4,)])

program("optional_is_not_none_tensor", """
def f(x: Tensor, bias: Optional[Tensor]) -> Tensor:
    if bias is not None:
        x = x + bias
    return x
""", "f", [(f32(3), None), (f32(3), f32(3))])

program("optional_else_branch_refined", """
def f(x: Optional[Tensor]) -> Tensor:
    if x is None:
        return torch.zeros(2)
    else:
        return x * 2
""", "f", [(None,), (f32(2),)])

program("optional_and_refinement", """
def f(a: Optional[int], b: Optional[int]) -> int:
    if a is not None and b is not None:
        return a * b
    return 0
""", "f", [(None, 2), (3, None), (3, 4)])

program("optional_or_refinement", """
def f(a: Optional[int]) -> int:
    if a is None or a < 0:
        return 0
    return a
""", "f", [(None,), (-2,), (7,)])

program("optional_ternary_refinement", """
def f(a: Optional[float]) -> float:
    return a * 2.0 if a is not None else -1.0
""", "f", [(None,), (1.25,)])

program("optional_assert_refinement", """
def f(a: Optional[int]) -> int:
    assert a is not None
    return a + 1
""", "f", [(3,), (None,)])

program("optional_list_default", """
def f(xs: Optional[List[int]] = None) -> int:
    if xs is None:
        return -1
    return len(xs)
""", "f", [(), (None,), ([1, 2],)])

program("optional_reassigned_in_loop", """
def f(xs: List[int]) -> int:
    best: Optional[int] = None
    for x in xs:
        if best is None or x > best:
            best = x
    if best is None:
        return -100
    return best
""", "f", [([3, 9, 2],), ([],)])

program("optional_early_return_refines_rest", """
def f(x: Optional[Tensor], y: Tensor) -> Tensor:
    if x is None:
        return y
    z = x + y
    return z * x
""", "f", [(None, f32(2)), (f32(2), f32(2))])

# --------------------------------------------------------- tensor indexing

program("tensor_index_int", """
def f(x: Tensor, i: int) -> Tuple[Tensor, Tensor, Tensor]:
    return x[0], x[-1], x[i]
""", "f", [(f32(4, 2), 2), (f32(4, 2), -4), (f32(4, 2), 4)])

program("tensor_slices", """
def f(x: Tensor) -> List[Tensor]:
    return [x[1:3], x[::2], x[1:-1:2], x[-2:], x[:-1], x[5:], x[:, 1:], x[::3, ::2]]
""", "f", [(f32(6, 4),)])

program("tensor_slice_vars", """
def f(x: Tensor, a: int, b: int, s: int) -> Tensor:
    return x[a:b:s]
""", "f", [(f32(8), 1, 7, 2), (f32(8), -5, -1, 1), (f32(8), 0, 8, 0)])

program("tensor_index_none_ellipsis", """
def f(x: Tensor) -> List[Tensor]:
    return [x[None], x[:, None], x[..., 0], x[..., None], x[0, ..., 1], x[None, ..., None]]
""", "f", [(f32(2, 3, 4),)])

program("tensor_index_multi_int", """
def f(x: Tensor) -> Tuple[Tensor, Tensor, float]:
    return x[1, 2], x[1][2], float(x[0, -1])
""", "f", [(f32(3, 4),)])

program("tensor_index_tensor", """
def f(x: Tensor, idx: Tensor) -> Tuple[Tensor, Tensor]:
    return x[idx], x[:, idx]
""", "f", [(f32(4, 4), np.array([0, 3, 3], np.int64)), (f32(4, 4), np.array([5], np.int64))])

program("tensor_index_bool_mask", """
def f(x: Tensor) -> Tensor:
    return x[x > 0]
""", "f", [(f32(3, 4),)])

program("tensor_index_list", """
def f(x: Tensor) -> Tensor:
    return x[[0, 2]]
""", "f", [(f32(4, 2),)])

program("tensor_setitem_int_and_slice", """
def f(x: Tensor) -> Tensor:
    x[0] = 5
    x[1:3] = 0
    x[-1] = x[0] * 2
    return x
""", "f", [(f32(5, 2),)])

program("tensor_setitem_column_and_step", """
def f(x: Tensor, v: Tensor) -> Tensor:
    x[:, 0] = x[:, 1]
    x[::2, 1] = v
    return x
""", "f", [(f32(4, 3), f32(2)), (f32(4, 3), f32(3))])

program("tensor_setitem_mask_ellipsis_index", """
def f(x: Tensor, idx: Tensor) -> Tensor:
    x[x < 0] = 0.0
    x[..., 1] = 2
    x[idx] = 7.0
    return x
""", "f", [(f32(4, 3), np.array([0, 2], np.int64))])

program("tensor_setitem_none_and_var", """
def f(x: Tensor, i: int, val: float) -> Tensor:
    x[i] = val
    x[None, i] = val + 1
    return x
""", "f", [(f32(3), 1, 2.5), (f32(3), 3, 2.5)])

program("tensor_setitem_through_view", """
def f(x: Tensor) -> Tensor:
    row = x[1]
    row[0] = 100
    return x
""", "f", [(f32(3, 2),)])

program("tensor_index_out_of_range", """
def f(x: Tensor, i: int) -> Tensor:
    return x[i]
""", "f", [(f32(3), 3), (f32(3), -4), (f32(3), 2)])

# --------------------------------------------- list / tuple / str subscripts

program("list_index_and_slices", """
def f(xs: List[int]) -> Tuple[int, int, List[int], List[int], List[int], List[int], List[int]]:
    return xs[0], xs[-1], xs[1:3], xs[::2], xs[::-1], xs[-2:], xs[10:]
""", "f", [([1, 2, 3, 4, 5],)])

program("list_slice_vars", """
def f(xs: List[int], a: int, b: int) -> List[int]:
    return xs[a:b]
""", "f", [([1, 2, 3, 4], 1, 3), ([1, 2, 3, 4], -3, 100), ([1, 2, 3, 4], 3, 1)])

program("list_index_out_of_range", """
def f(xs: List[int], i: int) -> int:
    return xs[i]
""", "f", [([1, 2], 1), ([1, 2], 2), ([1, 2], -3)])

program("list_setitem", """
def f(xs: List[int], i: int) -> List[int]:
    xs[i] = 9
    xs[-1] = 8
    return xs
""", "f", [([1, 2, 3], 0), ([1, 2, 3], 5)])

program("list_of_lists_setitem", """
def f(n: int) -> List[List[int]]:
    m = [[0, 0], [0, 0]]
    m[1][0] = n
    m[0] = [n, n]
    return m
""", "f", [(3,)])

program("tuple_index_and_slice", """
def f(t: Tuple[int, str, float]) -> Tuple[int, float, Tuple[str, float], Tuple[int, str]]:
    return t[0], t[-1], t[1:], t[:2]
""", "f", [((1, "a", 2.5),)])

program("string_index_and_slices", """
def f(s: str) -> List[str]:
    return [s[0], s[-1], s[1:3], s[::-1], s[::2], s[-3:]]
""", "f", [("abcdef",), ("a",), ("",)])

program("dict_getitem_setitem", """
def f(d: Dict[str, int], k: str) -> Tuple[int, Dict[str, int]]:
    v = d[k]
    d["new"] = v + 1
    return v, d
""", "f", [({"a": 1, "b": 2}, "b"), ({"a": 1}, "zz")])

program("dict_del_and_list_del", """
def f(d: Dict[str, int], xs: List[int]) -> Tuple[Dict[str, int], List[int]]:
    del d["a"]
    del xs[0]
    return d, xs
""", "f", [({"a": 1, "b": 2}, [1, 2, 3]), ({"b": 2}, [1])])

# ----------------------------------------------------------------- strings

program("string_format", """
def f(a: int, b: float, s: str) -> Tuple[str, str, str]:
    return "{} and {}".format(a, b), "[{}]".format(s), "{}-{}-{}".format(s, a, [a, a])
""", "f", [(3, 0.5, "hey")])

program("string_concat_and_methods", """
def f(s: str) -> List[str]:
    return [s + "!", s.upper(), s.lower(), s.strip(), s.replace("a", "o"), s.title(), s.zfill(8), s.center(9, "*")]
""", "f", [("  banana ",), ("Abc",)])

program("string_queries", """
def f(s: str) -> Tuple[bool, bool, int, int, bool, List[str]]:
    return s.startswith("ab"), s.isdigit(), s.find("c"), s.count("a"), s.endswith("z"), s.split(",")
""", "f", [("abc,a,ca",), ("123",)])

program("string_join_split", """
def f(parts: List[str]) -> Tuple[str, List[str]]:
    j = "-".join(parts)
    return j, j.split("-")
""", "f", [(["a", "bb", ""],)])

program("str_of_values", """
def f(a: int, b: bool, xs: List[int], t: Tuple[int, float]) -> List[str]:
    return [str(a), str(b), str(xs), str(t), str(None)]
""", "f", [(-4, True, [1, 2], (1, 2.0))])

program("float_formatting", """
def f(x: float) -> Tuple[str, str]:
    return str(x), "{}".format(x)
""", "f", [(1.0,), (0.1,), (1e20,), (1.5e-7,), (123456789.0,), (-0.0,), (1.0 / 3,), (2.5e16,), (12345.678,),
          (float("inf"),), (float("-inf"),), (float("nan"),), (-2.5,)])

program("float_formatting_literals", """
def f() -> List[str]:
    return [str(1.0), str(0.1), str(1e-5), str(100.0), str(1e16), str(3.14159), str(2.0 / 3.0)]
""", "f", [()])

# -------------------------------------------------------------- annotations

program("type_comment_signature", """
def f(x, y, z):
    # type: (int, float, List[int]) -> float
    return x + y + len(z)
""", "f", [(1, 2.5, [1, 2])])

program("type_comment_defaults_to_tensor", """
def f(x, y):
    return x * y + 1
""", "f", [(f32(3), f32(3))])

program("type_comment_optional", """
def f(x, n=None):
    # type: (Tensor, Optional[int]) -> Tensor
    if n is None:
        return x
    return x * n
""", "f", [(f32(2),), (f32(2), 3)])

program("python3_annotations_mixed", """
def f(x: Tensor, k: int = 2, name: str = "a", scales: List[float] = [1.0, 2.0]) -> Tuple[Tensor, str]:
    return x * k * scales[-1], name + str(len(scales))
""", "f", [(f32(2),), (f32(2), 3, "b", [0.5])])

program("jit_annotate", """
def f(n: int) -> Tuple[List[int], Dict[str, Tensor], Optional[float]]:
    xs = torch.jit.annotate(List[int], [])
    d = torch.jit.annotate(Dict[str, Tensor], {})
    o = torch.jit.annotate(Optional[float], None)
    for i in range(n):
        xs.append(i)
        d[str(i)] = torch.ones(i)
    if n > 1:
        o = 1.5
    return xs, d, o
""", "f", [(3,), (1,)])

program("tolist_annotated", """
def f(x: Tensor, y: Tensor) -> Tuple[List[float], List[List[int]]]:
    a = torch.jit.annotate(List[float], x.tolist())
    b: List[List[int]] = y.tolist()
    return a, b
""", "f", [(f32(3), i64(2, 2))])

program("return_optional", """
def f(x: int) -> Optional[int]:
    if x > 0:
        return x
    return None
""", "f", [(2,), (-2,)])

program("return_none_implicit", """
def f(x: Tensor):
    x.add_(1)
""", "f", [(f32(2),)])

program("return_none_explicit", """
def f(x: Tensor) -> None:
    x.mul_(2)
    return
""", "f", [(f32(2),)])

# ---------------------------------------------- defaults, keywords, calls

program("defaults_and_keywords", """
def g(a: int, b: int = 2, c: int = 3) -> int:
    return a * 100 + b * 10 + c

def f(x: int) -> List[int]:
    return [g(x), g(x, 5), g(x, c=7), g(a=x, b=1), g(c=1, b=2, a=x)]
""", "f", [(1,)])

program("defaults_omitted_by_caller", """
def f(x: Tensor, alpha: float = 0.5, n: int = 2) -> Tensor:
    return x * alpha + n
""", "f", [(f32(2),), (f32(2), 2.0), (f32(2), 2.0, 5)])

program("torch_keyword_args", """
def f(x: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    return torch.sum(x, dim=1, keepdim=True), x.clamp(min=0.0), torch.zeros(2, 3, dtype=torch.float64), x.mean(dim=0)
""", "f", [(f32(3, 4),)])

program("calls_chain", """
def a(x: Tensor) -> Tensor:
    return x + 1

def b(x: Tensor) -> Tensor:
    return a(x) * 2

def c(x: Tensor) -> Tensor:
    return b(a(x)) - a(x)
""", "c", [(f32(3),)])

program("call_function_defined_later", """
def f(x: int) -> int:
    return g(x) + h(x)

def g(x: int) -> int:
    return x + 1

def h(x: int) -> int:
    return g(x) * 2
""", "f", [(3,)])

program("call_mutates_caller_containers", """
def g(l: List[int], x: Tensor):
    l.append(len(l))
    x.add_(1)

def f(x: Tensor) -> List[int]:
    l: List[int] = []
    g(l, x)
    g(l, x)
    return l
""", "f", [(f32(2),)])

program("call_returning_tuple_and_optional", """
def g(x: int) -> Tuple[int, Optional[str]]:
    if x > 0:
        return x, "pos"
    return x, None

def f(x: int) -> str:
    a, b = g(x)
    if b is None:
        return "none"
    return b + str(a)
""", "f", [(2,), (-2,)])

program("call_raises_in_callee", """
def check(x: int) -> int:
    if x < 0:
        raise ValueError("negative")
    return x

def f(x: int) -> int:
    return check(x) + check(x + 1)
""", "f", [(1,), (-1,), (-5,)])

program("call_wrong_runtime_arg_type", """
def f(x: int) -> int:
    return x + 1
""", "f", [(1,), ("a",), (1.5,)])

# ----------------------------------------------------------------- builtins

program("builtin_len", """
def f(xs: List[int], s: str, d: Dict[str, int], x: Tensor) -> List[int]:
    return [len(xs), len(s), len(d), len(x), len((1, 2, 3))]
""", "f", [([1, 2], "abc", {"a": 1}, f32(4, 2))])

program("builtin_len_0dim_fails", """
def f(x: Tensor) -> int:
    return len(x)
""", "f", [(np.array(2.0, np.float32),)])

program("builtin_min_max_scalars", """
def f(a: int, b: int, x: float, y: float) -> Tuple[int, int, float, float, float, int]:
    return min(a, b), max(a, b), min(x, y), max(x, y), min(a, x), max(a, b, 0)
""", "f", [(3, -1, 2.5, 2.25), (0, 0, -1.0, 1.0)])

program("builtin_min_max_lists", """
def f(xs: List[int], ys: List[float]) -> Tuple[int, int, float, float]:
    return min(xs), max(xs), min(ys), max(ys)
""", "f", [([3, 1, 2], [0.5, -1.5]), ([], [1.0])])

program("builtin_min_max_tensors", """
def f(x: Tensor, y: Tensor):
    return min(x, y), max(x, y), torch.max(x)
""", "f", [(np.array(2, np.int64), np.array(-3, np.int64)), (f32(3), f32(3))])

program("builtin_sum", """
def f(xs: List[int], ys: List[float]) -> Tuple[int, float]:
    return sum(xs), sum(ys)
""", "f", [([1, 2, 3], [0.5, 0.25]), ([], [])])

program("builtin_abs", """
def f(a: int, b: float, x: Tensor) -> Tuple[int, float, Tensor]:
    return abs(a), abs(b), abs(x)
""", "f", [(-3, -2.5, f32(3)), (4, 0.0, i64(3))])

program("builtin_round", """
def f(x: float) -> float:
    return round(x)
""", "f", [(2.5,), (3.5,), (-2.5,), (2.4999,), (-0.4,)])

program("builtin_sorted", """
def f(xs: List[int], ys: List[float], ss: List[str]) -> Tuple[List[int], List[float], List[str], List[int]]:
    zs = sorted(xs)
    return zs, sorted(ys), sorted(ss), xs
""", "f", [([3, 1, 2], [0.5, -1.0], ["b", "a", "ab"])])

program("builtin_list_sort_methods", """
def f(xs: List[int]) -> Tuple[List[int], int, int]:
    xs.insert(0, 5)
    xs.pop()
    xs.extend([7, 8])
    xs.reverse()
    xs.sort()
    xs.remove(7)
    return xs, xs.index(5), xs.count(8)
""", "f", [([1, 2, 3],), ([9],)])

program("builtin_list_remove_missing", """
def f(xs: List[int]) -> List[int]:
    xs.remove(100)
    return xs
""", "f", [([1, 2],)])

program("builtin_conversions", """
def f(x: float, n: int, b: bool, s: str) -> Tuple[int, float, bool, bool, int, float, int]:
    return int(x), float(n), bool(n), bool(x), int(b), float(s), int(b) + n
""", "f", [(2.7, 0, True, "1.5"), (-2.7, 3, False, "-3e2")])

program("builtin_int_of_string", """
def f(s: str) -> int:
    return int(s)
""", "f", [("12",), ("-7",), ("x1",)])

program("builtin_tensor_conversions", """
def f(x: Tensor) -> Tuple[int, float, bool]:
    return int(x), float(x), bool(x)
""", "f", [(np.array(2.5, np.float32),), (np.array([3], np.int64),), (f32(2),)])

program("builtin_print", """
def f(x: int, y: float, s: str) -> int:
    print("hello", x, y, s)
    print(x + 1)
    print([1, 2], (1, "a"), {"a": 1}, 1.0, None, True)
    print()
    return x
""", "f", [(3, 0.5, "s")], prints=True)

program("builtin_print_tensor", """
def f(x: Tensor) -> Tensor:
    print(x)
    print("shape", x.shape)
    return x
""", "f", [(np.array([1.0, 2.5], np.float32),), (np.array([[1, 2], [3, 4]], np.int64),)], prints=True)

program("builtin_print_in_loop", """
def f(n: int) -> int:
    for i in range(n):
        print("i =", i, "sq =", i * i, i / 2)
    return n
""", "f", [(3,)], prints=True)

program("builtin_isinstance", """
def f(x: Optional[int], y: List[int], z: Tensor) -> List[bool]:
    return [isinstance(x, int), isinstance(y, List[int]), isinstance(z, Tensor), isinstance(z, (int, float)),
            isinstance(y, list)]
""", "f", [(None, [1], f32(1)), (2, [], f32(1))])

program("builtin_isinstance_refines", """
def f(x: Optional[int]) -> int:
    if isinstance(x, int):
        return x + 1
    return 0
""", "f", [(None,), (5,)])

program("builtin_range_as_list", """
def f(n: int) -> Tuple[List[int], int]:
    r = list(range(n))
    return r, len(r)
""", "f", [(4,), (0,)])

program("builtin_any_all_divmod", """
def f(xs: List[bool], a: int, b: int) -> Tuple[bool, bool, Tuple[int, int]]:
    return any(xs), all(xs), divmod(a, b)
""", "f", [([True, False], 7, 2), ([], -7, 2), ([True], 7, -2)])

program("builtin_chr_ord_hex", """
def f(a: int) -> Tuple[str, str, str, str, int]:
    return hex(a), oct(a), bin(a), chr(65 + a), ord("a")
""", "f", [(10,), (-3,)])

# -------------------------------------------------------------------- math

program("math_functions", """
def f(x: float) -> List[float]:
    return [math.sqrt(x), math.log(x), math.exp(x), math.sin(x), math.cos(x), math.atan2(x, 2.0), math.log10(x),
            math.log1p(x), math.fabs(-x), math.pow(x, 3), math.copysign(x, -1.0), math.fmod(-x, 0.75),
            math.degrees(x), math.radians(x), math.tanh(x), math.erf(x)]
""", "f", [(0.5,), (2.0,)])

program("math_int_results", """
def f(x: float, n: int) -> Tuple[int, int, int, int, bool, bool, bool]:
    return math.floor(x), math.ceil(x), math.gcd(n, 12), math.factorial(n), math.isnan(x), math.isinf(x), \\
        math.isfinite(x)
""", "f", [(2.5, 4), (-2.5, 0), (float("inf"), 3)])

program("math_constants", """
def f() -> List[float]:
    return [math.pi, math.e, math.inf, -math.inf, math.tau]
""", "f", [()])

program("math_domain_errors", """
def f(x: float) -> float:
    return math.sqrt(x) + math.log(x)
""", "f", [(4.0,), (-1.0,), (0.0,)])

program("math_int_args", """
def f(a: int) -> Tuple[float, int, int, float, float]:
    return math.sqrt(a), math.floor(2.5), math.ceil(-2.5), math.pow(2, a), math.exp(a)
""", "f", [(3,)])

# -------------------------------------------------------------- torch calls

program("torch_creation", """
def f(n: int) -> List[Tensor]:
    return [torch.zeros(n), torch.ones(2, n, dtype=torch.int64), torch.arange(n), torch.arange(1, n, 2),
            torch.full([2], 3.5), torch.linspace(0.0, 1.0, 5), torch.tensor([n, 2]), torch.tensor(1.5),
            torch.eye(n), torch.empty(0)]
""", "f", [(3,)])

program("torch_like_and_dtypes", """
def f(x: Tensor) -> List[Tensor]:
    return [torch.zeros_like(x), torch.ones_like(x), torch.full_like(x, 2.0), x.to(torch.float64), x.long(),
            x.float(), x.int(), x.double(), x.to(torch.bool), x.to(dtype=torch.int32)]
""", "f", [(f32(3),)])

program("torch_shape_ops", """
def f(x: Tensor) -> List[Tensor]:
    return [x.view(-1), x.reshape(3, -1), x.permute(1, 0), x.t(), x.transpose(0, 1), x.unsqueeze(0), x.flatten(),
            x.squeeze(), x.contiguous(), x.expand(2, 2, 3), torch.cat([x, x], 1), torch.stack([x, x])]
""", "f", [(f32(2, 3),)])

program("torch_split_chunk_unbind", """
def f(x: Tensor) -> Tuple[List[Tensor], List[Tensor], List[Tensor], List[Tensor]]:
    return x.split(2), torch.split(x, [1, 3]), x.chunk(2, 1), x.unbind(1)
""", "f", [(f32(4, 2),)])

program("torch_reductions", """
def f(x: Tensor) -> List[Tensor]:
    return [x.sum(), x.sum(1), x.mean(), x.mean(0, True), x.max(), x.min(), x.argmax(), x.argmin(1), x.prod(1),
            torch.cumsum(x, 0), x.std(), x.var(1), x.norm(), x.amax(0), x.logsumexp(1)]
""", "f", [(f32(3, 4),)], rtol=1e-4)

program("torch_max_dim_tuples", """
def f(x: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    v, i = torch.max(x, 1)
    s, j = x.sort(0)
    t, k = x.topk(2)
    return v, i, s, j, t, k
""", "f", [(f32(3, 4),)])

program("torch_pointwise", """
def f(x: Tensor, y: Tensor) -> List[Tensor]:
    return [torch.tanh(x), torch.sigmoid(x), torch.relu(x), torch.exp(x), torch.abs(x), x.clamp(-0.5, 0.5),
            torch.where(x > 0, x, y), torch.pow(x, 2), x.pow(y.abs()), torch.softmax(x, 1), torch.log_softmax(x, -1),
            x.masked_fill(x < 0, 0.0), torch.maximum(x, y), x.sqrt(), x.floor(), x.round()]
""", "f", [(f32(3, 4), f32(3, 4))])

program("torch_linalg", """
def f(a: Tensor, b: Tensor) -> List[Tensor]:
    return [torch.mm(a, b), torch.matmul(a, b), a @ b, torch.addmm(a[:, :2], a, b), a.mv(b[:, 0])]
""", "f", [(f32(2, 3), f32(3, 2))], rtol=1e-4)

program("torch_shape_mismatch_raises", """
def f(a: Tensor, b: Tensor) -> Tensor:
    return torch.mm(a, b)
""", "f", [(f32(2, 3), f32(3, 2)), (f32(2, 3), f32(2, 3))])

program("torch_indexing_ops", """
def f(x: Tensor, idx: Tensor) -> List[Tensor]:
    return [x.index_select(0, idx), torch.gather(x, 1, idx.unsqueeze(1)), x.narrow(1, 1, 2), x.select(0, 1)]
""", "f", [(f32(3, 4), np.array([2, 0, 1], np.int64))])

program("tensor_inplace_methods", """
def f(x: Tensor, y: Tensor) -> Tensor:
    x.add_(y)
    x.mul_(2)
    x.clamp_(-1.0, 1.0)
    y.zero_()
    x[0].fill_(7.0)
    return x
""", "f", [(f32(3, 2), f32(3, 2))])

program("tensor_properties", """
def f(x: Tensor) -> Tuple[List[int], int, int, int, bool, bool, int]:
    return x.size(), x.size(0), x.dim(), x.numel(), x.is_floating_point(), x.dtype == torch.float32, x.shape[-1]
""", "f", [(f32(3, 4),), (i64(2),)])

program("tensor_item_and_tolist", """
def f(x: Tensor) -> Tuple[float, float]:
    return x.sum().item(), x[0].item()
""", "f", [(f32(3),)])

program("tensor_T_and_device", """
def f(x: Tensor) -> Tuple[Tensor, bool, Tensor]:
    return x.T, x.is_cuda, x.to("cpu")
""", "f", [(f32(2, 3),)])

program("tensor_clone_detach", """
def f(x: Tensor) -> Tuple[Tensor, Tensor]:
    y = x.clone()
    y.add_(1)
    z = x.detach()
    z.mul_(2)
    return x, y
""", "f", [(f32(3),)])

program("tensor_comparisons", """
def f(x: Tensor, y: Tensor) -> List[Tensor]:
    return [x < y, x <= 0, x == y, x != 1, x > y, x >= 0.5, torch.eq(x, y), x.ne(y)]
""", "f", [(f32(4), f32(4))])

program("tensor_numel_loop_sum", """
def f(x: Tensor) -> float:
    s = 0.0
    flat = x.flatten()
    for i in range(flat.numel()):
        s += float(flat[i])
    return s
""", "f", [(f32(2, 3),)], rtol=1e-4)

# ------------------------------------------------------------ type promotion

program("promotion_int_float_scalars", """
def f(a: int, b: float, c: bool) -> List[float]:
    return [a + b, a * b, b - a, a / 2, b / a, a * 1.0, float(c) + a]
""", "f", [(3, 0.5, True), (-2, 1.5, False)])

program("promotion_int_results", """
def f(a: int, b: int) -> Tuple[int, int, int, float]:
    return a + b, a * b, a - b, a / b
""", "f", [(7, 2), (-7, 2), (1, 0)])

program("promotion_tensor_scalar", """
def f(xi: Tensor, xf: Tensor, xb: Tensor) -> List[Tensor]:
    return [xi + 1, xi + 1.5, xi * 2.5, xi / 2, xf + 1, xb + 1, xb + 1.5, xi + xf, xi > 1.5, xb + xb]
""", "f", [(i64(3), f32(3), bools(3)), (i32(3), f64(3), bools(3))])

program("promotion_tensor_tensor_dims", """
def f(a: Tensor, b: Tensor) -> Tensor:
    return a + b
""", "f", [(f32(3), np.array(2.0, np.float64)), (i64(3), np.array(2.5, np.float32)), (i32(3), i64(3)),
          (bools(3), i32(3)), (np.array(1, np.int64), f32(3)), (f32(3), f64(3))])

program("promotion_scalar_first_operand", """
def f(x: Tensor, a: int, b: float) -> List[Tensor]:
    return [a + x, b * x, a - x, b / x, 2 ** x, a > x]
""", "f", [(f32(3) + 3, 2, 0.5), (i64(3, low=1, high=4), 2, 0.5)])

program("promotion_comparisons_mixed", """
def f(a: int, b: float) -> List[bool]:
    return [a < b, a == b, b >= a, 1 == 1.0, a != 2]
""", "f", [(1, 1.0), (2, 1.5)])

program("promotion_bool_int", """
def f(a: bool) -> Tuple[int, float, bool, bool]:
    return int(a) * 3, float(a) / 2, a == True, a != False
""", "f", [(True,), (False,)])

# ------------------------------------------------ integer division and modulo

program("int_floordiv_mod_negatives", """
def f(a: int, b: int) -> List[int]:
    return [a // b, a % b, -a // b, -a % b, a // -b, a % -b, -a // -b, -a % -b]
""", "f", [(7, 2), (7, 3), (6, 3), (0, 5), (1, 7)])

program("int_division_by_zero", """
def f(a: int, b: int) -> int:
    return a // b
""", "f", [(7, 0), (7, 1)])

program("int_modulo_by_zero", """
def f(a: int, b: int) -> int:
    return a % b
""", "f", [(-7, 3), (7, -3)])

program("float_floordiv_mod_negatives", """
def f(a: float, b: float) -> List[float]:
    return [a // b, a % b, -a // b, -a % b, a // -b, a % -b, math.fmod(a, b), math.fmod(-a, b)]
""", "f", [(7.5, 2.0), (7.0, 0.5), (0.3, 0.1), (5.0, 2.5)])

program("mixed_floordiv_mod", """
def f(a: int, b: float) -> Tuple[float, float, float, float]:
    return a // b, a % b, b // a, b % a
""", "f", [(7, 2.5), (-7, 2.5), (7, -2.5)])

program("tensor_floordiv_remainder_negatives", """
def f(x: Tensor, y: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    return x // y, x % y, torch.remainder(x, -3), torch.fmod(x, 3), torch.div(x, y, rounding_mode="floor")
""", "f", [(np.array([7, -7, 7, -7, 0], np.int64), np.array([2, 2, -2, -2, 3], np.int64)),
          (np.array([7.5, -7.5, 7.5, -7.5], np.float32), np.array([2.0, 2.0, -2.0, -2.0], np.float32))])

program("tensor_int_div_true_division", """
def f(x: Tensor, y: Tensor) -> Tuple[Tensor, Tensor]:
    return x / y, torch.div(x, y, rounding_mode="trunc")
""", "f", [(np.array([7, -7, 1], np.int64), np.array([2, 2, 3], np.int64))])

program("float_division_by_zero", """
def f(a: float, b: float) -> float:
    return a / b
""", "f", [(1.0, 0.0), (0.0, 0.0), (1.0, 4.0)])

# ---------------------------------------------------------- bigger programs

program("prog_bubble_sort", """
def f(xs: List[int]) -> List[int]:
    n = len(xs)
    for i in range(n):
        swapped = False
        for j in range(n - 1 - i):
            if xs[j] > xs[j + 1]:
                xs[j], xs[j + 1] = xs[j + 1], xs[j]
                swapped = True
        if not swapped:
            break
    return xs
""", "f", [([5, 2, 9, 1, 5, 6],), ([],), ([1],)])

program("prog_primes", """
def is_prime(n: int) -> bool:
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True

def f(n: int) -> List[int]:
    return [k * int(is_prime(k)) for k in range(n)]
""", "f", [(20,)])

program("prog_word_count", """
def f(text: str) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for w in text.split(" "):
        if w == "":
            continue
        if w in counts:
            counts[w] += 1
        else:
            counts[w] = 1
    return counts
""", "f", [("a b a  c b a",), ("",)])

program("prog_matrix_power", """
def f(m: Tensor, n: int) -> Tensor:
    result = torch.eye(m.size(0), dtype=m.dtype)
    base = m
    while n > 0:
        if n % 2 == 1:
            result = result @ base
        base = base @ base
        n = n // 2
    return result
""", "f", [(np.array([[1, 1], [1, 0]], np.int64), 10), (f32(3, 3) * 0.5, 3)], rtol=1e-4)

program("prog_rnn_loop", """
def step(x: Tensor, h: Tensor, w: Tensor, u: Tensor) -> Tensor:
    return torch.tanh(x @ w + h @ u)

def f(xs: Tensor, h0: Tensor, w: Tensor, u: Tensor) -> Tuple[Tensor, List[Tensor]]:
    h = h0
    outs: List[Tensor] = []
    for t in range(xs.size(0)):
        h = step(xs[t], h, w, u)
        outs.append(h)
    return h, outs
""", "f", [(f32(4, 2, 3), f32(2, 5), f32(3, 5), f32(5, 5))], rtol=1e-4)

program("prog_softmax_manual", """
def f(x: Tensor, dim: int = -1) -> Tensor:
    m, _ = x.max(dim, keepdim=True)
    e = (x - m).exp()
    return e / e.sum(dim, keepdim=True)
""", "f", [(f32(3, 4),), (f32(3, 4), 0)])

program("prog_binary_search", """
def f(xs: List[int], t: int) -> int:
    lo = 0
    hi = len(xs) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if xs[mid] == t:
            return mid
        elif xs[mid] < t:
            lo = mid + 1
        else:
            hi = mid - 1
    return -(lo + 1)
""", "f", [([1, 3, 5, 7, 9], 7), ([1, 3, 5, 7, 9], 4), ([], 1)])

program("prog_nms_like", """
def f(scores: Tensor, thresh: float) -> List[int]:
    order = scores.argsort(descending=True)
    keep: List[int] = []
    for i in range(order.size(0)):
        idx = int(order[i])
        if float(scores[idx]) < thresh:
            break
        keep.append(idx)
    return keep
""", "f", [(np.array([0.1, 0.9, 0.5, 0.7], np.float32), 0.4)])

program("prog_string_builder", """
def f(rows: List[List[int]]) -> str:
    lines: List[str] = []
    for r in rows:
        cells = [str(v) for v in r]
        lines.append("|".join(cells))
    return "\\n".join(lines)
""", "f", [([[1, 2], [30, -4]],)])

program("prog_dict_of_lists", """
def f(keys: List[str], vals: List[int]) -> Dict[str, List[int]]:
    d: Dict[str, List[int]] = {}
    for k, v in zip(keys, vals):
        if k not in d:
            d[k] = torch.jit.annotate(List[int], [])
        d[k].append(v)
    return d
""", "f", [(["a", "b", "a"], [1, 2, 3])])

program("prog_dict_methods", """
def f(d: Dict[str, int]) -> Tuple[Dict[str, int], int, int, List[str], List[int], int]:
    d["z"] = 1
    a = d.get("q", 7)
    b = d.pop("z")
    d.update({"w": 3})
    c = d.setdefault("k", 9)
    return d, a, b, list(d.keys()), list(d.values()), c
""", "f", [({"a": 1},)])

program("prog_clamp_loop_tensor_mutation", """
def f(x: Tensor, lo: float, hi: float) -> int:
    changed = 0
    for i in range(x.size(0)):
        if float(x[i]) < lo:
            x[i] = lo
            changed += 1
        elif float(x[i]) > hi:
            x[i] = hi
            changed += 1
    return changed
""", "f", [(f32(6), -0.5, 0.5)])


program("prog_is_scripting", """
def f(x: int) -> Tuple[int, bool]:
    if torch.jit.is_scripting():
        y = x + 1
    else:
        y = x - 1
    return y, torch.jit.is_scripting() and x > 0
""", "f", [(1,), (-2,)])

# ------------------------------------------------------------ the corpus

def _corpus_entries():
    entries = []
    for p in CORPUS:
        entries.append(dict(name="corpus_" + p["name"], src=p["src"], fn=p["fn"], args=[tuple(p["args"]())],
                            prints=False, rtol=1e-5, raises=p["raises"]))
    return entries


PROGRAMS = OWN + _corpus_entries()
assert len({p["name"] for p in PROGRAMS}) == len(PROGRAMS), "duplicate program names"


# ------------------------------------------------------ graph fidelity helpers

_KIND = re.compile(r"(?:^|\s)=\s+([A-Za-z_]\w*::[A-Za-z_][\w.]*)")


def node_kinds(graph_text):
    """The node kinds of a printed graph in order, recursively: each block
    opens with "{" and closes with "}" (its `-> (...)` line). Value names,
    types and attributes are left out."""
    kinds = []
    for line in graph_text.splitlines():
        s = line.strip()
        if re.match(r"block\d+\(", s):
            kinds.append("{")
        elif s.startswith("->"):
            kinds.append("}")
        else:
            m = _KIND.search(s)
            if m and not s.startswith("graph(") and not s.startswith("return"):
                kinds.append(m.group(1))
    return kinds


def kinds_diff(kiln_kinds, torch_kinds, context=2):
    """A short unified diff of two node-kind sequences."""
    import difflib
    return "\n".join(difflib.unified_diff(torch_kinds, kiln_kinds, "torch", "kiln", n=context, lineterm=""))
