"""Properties of scripted modules and classes (compiled into `__<name>_getter`
and `__<name>_setter` methods), and methods whose first parameter is not
named `self`, against torch 1.13."""
import numpy as np
import torch

import kiln
from script_programs import node_kinds


def property_module(lib):
    class Scaled(lib.nn.Module):
        __jit_unused_properties__ = ["python_only"]

        def __init__(s):
            super().__init__()
            s.a = 2

        @property
        def twice(s) -> int:
            return s.a * 2

        @twice.setter
        def twice(s, value: int):
            s.a = value // 2

        @property
        def python_only(s):
            return object()  # not TorchScript: left out as listed

        def forward(s, x):
            y = x + s.twice
            s.twice = 10
            return y * s.a + s.helper()

        def helper(s) -> int:
            return s.twice + 1

    return Scaled()


def script(lib, module):
    return kiln.script(module) if lib is kiln else torch.jit.script(module)


def test_module_property_getter_and_setter_match_torch():
    k, t = script(kiln, property_module(kiln)), script(torch, property_module(torch))
    assert node_kinds(str(k.graph)) == node_kinds(str(t.graph))
    assert 'prim::CallMethod[name="__twice_getter"]' in str(k.graph)
    assert 'prim::CallMethod[name="__twice_setter"]' in str(k.graph)
    for _ in range(2):  # the setter changes state the second call sees
        np.testing.assert_array_equal(k(kiln.ones(2)).numpy(), t(torch.ones(2)).numpy())


def test_module_property_archives_cross(tmp_path):
    kiln.save(script(kiln, property_module(kiln)), str(tmp_path / "k.pt"))
    torch.jit.save(script(torch, property_module(torch)), str(tmp_path / "t.pt"))
    from_kiln = torch.jit.load(str(tmp_path / "k.pt"))
    from_torch = kiln.load(str(tmp_path / "t.pt"))
    for _ in range(2):
        np.testing.assert_array_equal(from_torch(kiln.ones(2)).numpy(), from_kiln(torch.ones(2)).numpy())


def test_class_property_matches_torch():
    results = []
    for lib in (kiln, torch):
        jit = kiln if lib is kiln else torch.jit

        @jit.script
        class Box:
            def __init__(self, side: int):
                self.side = side

            @property
            def area(self) -> int:
                return self.side * self.side

            @area.setter
            def area(self, value: int):
                self.side = int(value ** 0.5)

        @jit.script
        def use(n: int) -> int:
            box = Box(n)
            before = box.area
            box.area = 49
            return before * 100 + box.side

        results.append(use(3))
    assert results[0] == results[1] == 907


def test_methods_whose_self_is_not_named_self():
    for lib in (kiln, torch):
        class Net(lib.nn.Module):
            def __init__(me):
                super().__init__()
                me.k = 3

            def scale(me, x, factor: int = 2):
                return x * factor * me.k

            def forward(me, x):
                return me.scale(x) + me.scale(x, factor=5)

        out = script(lib, Net())(lib.ones(2))
        np.testing.assert_array_equal(np.asarray(out.numpy()), np.full(2, 21.0, dtype=np.float32))
