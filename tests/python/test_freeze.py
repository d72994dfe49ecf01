"""kiln.freeze against torch.jit.freeze (torch 1.13): the same module
scripted by torch and loaded by kiln (kiln.load of torch.jit.save's archive),
or written once for torch.nn and kiln.nn and scripted by each, frozen by both;
the frozen modules must compute the same results, keep the same attributes,
and (where the graphs are comparable) have the same nodes. Also the errors,
preserved attributes and methods, mutated attributes, and the frozen-graph
optimizations (dropout removal, convolution/linear + batch norm folding,
convolution + add/sub/mul/div folding; the tests that need those operators
skip when kiln lacks them)."""
import io
from collections import Counter
from typing import List

import numpy as np
import pytest
import torch

from conftest import assert_same
import kiln

KILN_OPS = kiln._C._operators("aten")


def needs_ops(*names):
    missing = [n for n in names if n not in KILN_OPS]
    return pytest.mark.skipif(bool(missing), reason=f"kiln lacks aten::{', aten::'.join(missing)}")


def load_in_kiln(scripted):
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    return kiln.load(io.BytesIO(buffer.getvalue()))


def both(module):
    """(torch's scripted module, kiln's module loaded from its archive), in eval mode."""
    scripted = torch.jit.script(module.eval())
    return scripted, load_in_kiln(scripted).eval()


def node_kinds(graph, skip=("prim::Constant",)):
    """The kinds of every node, nested blocks included, as a Counter."""
    kinds = Counter()

    def visit(block):
        for node in block.nodes():
            if node.kind() not in skip:
                kinds[node.kind()] += 1
            for b in node.blocks():
                visit(b)

    visit(graph)
    return kinds


def inputs(*shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return torch.from_numpy(x.copy()), kiln.from_numpy(x.copy())


def randomize_stats(module, seed=0):
    """Running statistics and affine parameters that are not the identity."""
    g = torch.Generator().manual_seed(seed)
    for m in module.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(m.num_features, generator=g))
                m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                if m.affine:
                    m.weight.copy_(torch.randn(m.num_features, generator=g))
                    m.bias.copy_(torch.randn(m.num_features, generator=g))
    return module


# --- freezing itself ----------------------------------------------------------------------------

class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.tensor([1.5, -2.0, 0.25]))
        self.register_buffer("shift", torch.tensor([0.5, 1.0, -1.0]))
        self.factor = 3

    def forward(self, x):
        if self.training:
            x = x * 0
        return x * self.weight + self.shift * self.factor


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = Scale()
        self.lin = torch.nn.Linear(3, 4)
        self.unused = torch.nn.Linear(3, 3)
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)])
        self.offsets: List[float] = [0.5, -0.5]

    def forward(self, x):
        y = self.lin(self.scale(x))
        for layer in self.layers:
            y = layer(y)
        return y + self.offsets[0]


def test_freeze_matches_torch():
    scripted, loaded = both(Net())
    t_frozen, k_frozen = torch.jit.freeze(scripted), kiln.freeze(loaded)
    tx, kx = inputs(5, 3)
    assert_same(k_frozen(kx), t_frozen(tx))
    assert_same(k_frozen(kx), scripted(tx))
    # Parameters, buffers, submodules and attributes became constants.
    assert list(k_frozen.named_parameters()) == []
    assert list(k_frozen.state_dict()) == list(t_frozen.state_dict()) == []
    assert [n for n, _ in k_frozen.named_children()] == [n for n, _ in t_frozen.named_children()] == []
    assert "prim::GetAttr" not in str(k_frozen.graph)
    assert "prim::CallMethod" not in str(k_frozen.graph)
    assert node_kinds(k_frozen.graph) == node_kinds(t_frozen.graph)
    # The original is untouched and still runs.
    assert len(list(loaded.parameters())) == len(list(scripted.parameters()))
    assert_same(loaded(kx), scripted(tx))
    assert "prim::GetAttr" in str(loaded.graph) or "prim::CallMethod" in str(loaded.graph)


def test_freeze_kiln_script_matches_torch():
    def build(nn):
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 4)
                self.bias = nn.Parameter(nn.Linear(1, 4).bias.detach().clone())
                self.gain = 2.0

            def forward(self, x):
                y = self.lin(x) * self.gain
                if self.training:
                    y = y * 0.0
                return y + self.bias

        return Block()

    t_module = build(torch.nn)
    k_module = build(kiln.nn)
    k_module.load_state_dict({k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in t_module.state_dict().items()})
    t_frozen = torch.jit.freeze(torch.jit.script(t_module.eval()))
    k_frozen = kiln.freeze(kiln.script(k_module.eval()))
    tx, kx = inputs(2, 3)
    assert_same(k_frozen(kx), t_frozen(tx))
    assert node_kinds(k_frozen.graph) == node_kinds(t_frozen.graph)
    assert list(k_frozen.parameters()) == []
    assert kiln.jit.freeze is kiln.freeze


class Counter2(torch.nn.Module):
    """Attributes the forward writes stay attributes."""

    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(1))
        self.register_buffer("k", torch.ones(2))
        self.calls = 0

    def forward(self, x):
        self.seen.add_(1.0)
        y = self.k
        y.mul_(2.0)
        self.calls = self.calls + 1
        return x + self.k + self.seen


def test_mutated_attributes_are_preserved():
    scripted, loaded = both(Counter2())
    t_frozen, k_frozen = torch.jit.freeze(scripted), kiln.freeze(loaded)
    tx, kx = inputs(2)
    for _ in range(3):
        assert_same(k_frozen(kx), t_frozen(tx))
    assert k_frozen.calls == t_frozen.calls == 3
    assert_same(k_frozen.seen, t_frozen.seen)
    assert node_kinds(k_frozen.graph) == node_kinds(t_frozen.graph)
    assert k_frozen.graph.str().count("prim::GetAttr") == t_frozen.graph.str().count("prim::GetAttr")


def test_input_mutation_does_not_preserve_weights():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("k", torch.ones(2))

        def forward(self, x):
            x.add_(1.0)
            return x + self.k

    scripted, loaded = both(M())
    t_frozen, k_frozen = torch.jit.freeze(scripted), kiln.freeze(loaded)
    assert "prim::GetAttr" not in str(k_frozen.graph)
    tx, kx = inputs(2)
    assert_same(k_frozen(kx), t_frozen(tx))
    assert_same(kx, tx)


class Versioned(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.version = 1
        self.weight = torch.nn.Parameter(torch.tensor([2.0, 3.0]))

    def forward(self, x):
        return x * self.weight + self.version


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Versioned()
        self.other = Versioned()
        self.scale = 2.0

    def forward(self, x):
        return self.sub(x) * self.scale

    @torch.jit.export
    def helper(self, x):
        self.scale = self.scale + 1.0
        return x + self.other.weight


def test_preserved_attrs_and_methods():
    scripted, loaded = both(Outer())
    names = ["helper", "sub.version"]
    t_frozen, k_frozen = torch.jit.freeze(scripted, names), kiln.freeze(loaded, names)
    tx, kx = inputs(2)
    assert_same(k_frozen(kx), t_frozen(tx))
    assert_same(k_frozen.helper(kx), t_frozen.helper(tx))
    assert k_frozen.scale == t_frozen.scale == 3.0
    assert_same(k_frozen(kx), t_frozen(tx))
    assert k_frozen.sub.version == t_frozen.sub.version == 1
    k_frozen.sub.version = 5
    t_frozen.sub.version = 5
    assert_same(k_frozen(kx), t_frozen(tx))
    assert node_kinds(k_frozen.graph) == node_kinds(t_frozen.graph)
    assert node_kinds(k_frozen.helper.graph) == node_kinds(t_frozen.helper.graph)
    # The original keeps its own scale: attributes that are not tensors are not shared.
    assert loaded.scale == scripted.scale == 2.0
    # Without preserving it, helper is gone with the attributes only it used.
    plain = kiln.freeze(loaded)
    assert not plain._c.has_method("helper")
    assert not hasattr(plain, "scale")


def test_preserved_attribute_stays_settable():
    scripted, loaded = both(Versioned())
    t_frozen, k_frozen = torch.jit.freeze(scripted, ["version"]), kiln.freeze(loaded, ["version"])
    k_frozen.version = 7
    t_frozen.version = 7
    tx, kx = inputs(2)
    assert_same(k_frozen(kx), t_frozen(tx))
    assert list(k_frozen.named_parameters()) == []


def test_shared_types_keep_what_any_instance_needs():
    scripted, loaded = both(Outer())
    names = ["sub.version"]
    t_frozen, k_frozen = torch.jit.freeze(scripted, names), kiln.freeze(loaded, names)
    tx, kx = inputs(2)
    assert_same(k_frozen(kx), t_frozen(tx))
    assert node_kinds(k_frozen.graph) == node_kinds(t_frozen.graph)


def test_freeze_errors():
    scripted, loaded = both(Net())
    loaded.train()
    with pytest.raises(RuntimeError, match=r"Freezing is currently only implemented for modules in eval mode\. "
                                           r"Please call \.eval\(\) on your module before freezing\."):
        kiln.freeze(loaded)
    loaded.eval()
    with pytest.raises(RuntimeError, match="Unknown name: nope"):
        kiln.freeze(loaded, ["nope"])
    with pytest.raises(RuntimeError, match="Unknown name: scale.nope"):
        kiln.freeze(loaded, ["scale.nope"])
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule as input"):
        kiln.freeze(kiln.nn.Linear(2, 2).eval())
    with pytest.raises(TypeError):
        kiln.freeze(loaded, [3])
    # The same errors in torch.
    with pytest.raises(RuntimeError, match="Unknown name: nope"):
        torch.jit.freeze(scripted, ["nope"])


def test_frozen_module_can_be_frozen_again_and_saved():
    scripted, loaded = both(Net())
    k_frozen = kiln.freeze(loaded)
    buffer = io.BytesIO()
    kiln.save(k_frozen, buffer)
    reloaded_in_torch = torch.jit.load(io.BytesIO(buffer.getvalue()))
    tx, kx = inputs(4, 3)
    assert_same(k_frozen(kx), reloaded_in_torch(tx))
    reloaded_in_kiln = kiln.load(io.BytesIO(buffer.getvalue()))
    assert_same(reloaded_in_kiln(kx), scripted(tx))


def test_torch_frozen_archive_loads_and_matches():
    scripted, _ = both(Net())
    t_frozen = torch.jit.freeze(scripted)
    k_loaded = load_in_kiln(t_frozen)
    tx, kx = inputs(3, 3)
    assert_same(k_loaded(kx), t_frozen(tx))


def test_dropout_removed_from_graph_ir():
    graph = kiln.parse_ir("""
graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = aten::dropout(%x, %p, %f)
  %b : Tensor = aten::feature_dropout(%a, %p, %f)
  %c : Tensor = aten::alpha_dropout(%b, %p, %f)
  %d : Tensor = aten::dropout(%c, %p, %t)
  return (%d)
""")
    kiln._C._optimize_frozen_graph(graph, False)
    kinds = node_kinds(graph)
    assert kinds == Counter({"aten::dropout": 1}), kinds


@needs_ops("dropout", "feature_dropout")
def test_dropout_removed_like_torch():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.drop = torch.nn.Dropout(0.3)
            self.drop2d = torch.nn.Dropout2d(0.2)

        def forward(self, x):
            return self.drop2d(self.drop(self.lin(x)).unsqueeze(-1)).squeeze(-1)

    scripted, loaded = both(M())
    for numerics in (True, False):
        t_frozen = torch.jit.freeze(scripted, optimize_numerics=numerics)
        k_frozen = kiln.freeze(loaded, optimize_numerics=numerics)
        assert "dropout" not in str(k_frozen.graph)
        assert node_kinds(k_frozen.graph) == node_kinds(t_frozen.graph)
        tx, kx = inputs(2, 3, 4)
        assert_same(k_frozen(kx), t_frozen(tx))


# --- folding ------------------------------------------------------------------------------------

class ConvBn(torch.nn.Module):
    def __init__(self, dims=2, bias=True, affine=True, groups=1):
        super().__init__()
        conv = {1: torch.nn.Conv1d, 2: torch.nn.Conv2d, 3: torch.nn.Conv3d}[dims]
        bn = {1: torch.nn.BatchNorm1d, 2: torch.nn.BatchNorm2d, 3: torch.nn.BatchNorm3d}[dims]
        self.conv = conv(4, 6, 3, padding=1, bias=bias, groups=groups)
        self.bn = bn(6, eps=1e-3, affine=affine)
        shape = [1, 6] + [1] * dims
        self.register_buffer("mul", torch.linspace(0.5, 2.0, 6).reshape(shape))
        self.register_buffer("add", torch.linspace(-1.0, 1.0, 6).reshape(shape))

    def forward(self, x):
        y = self.bn(self.conv(x))
        return (y * self.mul - self.add) / 2.0 + 1


@needs_ops("conv1d", "conv2d", "conv3d", "batch_norm")
@pytest.mark.parametrize("dims,bias,affine,groups", [(2, True, True, 1), (2, False, False, 2), (1, True, True, 1),
                                                     (3, False, True, 1)])
def test_conv_batch_norm_arith_folding_matches_torch(dims, bias, affine, groups):
    scripted, loaded = both(randomize_stats(ConvBn(dims, bias, affine, groups)))
    t_frozen, k_frozen = torch.jit.freeze(scripted), kiln.freeze(loaded)
    kinds = node_kinds(k_frozen.graph)
    assert "aten::batch_norm" not in kinds
    assert not any(k in kinds for k in ("aten::mul", "aten::sub", "aten::div", "aten::add")), kinds
    assert kinds == node_kinds(t_frozen.graph)
    tx, kx = inputs(*([2, 4] + [5] * dims))
    assert_same(k_frozen(kx), t_frozen(tx), rtol=1e-4, atol=1e-5)
    assert_same(k_frozen(kx), scripted(tx), rtol=1e-4, atol=1e-5)
    # optimize_numerics=False keeps every op.
    k_plain = kiln.freeze(loaded, optimize_numerics=False)
    t_plain = torch.jit.freeze(scripted, optimize_numerics=False)
    assert node_kinds(k_plain.graph) == node_kinds(t_plain.graph)
    assert_same(k_plain(kx), t_plain(tx), rtol=1e-4, atol=1e-5)
    kiln.jit.run_frozen_optimizations(k_plain)
    assert "aten::batch_norm" not in node_kinds(k_plain.graph)
    assert_same(k_plain(kx), scripted(tx), rtol=1e-4, atol=1e-5)


@needs_ops("conv2d", "batch_norm")
def test_conv_with_two_uses_is_not_folded():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 3, 1)
            self.bn = torch.nn.BatchNorm2d(3)

        def forward(self, x):
            y = self.conv(x)
            return self.bn(y) + y

    scripted, loaded = both(randomize_stats(M()))
    t_frozen, k_frozen = torch.jit.freeze(scripted), kiln.freeze(loaded)
    assert node_kinds(k_frozen.graph) == node_kinds(t_frozen.graph)
    tx, kx = inputs(1, 3, 4, 4)
    assert_same(k_frozen(kx), t_frozen(tx), rtol=1e-4, atol=1e-5)


@needs_ops("batch_norm")
@pytest.mark.parametrize("bias", [True, False])
def test_linear_batch_norm_folding(bias):
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(5, 4, bias=bias)
            self.bn = torch.nn.BatchNorm1d(4)

        def forward(self, x):
            return self.bn(self.lin(x))

    scripted, loaded = both(randomize_stats(M()))
    k_frozen = kiln.freeze(loaded)
    # Folded under a rank check: the batch norm only runs for inputs that are not 2-D.
    tx, kx = inputs(3, 5)
    assert_same(k_frozen(kx), scripted(tx), rtol=1e-4, atol=1e-5)
    # 3-D input: BatchNorm1d over dim 1 (4 channels, as many as the linear's
    # features, which folding must not confuse).
    tx3, kx3 = inputs(2, 4, 5)
    assert_same(k_frozen(kx3), scripted(tx3), rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError):
        k_frozen(kiln.ones(5))
    k_plain = kiln.freeze(loaded, optimize_numerics=False)
    assert node_kinds(k_plain.graph)["aten::batch_norm"] == 1


def test_linear_batch_norm_folding_ir():
    """With batch_norm absent, the fold still happens on the graph: linear
    followed by batch norm becomes a branch on the input's rank."""
    graph = kiln.parse_ir("""
graph(%x : Tensor):
  %w : Float(4, 5, strides=[5, 1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  %b : Float(4, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  %none : NoneType = prim::Constant()
  %f : bool = prim::Constant[value=0]()
  %mom : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %l : Tensor = aten::linear(%x, %w, %b)
  %y : Tensor = aten::batch_norm(%l, %none, %none, %b, %b, %f, %mom, %eps, %f)
  return (%y)
""")
    kiln._C._optimize_frozen_graph(graph, True)
    kinds = node_kinds(graph)
    assert kinds["prim::If"] == 1 and kinds["aten::linear"] == 2 and kinds["aten::batch_norm"] == 1, kinds
    kiln._C._optimize_frozen_graph(graph, True)  # nothing left to fold
    assert node_kinds(graph) == kinds
