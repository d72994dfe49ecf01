"""nn.ParameterList and nn.ParameterDict, eager and scripted, against torch 1.13."""
from collections import OrderedDict

import numpy as np
import pytest
import torch

import kiln
from script_programs import node_kinds


def model(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(3) * (i + 1)) for i in range(3)])
            self.weights.append(lib.zeros(3))  # a tensor: made a Parameter
            self.extra = lib.nn.ParameterDict({"scale": lib.nn.Parameter(lib.ones(3) * 2)})
            self.extra["shift"] = lib.nn.Parameter(lib.ones(3) * 0.5)

        def forward(self, x):
            for w in self.weights:
                x = x * w + 1
            return x * self.extra["scale"] + self.extra["shift"] + self.weights[-3]

    return Net()


def copy_state(k_net, t_net):
    t_net.load_state_dict({k: torch.tensor(v.numpy()) for k, v in k_net.state_dict().items()})


def test_names_state_dict_and_eager_forward_match_torch():
    k_net, t_net = model(kiln), model(torch)
    assert [n for n, _ in k_net.named_parameters()] == [n for n, _ in t_net.named_parameters()]
    assert list(k_net.state_dict()) == list(t_net.state_dict())
    assert all(isinstance(p, kiln.nn.Parameter) for p in k_net.weights)
    x = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    np.testing.assert_allclose(k_net(kiln.from_numpy(x.copy())).detach().numpy(),
                               t_net(torch.from_numpy(x.copy())).detach().numpy(), rtol=1e-6)


def test_scripted_graph_and_gradients_match_torch():
    k_net, t_net = model(kiln), model(torch)
    copy_state(k_net, t_net)
    k_script, t_script = kiln.script(k_net), torch.jit.script(t_net)
    assert node_kinds(str(k_script.graph)) == node_kinds(str(t_script.graph))
    x = np.random.RandomState(1).randn(2, 3).astype(np.float32)
    k_out, t_out = k_script(kiln.from_numpy(x.copy())), t_script(torch.from_numpy(x.copy()))
    np.testing.assert_allclose(k_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-6)
    k_out.sum().backward()
    t_out.sum().backward()
    for (name, kp), (_, tp) in zip(k_net.named_parameters(), t_net.named_parameters()):
        np.testing.assert_allclose(kp.grad.numpy(), tp.grad.numpy(), rtol=1e-5, err_msg=name)


def test_scripted_bad_index_and_key_raise():
    class BadIndex(kiln.nn.Module):
        def __init__(self):
            super().__init__()
            self.ps = kiln.nn.ParameterList([kiln.nn.Parameter(kiln.ones(1))])

        def forward(self, x):
            return x + self.ps[3]

    class BadKey(kiln.nn.Module):
        def __init__(self):
            super().__init__()
            self.pd = kiln.nn.ParameterDict({"a": kiln.nn.Parameter(kiln.ones(1))})

        def forward(self, x):
            return x + self.pd["b"]

    with pytest.raises(Exception, match="out of range"):
        kiln.script(BadIndex())
    with pytest.raises(Exception, match="no key 'b'"):
        kiln.script(BadKey())


def test_parameter_list_api_as_torch():
    for lib in (kiln, torch):
        pl = lib.nn.ParameterList([lib.ones(2)])
        pl.extend([lib.zeros(2), lib.nn.Parameter(lib.ones(1))])
        pl += [lib.ones(4)]
        assert len(pl) == 4
        assert [list(p.shape) for p in pl] == [[2], [2], [1], [4]]
        assert [list(p.shape) for p in pl[1:3]] == [[2], [1]]
        assert list(pl[-1].shape) == [4]
        pl[0] = lib.ones(5)
        assert isinstance(pl[0], lib.nn.Parameter) and list(pl[0].shape) == [5]
        with pytest.raises(IndexError, match="index 4 is out of range"):
            pl[4]
        with pytest.raises(RuntimeError, match="ParameterList should not be called"):
            pl(lib.ones(1))


def test_parameter_dict_api_as_torch():
    results = []
    for lib in (kiln, torch):
        pd = lib.nn.ParameterDict({"b": lib.ones(1), "a": lib.ones(2)})  # a plain dict: sorted keys
        pd.update([("c", lib.ones(3))])
        pd.update(OrderedDict([("e", lib.ones(4)), ("d", lib.ones(5))]))
        assert isinstance(pd["a"], lib.nn.Parameter)
        keys = list(pd)
        assert "c" in pd and "z" not in pd
        popped = pd.pop("c")
        shapes = [list(v.shape) for v in pd.values()]
        got = pd.get("zz")
        pd.setdefault("f", lib.zeros(6))
        copy = pd.copy()
        del pd["a"]
        results.append((keys, list(popped.shape), shapes, got, list(pd.keys()), len(copy),
                        [k for k, _ in pd.items()], list(reversed(pd))))
        pd.clear()
        assert len(pd) == 0 and list(pd.parameters()) == []
    assert results[0] == results[1]


def test_archives_cross_between_torch_and_kiln(tmp_path):
    k_net, t_net = model(kiln), model(torch)
    copy_state(k_net, t_net)
    x = np.random.RandomState(2).randn(2, 3).astype(np.float32)
    torch.jit.save(torch.jit.script(t_net), str(tmp_path / "t.pt"))
    kiln.save(kiln.script(k_net), str(tmp_path / "k.pt"))
    from_torch = kiln.load(str(tmp_path / "t.pt"))
    from_kiln = torch.jit.load(str(tmp_path / "k.pt"))
    expected = t_net(torch.from_numpy(x.copy())).detach().numpy()
    np.testing.assert_allclose(from_torch(kiln.from_numpy(x.copy())).detach().numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(from_kiln(torch.from_numpy(x.copy())).detach().numpy(), expected, rtol=1e-6)
