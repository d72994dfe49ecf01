"""Script classes, differential against torch 1.13: the same Python classes
and functions (defined once, below) are scripted by torch.jit.script and by
kiln.script, run on copies of the same inputs, and must give equal results;
the functions' graphs must have the same node kinds (prim::CreateObject,
prim::CallMethod, prim::GetAttr, prim::SetAttr, ...) in the same order.
Also: kiln.ScriptClass objects used from Python, the class-type bindings
kiln.nn builds modules with, and the errors."""
import inspect
import os
import sys
from typing import Dict, List, Optional, Tuple

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same, convert

sys.path.insert(0, os.path.dirname(__file__))
from script_programs import kinds_diff, node_kinds  # noqa: E402

_C = kiln._C


# --- the classes and functions both compilers script ----------------------------------------

class Counter:
    def __init__(self, start: int):
        self.count = start
        self.history: List[int] = []

    def bump(self, k: int) -> int:
        self.count += k
        self.history.append(self.count)
        return self.scaled(10)

    def scaled(self, factor: int) -> int:
        return self.count * factor


class Pair:
    def __init__(self, a: torch.Tensor, b: Optional[torch.Tensor]):
        self.a = a
        self.b = b

    def total(self) -> torch.Tensor:
        b = self.b
        if b is None:
            return self.a
        return self.a + b

    def swapped(self) -> "Pair":
        b = self.b
        assert b is not None
        return Pair(b, self.a)


class Accumulator:
    def __init__(self, x: torch.Tensor):
        self.total = torch.zeros_like(x)
        self.steps = 0
        self.names: Dict[str, int] = {}

    def add(self, x: torch.Tensor, name: str):
        self.total += x
        self.steps = self.steps + 1
        self.names[name] = self.steps

    def mean(self) -> torch.Tensor:
        return self.total / self.steps


def use_counter(n: int) -> Tuple[int, int, List[int]]:
    c = Counter(n)
    a = c.bump(2)
    c.count = c.count - 1
    b = c.bump(3)
    return a, b, c.history


def use_pair(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    p = Pair(x, y)
    q = Pair(x, None)
    return p.swapped().total() * 2 + q.total()


def use_accumulator(xs: List[torch.Tensor]) -> Tuple[torch.Tensor, int, Dict[str, int]]:
    acc = Accumulator(xs[0])
    for i, x in enumerate(xs):
        acc.add(x, "x" + str(i))
    return acc.mean(), acc.steps, acc.names


def list_of_objects(n: int) -> int:
    counters: List[Counter] = []
    for i in range(n):
        counters.append(Counter(i))
    total = 0
    for c in counters:
        total += c.bump(1)
    return total


def pass_object(x: torch.Tensor) -> torch.Tensor:
    return take_pair(Pair(x, x + 1))


def take_pair(p: Pair) -> torch.Tensor:
    return p.total() * p.a


def optional_object(flag: bool, x: torch.Tensor) -> torch.Tensor:
    p: Optional[Pair] = None
    if flag:
        p = Pair(x, None)
    if p is not None:
        return p.total()
    return x - 1


FUNCTIONS = {
    "use_counter": (use_counter, [5]),
    "use_pair": (use_pair, [np.arange(3.0, dtype=np.float32), np.ones(3, dtype=np.float32)]),
    "use_accumulator": (use_accumulator, [[np.arange(4.0, dtype=np.float32), np.full(4, 2.0, dtype=np.float32)]]),
    "list_of_objects": (list_of_objects, [4]),
    "pass_object": (pass_object, [np.arange(3.0, dtype=np.float32)]),
    "optional_object_true": (optional_object, [True, np.arange(3.0, dtype=np.float32)]),
    "optional_object_false": (optional_object, [False, np.arange(3.0, dtype=np.float32)]),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_same_results_as_torch(name):
    fn, args = FUNCTIONS[name]
    expected = torch.jit.script(fn)(*convert(args, "torch"))
    got = kiln.script(fn)(*convert(args, "kiln"))
    assert_same(got, expected)


@pytest.mark.parametrize("name", ["use_counter", "use_pair", "use_accumulator", "list_of_objects", "pass_object"])
def test_same_graph_kinds_as_torch(name):
    fn, _ = FUNCTIONS[name]
    torch_kinds = node_kinds(str(torch.jit.script(fn).graph))
    kiln_kinds = node_kinds(str(kiln.script(fn).graph))
    assert kiln_kinds == torch_kinds, kinds_diff(kiln_kinds, torch_kinds)
    assert "prim::CreateObject" in kiln_kinds or name == "list_of_objects"


@pytest.mark.parametrize("cls,method", [(Counter, "bump"), (Counter, "__init__"), (Pair, "swapped"),
                                        (Accumulator, "add"), (Accumulator, "__init__")])
def test_same_method_graph_kinds_as_torch(cls, method):
    torch.jit.script(cls)
    torch_graph = torch.jit._state._python_cu.find_function(
        torch._jit_internal._qualified_name(cls) + "." + method).graph
    kiln_obj_type = kiln.script(cls).class_type
    assert kiln_obj_type.has_method(method)
    kiln_graph = _method_graph(cls, method)
    assert node_kinds(str(kiln_graph)) == node_kinds(str(torch_graph)), \
        kinds_diff(node_kinds(str(kiln_graph)), node_kinds(str(torch_graph)))


def _method_graph(cls, method):
    # A fresh object only to reach the method; no __init__ runs.
    return _C.ScriptObject(kiln.script(cls).class_type).get_method(method).graph


# --- script classes from Python ------------------------------------------------------------

def test_script_class_constructs_objects_with_running_methods():
    K = kiln.script(Counter)
    assert isinstance(K, kiln.ScriptClass)
    assert K.qualified_name == "__torch__.test_script_class.Counter"
    c = K(3)
    assert isinstance(c, kiln.ScriptObject)
    assert c.count == 3
    assert c.bump(4) == 70
    assert c.history == [7]
    c.count = 1
    assert c.scaled(5) == 5
    assert c.getattr("count") == 1
    with pytest.raises(RuntimeError, match="attribute 'count'"):
        c.count = "many"
    with pytest.raises(AttributeError):
        c.missing  # noqa: B018
    assert kiln.script(Counter) is K


def test_script_class_as_decorator_and_from_functions():
    @kiln.script
    class Box:
        def __init__(self, v: float):
            self.v = v

        def get(self) -> float:
            return self.v * 2.0

    b = Box(1.5)
    assert b.get() == 3.0
    assert b.get_method("get").schema.startswith("get(")


def test_objects_cross_the_python_boundary():
    make = kiln.script(pass_object)
    assert_same(make(kiln.from_numpy(np.arange(3.0, dtype=np.float32))),
                torch.jit.script(pass_object)(torch.arange(3.0)))
    p = kiln.script(Pair)(kiln.ones(2), None)
    got = kiln.script(take_pair)(p)
    assert_same(got, torch.ones(2))
    with pytest.raises(RuntimeError, match="Pair"):
        kiln.script(take_pair)(kiln.script(Counter)(1))


# --- the bindings kiln.nn builds modules with ------------------------------------------------

def _method(src, lookup=None):
    import textwrap
    return (textwrap.dedent(src), "<test>", 1, lookup or (lambda name: None))


def test_module_type_bindings():
    sub_t = _C._new_class_type("__torch__.Sub", True)
    sub_t.add_attribute("training", "bool", "attribute")
    sub_t.add_attribute("w", "Tensor", "parameter")
    _C._compile_methods(sub_t, {"forward": _method("""
        def forward(self, x):
            return x * self.w
        """)}, ["forward"])

    list_t = _C._new_class_type("__torch__.torch.nn.modules.container.ModuleList", True, "list")
    list_t.add_attribute("training", "bool", "attribute")
    list_t.add_attribute("0", sub_t, "module")
    list_t.add_attribute("1", sub_t, "module")

    m_t = _C._new_class_type("__torch__.M", True)
    m_t.add_attribute("training", "bool", "attribute")
    m_t.add_attribute("layers", list_t, "module")
    m_t.add_attribute("b", "Tensor", "buffer")
    m_t.add_attribute("count", "int", "attribute")
    m_t.add_attribute("opt", "Optional[int]", "attribute")
    m_t.add_constant("k", 3)
    assert m_t.is_module and m_t.name == "__torch__.M"
    assert ("layers", "__torch__.torch.nn.modules.container.ModuleList", "module") in m_t.attributes()
    methods = {
        "forward": _method("""
            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                self.count = self.count + 1
                if self.training:
                    x = x + 1
                return self.helper(x) + len(self.layers) + self.layers[0](x)
            """),
        "helper": _method("""
            def helper(self, y):
                return y + self.k + self.b
            """),
        "never": _method("""
            def never(self):
                return undefined_python_thing()
            """),
    }
    _C._compile_methods(m_t, methods, ["forward"])
    assert sorted(m_t.method_names()) == ["forward", "helper"]

    def sub(w):
        s = _C.ScriptObject(sub_t)
        s.setattr("training", True)
        s.setattr("w", kiln.tensor([w]))
        return s
    layers = _C.ScriptObject(list_t)
    layers.setattr("training", True)
    layers.setattr("0", sub(2.0))
    layers.setattr("1", sub(5.0))
    m = _C.ScriptObject(m_t)
    m.setattr("training", True)
    m.setattr("layers", layers)
    m.setattr("b", kiln.zeros(1))
    m.setattr("count", 0)
    assert m.getattr("opt") is None
    assert m.type == m_t and m.has_method("forward") and not m.has_method("never")
    fwd = m.get_method("forward")
    out = fwd(kiln.ones(1))
    # layers: 1*2*5 = 10, +1 (training) = 11; helper: 11+3+0 = 14; + 2 + 11*2
    assert out.numpy().tolist() == [14 + 2 + 22]
    assert m.getattr("count") == 1
    assert isinstance(m.getattr("layers"), kiln.ScriptObject)
    assert m.getattr("layers").getattr("1").getattr("w").numpy().tolist() == [5.0]
    m.setattr("training", False)
    assert fwd(kiln.ones(1)).numpy().tolist() == [13 + 2 + 20]
    g = str(fwd.graph)
    assert 'prim::GetAttr[name="layers"](%self)' in g
    assert 'prim::CallMethod[name="forward"]' in g
    assert 'prim::CallMethod[name="helper"](%self' in g
    assert 'prim::SetAttr[name="count"]' in g
    assert "prim::Loop" not in g
    assert fwd.schema == "forward(__torch__.M self, Tensor x) -> Tensor"
    assert fwd.graph_for(kiln.ones(1)) is not None
    with pytest.raises(RuntimeError, match="attribute 'count'"):
        m.setattr("count", 1.5)


def test_type_of():
    assert _C._type_of(kiln.ones(1)) == "Tensor"
    assert _C._type_of(1) == "int"
    assert _C._type_of(True) == "bool"
    assert _C._type_of(1.0) == "float"
    assert _C._type_of("s") == "str"
    assert _C._type_of([1, 2]) == "List[int]"
    assert _C._type_of({"a": kiln.ones(1)}) == "Dict[str, Tensor]"
    assert _C._type_of((1, kiln.ones(1))) == "Tuple[int, Tensor]"
    assert _C._type_of([]) is None
    assert _C._type_of({}) is None
    assert _C._type_of(object()) is None
    assert _C._type_of(kiln.script(Counter)(1)) == "__torch__.test_script_class.Counter"


def test_module_method_errors_point_at_the_source():
    t = _C._new_class_type("__torch__.E", True)
    t.add_attribute("training", "bool", "attribute")
    t.add_attribute("n", "int", "attribute")
    with pytest.raises(RuntimeError, match="has no attribute or method 'missing'"):
        _C._compile_methods(t, {"forward": _method("""
            def forward(self, x):
                return x + self.missing
            """)}, ["forward"])
    with pytest.raises(RuntimeError, match="Tried to set nonexistent attribute: m"):
        _C._compile_methods(t, {"f2": _method("""
            def f2(self, x):
                self.m = 1
                return x
            """)}, ["f2"])
    with pytest.raises(RuntimeError, match="Expected int but got str"):
        _C._compile_methods(t, {"f3": _method("""
            def f3(self, x):
                self.n = "a"
                return x
            """)}, ["f3"])
    with pytest.raises(RuntimeError, match="has no method 'nothing'"):
        _C._compile_methods(t, {}, ["nothing"])


def test_script_class_errors():
    class Bad:
        def __init__(self):
            self.x = 1

        def f(self) -> int:
            return self.y

    with pytest.raises(RuntimeError, match="has no attribute or method 'y'"):
        kiln.script(Bad)
    with pytest.raises(Exception):
        torch.jit.script(Bad)


# --- module methods against torch: the same module built by hand ------------------------------

class _TorchSub(torch.nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((2,), w))

    def forward(self, x):
        return x * self.w


class _TorchNet(torch.nn.Module):
    __constants__ = ["k"]

    def __init__(self):
        super().__init__()
        self.k = 3
        self.layers = torch.nn.ModuleList([_TorchSub(2.0), _TorchSub(5.0)])
        self.d = torch.nn.ModuleDict({"a": _TorchSub(0.5), "b": _TorchSub(-1.0)})
        self.sub = _TorchSub(1.5)
        self.register_buffer("b", torch.zeros(2))
        self.count = 0

    def helper(self, x):
        return x + self.k

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        for name, m in self.d.items():
            x = m(x)
        for m in self.d.values():
            x = m(x) + 1
        y = self.sub(x) + self.b
        self.count = self.count + 1
        self.b += 1
        n = len(self.layers) + len(self.d)
        if self.training:
            y = y + 1
        return self.helper(y) + n + self.layers[-1](x) + self.d["b"](x)


# The methods' source, for kiln's compiler.
_NET_SOURCES = {name: inspect.getsource(getattr(_TorchNet, name)) for name in ("helper", "forward")}


def _kiln_net(torch_net):
    """kiln's script object of the same structure and values as torch_net."""
    def module_type(name, iterable=""):
        t = _C._new_class_type(name, True, iterable)
        t.add_attribute("training", "bool", "attribute")
        return t

    sub_t = module_type("__torch__._TorchSub")
    sub_t.add_attribute("w", "Tensor", "parameter")
    _C._compile_methods(sub_t, {"forward": _method("""
        def forward(self, x):
            return x * self.w
        """)}, ["forward"])

    def sub(torch_sub):
        o = _C.ScriptObject(sub_t)
        o.training = True
        o.w = kiln.from_numpy(torch_sub.w.detach().numpy().copy())
        return o

    list_t = module_type("__torch__.torch.nn.modules.container.ModuleList", "list")
    dict_t = module_type("__torch__.torch.nn.modules.container.ModuleDict", "dict")
    for i in range(2):
        list_t.add_attribute(str(i), sub_t, "module")
    for key in ("a", "b"):
        dict_t.add_attribute(key, sub_t, "module")
    net_t = module_type("__torch__._TorchNet")
    net_t.add_attribute("layers", list_t, "module")
    net_t.add_attribute("d", dict_t, "module")
    net_t.add_attribute("sub", sub_t, "module")
    net_t.add_attribute("b", "Tensor", "buffer")
    net_t.add_attribute("count", "int", "attribute")
    net_t.add_constant("k", 3)
    _C._compile_methods(net_t, {name: _method(src) for name, src in _NET_SOURCES.items()}, ["forward"])

    layers, d = _C.ScriptObject(list_t), _C.ScriptObject(dict_t)
    layers.training = d.training = True
    for i in range(2):
        layers.setattr(str(i), sub(torch_net.layers[i]))
    for key in ("a", "b"):
        d.setattr(key, sub(torch_net.d[key]))
    net = _C.ScriptObject(net_t)
    net.training = True
    net.layers, net.d, net.sub = layers, d, sub(torch_net.sub)
    net.b = kiln.zeros(2)
    net.count = 0
    return net


def test_module_methods_match_torch():
    torch_net = torch.jit.script(_TorchNet())
    net = _kiln_net(_TorchNet())
    for name in ("forward", "helper"):
        kiln_kinds = node_kinds(str(net.get_method(name).graph))
        torch_kinds = node_kinds(str(getattr(torch_net, name).graph))
        assert kiln_kinds == torch_kinds, kinds_diff(kiln_kinds, torch_kinds)
    x = np.arange(2.0, dtype=np.float32)
    for training in (True, False, True):
        torch_net.train(training)
        net.training = training
        assert_same(net.forward(kiln.from_numpy(x.copy())), torch_net(torch.from_numpy(x.copy())))
    assert net.count == torch_net.count == 3
    assert_same(net.b, torch_net.b)
    assert sorted(net.type.method_names()) == ["forward", "helper"]
    assert net.layers.type.method_names() == ["__len__"]


def test_method_from_a_graph():
    # How a traced module's forward can be added: self first, parameters through prim::GetAttr.
    t = _C._new_class_type("__torch__.Traced", True)
    t.add_attribute("training", "bool", "attribute")
    t.add_attribute("w", "Tensor", "parameter")
    graph = kiln.parse_ir("""
graph(%self : Any, %x : Tensor):
  %w : Tensor = prim::GetAttr[name="w"](%self)
  %y : Tensor = aten::mul(%x, %w)
  return (%y)
""")
    _C._create_method(t, "forward", graph)
    m = _C.ScriptObject(t)
    m.training = True
    m.w = kiln.tensor([3.0, 4.0])
    assert m.forward(kiln.ones(2)).numpy().tolist() == [3.0, 4.0]
    assert m.forward.schema == "forward(__torch__.Traced self, Tensor x) -> Tensor"
    with pytest.raises(RuntimeError, match="already has a method 'forward'"):
        _C._create_method(t, "forward", graph)


def grad_modes(x: torch.Tensor) -> Tuple[torch.Tensor, bool, bool, bool]:
    before = torch.is_grad_enabled()
    with torch.no_grad():
        inside = torch.is_grad_enabled()
        y = x * 2
    return y + 1, before, inside, torch.is_grad_enabled()


def test_no_grad_is_a_builtin_class():
    args = [np.arange(3.0, dtype=np.float32)]
    expected = torch.jit.script(grad_modes)(*convert(args, "torch"))
    k = kiln.script(grad_modes)
    assert_same(k(*convert(args, "kiln")), expected)
    kiln_kinds, torch_kinds = node_kinds(str(k.graph)), node_kinds(str(torch.jit.script(grad_modes).graph))
    assert kiln_kinds == torch_kinds, kinds_diff(kiln_kinds, torch_kinds)
