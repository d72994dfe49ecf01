"""Converted convolution weights (kiln/tensor/kernels/blocked_conv.cpp): a
weight oneDNN runs in a layout that depends on the image size (Winograd's,
AVX-512 only) is converted from the frozen constant on first use and kept
once per weight and layout, not once per input shape or thread count, and
the copies go when the module does. kiln._C._dnnl_converted_weights()
counts them (count, bytes)."""
import gc
import io

import numpy as np
import pytest
import torch

import kiln

pytestmark = pytest.mark.skipif(kiln._C._dnnl_channel_block() != 16,
                                reason="oneDNN's Winograd convolution is AVX-512 only")


class TwoConvs(torch.nn.Module):
    """3x3 stride-1 convolutions of 64 channels: small weights, which run on Winograd."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(16, 64, 3, padding=1)
        self.b = torch.nn.Conv2d(64, 64, 3, padding=1)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def optimized():
    torch.manual_seed(0)
    model = TwoConvs().eval()
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(model), buffer)
    return model, kiln.optimize_for_inference(kiln.load(io.BytesIO(buffer.getvalue())))


def run(model, module, batch, size):
    x = torch.randn(batch, 16, size, size)
    with kiln.no_grad():
        got = module(kiln.from_numpy(x.numpy().copy())).numpy()
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))


def converted():
    gc.collect()
    return kiln._C._dnnl_converted_weights()


def test_one_copy_per_weight_and_layout():
    before_count, before_bytes = converted()
    model, module = optimized()
    threads = kiln.get_num_threads()
    try:
        kiln.set_num_threads(1)
        run(model, module, 1, 32)
        count, nbytes = converted()
        assert count - before_count == 2, "each Winograd layer keeps one converted weight"
        # Winograd's weight is 36/9 the plain one, and no more than that.
        plain = sum(p.numel() * 4 for name, p in model.named_parameters() if name.endswith("weight"))
        assert 0 < nbytes - before_bytes <= 5 * plain
        # Another thread count, the same shape again: the same layout, no new copy
        # (they were kept per input shape and thread count before).
        for n in (2, 1, 2):
            kiln.set_num_threads(n)
            run(model, module, 1, 32)
            assert converted() == (count, nbytes), f"{n} thread(s) converted the weights again"
        # Another batch may want another layout (oneDNN blocks Winograd's weights by
        # problem size): at most one more copy per layer, and none when repeated.
        kiln.set_num_threads(1)
        run(model, module, 2, 32)
        count2, nbytes2 = converted()
        assert count2 - count <= 2
        for batch, n in [(2, 2), (8, 1), (2, 1), (1, 2)]:
            kiln.set_num_threads(n)
            run(model, module, batch, 32)
        assert converted() == (count2, nbytes2), "batch 8 shares batch 2's layout; repeats convert nothing"
    finally:
        kiln.set_num_threads(threads)
    del module
    assert converted() == (before_count, before_bytes), "a freed module's converted weights stay"


def test_freed_optimized_modules_free_their_weights():
    before = converted()
    for _ in range(3):
        model, module = optimized()
        run(model, module, 1, 32)
        assert converted()[0] == before[0] + 2
        del module
        assert converted() == before


def test_module_parameters_survive_optimization_shapes_and_threads():
    """The loaded module's parameters stay readable and unchanged (state_dict and attribute access) while
    its optimized copy converts weights for several input shapes and thread counts; the optimized module
    stays correct throughout."""
    torch.manual_seed(0)
    model = TwoConvs().eval()
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(model), buffer)
    loaded = kiln.load(io.BytesIO(buffer.getvalue()))
    module = kiln.optimize_for_inference(loaded)
    expected = {k: v.numpy().copy() for k, v in model.state_dict().items()}

    def check_parameters():
        state = loaded.state_dict()
        assert set(state) == set(expected)
        for key, value in expected.items():
            np.testing.assert_array_equal(state[key].numpy(), value, err_msg=key)
        np.testing.assert_array_equal(loaded.a.weight.numpy(), expected["a.weight"])
        np.testing.assert_array_equal(loaded.b.bias.numpy(), expected["b.bias"])

    threads = kiln.get_num_threads()
    try:
        for batch, size, n in [(1, 32, 1), (2, 32, 2), (1, 20, 1), (8, 16, 2), (1, 32, 1)]:
            kiln.set_num_threads(n)
            run(model, module, batch, size)
            check_parameters()
    finally:
        kiln.set_num_threads(threads)
    # The loaded module still runs as it did (its weights are its own, not the optimized copy's).
    x = torch.randn(1, 16, 24, 24)
    with kiln.no_grad():
        got = loaded(kiln.from_numpy(x.numpy().copy())).numpy()
    with torch.no_grad():
        np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-4, atol=1e-5)
