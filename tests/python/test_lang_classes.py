"""Classes in the TorchScript language (issue 20, item 3), differential
against torch 1.13: classes inheriting from `object`, NamedTuple classes
(fields, defaults, indexing, returned to Python as namedtuples), static
methods, class-body attribute annotations, and the errors 1.13 raises for
class inheritance. The same Python classes and functions are scripted by
torch.jit.script and by kiln.script and must agree (results and their
types); sources given to kiln.compile must agree with torch.jit.CompilationUnit."""
from enum import Enum
from typing import Dict, List, NamedTuple, Optional, Tuple

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same, assert_same_types, convert


# --- classes and functions both compilers script --------------------------------------------

class Point(object):
    def __init__(self, x: int, y: int):
        self.x = x
        self.y = y

    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)


class Annotated:
    total: int
    names: List[str]

    def __init__(self, start: int):
        self.total = start
        self.names: List[str] = []

    def add(self, name: str, k: int) -> int:
        self.names.append(name)
        self.total += k
        return self.total


class WithStatic(object):
    def __init__(self, x: int):
        self.x = x

    @staticmethod
    def identity(x: torch.Tensor) -> torch.Tensor:
        return x

    @staticmethod
    def twice(n: int) -> int:
        return n * 2

    def scaled(self) -> int:
        return WithStatic.twice(self.x) + 1


class Pair(NamedTuple):
    first: int
    second: float


class WithDefaults(NamedTuple):
    a: torch.Tensor
    n: int = 3
    scale: float = 2.0
    tag: str = "t"


class Nested(NamedTuple):
    pair: Pair
    values: List[int]


def object_base(a: int, b: int) -> int:
    return Point(a, b).norm1() + Point(b, a).x


def body_annotations(n: int) -> Tuple[int, List[str]]:
    c = Annotated(n)
    c.add("a", 1)
    return c.add("b", 2), c.names


def static_method(x: torch.Tensor, n: int) -> Tuple[torch.Tensor, int, int]:
    return WithStatic.identity(x) + 1, WithStatic.twice(n), WithStatic(n).scaled()


def named_tuple_fields(i: int, f: float) -> Tuple[int, float, int, float]:
    p = Pair(i, f)
    q = Pair(second=f * 2, first=i + 1)
    return p.first, p[1], q[0], q.second


def named_tuple_returned(i: int, f: float) -> Pair:
    return Pair(i * 2, f)


def named_tuple_param(p: Pair) -> float:
    return p.first + p.second


def named_tuple_defaults(x: torch.Tensor) -> Tuple[torch.Tensor, int, float, str]:
    w = WithDefaults(x)
    v = WithDefaults(x, 5, tag="u")
    return w.a * w.scale, w.n + v.n, v.scale, w.tag + v.tag


def named_tuple_unpack(i: int) -> int:
    a, b = Pair(i, 1.5)
    return a + int(b)


def named_tuple_nested(i: int) -> Nested:
    n = Nested(Pair(i, 0.5), [i, i + 1])
    return n


def named_tuple_list(n: int) -> List[Pair]:
    out: List[Pair] = []
    for i in range(n):
        out.append(Pair(i, float(i) / 2))
    return out


def named_tuple_optional(flag: bool) -> Optional[Pair]:
    if flag:
        return Pair(1, 2.0)
    return None


class Number(object):
    def __init__(self, x: int):
        self.x = x

    def __add__(self, other: int) -> int:
        return self.x + other

    def __sub__(self, other: int) -> int:
        return self.x - other

    def __mul__(self, other: int) -> int:
        return self.x * other

    def __truediv__(self, other: int) -> float:
        return self.x / other

    def __floordiv__(self, other: int) -> int:
        return self.x // other

    def __mod__(self, other: int) -> int:
        return self.x % other

    def __pow__(self, other: int) -> int:
        return int(self.x ** other)

    def __and__(self, other: int) -> int:
        return self.x & other

    def __or__(self, other: int) -> int:
        return self.x | other

    def __xor__(self, other: int) -> int:
        return self.x ^ other

    def __eq__(self, other: int) -> bool:  # noqa: PLE0302
        return self.x == other

    def __ne__(self, other: int) -> bool:
        return self.x != other

    def __lt__(self, other: int) -> bool:
        return self.x < other

    def __le__(self, other: int) -> bool:
        return self.x <= other

    def __gt__(self, other: int) -> bool:
        return self.x > other

    def __ge__(self, other: int) -> bool:
        return self.x >= other

    def __neg__(self) -> "Number":
        return Number(-self.x)

    def __len__(self) -> int:
        return abs(self.x)

    def __getitem__(self, i: int) -> int:
        return self.x * 10 + i

    def __setitem__(self, i: int, v: int):
        self.x = i * v

    def __contains__(self, v: int) -> bool:
        return v <= self.x

    def __call__(self, v: int) -> int:
        return self.x * v * 3

    def __int__(self) -> int:
        return self.x * 100

    def __float__(self) -> float:
        return self.x / 4

    def __bool__(self) -> bool:
        return self.x > 2

    def __str__(self) -> str:
        return "Number(" + str(self.x) + ")"


def magic_arithmetic(x: int, y: int) -> List[int]:
    n = Number(x)
    return [n + y, n - y, n * y, n % y, n ** y, n & y, n | y, n ^ y, (-n).x]


def magic_compare(x: int, y: int) -> List[bool]:
    n = Number(x)
    return [n == y, n != y, n < y, n <= y, n > y, n >= y, y in n, y not in n]


def magic_protocols(x: int) -> Tuple[float, int, int, int, int, float, bool, str, int]:
    n = Number(x)
    a = n[2]
    n[3] = 4
    flag = 0
    if n:
        flag = 1
    return n / 3, len(n), a, n(2), int(n), float(n), bool(n), str(n), flag


FUNCTIONS = {
    "magic_arithmetic": (magic_arithmetic, [7, 3]),
    "magic_compare_lt": (magic_compare, [2, 5]),
    "magic_compare_eq": (magic_compare, [5, 5]),
    "magic_protocols": (magic_protocols, [3]),
    "magic_protocols_small": (magic_protocols, [-1]),
    "object_base": (object_base, [3, -4]),
    "body_annotations": (body_annotations, [2]),
    "static_method": (static_method, [np.arange(3.0, dtype=np.float32), 4]),
    "named_tuple_fields": (named_tuple_fields, [2, 1.25]),
    "named_tuple_returned": (named_tuple_returned, [2, 1.25]),
    "named_tuple_defaults": (named_tuple_defaults, [np.arange(3.0, dtype=np.float32)]),
    "named_tuple_unpack": (named_tuple_unpack, [4]),
    "named_tuple_nested": (named_tuple_nested, [4]),
    "named_tuple_list": (named_tuple_list, [3]),
    "named_tuple_optional_true": (named_tuple_optional, [True]),
    "named_tuple_optional_false": (named_tuple_optional, [False]),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_same_results_as_torch(name):
    fn, args = FUNCTIONS[name]
    expected = torch.jit.script(fn)(*convert(args, "torch"))
    got = kiln.script(fn)(*convert(args, "kiln"))
    assert_same(got, expected)
    assert_same_types(_plain(got), _plain(expected))


def _plain(value):
    """A namedtuple as (its class name, its fields, its values as plain data):
    torch returns namedtuples of a class it makes, kiln of the user's class."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, value._fields, tuple(_plain(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def test_floordiv_is_no_magic_method():
    def use(x: int) -> int:
        return Number(x) // 2

    with pytest.raises(RuntimeError, match="floordiv"):
        torch.jit.script(use)
    with pytest.raises(RuntimeError, match="floordiv"):
        kiln.script(use)


def test_named_tuple_comes_back_as_a_namedtuple():
    expected = torch.jit.script(named_tuple_returned)(3, 0.5)
    got = kiln.script(named_tuple_returned)(3, 0.5)
    assert type(got).__name__ == type(expected).__name__ == "Pair"
    assert got._fields == expected._fields == ("first", "second")
    assert got.first == expected.first and got.second == expected.second
    nested = kiln.script(named_tuple_nested)(2)
    assert nested.pair.second == 0.5 and nested.values == [2, 3]


def test_named_tuple_from_python():
    p = Pair(3, 0.25)
    assert kiln.script(named_tuple_param)(p) == torch.jit.script(named_tuple_param)(p)
    assert kiln.script(named_tuple_param)((1, 2.0)) == 3.0


def test_named_tuple_schema_and_graph():
    fn = kiln.script(named_tuple_returned)
    assert "NamedTuple" in str(fn.graph) or "Pair" in str(fn.graph)
    torch_fn = torch.jit.script(named_tuple_returned)
    assert str(fn.schema).split("->")[0] == str(torch_fn.schema).split("->")[0]


def test_static_method_is_call_function_as_in_torch():
    def call_static(x: int) -> int:
        return WithStatic.twice(x)

    kinds = [line.split("=")[1].split("(")[0].strip() for line in str(kiln.script(call_static).graph).splitlines()
             if "=" in line and "prim::" in line]
    assert "prim::CallFunction" in kinds
    assert "prim::CallFunction" in str(torch.jit.script(call_static).graph)


def test_scripting_a_class_with_object_base_and_static_method():
    K = kiln.script(WithStatic)
    assert K(5).scaled() == torch.jit.script(WithStatic)(5).scaled() == 11


def test_named_tuple_and_enum_classes_script_to_themselves():
    import enum

    class Color(enum.Enum):
        RED = 1

    assert kiln.script(Color) is Color is torch.jit.script(Color)
    assert kiln.script(Pair) is Pair


# --- errors, as 1.13 words them -------------------------------------------------------------

class Base(object):
    def __init__(self):
        self.b = 2


class Derived(Base):
    def two(self, x: int) -> int:
        return x + self.b


def test_inheritance_is_refused_as_in_torch():
    with pytest.raises(RuntimeError, match="does not support inheritance") as torch_error:
        torch.jit.script(Derived)
    with pytest.raises(RuntimeError, match="does not support inheritance") as kiln_error:
        kiln.script(Derived)
    assert str(kiln_error.value) == str(torch_error.value)


def test_function_using_a_derived_class_is_refused():
    def use(x: int) -> int:
        return Derived().two(x)

    # torch compiles Derived's own methods and fails on `self.b`; kiln refuses the base.
    with pytest.raises(RuntimeError, match="has no attribute or method 'b'"):
        torch.jit.script(use)
    with pytest.raises(RuntimeError, match="does not support inheritance"):
        kiln.script(use)


# --- the same in TorchScript source (kiln.compile vs torch.jit.CompilationUnit) ------------

SOURCE = '''
class Acc(object):
    count: int

    def __init__(self, start: int):
        self.count = start

    @staticmethod
    def clamp(n: int) -> int:
        return min(n, 10)

    def bump(self, k: int) -> int:
        self.count = Acc.clamp(self.count + k)
        return self.count

class Span(NamedTuple):
    lo: int
    hi: int = 7

def run(n: int) -> Tuple[int, int, int]:
    a = Acc(n)
    a.bump(3)
    s = Span(n)
    return a.bump(4), s.hi - s.lo, Span(1, 2)[1]

def make(n: int) -> Span:
    return Span(n, n + 1)
'''


def test_source_classes_same_as_python():
    # torch.jit.CompilationUnit takes no classes; plain Python is the oracle here.
    python = {}
    exec("from typing import NamedTuple, Tuple\n" + SOURCE, python)
    kiln_cu = kiln.compile(SOURCE)
    for n in (0, 5):
        assert kiln_cu.run(n) == python["run"](n)
    got, expected = kiln_cu.make(2), python["make"](2)
    assert tuple(got) == tuple(expected) and got._fields == expected._fields


class IgnoredAnnotation:
    names: List[str]  # 1.13 ignores class-body annotations: `[]` below is a List[Tensor]

    def __init__(self):
        self.names = []

    def add(self, name: str):
        self.names.append(name)


class IntDefault(NamedTuple):
    a: int
    scale: float = 2


def test_class_body_annotations_do_not_type_attributes():
    def use() -> int:
        c = IgnoredAnnotation()
        c.add("x")
        return len(c.names)

    with pytest.raises(RuntimeError, match="append"):
        torch.jit.script(use)
    with pytest.raises(RuntimeError, match="append"):
        kiln.script(use)


def test_named_tuple_default_of_the_wrong_type():
    def use() -> float:
        return IntDefault(1).scale

    message = "Expected a value of type 'float' for argument 'scale' but instead found type 'int'"
    with pytest.raises(RuntimeError, match=message):
        torch.jit.script(use)
    with pytest.raises(RuntimeError, match=message):
        kiln.script(use)


@pytest.mark.parametrize("source,message", [
    ("class B(A):\n    def __init__(self):\n        pass\n", "does not support inheritance"),
    ("class P(NamedTuple):\n    x: int\n    def f(self) -> int:\n        return 1\ndef g() -> P:\n    return P(1)\n",
     "cannot have methods"),
    ("class C(object):\n    def __init__(self, x: int):\n        self.x = x\n    @classmethod\n"
     "    def make(cls, x: int) -> int:\n        return x\ndef f(x: int) -> int:\n    return C.make(x)\n",
     "'C.make' is a @classmethod: TorchScript cannot call class methods"),
    ("class C(object):\n    x = 3\n    def __init__(self):\n        pass\n", "expected def in the body of class 'C'"),
])
def test_source_class_errors(source, message):
    with pytest.raises(RuntimeError, match=message):
        kiln.compile(source)


# --- Enum classes (used by script code without scripting, as in 1.13) ---------------------

class Color(Enum):
    RED = 1
    GREEN = 2
    BLUE = 4


class Unit(Enum):
    METER = "m"
    INCH = "in"


class Scale(Enum):
    SMALL = 0.5
    LARGE = 2.0


def enum_value(c: Color) -> int:
    if c == Color.RED:
        return c.value * 10
    return c.value


def enum_name(c: Color) -> str:
    return c.name + "!"


def enum_compare(a: Color, b: Color) -> Tuple[bool, bool]:
    return a == b, a != b


def enum_iterate() -> Tuple[List[str], int]:
    names: List[str] = []
    total = 0
    for c in Color:
        names.append(c.name)
        total += c.value
    return names, total


def enum_returned(i: int) -> Color:
    if i == 0:
        return Color.RED
    if i == 1:
        return Color.GREEN
    return Color.BLUE


def enum_str_and_float(u: Unit, s: Scale) -> Tuple[str, float, bool]:
    return u.value, s.value * 2.0, u == Unit.INCH


def enum_in_containers(cs: List[Color]) -> List[int]:
    return [c.value for c in cs]


@pytest.mark.parametrize("fn,args", [
    (enum_value, (Color.RED,)), (enum_value, (Color.BLUE,)), (enum_name, (Color.GREEN,)),
    (enum_compare, (Color.RED, Color.RED)), (enum_compare, (Color.RED, Color.BLUE)), (enum_iterate, ()),
    (enum_returned, (0,)), (enum_returned, (2,)), (enum_str_and_float, (Unit.INCH, Scale.SMALL)),
    (enum_str_and_float, (Unit.METER, Scale.LARGE)), (enum_in_containers, ([Color.BLUE, Color.RED],)),
], ids=lambda v: getattr(v, "__name__", None))
def test_enum_same_as_torch(fn, args):
    expected = torch.jit.script(fn)(*args)
    got = kiln.script(fn)(*args)
    assert got == expected
    assert_same_types(got, expected)


def test_enum_members_come_back_as_members():
    assert kiln.script(enum_returned)(1) is Color.GREEN


def test_enum_unknown_member():
    def use() -> int:
        return Color.PURPLE.value

    with pytest.raises(RuntimeError):
        torch.jit.script(use)
    with pytest.raises(RuntimeError, match="PURPLE"):
        kiln.script(use)


# --- @unused, @ignore and @classmethod (1.13's torch.jit markers, and kiln.jit's) ------------

@torch.jit.unused
def unused_fn(x: int) -> int:
    return undefined_helper(x)  # noqa: F821  (never compiled: the body is replaced by a raise)


@kiln.jit.unused
def kiln_unused_fn(x: int) -> int:
    return undefined_helper(x)  # noqa: F821


@torch.jit.ignore
def ignored_fn(x: int) -> int:
    return x + 2


def calls_unused(x: int, flag: bool) -> int:
    if flag:
        return unused_fn(x)
    return x * 3


def calls_kiln_unused(x: int, flag: bool) -> int:
    if flag:
        return kiln_unused_fn(x)
    return x * 3


def calls_ignored(x: int, flag: bool) -> int:
    if flag:
        return ignored_fn(x)
    return x - 1


class WithMarkedMethods(object):
    def __init__(self, x: int):
        self.x = x

    @torch.jit.unused
    def unusable(self, y: int) -> int:
        return undefined_helper(y)  # noqa: F821

    @torch.jit.ignore
    def python_only(self, y: int) -> int:
        return y * 10

    @classmethod
    def make(cls, x: int):
        return cls(x * 2)

    def get(self) -> int:
        return self.x + 1


def uses_marked_class(x: int) -> int:
    return WithMarkedMethods(x).get()


def calls_unused_method(x: int) -> int:
    return WithMarkedMethods(x).unusable(x)


def calls_class_method(x: int) -> int:
    return WithMarkedMethods.make(x).get()


@pytest.mark.parametrize("fn", [calls_unused, calls_kiln_unused, calls_ignored])
def test_marked_functions_compile_and_untaken_calls_agree(fn):
    torch_fn = calls_unused if fn is calls_kiln_unused else fn
    assert kiln.script(fn)(4, False) == torch.jit.script(torch_fn)(4, False)


@pytest.mark.parametrize("fn", [calls_unused, calls_kiln_unused])
def test_calling_an_unused_function_raises_as_in_torch(fn):
    message = "This Python function is annotated to be ignored and cannot be run"
    with pytest.raises(Exception, match=message):
        torch.jit.script(calls_unused)(4, True)
    with pytest.raises(RuntimeError, match=message):
        kiln.script(fn)(4, True)


def test_calling_an_ignored_function_raises_in_kiln():
    # 1.13 calls back into Python (6); kiln runs no Python from TorchScript.
    assert torch.jit.script(calls_ignored)(4, True) == 6
    with pytest.raises(RuntimeError, match="'ignored_fn' is @ignore'd: kiln cannot call back into Python"):
        kiln.script(calls_ignored)(4, True)


def test_class_with_unused_ignored_and_class_methods_compiles_as_in_torch():
    assert kiln.script(uses_marked_class)(3) == torch.jit.script(uses_marked_class)(3) == 4


def test_calling_an_unused_method_raises_as_in_torch():
    with pytest.raises(Exception, match="Cannot call @unused methods"):
        torch.jit.script(calls_unused_method)(3)
    with pytest.raises(RuntimeError, match="Cannot call @unused methods"):
        kiln.script(calls_unused_method)(3)


def test_calling_a_class_method_is_refused_as_in_torch():
    # 1.13 fails with an internal assert; kiln points at the call.
    with pytest.raises(RuntimeError):
        torch.jit.script(calls_class_method)
    with pytest.raises(RuntimeError, match=r"WithMarkedMethods.make\(x\)"):
        kiln.script(calls_class_method)


# --- torch.jit._overload (kiln.jit._overload): declarations, then one implementation ---------

def _overload(fn):
    """Declares `fn` for both compilers (1.13 mislocates a def under two decorators)."""
    return kiln.jit._overload(torch.jit._overload(fn))


@_overload
def add_one(x: int) -> int: ...


@_overload
def add_one(x: float) -> float: ...


@_overload
def add_one(x: torch.Tensor) -> torch.Tensor: ...


def add_one(x):  # noqa: F811  (the implementation of the declarations above)
    return x + 1


@_overload
def first_or_text(x: int, y: Optional[int] = None) -> int: ...


@_overload
def first_or_text(x: str, y: Optional[int] = None) -> str: ...


def first_or_text(x, y: Optional[int] = None):  # noqa: F811
    return x


def uses_overloads(a: int, b: float, t: torch.Tensor):
    return add_one(a), add_one(b), add_one(t)


def uses_overloads_with_defaults(a: int) -> str:
    return str(first_or_text(a, 2)) + first_or_text("s")


def calls_overload_with_no_match(s: str) -> str:
    return add_one(s)


def test_overloads_pick_by_types_as_in_torch():
    args = (1, 2.5, np.ones(2, dtype=np.float32))
    expected = torch.jit.script(uses_overloads)(*convert(args, "torch"))
    got = kiln.script(uses_overloads)(*convert(args, "kiln"))
    assert_same(got, expected)
    assert_same_types(got, expected)
    assert kiln.script(uses_overloads_with_defaults)(3) == torch.jit.script(uses_overloads_with_defaults)(3) == "3s"


def test_overload_calls_are_call_function_as_in_torch():
    graph = str(kiln.script(uses_overloads).graph)
    assert graph.count("prim::CallFunction") == str(torch.jit.script(uses_overloads).graph).count(
        "prim::CallFunction") == 3


def test_overload_with_no_matching_declaration():
    with pytest.raises(RuntimeError, match="Arguments for call are not valid"):
        torch.jit.script(calls_overload_with_no_match)
    with pytest.raises(RuntimeError, match="Expected a value of type 'int' for argument 'x' but instead found type 'str'"):
        kiln.script(calls_overload_with_no_match)


def test_overloaded_implementation_is_not_scripted_directly():
    message = "cannot be directly compiled because it is overloaded"
    with pytest.raises(RuntimeError, match=message):
        torch.jit.script(add_one)
    with pytest.raises(RuntimeError, match=message):
        kiln.script(add_one)


# --- class methods, __delitem__, annotation aliases, dotted and functional NamedTuples -------

class WithClassMethod(object):
    def __init__(self, a: int):
        self.a: int = a

    @classmethod
    def create(cls, a: int) -> "WithClassMethod":
        return cls(a * 3)

    def get(self) -> int:
        return self.a


def calls_class_method_on_object(a: int) -> int:
    # 1.13 calls a @classmethod through an object (its first parameter names the class).
    return WithClassMethod(a).create(a + 1).get()


class WithDelItem(object):
    def __init__(self):
        self.data: Dict[str, int] = {"a": 1, "b": 2}

    def __delitem__(self, key: str):
        del self.data[key]

    def has(self, key: str) -> bool:
        return key in self.data


def deletes_item(key: str) -> Tuple[bool, bool]:
    d = WithDelItem()
    del d[key]
    return d.has("a"), d.has("b")


def test_class_method_called_on_an_object_as_in_torch():
    torch.jit.script(WithClassMethod)
    assert kiln.script(calls_class_method_on_object)(2) == torch.jit.script(calls_class_method_on_object)(2) == 9


def test_del_calls_delitem_as_in_torch():
    assert kiln.script(deletes_item)("a") == torch.jit.script(deletes_item)("a") == (False, True)

    class NoDelItem(object):
        def __init__(self):
            self.data: Dict[str, int] = {"a": 1}

    def deletes(key: str) -> int:
        d = NoDelItem()
        del d[key]
        return 0

    with pytest.raises(RuntimeError, match="Class does not define __delitem__"):
        torch.jit.script(deletes)
    with pytest.raises(RuntimeError, match="Class does not define __delitem__"):
        kiln.script(deletes)


def test_annotation_aliases_of_builtin_types_as_in_torch():
    # Local names bound to types (not the methods' closure or globals): 1.13
    # resolves them through the annotations' values.
    tensor_t = torch.Tensor
    device_t = torch.device
    ints_t = List[int]

    class Aliased(object):
        def __init__(self):
            pass

        def f(self, x: tensor_t, y: device_t) -> tensor_t:
            return x.to(device=y) * 2

        def g(self, a: ints_t, ds: List[device_t]) -> int:
            return a[0] + len(ds)

    def use_f(x: torch.Tensor) -> torch.Tensor:
        return Aliased().f(x, torch.device("cpu"))

    def use_g(n: int) -> int:
        return Aliased().g([n, 1], [torch.device("cpu")])

    x = np.arange(3.0, dtype=np.float32)
    assert_same(kiln.script(use_f)(*convert([x], "kiln")), torch.jit.script(use_f)(*convert([x], "torch")))
    assert kiln.script(use_g)(4) == torch.jit.script(use_g)(4) == 5

    # A function's annotations resolve through its closure and globals only, in both.
    def fn_alias(x: tensor_t) -> tensor_t:
        return x + 1

    with pytest.raises(RuntimeError, match="Unknown type name 'tensor_t'"):
        torch.jit.script(fn_alias)
    with pytest.raises(RuntimeError, match="Unknown type name 'tensor_t'"):
        kiln.script(fn_alias)


def test_named_tuple_through_a_module_attribute_as_in_torch():
    import types

    class TheType(NamedTuple):
        t: int

    some_module = types.ModuleType("some_module")
    some_module.Type = TheType

    def fn(n: int) -> some_module.Type:
        return some_module.Type(n + 1)

    assert kiln.script(fn)(2).t == torch.jit.script(fn)(2).t == 3


FunctionalPair = NamedTuple("FunctionalPair", [("value", int), ("scale", Optional[List[float]])])


def uses_functional_named_tuple(n: int) -> Tuple[int, Optional[List[float]]]:
    p = FunctionalPair(n, [1.5])
    return p.value * 2, p.scale


def test_named_tuple_without_a_class_statement_as_in_torch():
    assert kiln.script(uses_functional_named_tuple)(3) == torch.jit.script(uses_functional_named_tuple)(3)


@torch.jit.interface
class OneTwo(object):
    def one(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        pass

    def two(self, x: torch.Tensor) -> torch.Tensor:
        pass


class ImplA(object):
    def __init__(self):
        pass

    def one(self, x, y):
        return x + y

    def two(self, x):
        return 2 * x


class ImplB(object):
    def __init__(self):
        pass

    def one(self, x, y):
        return x * y

    def two(self, x):
        return x - 1


class NotOneTwo(object):
    def __init__(self):
        pass

    def one(self, x, y):
        return x + y


def uses_interface(x: torch.Tensor) -> torch.Tensor:
    items = torch.jit.annotate(List[OneTwo], [ImplA(), ImplB()])
    for i in range(len(items)):
        x = items[i].one(x, x)
        x = items[i].two(x)
    return x


def as_one_two(x: OneTwo) -> OneTwo:
    return x


def passes_interface(x: torch.Tensor) -> torch.Tensor:
    return as_one_two(ImplB()).two(x)


def passes_a_class_lacking_a_method() -> OneTwo:
    return as_one_two(NotOneTwo())


def test_interfaces_as_in_torch():
    for cls in (ImplA, ImplB, NotOneTwo):
        torch.jit.script(cls)
    x = np.arange(4.0, dtype=np.float32)
    for fn in (uses_interface, passes_interface):
        assert_same(kiln.script(fn)(*convert([x], "kiln")), torch.jit.script(fn)(*convert([x], "torch")))
    with pytest.raises(RuntimeError):
        torch.jit.script(passes_a_class_lacking_a_method)
    with pytest.raises(RuntimeError, match="NotOneTwo"):
        kiln.script(passes_a_class_lacking_a_method)


def test_kiln_jit_interface_marks_an_interface():
    @kiln.jit.interface
    class Twoer(object):
        def two(self, x: torch.Tensor) -> torch.Tensor:
            pass

    def use(x: torch.Tensor) -> torch.Tensor:
        t = torch.jit.annotate(List[Twoer], [ImplA()])
        return t[0].two(x)

    got = kiln.script(use)(kiln.ones(2))
    assert got.numpy().tolist() == [2.0, 2.0]


# --- builtin ops whose schema names their returns give NamedTuples, as in 1.13 ---------------

def named_returns(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (x.max(dim=1).indices + torch.max(x, dim=1).indices, torch.sort(x, dim=1).values,
            torch.topk(x, 2).indices)


def returns_max(x: torch.Tensor):
    return torch.max(x, dim=0)


def test_named_returns_of_builtin_ops_as_in_torch():
    x = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]], dtype=np.float32)
    assert_same(kiln.script(named_returns)(*convert([x], "kiln")), torch.jit.script(named_returns)(*convert([x], "torch")))
    assert "NamedTuple(values : Tensor, indices : Tensor) = prim::TupleConstruct" in str(kiln.script(returns_max).graph)
    got = kiln.script(returns_max)(*convert([x], "kiln"))
    expected = torch.jit.script(returns_max)(*convert([x], "torch"))
    assert type(got) is type(expected) is tuple
    assert_same(got, expected)
    with pytest.raises(RuntimeError, match="object has no attribute or method"):
        kiln.compile("def g(x: Tensor):\n    return x.max(dim=1).unknown_symbol\n")
