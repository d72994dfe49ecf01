"""The backward paths that training speed rests on, against torch 1.13:
one derivative formula for several inputs (batch/group/layer norm and
convolution, with the real grad_input_mask), torch's threshold_backward for
relu, the fused batch-norm backward kernel, and broadcast/strided binary ops
on odd shapes, with AVX-512 and with AVX2."""
import subprocess
import sys
import os

import numpy as np
import pytest
import torch

import kiln
from autograd_check import arrays, assert_gradients_match_torch, gradcheck

RNG = np.random.default_rng(7)


def F(lib):
    return lib.nn.functional


# --- threshold_backward ----------------------------------------------------------------------------

@pytest.mark.parametrize("threshold", [0.0, 0.3, -1.0])
def test_threshold_backward_values(threshold):
    g = RNG.standard_normal((5, 7)).astype(np.float32)
    x = RNG.standard_normal((5, 7)).astype(np.float32)
    x[0, :3] = threshold  # at the threshold: no gradient
    x[1, 0] = np.nan  # NaN lets the gradient through
    want = torch.ops.aten.threshold_backward(torch.from_numpy(g), torch.from_numpy(x), threshold)
    got = kiln.threshold_backward(kiln.from_numpy(g), kiln.from_numpy(x), threshold)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_threshold_backward_broadcast_and_double():
    g = RNG.standard_normal((3, 1, 5))
    x = RNG.standard_normal((4, 1))
    want = torch.ops.aten.threshold_backward(torch.from_numpy(g), torch.from_numpy(x), 0.1)
    got = kiln.threshold_backward(kiln.from_numpy(g), kiln.from_numpy(x), 0.1)
    assert got.dtype == kiln.float64
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_threshold_backward_grads():
    def fn(lib, g, x):
        op = torch.ops.aten.threshold_backward if lib is torch else kiln.threshold_backward
        return op(g, x, 0.2)
    assert_gradients_match_torch(fn, arrays([(4, 6), (4, 6)]))


def test_relu_grad_fn_name_and_grads():
    x = kiln.from_numpy(RNG.standard_normal((3, 4)).astype(np.float32)).requires_grad_()
    assert kiln.relu(x).grad_fn.name() == "ReluBackward0"
    assert_gradients_match_torch(lambda lib, x: lib.relu(x) * 2, arrays([(6, 5)]))
    assert_gradients_match_torch(lambda lib, x: F(lib).threshold(x, 0.1, 3.0), arrays([(6, 5)]))
    # an infinite gradient where relu is 0 stays 0 (grad * mask would give NaN)
    for lib in (torch, kiln):
        x = lib.from_numpy(np.array([-1.0, 2.0], dtype=np.float32)).requires_grad_()
        lib.relu(x).backward(lib.from_numpy(np.array([np.inf, 1.0], dtype=np.float32)))
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0])


# --- one formula for several inputs ----------------------------------------------------------------

def _bn(lib, x, w, b):
    return F(lib).batch_norm(x, lib.zeros(x.shape[1]), lib.ones(x.shape[1]), w, b, training=True)


def _bn_eval(lib, x, w, b):
    return F(lib).batch_norm(x, lib.zeros(x.shape[1]) + 0.2, lib.ones(x.shape[1]) * 1.5, w, b, training=False)


@pytest.mark.parametrize("shape", [(4, 3, 5, 5), (2, 5, 7), (6, 3), (3, 4, 1, 17), (2, 3, 33, 2)])
@pytest.mark.parametrize("fn", [_bn, _bn_eval])
def test_batch_norm_grads_every_subset(shape, fn):
    """Every subset of (input, weight, bias) requiring grad gives torch's gradients."""
    values = arrays([shape, (shape[1],), (shape[1],)])
    for needed in range(1, 8):
        def run(lib, needed=needed):
            leaves = [lib.from_numpy(v.copy()) for v in values]
            for i, t in enumerate(leaves):
                if needed & (1 << i):
                    t.requires_grad_(True)
            out = fn(lib, *leaves)
            out.backward(lib.from_numpy(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(tuple(out.shape))))
            return [t.grad for t in leaves]
        for t_grad, k_grad in zip(run(torch), run(kiln)):
            assert (t_grad is None) == (k_grad is None)
            if t_grad is not None:
                np.testing.assert_allclose(k_grad.numpy(), t_grad.numpy(), rtol=1e-4, atol=1e-4)


def test_batch_norm_noncontiguous_and_double():
    assert_gradients_match_torch(_bn, arrays([(4, 3, 5, 6), (3,), (3,)]), noncontiguous=True)
    gradcheck(_bn, arrays([(3, 2, 2, 3), (2,), (2,)], dtype=np.float64))
    gradcheck(_bn_eval, arrays([(3, 2, 4), (2,), (2,)], dtype=np.float64))


def test_batch_norm_without_affine():
    assert_gradients_match_torch(lambda lib, x: F(lib).batch_norm(x, None, None, training=True),
                                 arrays([(5, 4, 3, 3)]))


def test_group_and_layer_norm_multi_input_formula():
    assert_gradients_match_torch(lambda lib, x, w, b: F(lib).group_norm(x, 2, w, b), arrays([(3, 4, 5), (4,), (4,)]))
    assert_gradients_match_torch(lambda lib, x, w: F(lib).group_norm(x, 2, w), arrays([(3, 4, 5), (4,)]))
    assert_gradients_match_torch(lambda lib, x, w, b: F(lib).layer_norm(x, [5], w, b), arrays([(3, 4, 5), (5,), (5,)]))
    assert_gradients_match_torch(lambda lib, x, b: F(lib).layer_norm(x, [5], None, b), arrays([(3, 4, 5), (5,)]))


@pytest.mark.parametrize("needed", [1, 2, 3, 4, 5, 6, 7])
def test_conv2d_grads_every_subset(needed):
    values = arrays([(2, 3, 6, 6), (4, 3, 3, 3), (4,)])

    def run(lib):
        leaves = [lib.from_numpy(v.copy()) for v in values]
        for i, t in enumerate(leaves):
            if needed & (1 << i):
                t.requires_grad_(True)
        out = F(lib).conv2d(*leaves, stride=2, padding=1)
        out.sum().backward()
        return [t.grad for t in leaves]
    for t_grad, k_grad in zip(run(torch), run(kiln)):
        assert (t_grad is None) == (k_grad is None)
        if t_grad is not None:
            np.testing.assert_allclose(k_grad.numpy(), t_grad.numpy(), rtol=1e-4, atol=1e-4)


def test_scripted_conv_bn_relu_grads():
    """Graph autodiff inlines the same multi-input formula graphs."""
    def f(x, w, g, b):
        y = torch.nn.functional.conv2d(x, w, None, 1, 1)
        y = torch.nn.functional.batch_norm(y, torch.zeros(4), torch.ones(4), g, b, True)
        return torch.relu(y).sum()

    values = arrays([(2, 3, 5, 5), (4, 3, 3, 3), (4,), (4,)])
    t_in = [torch.from_numpy(v.copy()).requires_grad_() for v in values]
    f(*t_in).backward()
    scripted = kiln.jit.script(f)
    for _ in range(3):  # profiling, then optimized runs
        k_in = [kiln.from_numpy(v.copy()).requires_grad_() for v in values]
        scripted(*k_in).backward()
        for t, k in zip(t_in, k_in):
            np.testing.assert_allclose(k.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-4)


# --- broadcast / strided binary ops ----------------------------------------------------------------

SHAPES = [
    ((8, 5, 7, 9), (1, 5, 1, 1)),
    ((3, 17), (17,)),
    ((3, 17), (3, 1)),
    ((2, 33, 1), (1, 1, 19)),
    ((1,), (31, 3)),
    ((4, 6, 35), (4, 1, 35)),
    ((2, 3, 4, 5), ()),
]


def _strided(lib, a, transpose):
    t = lib.from_numpy(a.copy())
    if transpose and a.ndim >= 2:
        t = lib.from_numpy(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
    return t


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcast_binary_ops(shapes, op, transpose, dtype):
    a = RNG.standard_normal(shapes[0]).astype(dtype)
    b = np.asarray(RNG.standard_normal(shapes[1]) + 3).astype(dtype)
    want = getattr(torch, op)(_strided(torch, a, transpose), _strided(torch, b, False))
    got = getattr(kiln, op)(_strided(kiln, a, transpose), _strided(kiln, b, False))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    want = getattr(torch, op)(_strided(torch, b, transpose), _strided(torch, a, False))
    got = getattr(kiln, op)(_strided(kiln, b, transpose), _strided(kiln, a, False))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_fused_paths_with_avx2():
    """The same tests with the AVX-512 kernels turned off."""
    env = dict(os.environ, KILN_DISABLE_AVX512="1")
    here = os.path.dirname(os.path.abspath(__file__))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", __file__,
                             "-k", "not avx2"], env=env, cwd=here, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


# --- max pooling (the branch-free 2-D kernel) ------------------------------------------------------

@pytest.mark.parametrize("args", [dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=2),
                                  dict(kernel_size=3, stride=1, padding=1, dilation=2),
                                  dict(kernel_size=(2, 3), stride=(1, 2), ceil_mode=True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool2d_values_indices_and_grads(args, dtype):
    x = RNG.standard_normal((2, 3, 9, 11)).astype(dtype)
    x[0, 0, 1, 1] = np.nan
    x[0, 1, 2, 2:5] = np.nan
    x[1, 2, 3:5, 4] = 5.0  # ties: the first maximum wins
    x[1, 1] = -np.inf
    t_out, t_idx = torch.nn.functional.max_pool2d(torch.from_numpy(x), return_indices=True, **args)
    k_out, k_idx = kiln.nn.functional.max_pool2d(kiln.from_numpy(x.copy()), return_indices=True, **args)
    np.testing.assert_array_equal(k_out.numpy(), t_out.numpy())
    np.testing.assert_array_equal(k_idx.numpy(), t_idx.numpy())
    assert_gradients_match_torch(lambda lib, x: F(lib).max_pool2d(x, **args), arrays([(2, 3, 9, 11)], dtype=dtype))


def test_threshold_backward_out():
    g = RNG.standard_normal((3, 4)).astype(np.float32)
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    want = torch.ops.aten.threshold_backward(torch.from_numpy(g), torch.from_numpy(x), 0.0)
    out = kiln.empty(3, 4)
    got = kiln.threshold_backward(kiln.from_numpy(g), kiln.from_numpy(x), 0.0, grad_input=out)
    np.testing.assert_array_equal(out.numpy(), want.numpy())
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_threshold_backward_fuses_with_the_eager_kernels_bits():
    cu = kiln.compile("""
def f(g, x, w):
    return torch.threshold_backward(g, x, 0.5) * w
""")
    rng = np.random.RandomState(3)
    g = rng.randn(16, 33).astype(np.float32)
    x = rng.randn(16, 33).astype(np.float32)
    x[0, :5] = [np.nan, np.inf, -np.inf, 0.5, 0.5000001]
    w = rng.randn(33).astype(np.float32)
    args = [kiln.from_numpy(a.copy()) for a in (g, x, w)]
    for _ in range(2):
        fused = cu.f(*args).numpy()
    assert "prim::FusionGroup" in str(cu.f.graph_for(*args))
    expected = torch.ops.aten.threshold_backward(torch.from_numpy(g), torch.from_numpy(x), 0.5) * torch.from_numpy(w)
    np.testing.assert_array_equal(fused, expected.numpy())
    eager = (kiln.threshold_backward(args[0], args[1], 0.5) * args[2]).numpy()
    np.testing.assert_array_equal(fused, eager)
