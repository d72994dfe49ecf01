"""Layer norm and the dropout family (kiln/ops/dropout_ops.cpp,
python/kiln/nn/layernorm.py and dropout.py) against torch 1.13: eagerly,
in scripts, in shape propagation, as kiln.nn layers with torch's state
dicts, and in archives torch saved. Training dropout is compared by its
statistics (the fraction dropped, the scaling), not torch's random bits."""
import io

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same


def _pair(x):
    return kiln.from_numpy(x.copy()), torch.from_numpy(x.copy())


def _randn(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _raises_as_torch(kiln_call, torch_call, exc=RuntimeError):
    with pytest.raises(exc) as theirs:
        torch_call()
    with pytest.raises(exc) as ours:
        kiln_call()
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


# --- layer norm -------------------------------------------------------------------------------

LAYER_NORM_CASES = [((2, 3, 4), [4]), ((2, 3, 4), [3, 4]), ((5, 7), [7]), ((3, 1000), [1000]), ((4, 37), [37]),
                    ((6,), [6])]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("shape,normalized", LAYER_NORM_CASES)
def test_layer_norm_matches_torch(shape, normalized, affine, dtype):
    x = _randn(*shape, dtype=dtype) * 3 + 0.5
    kx, tx = _pair(x)
    kw = tw = kb = tb = None
    if affine:
        kw, tw = _pair(_randn(*normalized, dtype=dtype, seed=1))
        kb, tb = _pair(_randn(*normalized, dtype=dtype, seed=2))
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    assert_same(kiln.layer_norm(kx, normalized, kw, kb, 1e-5), torch.layer_norm(tx, normalized, tw, tb, 1e-5),
                rtol=rtol, atol=1e-5)
    assert_same(kiln.nn.functional.layer_norm(kx, normalized, kw, kb),
                torch.nn.functional.layer_norm(tx, normalized, tw, tb), rtol=rtol, atol=1e-5)
    ours = kiln.native_layer_norm(kx, normalized, kw, kb, 1e-3)
    theirs = torch.native_layer_norm(tx, normalized, tw, tb, 1e-3)
    assert_same(list(ours), list(theirs), rtol=rtol, atol=1e-5)


def test_layer_norm_large_mean_and_strided_input():
    # A mean large against the spread: the centred variance keeps kiln at
    # least as close to the float64 result as torch is.
    x = (_randn(8, 64) * 0.01 + 1000).astype(np.float32)
    kx, tx = _pair(x)
    exact = torch.layer_norm(torch.from_numpy(x.astype(np.float64)), [64]).numpy()
    ours = np.abs(kiln.layer_norm(kx, [64]).numpy() - exact).max()
    theirs = np.abs(torch.layer_norm(tx, [64]).numpy() - exact).max()
    assert ours <= max(theirs, 1e-3), (ours, theirs)
    # A transposed (non-contiguous) input.
    y = _randn(16, 8)
    ky, ty = _pair(y)
    assert_same(kiln.layer_norm(ky.t(), [16]), torch.layer_norm(ty.t(), [16]), rtol=1e-5, atol=1e-5)


def test_native_layer_norm_out_form():
    x = _randn(3, 5)
    kx, tx = _pair(x)
    outs = [kiln.empty([0]), kiln.empty([0]), kiln.empty([0])]
    kiln.native_layer_norm(kx, [5], None, None, 1e-5, out0=outs[0], out1=outs[1], out2=outs[2])
    assert_same(outs, list(torch.native_layer_norm(tx, [5], None, None, 1e-5)), atol=1e-5)


def test_layer_norm_errors_match_torch():
    x = _randn(2, 3, 4)
    kx, tx = _pair(x)
    _raises_as_torch(lambda: kiln.layer_norm(kx, []), lambda: torch.layer_norm(tx, []))
    _raises_as_torch(lambda: kiln.layer_norm(kx, [3]), lambda: torch.layer_norm(tx, [3]))
    _raises_as_torch(lambda: kiln.layer_norm(kx, [5, 3, 4]), lambda: torch.layer_norm(tx, [5, 3, 4]))
    _raises_as_torch(lambda: kiln.layer_norm(kx, [4], kiln.ones([3])), lambda: torch.layer_norm(tx, [4], torch.ones(3)))
    _raises_as_torch(lambda: kiln.layer_norm(kx, [4], None, kiln.ones([3])),
                     lambda: torch.layer_norm(tx, [4], None, torch.ones(3)))
    _raises_as_torch(lambda: kiln.layer_norm(kiln.ones([2, 4], dtype=kiln.int64), [4]),
                     lambda: torch.layer_norm(torch.ones(2, 4, dtype=torch.int64), [4]))
    _raises_as_torch(lambda: kiln.layer_norm(kiln.from_numpy(np.ones((2, 4), dtype=np.float16)), [4]),
                     lambda: torch.layer_norm(torch.ones(2, 4, dtype=torch.float16), [4]))
    _raises_as_torch(lambda: kiln.layer_norm(kx, [4], kiln.ones([4], dtype=kiln.float64)),
                     lambda: torch.layer_norm(tx, [4], torch.ones(4, dtype=torch.float64)))


LAYER_NORM_SCRIPT = """
def f(x, w, b):
    y = torch.layer_norm(x, [x.size(-1)], w, b, 1e-5)
    out, mean, rstd = torch.native_layer_norm(x, [4], None, None, 1e-5)
    return torch.nn.functional.layer_norm(y, [4]) + out, mean, rstd
"""


def test_layer_norm_in_script_and_shapes():
    x, w, b = _randn(3, 2, 4), _randn(4, seed=1), _randn(4, seed=2)
    theirs = torch.jit.CompilationUnit(LAYER_NORM_SCRIPT).f(*(torch.from_numpy(v.copy()) for v in (x, w, b)))
    unit = kiln.compile(LAYER_NORM_SCRIPT)
    args = [kiln.from_numpy(v.copy()) for v in (x, w, b)]
    assert_same(list(unit.f(*args)), list(theirs), atol=1e-5)
    graph = str(unit.f.graph_for(*args))
    assert "Float(3, 2, 4" in graph and "Float(3, 2, 1" in graph, graph


# --- dropout ----------------------------------------------------------------------------------

DROPOUTS = ["dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"]


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_eval_is_identity_and_p_is_checked(name):
    x = _randn(4, 3, 5)
    kx, tx = _pair(x)
    for p in (0.0, 0.3, 1.0):
        assert_same(getattr(kiln, name)(kx, p, False), getattr(torch, name)(tx, p, False))
    # p == 0 in training is the identity too.
    assert_same(getattr(kiln, name)(kx, 0.0, True), tx)
    for p in (-0.5, 1.5):
        _raises_as_torch(lambda: getattr(kiln, name)(kx, p, False), lambda: getattr(torch, name)(tx, p, False))
        _raises_as_torch(lambda: getattr(kiln, name + "_")(kx, p, True), lambda: getattr(torch, name + "_")(tx, p, True))
    # p == 1 drops everything.
    assert_same(getattr(kiln, name)(kx, 1.0, True), getattr(torch, name)(tx, 1.0, True))


def test_dropout_training_statistics():
    kiln.manual_seed(0)
    x = np.full((200, 500), 2.0, dtype=np.float32)
    for p in (0.2, 0.5, 0.9):
        out = kiln.dropout(kiln.from_numpy(x.copy()), p, True).numpy()
        kept = out != 0
        assert abs(kept.mean() - (1 - p)) < 0.01, (p, kept.mean())
        np.testing.assert_allclose(out[kept], 2.0 / (1 - p), rtol=1e-6)
    # Two draws differ (the generator advances), and seeding repeats a draw.
    kiln.manual_seed(7)
    a = kiln.dropout(kiln.from_numpy(x.copy()), 0.5, True).numpy()
    b = kiln.dropout(kiln.from_numpy(x.copy()), 0.5, True).numpy()
    kiln.manual_seed(7)
    c = kiln.dropout(kiln.from_numpy(x.copy()), 0.5, True).numpy()
    assert (a != b).any() and (a == c).all()


def test_dropout_in_place_forms():
    x = np.ones((100, 100), dtype=np.float64)
    k = kiln.from_numpy(x.copy())
    r = kiln.dropout_(k, 0.25, True)
    values = k.numpy()
    assert r.dtype == kiln.float64
    assert set(np.unique(values)) <= {0.0, 1 / 0.75}
    assert abs((values != 0).mean() - 0.75) < 0.02
    k = kiln.from_numpy(x.copy())
    kiln.feature_dropout_(k, 0.5, False)
    assert (k.numpy() == 1).all()


def test_feature_dropout_drops_whole_channels():
    x = np.ones((50, 40, 3, 4), dtype=np.float32)
    out = kiln.feature_dropout(kiln.from_numpy(x.copy()), 0.5, True).numpy()
    per_channel = out.reshape(50, 40, -1)
    assert ((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1)).all()
    assert abs((per_channel[..., 0] != 0).mean() - 0.5) < 0.05
    _raises_as_torch(lambda: kiln.feature_dropout(kiln.ones([3]), 0.5, True),
                     lambda: torch.feature_dropout(torch.ones(3), 0.5, True))
    _raises_as_torch(lambda: kiln.feature_alpha_dropout(kiln.ones([3]), 0.5, True),
                     lambda: torch.feature_alpha_dropout(torch.ones(3), 0.5, True))


def test_alpha_dropout_keeps_mean_and_variance():
    kiln.manual_seed(1)
    x = _randn(400, 500)
    out = kiln.alpha_dropout(kiln.from_numpy(x.copy()), 0.3, True).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02
    alpha = 1.7580993408473766
    p = 0.3
    a = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    dropped = np.isclose(out, alpha * a * (p - 1), atol=1e-6)
    assert abs(dropped.mean() - p) < 0.01
    np.testing.assert_allclose(out[~dropped], x[~dropped] * a + alpha * a * p, rtol=1e-5, atol=1e-6)


def test_native_dropout():
    x = _randn(300, 300)
    kx, tx = _pair(x)
    out, mask = kiln.native_dropout(kx, 0.4, True)
    assert mask.dtype == kiln.bool
    m = mask.numpy()
    assert abs(m.mean() - 0.6) < 0.01
    np.testing.assert_allclose(out.numpy(), np.where(m, x / 0.6, 0), rtol=1e-6)
    assert_same(list(kiln.native_dropout(kx, 0.4, False)), list(torch.native_dropout(tx, 0.4, False)))
    _raises_as_torch(lambda: kiln.native_dropout(kx, 1.5, True), lambda: torch.native_dropout(tx, 1.5, True))


def test_dropout_of_integers_and_halves_in_training_raises_as_torch():
    _raises_as_torch(lambda: kiln.dropout(kiln.ones([3, 4], dtype=kiln.int64), 0.5, True),
                     lambda: torch.dropout(torch.ones(3, 4, dtype=torch.int64), 0.5, True))
    _raises_as_torch(lambda: kiln.dropout(kiln.from_numpy(np.ones((3, 4), dtype=np.float16)), 0.5, True),
                     lambda: torch.dropout(torch.ones(3, 4, dtype=torch.float16), 0.5, True))
    # In evaluation any dtype passes through.
    assert_same(kiln.dropout(kiln.ones([3], dtype=kiln.int64), 0.5, False), torch.ones(3, dtype=torch.int64))


DROPOUT_SCRIPT = """
def f(x, train: bool):
    a = torch.dropout(x, 0.5, train)
    b = torch.nn.functional.dropout(x, 0.25, train)
    c = torch.feature_alpha_dropout(x, 0.5, train)
    d = torch.alpha_dropout(x, 0.5, train)
    return a + b + c + d
"""


def test_dropout_in_script():
    x = _randn(4, 6, 5)
    theirs = torch.jit.CompilationUnit(DROPOUT_SCRIPT).f(torch.from_numpy(x.copy()), False)
    unit = kiln.compile(DROPOUT_SCRIPT)
    assert_same(unit.f(kiln.from_numpy(x.copy()), False), theirs)
    trained = unit.f(kiln.from_numpy(np.ones((40, 60, 5), dtype=np.float32)), True)
    assert tuple(trained.shape) == (40, 60, 5)
    graph = str(unit.f.graph_for(kiln.from_numpy(x.copy()), False))
    assert "Float(4, 6, 5" in graph, graph


def test_functional_dropouts_take_torch_signatures():
    F = kiln.nn.functional
    x = _randn(2, 3, 4, 5)
    kx, tx = _pair(x)
    assert_same(F.dropout(kx, training=False), torch.nn.functional.dropout(tx, training=False))
    assert_same(F.dropout2d(kx, 0.3, False), torch.nn.functional.dropout2d(tx, 0.3, False))
    assert_same(F.dropout1d(kx[0], 0.3, False), torch.nn.functional.dropout1d(tx[0], 0.3, False))
    assert_same(F.dropout3d(kx, 0.3, False), torch.nn.functional.dropout3d(tx, 0.3, False))
    assert_same(F.alpha_dropout(kx), torch.nn.functional.alpha_dropout(tx))
    assert_same(F.feature_alpha_dropout(kx, 0.2), torch.nn.functional.feature_alpha_dropout(tx, 0.2))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(kx, 1.5)
    # dropout1d on a (C, L) input drops whole channels.
    out = F.dropout1d(kiln.ones([200, 7]), 0.5, True).numpy()
    assert ((out == 0).all(-1) | (out == 2).all(-1)).all()


# --- kiln.nn layers -------------------------------------------------------------------------

def test_layer_norm_module_matches_torch_with_its_state_dict():
    theirs = torch.nn.LayerNorm([3, 4], eps=1e-6)
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    ours = kiln.nn.LayerNorm([3, 4], eps=1e-6)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight", "bias"]
    assert_same(ours.weight, torch.ones(3, 4))
    ours.load_state_dict({k: kiln.from_numpy(v.numpy().copy()) for k, v in theirs.state_dict().items()})
    x = _randn(2, 3, 4)
    kx, tx = _pair(x)
    assert_same(ours(kx), theirs(tx), atol=1e-5)
    assert_same(kiln.script(ours)(kx), theirs(tx), atol=1e-5)
    assert repr(ours) == repr(theirs)
    plain = kiln.nn.LayerNorm(4, elementwise_affine=False)
    assert list(plain.state_dict()) == []
    assert_same(plain(kx), torch.nn.LayerNorm(4, elementwise_affine=False)(tx), atol=1e-5)


@pytest.mark.parametrize("name", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                  "FeatureAlphaDropout"])
def test_dropout_modules(name):
    ours = getattr(kiln.nn, name)(0.3)
    theirs = getattr(torch.nn, name)(0.3)
    assert repr(ours) == repr(theirs)
    shape = (2, 3, 4) if name == "Dropout1d" else (2, 3, 4, 5, 6) if name == "Dropout3d" else (2, 3, 4, 5)
    x = _randn(*shape)
    kx, tx = _pair(x)
    ours.eval()
    theirs.eval()
    assert_same(ours(kx), theirs(tx))
    scripted = kiln.script(ours)
    assert_same(scripted(kx), theirs(tx))
    scripted.train()
    assert tuple(scripted(kx).shape) == shape
    with pytest.raises(ValueError, match="dropout probability"):
        getattr(kiln.nn, name)(1.5)


def test_dropout_module_training_scales():
    m = kiln.nn.Dropout(0.5)
    out = m(kiln.ones([100, 100])).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert abs((out != 0).mean() - 0.5) < 0.03


# --- archives torch saved -------------------------------------------------------------------

class _NormDrop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.drop = torch.nn.Dropout(0.2)
        self.drop2 = torch.nn.Dropout2d(0.2)
        self.alpha = torch.nn.AlphaDropout(0.1)

    def forward(self, x):
        return self.alpha(self.drop2(self.drop(self.norm(self.linear(x)))))


def test_torch_saved_module_loads_in_kiln():
    torch.manual_seed(0)
    module = torch.jit.script(_NormDrop().eval())
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    loaded = kiln.load(io.BytesIO(buffer.getvalue()))
    x = _randn(3, 4, 8)
    kx, tx = _pair(x)
    assert_same(loaded(kx), module(tx), rtol=1e-4, atol=1e-5)
    loaded.train()
    assert tuple(loaded(kx).shape) == (3, 4, 8)
