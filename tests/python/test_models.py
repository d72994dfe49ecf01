"""Whole models against torch 1.13 (issue 19): torchvision's ResNet-18,
MobileNetV2, SqueezeNet 1.0 and ShuffleNetV2, a Transformer encoder, LSTM and
GRU language models, a conv1d audio network and a small UNet
(tests/python/model_zoo.py).

Each is scripted and traced by torch, saved with torch.jit.save, loaded by
kiln.load and run; and written with kiln.nn, given the torch model's state
dict, and run eagerly and through kiln.script. Outputs agree with torch's to
a relative error of 1e-4 (largest difference over largest magnitude), fp32,
in eval mode under no_grad, which is where 1.13 takes its inference fast
paths (the Transformer encoder's)."""
import io

import numpy as np
import pytest
import torch
import torchvision.models

import kiln
import model_zoo as zoo

REL_TOL = 1e-4


def _vision_input(batch):
    return torch.randn(batch, 3, 64, 64)


MODELS = {
    "resnet18": (zoo.resnet18, lambda: _vision_input(1)),
    "mobilenet_v2": (zoo.mobilenet_v2, lambda: _vision_input(2)),
    "squeezenet1_0": (zoo.squeezenet1_0, lambda: _vision_input(1)),
    "shufflenet_v2_x0_5": (zoo.shufflenet_v2_x0_5, lambda: _vision_input(2)),
    "transformer_encoder": (zoo.transformer_encoder, lambda: torch.randn(2, 10, 64)),
    "lstm_lm": (lambda ns: zoo.recurrent_lm(ns, "LSTM"), lambda: torch.randint(0, 500, (2, 12))),
    "gru_lm": (lambda ns: zoo.recurrent_lm(ns, "GRU"), lambda: torch.randint(0, 500, (2, 12))),
    "audio_conv1d": (zoo.audio_conv1d, lambda: torch.randn(2, 1, 4000)),
    "small_unet": (zoo.small_unet, lambda: torch.randn(1, 3, 32, 32)),
}
TORCHVISION = ["resnet18", "mobilenet_v2", "squeezenet1_0", "shufflenet_v2_x0_5"]

_cache = {}


def _randomize_batch_norm_stats(model):
    # Fresh running statistics are zeros and ones, which would hide a kernel
    # that ignores them.
    gen = torch.Generator().manual_seed(1)
    for module in model.modules():
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.running_mean.copy_(torch.rand(module.running_mean.shape, generator=gen) - 0.5)
            module.running_var.copy_(torch.rand(module.running_var.shape, generator=gen) + 0.5)


def torch_case(name):
    """The torch model (eval), its input and its output, made once per name."""
    if name not in _cache:
        builder, make_input = MODELS[name]
        torch.manual_seed(0)
        model = builder(zoo.TORCH).eval()
        with torch.no_grad():
            _randomize_batch_norm_stats(model)
            x = make_input()
            expected = model(x)
        _cache[name] = (model, x, expected)
    return _cache[name]


def assert_close(actual, expected):
    actual = actual.numpy() if isinstance(actual, kiln.Tensor) else np.asarray(actual)
    expected = expected.detach().numpy()
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    scale = max(float(np.abs(expected).max()), 1e-30)
    error = float(np.abs(actual.astype(np.float64) - expected).max()) / scale
    assert error <= REL_TOL, f"relative error {error:.3g} > {REL_TOL}"


def _kiln_input(x):
    return kiln.from_numpy(x.numpy().copy())


def _saved(module):
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("name", list(MODELS))
def test_scripted_archive(name):
    model, x, expected = torch_case(name)
    loaded = kiln.load(io.BytesIO(_saved(torch.jit.script(model))))
    assert_close(loaded(_kiln_input(x)), expected)
    # A second call runs the optimized plan.
    assert_close(loaded(_kiln_input(x)), expected)


@pytest.mark.parametrize("name", list(MODELS))
def test_traced_archive(name):
    model, x, expected = torch_case(name)
    with torch.no_grad():
        traced = torch.jit.trace(model, (x,), check_trace=False)
    loaded = kiln.load(io.BytesIO(_saved(traced)))
    assert_close(loaded(_kiln_input(x)), expected)


@pytest.mark.parametrize("name", list(MODELS))
def test_kiln_nn_with_torch_weights(name):
    model, x, expected = torch_case(name)
    builder, _ = MODELS[name]
    kiln.manual_seed(0)
    mine = builder(zoo.KILN)
    assert list(mine.state_dict().keys()) == list(model.state_dict().keys())
    mine.load_state_dict(zoo.to_kiln_state(model.state_dict()))
    mine.eval()
    assert_close(mine(_kiln_input(x)), expected)
    scripted = kiln.script(mine)
    assert_close(scripted(_kiln_input(x)), expected)
    assert_close(scripted(_kiln_input(x)), expected)


def test_state_dict_from_a_torch_save_file(tmp_path):
    model, x, expected = torch_case("resnet18")
    path = tmp_path / "resnet18_state.pt"
    torch.save(model.state_dict(), path)
    mine = zoo.resnet18(zoo.KILN)
    mine.load_state_dict(kiln.load_pickle(str(path)))
    assert_close(mine.eval()(_kiln_input(x)), expected)


@pytest.mark.parametrize("name", TORCHVISION)
def test_zoo_matches_torchvision(name):
    """The zoo's torchvision networks are torchvision's: same parameter names,
    same outputs, so the tests above test those networks."""
    torch.manual_seed(0)
    reference = getattr(torchvision.models, name)().eval()
    mine = getattr(zoo, name)(zoo.TORCH).eval()
    mine.load_state_dict(reference.state_dict(), strict=True)
    x = _vision_input(1)
    with torch.no_grad():
        assert torch.equal(mine(x), reference(x))


def test_torchvision_resnet18_itself():
    """torchvision's own scripted ResNet-18 at 224x224, as a user saves it."""
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        expected = model(x)
    loaded = kiln.load(io.BytesIO(_saved(torch.jit.script(model))))
    assert_close(loaded(_kiln_input(x)), expected)
