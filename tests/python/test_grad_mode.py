"""Grad mode (python/kiln/_grad_mode.py) as torch's: the context managers,
the decorator, set_grad_enabled as a function, per thread, and seen by
scripts; a torch-saved TransformerEncoder takes 1.13's inference fast path
under kiln.no_grad() and gives torch's result."""
import io
import threading

import numpy as np
import torch

import kiln


def test_context_managers_nest_and_restore():
    assert kiln.is_grad_enabled()
    with kiln.no_grad():
        assert not kiln.is_grad_enabled()
        with kiln.enable_grad():
            assert kiln.is_grad_enabled()
        assert not kiln.is_grad_enabled()
    assert kiln.is_grad_enabled()


def test_set_grad_enabled_is_a_function_and_a_context_manager():
    kiln.set_grad_enabled(False)
    assert not kiln.is_grad_enabled()
    kiln.set_grad_enabled(True)
    with kiln.set_grad_enabled(False):
        assert not kiln.is_grad_enabled()
    assert kiln.is_grad_enabled()


def test_decorator_restores_after_an_exception():
    @kiln.no_grad()
    def fails():
        assert not kiln.is_grad_enabled()
        raise ValueError("inside")

    try:
        fails()
    except ValueError:
        pass
    assert kiln.is_grad_enabled()


def test_grad_mode_is_per_thread():
    seen = []
    with kiln.no_grad():
        worker = threading.Thread(target=lambda: seen.append(kiln.is_grad_enabled()))
        worker.start()
        worker.join()
    assert seen == [True]


def test_scripts_read_grad_mode():
    fn = kiln.compile("def g() -> bool:\n    return torch.is_grad_enabled()\n").g
    assert fn()
    with kiln.no_grad():
        assert not fn()


def test_transformer_encoder_fast_path_under_no_grad():
    """The archive decides on grad mode as 1.13 does. Whether it takes the fast
    path at all is decided when torch scripts it (an earlier, differently
    configured TransformerEncoderLayer in the process mangles the type and
    turns the path off in the archive), so the reference is torch running the
    same archive."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=True).eval()
    x = torch.randn(2, 5, 16)
    mask = torch.tensor([[False] * 5, [False, False, False, True, True]])
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(model), buffer)
    theirs = torch.jit.load(io.BytesIO(buffer.getvalue()))
    ours = kiln.load(io.BytesIO(buffer.getvalue()))
    for grad in (False, True):
        with torch.set_grad_enabled(grad):
            expected = theirs(x, src_key_padding_mask=mask).detach().numpy()
        with kiln.set_grad_enabled(grad):
            got = ours(kiln.from_numpy(x.numpy()), src_key_padding_mask=kiln.from_numpy(mask.numpy())).numpy()
        # The fast path zeroes the padded positions; the other path does not.
        assert got.shape == expected.shape
        assert (np.abs(got[1, 3:]).max() == 0) == (np.abs(expected[1, 3:]).max() == 0)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
        if grad:
            assert np.abs(got[1, 3:]).max() > 0
