"""Python values passed to script functions (issue 20), differential against
torch 1.13: what each parameter type takes and how it converts (a range or
a tuple for List[int], bytes for str, an int for bool, a torch.device for
Device, a list of pairs for a Dict, a plain Python object for a class
parameter), and the messages of what it refuses; `x.tolist()` with scalar
and complex type hints."""
import collections
import decimal
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same_values, convert


def _both(annotation, body="    return x\n", ret=None):
    src = f"def f(x: {annotation}) -> {ret or annotation}:\n{body}"
    return torch.jit.CompilationUnit(src).f, kiln.compile(src).f


def _outcome(fn, value):
    try:
        return "ok", fn(value)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return "error", str(e)


def _message_lines(message):
    """The mismatch line and the cast details line of a refusal."""
    lines = message.splitlines()
    return [lines[0]] + [line for line in lines if "error details" in line]


class _Sized:
    """Not a sequence, not iterable."""


def _gen(values):
    return (v for v in values)


# (annotation, value); values are made fresh per call (generators run once).
CASES = [
    ("List[int]", lambda: range(10)),
    ("List[int]", lambda: range(0)),
    ("List[int]", lambda: (1, 2, 3)),
    ("List[int]", lambda: [True, 2]),
    ("List[int]", lambda: np.array([1, 2])),
    ("List[int]", lambda: 3),
    ("List[int]", lambda: [1, 2.0]),
    ("List[int]", lambda: "12"),
    ("List[int]", lambda: {1: 2}),
    ("List[int]", lambda: {1, 2}),
    ("List[int]", lambda: iter([1, 2])),
    ("List[int]", lambda: _gen([1, 2])),
    ("List[float]", lambda: range(3)),
    ("List[float]", lambda: (1, 2.5)),
    ("List[float]", lambda: 2.5),
    ("List[bool]", lambda: [True, False]),
    ("List[bool]", lambda: [1, 0, None, 2.5]),
    ("List[bool]", lambda: range(2)),
    ("List[bool]", lambda: ["x"]),
    ("List[str]", lambda: "abc"),
    ("List[str]", lambda: ("a", "b")),
    ("List[str]", lambda: _gen("ab")),
    ("List[str]", lambda: {"k": 1}),
    ("List[str]", lambda: b"ab"),
    ("List[str]", lambda: 3),
    ("List[complex]", lambda: [1, 2.5, 1j]),
    ("List[List[int]]", lambda: [range(2), (1,)]),
    ("List[List[int]]", lambda: (range(2), [3])),
    ("List[List[int]]", lambda: 3),
    ("List[Tuple[int, int]]", lambda: [[1, 2]]),
    ("List[Tuple[int, int]]", lambda: _gen([(1, 2)])),
    ("List[Optional[int]]", lambda: (None, 1)),
    ("Tuple[int, int]", lambda: [1, 2]),
    ("Tuple[int, int]", lambda: range(2)),
    ("Tuple[int, int]", lambda: _gen([1, 2])),
    ("Tuple[int, int]", lambda: (1, 2, 3)),
    ("Tuple[int, int]", lambda: 3),
    ("Dict[str, int]", lambda: {"a": 1, "b": True}),
    ("Dict[str, int]", lambda: [("a", 1)]),
    ("Dict[str, int]", lambda: 3),
    ("Dict[str, int]", lambda: [1]),
    ("Dict[str, int]", lambda: {"a": 1.5}),
    ("Dict[str, List[int]]", lambda: {"a": range(2)}),
    ("Dict[int, int]", lambda: {True: 1}),
    ("int", lambda: True),
    ("int", lambda: 2.5),
    ("int", lambda: np.int64(3)),
    ("int", lambda: np.float64(2.0)),
    ("int", lambda: decimal.Decimal("1.5")),
    ("int", lambda: 2 ** 70),
    ("int", lambda: None),
    ("int", lambda: "3"),
    ("float", lambda: True),
    ("float", lambda: 2),
    ("float", lambda: np.float32(2.5)),
    ("float", lambda: decimal.Decimal("1.5")),
    ("float", lambda: 2 ** 2000),
    ("float", lambda: "x"),
    ("bool", lambda: 1),
    ("bool", lambda: 0),
    ("bool", lambda: 2.5),
    ("bool", lambda: None),
    ("bool", lambda: np.bool_(True)),
    ("bool", lambda: []),
    ("bool", lambda: "x"),
    ("complex", lambda: 1),
    ("complex", lambda: 2.5),
    ("complex", lambda: True),
    ("complex", lambda: 1j),
    ("complex", lambda: "x"),
    ("str", lambda: b"ab"),
    ("str", lambda: bytearray(b"ab")),
    ("str", lambda: 1),
    ("Optional[List[int]]", lambda: range(2)),
    ("Optional[List[int]]", lambda: None),
    ("Optional[int]", lambda: "x"),
    ("Any", lambda: [1, 2]),
    ("Union[float, int]", lambda: "s"),
    ("Union[float, int]", lambda: [1]),
    ("Union[float, int]", lambda: (1, "a")),
    ("Union[float, int]", lambda: True),
    ("Union[float, int]", lambda: 2),
]


@pytest.mark.parametrize("annotation,make", CASES, ids=[f"{a}-{i}" for i, (a, _) in enumerate(CASES)])
def test_argument_conversion_as_torch(annotation, make):
    torch_fn, kiln_fn = _both(annotation)
    t_status, t_value = _outcome(torch_fn, make())
    k_status, k_value = _outcome(kiln_fn, make())
    assert k_status == t_status, f"torch: {t_value!r}; kiln: {k_value!r}"
    if t_status == "ok":
        assert_same_values(k_value, t_value)
    else:
        assert _message_lines(k_value) == _message_lines(t_value)


def test_range_slices_like_torch():
    src = "def f(x: List[int]) -> List[int]:\n    return x[1:8:2] + x[:-7] + x[-2:]\n"
    assert kiln.compile(src).f(range(10)) == torch.jit.CompilationUnit(src).f(range(10))


def test_named_tuple_mismatch_names_its_fields():
    Point = collections.namedtuple("Point", ["x", "y"])
    torch_fn, kiln_fn = _both("int")
    _, t_message = _outcome(torch_fn, Point(1, 2))
    _, k_message = _outcome(kiln_fn, Point(1, 2))
    assert _message_lines(k_message) == _message_lines(t_message)
    assert "Point (aka NamedTuple(x, y))" in k_message


def test_bad_device_name_raises_like_torch():
    _, kiln_fn = _both("torch.device", ret="str", body="    return str(x)\n")
    with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
        kiln_fn("foo")


# --- devices ----------------------------------------------------------------------------------

DEVICES = ["cpu", "cuda", "cuda:1", b"cpu"]


@pytest.mark.parametrize("given", DEVICES + ["torch:" + d for d in ("cpu", "cuda:0", "cuda:1")])
def test_device_arguments(given):
    if isinstance(given, str) and given.startswith("torch:"):
        given = torch.device(given[len("torch:"):])
    src = "def f(d1: torch.device, d2: torch.device) -> Tuple[bool, str, bool]:\n" \
          "    return hash(d1) == hash(d2), str(d1), d1 == d2\n"
    torch_fn = torch.jit.CompilationUnit(src).f
    kiln_fn = kiln.compile(src).f
    for other in ("cpu", torch.device("cuda:0")):
        assert kiln_fn(given, other) == torch_fn(given, other)
    torch_id, kiln_id = _both("torch.device")
    assert kiln_id(given) == str(torch_id(given))  # a Device comes back as its name


# --- Python objects for class parameters ------------------------------------------------------

class Foo(object):  # noqa: B903
    def __init__(self, x: int, t: torch.Tensor):
        self.x = x
        self.t = t

    def __lt__(self, other: "Foo") -> bool:
        return self.x < other.x


class LooksLikeFoo:
    """Not Foo, but with Foo's attributes: 1.13 takes it for a Foo."""


class Context(object):
    def __init__(self, start: int):
        self.count = torch.tensor([start], dtype=torch.double)

    def __enter__(self):
        self.count.add_(0.3)
        return self.count

    def __exit__(self, type: Any, value: Any, tb: Any) -> bool:
        self.count.sub_(0.3)
        return True


def use_foo(foo: Foo, foo2: Foo, tup: Tuple[Foo, Foo]) -> torch.Tensor:
    a, b = tup
    return foo.t * foo.x + foo2.t + a.t * b.x


def sort_foos(li: List[Foo], reverse: bool = False) -> Tuple[List[int], List[int]]:
    li_sorted = sorted(li)
    li.sort(reverse=reverse)
    return [f.x for f in li_sorted], [f.x for f in li]


def foo_round_trip(foo: Foo) -> Foo:
    foo.x += 1
    return foo


def with_context(x: torch.Tensor, c: Context) -> torch.Tensor:
    with c as mult:
        for _ in range(3):
            x += mult
        if x.sum() > 100:
            return x
    return x * 2


def _foo(x, t, to):
    f = Foo.__new__(Foo)
    f.x = x
    f.t = convert(t, to)
    return f


def test_python_objects_for_class_parameters():
    t1, t2 = np.arange(3.0, dtype=np.float32), np.ones(3, np.float32)
    args = {to: (_foo(2, t1, to), _foo(3, t2, to), (_foo(4, t1, to), _foo(5, t2, to))) for to in ("torch", "kiln")}
    expected = torch.jit.script(use_foo)(*args["torch"])
    assert_same_values(kiln.script(use_foo)(*args["kiln"]), expected)


@pytest.mark.parametrize("reverse", [False, True])
def test_list_of_python_objects(reverse):
    def foos(to):
        return [_foo(x, np.zeros(1, np.float32), to) for x in (3, 1, 2)]

    expected = torch.jit.script(sort_foos)(foos("torch"), reverse)
    assert kiln.script(sort_foos)(foos("kiln"), reverse) == expected


def test_object_of_another_class_with_the_attributes():
    for to, script in (("torch", torch.jit.script), ("kiln", kiln.script)):
        other = LooksLikeFoo()
        other.x, other.t = 3, convert(np.ones(2, np.float32), to)
        assert script(foo_round_trip)(other).x == 4
        assert other.x == 3  # the script function changed a copy


def test_context_object_from_python():
    x = np.arange(3.0)

    def run(script, to):
        c = Context(1)
        c.count = convert(np.array([1.0]), to)
        return script(with_context)(convert(x, to), c)

    assert_same_values(run(kiln.script, "kiln"), run(torch.jit.script, "torch"))


@pytest.mark.parametrize("setup,detail", [
    (lambda o: setattr(o, "t", np.ones(1, np.float32)), "was missing attribute x"),
    (lambda o: (setattr(o, "x", "s"), setattr(o, "t", np.ones(1, np.float32))),
     "Could not cast attribute 'x' to type int"),
])
def test_python_object_refused(setup, detail):
    other = LooksLikeFoo()
    setup(other)
    for script in (torch.jit.script, kiln.script):
        with pytest.raises(RuntimeError, match=detail) as info:
            script(foo_round_trip)(other if script is kiln.script else _torch_copy(other))
        assert "Expected a value of type '__torch__." in str(info.value)
        assert "for argument 'foo' but instead found type 'LooksLikeFoo'" in str(info.value)


def _torch_copy(obj):
    copy = LooksLikeFoo()
    for k, v in vars(obj).items():
        setattr(copy, k, convert(v, "torch"))
    return copy


# --- tolist() ---------------------------------------------------------------------------------

TOLIST = [
    ("int", np.array(3)),
    ("int", np.array(3, dtype=np.int32)),
    ("int", np.array([3])),
    ("int", np.array(2.5)),
    ("float", np.array(2.5)),
    ("float", np.array(2.5, dtype=np.float32)),
    ("float", np.array(2)),
    ("bool", np.array(True)),
    ("bool", np.array(1)),
    ("complex", np.array(1 + 2j)),
    ("complex", np.array(1 + 2j, dtype=np.complex64)),
    ("complex", np.array(1.0)),
    ("List[int]", np.array([1, 2], dtype=np.int32)),
    ("List[int]", np.array([True])),
    ("List[int]", np.array(3)),
    ("List[complex]", np.array([1 + 2j, 3j])),
    ("List[complex]", np.array([1.0, 2.0])),
    ("List[List[complex]]", np.array([[1 + 2j], [3j]], dtype=np.complex64)),
    ("List[List[complex]]", np.array([1 + 2j])),
    ("List[List[List[complex]]]", np.ones((2, 1, 2), dtype=np.complex128)),
]


@pytest.mark.parametrize("hint,value", TOLIST, ids=[f"{h}-{i}" for i, (h, _) in enumerate(TOLIST)])
def test_tolist_hints(hint, value):
    src = f"def f(x: Tensor) -> {hint}:\n    r: {hint} = x.tolist()\n    return r\n"
    t_status, t_value = _outcome(torch.jit.CompilationUnit(src).f, convert(value, "torch"))
    k_status, k_value = _outcome(kiln.compile(src).f, convert(value, "kiln"))
    assert k_status == t_status, f"torch: {t_value!r}; kiln: {k_value!r}"
    if t_status == "ok":
        assert_same_values(k_value, t_value)
    else:
        t_reason = [line for line in t_value.splitlines() if line.startswith("RuntimeError: ")]
        assert t_reason and t_reason[-1][len("RuntimeError: "):] in k_value


@pytest.mark.parametrize("hint", ["str", "List[str]", "Optional[int]", "List[Optional[float]]"])
def test_tolist_unsupported_hint(hint):
    src = f"def f(x: Tensor):\n    r = torch.jit.annotate({hint}, x.tolist())\n    return r\n"
    with pytest.raises(RuntimeError) as t_info:
        torch.jit.CompilationUnit(src)
    with pytest.raises(RuntimeError) as k_info:
        kiln.compile(src)
    # kiln points at the call too (1.13 gives no location).
    assert str(k_info.value).startswith(str(t_info.value).splitlines()[0])


def test_tolist_scalar_hint_through_annotate():
    src = "def f(x: Tensor) -> List[float]:\n    li = torch.jit.annotate(float, x.tolist())\n    return li\n"
    with pytest.raises(RuntimeError, match=r"annotated as having type List\[float\] but is actually of type float"):
        torch.jit.CompilationUnit(src)
    with pytest.raises(RuntimeError, match=r"annotated as having type List\[float\] but is actually of type float"):
        kiln.compile(src)


# --- sorting objects --------------------------------------------------------------------------

class NoLessThan(object):  # noqa: B903
    def __init__(self, x: int):
        self.x = x


def sort_without_lt(n: int) -> int:
    li = [NoLessThan(2), NoLessThan(n)]
    li.sort()
    return li[0].x


def sort_tuples_of_objects(n: int) -> List[int]:
    li = [(Foo(n, torch.zeros(1)), 1), (Foo(1, torch.zeros(1)), 2), (Foo(2, torch.zeros(1)), 3)]
    li.sort()
    return [t[1] for t in li]


def sorted_reverse_objects(n: int) -> List[int]:
    li = [Foo(3, torch.zeros(1)), Foo(n, torch.zeros(1)), Foo(2, torch.zeros(1))]
    li.sort(reverse=True)
    return [f.x for f in sorted(li)] + [f.x for f in li]


@pytest.mark.parametrize("fn", [sort_tuples_of_objects, sorted_reverse_objects])
def test_sorting_objects_with_lt(fn):
    assert kiln.script(fn)(5) == torch.jit.script(fn)(5)


def test_sorting_objects_without_lt():
    with pytest.raises(RuntimeError, match="it must define a __lt__ method with two inputs of type __torch__"):
        torch.jit.script(sort_without_lt)(1)
    with pytest.raises(RuntimeError, match="To sort a list of __torch__.test_lang_arguments.NoLessThan it must define "
                                           "a __lt__ method with two inputs of type __torch__.test_lang_arguments"
                                           ".NoLessThan that returns a bool"):
        kiln.script(sort_without_lt)(1)


def test_bytes_for_str_keep_their_bytes():
    src = "def f(s: str) -> Tuple[int, int]:\n    return ord(s[0]), len(s)\n"
    for given in (b"\xc2", "\u00a3".encode("utf8"), b"h"):
        assert kiln.compile(src).f(given) == torch.jit.CompilationUnit(src).f(given)
