"""Attention (kiln/ops/attention_ops.cpp, python/kiln/nn/transformer.py)
against torch 1.13: the fast-path operators eagerly and in scripts, torch's
scripted TransformerEncoder and MultiheadAttention saved by torch.jit.save
and loaded by kiln.load, and kiln.nn's attention layers with torch's state
dicts."""
import io
import warnings
from typing import Optional

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same
from kiln._functions import op as _op

warnings.filterwarnings("ignore", message=".*nested tensors is in prototype.*")
warnings.filterwarnings("ignore", message=".*was found in ScriptModule constants.*")



def _randn(*shape, dtype=np.float32, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def _pair(x):
    return kiln.from_numpy(x.copy()), torch.from_numpy(x.copy())


def K(t):
    return None if t is None else kiln.from_numpy(t.detach().numpy().copy())


def _raises_as_torch(kiln_call, torch_call):
    with pytest.raises(RuntimeError) as theirs:
        torch_call()
    with pytest.raises(RuntimeError) as ours:
        kiln_call()
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


class _NoGrad(torch.nn.Module):
    """Runs the wrapped module under `with torch.no_grad()`, in the archive
    itself: torch's encoder takes its fast path there, in torch and kiln alike."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, mask: Optional[torch.Tensor] = None, key_padding_mask: Optional[torch.Tensor] = None):
        with torch.no_grad():
            return self.inner(x, mask=mask, src_key_padding_mask=key_padding_mask)


def _archive(module):
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    return kiln.load(io.BytesIO(buffer.getvalue()))


# --- _masked_softmax ----------------------------------------------------------------------------

def test_masked_softmax_matches_torch():
    x = _randn(2, 3, 4, 4)
    kx, tx = _pair(x)
    mask = np.random.default_rng(1).random((2, 3, 4, 4)) > 0.6
    mask[0, 0, 0, :] = True  # a line masked throughout is NaN
    km, tm = _pair(mask)
    for dim in (None, 3, 2):
        for mask_type in (1, 2):
            assert_same(_op("_masked_softmax")(kx, km, dim, mask_type), torch._masked_softmax(tx, tm, dim, mask_type))
    _raises_as_torch(lambda: _op("_masked_softmax")(kx, km[0], None, 1), lambda: torch._masked_softmax(tx, tm[0], None, 1))
    _raises_as_torch(lambda: _op("_masked_softmax")(kx, km), lambda: torch._masked_softmax(tx, tm))
    _raises_as_torch(lambda: _op("_masked_softmax")(kx, km, None, 0), lambda: torch._masked_softmax(tx, tm, None, 0))
    _raises_as_torch(lambda: _op("_masked_softmax")(kx.long(), km, None, 2),
                     lambda: torch._masked_softmax(tx.long(), tm, None, 2))


# --- _native_multi_head_attention ---------------------------------------------------------------

B, T, D, H = 2, 5, 8, 2


def _mha_weights(seed=3, dtype=np.float32):
    return [_randn(3 * D, D, seed=seed, scale=0.3, dtype=dtype), _randn(3 * D, seed=seed + 1, dtype=dtype),
            _randn(D, D, seed=seed + 2, scale=0.3, dtype=dtype), _randn(D, seed=seed + 3, dtype=dtype)]


@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_native_multi_head_attention_matches_torch(need_weights, average, masked, dtype):
    x = _randn(B, T, D, dtype=dtype)
    kx, tx = _pair(x)
    ws = _mha_weights(dtype=dtype)
    kw = [kiln.from_numpy(w.copy()) for w in ws]
    tw = [torch.from_numpy(w.copy()) for w in ws]
    mask = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 1]], dtype=bool) if masked else None
    km, tm = _pair(mask) if masked else (None, None)
    mask_type = 1 if masked else None
    ours = _op("_native_multi_head_attention")(kx, kx, kx, D, H, *kw, km, need_weights, average, mask_type)
    with torch.no_grad():
        theirs = torch._native_multi_head_attention(tx, tx, tx, D, H, *tw, tm, need_weights, average, mask_type)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert_same(ours[0], theirs[0], rtol=tol, atol=tol)
    if need_weights:
        assert_same(ours[1], theirs[1], rtol=tol, atol=tol)
    else:
        assert ours[1] is None and theirs[1] is None


@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("batch,length,dim,heads", [(1, 64, 256, 8), (3, 33, 96, 4), (2, 1, 16, 2)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_native_multi_head_attention_dense_self_attention(need_weights, average, batch, length, dim, heads, layout):
    # Self-attention over a dense float32 batch reads q, k and v in place from
    # the input projection (kiln's fast path); a non-contiguous query takes the
    # general path. Both agree with torch.
    x = _randn(batch, length, dim, seed=11)
    if layout == "contiguous":
        kx, tx = _pair(x)
    else:
        xt = np.ascontiguousarray(x.transpose(1, 0, 2))
        kx, tx = kiln.from_numpy(xt.copy()).transpose(0, 1), torch.from_numpy(xt.copy()).transpose(0, 1)
    ws = [_randn(3 * dim, dim, seed=5, scale=0.2), _randn(3 * dim, seed=6), _randn(dim, dim, seed=7, scale=0.2),
          _randn(dim, seed=8)]
    kw = [kiln.from_numpy(w.copy()) for w in ws]
    tw = [torch.from_numpy(w.copy()) for w in ws]
    ours = _op("_native_multi_head_attention")(kx, kx, kx, dim, heads, *kw, None, need_weights, average, None)
    with torch.no_grad():
        theirs = torch._native_multi_head_attention(tx, tx, tx, dim, heads, *tw, None, need_weights, average, None)
    # Sums of up to 256 products in another order (oneDNN's GEMM, not OpenBLAS's).
    assert_same(ours[0], theirs[0], rtol=1e-4, atol=1e-4)
    if need_weights:
        assert_same(ours[1], theirs[1], rtol=1e-4, atol=1e-5)
    else:
        assert ours[1] is None and theirs[1] is None


def test_native_multi_head_attention_cross_and_float_mask():
    q, k, v = _randn(B, T, D), _randn(B, T, D, seed=1), _randn(B, T, D, seed=2)
    ws = _mha_weights()
    kw = [kiln.from_numpy(w.copy()) for w in ws]
    tw = [torch.from_numpy(w.copy()) for w in ws]
    with torch.no_grad():
        theirs = torch._native_multi_head_attention(*map(torch.from_numpy, (q, k, v)), D, H, *tw)
    assert_same(_op("_native_multi_head_attention")(*map(kiln.from_numpy, (q, k, v)), D, H, *kw), theirs, atol=1e-5)
    # A float mask counts its nonzeros as masked, as torch's conversion to bool does.
    fmask = np.array([[0, 0, 0, -1e9, -1e9], [0, 0, 0, 0, -1e9]], dtype=np.float32)
    kx, tx = _pair(q)
    with torch.no_grad():
        theirs = torch._native_multi_head_attention(tx, tx, tx, D, H, *tw, torch.from_numpy(fmask), True, True, 1)
    assert_same(_op("_native_multi_head_attention")(kx, kx, kx, D, H, *kw, kiln.from_numpy(fmask), True, True, 1),
                theirs, atol=1e-5)


def test_native_multi_head_attention_errors_match_torch():
    x = _randn(B, T, D)
    kx, tx = _pair(x)
    ws = _mha_weights()
    kw = [kiln.from_numpy(w.copy()) for w in ws]
    tw = [torch.from_numpy(w.copy()) for w in ws]

    class Ours:
        _native_multi_head_attention = _op("_native_multi_head_attention")

    def both(f):
        _raises_as_torch(lambda: f(Ours, kx, kw), lambda: f(torch, tx, tw))

    both(lambda m, x, w: m._native_multi_head_attention(x, x, x, D, 3, *w))
    both(lambda m, x, w: m._native_multi_head_attention(x[0], x, x, D, H, *w))
    both(lambda m, x, w: m._native_multi_head_attention(x, x, x, D + 1, H, *w))
    both(lambda m, x, w: m._native_multi_head_attention(x, x[:, :3], x[:, :3], D, H, *w))
    both(lambda m, x, w: m._native_multi_head_attention(x, x, x, D, H, w[0][:3], *w[1:]))
    both(lambda m, x, w: m._native_multi_head_attention(x, x, x, D, H, w[0][:, :3], *w[1:]))
    both(lambda m, x, w: m._native_multi_head_attention(x, x, x, D, H, w[0][0], *w[1:]))
    both(lambda m, x, w: m._native_multi_head_attention(x, x, x, D, H, w[0], w[1][:3], *w[2:]))
    mask = np.ones((B, T), dtype=bool)
    _raises_as_torch(lambda: _op("_native_multi_head_attention")(kx, kx, kx, D, H, *kw, kiln.from_numpy(mask)),
                     lambda: torch._native_multi_head_attention(tx, tx, tx, D, H, *tw, torch.from_numpy(mask)))


# --- _transform_bias_rescale_qkv, _scaled_dot_product_attention ----------------------------------

def test_transform_bias_rescale_qkv_matches_torch():
    qkv, bias = _randn(2, 4, 24), _randn(24, seed=1)
    kq, tq = _pair(qkv)
    kb, tb = _pair(bias)
    assert_same(list(_op("_transform_bias_rescale_qkv")(kq, kb, 2)), list(torch._transform_bias_rescale_qkv(tq, tb, 2)))
    _raises_as_torch(lambda: _op("_transform_bias_rescale_qkv")(kq, kb, 5),
                     lambda: torch._transform_bias_rescale_qkv(tq, tb, 5))


@pytest.mark.parametrize("name", ["_scaled_dot_product_attention", "_scaled_dot_product_attention_math"])
def test_scaled_dot_product_attention_matches_torch(name):
    q, k, v = _randn(2, 3, 4, 8), _randn(2, 3, 5, 8, seed=1), _randn(2, 3, 5, 6, seed=2)
    kq, tq = _pair(q)
    kk, tk = _pair(k)
    kv, tv = _pair(v)
    ours, theirs = _op(name), getattr(torch.ops.aten, name)
    bool_mask = np.random.default_rng(3).random((4, 5)) > 0.3
    bool_mask[:, 0] = True
    float_mask = _randn(4, 5, seed=4)
    for mask in (None, bool_mask, float_mask):
        km, tm = _pair(mask) if mask is not None else (None, None)
        assert_same(list(ours(kq, kk, kv, km, 0.0, True, False)), list(theirs(tq, tk, tv, tm, 0.0, True, False)),
                    atol=1e-5)
    sq, tsq = _pair(_randn(2, 5, 8))
    assert_same(list(ours(sq, sq, sq, None, 0.0, False, True)), list(theirs(tsq, tsq, tsq, None, 0.0, False, True)),
                atol=1e-5)
    _raises_as_torch(lambda: ours(sq, sq, sq, kiln.ones([5, 5], dtype=kiln.bool), 0.0, False, True),
                     lambda: theirs(tsq, tsq, tsq, torch.ones(5, 5, dtype=torch.bool), 0.0, False, True))
    # Dropout on the weights in training: whole weights dropped, the rest scaled.
    _, weights = ours(sq, sq, sq, None, 0.5, True, False)
    _, plain = ours(sq, sq, sq, None, 0.0, True, False)
    w, p = weights.numpy(), plain.numpy()
    np.testing.assert_allclose(w[w != 0], 2 * p[w != 0], rtol=1e-6)


# --- _transformer_encoder_layer_fwd -------------------------------------------------------------

def _encoder_weights(seed=10):
    shapes = [(3 * D, D), (3 * D,), (D, D), (D,), (D,), (D,), (D,), (D,), (16, D), (16,), (D, 16), (D,)]
    return [_randn(*s, seed=seed + i, scale=0.3) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("use_gelu", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_transformer_encoder_layer_fwd_matches_torch(use_gelu, norm_first, masked):
    x = _randn(B, T, D)
    kx, tx = _pair(x)
    ws = _encoder_weights()
    kw = [kiln.from_numpy(w.copy()) for w in ws]
    tw = [torch.from_numpy(w.copy()) for w in ws]
    mask = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)
    km, tm = (kiln.from_numpy(mask.copy()), torch.from_numpy(mask.copy())) if masked else (None, None)
    mt = 1 if masked else None
    ours = _op("_transformer_encoder_layer_fwd")(kx, D, H, *kw[:4], use_gelu, norm_first, 1e-5, *kw[4:], km, mt)
    with torch.no_grad():
        theirs = torch._transformer_encoder_layer_fwd(tx, D, H, *tw[:4], use_gelu, norm_first, 1e-5, *tw[4:], tm, mt)
    assert_same(ours, theirs, rtol=1e-4, atol=1e-5)


# --- nested tensors -----------------------------------------------------------------------------

def test_nested_tensor_from_mask_and_to_padded_tensor():
    x = _randn(3, 6, 4)
    kx, tx = _pair(x)
    to_padded = torch.ops.aten.to_padded_tensor
    for rows in ([[1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0]],
                 [[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0]]):
        mask = np.array(rows, dtype=bool)
        km, tm = _pair(mask)
        assert _op("_nested_tensor_from_mask_left_aligned")(kx, km) == torch._nested_tensor_from_mask_left_aligned(tx, tm)
        kn, tn = _op("_nested_tensor_from_mask")(kx, km), torch._nested_tensor_from_mask(tx, tm)
        assert_same(kiln.to_padded_tensor(kn, 0.0), to_padded(tn, 0.0))
        assert_same(kiln.to_padded_tensor(kn, -2.5), to_padded(tn, -2.5))
        assert_same(kiln.to_padded_tensor(kn, 1.0, [4, 7, 5]), to_padded(tn, 1.0, [4, 7, 5]))
        _raises_as_torch(lambda: kiln.to_padded_tensor(kn, 0.0, [3, 1, 4]), lambda: to_padded(tn, 0.0, [3, 1, 4]))
        _raises_as_torch(lambda: kiln.to_padded_tensor(kn, 0.0, [3, 6]), lambda: to_padded(tn, 0.0, [3, 6]))
    gaps = np.array([[1, 0, 1, 0, 0, 0], [1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0]], dtype=bool)
    km, tm = _pair(gaps)
    assert not _op("_nested_tensor_from_mask_left_aligned")(kx, km)
    _raises_as_torch(lambda: _op("_nested_tensor_from_mask")(kx, km), lambda: torch._nested_tensor_from_mask(tx, tm))
    # Without the check the first `count` rows are taken, as torch does.
    assert_same(kiln.to_padded_tensor(_op("_nested_tensor_from_mask")(kx, km, False), 0.0),
                to_padded(torch._nested_tensor_from_mask(tx, tm, False), 0.0))
    for bad_mask, bad_t in ((gaps.astype(np.float32), x), (gaps[0], x), (gaps, x[0]), (gaps[:2], x)):
        kbm, tbm = _pair(bad_mask)
        kbt, tbt = _pair(bad_t)
        _raises_as_torch(lambda: _op("_nested_tensor_from_mask")(kbt, kbm), lambda: torch._nested_tensor_from_mask(tbt, tbm))
        _raises_as_torch(lambda: _op("_nested_tensor_from_mask_left_aligned")(kbt, kbm),
                         lambda: torch._nested_tensor_from_mask_left_aligned(tbt, tbm))
    # An ordinary tensor is not nested.
    with pytest.raises(RuntimeError, match="to_padded_tensor"):
        kiln.to_padded_tensor(kx, 0.0)


SCRIPT = """
def f(x, mask, w0, w1, w2, w3):
    y = x
    if not torch.is_autocast_enabled():
        n = torch._nested_tensor_from_mask(x, mask.logical_not(), False)
        out, _ = torch._native_multi_head_attention(n, n, n, 8, 2, w0, w1, w2, w3, None, False)
        y = out.to_padded_tensor(0.)
    return y
"""


def test_fast_path_operators_in_a_script():
    x = _randn(B, T, D)
    pad = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 1]], dtype=bool)
    ws = _mha_weights()
    with torch.no_grad():
        theirs = torch.jit.CompilationUnit(SCRIPT).f(*(torch.from_numpy(v.copy()) for v in [x, pad] + ws))
    unit = kiln.compile(SCRIPT)
    args = [kiln.from_numpy(v.copy()) for v in [x, pad] + ws]
    assert_same(unit.f(*args), theirs, atol=1e-5)
    # Shape propagation types the attention's output as the query.
    shapes = kiln.compile("def g(x, w0, w1, w2, w3):\n"
                          "    return torch._native_multi_head_attention(x, x, x, 8, 2, w0, w1, w2, w3)[0]\n")
    graph = str(shapes.g.graph_for(args[0], *args[2:]))
    assert "Float(2, 5, 8" in graph, graph


# --- torch's scripted modules, saved and loaded ---------------------------------------------------

def _encoder(batch_first, norm_first=False, activation="relu", final_norm=False, nhead=4):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(32, nhead, 64, activation=activation, batch_first=batch_first,
                                             norm_first=norm_first)
    norm = torch.nn.LayerNorm(32) if final_norm else None
    return torch.nn.TransformerEncoder(layer, 2, norm=norm).eval()


PADDING_MASKS = [None,
                 [[0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1, 1]],
                 # every entry padded at the end: the fast path's output is shorter
                 [[0, 0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1, 1]],
                 # not left-aligned: torch leaves the fast path
                 [[0, 1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1, 1]]]


@pytest.mark.parametrize("config", [dict(batch_first=True), dict(batch_first=False),
                                    dict(batch_first=True, norm_first=True, activation="gelu", final_norm=True),
                                    dict(batch_first=True, nhead=1)])
def test_torch_scripted_transformer_encoder_runs_in_kiln(config):
    eager = _encoder(**config)
    scripted = torch.jit.script(eager)
    loaded = _archive(scripted)
    # The same encoder called under no_grad inside the archive: torch 1.13's
    # fast path (nested tensors when batch_first and a padding mask is given).
    no_grad = torch.jit.script(_NoGrad(eager))
    loaded_no_grad = _archive(no_grad)
    x = _randn(3, 7, 32) if config["batch_first"] else _randn(7, 3, 32)
    kx, tx = _pair(x)
    fmask = torch.zeros(3, 7)
    fmask[1, 5:] = float("-inf")
    masks = [None if rows is None else torch.tensor(rows, dtype=torch.bool) for rows in PADDING_MASKS] + [fmask]
    for mask in masks:
        theirs = no_grad(tx, key_padding_mask=mask)
        assert_same(loaded_no_grad(kx, key_padding_mask=K(mask)), theirs, rtol=1e-4, atol=1e-5)
        # With grad enabled (parameters require grad) torch takes the slow path.
        theirs = scripted(tx, src_key_padding_mask=mask)
        assert_same(loaded(kx, src_key_padding_mask=K(mask)), theirs, rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError, match="only bool and floating types of key_padding_mask are supported"):
        loaded(kx, src_key_padding_mask=kiln.zeros([3, 7], dtype=kiln.int64))


@pytest.mark.parametrize("batch_first", [False, True])
def test_torch_scripted_encoder_with_a_square_mask(batch_first):
    scripted = torch.jit.script(_encoder(batch_first))
    loaded = _archive(scripted)
    x = _randn(3, 7, 32) if batch_first else _randn(7, 3, 32)
    kx, tx = _pair(x)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(7)
    assert_same(loaded(kx, mask=K(causal)), scripted(tx, mask=causal), rtol=1e-4, atol=1e-5)
    no_grad = torch.jit.script(_NoGrad(_encoder(batch_first)))
    assert_same(_archive(no_grad)(kx, mask=K(causal)), no_grad(tx, mask=causal), rtol=1e-4, atol=1e-5)


MHA_CONFIGS = [dict(), dict(batch_first=True), dict(bias=False), dict(add_bias_kv=True),
               dict(add_zero_attn=True), dict(kdim=6, vdim=10, batch_first=True)]
# torch 1.13 cannot script MultiheadAttention without bias or with kdim/vdim.
SCRIPTABLE_MHA_CONFIGS = [c for c in MHA_CONFIGS if "bias" not in c and "kdim" not in c]


@pytest.mark.parametrize("config", SCRIPTABLE_MHA_CONFIGS)
def test_torch_scripted_multihead_attention_runs_in_kiln(config):
    torch.manual_seed(0)
    eager = torch.nn.MultiheadAttention(16, 4, **config).eval()
    if config.get("add_bias_kv"):
        with torch.no_grad():
            eager.bias_k.normal_()
            eager.bias_v.normal_()
    scripted = torch.jit.script(eager)
    loaded = _archive(scripted)
    bf = config.get("batch_first", False)
    lq, lk, n = 5, 4, 3
    qshape = (n, lq, 16) if bf else (lq, n, 16)
    kshape = (n, lk, config.get("kdim", 16)) if bf else (lk, n, config.get("kdim", 16))
    vshape = (n, lk, config.get("vdim", 16)) if bf else (lk, n, config.get("vdim", 16))
    q, k, v = _randn(*qshape), _randn(*kshape, seed=1), _randn(*vshape, seed=2)
    kq, tq = _pair(q)
    kk, tk = _pair(k)
    kv, tv = _pair(v)
    kpm = torch.tensor([[0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1]], dtype=torch.bool)
    attn_mask = torch.triu(torch.ones(lq, lk, dtype=torch.bool), 1)
    cases = [dict(), dict(key_padding_mask=kpm), dict(attn_mask=attn_mask),
             dict(attn_mask=attn_mask.float() * -1e4, key_padding_mask=kpm), dict(need_weights=False),
             dict(average_attn_weights=False, key_padding_mask=kpm)]
    for kwargs in cases:
        with torch.no_grad():
            theirs = scripted(tq, tk, tv, **kwargs)
        ours = loaded(kq, kk, kv, **{key: K(val) if isinstance(val, torch.Tensor) else val
                                     for key, val in kwargs.items()})
        assert_same(ours[0], theirs[0], rtol=1e-4, atol=1e-5)
        if theirs[1] is None:
            assert ours[1] is None
        else:
            assert_same(ours[1], theirs[1], rtol=1e-4, atol=1e-5)
    if config.get("kdim") is None:
        # Self-attention: torch's fast path (batch_first) and the slow path.
        lk_mask = torch.tensor([[0, 0, 0, 0, 0], [0, 0, 1, 1, 1], [0, 0, 0, 1, 1]], dtype=torch.bool)
        for mask in (None, lk_mask):
            with torch.no_grad():
                theirs = scripted(tq, tq, tq, key_padding_mask=mask)
            ours = loaded(kq, kq, kq, key_padding_mask=K(mask))
            assert_same(list(ours), list(theirs), rtol=1e-4, atol=1e-5)


class _MhaNoGrad(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, key_padding_mask: Optional[torch.Tensor] = None, need_weights: bool = True):
        with torch.no_grad():
            return self.inner(x, x, x, key_padding_mask=key_padding_mask, need_weights=need_weights)


def test_torch_scripted_multihead_attention_fast_path():
    torch.manual_seed(5)
    no_grad = torch.jit.script(_MhaNoGrad(torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()))
    loaded = _archive(no_grad)
    x = _randn(3, 5, 16)
    kx, tx = _pair(x)
    kpm = torch.tensor([[0, 0, 0, 0, 0], [0, 0, 1, 1, 1], [0, 0, 0, 1, 1]], dtype=torch.bool)
    # (need_weights=False fails in torch 1.13's scripted fast path itself.)
    for mask in (None, kpm):
        theirs = no_grad(tx, key_padding_mask=mask)
        assert_same(list(loaded(kx, key_padding_mask=K(mask))), list(theirs), rtol=1e-4, atol=1e-5)


# --- kiln.nn layers -------------------------------------------------------------------------------

def _load_torch_state(ours, theirs):
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})


@pytest.mark.parametrize("config", MHA_CONFIGS)
def test_kiln_multihead_attention_matches_torch(config):
    torch.manual_seed(1)
    theirs = torch.nn.MultiheadAttention(16, 4, **config).eval()
    with torch.no_grad():
        for p in theirs.parameters():
            p.normal_(0, 0.3)
    ours = kiln.nn.MultiheadAttention(16, 4, **config).eval()
    _load_torch_state(ours, theirs)
    scripted = kiln.script(ours)
    bf = config.get("batch_first", False)
    qshape = (3, 5, 16) if bf else (5, 3, 16)
    kshape = (3, 4, config.get("kdim", 16)) if bf else (4, 3, config.get("kdim", 16))
    vshape = (3, 4, config.get("vdim", 16)) if bf else (4, 3, config.get("vdim", 16))
    q, k, v = _randn(*qshape), _randn(*kshape, seed=1), _randn(*vshape, seed=2)
    kpm = torch.tensor([[0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1]], dtype=torch.bool)
    for kwargs in (dict(), dict(key_padding_mask=kpm), dict(need_weights=False),
                   dict(attn_mask=torch.triu(torch.ones(5, 4, dtype=torch.bool), 1))):
        with torch.no_grad():
            expected = theirs(*map(torch.from_numpy, (q, k, v)), **kwargs)
        kargs = {key: K(val) if isinstance(val, torch.Tensor) else val for key, val in kwargs.items()}
        for module in (ours, scripted):
            got = module(*map(kiln.from_numpy, (q.copy(), k.copy(), v.copy())), **kargs)
            assert_same(got[0], expected[0], rtol=1e-4, atol=1e-5)
            if expected[1] is None:
                assert got[1] is None
            else:
                assert_same(got[1], expected[1], rtol=1e-4, atol=1e-5)
    # Unbatched inputs.
    with torch.no_grad():
        expected = theirs(*(torch.from_numpy(a[0] if bf else a[:, 0]) for a in (q, k, v)))
    got = ours(*(kiln.from_numpy((a[0] if bf else a[:, 0]).copy()) for a in (q, k, v)))
    assert_same(list(got), list(expected), rtol=1e-4, atol=1e-5)


def test_kiln_multihead_attention_initialisation():
    m = kiln.nn.MultiheadAttention(64, 8, add_bias_kv=True)
    w = m.in_proj_weight.numpy()
    bound = np.sqrt(6.0 / (64 + 192))
    assert w.shape == (192, 64) and np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert (m.in_proj_bias.numpy() == 0).all() and (m.out_proj.bias.numpy() == 0).all()
    assert tuple(m.bias_k.shape) == (1, 1, 64)
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"


@pytest.mark.parametrize("config", [dict(), dict(batch_first=True, norm_first=True, activation="gelu")])
def test_kiln_transformer_encoder_matches_torch(config):
    torch.manual_seed(2)
    layer = torch.nn.TransformerEncoderLayer(16, 4, 32, **config)
    theirs = torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(16)).eval()
    ours = kiln.nn.TransformerEncoder(kiln.nn.TransformerEncoderLayer(16, 4, 32, **config), 2,
                                      norm=kiln.nn.LayerNorm(16)).eval()
    _load_torch_state(ours, theirs)
    scripted = kiln.script(ours)
    x = _randn(3, 6, 16) if config.get("batch_first") else _randn(6, 3, 16)
    kx, tx = _pair(x)
    mask = torch.tensor([[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1]], dtype=torch.bool)
    with torch.no_grad():
        # torch's fast path shortens the output to the longest entry; compare those rows.
        expected = theirs(tx, src_key_padding_mask=mask)
        plain = theirs(tx)
    for module in (ours, scripted):
        assert_same(module(kx), plain, rtol=1e-4, atol=1e-5)
        got = module(kx, src_key_padding_mask=K(mask)).numpy()
        valid = ~mask.numpy()
        if not config.get("batch_first"):
            got, exp = got.transpose(1, 0, 2), expected.numpy().transpose(1, 0, 2)
        else:
            exp = expected.numpy()
        np.testing.assert_allclose(got[valid], exp[valid], rtol=1e-4, atol=1e-5)


def test_kiln_transformer_matches_torch():
    torch.manual_seed(3)
    theirs = torch.nn.Transformer(16, 4, 2, 2, 32).eval()
    ours = kiln.nn.Transformer(16, 4, 2, 2, 32).eval()
    _load_torch_state(ours, theirs)
    src, tgt = _randn(6, 2, 16), _randn(4, 2, 16, seed=1)
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    assert_same(kiln.nn.Transformer.generate_square_subsequent_mask(4), tgt_mask)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(src), torch.from_numpy(tgt), tgt_mask=tgt_mask)
    for module in (ours, kiln.script(ours)):
        got = module(kiln.from_numpy(src.copy()), kiln.from_numpy(tgt.copy()), tgt_mask=K(tgt_mask))
        assert_same(got, expected, rtol=1e-4, atol=1e-5)
    # Initialisation: xavier on every matrix, as torch.
    w = ours.encoder.layers[0].linear1.weight
    fresh = kiln.nn.Transformer(16, 4, 1, 1, 32).encoder.layers[0].linear1.weight.numpy()
    assert tuple(w.shape) == (32, 16) and np.abs(fresh).max() <= np.sqrt(6.0 / 48)


def test_kiln_encoder_layer_activations():
    F = kiln.nn.functional
    for activation, code in (("relu", 1), ("gelu", 2), (F.relu, 1), (F.gelu, 2), (kiln.nn.ReLU(), 1),
                             (kiln.nn.Tanh(), 0)):
        layer = kiln.nn.TransformerEncoderLayer(16, 4, 32, activation=activation).eval()
        assert layer.activation_relu_or_gelu == code
        assert tuple(kiln.script(layer)(kiln.randn([3, 2, 16])).shape) == (3, 2, 16)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        kiln.nn.TransformerEncoderLayer(16, 4, activation="tanh")


def test_kiln_decoder_layer_training_mode_runs():
    layer = kiln.nn.TransformerDecoderLayer(16, 4, 32, dropout=0.5)
    out = layer(kiln.randn([4, 2, 16]), kiln.randn([6, 2, 16]))
    assert tuple(out.shape) == (4, 2, 16)


def test_functional_multi_head_attention_forward_matches_torch():
    torch.manual_seed(4)
    m = torch.nn.MultiheadAttention(16, 4, add_bias_kv=True).eval()
    q, k = _randn(5, 3, 16), _randn(4, 3, 16, seed=1)
    args = [16, 4, m.in_proj_weight, m.in_proj_bias, m.bias_k, m.bias_v, False, 0.0, m.out_proj.weight,
            m.out_proj.bias]
    with torch.no_grad():
        expected = torch.nn.functional.multi_head_attention_forward(
            torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(k), *args, training=False)
    got = kiln.nn.functional.multi_head_attention_forward(
        kiln.from_numpy(q), kiln.from_numpy(k), kiln.from_numpy(k),
        *[K(a) if isinstance(a, torch.Tensor) else a for a in args], training=False)
    assert_same(list(got), list(expected), rtol=1e-4, atol=1e-5)
