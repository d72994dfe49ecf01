"""kiln.script(module_instance), differential against torch.jit.script: the
same module source loaded with torch's names and with kiln's, scripted in
both, gives equal results (train and eval), state_dict keys, parameters
shared with the eager module, class type names and sharing, and forward
graphs with the same prim::GetAttr / prim::SetAttr / prim::CallMethod counts."""
import re
from collections import Counter, OrderedDict

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same
from nn_programs import NET, both, copy_weights, inputs, load
from script_programs import node_kinds

MODULE_OPS = ("prim::GetAttr", "prim::SetAttr", "prim::CallMethod")


def module_op_counts(graph):
    counts = Counter(node_kinds(str(graph)))
    return {op: counts[op] for op in MODULE_OPS}


def plain_type_name(name):
    """A class type name without the loaded module's name and the mangling
    (which depends on what was scripted before in the process)."""
    name = re.sub(r"__torch__\.nn_program_(kiln|torch)_\d+\.", "__torch__.PROGRAM.", name)
    return re.sub(r"___torch_mangle_\d+\.", "", name)


def torch_type_name(script_module):
    return script_module._c._type().qualified_name()


@pytest.fixture
def nets(tmp_path):
    """(kiln Net, torch Net) with equal weights, eager."""
    k, t = load(NET, kiln, tmp_path).Net(), load(NET, torch, tmp_path).Net()
    copy_weights(k, t)
    return k, t


@pytest.fixture
def scripted(nets):
    k, t = nets
    return k, t, kiln.script(k), torch.jit.script(t)


def run(module, *args):
    with torch.no_grad():
        return module(*args)


def test_forward_matches_torch_in_train_and_eval(scripted):
    k, t, ks, ts = scripted
    x, b = inputs((3, 4), (4,))
    for mode in (True, False):
        ks.train(mode)
        ts.train(mode)
        for bias in (None, b):
            kb, tb = (None, None) if bias is None else both(bias)
            expected = run(ts, both(x)[1], tb)
            assert_same(ks(both(x)[0], kb), expected, rtol=1e-4, atol=1e-5)
            # The eager module computes the same in the same mode.
            k.train(mode)
            assert_same(k(both(x)[0], kb), expected, rtol=1e-4, atol=1e-5)


def test_training_flag_is_visible_in_script(scripted):
    k, _, ks, _ = scripted
    x, = inputs((2, 4))
    train_out = ks(both(x)[0]).numpy()
    assert ks.eval() is ks
    assert not ks.training and not ks.blocks[2].training and not ks.out[1].training
    assert k.training  # the eager module keeps its own flag, as in torch
    eval_out = ks(both(x)[0]).numpy()
    assert not np.allclose(train_out, eval_out)
    ks.train()
    np.testing.assert_allclose(ks(both(x)[0]).numpy(), train_out, rtol=1e-6)


def test_state_dict_and_parameters(scripted):
    k, t, ks, ts = scripted
    # The eager module's keys and order (torch's scripted state_dict also
    # lists non-persistent buffers; kiln keeps the eager module's).
    assert list(ks.state_dict()) == list(k.state_dict()) == list(t.state_dict())
    assert [n for n, _ in ks.named_parameters()] == [n for n, _ in ts.named_parameters()]
    assert len(list(ks.parameters())) == len(list(ts.parameters()))
    assert [n for n, _ in ks.named_buffers()] == [n for n, _ in ts.named_buffers()]
    assert [n for n, _ in ks.named_modules()] == [n for n, _ in ts.named_modules()]
    assert [n for n, _ in ks.named_children()] == [n for n, _ in ts.named_children()]


def test_parameters_are_shared_with_the_eager_module(scripted):
    k, t, ks, ts = scripted
    assert ks.inp.weight is k.inp.weight and ts.inp.weight is t.inp.weight
    assert next(iter(ks.parameters())) is next(iter(k.parameters()))
    assert ks.running is k.running
    x, = inputs((2, 4))
    before = ks(both(x)[0]).numpy()
    with kiln.no_grad():  # torch allows this only outside autograd too
        k.weight.mul_(2.0)  # in place on the eager parameter: the scripted module sees it
    with torch.no_grad():
        t.weight.mul_(2.0)
    after = ks(both(x)[0])
    assert not np.allclose(before, after.numpy())
    assert_same(after, run(ts, both(x)[1]), rtol=1e-4, atol=1e-5)


def test_load_state_dict_round_trip(scripted, tmp_path):
    k, t, ks, ts = scripted
    other = load(NET, kiln, tmp_path).Net()
    ks.load_state_dict(other.state_dict())
    for name, value in other.state_dict().items():
        np.testing.assert_array_equal(ks.state_dict()[name].numpy(), value.numpy(), err_msg=name)
        # In place, so the eager module (sharing the tensors) has them too.
        np.testing.assert_array_equal(k.state_dict()[name].numpy(), value.numpy(), err_msg=name)
    other.load_state_dict(ks.state_dict())


def test_load_state_dict_bad_keys_matches_torch(scripted):
    _, _, ks, ts = scripted
    messages = []
    for module, lib in ((ks, kiln), (ts, torch)):
        state = OrderedDict(module.state_dict())
        del state["blocks.0.fc.weight"]
        state["blocks.0.fc.extra"] = lib.zeros(1)
        with pytest.raises(RuntimeError) as info:
            module.load_state_dict(state)
        messages.append(str(info.value).replace("RecursiveScriptModule", "ScriptModule"))
    assert messages[0] == messages[1]
    assert 'Missing key(s) in state_dict: "blocks.0.fc.weight"' in messages[0]


def test_graph_module_ops_match_torch(scripted):
    _, _, ks, ts = scripted
    assert module_op_counts(ks.graph) == module_op_counts(ts.graph)
    assert module_op_counts(ks.forward.graph)["prim::CallMethod"] == 7  # inp, 3 blocks, helper, blocks[0], out
    assert module_op_counts(ks.blocks[0].graph) == module_op_counts(ts.blocks._modules["0"].graph)
    assert module_op_counts(ks.out.graph) == module_op_counts(ts.out.graph)
    assert module_op_counts(ks.helper.graph) == module_op_counts(ts.helper.graph)


def test_class_types_named_and_shared_as_torch(scripted):
    _, _, ks, ts = scripted
    torch_modules = dict(ts.named_modules())  # torch's ScriptModules have no get_submodule
    for path in ("", "inp", "blocks", "blocks.0", "blocks.2", "out", "out.0", "out.1"):
        k_module, t_module = ks.get_submodule(path), torch_modules[path]
        assert plain_type_name(k_module._c.type.name) == plain_type_name(torch_type_name(t_module)), path
    assert plain_type_name(ks.blocks._c.type.name) == "__torch__.torch.nn.modules.container.ModuleList"
    assert plain_type_name(ks.inp._c.type.name) == "__torch__.torch.nn.modules.linear.Linear"
    # The three blocks have equal concrete types: one class type.
    assert ks.blocks[0]._c.type.name == ks.blocks[1]._c.type.name == ks.blocks[2]._c.type.name
    assert ks.original_name == "Net" and ks.blocks[0].original_name == "Block"


def test_every_module_type_has_training(scripted):
    _, _, ks, _ = scripted
    for module in ks.modules():
        assert ("training", "bool", "attribute") in module._c.type.attributes()


def test_type_sharing_between_instances(tmp_path):
    mod = load(NET, kiln, tmp_path)
    a, b = kiln.script(mod.Net()), kiln.script(mod.Net())
    assert a._c.type.name == b._c.type.name
    # A different attribute type is a different concrete type: the name is mangled.
    c = kiln.script(mod.Block(4, 2))  # scale: int, not float
    assert c._c.type.name != a.blocks[0]._c.type.name
    assert "___torch_mangle_" in c._c.type.name


def test_attributes_constants_and_methods(scripted):
    _, _, ks, ts = scripted
    assert ks.eps == ts.eps == 0.001 and ks.depth == ts.depth == 3
    assert ks.steps == 0 and ks.blocks[1].scale == 1.5
    assert plain_type_name(ks.forward.schema) == plain_type_name(str(ts.forward.schema))
    ks.steps = 7
    assert ks.steps == 7
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        ks.nothing
    assert "forward" in dir(ks) and "helper" in dir(ks)
    assert "original_name=Net" in repr(ks)
    optimized = str(ks.forward.graph_for(kiln.ones(2, 4)))
    assert "aten::linear" in optimized and "prim::CallMethod" not in optimized  # calls are inlined


EXTRAS = '''
from typing import Dict, List, Optional, Tuple


class Extras(nn.Module):
    maybe: Optional[int]

    def __init__(self):
        super().__init__()
        self.maybe = None
        self.sizes = [1, 2]
        self.table = {"a": 1}
        self.pair = (1, 2.5)
        self.lin = nn.Linear(2, 2, bias=False)
        self.nothing = None
        self.steps = 0

    def forward(self, x):
        self.steps += 1
        maybe = self.maybe
        if maybe is not None:
            x = x + maybe
        return self.lin(x) + self.sizes[1] + self.table["a"] + self.pair[1]

    @torch.jit.export
    def bump(self, k: int) -> int:
        self.steps = self.steps + k
        return self.steps

    @torch.jit.ignore
    def python_only(self):
        return "python " + str(self.steps)

    def never_called(self):
        return print(self.nothing.anything)


class UsesObject(nn.Module):
    def __init__(self):
        super().__init__()
        self.thing = object()

    def forward(self, x):
        return x + self.thing


class ExportsBadMethod(nn.Module):
    def __init__(self):
        super().__init__()
        self.thing = object()

    def forward(self, x):
        return x * 2

    @torch.jit.export
    def bad(self, x):
        return x + self.thing


class IgnoresObject(nn.Module):
    __jit_ignored_attributes__ = ["thing"]

    def __init__(self):
        super().__init__()
        self.thing = object()
        self.n = 2

    def forward(self, x):
        return x * self.n


class HoldsObject(nn.Module):
    def __init__(self):
        super().__init__()
        self.thing = object()

    def forward(self, x):
        return x * 2


class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh()})
        self.blocks = nn.ModuleList([nn.Sigmoid(), nn.Identity()])

    def forward(self, x):
        out: List[torch.Tensor] = []
        for name, head in self.heads.items():
            out.append(head(x))
        for i, block in enumerate(self.blocks):
            out.append(block(x) * i)
        return out

    @torch.jit.export
    def count(self) -> int:
        return len(self.blocks) * 10 + len(self.heads)


class CallsIgnored(nn.Module):
    def forward(self, x, flag: bool):
        if flag:
            return self.debug(x)
        return x + 1

    @torch.jit.ignore
    def debug(self, x: torch.Tensor) -> torch.Tensor:
        return x * 100


class Counter:
    def __init__(self, start: int):
        self.n = start

    def bump(self) -> int:
        self.n += 1
        return self.n


Counter = torch.jit.script(Counter)


class UsesCounter(nn.Module):
    def __init__(self):
        super().__init__()
        self.counter = Counter(3)

    def forward(self, x):
        return x + self.counter.bump()


def doubled(x):
    return x * 2


class UsesJit(nn.Module):
    def forward(self, x):
        sizes = torch.jit.annotate(List[int], [])
        sizes.append(x.dim())
        return doubled(x * sizes[0])


class Base(nn.Module):
    def forward(self, x):
        return self.act(x) + 1

    def act(self, x):
        return x


class Derived(Base):
    def act(self, x):
        return torch.relu(x) - self.shift()

    def shift(self) -> float:
        return 0.5


class Step(nn.Module):
    def __init__(self, k: float):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x + self.k

    def scaled(self, x):
        return x * self.k

    def not_torchscript(self):
        return f"{self.k}"


class CallsHelpers(nn.Module):
    def __init__(self):
        super().__init__()
        self.one = Step(2.0)
        self.steps = nn.ModuleList([Step(3.0), Step(4.0)])
        self.named = nn.ModuleDict({"a": Step(5.0)})

    def forward(self, x):
        y = self.one.scaled(x) + self.steps[1].scaled(x)
        for step in self.steps:
            y = y + step.scaled(x)
        for i, step in enumerate(self.steps):
            y = y + step(x) * i
        for step in self.named.values():
            y = step.scaled(y)
        return y


class Parent(nn.Module):
    def __init__(self, child):
        super().__init__()
        self.child = child

    def forward(self, x):
        return self.child(x) + 1
'''


@pytest.fixture
def extras(tmp_path):
    return load(EXTRAS, kiln, tmp_path), load(EXTRAS, torch, tmp_path)


def test_attribute_kinds_and_setattr(extras):
    km, tm = extras
    k, t = km.Extras(), tm.Extras()
    copy_weights(k, t)
    ks, ts = kiln.script(k), torch.jit.script(t)
    x, = inputs((3, 2))
    assert_same(ks(both(x)[0]), run(ts, both(x)[1]), rtol=1e-5, atol=1e-6)
    assert ks.steps == ts.steps == 1 and k.steps == t.steps == 0  # attributes are copies
    assert ks.bump(3) == ts.bump(3) == 4
    assert ks.python_only() == ts.python_only() == "python 4"
    assert ks.sizes == ts.sizes and ks.table == ts.table and ks.pair == ts.pair and ks.nothing is None
    ks.maybe = 5
    ts.maybe = 5
    assert_same(ks(both(x)[0]), run(ts, both(x)[1]), rtol=1e-5, atol=1e-6)
    for name in ("forward", "bump"):
        assert module_op_counts(getattr(ks, name).graph) == module_op_counts(getattr(ts, name).graph), name
    assert not ks._c.has_method("never_called") and not ks._c.has_method("python_only")


def test_unscriptable_attribute_used_in_forward(extras):
    km, tm = extras
    with pytest.raises(RuntimeError) as torch_info:
        torch.jit.script(tm.UsesObject())
    with pytest.raises(RuntimeError) as kiln_info:
        kiln.script(km.UsesObject())
    expected = "Module 'UsesObject' has no attribute 'thing' (This attribute exists on the Python module, but " \
               "we failed to convert Python type: 'object' to a TorchScript type."
    assert expected in str(torch_info.value)
    assert expected in str(kiln_info.value)
    # Unused, it is no error.
    assert_same(kiln.script(km.HoldsObject())(kiln.ones(2)), torch.ones(2) * 2)


def test_jit_ignored_attributes(extras):
    km, tm = extras
    k, t = km.IgnoresObject(), tm.IgnoresObject()
    ks, ts = kiln.script(k), torch.jit.script(t)
    assert ks.thing is k.thing and ts.thing is t.thing  # kept as Python attributes
    assert ("thing" in [name for name, _, _ in ks._c.type.attributes()]) is False
    assert_same(ks(kiln.ones(2)), run(ts, torch.ones(2)))


def test_scripted_submodule_in_a_new_parent(extras):
    km, _ = extras
    child = kiln.script(km.Extras())
    parent = kiln.script(km.Parent(child))
    assert parent.child is child  # as torch: an already scripted submodule is used as it is
    x = kiln.ones(1, 2)
    np.testing.assert_allclose(parent(x).numpy(), child(x).numpy() + 1, rtol=1e-6)
    assert child.steps == 2


def test_script_twice_reuses_the_compiled_type(extras):
    km, _ = extras
    a, b = kiln.script(km.Extras()), kiln.script(km.Extras())
    assert a._c.type.name == b._c.type.name
    assert a.bump(1) == 1 and b.bump(2) == 2 and a.steps == 1  # separate objects


def test_script_of_script_module_is_itself(scripted):
    _, _, ks, _ = scripted
    assert kiln.script(ks) is ks


def test_sequential_scripted():
    x, = inputs((2, 3))
    pair = []
    for lib in (kiln, torch):
        pair.append(lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2), lib.nn.Sigmoid()))
    copy_weights(*pair)
    ks, ts = kiln.script(pair[0]), torch.jit.script(pair[1])
    assert_same(ks(both(x)[0]), run(ts, both(x)[1]), rtol=1e-5, atol=1e-6)
    assert len(ks) == 4 and plain_type_name(ks[2]._c.type.name) == "__torch__.torch.nn.modules.linear.Linear"
    assert module_op_counts(ks.graph) == module_op_counts(ts.graph)


def test_module_dict_and_enumerate_unrolled(extras):
    km, tm = extras
    ks, ts = kiln.script(km.Router()), torch.jit.script(tm.Router())
    x, = inputs((2, 3))
    assert_same(ks(both(x)[0]), run(ts, both(x)[1]))
    assert module_op_counts(ks.graph) == module_op_counts(ts.graph)
    assert ks.count() == ts.count() == 22
    assert module_op_counts(ks.count.graph) == module_op_counts(ts.count.graph)  # len() calls __len__
    assert plain_type_name(ks.heads._c.type.name) == "__torch__.torch.nn.modules.container.ModuleDict"
    assert list(ks.heads.keys()) == ["relu", "tanh"] and len(ks.blocks) == 2


def test_ignored_method_called_from_script(extras):
    km, tm = extras
    ks, ts = kiln.script(km.CallsIgnored()), torch.jit.script(tm.CallsIgnored())
    x, = inputs((2,))
    assert_same(ks(both(x)[0], False), run(ts, both(x)[1], False))
    assert_same(ks.debug(both(x)[0]), run(ts.debug, both(x)[1]))  # Python, from Python
    # torch calls back into Python; kiln cannot, and says so when the call runs.
    with pytest.raises(RuntimeError, match="'debug' is marked @kiln.jit.ignore"):
        ks(both(x)[0], True)
    # torch calls the Python method (printed `^debug()`) where kiln calls the compiled stub.
    assert 'prim::CallMethod[name="debug"]' in str(ks.graph) and "^debug" in str(ts.graph)


def test_script_class_attribute(extras):
    km, tm = extras
    ks, ts = kiln.script(km.UsesCounter()), torch.jit.script(tm.UsesCounter())
    for _ in range(2):
        assert_same(ks(kiln.ones(1)), run(ts, torch.ones(1)))
    assert module_op_counts(ks.graph) == module_op_counts(ts.graph)
    assert plain_type_name(ks.counter.type.name) == plain_type_name(torch_type_name(ts)).replace("UsesCounter",
                                                                                                  "Counter")
    assert ks.counter.n == ts.counter.n == 5


def test_jit_builtins_in_module_source(extras):
    km, tm = extras
    x, = inputs((2, 3))
    k, t = km.UsesJit(), tm.UsesJit()
    assert_same(k(both(x)[0]), run(t, both(x)[1]))  # eager: kiln.jit.annotate is the identity
    assert_same(kiln.script(k)(both(x)[0]), run(torch.jit.script(t), both(x)[1]))


def test_inherited_forward_and_overridden_helper(extras):
    km, tm = extras
    x, = inputs((2, 3))
    for name in ("Base", "Derived"):
        k, t = getattr(km, name)(), getattr(tm, name)()
        ks, ts = kiln.script(k), torch.jit.script(t)
        assert_same(ks(both(x)[0]), run(ts, both(x)[1]))
        assert_same(k(both(x)[0]), run(t, both(x)[1]))
        assert module_op_counts(ks.act.graph) == module_op_counts(ts.act.graph)
    assert plain_type_name(ks._c.type.name).endswith(".Derived")


def test_failed_scripting_can_be_retried(tmp_path):
    km = load(EXTRAS, kiln, tmp_path)
    module = km.ExportsBadMethod()  # forward compiles, then bad does not
    for _ in range(2):  # the same error again, not a half-compiled type
        with pytest.raises(RuntimeError, match="has no attribute 'thing'"):
            kiln.script(module)
    module.thing = 3  # now an int attribute: a new concrete type, which compiles
    scripted = kiln.script(module)
    assert_same(scripted(kiln.ones(2)), torch.ones(2) * 2)
    assert_same(scripted.bad(kiln.ones(2)), torch.ones(2) + 3)


def test_wrap_script_object_made_elsewhere(scripted):
    from kiln.nn._script import wrap_script_object
    _, _, ks, _ = scripted
    wrapped = wrap_script_object(ks._c)  # only the object: types, attributes and methods come from it
    x, = inputs((2, 4))
    np.testing.assert_array_equal(wrapped(both(x)[0]).numpy(), ks(both(x)[0]).numpy())
    # Which buffers persist is known to Python only: a wrapped object's are all persistent.
    assert [k for k in wrapped.state_dict() if k != "scratch"] == list(ks.state_dict())
    assert "scratch" in wrapped.state_dict()
    assert [n for n, _ in wrapped.named_modules()] == [n for n, _ in ks.named_modules()]
    assert wrapped.original_name == "Net" and wrapped.blocks[2].original_name == "Block" and len(wrapped.blocks) == 3
    assert wrapped.eps == 0.001 and wrapped.helper.graph is not None
    wrapped.eval()
    assert not ks.training and not ks.blocks[0].training  # one object underneath
    assert wrapped.inp.weight._same_tensor(ks.inp.weight)

    ct = kiln._C._new_class_type("__torch__.Made", True, "")
    ct.add_attribute("training", "bool", "attribute")
    ct.add_attribute("w", "Tensor", "parameter")
    kiln._C._compile_methods(ct, {"forward": ("def forward(self, x):\n    return x * self.w\n", "<made>", 1,
                                              lambda name: None)}, ["forward"])
    obj = kiln._C.ScriptObject(ct)
    obj.setattr("training", True)
    obj.setattr("w", kiln.ones(2) * 3)
    made = wrap_script_object(obj)
    assert made(kiln.ones(2)).tolist() == [3.0, 3.0] and [n for n, _ in made.named_parameters()] == ["w"]
    with pytest.raises(TypeError, match="expected a module object"):
        wrap_script_object(3)


def test_submodule_methods_called_by_name(extras):
    km, tm = extras
    ks, ts = kiln.script(km.CallsHelpers()), torch.jit.script(tm.CallsHelpers())
    x, = inputs((2, 3))
    assert_same(ks(both(x)[0]), run(ts, both(x)[1]))
    assert module_op_counts(ks.graph) == module_op_counts(ts.graph)
    assert ks.one.scaled(kiln.ones(1)).tolist() == [2.0]  # compiled, so callable from Python
    assert not ks.one._c.has_method("not_torchscript")


def test_graph_for_is_forwards_optimized_graph():
    # torch's ScriptModule.graph_for is forward.graph_for.
    scripted = kiln.script(kiln.nn.Sequential(kiln.nn.Linear(3, 4), kiln.nn.ReLU()))
    x = kiln.randn(2, 3)
    assert str(scripted.graph_for(x)) == str(scripted.forward.graph_for(x))
    assert "aten::linear" in str(scripted.graph_for(x))
