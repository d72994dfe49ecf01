"""kiln.optimize_for_inference against torch 1.13: every model of the zoo
(tests/python/model_zoo.py), scripted by torch, saved, loaded by kiln and
optimized, computes what torch's model computes (relative error 1e-4, fp32,
eval, no_grad). The optimized graphs hold the fused oneDNN convolutions
(kiln::conv2d_fused) and no layout conversion between consecutive
convolutions; the original module keeps its parameters and code; and the
entry point behaves as torch.jit.optimize_for_inference does (it puts the
module in eval mode, rejects what is not a ScriptModule)."""
import io
from collections import Counter

import numpy as np
import pytest
import torch

import kiln
import model_zoo as zoo
from test_models import MODELS, _kiln_input, _saved, assert_close, torch_case

CNNS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "shufflenet_v2_x0_5", "small_unet"]
_optimized = {}


def node_kinds(graph):
    kinds = Counter()

    def visit(block):
        for node in block.nodes():
            kinds[node.kind()] += 1
            for b in node.blocks():
                visit(b)

    visit(graph)
    return kinds


def optimized(name):
    if name not in _optimized:
        model, x, expected = torch_case(name)
        loaded = kiln.load(io.BytesIO(_saved(torch.jit.script(model))))
        _optimized[name] = (loaded, kiln.optimize_for_inference(loaded))
    return _optimized[name]


@pytest.mark.parametrize("name", list(MODELS))
def test_optimized_archive_matches_torch(name):
    _, x, expected = torch_case(name)
    _, fast = optimized(name)
    assert_close(fast(_kiln_input(x)), expected)
    assert_close(fast(_kiln_input(x)), expected)  # the cached plan


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_optimized_matches_torch_at_other_batch_and_size(name):
    model, _, _ = torch_case(name)
    _, fast = optimized(name)
    x = torch.randn(3, 3, 40, 48)
    with torch.no_grad():
        expected = model(x)
    assert_close(fast(_kiln_input(x)), expected)


def test_traced_archive_optimizes():
    model, x, expected = torch_case("resnet18")
    loaded = kiln.load(io.BytesIO(_saved(torch.jit.trace(model, x))))
    fast = kiln.optimize_for_inference(loaded)
    assert node_kinds(fast.graph)["kiln::conv2d_fused"] == 20
    assert_close(fast(_kiln_input(x)), expected)


@pytest.mark.parametrize("name", CNNS)
def test_convolutions_are_fused(name):
    _, fast = optimized(name)
    kinds = node_kinds(fast.graph)
    assert kinds["kiln::conv2d_fused"] > 0
    assert kinds["aten::conv2d"] == 0
    assert kinds["aten::batch_norm"] == 0


def _convolution_inputs_converted(graph):
    """How many fused convolutions read a kiln::from_blocked of another's output."""
    count = 0
    for node in graph.nodes():
        if node.kind() != "kiln::conv2d_fused":
            continue
        for value in list(node.inputs())[:1] + list(node.inputs())[3:4]:
            producer = value.node()
            if producer.kind() == "kiln::to_blocked":
                source = next(iter(producer.inputs())).node()
                if source.kind() == "kiln::from_blocked":
                    count += 1
    return count


@pytest.mark.skipif(kiln._C._dnnl_channel_block() == 0, reason="no blocked layout on this CPU")
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "squeezenet1_0"])
def test_no_layout_conversion_between_convolutions(name):
    _, fast = optimized(name)
    graph = fast.graph
    kinds = node_kinds(graph)
    # The image enters plain; the classifier reads one conversion back.
    assert kinds["kiln::to_blocked"] == 0
    assert kinds["kiln::from_blocked"] == 1
    assert _convolution_inputs_converted(graph) == 0
    for node in graph.nodes():
        if node.kind() == "kiln::conv2d_fused":
            assert next(iter(node.inputs())).node().kind() != "kiln::from_blocked"


def test_resnet_fuses_residual_and_relu():
    _, fast = optimized("resnet18")
    kinds = node_kinds(fast.graph)
    assert kinds["kiln::blocked_max_pool2d"] == (1 if kiln._C._dnnl_channel_block() else 0)
    assert kinds["aten::add_"] + kinds["aten::add"] == 0
    assert kinds["aten::relu_"] + kinds["aten::relu"] == 0
    assert kinds["kiln::conv2d_fused"] == 20
    # The image's rank check and the classifier's: the others read blocked values, whose rank is known.
    assert kinds["prim::If"] == 2


def test_mobilenet_fuses_relu6():
    _, fast = optimized("mobilenet_v2")
    kinds = node_kinds(fast.graph)
    assert kinds["aten::hardtanh_"] + kinds["aten::hardtanh"] == 0
    assert kinds["aten::add"] == 0


def test_original_module_is_unchanged():
    model, x, expected = torch_case("resnet18")
    loaded = kiln.load(io.BytesIO(_saved(torch.jit.script(model))))
    before = str(loaded.graph)
    params = {k: v.numpy().copy() for k, v in loaded.state_dict().items()}
    kiln.optimize_for_inference(loaded)
    assert str(loaded.graph) == before
    for k, v in loaded.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), params[k])
    assert_close(loaded(_kiln_input(x)), expected)


def test_training_module_is_put_in_eval_mode_like_torch():
    model, x, _ = torch_case("mobilenet_v2")
    scripted = torch.jit.script(model)
    loaded = kiln.load(io.BytesIO(_saved(scripted)))
    scripted.train()
    loaded.train()
    torch_fast = torch.jit.optimize_for_inference(scripted)
    fast = kiln.optimize_for_inference(loaded)
    assert scripted.training is False and loaded.training is False
    with torch.no_grad():
        expected = torch_fast(x)
    assert_close(fast(_kiln_input(x)), expected)


def test_errors_like_torch():
    with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule"):
        kiln.optimize_for_inference(zoo.resnet18(zoo.KILN))
    with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule"):
        torch.jit.optimize_for_inference(zoo.resnet18(zoo.TORCH))


def test_bad_input_raises_not_crashes():
    _, fast = optimized("resnet18")
    with pytest.raises(RuntimeError):
        fast(kiln.from_numpy(np.zeros((1, 4, 32, 32), np.float32)))
    with pytest.raises(RuntimeError):
        fast(kiln.from_numpy(np.zeros((1, 3, 32, 32), np.float64)))


def test_kiln_nn_module_optimizes():
    model, x, expected = torch_case("squeezenet1_0")
    mine = zoo.squeezenet1_0(zoo.KILN)
    mine.load_state_dict(zoo.to_kiln_state(model.state_dict()))
    fast = kiln.optimize_for_inference(kiln.script(mine.eval()))
    assert node_kinds(fast.graph)["kiln::conv2d_fused"] > 0
    assert_close(fast(_kiln_input(x)), expected)


def test_other_methods_are_kept_and_optimized():
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(8, 16, 3, padding=1)

        def forward(self, x):
            return torch.relu(self.conv(x))

        @torch.jit.export
        def features(self, x):
            return self.conv(x) + x.sum()

    torch.manual_seed(0)
    model = Net().eval()
    loaded = kiln.load(io.BytesIO(_saved(torch.jit.script(model))))
    fast = kiln.optimize_for_inference(loaded, ["features"])
    x = torch.randn(2, 8, 9, 9)
    with torch.no_grad():
        assert_close(fast(_kiln_input(x)), model(x))
        assert_close(fast.features(_kiln_input(x)), model.features(x))
    assert node_kinds(fast.features.graph)["kiln::conv2d_fused"] == 1


@pytest.mark.parametrize("activation", ["relu", "relu6", "hardtanh", "silu", "sigmoid", "tanh", "gelu", "gelu_tanh",
                                        "elu"])
@pytest.mark.parametrize("channels,groups", [(3, 1), (16, 1), (20, 1), (32, 32), (24, 24), (32, 4)])
def test_activation_and_residual_fusion(activation, channels, groups):
    acts = {
        "relu": torch.nn.ReLU(), "relu6": torch.nn.ReLU6(), "hardtanh": torch.nn.Hardtanh(-0.5, 0.75),
        "silu": torch.nn.SiLU(), "sigmoid": torch.nn.Sigmoid(), "tanh": torch.nn.Tanh(),
        "gelu": torch.nn.GELU(), "gelu_tanh": torch.nn.GELU(approximate="tanh"), "elu": torch.nn.ELU(0.7)}

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv0 = torch.nn.Conv2d(channels, channels, 1)
            self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, groups=groups)
            self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, groups=groups, bias=False)
            self.pool = torch.nn.MaxPool2d(3, 2, 1, ceil_mode=True)
            self.act = acts[activation]

        def forward(self, x):
            z = self.conv0(x)
            y = self.act(self.conv1(z))
            y = self.act(self.conv2(y) + z)
            return self.pool(y)

    torch.manual_seed(0)
    model = Net().eval()
    loaded = kiln.load(io.BytesIO(_saved(torch.jit.script(model))))
    fast = kiln.optimize_for_inference(loaded)
    kinds = node_kinds(fast.graph)
    assert kinds["kiln::conv2d_fused"] == 3
    assert sum(kinds[k] for k in kinds if k.startswith("aten::") and k != "aten::max_pool2d") == 0, kinds
    x = torch.randn(2, channels, 11, 13)
    with torch.no_grad():
        assert_close(fast(_kiln_input(x)), model(x))


@pytest.mark.parametrize("channels,groups", [(1, 1), (16, 1), (20, 4), (32, 32)])
def test_conv1d_runs_as_fused_2d(channels, groups):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv0 = torch.nn.Conv1d(channels, 24 if groups == 1 else channels, 5, stride=2, padding=2,
                                         groups=1 if channels == 1 else groups)
            c = self.conv0.out_channels
            self.bn0 = torch.nn.BatchNorm1d(c)
            self.pool0 = torch.nn.MaxPool1d(3, 2, 1, ceil_mode=True)
            self.conv1 = torch.nn.Conv1d(c, c, 3, dilation=2, padding=2, groups=groups if c % groups == 0 else 1)
            self.pool1 = torch.nn.MaxPool1d(2)
            self.conv2 = torch.nn.Conv1d(c, 8, 1, bias=False)

        def forward(self, x):
            y = self.pool0(torch.relu(self.bn0(self.conv0(x))))
            y = self.pool1(torch.nn.functional.gelu(self.conv1(y)))
            z = self.conv2(y)
            return z, y.sum(1)  # y also read plain

    torch.manual_seed(0)
    model = Net().eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm1d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2)
    loaded = kiln.load(io.BytesIO(_saved(torch.jit.script(model))))
    fast = kiln.optimize_for_inference(loaded)
    kinds = node_kinds(fast.graph)
    assert kinds["kiln::conv2d_fused"] == 3 and kinds["aten::conv1d"] == 0, kinds
    assert kinds["aten::relu"] == 0 and kinds["aten::gelu"] == 0, kinds
    assert kinds["aten::max_pool1d"] == 0, kinds
    for length in (61, 100):
        x = torch.randn(3, channels, length)
        with torch.no_grad():
            expected = model(x)
        got = fast(_kiln_input(x))
        for g, e in zip(got, expected):
            assert_close(g, e)
