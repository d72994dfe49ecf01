"""The rest of torch.nn (kiln/ops/nn_more_ops.cpp, python/kiln/nn): the
similarity and distance functions, bilinear, rrelu, max unpooling, local
response norm, LP pooling, and the margin, ranking, embedding, Gaussian,
Poisson and CTC losses, against torch 1.13: the aten operators (every
reduction, their errors), their gradients (against torch's and by float64
finite differences), and the layers eagerly and scripted with torch's
state_dict."""
import numpy as np
import pytest
import torch

import kiln
import kiln.nn as knn
import torch.nn as tnn
from autograd_check import assert_gradients_match_torch, away_from_kinks, gradcheck
from conftest import assert_same

RNG = np.random.default_rng(7)
REDUCTIONS = ["none", "mean", "sum"]


def _randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _t(lib, a):
    return lib.from_numpy(np.array(a).copy())


def _both(fn, *arrays, rtol=1e-5, atol=1e-6):
    t = fn(torch, *[_t(torch, a) for a in arrays])
    k = fn(kiln, *[_t(kiln, a) for a in arrays])
    assert_same(k, t, rtol=rtol, atol=atol)
    return k


def _same_error(fn, *arrays, exc=RuntimeError):
    with pytest.raises(exc) as theirs:
        fn(torch, *[_t(torch, a) for a in arrays])
    with pytest.raises(exc) as ours:
        fn(kiln, *[_t(kiln, a) for a in arrays])
    assert str(theirs.value).split("\n")[0] in str(ours.value), (str(ours.value), str(theirs.value))


SIGN = np.sign(_randn(4, 5)).astype(np.float32)
SIGN4 = np.array([1, -1, 1, -1], np.float32)
CLASSES = np.array([0, 3, 4, 1], np.int64)
LABELS = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0], [4, -1, 2, 0, 0]], np.int64)

# (name, program(lib, *inputs), inputs): the functional form in both libraries.
LOSSES = [
    ("margin_ranking", lambda lib, a, b, r: lib.nn.functional.margin_ranking_loss(a, b, _t(lib, SIGN4), 0.3,
                                                                                  reduction=r), [(4,), (4,)]),
    ("hinge_embedding", lambda lib, a, r: lib.nn.functional.hinge_embedding_loss(a, _t(lib, SIGN), 0.7, reduction=r),
     [(4, 5)]),
    ("soft_margin", lambda lib, a, r: lib.nn.functional.soft_margin_loss(a, _t(lib, SIGN), reduction=r), [(4, 5)]),
    ("cosine_embedding", lambda lib, a, b, r: lib.nn.functional.cosine_embedding_loss(a, b, _t(lib, SIGN4), 0.1,
                                                                                      reduction=r), [(4, 5), (4, 5)]),
    ("poisson_nll", lambda lib, a, r: lib.nn.functional.poisson_nll_loss(a, _t(lib, np.abs(SIGN) * 3), reduction=r),
     [(4, 5)]),
    ("poisson_nll_full", lambda lib, a, r: lib.nn.functional.poisson_nll_loss(
        a.abs() + 0.5, _t(lib, np.abs(SIGN) * 3), log_input=False, full=True, reduction=r), [(4, 5)]),
    ("gaussian_nll", lambda lib, a, b, v, r: lib.nn.functional.gaussian_nll_loss(a, b, v.abs() + 0.1, reduction=r),
     [(4, 5), (4, 5), (4, 5)]),
    ("gaussian_nll_full", lambda lib, a, b, v, r: lib.nn.functional.gaussian_nll_loss(
        a, b, v.abs() + 0.1, full=True, reduction=r), [(4, 5), (4, 5), (4,)]),
    ("triplet_margin", lambda lib, a, p, n, r: lib.nn.functional.triplet_margin_loss(a, p, n, reduction=r),
     [(4, 5)] * 3),
    ("triplet_margin_swap_p1", lambda lib, a, p, n, r: lib.nn.functional.triplet_margin_loss(
        a, p, n, 0.5, 1.0, swap=True, reduction=r), [(4, 5)] * 3),
    ("triplet_with_distance", lambda lib, a, p, n, r: lib.nn.functional.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda x, y: 1.0 - lib.nn.functional.cosine_similarity(x, y), reduction=r),
     [(4, 5)] * 3),
    ("multi_margin", lambda lib, a, r: lib.nn.functional.multi_margin_loss(a, _t(lib, CLASSES), reduction=r),
     [(4, 5)]),
    ("multi_margin_p2_weight", lambda lib, a, r: lib.nn.functional.multi_margin_loss(
        a, _t(lib, CLASSES), 2, 0.7, _t(lib, np.linspace(0.5, 1.5, 5).astype(np.float32)), reduction=r), [(4, 5)]),
    ("multilabel_margin", lambda lib, a, r: lib.nn.functional.multilabel_margin_loss(a, _t(lib, LABELS), reduction=r),
     [(4, 5)]),
    ("multilabel_soft_margin", lambda lib, a, r: lib.nn.functional.multilabel_soft_margin_loss(
        a, _t(lib, (SIGN > 0).astype(np.float32)), reduction=r), [(4, 5)]),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name, fn, shapes", LOSSES, ids=[n for n, _, _ in LOSSES])
def test_loss_values_and_gradients(name, fn, shapes, reduction):
    values = [_randn(*s) for s in shapes]
    _both(lambda lib, *xs: fn(lib, *xs, reduction), *values)
    assert_gradients_match_torch(lambda lib, *xs: fn(lib, *xs, reduction), values)
    assert_gradients_match_torch(lambda lib, *xs: fn(lib, *xs, reduction), values, noncontiguous=True)


GRADCHECKED = ["margin_ranking", "soft_margin", "cosine_embedding", "poisson_nll", "poisson_nll_full", "gaussian_nll",
               "triplet_margin", "multi_margin_p2_weight", "multilabel_margin"]


@pytest.mark.parametrize("name, fn, shapes", [c for c in LOSSES if c[0] in GRADCHECKED],
                         ids=GRADCHECKED)
def test_loss_gradcheck(name, fn, shapes):
    gradcheck(lambda lib, *xs: fn(lib, *xs, "sum"), away_from_kinks([_randn(*s, dtype=np.float64) for s in shapes]))


def test_legacy_reduction_flags():
    x, y = _randn(4, 5), _randn(4, 5)
    for sa, red in [(False, None), (None, False), (True, True)]:
        _both(lambda lib, a: lib.nn.functional.soft_margin_loss(a, _t(lib, SIGN), size_average=sa, reduce=red), x)
        _both(lambda lib, a, b: lib.nn.functional.cosine_embedding_loss(a, b, _t(lib, SIGN4), size_average=sa,
                                                                        reduce=red), x, y)
        _both(lambda lib, a: lib.nn.functional.multi_margin_loss(a, _t(lib, CLASSES), size_average=sa, reduce=red),
              x)


def test_aten_loss_out_forms_and_backward_kernels():
    x = _randn(4, 5)
    for lib_name in ["soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss"]:
        target = {"soft_margin_loss": SIGN, "multi_margin_loss": CLASSES, "multilabel_margin_loss": LABELS}[lib_name]
        for r in range(3):
            _both(lambda lib, a, t: getattr(torch.ops.aten, lib_name)(a, t, reduction=r,
                                                                      out=torch.empty(0)) if lib is torch else
                  kiln._functions.op(lib_name)(a, t, reduction=r, out=kiln.empty([0])), x, target)
    _both(lambda lib, a: _aten(lib, "multilabel_margin_loss_forward")(a, _t(lib, LABELS), 0), x)
    _both(lambda lib, g, a: _aten(lib, "multi_margin_loss_backward")(g, a, _t(lib, CLASSES), 2, 0.5, None, 0),
          _randn(4), x)
    _both(lambda lib, g, a: _aten(lib, "soft_margin_loss_backward")(g, a, _t(lib, SIGN), 0), _randn(4, 5), x)


def _aten(lib, name):
    return getattr(torch.ops.aten, name) if lib is torch else kiln._functions.op(name)


def test_margin_losses_shapes_for_vectors():
    v = _randn(5)
    _both(lambda lib, a: _aten(lib, "multi_margin_loss")(a, _t(lib, np.array([2])), 1, 1, None, 0), v)
    _both(lambda lib, a: _aten(lib, "multi_margin_loss")(a, _t(lib, np.array(2)), 1, 1, None, 0), v)
    _both(lambda lib, a: _aten(lib, "multilabel_margin_loss")(a, _t(lib, np.array([1, 3, -1, 0, 0])), 0), v)


MARGIN_ERRORS = [
    lambda lib, x: _aten(lib, "multi_margin_loss")(x, _t(lib, CLASSES), 3, 1, None, 1),
    lambda lib, x: _aten(lib, "multi_margin_loss")(x, _t(lib, np.array([0, 5, 1, 1])), 1, 1, None, 1),
    lambda lib, x: _aten(lib, "multi_margin_loss")(x, _t(lib, np.array([0, 1])), 1, 1, None, 1),
    lambda lib, x: _aten(lib, "multi_margin_loss")(x, _t(lib, CLASSES.astype(np.float32)), 1, 1, None, 1),
    lambda lib, x: _aten(lib, "multi_margin_loss")(_t(lib, np.zeros((2, 0), np.float32)), _t(lib, CLASSES[:2]), 1,
                                                   1, None, 1),
    lambda lib, x: _aten(lib, "multilabel_margin_loss")(x, _t(lib, np.array([0, 1])), 1),
    lambda lib, x: _aten(lib, "multilabel_margin_loss")(x, _t(lib, np.where(LABELS == 4, 7, LABELS)), 1),
    lambda lib, x: lib.nn.functional.cosine_embedding_loss(x, x, _t(lib, np.ones((4, 5), np.float32))),
    lambda lib, x: lib.nn.functional.triplet_margin_loss(x, x, x[0]),
    lambda lib, x: lib.nn.functional.bilinear(x, x, _t(lib, np.zeros((2, 4, 5), np.float32))),
    lambda lib, x: lib.nn.functional.bilinear(x, x[:3], _t(lib, np.zeros((2, 5, 5), np.float32))),
]


@pytest.mark.parametrize("index", range(len(MARGIN_ERRORS)))
def test_errors_as_torch(index):
    _same_error(MARGIN_ERRORS[index], _randn(4, 5))


def test_margin_ranking_loss_dims_must_agree():
    for lib in (torch, kiln):
        x = _t(lib, _randn(4, 5))
        with pytest.raises(RuntimeError, match="margin_ranking_loss : All input tensors should have same dimension"):
            lib.nn.functional.margin_ranking_loss(x, x, _t(lib, SIGN4))


def test_gaussian_nll_errors():
    x = _randn(4, 5)
    for var, message in [(np.ones((3,), np.float32), "var is of incorrect size"),
                         (-np.ones((4, 5), np.float32), "var has negative entry")]:
        for lib in (torch, kiln):
            with pytest.raises(ValueError, match=message):
                lib.nn.functional.gaussian_nll_loss(_t(lib, x), _t(lib, x), _t(lib, var))


@pytest.mark.parametrize("dim", [1, 0, -1])
def test_cosine_similarity_and_pairwise_distance(dim):
    a, b = _randn(4, 5), _randn(4, 5)
    _both(lambda lib, x, y: lib.cosine_similarity(x, y, dim), a, b)
    _both(lambda lib, x, y: lib.nn.functional.cosine_similarity(x, y[:1], dim), a, b)  # broadcast
    _both(lambda lib, x, y: lib.cosine_similarity(x, y.double(), dim), a, b)  # promotion
    z = np.zeros((4, 5), np.float32)
    _both(lambda lib, x, y: lib.cosine_similarity(x, y, dim), a, z)  # norms clamped to eps
    assert_gradients_match_torch(lambda lib, x, y: lib.cosine_similarity(x, y, dim), [a, b])
    for p in [2.0, 1.0, 3.0, float("inf")]:
        _both(lambda lib, x, y: lib.pairwise_distance(x, y, p), a, b)
        _both(lambda lib, x, y: lib.pairwise_distance(x, y, p, 1e-3, True), a, b[0])
    assert_gradients_match_torch(lambda lib, x, y: lib.pairwise_distance(x, y), [a, b])
    gradcheck(lambda lib, x, y: lib.cosine_similarity(x, y, dim), [_randn(3, 4, dtype=np.float64)] * 2)


def test_cosine_similarity_gradient_at_a_clamped_norm():
    # torch clamps the squared norms without recording it: the gradient is the unclamped one's.
    a, tiny = _randn(3, 4), np.zeros((3, 4), np.float32)
    tiny[0] = 1e-10
    assert_gradients_match_torch(lambda lib, x, y: lib.cosine_similarity(x, y), [a, tiny], rtol=1e-5, atol=1e-3)


def test_cosine_similarity_integer_inputs_raise():
    _same_error(lambda lib, x: lib.cosine_similarity(x, x), np.ones((2, 3), np.int64))


def test_bilinear():
    x1, x2, w, b = _randn(2, 3, 4), _randn(2, 3, 5), _randn(6, 4, 5), _randn(6)
    _both(lambda lib, p, q, ww, bb: lib.nn.functional.bilinear(p, q, ww, bb), x1, x2, w, b)
    _both(lambda lib, p, q, ww: lib.bilinear(p, q, ww), x1, x2, w)
    assert_gradients_match_torch(lambda lib, p, q, ww, bb: lib.bilinear(p, q, ww, bb), [x1, x2, w, b])
    gradcheck(lambda lib, p, q, ww, bb: lib.bilinear(p, q, ww, bb),
              [_randn(2, 3, dtype=np.float64), _randn(2, 2, dtype=np.float64), _randn(2, 3, 2, dtype=np.float64),
               _randn(2, dtype=np.float64)])


def test_rrelu_eval_and_inplace():
    x = _randn(4, 5)
    _both(lambda lib, a: lib.rrelu(a), x)
    _both(lambda lib, a: lib.rrelu(a, 0.1, 0.3), x)
    _both(lambda lib, a: lib.nn.functional.rrelu(a * 1, 0.2, 0.4, inplace=True), x)
    assert_gradients_match_torch(lambda lib, a: lib.rrelu(a, 0.1, 0.3), [x])
    _same_error(lambda lib, a: lib.rrelu(a, 0.5, 0.1), x)


def test_rrelu_training_draws_slopes_in_range():
    kiln.manual_seed(3)
    x = kiln.from_numpy(np.concatenate([-np.ones(2000, np.float32), np.ones(10, np.float32)])).requires_grad_(True)
    y = kiln.rrelu(x, 0.1, 0.3, True)
    slopes = -y.detach().numpy()[:2000]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.01
    assert np.array_equal(y.detach().numpy()[2000:], np.ones(10, np.float32))
    y.sum().backward()
    g = x.grad.numpy()
    assert np.allclose(g[:2000], slopes) and np.array_equal(g[2000:], np.ones(10, np.float32))
    kiln.manual_seed(3)
    again = kiln.rrelu(kiln.from_numpy(x.detach().numpy()), 0.1, 0.3, True)
    assert np.array_equal(again.numpy(), y.detach().numpy())
    # The noise the aten op writes is the slope of each element.
    noise = kiln.empty([2010])
    out = kiln._functions.op("rrelu_with_noise")(x.detach(), noise, 0.1, 0.3, True)
    assert np.allclose(out.numpy(), x.detach().numpy() * noise.numpy())


def test_max_unpool_roundtrip():
    x = _randn(2, 3, 6, 8)
    for k, s in [(2, 2), (3, 2)]:
        def fn(lib, a):
            out, idx = lib.nn.functional.max_pool2d(a, k, s, return_indices=True)
            return lib.nn.functional.max_unpool2d(out, idx, k, s, output_size=list(a.shape[-2:]))
        _both(fn, x)
        assert_gradients_match_torch(fn, [x])
    x1 = _randn(2, 3, 10)

    def fn1(lib, a):
        out, idx = lib.nn.functional.max_pool1d(a, 2, return_indices=True)
        return lib.nn.functional.max_unpool1d(out, idx, 2)
    _both(fn1, x1)
    x3 = _randn(1, 2, 4, 4, 6)

    def fn3(lib, a):
        out, idx = lib.nn.functional.max_pool3d(a, 2, return_indices=True)
        return lib.nn.functional.max_unpool3d(out, idx, 2)
    _both(fn3, x3)
    assert_gradients_match_torch(fn3, [x3])


UNPOOL_ERRORS = [
    lambda lib, x: _aten(lib, "max_unpool2d")(x, _t(lib, np.array([[[[0, 1], [2, 99]]]])), [3, 3]),
    lambda lib, x: _aten(lib, "max_unpool2d")(x, _t(lib, np.array([[[[0, 1], [2, 3]]]], np.int32)), [3, 3]),
    lambda lib, x: _aten(lib, "max_unpool2d")(x[0, 0], _t(lib, np.array([[0, 1], [2, 3]])), [3, 3]),
    lambda lib, x: _aten(lib, "max_unpool2d")(x, _t(lib, np.array([[[[0, 1], [2, 3]]]])), [1, 1]),
    lambda lib, x: _aten(lib, "max_unpool3d")(x, _t(lib, np.array([[[[0, 1], [2, 99]]]])), [3, 3, 3], [1, 1, 1],
                                              [0, 0, 0]),
    lambda lib, x: _aten(lib, "max_unpool3d")(x, _t(lib, np.array([[[[0, 1], [2, 3]]]])), [1, 3, 3], [0, 1, 1],
                                              [0, 0, 0]),
    lambda lib, x: lib.nn.functional.max_unpool2d(x, _t(lib, np.array([[[[0, 1], [2, 3]]]])), 2, output_size=[9, 9]),
]


@pytest.mark.parametrize("index", range(len(UNPOOL_ERRORS)))
def test_max_unpool_errors(index):
    exc = ValueError if index == len(UNPOOL_ERRORS) - 1 else RuntimeError
    _same_error(UNPOOL_ERRORS[index], _randn(1, 1, 2, 2), exc=exc)


def test_local_response_norm_and_lp_pool():
    for shape in [(2, 6, 7), (2, 6, 4, 5), (1, 5, 2, 3, 4)]:
        x = _randn(*shape)
        _both(lambda lib, a: lib.nn.functional.local_response_norm(a, 3), x)
        _both(lambda lib, a: lib.nn.functional.local_response_norm(a, 2, 1e-2, 0.5, 2.0), x)
    assert_gradients_match_torch(lambda lib, a: lib.nn.functional.local_response_norm(a, 3), [_randn(2, 6, 4, 5)])
    x = np.abs(_randn(2, 3, 6, 6)) + 0.1
    _both(lambda lib, a: lib.nn.functional.lp_pool2d(a, 2.0, 2), x)
    _both(lambda lib, a: lib.nn.functional.lp_pool2d(a, 3, (3, 2), 1), x)
    _both(lambda lib, a: lib.nn.functional.lp_pool1d(a, 2.0, 3, 2), x[:, :, 0])


# --- CTC ---------------------------------------------------------------------------------------

def _ctc_inputs(T=12, N=3, C=5, S=4, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((T, N, C))
    log_probs = (logits - np.log(np.exp(logits).sum(-1, keepdims=True))).astype(np.float32)
    targets = rng.integers(1, C, (N, S)).astype(np.int64)
    input_lengths = np.array([T, T - 2, T - 5][:N], np.int64)
    target_lengths = np.array([S, S - 1, 2][:N], np.int64)
    return log_probs, targets, input_lengths, target_lengths


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("concatenated", [False, True])
def test_ctc_loss_against_torch(reduction, concatenated):
    lp, targets, il, tl = _ctc_inputs()
    if concatenated:
        targets = np.concatenate([targets[i, :tl[i]] for i in range(len(tl))])

    def fn(lib, log_probs):
        return lib.nn.functional.ctc_loss(log_probs, _t(lib, targets), _t(lib, il), _t(lib, tl), reduction=reduction)
    _both(fn, lp, rtol=1e-5, atol=1e-5)
    assert_gradients_match_torch(fn, [lp], rtol=1e-4, atol=1e-5)

    def with_lists(lib, log_probs):
        return lib.ctc_loss(log_probs, _t(lib, targets), [int(v) for v in il], [int(v) for v in tl], 0,
                            REDUCTIONS.index(reduction))
    _both(with_lists, lp, rtol=1e-5, atol=1e-5)


def test_ctc_loss_blank_int32_targets_zero_infinity_and_unbatched():
    lp, targets, _, _ = _ctc_inputs(T=4, S=4, seed=1)
    # Four repeated labels need 7 frames: sample 0's loss is infinite.
    il, tl = np.array([4, 3, 1], np.int64), np.array([4, 3, 0], np.int64)
    targets[0] = [1, 1, 1, 1]
    for zero_infinity in [False, True]:
        def fn(lib, log_probs):
            return lib.nn.functional.ctc_loss(log_probs, _t(lib, targets.astype(np.int32)), _t(lib, il), _t(lib, tl),
                                              blank=0, reduction="none", zero_infinity=zero_infinity)
        _both(fn, lp)
        assert_gradients_match_torch(fn, [lp])
    lp2, targets2, il2, tl2 = _ctc_inputs(C=6, seed=2)

    def fn_blank(lib, log_probs):
        return lib.nn.functional.ctc_loss(log_probs, _t(lib, np.where(targets2 == 5, 1, targets2)), _t(lib, il2),
                                          _t(lib, tl2), blank=5)
    _both(fn_blank, lp2)
    assert_gradients_match_torch(fn_blank, [lp2])

    def unbatched(lib, log_probs):
        return lib.ctc_loss(log_probs[:, 0], _t(lib, targets2[0]), _t(lib, il2[:1]), _t(lib, tl2[:1]), 0, 0)
    _both(unbatched, lp2)


def test_ctc_gradcheck():
    lp, targets, il, tl = _ctc_inputs(T=6, N=2, C=4, S=2, seed=3)
    # torch's CTC gradient assumes log_probs come from log_softmax (it is
    # exact through it), as torch's own gradcheck of ctc_loss does.
    gradcheck(lambda lib, x: lib.ctc_loss(x.log_softmax(2), _t(lib, targets), _t(lib, il[:2]), _t(lib, tl[:2]), 0, 2),
              [lp.astype(np.float64)])


CTC_ERRORS = [
    lambda lib, lp, t: lib.ctc_loss(lp[0], t, [12, 10, 7], [4, 3, 2]),
    lambda lib, lp, t: _aten(lib, "_ctc_loss")(lp, t.float(), [12, 10, 7], [4, 3, 2]),
    lambda lib, lp, t: lib.ctc_loss(lp, t, [12, 10], [4, 3, 2]),
    lambda lib, lp, t: lib.ctc_loss(lp, t, [13, 10, 7], [4, 3, 2]),
    lambda lib, lp, t: lib.ctc_loss(lp, t, [12, 10, 7], [4, 3, 2], 7),
    lambda lib, lp, t: lib.ctc_loss(lp, t[:, :2], [12, 10, 7], [4, 3, 2]),
    lambda lib, lp, t: lib.ctc_loss(lp, t.reshape(-1)[:5], [12, 10, 7], [4, 3, 2]),
]


@pytest.mark.parametrize("index", range(len(CTC_ERRORS)))
def test_ctc_errors(index):
    lp, targets, _, _ = _ctc_inputs()
    _same_error(CTC_ERRORS[index], lp, targets)


# --- layers ------------------------------------------------------------------------------------

def _load(k_module, t_module):
    k_module.load_state_dict({k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in t_module.state_dict().items()})


# (constructor arguments, input shapes) per layer; the same inputs for torch and kiln.
LAYERS = [
    ("Softmin", (1,), [(3, 4)]), ("Softmin", (), [(2, 3, 4)]), ("Softsign", (), [(3, 4)]),
    ("Tanhshrink", (), [(3, 4)]), ("Softmax2d", (), [(2, 3, 4, 4)]), ("RReLU", (0.1, 0.4), [(3, 4)]),
    ("CosineSimilarity", (), [(3, 4), (3, 4)]), ("CosineSimilarity", (0, 1e-6), [(3, 4), (3, 4)]),
    ("PairwiseDistance", (), [(3, 4), (3, 4)]), ("PairwiseDistance", (1.0, 1e-3, True), [(3, 4), (3, 4)]),
    ("Bilinear", (4, 5, 3), [(2, 4), (2, 5)]), ("Bilinear", (4, 5, 3, False), [(2, 4), (2, 5)]),
    ("LocalResponseNorm", (3,), [(2, 5, 4, 4)]), ("LocalResponseNorm", (2, 1e-3, 0.5, 2.0), [(2, 5, 7)]),
    ("LPPool1d", (2, 3), [(2, 3, 9)]), ("LPPool2d", (2, 2), [(2, 3, 6, 6)]),
    ("LPPool2d", (1.5, (3, 2), (2, 1)), [(2, 3, 6, 6)]),
    ("PoissonNLLLoss", (), [(3, 4), (3, 4)]), ("PoissonNLLLoss", (False, True), [(3, 4), (3, 4)]),
    ("GaussianNLLLoss", (), [(3, 4), (3, 4), (3, 4)]),
    ("HingeEmbeddingLoss", (0.5,), [(3, 4), (3, 4)]), ("SoftMarginLoss", (), [(3, 4), (3, 4)]),
    ("MultiLabelSoftMarginLoss", (), [(3, 4), (3, 4)]),
    ("CosineEmbeddingLoss", (0.2,), [(3, 4), (3, 4), (3,)]),
    ("MarginRankingLoss", (0.1,), [(3,), (3,), (3,)]),
    ("TripletMarginLoss", (), [(3, 4), (3, 4), (3, 4)]),
    ("TripletMarginLoss", (0.5, 1.0, 1e-6, True, None, None, "sum"), [(3, 4), (3, 4), (3, 4)]),
    ("MultiMarginLoss", (), [(3, 4), "classes"]), ("MultiMarginLoss", (2, 0.5), [(3, 4), "classes"]),
    ("MultiLabelMarginLoss", (), [(3, 4), "labels"]),
]


SIGN_TARGET = {"HingeEmbeddingLoss", "SoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss"}
POSITIVE = {"PoissonNLLLoss", "GaussianNLLLoss", "LPPool1d", "LPPool2d"}


def _layer_input(lib, spec, name, i, count):
    if spec == "classes":
        return lib.from_numpy(np.array([0, 3, 2], np.int64))
    if spec == "labels":
        return lib.from_numpy(np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]], np.int64))
    a = np.random.default_rng(i).standard_normal(spec).astype(np.float32)
    last = i == count - 1
    if name in POSITIVE:
        a = np.abs(a) + 0.1
    if name in SIGN_TARGET and last:
        a = np.where(a > 0, 1.0, -1.0).astype(np.float32)
    if name == "MultiLabelSoftMarginLoss" and last:
        a = (a > 0).astype(np.float32)
    return lib.from_numpy(a)


@pytest.mark.parametrize("name, args, specs", LAYERS, ids=[f"{n}{a}" for n, a, _ in LAYERS])
def test_layer_eager_and_scripted(name, args, specs):
    torch.manual_seed(0)
    t_module = getattr(tnn, name)(*args)
    k_module = getattr(knn, name)(*args)
    t_module.eval()
    k_module.eval()
    assert list(k_module.state_dict().keys()) == list(t_module.state_dict().keys())
    assert repr(k_module) == repr(t_module)
    _load(k_module, t_module)
    t_inputs = [_layer_input(torch, s, name, i, len(specs)) for i, s in enumerate(specs)]
    k_inputs = [_layer_input(kiln, s, name, i, len(specs)) for i, s in enumerate(specs)]
    expected = t_module(*t_inputs)
    assert_same(k_module(*k_inputs), expected, rtol=1e-5, atol=1e-5)
    assert_same(kiln.script(k_module)(*k_inputs), expected, rtol=1e-5, atol=1e-5)


def test_bilinear_initialisation_and_gradients():
    k_module = knn.Bilinear(4, 5, 3)
    bound = 1 / np.sqrt(4)
    w = k_module.weight.detach().numpy()
    assert w.shape == (3, 4, 5) and np.abs(w).max() <= bound and np.abs(w).std() > 0.1
    assert np.abs(k_module.bias.detach().numpy()).max() <= bound
    t_module = tnn.Bilinear(4, 5, 3)
    _load(k_module, t_module)
    x1, x2 = _randn(2, 4), _randn(2, 5)
    t_module(torch.from_numpy(x1), torch.from_numpy(x2)).sum().backward()
    k_module(kiln.from_numpy(x1), kiln.from_numpy(x2)).sum().backward()
    np.testing.assert_allclose(k_module.weight.grad.numpy(), t_module.weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_rrelu_layer_training_and_weighted_losses():
    m = knn.RReLU()
    m.train()
    kiln.manual_seed(0)
    y = m(kiln.from_numpy(-np.ones(100, np.float32))).numpy()
    assert (-y >= 1 / 8).all() and (-y <= 1 / 3).all() and np.unique(y).size > 50
    weight = np.linspace(0.5, 1.5, 4).astype(np.float32)
    for name, inputs in [("MultiMarginLoss", ["x", "classes"]), ("MultiLabelSoftMarginLoss", ["x", "bits"])]:
        t_module = getattr(tnn, name)(weight=torch.from_numpy(weight))
        k_module = getattr(knn, name)(weight=kiln.from_numpy(weight))
        assert list(k_module.state_dict().keys()) == list(t_module.state_dict().keys()) == ["weight"]
        x = _randn(3, 4)
        second = np.array([0, 3, 2]) if inputs[1] == "classes" else (_randn(3, 4) > 0).astype(np.float32)
        expected = t_module(torch.from_numpy(x), torch.from_numpy(second))
        assert_same(k_module(kiln.from_numpy(x), kiln.from_numpy(second)), expected)
        assert_same(kiln.script(k_module)(kiln.from_numpy(x), kiln.from_numpy(second)), expected)


def test_max_unpool_layers():
    x = _randn(2, 3, 6, 6)
    t_pool, k_pool = tnn.MaxPool2d(2, return_indices=True), knn.MaxPool2d(2, return_indices=True)
    t_unpool, k_unpool = tnn.MaxUnpool2d(2), knn.MaxUnpool2d(2)
    assert repr(k_unpool) == repr(t_unpool)
    out, idx = t_pool(torch.from_numpy(x))
    kout, kidx = k_pool(kiln.from_numpy(x))
    expected = t_unpool(out, idx)
    assert_same(k_unpool(kout, kidx), expected)
    assert_same(kiln.script(k_unpool)(kout, kidx), expected)
    assert_same(k_unpool(kout, kidx, output_size=[7, 7]), t_unpool(out, idx, output_size=[7, 7]))
    for dims, t_cls, k_cls, shape in [(1, tnn.MaxUnpool1d, knn.MaxUnpool1d, (2, 3, 8)),
                                      (3, tnn.MaxUnpool3d, knn.MaxUnpool3d, (1, 2, 4, 4, 4))]:
        x = _randn(*shape)
        out, idx = getattr(torch.nn.functional, f"max_pool{dims}d")(torch.from_numpy(x), 2, return_indices=True)
        k_in = (kiln.from_numpy(out.numpy().copy()), kiln.from_numpy(idx.numpy().copy()))
        assert_same(k_cls(2)(*k_in), t_cls(2)(out, idx))
        assert_same(kiln.script(k_cls(2))(*k_in), t_cls(2)(out, idx))


def test_ctc_loss_layer():
    lp, targets, il, tl = _ctc_inputs()
    for reduction in REDUCTIONS:
        t_module, k_module = tnn.CTCLoss(reduction=reduction), knn.CTCLoss(reduction=reduction)
        args = [lp, targets, il, tl]
        expected = t_module(*[torch.from_numpy(a.copy()) for a in args])
        k_args = [kiln.from_numpy(a.copy()) for a in args]
        assert_same(k_module(*k_args), expected, rtol=1e-5, atol=1e-5)
        assert_same(kiln.script(k_module)(*k_args), expected, rtol=1e-5, atol=1e-5)


def test_triplet_margin_with_distance_loss_layer():
    a, p, n = _randn(3, 4), _randn(3, 4), _randn(3, 4)
    expected = tnn.TripletMarginWithDistanceLoss(margin=0.5)(*[torch.from_numpy(v) for v in (a, p, n)])
    assert_same(knn.TripletMarginWithDistanceLoss(margin=0.5)(*[kiln.from_numpy(v) for v in (a, p, n)]), expected)


def test_nothing_of_the_list_is_missing():
    wanted = ["Softmin", "Softsign", "Tanhshrink", "RReLU", "CosineSimilarity", "PairwiseDistance", "Bilinear",
              "LocalResponseNorm", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d",
              "PoissonNLLLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MultiMarginLoss", "MultiLabelMarginLoss",
              "SoftMarginLoss", "MultiLabelSoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
              "MarginRankingLoss", "CosineEmbeddingLoss", "CTCLoss", "HuberLoss", "Softmax2d", "FractionalMaxPool2d",
              "FractionalMaxPool3d", "CrossMapLRN2d", "NLLLoss2d"]
    assert [n for n in wanted if not hasattr(knn, n)] == []


SCRIPT = """
def f(x, y, z, w, idx):
    a = torch.nn.functional.cosine_similarity(x, y)
    b = torch.nn.functional.pairwise_distance(x, y, 1.0)
    c = torch.nn.functional.multi_margin_loss(x, idx, 2)
    d = torch.nn.functional.rrelu(x, 0.1, 0.2)
    e = torch.nn.functional.bilinear(x, y, w)
    f = torch.nn.functional.local_response_norm(z, 2)
    g = torch.nn.functional.soft_margin_loss(x, y.sign(), reduction='sum')
    return a, b, c, d, e, f, g
"""


def test_functional_in_script():
    x, y, z, w = _randn(3, 4), _randn(3, 4), _randn(2, 4, 3, 3), _randn(2, 4, 4)
    idx = np.array([0, 3, 1], np.int64)
    src = SCRIPT.replace("def f(x, y, z, w, idx):",
                         "def f(x: Tensor, y: Tensor, z: Tensor, w: Tensor, idx: Tensor):")
    expected = torch.jit.CompilationUnit(src).f(*[torch.from_numpy(a) for a in (x, y, z, w, idx)])
    got = kiln.compile(src).f(*[kiln.from_numpy(a) for a in (x, y, z, w, idx)])
    assert_same(list(got), list(expected), rtol=1e-5, atol=1e-5)


# --- fractional max pooling --------------------------------------------------------------------

FRACTIONAL = [((2, 3, 9, 8), [2, 3], [4, 5]), ((3, 7, 7), [3, 3], [5, 5]), ((2, 2, 6, 7, 8), [2, 2, 3], [3, 4, 5]),
              ((2, 5, 5, 5), [2, 2, 2], [3, 3, 3])]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, kernel, out", FRACTIONAL, ids=[str(s) for s, _, _ in FRACTIONAL])
def test_fractional_max_pool_against_torch(shape, kernel, out, dtype):
    rank = len(kernel)
    x = _randn(*shape, dtype=dtype)
    x.reshape(-1)[::7] = np.nan if rank == 2 else x.reshape(-1)[::7]
    batch = 1 if len(shape) == rank + 1 else shape[0]
    samples = RNG.random((batch, shape[-rank - 1], rank)).astype(dtype)

    def fn(lib, a, u):
        return _aten(lib, f"fractional_max_pool{rank}d")(a, kernel, out, u)
    _both(fn, x, samples)
    finite = _randn(*shape, dtype=dtype)
    assert_gradients_match_torch(lambda lib, a: fn(lib, a, _t(lib, samples))[0], [finite])
    assert_gradients_match_torch(lambda lib, a: fn(lib, a, _t(lib, samples))[0], [finite], noncontiguous=True)
    name = f"fractional_max_pool{rank}d_with_indices"
    _both(lambda lib, a, u: getattr(lib.nn.functional, name)(a, kernel, out, _random_samples=u), x, samples)
    ratio = [0.6] * rank
    _both(lambda lib, a, u: getattr(lib.nn.functional, name)(a, 2, output_ratio=ratio, _random_samples=u), x,
          samples)


FRACTIONAL_ERRORS = [
    lambda lib, x, u: _aten(lib, "fractional_max_pool2d")(x, [3, 3], [4, 4], u),
    lambda lib, x, u: _aten(lib, "fractional_max_pool2d")(x, [2, 2], [4, 5], u),
    lambda lib, x, u: _aten(lib, "fractional_max_pool2d")(x[0, 0], [2, 2], [2, 2], u),
    lambda lib, x, u: _aten(lib, "fractional_max_pool2d")(x[:, :0], [2, 2], [2, 2], u),
    lambda lib, x, u: _aten(lib, "fractional_max_pool2d")(x.double(), [2, 2], [2, 2], u),
    lambda lib, x, u: _aten(lib, "fractional_max_pool3d")(x.reshape(1, 1, 2, 5, 5), [2, 2, 2], [1, 2, 2], u),
    lambda lib, x, u: _aten(lib, "fractional_max_pool3d")(x[0], [2, 2, 2], [2, 2, 2], u),
]


@pytest.mark.parametrize("index", range(len(FRACTIONAL_ERRORS)))
def test_fractional_max_pool_errors(index):
    _same_error(FRACTIONAL_ERRORS[index], _randn(1, 2, 5, 5), RNG.random((1, 2, 2)).astype(np.float32))


def test_fractional_max_pool_random_samples_checked_and_drawn():
    x = kiln.from_numpy(_randn(1, 2, 5, 5))
    with pytest.raises(RuntimeError, match="random_samples"):
        kiln.fractional_max_pool2d(x, [2, 2], [3, 3], kiln.rand([1, 3, 2]))
    kiln.manual_seed(5)
    a = kiln.nn.functional.fractional_max_pool2d(x, 2, output_size=3)
    kiln.manual_seed(5)
    assert np.array_equal(kiln.nn.functional.fractional_max_pool2d(x, 2, output_size=3).numpy(), a.numpy())
    out, idx = kiln.nn.functional.fractional_max_pool2d(x, 2, output_size=3, return_indices=True)
    assert tuple(out.shape) == tuple(idx.shape) == (1, 2, 3, 3)


@pytest.mark.parametrize("rank", [2, 3])
def test_fractional_max_pool_layers(rank):
    shape = (2, 3, 9, 8) if rank == 2 else (2, 2, 6, 7, 8)
    x = _randn(*shape)
    samples = RNG.random((2, shape[1], rank)).astype(np.float32)
    for kwargs in [dict(output_size=3), dict(output_ratio=0.5), dict(output_size=3, return_indices=True)]:
        t_module = getattr(tnn, f"FractionalMaxPool{rank}d")(2, _random_samples=torch.from_numpy(samples), **kwargs)
        k_module = getattr(knn, f"FractionalMaxPool{rank}d")(2, _random_samples=kiln.from_numpy(samples), **kwargs)
        assert list(k_module.state_dict().keys()) == list(t_module.state_dict().keys())
        assert repr(k_module) == repr(t_module)
        expected = t_module(torch.from_numpy(x))
        assert_same(k_module(kiln.from_numpy(x)), expected)
        assert_same(kiln.script(k_module)(kiln.from_numpy(x)), expected)
    for bad in [dict(), dict(output_size=3, output_ratio=0.5), dict(output_ratio=1.5)]:
        for lib in (tnn, knn):
            with pytest.raises(ValueError):
                getattr(lib, f"FractionalMaxPool{rank}d")(2, **bad)


GRAD_SCRIPT = """
def f(x: Tensor, y: Tensor, t: Tensor, idx: Tensor, w: Tensor):
    a = torch.nn.functional.margin_ranking_loss(x[:, 0], y[:, 0], t)
    b = torch.nn.functional.cosine_similarity(x, y).sum()
    c = torch.nn.functional.multi_margin_loss(x, idx)
    d = torch.nn.functional.soft_margin_loss(x, y.detach().sign())
    e = torch.nn.functional.bilinear(x, y, w).sum()
    g = torch.nn.functional.triplet_margin_loss(x, y, w[0, :3])
    h = torch.nn.functional.rrelu(x).sum() + torch.nn.functional.pairwise_distance(x, y).sum()
    return a + b + c + d + e + g + h
"""


def test_gradients_through_a_script():
    x, y, w = _randn(3, 4), _randn(3, 4), _randn(2, 4, 4)
    t, idx = np.array([1, -1, 1], np.float32), np.array([0, 3, 1])
    results = []
    for lib, fn in [(torch, torch.jit.CompilationUnit(GRAD_SCRIPT).f), (kiln, kiln.compile(GRAD_SCRIPT).f)]:
        leaves = [_t(lib, a).requires_grad_(True) for a in (x, y, w)]
        for _ in range(3):  # the executor's profiling and optimized runs
            for leaf in leaves:
                leaf.grad = None
            out = fn(leaves[0], leaves[1], _t(lib, t), _t(lib, idx), leaves[2])
            out.backward()
        results.append([float(out)] + [leaf.grad.numpy().copy() for leaf in leaves])
    assert results[1][0] == pytest.approx(results[0][0], rel=1e-5)
    for ours, theirs in zip(results[1][1:], results[0][1:]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_nll_loss_2d_is_nll_loss():
    x, target = _randn(2, 3, 4, 4), RNG.integers(0, 3, (2, 4, 4))
    with pytest.warns(UserWarning, match="NLLLoss2d has been deprecated"):
        k_module = knn.NLLLoss2d()
    with pytest.warns(UserWarning):
        t_module = tnn.NLLLoss2d()
    expected = t_module(torch.from_numpy(x), torch.from_numpy(target))
    assert_same(k_module(kiln.from_numpy(x), kiln.from_numpy(target)), expected)
    assert_same(kiln.script(k_module)(kiln.from_numpy(x), kiln.from_numpy(target)), expected)


@pytest.mark.parametrize("size, channels", [(3, 6), (5, 4), (2, 7), (4, 3)])
def test_cross_map_lrn2d_forward_and_backward_bits(size, channels):
    # torch's legacy Function, step for step: the same bits, forward and backward.
    x, g = _randn(2, channels, 3, 4), _randn(2, channels, 3, 4)
    results = []
    for lib in (torch, kiln):
        module = lib.nn.CrossMapLRN2d(size, 1e-2, 0.75, 2)
        leaf = _t(lib, x).requires_grad_(True)
        out = module(leaf)
        out.backward(_t(lib, g))
        results.append((out.detach().numpy(), leaf.grad.numpy(), repr(module)))
    assert np.array_equal(results[1][0], results[0][0])
    assert np.array_equal(results[1][1], results[0][1])
    assert results[1][2] == results[0][2]
