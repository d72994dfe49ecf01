"""kiln.trace(module_instance) against torch.jit.trace(nn.Module) (1.13):
the same module source loaded with torch's names and with kiln's, equal
weights, traced on the same numpy inputs. The traced modules must give equal
results on new inputs of the same shape, have the same state_dict keys,
forward graphs with the same operator counts (constants aside) and the same
prim::GetAttr / prim::CallMethod counts, and the same traced methods on each
submodule (forward, forward1 for a submodule called twice)."""
import re
import warnings
from collections import Counter

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same
from nn_programs import copy_weights, inputs, load
from script_programs import node_kinds

# A module with parameters, a buffer, submodules (one called twice), a
# ModuleList looped over, a helper method, a scripted submodule, a call into
# a scripted function, a submodule returning a tuple and one returning its
# input unchanged.
SOURCE = '''
from typing import Tuple


@torch.jit.script
def clip_add(x, y):
    if bool(x.sum() > 0):
        return x + y
    return x - y


class Leaf(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.w = nn.Parameter(torch.ones(n, n) * 0.1)
        self.b = nn.Parameter(torch.ones(n) * 0.2)

    def forward(self, x):
        return torch.tanh(x @ self.w + self.b)


class Split(nn.Module):
    def forward(self, x):
        return x * 2.0, x - 1.0


class Scripted(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(n) * 0.5)

    def forward(self, x):
        for _ in range(2):
            x = x * self.gain
        return x


class Net(nn.Module):
    def __init__(self, n: int = 4):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(n) * 1.5)
        self.register_buffer("offset", torch.ones(n) * 0.25)
        self.leaf = Leaf(n)
        self.layers = nn.ModuleList([Leaf(n), Leaf(n)])
        self.split = Split()
        self.same = nn.Identity()
        self.lin = nn.Linear(n, n)
        self.scripted = torch.jit.script(Scripted(n))

    def helper(self, x):
        return x * self.scale + self.offset

    def forward(self, x):
        x = self.helper(x)
        x = self.leaf(x)
        for layer in self.layers:
            x = layer(x)
        a, b = self.split(x)
        x = clip_add(a, self.leaf.b) + self.same(b)
        x = self.scripted(self.lin(x))
        return x + self.leaf(x)
'''

MODULE_OPS = ("prim::GetAttr", "prim::CallMethod", "prim::CallFunction")
IGNORED = {"prim::Constant"}


def op_counts(graph):
    return Counter(k for k in node_kinds(str(graph)) if k not in IGNORED and k not in "{}")


def plain(text):
    """Graph text without the loaded module's name and the mangling."""
    text = re.sub(r"__torch__\.nn_program_(kiln|torch)_\d+\.", "__torch__.PROGRAM.", text)
    return re.sub(r"___torch_mangle_\d+\.", "", text)


def quiet_trace(trace, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", kiln.TracerWarning)
        return trace(*args, **kwargs)


@pytest.fixture
def programs(tmp_path):
    return load(SOURCE, kiln, tmp_path), load(SOURCE, torch, tmp_path)


@pytest.fixture
def nets(programs):
    kp, tp = programs
    k, t = kp.Net(), tp.Net()
    copy_weights(k, t)
    return k, t


@pytest.fixture
def traced(nets):
    k, t = nets
    (x,) = inputs((3, 4))
    return k, t, quiet_trace(kiln.trace, k, kiln.from_numpy(x)), quiet_trace(torch.jit.trace, t, torch.from_numpy(x))


def test_outputs_match_torch_on_new_inputs(traced):
    k, t, kt, tt = traced
    for seed in (1, 2):
        (x,) = inputs((3, 4), seed=seed)
        with torch.no_grad():
            expected = tt(torch.from_numpy(x))
            eager = t(torch.from_numpy(x))
        assert_same(kt(kiln.from_numpy(x)), expected)
        assert_same(k(kiln.from_numpy(x)), eager)


def test_returns_a_script_module_of_the_module_type(traced):
    k, t, kt, tt = traced
    assert isinstance(kt, kiln.nn._script.ScriptModule)
    assert kt.original_name == "Net"
    header = plain(str(kt.graph)).split("\n")[0]
    assert header == plain(str(tt.graph)).split("\n")[0]
    assert header == "graph(%self.1 : __torch__.PROGRAM.Net,"


def test_state_dict_keys_and_shared_parameters(traced):
    k, t, kt, tt = traced
    assert list(kt.state_dict().keys()) == list(tt.state_dict().keys())
    # The trace reads the eager module's tensors (as torch's shares them).
    assert kt.leaf.w._same_tensor(k.leaf.w)
    (x,) = inputs((3, 4), seed=3)
    before = kt(kiln.from_numpy(x)).numpy().copy()
    with kiln.no_grad():  # a leaf that requires grad: in place only outside autograd, as in torch
        k.scale.mul_(2.0)
    after = kt(kiln.from_numpy(x)).numpy()
    assert not np.allclose(before, after)


def test_forward_graph_op_counts_match_torch(traced):
    k, t, kt, tt = traced
    kc, tc = op_counts(kt.graph), op_counts(tt.graph)
    assert kc == tc, f"kiln:\n{kt.graph}\ntorch:\n{tt.graph}"
    for op in MODULE_OPS:
        assert kc[op] == tc[op], op
    assert kc["prim::CallMethod"] == 8
    assert kc["prim::CallFunction"] == 1


def test_submodules_get_traced_methods_as_torch(traced):
    k, t, kt, tt = traced
    tmods = dict(tt.named_modules())
    for name, kmod in kt.named_modules():
        tmod = tmods[name]
        assert sorted(kmod._c.type.method_names()) == sorted(tmod._c._method_names()), name
        for method in kmod._c.type.method_names():
            kg, tg = kmod._c.get_method(method).graph, tmod._c._get_method(method).graph
            assert op_counts(kg) == op_counts(tg), f"{name}.{method}\nkiln:\n{kg}\ntorch:\n{tg}"
    # A submodule called twice has two methods; the forward graph calls both.
    assert sorted(kt.leaf._c.type.method_names()) == ["forward", "forward1"]
    assert 'prim::CallMethod[name="forward1"]' in str(kt.graph)


def test_scripted_submodule_keeps_its_compiled_method(traced):
    k, t, kt, tt = traced
    # Called, not retraced: the scripted loop is still there.
    assert "prim::Loop" in str(kt.scripted.forward.graph)
    assert kt.scripted._c is k.scripted._c


def test_module_types_are_not_shared(programs):
    kp, _ = programs
    a, b = kp.Leaf(4), kp.Leaf(4)
    (x,) = inputs((2, 4))
    ta, tb = kiln.trace(a, kiln.from_numpy(x)), kiln.trace(b, kiln.from_numpy(x))
    assert ta._c.type != tb._c.type
    # Scripting after tracing compiles forward from source (the traced type is not reused).
    assert "aten::matmul" in str(kiln.script(kp.Leaf(4)).graph)


def test_trace_module_with_method_dict(nets):
    k, t = nets
    (x,) = inputs((3, 4))
    kt = quiet_trace(kiln.trace_module, k, {"forward": kiln.from_numpy(x)})
    tt = quiet_trace(torch.jit.trace_module, t, {"forward": torch.from_numpy(x)})
    assert op_counts(kt.graph) == op_counts(tt.graph)
    with pytest.raises(AttributeError, match="dictionary of"):
        kiln.trace_module(k, kiln.from_numpy(x))


BRANCHY = '''
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(3, 3)

    def forward(self, x):
        y = self.inner(x)
        if bool(x.sum() > 0):
            return y * 2.0
        return y - 1.0
'''


def test_check_inputs(tmp_path):
    kp, tp = load(BRANCHY, kiln, tmp_path), load(BRANCHY, torch, tmp_path)
    k, t = kp.Branchy(), tp.Branchy()
    copy_weights(k, t)
    (x,) = inputs((2, 3))
    pos, neg = np.abs(x) * 100, -np.abs(x) * 100
    # Inputs taking the same branch pass.
    quiet_trace(kiln.trace, k, kiln.from_numpy(pos), check_inputs=[(kiln.from_numpy(pos * 2),)])
    quiet_trace(torch.jit.trace, t, torch.from_numpy(pos), check_inputs=[(torch.from_numpy(pos * 2),)])
    # The other branch: the graphs differ, in both.
    with pytest.raises(torch.jit.TracingCheckError):
        quiet_trace(torch.jit.trace, t, torch.from_numpy(pos), check_inputs=[(torch.from_numpy(neg),)])
    with pytest.raises(kiln.TracingCheckError, match="Graphs differed"):
        quiet_trace(kiln.trace, k, kiln.from_numpy(pos), check_inputs=[(kiln.from_numpy(neg),)])


BAD = '''
class Count(nn.Module):
    def forward(self, x):
        return 3


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.count = Count()

    def forward(self, x):
        return x + self.count(x)
'''


def test_non_tensor_outputs(tmp_path):
    kp, tp = load(BAD, kiln, tmp_path), load(BAD, torch, tmp_path)
    (x,) = inputs((2, 3))
    with pytest.raises(RuntimeError, match="Only tensors, lists, tuples of tensors, or dictionary of tensors"):
        torch.jit.trace(tp.Count(), torch.from_numpy(x))
    with pytest.raises(RuntimeError, match="Only tensors, lists, tuples of tensors, or dictionary of tensors"):
        kiln.trace(kp.Count(), kiln.from_numpy(x))
    # A submodule may return anything: its method's outputs are what the
    # caller uses of it (here nothing: the method returns None, the 3 is a constant).
    kt = kiln.trace(kp.Outer(), kiln.from_numpy(x))
    tt = torch.jit.trace(tp.Outer(), torch.from_numpy(x))
    assert op_counts(kt.graph) == op_counts(tt.graph), f"kiln:\n{kt.graph}\ntorch:\n{tt.graph}"
    assert op_counts(kt.count.graph) == op_counts(tt.count.graph)
    assert "NoneType = prim::CallMethod" in str(kt.graph)


ESCAPING = """
class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(4))

    def forward(self, x):
        self.count.add_(1.0)
        return x + self.count


class Bias(nn.Module):
    def __init__(self):
        super().__init__()
        self.b = nn.Parameter(torch.ones(4))

    def forward(self):
        return self.b * 2.0


class Scaled(nn.Module):
    def forward(self, x, scale: float = 1.0, other=None):
        if other is not None:
            x = x + other
        return x * scale


class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = Counter()
        self.s = Scaled()

    def forward(self, x, y):
        return self.s(self.c(x), scale=3.0, other=y)


class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.deep = Deep()
        self.bias = Bias()
        self.c2 = Counter()

    def forward(self, x, y):
        z = self.deep(x, y) + self.bias()
        z = self.c2(z)
        z = self.c2(z)
        return z, self.deep.c.count + 1.0
"""


def test_values_escaping_a_call_become_its_outputs_as_torch(tmp_path):
    """A buffer changed in place by a submodule and used after the call (by
    the caller, or by a later call) is one more output of the method and the
    call (a tuple, unpacked), as 1.13 makes it; keyword arguments and a
    submodule without tensor arguments."""
    kp, tp = load(ESCAPING, kiln, tmp_path), load(ESCAPING, torch, tmp_path)
    k, t = kp.Top(), tp.Top()
    x, y = inputs((3, 4), (3, 4))
    kt = quiet_trace(kiln.trace, k, (kiln.from_numpy(x), kiln.from_numpy(y)), check_trace=False)
    tt = quiet_trace(torch.jit.trace, t, (torch.from_numpy(x), torch.from_numpy(y)), check_trace=False)
    for kmod, tmod in ((kt, tt), (kt.deep, tt.deep), (kt.deep.c, tt.deep.c), (kt.c2, tt.c2), (kt.bias, tt.bias),
                       (kt.deep.s, tt.deep.s)):
        assert op_counts(kmod.graph) == op_counts(tmod.graph), f"kiln:\n{kmod.graph}\ntorch:\n{tmod.graph}"
    assert 'prim::CallMethod[name="forward1"](%c2, ' in str(kt.graph)
    x2, y2 = inputs((3, 4), (3, 4), seed=5)
    with torch.no_grad():
        expected = tt(torch.from_numpy(x2), torch.from_numpy(y2))
    assert_same(kt(kiln.from_numpy(x2), kiln.from_numpy(y2)), expected)
    assert_same(kt.c2.count, tt.c2.count)


def test_tracing_a_script_module_is_a_no_op(programs):
    kp, _ = programs
    scripted = kiln.script(kp.Leaf(4))
    with pytest.warns(UserWarning, match="already a ScriptModule"):
        assert kiln.trace(scripted, kiln.from_numpy(inputs((2, 4))[0])) is scripted


def test_traced_module_in_a_traced_function_raises_as_torch(traced):
    # A module object the trace does not hold (not the traced module or one
    # of its submodules) cannot be called.
    k, t, kt, tt = traced
    (x,) = inputs((3, 4))
    message = "but it is not part of the active trace. Modules that are called during a trace must be registered"
    with pytest.raises(RuntimeError, match=message):
        torch.jit.trace(lambda v: tt(v) * 2.0, torch.from_numpy(x), check_trace=False)
    with pytest.raises(RuntimeError, match=message):
        kiln.trace(lambda v: kt(v) * 2.0, kiln.from_numpy(x), check_trace=False)


NESTED = '''
class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3) * 0.5)

    def forward(self, x):
        return torch.relu(x * self.w)


class Outer(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.plain = Inner()

    def forward(self, x):
        return self.inner(x) + self.plain(x)
'''


def test_traced_submodule_is_called_not_retraced(tmp_path):
    kp, tp = load(NESTED, kiln, tmp_path), load(NESTED, torch, tmp_path)
    (x,) = inputs((2, 3))
    kinner = kiln.trace(kp.Inner(), kiln.from_numpy(x))
    tinner = torch.jit.trace(tp.Inner(), torch.from_numpy(x))
    kt = kiln.trace(kp.Outer(kinner), kiln.from_numpy(x))
    tt = torch.jit.trace(tp.Outer(tinner), torch.from_numpy(x))
    assert op_counts(kt.graph) == op_counts(tt.graph), f"kiln:\n{kt.graph}\ntorch:\n{tt.graph}"
    assert kt.inner is kinner
    assert kinner._c.type.method_names() == ["forward"]
    (x2,) = inputs((2, 3), seed=4)
    with torch.no_grad():
        assert_same(kt(kiln.from_numpy(x2)), tt(torch.from_numpy(x2)))


def test_module_traces_on_threads_are_independent(programs):
    import threading
    kp, _ = programs
    (x,) = inputs((3, 4))
    expected = str(kiln.trace(kp.Net(), kiln.from_numpy(x), check_trace=False).graph)
    results, errors = [], []

    def work():
        try:
            for _ in range(3):
                results.append(str(kiln.trace(kp.Net(), kiln.from_numpy(x), check_trace=False).graph))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 9
    for r in results:
        assert op_counts(r) == op_counts(expected)


def test_nn_programs_net_in_train_and_eval(tmp_path):
    """kiln.nn's differential Net (Linear layers, a ModuleList, Sequential,
    constants, a branch on self.training) traced in both modes."""
    from nn_programs import NET
    kp, tp = load(NET, kiln, tmp_path), load(NET, torch, tmp_path)
    x, x2 = inputs((3, 4), (3, 4))
    for training in (True, False):
        k, t = kp.Net(), tp.Net()
        copy_weights(k, t)
        k.train(training)
        t.train(training)
        kt = quiet_trace(kiln.trace, k, kiln.from_numpy(x))
        tt = quiet_trace(torch.jit.trace, t, torch.from_numpy(x))
        assert op_counts(kt.graph) == op_counts(tt.graph), f"kiln:\n{kt.graph}\ntorch:\n{tt.graph}"
        for name, tmod in tt.named_modules():
            kmod = dict(kt.named_modules())[name]
            assert sorted(kmod._c.type.method_names()) == sorted(tmod._c._method_names()), name
        with torch.no_grad():
            assert_same(kt(kiln.from_numpy(x2)), tt(torch.from_numpy(x2)))


TWO_METHODS = '''
class Coder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 2)
        self.dec = nn.Linear(2, 4)

    def encode(self, x):
        return torch.tanh(self.enc(x))

    def forward(self, x):
        return self.dec(self.encode(x))
'''


def test_trace_module_traces_each_named_method(tmp_path):
    kp, tp = load(TWO_METHODS, kiln, tmp_path), load(TWO_METHODS, torch, tmp_path)
    k, t = kp.Coder(), tp.Coder()
    copy_weights(k, t)
    x, x2 = inputs((3, 4), (5, 4))
    kt = kiln.trace_module(k, {"forward": kiln.from_numpy(x), "encode": kiln.from_numpy(x)})
    tt = torch.jit.trace_module(t, {"forward": torch.from_numpy(x), "encode": torch.from_numpy(x)})
    assert sorted(kt._c.type.method_names()) == sorted(tt._c._method_names())
    for name in ("forward", "encode"):
        kg, tg = getattr(kt, name).graph, tt._c._get_method(name).graph
        assert op_counts(kg) == op_counts(tg), f"{name}\nkiln:\n{kg}\ntorch:\n{tg}"
    assert sorted(kt.enc._c.type.method_names()) == sorted(tt.enc._c._method_names())
    with torch.no_grad():
        assert_same(kt.encode(kiln.from_numpy(x2)), tt.encode(torch.from_numpy(x2)))
        assert_same(kt(kiln.from_numpy(x2)), tt(torch.from_numpy(x2)))


SHARED = '''
class Cat(nn.Module):
    def forward(self, xs):
        return [x * 2.0 for x in xs]

class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3) * 0.3)
    def forward(self, x):
        return x * self.w

class User(nn.Module):
    def __init__(self, shared):
        super().__init__()
        self.shared = shared
    def forward(self, x):
        return self.shared(x) + 1.0

class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.cat = Cat()
        sh = Shared()
        self.a = User(sh)
        self.b = User(sh)
        self.seq = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    def forward(self, x, y):
        p, q = self.cat([x, y])
        r = self.a(p) + self.b(q)
        return {"out": self.seq(r), "p": p}
'''


def test_shared_submodule_list_arguments_dict_output(tmp_path):
    """A submodule shared by two parents (torch's module map keeps the last
    name: its calls become methods of one copy), a list argument, a list
    result unpacked by the caller, Sequential, a dict output (strict=False)."""
    kp, tp = load(SHARED, kiln, tmp_path), load(SHARED, torch, tmp_path)
    k, t = kp.Top(), tp.Top()
    copy_weights(k, t)
    x, y = inputs((2, 3), (2, 3))
    kt = quiet_trace(kiln.trace, k, (kiln.from_numpy(x), kiln.from_numpy(y)), strict=False)
    tt = quiet_trace(torch.jit.trace, t, (torch.from_numpy(x), torch.from_numpy(y)), strict=False)
    kmods = dict(kt.named_modules())
    for name, tmod in tt.named_modules():
        kmod = kmods[name]
        assert sorted(kmod._c.type.method_names()) == sorted(tmod._c._method_names()), name
        for method in tmod._c._method_names():
            kg, tg = kmod._c.get_method(method).graph, tmod._c._get_method(method).graph
            assert op_counts(kg) == op_counts(tg), f"{name}.{method}\nkiln:\n{kg}\ntorch:\n{tg}"
    x2, y2 = inputs((2, 3), (2, 3), seed=9)
    with torch.no_grad():
        expected = tt(torch.from_numpy(x2), torch.from_numpy(y2))
    got = kt(kiln.from_numpy(x2), kiln.from_numpy(y2))
    assert sorted(got) == sorted(expected)
    for key in expected:
        assert_same(got[key], expected[key])


SCRIPTED_PARENT = '''
class Parent(nn.Module):
    def __init__(self, sub):
        super().__init__()
        self.sub = sub

    def forward(self, x):
        return self.sub(x) + 1.0
'''


def test_scripting_a_module_holding_a_traced_one(tmp_path):
    """kiln.script of a module whose submodule is a traced module calls the traced forward, as torch."""
    kp = load(NESTED + SCRIPTED_PARENT, kiln, tmp_path)
    tp = load(NESTED + SCRIPTED_PARENT, torch, tmp_path)
    (x,) = inputs((2, 3))
    kinner = kiln.trace(kp.Inner(), kiln.from_numpy(x))
    tinner = torch.jit.trace(tp.Inner(), torch.from_numpy(x))
    ks, ts = kiln.script(kp.Parent(kinner)), torch.jit.script(tp.Parent(tinner))
    assert op_counts(ks.graph) == op_counts(ts.graph)
    assert kinner.forward.schema.startswith("forward(")
    (x2,) = inputs((2, 3), seed=2)
    with torch.no_grad():
        assert_same(ks(kiln.from_numpy(x2)), ts(torch.from_numpy(x2)))
