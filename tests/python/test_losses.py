"""The losses (kiln/ops/loss_ops.cpp) against torch 1.13: every aten overload
eagerly (dtypes, reductions, weights, ignore_index, label smoothing,
class-probability targets), kiln.nn.functional with torch.nn.functional's
signatures (reductions by name, the legacy size_average/reduce flags),
scripts and shape propagation, the kiln.nn loss layers (scripted too), a
torch-saved scripted module, and torch's errors on bad arguments."""
import io

import pytest
import torch

import kiln
from conftest import assert_same

F = kiln.nn.functional
TF = torch.nn.functional
REDUCTIONS = ["none", "mean", "sum"]


def K(t):
    return kiln.from_numpy(t.detach().numpy().copy())


def randn(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype)


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g, dtype=dtype)


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)


# --- pointwise losses ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kwargs", [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}),
                                         ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.0}),
                                         ("huber_loss", {}), ("huber_loss", {"delta": 0.3})])
def test_pointwise_losses(dtype, reduction, name, kwargs):
    x, y = randn(5, 7, dtype=dtype), randn(5, 7, dtype=dtype, seed=1)
    assert_same(getattr(F, name)(K(x), K(y), reduction=reduction, **kwargs),
                getattr(TF, name)(x, y, reduction=reduction, **kwargs), **tol(dtype))
    enum = REDUCTIONS.index(reduction)
    args = list(kwargs.values())
    assert_same(getattr(kiln, name)(K(x), K(y), enum, *args), getattr(torch._C._nn, name)(x, y, enum, *args),
                **tol(dtype))


def test_pointwise_losses_promote_broadcast_and_out_forms():
    x, y = randn(3, 4), randn(4, dtype=torch.float64, seed=1)
    for name in ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]:
        assert_same(getattr(kiln, name)(K(x), K(y), 0), getattr(torch._C._nn, name)(x, y, 0))
    for name in ["mse_loss", "smooth_l1_loss", "huber_loss"]:
        out = kiln.empty([0])
        getattr(kiln, name)(K(x), K(x * 2), 1, out=out)
        assert_same(out, getattr(torch._C._nn, name)(x, x * 2, 1))
    # The legacy flags pick the reduction as torch's do.
    for size_average, reduce in [(False, None), (None, False), (True, True)]:
        assert_same(F.mse_loss(K(x), K(x * 3), size_average, reduce), TF.mse_loss(x, x * 3, size_average, reduce))


def test_pointwise_loss_errors_match_torch():
    a, b = K(torch.ones(3, dtype=torch.long)), K(torch.zeros(3, dtype=torch.long))
    for name, message in [("mse_loss", "\"mse_cpu\" not implemented for 'Long'"),
                          ("smooth_l1_loss", "\"smooth_l1_cpu\" not implemented for 'Long'"),
                          ("huber_loss", "\"huber_cpu\" not implemented for 'Long'")]:
        with pytest.raises(RuntimeError, match=message):
            getattr(kiln, name)(a, b)
    x = K(randn(3))
    with pytest.raises(RuntimeError, match="smooth_l1_loss does not support negative values for beta."):
        kiln.smooth_l1_loss(x, x, 1, -1.0)
    with pytest.raises(RuntimeError, match="huber_loss does not support non-positive values for delta."):
        kiln.huber_loss(x, x, 1, 0.0)
    with pytest.raises(ValueError, match="median is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="median")
    with pytest.raises(RuntimeError, match="must match the size"):
        kiln.mse_loss(K(randn(3)), K(randn(4)))


# --- nll and cross entropy -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(5,), (6, 5), (2, 5, 4), (2, 5, 3, 4), (2, 5, 2, 3, 2)])
def test_nll_loss(dtype, reduction, weighted, shape):
    x = torch.log_softmax(randn(*shape, dtype=dtype), 0 if len(shape) == 1 else 1)
    target_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = torch.randint(0, 5, target_shape, generator=torch.Generator().manual_seed(3))
    if t.dim() > 0:
        t.view(-1)[0] = 1 if reduction == "none" else -100
    w = rand(5, dtype=dtype, seed=4) if weighted else None
    kw = K(w) if weighted else None
    assert_same(F.nll_loss(K(x), K(t), kw, reduction=reduction), TF.nll_loss(x, t, w, reduction=reduction),
                **tol(dtype))
    t1 = t.masked_fill(t == -100, 1)
    assert_same(F.nll_loss(K(x), K(t1), kw, ignore_index=1, reduction=reduction),
                TF.nll_loss(x, t1, w, ignore_index=1, reduction=reduction), **tol(dtype))
    enum = REDUCTIONS.index(reduction)
    if len(shape) <= 2:
        assert_same(kiln.nll_loss(K(x), K(t), kw, enum, -100), torch._C._nn.nll_loss(x, t, w, enum, -100),
                    **tol(dtype))
        forward = kiln._C._overload("aten::nll_loss_forward")(K(x), K(t), kw, enum, -100)
        assert_same(forward[0], torch._C._nn.nll_loss(x, t, w, enum, -100), **tol(dtype))
    if len(shape) == 4:
        assert_same(kiln.nll_loss2d(K(x), K(t), kw, enum, -100), torch._C._nn.nll_loss2d(x, t, w, enum, -100),
                    **tol(dtype))
        out = kiln.empty([0], dtype=K(x).dtype)
        kiln.nll_loss2d(K(x), K(t), kw, enum, -100, out=out)
        assert_same(out, torch._C._nn.nll_loss2d(x, t, w, enum, -100), **tol(dtype))


def test_nll_loss_all_ignored_is_nan_and_errors_match_torch():
    x = K(randn(2, 3))
    assert_same(kiln.nll_loss(x, K(torch.tensor([-100, -100])), None, 1),
                torch._C._nn.nll_loss(randn(2, 3), torch.tensor([-100, -100]), None, 1))
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        kiln.nll_loss(x, K(torch.tensor([0, 5])))
    with pytest.raises(RuntimeError, match=r"size mismatch \(got input: \[2, 3\], target: \[3\]\)"):
        kiln.nll_loss(x, K(torch.tensor([0, 1, 2])))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Int"):
        kiln.nll_loss(x, K(torch.tensor([0, 1], dtype=torch.int32)))
    with pytest.raises(RuntimeError, match="input tensor should be 1D or 2D"):
        kiln.nll_loss(K(randn(2, 3, 4)), K(torch.zeros(2, 4, dtype=torch.long)))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 classes or no classes"):
        kiln.nll_loss(x, K(torch.tensor([0, 1])), K(torch.ones(4)))
    with pytest.raises((RuntimeError, ValueError), match=r"Expected input batch_size \(2\) to match target batch_size"):
        kiln.nll_loss_nd(K(randn(2, 3, 4)), K(torch.zeros(1, 4, dtype=torch.long)))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 4\], got \[2, 3\]"):
        kiln.nll_loss_nd(K(randn(2, 3, 4)), K(torch.zeros(2, 3, dtype=torch.long)))
    with pytest.raises(RuntimeError, match="only batches of spatial targets supported"):
        kiln.nll_loss2d(K(randn(2, 3, 4, 5)), K(torch.zeros(2, 4, dtype=torch.long)))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.25])
@pytest.mark.parametrize("shape", [(5,), (6, 5), (2, 5, 4), (2, 5, 3, 2)])
def test_cross_entropy_class_indices(reduction, weighted, label_smoothing, shape):
    x = randn(*shape) * 3
    target_shape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = torch.randint(0, 5, target_shape, generator=torch.Generator().manual_seed(3))
    if t.dim() > 0:
        t.view(-1)[-1] = -100
    w = rand(5, seed=4) + 0.1 if weighted else None
    kw = K(w) if weighted else None
    ours = F.cross_entropy(K(x), K(t), kw, reduction=reduction, label_smoothing=label_smoothing)
    theirs = TF.cross_entropy(x, t, w, reduction=reduction, label_smoothing=label_smoothing)
    assert_same(ours, theirs)
    enum = REDUCTIONS.index(reduction)
    t2 = t.masked_fill(t == -100, 2)
    assert_same(kiln.cross_entropy_loss(K(x), K(t2), kw, enum, 2, label_smoothing),
                torch._C._nn.cross_entropy_loss(x, t2, w, enum, 2, label_smoothing))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_class_probabilities(dtype, reduction, weighted, label_smoothing):
    x, p = randn(4, 5, 3, dtype=dtype), torch.softmax(randn(4, 5, 3, dtype=dtype, seed=1), 1)
    w = rand(5, dtype=dtype, seed=4) if weighted else None
    ours = F.cross_entropy(K(x), K(p), K(w) if weighted else None, reduction=reduction,
                           label_smoothing=label_smoothing)
    assert_same(ours, TF.cross_entropy(x, p, w, reduction=reduction, label_smoothing=label_smoothing), **tol(dtype))


def test_cross_entropy_errors_match_torch():
    x = K(randn(2, 3))
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class probabilities, got Long"):
        kiln.cross_entropy_loss(x, K(torch.zeros(2, 3, dtype=torch.long)))
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
        kiln.cross_entropy_loss(x, K(randn(2, 3)), None, 1, 0)
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0. Got: 1.5"):
        kiln.cross_entropy_loss(x, K(torch.tensor([0, 1])), None, 1, -100, 1.5)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        kiln.cross_entropy_loss(K(torch.zeros(2, 3, dtype=torch.long)), K(torch.tensor([0, 1])))


# --- binary cross entropy and kl_div -------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(dtype, reduction, weighted):
    p, t = rand(4, 6, dtype=dtype), rand(4, 6, dtype=dtype, seed=1)
    p[0, 0], p[0, 1], t[0, 0] = 0.0, 1.0, 1.0  # log clamped at -100
    w = rand(6, dtype=dtype, seed=2) if weighted else None
    kw = K(w) if weighted else None
    assert_same(F.binary_cross_entropy(K(p), K(t), kw, reduction=reduction),
                TF.binary_cross_entropy(p, t, w, reduction=reduction), **tol(dtype))
    logits = randn(4, 6, dtype=dtype) * 4
    pos_weight = rand(6, dtype=dtype, seed=3) * 2
    for pw in [None, pos_weight]:
        assert_same(F.binary_cross_entropy_with_logits(K(logits), K(t), kw, reduction=reduction,
                                                       pos_weight=None if pw is None else K(pw)),
                    TF.binary_cross_entropy_with_logits(logits, t, w, reduction=reduction, pos_weight=pw),
                    **tol(dtype))
    enum = REDUCTIONS.index(reduction)
    out = kiln.empty([0], dtype=K(p).dtype)
    kiln.binary_cross_entropy(K(p), K(t), kw, enum, out=out)
    assert_same(out, torch._C._nn.binary_cross_entropy(p, t, w, enum), **tol(dtype))
    out = kiln.empty([0], dtype=K(p).dtype)
    kiln.binary_cross_entropy_with_logits(K(logits), K(t), kw, None, enum, out=out)
    assert_same(out, torch.binary_cross_entropy_with_logits(logits, t, w, None, enum), **tol(dtype))


def test_binary_cross_entropy_errors_match_torch():
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        kiln.binary_cross_entropy(K(rand(2, 3) * 2 + 1), K(rand(2, 3)))
    with pytest.raises(RuntimeError, match="Found dtype Double but expected Float"):
        kiln.binary_cross_entropy(K(rand(2, 3)), K(rand(2, 3, dtype=torch.float64)))
    with pytest.raises(RuntimeError, match="\"binary_cross_entropy\" not implemented for 'Long'"):
        kiln.binary_cross_entropy(K(torch.zeros(2, dtype=torch.long)), K(torch.zeros(2, dtype=torch.long)))
    with pytest.raises(ValueError, match="Using a target size"):
        F.binary_cross_entropy(K(rand(2, 3)), K(rand(3)))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(K(rand(2, 3)), K(rand(3)))


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x = torch.log_softmax(randn(4, 5), 1)
    t = torch.softmax(randn(4, 5, seed=1), 1)
    t[0, 0] = 0.0  # xlogy(0, 0) is 0
    if log_target:
        t = t.clamp_min(1e-6).log()
    with _no_warning_check():
        theirs = TF.kl_div(x, t, reduction=reduction, log_target=log_target)
    assert_same(F.kl_div(K(x), K(t), reduction=reduction, log_target=log_target), theirs)
    if reduction != "batchmean":
        enum = REDUCTIONS.index(reduction)
        assert_same(kiln.kl_div(K(x), K(t), enum, log_target=log_target),
                    torch.kl_div(x, t, enum, log_target=log_target))
    with pytest.raises(RuntimeError, match="kl_div: Integral inputs not supported."):
        kiln.kl_div(K(torch.zeros(2, dtype=torch.long)), K(torch.zeros(2, dtype=torch.long)))


class _no_warning_check:
    """torch warns about reduction='mean'; the warning is not what is tested."""

    def __enter__(self):
        import warnings
        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


# --- scripts, shapes and layers ------------------------------------------------------------------


def losses(x, y, t, p):
    return (F.mse_loss(x, y) + F.l1_loss(x, y, reduction="sum") + F.smooth_l1_loss(x, y, beta=0.5)
            + F.huber_loss(x, y, delta=2.0) + F.cross_entropy(x, t, label_smoothing=0.1)
            + F.nll_loss(torch_log_softmax(x), t) + F.binary_cross_entropy(p, p * 0.5)
            + F.binary_cross_entropy_with_logits(x, p) + F.kl_div(torch_log_softmax(x), p, reduction="batchmean"))


def torch_log_softmax(x):
    return x.log_softmax(1)


def test_script_with_kiln_functional_matches_torch():
    x, y, t, p = randn(4, 5), randn(4, 5, seed=1), torch.tensor([0, 4, 2, 1]), rand(4, 5, seed=2)
    ours = kiln.script(losses)(K(x), K(y), K(t), K(p))
    global F
    saved, F = F, TF
    try:
        theirs = torch.jit.script(losses)(x, y, t, p)
    finally:
        F = saved
    assert_same(ours, theirs)


SOURCE = """
def f(x, y, t):
    return (torch.nn.functional.mse_loss(x, y, reduction='none'), torch.nn.functional.cross_entropy(x, t),
            torch.nn.functional.kl_div(x, y, reduction='batchmean'))
"""


def test_compiled_source_and_shape_propagation():
    args = [randn(4, 5), rand(4, 5, seed=1), torch.tensor([0, 1, 2, 3])]
    theirs = torch.jit.CompilationUnit(SOURCE).f(*args)
    unit = kiln.compile(SOURCE)
    assert_same(list(unit.f(*[K(a) for a in args])), list(theirs))
    graph = str(unit.f.graph_for(*[K(a) for a in args]))
    assert "Float(4, 5" in graph and "Float(requires_grad=0, device=cpu) = aten::cross_entropy_loss" in graph, graph


LAYERS = [
    ("L1Loss", {}), ("L1Loss", {"reduction": "sum"}), ("MSELoss", {"reduction": "none"}), ("MSELoss", {}),
    ("SmoothL1Loss", {"beta": 0.5}), ("HuberLoss", {"delta": 0.5}), ("KLDivLoss", {"reduction": "batchmean"}),
    ("KLDivLoss", {"log_target": True, "reduction": "sum"}), ("MSELoss", {"size_average": False}),
]


@pytest.mark.parametrize("name,options", LAYERS)
def test_pointwise_loss_layers(name, options):
    theirs = getattr(torch.nn, name)(**options)
    ours = getattr(kiln.nn, name)(**options)
    assert ours.reduction == theirs.reduction
    x, y = randn(3, 4), randn(3, 4, seed=1)
    expected = theirs(x, y)
    assert_same(ours(K(x), K(y)), expected)
    assert_same(kiln.script(ours)(K(x), K(y)), expected)


@pytest.mark.parametrize("options", [{}, {"ignore_index": 2}, {"reduction": "sum", "label_smoothing": 0.2},
                                     {"weight": "w", "reduction": "none"}])
def test_class_loss_layers(options):
    w = rand(5, seed=3) + 0.1
    torch_options = {k: (w if v == "w" else v) for k, v in options.items()}
    kiln_options = {k: (K(w) if v == "w" else v) for k, v in options.items()}
    x, t = randn(4, 5), torch.tensor([0, 2, 4, 2])
    for name in ["CrossEntropyLoss", "NLLLoss"]:
        if name == "NLLLoss":
            torch_options.pop("label_smoothing", None)
            kiln_options.pop("label_smoothing", None)
        theirs = getattr(torch.nn, name)(**torch_options)
        ours = getattr(kiln.nn, name)(**kiln_options)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        expected = theirs(x, t)
        assert_same(ours(K(x), K(t)), expected)
        assert_same(kiln.script(ours)(K(x), K(t)), expected)


def test_binary_loss_layers():
    w, pw = rand(4, seed=3), rand(4, seed=4) * 3
    p, t, logits = rand(3, 4), rand(3, 4, seed=1), randn(3, 4, seed=2)
    for theirs, ours, x in [(torch.nn.BCELoss(w), kiln.nn.BCELoss(K(w)), p),
                            (torch.nn.BCEWithLogitsLoss(w, pos_weight=pw),
                             kiln.nn.BCEWithLogitsLoss(K(w), pos_weight=K(pw)), logits),
                            (torch.nn.BCEWithLogitsLoss(), kiln.nn.BCEWithLogitsLoss(), logits)]:
        assert list(ours.state_dict()) == list(theirs.state_dict())
        expected = theirs(x, t)
        assert_same(ours(K(x), K(t)), expected)
        assert_same(kiln.script(ours)(K(x), K(t)), expected)


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)
        self.bn = torch.nn.BatchNorm1d(4)
        self.ce = torch.nn.CrossEntropyLoss(weight=torch.rand(4), label_smoothing=0.05)
        self.mse = torch.nn.MSELoss()
        self.bce = torch.nn.BCEWithLogitsLoss(pos_weight=torch.rand(4))
        self.kl = torch.nn.KLDivLoss(reduction="batchmean")
        self.huber = torch.nn.HuberLoss(delta=0.5)
        self.nll = torch.nn.NLLLoss(ignore_index=1)

    def forward(self, idx, t, y):
        x = self.bn(self.emb(idx))
        return (self.ce(x, t) + self.mse(x, y) + self.bce(x, y.sigmoid()) + self.kl(x.log_softmax(1), y.softmax(1))
                + self.huber(x, y) + self.nll(x.log_softmax(1), t))


def test_torch_saved_module_with_losses_runs_in_kiln():
    scripted = torch.jit.script(Regressor())
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    loaded = kiln.load(io.BytesIO(buffer.getvalue()))
    idx, t, y = torch.tensor([1, 5, 7, 2, 2]), torch.tensor([0, 1, 3, 2, 1]), randn(5, 4)
    for training in [True, False]:
        scripted.train(training)
        loaded.train(training)
        with torch.no_grad():
            expected = scripted(idx, t, y)
        assert_same(loaded(K(idx), K(t), K(y)), expected)
