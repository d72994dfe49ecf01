"""The graph executor's convolution post-op fusion (kiln/passes/
fuse_conv_post_ops.h), which runs on every module without freezing: a
conv2d followed by a residual add and/or an activation runs as one oneDNN
convolution when its operands allow, else as the original ops. Results
equal torch 1.13's (and the unfused kiln's), and a parameter changed after
a call, in place or by assignment, is seen by the next call."""
import io

import numpy as np
import pytest
import torch

import kiln
from test_models import _saved, assert_close


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.c2 = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.c3 = torch.nn.Conv2d(16, 4, 1, stride=2)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        y = torch.relu(self.c1(x))
        z = torch.nn.functional.hardtanh(self.c2(y) + y, -0.5, 0.5)
        return torch.sigmoid(self.c3(z)), self.drop(z)


def _kiln_module(model):
    return kiln.load(io.BytesIO(_saved(torch.jit.script(model))))


def _kinds(graph):
    kinds = []

    def visit(block):
        for node in block.nodes():
            kinds.append(node.kind())
            for b in node.blocks():
                visit(b)

    visit(graph)
    return kinds


def _x(x):
    return kiln.from_numpy(x.numpy().copy())


def _check(k, model, x):
    with torch.no_grad():
        expected = model(x)
    # Inference: the loaded parameters require grad, and in grad mode the
    # plan records gradients instead of fusing (test_graph_autodiff.py).
    with kiln.no_grad():
        got = k(_x(x))
    for g, e in zip(got, expected):
        assert_close(g, e)


def test_fused_in_the_executor_and_equal_to_torch():
    torch.manual_seed(0)
    model = Net().eval()
    k = _kiln_module(model).eval()
    x = torch.randn(2, 8, 11, 9)
    for _ in range(2):
        _check(k, model, x)
    with kiln.no_grad():
        kinds = _kinds(k.forward.graph_for(_x(x)))
    assert kinds.count("kiln::conv2d_fused") == 3 and kinds.count("kiln::conv2d_fusable") == 3, kinds


def test_parameter_changes_after_a_call_are_seen():
    torch.manual_seed(0)
    model = Net().eval()
    k = _kiln_module(model).eval()
    x = torch.randn(1, 8, 7, 7)
    _check(k, model, x)
    # In place (outside autograd, as torch requires for a leaf that requires grad).
    with kiln.no_grad():
        k.c1.weight.mul_(2)
    with torch.no_grad():
        model.c1.weight.mul_(2)
    _check(k, model, x)
    # Reassigned.
    w = np.random.default_rng(1).standard_normal((16, 16, 3, 3)).astype(np.float32)
    k.c2.weight = kiln.from_numpy(w.copy())
    with torch.no_grad():
        model.c2.weight.copy_(torch.from_numpy(w))
    _check(k, model, x)
    b = np.random.default_rng(2).standard_normal(4).astype(np.float32)
    k.c3.bias = kiln.from_numpy(b.copy())
    with torch.no_grad():
        model.c3.bias.copy_(torch.from_numpy(b))
    _check(k, model, x)


def test_other_dtypes_and_errors_take_the_original_ops():
    torch.manual_seed(0)
    model = Net().eval()
    k = _kiln_module(model).eval()
    _check(k, model, torch.randn(1, 8, 6, 6))
    # Unbatched input: the fallback runs conv2d's unbatched form.
    _check(k, model, torch.randn(8, 6, 6))
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float|should be the same"):
        k(_x(torch.randn(1, 8, 6, 6).double()))
    with pytest.raises(RuntimeError, match="channels"):
        k(_x(torch.randn(1, 5, 6, 6)))
    _check(k, model, torch.randn(1, 8, 1, 1))  # smaller than the kernel, inside the padding
    model64 = Net().double().eval()
    k64 = _kiln_module(model64).eval()
    _check(k64, model64, torch.randn(2, 8, 5, 5).double())


def test_training_mode_and_grad_mode_agree_too():
    torch.manual_seed(0)
    model = Net().eval()
    k = _kiln_module(model)
    x = torch.randn(2, 8, 5, 6)
    with torch.no_grad():
        expected = model(x)[0]
    assert_close(k(_x(x))[0], expected)
    with kiln.no_grad():
        assert_close(k(_x(x))[0], expected)
