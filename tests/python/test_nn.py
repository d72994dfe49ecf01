"""kiln.nn eager modules, differential against torch 1.13: the same module
source loaded with torch's names and with kiln's gives the same state_dict
keys (in order), parameters, module tree, repr, results and errors."""
import re
from collections import OrderedDict

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same
from nn_programs import NET, both, copy_weights, inputs, kiln_state, load


@pytest.fixture
def nets(tmp_path):
    """(kiln Net, torch Net) with equal weights."""
    k, t = load(NET, kiln, tmp_path).Net(), load(NET, torch, tmp_path).Net()
    copy_weights(k, t)
    return k, t


def test_state_dict_keys_and_order(nets):
    k, t = nets
    assert list(k.state_dict().keys()) == list(t.state_dict().keys())
    assert "blocks.0.fc.weight" in k.state_dict()
    assert "scratch" not in k.state_dict()  # not persistent
    assert isinstance(k.state_dict(), OrderedDict)


def test_state_dict_values_alias_but_are_not_parameters(nets):
    k, _ = nets
    sd = k.state_dict()
    assert not isinstance(sd["weight"], kiln.nn.Parameter)
    assert isinstance(k.state_dict(keep_vars=True)["weight"], kiln.nn.Parameter)
    sd["weight"].add_(1.0)  # torch's state_dict values are detached views of the same storage
    assert k.weight.numpy()[0] == sd["weight"].numpy()[0]


def test_named_members_match_torch(nets):
    k, t = nets
    assert [n for n, _ in k.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert len(list(k.parameters())) == len(list(t.parameters()))
    assert [n for n, _ in k.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in k.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in k.named_children()] == [n for n, _ in t.named_children()]
    assert [type(m).__name__ for m in k.modules()] == [type(m).__name__ for m in t.modules()]
    assert [n for n, _ in k.named_parameters(recurse=False)] == [n for n, _ in t.named_parameters(recurse=False)]
    assert [n for n, _ in k.named_parameters(prefix="net")] == [n for n, _ in t.named_parameters(prefix="net")]
    for _, p in k.named_parameters():
        assert isinstance(p, kiln.nn.Parameter) and isinstance(p, kiln.Tensor)


def test_forward_matches_torch(nets):
    k, t = nets
    x, b = inputs((3, 4), (4,))
    for bias in (None, b):
        kb = None if bias is None else both(bias)[0]
        tb = None if bias is None else both(bias)[1]
        with torch.no_grad():
            expected = t(both(x)[1], tb)
        assert_same(k(both(x)[0], kb), expected, rtol=1e-4, atol=1e-5)


def test_train_eval(nets):
    k, t = nets
    x, = inputs((2, 4))
    assert k.training and all(m.training for m in k.modules())
    assert k.eval() is k
    t.eval()
    assert not any(m.training for m in k.modules())
    with torch.no_grad():
        assert_same(k(both(x)[0]), t(both(x)[1]), rtol=1e-4, atol=1e-5)
    k.train()
    assert all(m.training for m in k.modules())
    k.blocks.train(False)
    assert k.training and not k.blocks[1].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        k.train(1)


def test_repr_matches_torch(nets):
    k, t = nets
    assert repr(k) == repr(t)
    assert repr(kiln.nn.ReLU(inplace=True)) == repr(torch.nn.ReLU(inplace=True))


def test_load_state_dict_round_trip(tmp_path):
    src, dst = load(NET, kiln, tmp_path).Net(), load(NET, kiln, tmp_path).Net()
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (name, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    # In place: a tensor held before loading sees the loaded values.
    weight = dst.inp.weight
    dst.load_state_dict({**src.state_dict(), "inp.weight": kiln.zeros(4, 4)})
    assert weight is dst.inp.weight and not weight.numpy().any()


def _both_errors(nets, make_state, strict=True):
    k, t = nets
    errors = []
    for module, lib in ((k, kiln), (t, torch)):
        state = make_state(module, lib)
        with pytest.raises(RuntimeError) as info:
            module.load_state_dict(state, strict=strict)
        errors.append(str(info.value))
    return errors


def test_load_state_dict_missing_and_unexpected_keys(nets):
    def make(module, lib):
        state = OrderedDict(module.state_dict())
        del state["blocks.1.fc.bias"]
        del state["running"]
        state["blocks.1.extra"] = lib.zeros(1)
        state["nope"] = lib.zeros(1)
        return state
    kiln_error, torch_error = _both_errors(nets, make)
    assert kiln_error == torch_error
    assert 'Missing key(s) in state_dict: "running", "blocks.1.fc.bias".' in kiln_error


def test_load_state_dict_non_strict_reports_keys(nets):
    k, t = nets
    results = []
    for module, lib in ((k, kiln), (t, torch)):
        state = OrderedDict(module.state_dict())
        del state["weight"]
        state["extra"] = lib.zeros(1)
        results.append(module.load_state_dict(state, strict=False))
    assert tuple(results[0]) == tuple(results[1]) == (["weight"], ["extra"])


def test_load_state_dict_size_mismatch(nets):
    def make(module, lib):
        state = OrderedDict(module.state_dict())
        state["weight"] = lib.zeros(5)
        return state
    kiln_error, torch_error = _both_errors(nets, make)
    # torch prints shapes as torch.Size([5]); kiln as [5].
    assert kiln_error == re.sub(r"torch\.Size\((\[[^]]*\])\)", r"\1", torch_error)


def test_registration_errors_match_torch():
    def errors(lib):
        out = []
        m = lib.nn.Module()
        m.a = 1
        for action in (
            lambda: m.register_buffer("a", lib.zeros(1)),
            lambda: m.register_buffer("x.y", lib.zeros(1)),
            lambda: m.register_buffer("", lib.zeros(1)),
            lambda: m.register_buffer(3, lib.zeros(1)),
            lambda: m.register_buffer("b", 3),
            lambda: m.register_parameter("p", lib.zeros(1)),
            lambda: m.register_parameter("a", None),
            lambda: m.add_module("sub", 3),
            lambda: m.add_module("a", lib.nn.Module()),
            lambda: m.add_module("s.t", lib.nn.Module()),
        ):
            with pytest.raises(Exception) as info:
                action()
            out.append((type(info.value), str(info.value).replace("torch", "kiln")))
        m.p = lib.nn.Parameter(lib.zeros(1))
        with pytest.raises(TypeError) as info:
            m.p = lib.zeros(1)
        out.append((TypeError, str(info.value).replace("torch", "kiln")))
        m.sub = lib.nn.Module()
        with pytest.raises(TypeError) as info:
            m.sub = 3
        out.append((TypeError, str(info.value).replace("torch", "kiln")))
        return out

    for (kt, km), (tt, tm) in zip(errors(kiln), errors(torch)):
        assert kt is tt, (km, tm)
        # torch names a tensor's type by its dtype (torch.FloatTensor); kiln says kiln.Tensor.
        assert km == re.sub(r"kiln\.\w+Tensor", "kiln.Tensor", tm)


def test_attribute_assignment_moves_between_kinds():
    for lib in (kiln, torch):
        m = lib.nn.Module()
        m.x = lib.nn.Parameter(lib.ones(2))
        assert [n for n, _ in m.named_parameters()] == ["x"]
        m.register_buffer("b", lib.ones(1))
        m.b = lib.zeros(3)  # a tensor assigned to a buffer name stays a buffer
        assert [n for n, _ in m.named_buffers()] == ["b"]
        m.x = None  # None keeps the parameter slot
        assert "x" in m._parameters and m.x is None and list(m.parameters()) == []
        del m.x
        assert not hasattr(m, "x")
        with pytest.raises(AttributeError, match="object has no attribute 'nothing'"):
            m.nothing


def test_parameter_aliases_its_data():
    data = kiln.zeros(3)
    p = kiln.nn.Parameter(data)
    assert isinstance(p, kiln.Tensor) and isinstance(p, kiln.nn.Parameter)
    with kiln.no_grad():  # a leaf that requires grad changes in place only outside autograd, as in torch
        p.add_(2.0)
    assert data.numpy().tolist() == [2.0, 2.0, 2.0]
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert_same(kiln.nn.Parameter(kiln.ones(2)) * 3, torch.nn.Parameter(torch.ones(2)) * 3)
    assert kiln.nn.Parameter().shape == torch.nn.Parameter().shape


def test_shared_parameters_are_counted_once():
    for lib in (kiln, torch):
        m = lib.nn.Module()
        m.a = lib.nn.Linear(2, 2)
        m.b = lib.nn.Linear(2, 2)
        m.b.weight = m.a.weight
        m.c = m.a
        assert len(list(m.parameters())) == 3
        assert [n for n, _ in m.named_modules()] == ["", "a", "b"]
        assert list(m.state_dict()) == ["a.weight", "a.bias", "b.weight", "b.bias", "c.weight", "c.bias"]


def test_module_list_operations():
    for lib in (kiln, torch):
        ml = lib.nn.ModuleList([lib.nn.ReLU(), lib.nn.Tanh()])
        ml.append(lib.nn.Sigmoid())
        ml.extend([lib.nn.Identity()])
        ml.insert(1, lib.nn.Linear(1, 1))
        ml += [lib.nn.ReLU()]
        assert [type(m).__name__ for m in ml] == ["ReLU", "Linear", "Tanh", "Sigmoid", "Identity", "ReLU"]
        assert len(ml) == 6 and type(ml[-1]).__name__ == "ReLU" and type(ml[1]).__name__ == "Linear"
        assert [type(m).__name__ for m in ml[1:3]] == ["Linear", "Tanh"]
        del ml[0]
        assert list(ml._modules) == ["0", "1", "2", "3", "4"]
        ml[0] = lib.nn.Identity()
        assert type(ml[0]).__name__ == "Identity"
        with pytest.raises(IndexError, match="index 9 is out of range"):
            ml[9]
        with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
            ml.extend(3)
        assert type(ml.pop(1)).__name__ == "Tanh" and len(ml) == 4


def test_sequential_and_module_dict():
    x, = inputs((2, 3))
    outs = []
    for lib in (kiln, torch):
        lib.manual_seed(0)
        seq = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        outs.append(seq)
        assert len(seq) == 3 and type(seq[1]).__name__ == "ReLU" and len(seq[:2]) == 2
        md = lib.nn.ModuleDict({"a": lib.nn.ReLU(), "b": lib.nn.Tanh()})
        md["c"] = lib.nn.Identity()
        assert list(md.keys()) == ["a", "b", "c"] and "b" in md and len(md) == 3
        assert [type(v).__name__ for v in md.values()] == ["ReLU", "Tanh", "Identity"]
    k, t = outs
    copy_weights(k, t)
    with torch.no_grad():
        assert_same(k(both(x)[0]), t(both(x)[1]), rtol=1e-5, atol=1e-6)
    assert repr(k) == repr(t)


def test_linear_initialisation_is_bounded():
    lin = kiln.nn.Linear(16, 8)
    assert lin.weight.shape == (8, 16) and lin.bias.shape == (8,)
    assert np.abs(lin.weight.numpy()).max() <= 0.25
    assert kiln.nn.Linear(3, 2, bias=False).bias is None


def test_apply_visits_children_first(nets):
    k, t = nets
    seen = []
    k.apply(lambda m: seen.append(type(m).__name__))
    expected = []
    t.apply(lambda m: expected.append(type(m).__name__))
    assert seen == expected


def test_missing_init_call():
    class Bad(kiln.nn.Module):
        def __init__(self):
            self.p = kiln.nn.Parameter(kiln.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Bad()


def test_forward_not_defined():
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        kiln.nn.Module()(1)


def test_state_dict_of_loaded_torch_weights_is_equal(nets):
    k, t = nets
    for name, value in kiln_state(t).items():
        np.testing.assert_array_equal(k.state_dict()[name].numpy(), value.numpy(), err_msg=name)


def test_double_converts_floating_state(nets):
    k, t = nets
    weight = k.weight
    assert k.double() is k and t.double() is t
    assert k.weight.dtype == kiln.float64 and k.running.dtype == kiln.float64
    assert isinstance(k.weight, kiln.nn.Parameter) and k.weight is not weight
    x, = inputs((2, 4))
    x = x.astype(np.float64)
    with torch.no_grad():
        assert_same(k(both(x)[0]), t(both(x)[1]), rtol=1e-10, atol=1e-12)
    assert k.to(kiln.float32).weight.dtype == kiln.float32 and k.to("cpu") is k


def test_jit_markers_in_eager_mode():
    class M(kiln.nn.Module):
        @kiln.jit.export
        def exported(self, x: int) -> int:
            return x + 1

        @kiln.jit.ignore
        def ignored(self):
            return "python"

        @kiln.jit.ignore(drop=True)
        def dropped(self):
            return "dropped"

        @kiln.jit.unused
        def unused(self):
            return "unused"

    m = M()
    assert m.exported(1) == 2 and m.ignored() == "python" and m.dropped() == "dropped" and m.unused() == "unused"
    assert [kiln.jit.modifier(getattr(m, n)) for n in ("exported", "ignored", "dropped", "unused", "train")] == \
        ["export", "ignore", "ignore", "unused", None]
    assert kiln.jit.annotate(int, 3) == 3 and kiln.jit.is_scripting() is False
    assert kiln.jit.Final is __import__("typing").Final


def test_deepcopy_clones_state_and_keeps_ties(nets):
    import copy
    k, t = nets
    for m in (k, t):
        m.blocks[1].fc.weight = m.blocks[0].fc.weight  # a tied parameter
        m.tied = m.blocks[0]  # the same submodule twice
    k2, t2 = copy.deepcopy(k), copy.deepcopy(t)
    assert list(k2.state_dict()) == list(t2.state_dict())
    assert k2.tied is k2.blocks[0] and k2.blocks[0] is not k.blocks[0]
    assert k2.blocks[1].fc.weight is k2.blocks[0].fc.weight
    assert len(list(k2.parameters())) == len(list(t2.parameters()))
    assert isinstance(k2.weight, kiln.nn.Parameter) and k2.weight is not k.weight
    np.testing.assert_array_equal(k2.weight.numpy(), k.weight.numpy())
    k2.weight.add_(1.0)
    assert not np.array_equal(k2.weight.numpy(), k.weight.numpy())
    x, = inputs((2, 4))
    with torch.no_grad():
        assert_same(copy.deepcopy(k)(both(x)[0]), t2(both(x)[1]), rtol=1e-4, atol=1e-5)
