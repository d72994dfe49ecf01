"""Graphs printed by torch 1.13's TorchScript compiler, run by kiln's
interpreter and by torch (torch._C._create_function_from_graph) on the same
inputs. The programs come from the shared corpus (tests/python/corpus) and
from the lists below."""
import pytest

from conftest import check_script
from corpus.programs import PROGRAMS


@pytest.mark.parametrize("program", PROGRAMS, ids=[p["name"] for p in PROGRAMS])
def test_corpus(program):
    check_script(program["src"], program["fn"], *program["args"](), raises=program["raises"], rtol=1e-4, atol=1e-5)


# (name, source, function, argument lists): each argument list is one call.
SCALAR_PROGRAMS = [
    ("int_arith", """
def f(a: int, b: int):
    return a + b, a - b, a * b, a // b, a % b, a / b, -a, abs(a), a ** 2, a ** b
""", "f", [(7, 3), (-7, 3), (7, -3), (-7, -3), (0, 5), (5, 0), (2, -2), (0, 0)]),
    ("int_bits", """
def f(a: int, b: int):
    return a & b, a | b, a ^ b, a << 3, a >> 1
""", "f", [(12, 10), (-12, 10), (0, -1)]),
    ("float_arith", """
def f(a: float, b: float):
    return a + b, a - b, a * b, a / b, a // b, a % b, a ** b, -a, abs(a)
""", "f", [(7.5, 2.0), (-7.5, 2.0), (7.5, -2.0), (0.0, 3.0), (1.0, 0.0), (2.0, 0.5), (-8.0, 1.0 / 3.0),
            (float("inf"), 2.0), (float("nan"), 1.0)]),
    ("mixed_arith", """
def f(a: int, b: float):
    return a + b, b - a, a * b, a / b, b / a, a // b, a % b, a ** b, b ** a, a < b, a == b
""", "f", [(3, 2.5), (-3, 2.5), (4, 4.0), (0, 1.5)]),
    ("comparisons", """
def f(a: int, b: int, x: float):
    return a < b, a <= b, a > b, a >= b, a == b, a != b, a < x, x >= b, not (a < b)
""", "f", [(1, 2, 1.5), (2, 2, 2.0), (3, 2, -1.0)]),
    ("bool_logic", """
def f(a: bool, b: bool, n: int):
    c = a and b
    d = a or b
    e = not a
    g = (n > 0) and (n < 10) or b
    return c, d, e, g, a == b, a != b, int(a) + int(b), a & b, a | b, a ^ b
""", "f", [(True, False, 3), (False, False, -1), (True, True, 20)]),
    ("math_module", """
def f(x: float, n: int):
    return (math.floor(x), math.ceil(x), math.sqrt(abs(x)), math.exp(x), math.log(abs(x) + 1.0),
            math.sin(x), math.cos(x), math.tanh(x), math.fabs(x), math.pow(x, 2.0), math.log10(abs(x) + 1.0),
            math.isnan(x), math.isinf(x), math.fmod(x, 1.5), math.atan2(x, 2.0),
            math.factorial(n), math.gcd(n, 6), math.copysign(2.0, x), math.degrees(x), round(x))
""", "f", [(2.7, 5), (-2.5, 3), (0.5, 0), (-0.5, 1)]),
    ("conversions", """
def f(x: float, n: int, b: bool, s: str):
    return int(x), float(n), bool(n), int(b), float(b), bool(x), str(n), str(x), str(b), int(s), float(s)
""", "f", [(3.9, 0, True, "12"), (-3.9, 7, False, "-5")]),
    ("conversion_errors", """
def f(s: str) -> int:
    return int(s)
""", "f", [("abc",)]),
    ("scalar_loop", """
def f(n: int) -> int:
    s = 0
    for i in range(n):
        s += (i * i) % 7
    return s
""", "f", [(100,), (0,), (-3,)]),
    ("range_steps", """
def f(a: int, b: int, c: int) -> List[int]:
    out: List[int] = []
    for i in range(a, b, c):
        out.append(i)
    return out
""", "f", [(0, 10, 3), (10, 0, -3), (5, 5, 1), (0, 10, 0)]),
    ("while_break_continue", """
def f(n: int):
    i = 0
    total = 0
    while True:
        i += 1
        if i > n:
            break
        if i % 3 == 0:
            continue
        total += i
    return total, i
""", "f", [(10,), (0,), (1,)]),
    ("nested_loops", """
def f(n: int) -> int:
    t = 0
    for i in range(n):
        for j in range(i):
            if (i + j) % 2 == 0:
                t += i * j
            else:
                t -= 1
    return t
""", "f", [(6,), (1,)]),
    ("fib_while", """
def f(n: int) -> int:
    a, b = 0, 1
    while n > 0:
        a, b = b, a + b
        n -= 1
    return a
""", "f", [(30,), (0,), (1,)]),
]

CONTAINER_PROGRAMS = [
    ("list_methods", """
def f(n: int):
    l = [3, 1, 2]
    l.append(n)
    l.insert(1, 10)
    l.extend([7, 7])
    x = l.pop()
    y = l.pop(0)
    l.reverse()
    c = l.count(7)
    i = l.index(10)
    s = sorted(l)
    l.sort(reverse=True)
    l.remove(10)
    return l, x, y, c, i, s, len(l), 7 in l, 99 in l, l[-1], l[1:3], l[::2], sum(l), min(l), max(l)
""", "f", [(5,), (-1,)]),
    ("list_errors", """
def f(i: int) -> int:
    l = [1, 2, 3]
    return l[i]
""", "f", [(2,), (-3,), (3,), (-4,)]),
    ("list_of_tensors", """
def f(x: Tensor, n: int) -> Tensor:
    parts: List[Tensor] = []
    for i in range(n):
        parts.append(x * float(i))
    return torch.stack(parts).sum(0) + torch.cat(parts).mean()
""", "f", [("x", 3)]),
    ("list_comprehension", """
def f(n: int):
    sq = [i * i for i in range(n)]
    ev = [v + 1 for v in sq]
    return sq, ev, [str(v) for v in ev]
""", "f", [(6,)]),
    ("list_ops", """
def f(a: List[int], b: List[int]):
    c = a + b
    d = a * 2
    a[0] = 100
    return c, d, a, a == b, a != b, list(b), c[1:], len(d)
""", "f", [([1, 2, 3], [4, 5]), ([9], [9])]),
    ("dict_methods", """
def f(k: str, v: int):
    d = {"a": 1, "b": 2}
    d[k] = v
    g = d.get("zz", -1)
    h = d.get("a")
    s = d.setdefault("c", 5)
    p = d.pop("b")
    keys = list(d.keys())
    vals = list(d.values())
    total = 0
    for key, val in d.items():
        total += val + len(key)
    return d, g, h, s, p, keys, vals, total, "a" in d, len(d)
""", "f", [("q", 3), ("a", 9)]),
    ("dict_errors", """
def f(k: str) -> int:
    d = {"a": 1}
    return d[k]
""", "f", [("a",), ("b",)]),
    ("dict_int_keys", """
def f(n: int) -> Dict[int, List[int]]:
    d: Dict[int, List[int]] = {}
    for i in range(n):
        key = i % 3
        if key not in d:
            d[key] = torch.jit.annotate(List[int], [])
        d[key].append(i)
    return d
""", "f", [(7,)]),
    ("strings", """
def f(s: str, n: int):
    t = s.strip()
    parts = t.split(",")
    joined = "-".join(parts)
    u = t.upper() + t.lower()
    r = t.replace("a", "XY")
    return (t, parts, joined, u, r, t.startswith("a"), t.endswith("c"), len(t), t[1:3], t[0],
            "{} and {}".format(n, t), str(n) + s, t.find("b"), "b" in t)
""", "f", [("  a,b,c  ", 2), ("abc", 0)]),
    ("tuples", """
def f(t: Tuple[int, float, str]):
    a, b, c = t
    u = (c, a)
    return t[0], t[-1], u, t[0:2], (a, (b, c)), len(c)
""", "f", [((1, 2.5, "x"),)]),
    ("optional", """
def f(x: Optional[int], y: Optional[Tensor]) -> int:
    r = 0
    if x is not None:
        r += x
    if y is None:
        r += 100
    else:
        r += int(y.sum())
    return r
""", "f", [(3, None), (None, "x"), (None, None)]),
    ("raise_in_branch", """
def f(x: int) -> int:
    if x < 0:
        raise ValueError("negative: " + str(x))
    return x * 2
""", "f", [(3,), (-1,)]),
    ("assert_stmt", """
def f(x: int) -> int:
    assert x != 0, "x must not be zero"
    return 10 // x
""", "f", [(3,), (0,)]),
    ("zero_division", """
def f(a: int, b: float):
    return float(a // 0) if b > 0 else a / b
""", "f", [(1, 1.0), (1, 0.0)]),
]

CALL_PROGRAMS = [
    ("function_calls", """
def square(x: int) -> int:
    return x * x

def add_squares(a: int, b: int) -> int:
    return square(a) + square(b)

def f(n: int) -> int:
    t = 0
    for i in range(n):
        t += add_squares(i, n - i)
    return t
""", "f", [(5,), (0,)]),
    ("fork_wait", """
def work(x: Tensor, k: int) -> Tensor:
    y = x
    for i in range(k):
        y = torch.tanh(y) + 0.5
    return y

def f(x: Tensor) -> Tensor:
    futures = [torch.jit.fork(work, x, k) for k in range(3)]
    r = torch.zeros_like(x)
    for fut in futures:
        r = r + torch.jit.wait(fut)
    return r
""", "f", [("x",)]),
    ("fork_error", """
def bad(x: int) -> int:
    if x > 2:
        raise ValueError("too big")
    return x

def f(x: int) -> int:
    fut = torch.jit.fork(bad, x)
    return torch.jit.wait(fut) + 1
""", "f", [(1,), (5,)]),
]

TENSOR_PROGRAMS = [
    ("tensor_properties", """
def f(x: Tensor):
    return x.size(), x.size(0), x.dim(), x.numel(), x.shape[-1], len(x), x.dtype == torch.float32, x.is_floating_point()
""", "f", [("x",)]),
    ("tensor_item", """
def f(x: Tensor):
    s = x.sum()
    return float(s), int(s), bool(s > 0), s.item()
""", "f", [("x",)]),
    ("tensor_inplace_on_input", """
def f(x: Tensor, y: Tensor) -> Tensor:
    x.add_(y)
    z = x[0]
    z.mul_(2.0)
    return x.clone()
""", "f", [("x", "y")]),
    ("tensor_indexing", """
def f(x: Tensor, i: int) -> Tensor:
    a = x[i]
    b = x[:, 1:3]
    x[0, 0] = 5.0
    c = x[-1, ::2]
    return a + b.sum() + c.mean()
""", "f", [("x", 1), ("x", -2)]),
    ("tensor_loop_accumulate", """
def f(x: Tensor, n: int) -> Tensor:
    acc = torch.zeros_like(x)
    for i in range(n):
        if i % 2 == 0:
            acc = acc + x * i
        else:
            acc -= torch.relu(x)
    return acc
""", "f", [("x", 5), ("x", 0)]),
    ("tensor_shapes", """
def f(x: Tensor) -> Tensor:
    n = x.size(0)
    y = x.view(-1).reshape(n, -1).transpose(0, 1).contiguous()
    return y.unsqueeze(0).expand(2, -1, -1).flatten(1)
""", "f", [("x",)]),
    ("tensor_shape_error", """
def f(x: Tensor, y: Tensor) -> Tensor:
    return torch.mm(x, y)
""", "f", [("x", "x")]),
    ("tensor_factories", """
def f(n: int) -> Tensor:
    a = torch.zeros(n, 2)
    b = torch.ones([n, 2], dtype=torch.float64)
    c = torch.arange(n)
    d = torch.full([2], 3.5)
    return a + b + c.unsqueeze(1) + d
""", "f", [(3,)]),
    ("scalar_tensor_mix", """
def f(x: Tensor, a: int, b: float) -> Tensor:
    return x * a + b - (x > b).float() * 2 + a / x.abs().add(1.0)
""", "f", [("x", 2, 0.5)]),
]


def _materialize(args, rng):
    """'x' and 'y' stand for fresh float32 3x4 arrays."""
    import numpy as np

    return [rng.standard_normal((3, 4)).astype(np.float32) if a in ("x", "y") else a for a in args]


@pytest.mark.parametrize("name,src,fn,calls", SCALAR_PROGRAMS + CONTAINER_PROGRAMS + CALL_PROGRAMS + TENSOR_PROGRAMS,
                         ids=[p[0] for p in SCALAR_PROGRAMS + CONTAINER_PROGRAMS + CALL_PROGRAMS + TENSOR_PROGRAMS])
def test_program(name, src, fn, calls):
    import numpy as np

    rng = np.random.default_rng(7)
    for args in calls:
        check_script(src, fn, *_materialize(args, rng))
