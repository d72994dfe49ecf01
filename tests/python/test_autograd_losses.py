"""Gradients of every loss operator (kiln/ops/loss_ops.cpp) against torch
1.13's, for each reduction and the options that change the formula
(weights, ignore_index, label smoothing, class-probability targets,
pos_weight, log_target), plus float64 finite-difference gradchecks and the
double backward of the backward kernels torch differentiates."""
import numpy as np
import pytest
import torch

import kiln
from autograd_check import arrays, assert_gradients_match_torch, gradcheck

RNG = np.random.default_rng(2113)
REDUCTIONS = ["none", "mean", "sum"]


def F(lib):
    return lib.nn.functional


def const(lib, a):
    return lib.from_numpy(np.array(a).copy())


def labels(shape, classes, ignore=None):
    t = RNG.integers(0, classes, size=shape).astype(np.int64)
    if ignore is not None:
        t.flat[0] = ignore
    return t


# name: (fn(lib, *leaves), input arrays) -- every case is run for each reduction
def pointwise_cases():
    x, y = arrays([(3, 4), (3, 4)])
    w4 = np.abs(y) + 0.1
    pw = np.abs(x[0]) + 0.5
    cases = {
        "mse": (lambda m, r, a, b: F(m).mse_loss(a, b, reduction=r), [x, y]),
        "mse_broadcast": (lambda m, r, a, b: F(m).mse_loss(a, b.expand(3, 4), reduction=r), [x, y[:1]]),
        "mse_broadcast_target": (lambda m, r, a, b: aten(m).mse_loss(a, b, {"none": 0, "mean": 1, "sum": 2}[r]),
                                 [x, y[:1]]),
        "l1": (lambda m, r, a, b: F(m).l1_loss(a, b, reduction=r), [x, y]),
        "l1_broadcast_target": (lambda m, r, a, b: aten(m).l1_loss(a, b, {"none": 0, "mean": 1, "sum": 2}[r]), [x, y[:1]]),
        "huber_broadcast_target": (lambda m, r, a, b: aten(m).huber_loss(a, b, {"none": 0, "mean": 1, "sum": 2}[r], 0.5),
                                   [x, y[:1]]),
        "smooth_l1": (lambda m, r, a, b: F(m).smooth_l1_loss(a, b, reduction=r), [x, y]),
        "smooth_l1_beta": (lambda m, r, a, b: F(m).smooth_l1_loss(a, b, reduction=r, beta=0.3), [x, y]),
        "huber": (lambda m, r, a, b: F(m).huber_loss(a, b, reduction=r), [x * 2, y]),
        "huber_delta": (lambda m, r, a, b: F(m).huber_loss(a, b, reduction=r, delta=0.4), [x, y]),
        "bce": (lambda m, r, a, b: F(m).binary_cross_entropy(a.sigmoid(), b.sigmoid(), reduction=r), [x, y]),
        "bce_weight": (lambda m, r, a, b: F(m).binary_cross_entropy(a.sigmoid(), b.sigmoid(), const(m, w4),
                                                                    reduction=r), [x, y]),
        "bce_logits": (lambda m, r, a, b: F(m).binary_cross_entropy_with_logits(a, b.sigmoid(), reduction=r), [x, y]),
        "bce_logits_weights": (lambda m, r, a, b: F(m).binary_cross_entropy_with_logits(
            a, b.sigmoid(), const(m, w4), reduction=r, pos_weight=const(m, pw)), [x, y]),
        "kl_div": (lambda m, r, a, b: F(m).kl_div(a.log_softmax(1), b.softmax(1), reduction=r), [x, y]),
        "kl_div_log_target": (lambda m, r, a, b: F(m).kl_div(a.log_softmax(1), b.log_softmax(1), reduction=r,
                                                               log_target=True), [x, y]),
    }
    return cases


POINTWISE = pointwise_cases()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise_loss_gradients(name, reduction):
    fn, values = POINTWISE[name]
    assert_gradients_match_torch(lambda m, *xs: fn(m, reduction, *xs), values)


@pytest.mark.parametrize("name", ["mse", "l1", "smooth_l1_beta", "huber_delta", "bce_logits_weights", "kl_div"])
def test_pointwise_loss_noncontiguous(name):
    fn, values = POINTWISE[name]
    assert_gradients_match_torch(lambda m, *xs: fn(m, "mean", *xs), values, noncontiguous=True)


def test_kl_div_batchmean():
    x, y = arrays([(3, 4), (3, 4)])
    assert_gradients_match_torch(lambda m, a, b: F(m).kl_div(a.log_softmax(1), b.softmax(1), reduction="batchmean"),
                                 [x, y])


# Class-index losses: (fn(lib, reduction, input, *float leaves), input shape); targets are constants.
def class_cases():
    t2 = labels((5,), 4, ignore=-100)
    t4 = labels((2, 3, 2), 4, ignore=1)
    t3 = labels((2, 3), 4)
    t5 = labels((2, 3, 2, 2), 4)
    w = np.abs(arrays([(4,)])[0]) + 0.2
    return {
        "nll": (lambda m, r, x: F(m).nll_loss(x.log_softmax(1), const(m, t2), reduction=r), [(5, 4)]),
        "nll_weight": (lambda m, r, x: F(m).nll_loss(x, const(m, t2), const(m, w), reduction=r), [(5, 4)]),
        "nll_1d": (lambda m, r, x: F(m).nll_loss(x, const(m, t2[1]), reduction=r), [(4,)]),
        "nll_ignore": (lambda m, r, x: F(m).nll_loss(x, const(m, t4), ignore_index=1, reduction=r), [(2, 4, 3, 2)]),
        "nll_3d": (lambda m, r, x: F(m).nll_loss(x, const(m, t3), reduction=r), [(2, 4, 3)]),
        "nll_5d_weight": (lambda m, r, x: F(m).nll_loss(x, const(m, t5), const(m, w), reduction=r), [(2, 4, 3, 2, 2)]),
        "cross_entropy": (lambda m, r, x: F(m).cross_entropy(x, const(m, t2), reduction=r), [(5, 4)]),
        "cross_entropy_1d": (lambda m, r, x: F(m).cross_entropy(x, const(m, t2[1]), reduction=r), [(4,)]),
        "cross_entropy_weight_ignore": (lambda m, r, x: F(m).cross_entropy(x, const(m, t4), const(m, w), ignore_index=1,
                                                                           reduction=r), [(2, 4, 3, 2)]),
        "cross_entropy_smoothing": (lambda m, r, x: F(m).cross_entropy(x, const(m, t2), reduction=r,
                                                                       label_smoothing=0.2), [(5, 4)]),
        "cross_entropy_smoothing_weight": (lambda m, r, x: F(m).cross_entropy(
            x, const(m, t4), const(m, w), ignore_index=1, reduction=r, label_smoothing=0.3), [(2, 4, 3, 2)]),
        "cross_entropy_probs": (lambda m, r, x, p: F(m).cross_entropy(x, p.softmax(1), reduction=r), [(5, 4), (5, 4)]),
        "cross_entropy_probs_smoothing_weight": (lambda m, r, x, p: F(m).cross_entropy(
            x, p.softmax(1), const(m, w), reduction=r, label_smoothing=0.25), [(2, 4, 3), (2, 4, 3)]),
    }


CLASS = class_cases()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(CLASS))
def test_class_loss_gradients(name, reduction):
    fn, shapes = CLASS[name]
    values = [s if isinstance(s, np.ndarray) else arrays([s])[0] for s in shapes]
    assert_gradients_match_torch(lambda m, *xs: fn(m, reduction, *xs), values)


def test_cross_entropy_grad_fn_is_torchs():
    x = kiln.randn(3, 4, requires_grad=True)
    assert F(kiln).cross_entropy(x, kiln.tensor([0, 1, 2])).grad_fn.name() == "NllLossBackward0"
    assert F(kiln).mse_loss(x, kiln.zeros(3, 4)).grad_fn.name() == "MseLossBackward0"


def aten(m):
    return torch.ops.aten if m is torch else m


def test_aten_forward_overloads():
    # nll_loss_forward / nll_loss2d_forward (two results) and the plain ops, called directly.
    x = arrays([(5, 4)])[0]
    t = labels((5,), 4, ignore=-100)
    assert_gradients_match_torch(lambda m, a: aten(m).nll_loss_forward(a, const(m, t), None, 1, -100)[0], [x])
    assert_gradients_match_torch(lambda m, a: aten(m).nll_loss(a, const(m, t), None, 2, -100), [x])
    x4 = arrays([(2, 4, 3, 2)])[0]
    t4 = labels((2, 3, 2), 4)
    assert_gradients_match_torch(lambda m, a: aten(m).nll_loss2d(a, const(m, t4), None, 0, -100), [x4])
    assert_gradients_match_torch(lambda m, a: aten(m).nll_loss2d_forward(a, const(m, t4), None, 1, -100)[0], [x4])
    assert_gradients_match_torch(lambda m, a: aten(m).nll_loss_nd(a, const(m, t4), None, 1, -100), [x4])


def test_backward_kernels_match_torch():
    g, x, y = arrays([(3, 4), (3, 4), (3, 4)])
    tk = [torch.from_numpy(a) for a in (g, x, y)]
    kk = [kiln.from_numpy(a.copy()) for a in (g, x, y)]
    for name, extra in [("mse_loss_backward", ()), ("smooth_l1_loss_backward", (0.5,)),
                        ("huber_loss_backward", (0.7,))]:
        for r in (0, 1, 2):
            gr = (tk[0], kk[0]) if r == 0 else (tk[0][0, 0], kk[0][0, 0])
            expected = getattr(torch.ops.aten, name)(gr[0], tk[1], tk[2], r, *extra)
            got = getattr(kiln, name)(gr[1], kk[1], kk[2], r, *extra)
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-7)
    p = torch.sigmoid(tk[1])
    for r in (0, 1, 2):
        gr = (tk[0], kk[0]) if r == 0 else (tk[0][0, 0], kk[0][0, 0])
        expected = torch.ops.aten.binary_cross_entropy_backward(gr[0], p, tk[2].sigmoid(), None, r)
        got = kiln.binary_cross_entropy_backward(gr[1], kk[1].sigmoid(), kk[2].sigmoid(), None, r)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-7)


def test_nll_loss_backward_kernel_errors():
    with pytest.raises(RuntimeError, match="total_weight to be a single element"):
        kiln.nll_loss_backward(kiln.ones([]), kiln.zeros(2, 3), kiln.tensor([0, 1]), None, 1, -100, kiln.ones(2))
    with pytest.raises(IndexError, match="out of bounds"):
        kiln.nll_loss_backward(kiln.ones([]), kiln.zeros(2, 3), kiln.tensor([0, 7]), None, 2, -100, kiln.ones([]))


# float64 finite differences of kiln's own formulas.
GRADCHECK = {
    "mse": (lambda m, a, b: F(m).mse_loss(a, b), [(2, 3), (2, 3)]),
    "l1_none": (lambda m, a, b: F(m).l1_loss(a, b, reduction="none"), [(2, 3), (2, 3)]),
    "smooth_l1": (lambda m, a, b: F(m).smooth_l1_loss(a, b, beta=0.5, reduction="sum"), [(2, 3), (2, 3)]),
    "huber": (lambda m, a, b: F(m).huber_loss(a, b, delta=0.5), [(2, 3), (2, 3)]),
    "bce": (lambda m, a, b: F(m).binary_cross_entropy(a.sigmoid(), b.sigmoid()), [(2, 3), (2, 3)]),
    "bce_logits": (lambda m, a, b: F(m).binary_cross_entropy_with_logits(a, b.sigmoid(),
                                                                          pos_weight=m.tensor([0.5, 2.0, 1.5])),
                   [(2, 3), (2, 3)]),
    "kl_div": (lambda m, a, b: F(m).kl_div(a, b.softmax(1), reduction="sum"), [(2, 3), (2, 3)]),
    "cross_entropy": (lambda m, a: F(m).cross_entropy(a, m.tensor([2, 0, 1]), label_smoothing=0.1), [(3, 4)]),
    "cross_entropy_probs": (lambda m, a, b: F(m).cross_entropy(a, b.softmax(1), label_smoothing=0.1),
                            [(3, 4), (3, 4)]),
    "nll_4d": (lambda m, a: F(m).nll_loss(a, m.tensor([[[0, 2]], [[1, 1]]]), reduction="mean"), [(2, 3, 1, 2)]),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck(name):
    fn, shapes = GRADCHECK[name]
    gradcheck(fn, arrays(shapes, dtype=np.float64))


@pytest.mark.parametrize("loss", ["mse", "nll"])
def test_double_backward(loss):
    x, y = arrays([(3, 4), (3, 4)], dtype=np.float64)
    t = labels((3,), 4)

    def second(lib):
        a = lib.from_numpy(x.copy()).requires_grad_(True)
        b = lib.from_numpy(y.copy()).requires_grad_(True)
        if loss == "mse":
            out = F(lib).mse_loss(a * b, b)
        else:
            out = F(lib).nll_loss(a * b, const(lib, t))
        (ga,) = lib.autograd.grad(out, [a], create_graph=True)
        (ga * ga).sum().backward()
        return [v.grad.detach().numpy() if v.grad is not None else None for v in (a, b)]

    for k, t_ in zip(second(kiln), second(torch)):
        np.testing.assert_allclose(k, t_, rtol=1e-9, atol=1e-12)


def _backward_op(lib, name):
    return getattr(torch.ops.aten, name) if lib is torch else getattr(kiln, name)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_mse_loss_backward_is_differentiable(reduction):
    # The formulas second derivatives use, checked as first derivatives of the backward kernel.
    g_shape = (3, 4) if reduction == 0 else ()
    assert_gradients_match_torch(
        lambda m, g, a, b: _backward_op(m, "mse_loss_backward")(g, a, b, reduction),
        arrays([g_shape, (3, 4), (3, 4)]))


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("spatial", [False, True])
def test_nll_loss_backward_is_differentiable(reduction, spatial):
    shape, t_shape = ((2, 4, 3, 2), (2, 3, 2)) if spatial else ((5, 4), (5,))
    t = labels(t_shape, 4, ignore=-100)
    w = np.abs(arrays([(4,)])[0]) + 0.1
    name = "nll_loss2d" if spatial else "nll_loss"

    def fn(m, g, a):
        total = _backward_op(m, name + "_forward")(a.detach(), const(m, t), const(m, w), reduction, -100)[1]
        return _backward_op(m, name + "_backward")(g, a, const(m, t), const(m, w), reduction, -100, total)

    g_shape = t_shape if reduction == 0 else ()
    assert_gradients_match_torch(fn, arrays([g_shape, shape]))


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name", ["smooth_l1_loss_backward", "huber_loss_backward", "binary_cross_entropy_backward"])
def test_pointwise_backward_kernels_are_differentiable(name, reduction):
    g_shape = (3, 4) if reduction == 0 else ()
    if name == "binary_cross_entropy_backward":
        w = np.abs(arrays([(3, 4)])[0]) + 0.1

        def fn(m, g, a, b):
            return _backward_op(m, name)(g, a.sigmoid(), b.sigmoid(), const(m, w), reduction)
    else:
        def fn(m, g, a, b):
            return _backward_op(m, name)(g, a, b, reduction, 0.6)
    assert_gradients_match_torch(fn, arrays([g_shape, (3, 4), (3, 4)]))


def test_backward_kernels_out_forms():
    g, x, y = arrays([(3, 4), (3, 4), (3, 4)])
    out = kiln.empty(3, 4)
    got = kiln.mse_loss_backward(kiln.from_numpy(g), kiln.from_numpy(x), kiln.from_numpy(y), 0, grad_input=out)
    expected = torch.ops.aten.mse_loss_backward(torch.from_numpy(g), torch.from_numpy(x), torch.from_numpy(y), 0)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-6)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)
    t = labels((3,), 4)
    out = kiln.zeros(3, 4)
    kiln.nll_loss_backward(kiln.ones([]), kiln.from_numpy(x), const(kiln, t), None, 2, -100, kiln.ones([]),
                           grad_input=out)
    expected = torch.ops.aten.nll_loss_backward(torch.ones([]), torch.from_numpy(x), torch.from_numpy(t), None, 2,
                                                -100, torch.ones([]))
    np.testing.assert_array_equal(out.numpy(), expected.numpy())
