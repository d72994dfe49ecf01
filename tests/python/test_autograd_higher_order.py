"""Second derivatives (create_graph=True) against torch 1.13's double
backward: with create_graph the backward formulas run with grad mode on, so
their operations record and the gradients have a history of their own."""
import numpy as np
import pytest
import torch

import kiln
from autograd_check import arrays, to_numpy

# name: (function of (lib, *inputs) returning a tensor, input shapes, positive inputs)
PROGRAMS = {
    "mul": (lambda m, a, b: a * b * a, [(3, 4), (4,)], False),
    "div": (lambda m, a, b: a / b, [(3, 4), (3, 4)], True),
    "exp": (lambda m, a: a.exp(), [(3, 4)], False),
    "log": (lambda m, a: a.log(), [(3, 4)], True),
    "sin": (lambda m, a: a.sin(), [(3, 4)], False),
    "tanh": (lambda m, a: a.tanh(), [(3, 4)], False),
    "sigmoid": (lambda m, a: a.sigmoid(), [(3, 4)], False),
    "pow_scalar": (lambda m, a: a ** 3, [(3, 4)], False),
    "pow_tensor": (lambda m, a, b: a.pow(b), [(3, 4), (3, 4)], True),
    "matmul": (lambda m, a, b: a.matmul(b), [(3, 4), (4, 5)], False),
    "softmax": (lambda m, a: a.softmax(-1), [(3, 4)], False),
    "log_softmax": (lambda m, a: a.log_softmax(1), [(3, 4)], False),
    "sum": (lambda m, a: (a * a).sum(0), [(3, 4)], False),
    "mean": (lambda m, a: (a * a).mean(), [(3, 4)], False),
    "chain": (lambda m, a, b: (a.sin() * b.exp()).tanh(), [(3, 4), (3, 1)], False),
}


def _second(lib, fn, values, v, w):
    """d/dx <w, d/dx <v, f(x)>> through autograd.grad(create_graph=True) then grad again."""
    xs = [lib.from_numpy(a.copy()).requires_grad_(True) for a in values]
    out = fn(lib, *xs)
    firsts = lib.autograd.grad([out], xs, [lib.from_numpy(v.copy())], create_graph=True)
    assert all(g.requires_grad for g in firsts)
    total = sum((g * lib.from_numpy(wi.copy())).sum() for g, wi in zip(firsts, w))
    seconds = lib.autograd.grad([total], xs, allow_unused=True)
    return [to_numpy(g) for g in firsts], [None if g is None else to_numpy(g) for g in seconds]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_double_backward_matches_torch(name):
    fn, shapes, positive = PROGRAMS[name]
    values = arrays(shapes, positive, dtype=np.float64)
    with torch.no_grad():
        out_shape = tuple(fn(torch, *[torch.from_numpy(a) for a in values]).shape)
    rng = np.random.default_rng(5)
    v = rng.standard_normal(out_shape)
    w = [rng.standard_normal(a.shape) for a in values]
    t_first, t_second = _second(torch, fn, values, v, w)
    k_first, k_second = _second(kiln, fn, values, v, w)
    for k, t in zip(k_first, t_first):
        np.testing.assert_allclose(k, t, rtol=1e-7, atol=1e-9)
    for k, t in zip(k_second, t_second):
        assert (k is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(k, t, rtol=1e-7, atol=1e-9)


@pytest.mark.filterwarnings("ignore:Using backward")
def test_backward_create_graph_leaves_grad_with_history():
    for lib in (kiln, torch):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        assert x.grad.requires_grad
        g = x.grad
        x.grad = None
        g.sum().backward()
        np.testing.assert_allclose(to_numpy(x.grad), 6 * np.array([0.5, -1.0, 2.0]))


def test_grad_without_create_graph_has_no_history():
    x = kiln.tensor([1.0, 2.0], requires_grad=True)
    (g,) = kiln.autograd.grad([(x * x).sum()], [x])
    assert not g.requires_grad and g.grad_fn is None


def test_third_derivative():
    for lib in (kiln, torch):
        x = lib.tensor([0.3, 1.2], dtype=lib.float64, requires_grad=True)
        (g1,) = lib.autograd.grad([x.sin().sum()], [x], create_graph=True)
        (g2,) = lib.autograd.grad([g1.sum()], [x], create_graph=True)
        (g3,) = lib.autograd.grad([g2.sum()], [x])
        np.testing.assert_allclose(to_numpy(g3), -np.cos([0.3, 1.2]))


# ----- double backward of the neural-network operators (issue 21) -----
# The backward ops (convolution_backward, native_*_norm_backward, the pool,
# upsample, pad, embedding and dropout backwards) have derivatives of their
# own, as torch's derivatives.yaml: with create_graph the first gradient
# records them, and differentiating it again (with respect to the inputs and
# to the output gradient, which the first gradient is linear in) must give
# torch's second derivatives.

def F(lib):
    return lib.nn.functional


def _bn(training):
    def run(lib, x, w, b):
        mean = lib.from_numpy(np.array([0.1, -0.2, 0.3]))
        var = lib.from_numpy(np.array([0.5, 1.5, 2.0]))
        return F(lib).batch_norm(x, mean, var, w, b, training=training, eps=1e-5)
    return run


def _aten(lib, name):
    return getattr(torch.ops.aten, name) if lib is torch else kiln._functions.op(name)


def _indices(lib):
    return lib.from_numpy(np.array([[1, 2, 4], [4, 0, 1]]))


# name: (function of (lib, *inputs), input shapes, positive inputs)
NN_PROGRAMS = {
    "conv2d": (lambda m, x, w, b: F(m).conv2d(x, w, b, padding=1), [(2, 3, 5, 5), (4, 3, 3, 3), (4,)], False),
    "conv2d_stride_groups": (lambda m, x, w: F(m).conv2d(x, w, None, stride=2, groups=2),
                             [(2, 4, 6, 5), (4, 2, 2, 3)], False),
    "conv1d_dilation": (lambda m, x, w, b: F(m).conv1d(x, w, b, dilation=2), [(2, 2, 7), (3, 2, 3), (3,)], False),
    "conv_transpose2d": (lambda m, x, w, b: F(m).conv_transpose2d(x, w, b, stride=2, output_padding=1),
                         [(2, 3, 3, 4), (3, 2, 3, 3), (2,)], False),
    "conv3d": (lambda m, x, w: F(m).conv3d(x, w), [(1, 2, 4, 3, 4), (2, 2, 2, 2, 2)], False),
    "batch_norm_train": (_bn(True), [(4, 3, 2, 2), (3,), (3,)], False),
    "batch_norm_train_no_affine": (lambda m, x: _bn(True)(m, x, None, None), [(5, 3, 2)], False),
    "batch_norm_eval": (_bn(False), [(4, 3, 2, 2), (3,), (3,)], False),
    "layer_norm": (lambda m, x, w, b: F(m).layer_norm(x, [3, 4], w, b), [(2, 3, 4), (3, 4), (3, 4)], False),
    "layer_norm_no_affine": (lambda m, x: F(m).layer_norm(x, [5]), [(3, 5)], False),
    "group_norm": (lambda m, x, w, b: F(m).group_norm(x, 2, w, b), [(2, 4, 3, 2), (4,), (4,)], False),
    "max_pool2d": (lambda m, x: F(m).max_pool2d(x, 2, stride=1, padding=1), [(2, 2, 4, 5)], False),
    "max_pool1d": (lambda m, x: F(m).max_pool1d(x, 3, stride=2), [(2, 2, 7)], False),
    "max_pool3d": (lambda m, x: F(m).max_pool3d(x, 2), [(1, 2, 4, 4, 4)], False),
    "avg_pool2d": (lambda m, x: F(m).avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                   [(2, 2, 5, 6)], False),
    "avg_pool2d_divisor": (lambda m, x: F(m).avg_pool2d(x, 2, divisor_override=3), [(1, 2, 4, 4)], False),
    "avg_pool3d": (lambda m, x: F(m).avg_pool3d(x, 2, stride=1), [(1, 2, 3, 4, 3)], False),
    "adaptive_avg_pool2d": (lambda m, x: F(m).adaptive_avg_pool2d(x, (2, 3)), [(2, 2, 5, 7)], False),
    "adaptive_avg_pool3d": (lambda m, x: F(m).adaptive_avg_pool3d(x, 2), [(1, 2, 3, 5, 4)], False),
    "adaptive_max_pool2d": (lambda m, x: F(m).adaptive_max_pool2d(x, (2, 3)), [(2, 2, 5, 7)], False),
    "adaptive_max_pool3d": (lambda m, x: F(m).adaptive_max_pool3d(x, 2), [(1, 2, 3, 5, 4)], False),
    "upsample_nearest2d": (lambda m, x: F(m).interpolate(x, scale_factor=2, mode="nearest"), [(1, 2, 3, 4)], False),
    "upsample_nearest1d_size": (lambda m, x: F(m).interpolate(x, size=7, mode="nearest"), [(1, 2, 4)], False),
    "upsample_nearest3d": (lambda m, x: F(m).interpolate(x, scale_factor=2, mode="nearest"), [(1, 1, 2, 3, 2)],
                           False),
    "upsample_nearest_exact2d": (lambda m, x: F(m).interpolate(x, size=(5, 3), mode="nearest-exact"),
                                 [(1, 2, 3, 4)], False),
    "upsample_linear1d": (lambda m, x: F(m).interpolate(x, size=7, mode="linear", align_corners=True),
                          [(1, 2, 4)], False),
    "upsample_bilinear2d": (lambda m, x: F(m).interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False),
                            [(1, 2, 3, 4)], False),
    "upsample_bicubic2d": (lambda m, x: F(m).interpolate(x, size=(5, 6), mode="bicubic", align_corners=False),
                           [(1, 2, 3, 4)], False),
    "upsample_trilinear3d": (lambda m, x: F(m).interpolate(x, size=(3, 4, 3), mode="trilinear", align_corners=False),
                             [(1, 1, 2, 3, 2)], False),
    "upsample_bilinear2d_aa": (lambda m, x: F(m).interpolate(x, size=(3, 2), mode="bilinear", antialias=True),
                               [(1, 2, 5, 6)], False),
    "upsample_bicubic2d_aa": (lambda m, x: F(m).interpolate(x, size=(3, 4), mode="bicubic", antialias=True),
                              [(1, 2, 5, 6)], False),
    "reflection_pad1d": (lambda m, x: F(m).pad(x, (2, 1), mode="reflect"), [(2, 2, 4)], False),
    "reflection_pad2d": (lambda m, x: F(m).pad(x, (1, 2, 2, 0), mode="reflect"), [(1, 2, 3, 4)], False),
    "reflection_pad3d": (lambda m, x: F(m).pad(x, (1, 1, 0, 1, 1, 0), mode="reflect"), [(1, 1, 2, 3, 2)], False),
    "replication_pad1d": (lambda m, x: F(m).pad(x, (2, 3), mode="replicate"), [(2, 2, 4)], False),
    "replication_pad2d": (lambda m, x: F(m).pad(x, (1, 2, 2, 0), mode="replicate"), [(1, 2, 3, 4)], False),
    "replication_pad3d": (lambda m, x: F(m).pad(x, (1, 1, 0, 2, 1, 0), mode="replicate"), [(1, 1, 2, 3, 2)], False),
    "circular_pad2d": (lambda m, x: F(m).pad(x, (1, 2, 2, 1), mode="circular"), [(1, 2, 3, 4)], False),
    "embedding": (lambda m, w: F(m).embedding(_indices(m), w, padding_idx=3) * w.sum(), [(5, 3)], False),
    # The padding row is read but gets no gradient (torch's convention): no finite-difference check.
    "embedding_padding_read": (lambda m, w: F(m).embedding(_indices(m), w, padding_idx=0) * w.sum(), [(5, 3)],
                               False),
    "dropout_backward": (lambda m, x: _aten(m, "native_dropout_backward")(
        x * x, m.from_numpy(np.array([[True, False, True], [False, True, True]])), 2.0), [(2, 3)], False),
}


def _second_with_grad(lib, fn, values, v, w):
    """Like _second, with the output gradient `v` a leaf too: the first
    gradient is linear in it, so its derivative is the backward ops' own."""
    xs = [lib.from_numpy(a.copy()).requires_grad_(True) for a in values]
    gv = lib.from_numpy(v.copy()).requires_grad_(True)
    out = fn(lib, *xs)
    firsts = lib.autograd.grad([out], xs, [gv], create_graph=True, allow_unused=True)
    total = sum((g * lib.from_numpy(wi.copy())).sum() for g, wi in zip(firsts, w) if g is not None)
    seconds = lib.autograd.grad([total], xs + [gv], allow_unused=True)
    zeros_if_none = lambda g, a: np.zeros(a.shape) if g is None else to_numpy(g)  # noqa: E731
    return ([zeros_if_none(g, a) for g, a in zip(firsts, values)],
            [zeros_if_none(g, a) for g, a in zip(seconds, values + [v])])


@pytest.mark.parametrize("name", sorted(NN_PROGRAMS))
def test_nn_double_backward_matches_torch(name):
    fn, shapes, positive = NN_PROGRAMS[name]
    values = arrays(shapes, positive, dtype=np.float64)
    with torch.no_grad():
        out_shape = tuple(fn(torch, *[torch.from_numpy(a) for a in values]).shape)
    rng = np.random.default_rng(7)
    v = rng.standard_normal(out_shape)
    w = [rng.standard_normal(a.shape) for a in values]
    t_first, t_second = _second_with_grad(torch, fn, values, v, w)
    k_first, k_second = _second_with_grad(kiln, fn, values, v, w)
    for k, t in zip(k_first, t_first):
        np.testing.assert_allclose(k, t, rtol=1e-7, atol=1e-9)
    for k, t in zip(k_second, t_second):
        np.testing.assert_allclose(k, t, rtol=1e-6, atol=1e-8)


# Programs whose second derivative is smooth at random inputs (no pooling
# maxima to cross, no kinks): gradgradcheck by central finite differences of
# the first gradient, in float64.
_GRADGRAD = ["conv2d", "conv_transpose2d", "batch_norm_train", "batch_norm_eval", "layer_norm", "group_norm",
             "upsample_bilinear2d", "avg_pool2d", "reflection_pad2d", "circular_pad2d", "embedding"]


@pytest.mark.parametrize("name", _GRADGRAD)
def test_nn_gradgradcheck_float64(name):
    fn, shapes, positive = NN_PROGRAMS[name]
    values = arrays(shapes, positive, dtype=np.float64)
    rng = np.random.default_rng(11)
    with kiln.no_grad():
        out_shape = tuple(fn(kiln, *[kiln.from_numpy(a.copy()) for a in values]).shape)
    v = rng.standard_normal(out_shape)
    w = [rng.standard_normal(a.shape) for a in values]
    _, analytic = _second_with_grad(kiln, fn, values, v, w)

    def objective(points, gv):
        xs = [kiln.from_numpy(p.copy()).requires_grad_(True) for p in points]
        firsts = kiln.autograd.grad([fn(kiln, *xs)], xs, [kiln.from_numpy(gv.copy())], allow_unused=True)
        return sum(float((to_numpy(g) * wi).sum()) for g, wi in zip(firsts, w) if g is not None)

    eps = 1e-6
    for i, a in enumerate(values + [v]):
        numeric = np.zeros(a.shape)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in values + [v]]
            minus = [x.copy() for x in values + [v]]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            numeric[idx] = (objective(plus[:-1], plus[-1]) - objective(minus[:-1], minus[-1])) / (2 * eps)
        np.testing.assert_allclose(analytic[i], numeric, rtol=1e-5, atol=1e-5)
