"""@dataclass classes in TorchScript (issue 20), differential against torch
1.13: kiln.script writes the methods the dataclasses module generates
(__init__ with InitVars and __post_init__, __eq__, the order comparators,
__repr__) as 1.13 synthesizes them, keeps the ones the class defines, and
ignores class-body assignments (field defaults). torch needs
torch.jit.script(cls) before script code uses a dataclass; kiln does not."""
from dataclasses import InitVar, dataclass, field
from typing import List, Optional, Tuple

import pytest
import torch

import kiln
from conftest import assert_same, convert


@dataclass(order=True)
class Point:
    x: float
    y: float
    norm: Optional[torch.Tensor] = None

    def __post_init__(self):
        self.norm = (torch.tensor(self.x) ** 2 + torch.tensor(self.y) ** 2) ** 0.5


@dataclass(order=True)
class Scaled:
    x: float
    y: float
    power: InitVar[int] = 2
    norm: Optional[torch.Tensor] = None

    def __post_init__(self, power: int):
        self.norm = (torch.tensor(self.x) ** power + torch.tensor(self.y) ** power) ** (1 / power)


@dataclass
class CustomEq:
    a: int
    b: int

    def __eq__(self, other: "CustomEq") -> bool:
        return self.a == other.a  # b is left out


@dataclass
class Defaults:
    name: str
    count: int = 3
    ratio: float = 0.5
    tags: Optional[List[str]] = None


@dataclass(eq=False)
class NoEq:
    a: int


for _cls in (Point, Scaled, CustomEq, Defaults, NoEq):
    torch.jit.script(_cls)


def compare(x1: float, y1: float, x2: float, y2: float) -> Tuple[bool, bool, bool, bool, bool]:
    p1 = Point(x1, y1)
    p2 = Point(x2, y2)
    return p1 == p2, p1 < p2, p1 <= p2, p1 > p2, p1 >= p2


def post_init(x: float, y: float) -> Optional[torch.Tensor]:
    return Point(x, y).norm


def init_var(x: float, y: float, p: int) -> Optional[torch.Tensor]:
    return Scaled(x, y, p).norm


def init_var_default(x: float, y: float) -> Optional[torch.Tensor]:
    return Scaled(x, y).norm


def custom_eq(a: int, b1: int, b2: int) -> bool:
    return CustomEq(a, b1) == CustomEq(a, b2)


def defaults(name: str) -> Tuple[str, int, float, bool, int]:
    d = Defaults(name)
    e = Defaults(name, 5, ratio=1.5, tags=["x"])
    t = e.tags
    n = 0
    if t is not None:
        n = len(t)
    return d.name, d.count + e.count, d.ratio + e.ratio, d.tags is None, n


def defaults_equal(count: int) -> Tuple[bool, bool]:
    return Defaults("a", count) == Defaults("a", 3), Defaults("a", tags=["b"]) == Defaults("a")


def no_eq(a: int) -> int:
    return NoEq(a).a


CASES = [
    (compare, [1.0, 2.0, 1.0, 3.0]),
    (compare, [2.0, 2.0, 2.0, 2.0]),
    (compare, [3.0, 1.0, 2.0, 5.0]),
    (compare, [-1.5, 4.0, -1.5, -4.0]),
    (post_init, [3.0, 4.0]),
    (init_var, [1.0, 2.0, 3]),
    (init_var_default, [6.0, 8.0]),
    (custom_eq, [1, 2, 3]),
    (custom_eq, [1, 2, 2]),
    (defaults, ["n"]),
    (defaults_equal, [3]),
    (defaults_equal, [4]),
    (no_eq, [7]),
]


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(CASES)])
def test_same_results_as_torch(fn, args):
    expected = torch.jit.script(fn)(*convert(args, "torch"))
    got = kiln.script(fn)(*convert(args, "kiln"))
    assert_same(got, expected)


def test_scripted_dataclass_makes_objects():
    P = kiln.script(Point)
    a, b = P(1.0, 2.0), P(1.0, 3.0)
    assert a.x == 1.0 and float(a.norm) == pytest.approx(5 ** 0.5)
    assert a.get_method("__lt__")(b) and not a.get_method("__eq__")(b)


def test_ordering_against_none_field_raises_as_in_torch():
    @dataclass(order=True)
    class MaybeTensor:
        t: Optional[int] = None

    torch.jit.script(MaybeTensor)

    def lt(flag: bool) -> bool:
        a = MaybeTensor(1)
        b = MaybeTensor(None)
        if flag:
            b = MaybeTensor(2)
        return a < b

    assert kiln.script(lt)(True) == torch.jit.script(lt)(True) is True
    with pytest.raises(Exception, match="Cannot compare MaybeTensor with None"):
        torch.jit.script(lt)(False)
    with pytest.raises(RuntimeError, match="Cannot compare MaybeTensor with None"):
        kiln.script(lt)(False)


def test_default_factory_is_refused_as_in_torch():
    @dataclass
    class Factory(object):
        x: List[int] = field(default_factory=list)

    with pytest.raises(NotImplementedError, match="Default factory"):
        torch.jit.script(Factory)
    with pytest.raises(NotImplementedError, match="Default factory"):
        kiln.script(Factory)


def test_class_body_assignments_are_ignored_as_in_torch():
    class WithClassAttributes(object):
        scale = 3
        offset: float = 0.5

        def __init__(self, x: int):
            self.x = x * 2

        def get(self) -> int:
            return self.x

    assert kiln.script(WithClassAttributes)(4).get() == torch.jit.script(WithClassAttributes)(4).get() == 8
