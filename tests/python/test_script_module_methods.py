"""Methods of scripted modules compile on demand: the compiler asks Python
for a method's source the first time a compiled method calls it, however the
call is spelled (through a local name, zip/enumerate over module lists, a
base class), as torch compiles them; methods nothing calls are never
compiled. Differential against torch.jit.script."""
import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same
from nn_programs import load

SOURCE = '''
from typing import List


class Base(nn.Module):
    def scale(self, x):
        return x * 2.0


class Leaf(Base):
    def __init__(self, k: float):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x + self.k

    def bump(self, x):
        return self.scale(x) + self.k

    def python_only(self):
        return f"leaf {self.k}"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf(1.0)
        self.firsts = nn.ModuleList([Leaf(2.0), Leaf(3.0)])
        self.seconds = nn.ModuleList([Leaf(4.0), Leaf(5.0)])
        self.named = nn.ModuleDict({"a": Leaf(6.0)})

    def forward(self, x):
        leaf = self.leaf
        x = leaf.bump(x)
        for i, (a, b) in enumerate(zip(self.firsts, self.seconds)):
            x = a.bump(x) - b.scale(x) + i
        for _, m in self.named.items():
            x = self.combine([m.bump(x), x])
        return x

    def combine(self, xs: List[torch.Tensor]):
        return xs[0] + xs[1]

    def never_called(self):
        return {1: lambda: 2}  # not TorchScript: must never be compiled
'''


@pytest.fixture
def programs(tmp_path):
    return load(SOURCE, kiln, tmp_path, "methods"), load(SOURCE, torch, tmp_path, "methods")


def test_methods_reached_any_way_compile_as_torchs(programs):
    km, tm = programs
    ks, ts = kiln.script(km.Net()), torch.jit.script(tm.Net())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    with torch.no_grad():
        expected = ts(torch.from_numpy(x.copy()))
    assert_same(ks(kiln.from_numpy(x.copy())), expected)
    assert not ks._c.has_method("never_called") and not ts._c._has_method("never_called")
    assert ks._c.has_method("combine") and ts._c._has_method("combine")
    assert ks.leaf._c.has_method("bump") and ks.leaf._c.has_method("scale")
    assert not ks.leaf._c.has_method("python_only")
    assert ks.firsts[0]._c.has_method("bump") and ks.seconds[0]._c.has_method("scale")


def test_a_method_compiled_for_one_instance_serves_the_type(programs):
    km, _ = programs
    ks = kiln.script(km.Net())
    # Every Leaf shares one type (equal concrete types): bump, compiled when
    # forward met it, is there on the other instances too.
    assert ks.named["a"]._c.has_method("bump")
    assert ks.leaf.bump(kiln.ones(2)).tolist() == [3.0, 3.0]


def test_an_error_in_a_called_method_points_at_it(tmp_path):
    source = '''
class Net(nn.Module):
    def forward(self, x):
        return self.helper(x)

    def helper(self, x):
        return x + "text"
'''
    km, tm = load(source, kiln, tmp_path, "broken"), load(source, torch, tmp_path, "broken")
    with pytest.raises(RuntimeError) as torch_info:
        torch.jit.script(tm.Net())
    with pytest.raises(RuntimeError) as kiln_info:
        kiln.script(km.Net())
    for info in (torch_info, kiln_info):
        message = str(info.value)
        assert 'x + "text"' in message
        assert "'Net.helper' is being compiled since it was called from 'Net.forward'" in message
        context = message.split("is being compiled since", 1)[1]
        assert "line 4" in context and "return self.helper(x)" in context, message
    # A failed type is forgotten: scripting again raises again (and does not find a half-compiled type).
    with pytest.raises(RuntimeError):
        kiln.script(km.Net())
