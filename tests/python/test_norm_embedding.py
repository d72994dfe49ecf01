"""Batch, instance and group normalization, embedding and embedding_bag
(kiln/ops/norm_ops.cpp, kiln/ops/embedding_ops.cpp) against torch 1.13:
the aten overloads eagerly (running statistics updated in place as torch
does), kiln.nn.functional with torch.nn.functional's signatures, scripts,
shape propagation, the kiln.nn layers loaded with torch state dicts in
train and eval mode, a torch-saved scripted module loaded with kiln.load,
and torch's errors on bad arguments."""
import io
import re

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same

F = kiln.nn.functional
TF = torch.nn.functional


def K(t):
    return kiln.from_numpy(t.detach().numpy().copy())


def randn(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype)


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-10)


# --- batch norm ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 5), (2, 3, 2, 3, 2), (40, 7, 300)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_matches_torch_and_updates_running_stats(dtype, shape, training, affine):
    x = randn(*shape, dtype=dtype) * 3 + 1
    c = shape[1]
    w, b = (randn(c, dtype=dtype, seed=1), randn(c, dtype=dtype, seed=2)) if affine else (None, None)
    rm, rv = randn(c, dtype=dtype, seed=3), torch.rand(c, dtype=dtype) + 0.5
    krm, krv = K(rm), K(rv)
    kw = (K(w), K(b)) if affine else (None, None)
    for _ in range(2):
        ours = kiln.batch_norm(K(x), *kw, krm, krv, training, 0.3, 1e-5, True)
        theirs = torch.batch_norm(x, w, b, rm, rv, training, 0.3, 1e-5, True)
        assert_same(ours, theirs, **tol(dtype))
        assert_same(krm, rm, **tol(dtype))
        assert_same(krv, rv, **tol(dtype))


@pytest.mark.parametrize("training", [True, False])
def test_native_batch_norm_and_its_out_form(training):
    x = randn(4, 3, 5)
    w, b, rm, rv = randn(3, seed=1), randn(3, seed=2), torch.zeros(3), torch.ones(3)
    krm, krv = K(rm), K(rv)
    ours = kiln.native_batch_norm(K(x), K(w), K(b), krm, krv, training, 0.1, 1e-5)
    theirs = torch.native_batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5)
    assert_same(list(ours), list(theirs))
    assert_same(krm, rm)
    outs = [kiln.empty([0]) for _ in range(3)]
    kiln.native_batch_norm(K(x), K(w), K(b), None, None, True, 0.1, 1e-5, out=outs[0], save_mean=outs[1],
                           save_invstd=outs[2])
    assert_same(outs, list(torch.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)))
    impl = kiln._C._overload("aten::_batch_norm_impl_index")(K(x), K(w), K(b), None, None, True, 0.1, 1e-5, True)
    assert_same(impl[0], theirs[0] if training else torch.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)[0])
    assert impl[4] == 0


def test_batch_norm_without_running_stats_uses_batch_statistics():
    x = randn(8, 4)
    assert_same(F.batch_norm(K(x), None, None, training=True), TF.batch_norm(x, None, None, training=True))
    # Strided input.
    xt = randn(5, 8).t()
    assert_same(kiln.batch_norm(K(xt).t().t(), None, None, None, None, True, 0.1, 1e-5, True),
                torch.batch_norm(xt, None, None, None, None, True, 0.1, 1e-5, True))


def test_batch_norm_errors_match_torch():
    x = K(randn(3, 4, 5))
    with pytest.raises(RuntimeError, match="running_mean should contain 4 elements not 3"):
        kiln.batch_norm(x, None, None, K(torch.zeros(3)), K(torch.ones(4)), False, 0.1, 1e-5, True)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        kiln.batch_norm(x, None, None, None, None, False, 0.1, 1e-5, True)
    with pytest.raises(RuntimeError, match="weight should contain 4 elements not 3"):
        kiln.batch_norm(x, K(torch.ones(3)), None, None, None, True, 0.1, 1e-5, True)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        kiln.batch_norm(K(torch.ones(3, 4, dtype=torch.long)), None, None, None, None, True, 0.1, 1e-5, True)
    with pytest.raises(IndexError, match="Dimension out of range"):
        kiln.batch_norm(K(torch.ones(4)), None, None, None, None, True, 0.1, 1e-5, True)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(K(randn(1, 4)), None, None, training=True)


# --- instance and group norm -------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(2, 3, 5), (3, 4, 3, 3), (2, 2, 2, 3, 2)])
@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm(shape, use_input_stats):
    x = randn(*shape)
    c = shape[1]
    w, b, rm, rv = randn(c, seed=1), randn(c, seed=2), randn(c, seed=3), torch.rand(c) + 0.5
    krm, krv = K(rm), K(rv)
    ours = kiln.instance_norm(K(x), K(w), K(b), krm, krv, use_input_stats, 0.2, 1e-5, True)
    theirs = torch.instance_norm(x, w, b, rm, rv, use_input_stats, 0.2, 1e-5, True)
    assert_same(ours, theirs)
    assert_same(krm, rm)
    assert_same(krv, rv)
    assert_same(F.instance_norm(K(x)), TF.instance_norm(x))
    with pytest.raises(RuntimeError, match="Expected running_mean and running_var to be defined"):
        kiln.instance_norm(K(x), None, None, None, None, False, 0.1, 1e-5, True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,groups", [((2, 6, 5), 3), ((3, 4, 3, 3), 2), ((2, 8), 4), ((2, 4, 70, 70), 1)])
def test_group_norm(dtype, shape, groups):
    x = randn(*shape, dtype=dtype) * 2 - 1
    c = shape[1]
    w, b = randn(c, dtype=dtype, seed=1), randn(c, dtype=dtype, seed=2)
    assert_same(kiln.group_norm(K(x), groups, K(w), K(b), 1e-5, True), torch.group_norm(x, groups, w, b),
                **tol(dtype))
    assert_same(F.group_norm(K(x), groups), TF.group_norm(x, groups), **tol(dtype))
    n = shape[0]
    hxw = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    ours = kiln.native_group_norm(K(x), K(w), None, n, c, hxw, groups, 1e-5)
    theirs = torch.native_group_norm(x, w, None, n, c, hxw, groups, 1e-5)
    assert_same(list(ours), list(theirs), **tol(dtype))


def test_group_norm_errors_match_torch():
    x = K(randn(3, 4, 5))
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be divisible by num_groups, "
                                           r"but got input of shape \[3, 4, 5\] and num_groups=3"):
        kiln.group_norm(x, 3, None, None, 1e-5, True)
    with pytest.raises(RuntimeError, match="Expected weight to be a vector of size equal to the number of channels"):
        kiln.group_norm(x, 2, K(torch.ones(3)), None, 1e-5, True)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        kiln.group_norm(K(torch.ones(3, 4, dtype=torch.long)), 2, None, None, 1e-5, True)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.group_norm(K(randn(1, 4)), 4)


# --- embedding -------------------------------------------------------------------------------


@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_embedding(index_dtype, dtype):
    w = (randn(10, 4) * 10).to(dtype)
    idx = torch.tensor([[1, 2, 9], [0, 0, 5]], dtype=index_dtype)
    assert_same(kiln.embedding(K(w), K(idx)), torch.embedding(w, idx))
    assert_same(F.embedding(K(idx), K(w), padding_idx=-1), TF.embedding(idx, w, padding_idx=-1))
    assert_same(F.embedding(K(idx[0, 0]), K(w)), TF.embedding(idx[0, 0], w))
    out = kiln.empty([0], dtype=K(w).dtype)
    kiln.embedding(K(w), K(idx), out=out)
    assert_same(out, torch.embedding(w, idx))


def test_embedding_max_norm_renormalizes_the_rows_used():
    w = randn(10, 4) * 3
    idx = torch.tensor([1, 2, 2, 7])
    kw = K(w)
    ours = F.embedding(K(idx), kw, max_norm=1.5, norm_type=2.0)
    theirs = TF.embedding(idx, w, max_norm=1.5, norm_type=2.0)
    assert_same(ours, theirs)
    assert_same(kw, w)  # the weight is renormalized in place, as in torch
    w2 = randn(10, 4) * 3
    assert_same(kiln.embedding_renorm(K(w2), K(idx), 1.0, 1.0), torch.embedding_renorm_(w2.clone(), idx, 1.0, 1.0))


def test_embedding_errors_match_torch():
    w = K(randn(10, 3))
    with pytest.raises(IndexError, match="index out of range in self"):
        kiln.embedding(w, K(torch.tensor([10])))
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(K(torch.tensor([-1])), w)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the following "
                                           "scalar types: Long, Int; but got torch.FloatTensor instead"):
        kiln.embedding(w, K(torch.tensor([1.0])))
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        kiln.embedding(K(randn(3)), K(torch.tensor([1])))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(K(torch.tensor([1])), w, padding_idx=10)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("include_last_offset", [False, True])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag(mode, include_last_offset, padding_idx):
    w = randn(10, 3)
    idx = torch.tensor([1, 2, 3, 4, 5, 2, 9, 0])
    offsets = torch.tensor([0, 2, 2, 5, 8]) if include_last_offset else torch.tensor([0, 2, 2, 5])
    ours = F.embedding_bag(K(idx), K(w), K(offsets), mode=mode, include_last_offset=include_last_offset,
                           padding_idx=padding_idx)
    theirs = TF.embedding_bag(idx, w, offsets, mode=mode, include_last_offset=include_last_offset,
                              padding_idx=padding_idx)
    assert_same(ours, theirs)
    idx2 = torch.tensor([[1, 2, 3], [4, 2, 2]])
    assert_same(F.embedding_bag(K(idx2), K(w), mode=mode, padding_idx=padding_idx),
                TF.embedding_bag(idx2, w, mode=mode, padding_idx=padding_idx))
    raw = kiln._C._overload("aten::_embedding_bag")(K(w), K(idx), K(offsets), False, ["sum", "mean", "max"].index(mode),
                                                     False, None, include_last_offset, -1)
    theirs_raw = torch._embedding_bag(w, idx, offsets, False, ["sum", "mean", "max"].index(mode), False, None,
                                      include_last_offset, -1)
    assert_same(raw[0], theirs_raw[0])
    if mode == "max":
        assert_same(raw[3], theirs_raw[3])


def test_embedding_bag_per_sample_weights_and_errors():
    w = randn(10, 3)
    idx = torch.tensor([1, 2, 3, 4])
    offsets = torch.tensor([0, 1])
    psw = randn(4, seed=5)
    assert_same(F.embedding_bag(K(idx), K(w), K(offsets), mode="sum", per_sample_weights=K(psw)),
                TF.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=psw))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(K(idx), K(w), K(offsets), mode="mean", per_sample_weights=K(psw))
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        kiln.embedding_bag(K(w), K(idx), K(torch.tensor([1, 2])), False, 0, False, None, False)
    with pytest.raises(RuntimeError, match="offsets\\[-1\\] can not be greater than input's length 4"):
        kiln.embedding_bag(K(w), K(idx), K(torch.tensor([0, 5])), False, 0, False, None, False)
    with pytest.raises(IndexError):
        kiln.embedding_bag(K(w), K(torch.tensor([10])), K(torch.tensor([0])), False, 0, False, None, False)
    with pytest.raises(RuntimeError, match="offsets must not be negative"):
        kiln.embedding_bag(K(w), K(idx), K(torch.tensor([0, -1])), False, 0, False, None, False)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(K(idx), K(w))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(K(idx), K(w), K(offsets), mode="median")


# --- scripts and shape propagation -------------------------------------------------------------


def program(x, rm, rv, w, b, idx, table):
    y = F.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)
    z = F.group_norm(y.unsqueeze(2), 3, None, None, 1e-5)
    e = F.embedding(idx, table, padding_idx=0)
    bag = F.embedding_bag(idx, table, mode="max")
    return z.squeeze(2) + e.sum() + bag.sum() + F.instance_norm(y.unsqueeze(0)).squeeze(0)


def test_script_with_kiln_functional_matches_torch():
    x, w, b = randn(4, 6), randn(6, seed=1), randn(6, seed=2)
    rm, rv = torch.zeros(6), torch.ones(6)
    idx, table = torch.tensor([[1, 2], [3, 0]]), randn(5, 2, seed=3)
    scripted = kiln.script(program)
    krm, krv = K(rm), K(rv)
    ours = scripted(K(x), krm, krv, K(w), K(b), K(idx), K(table))
    global F
    saved, F = F, TF
    try:
        theirs = torch.jit.script(program)(x, rm, rv, w, b, idx, table)
    finally:
        F = saved
    assert_same(ours, theirs)
    assert_same(krm, rm)
    assert_same(krv, rv)


SOURCE = """
def f(x, rm, rv, idx, table):
    y = torch.nn.functional.batch_norm(x, rm, rv, None, None, False)
    return y, torch.nn.functional.embedding(idx, table), torch.group_norm(x, 2)
"""


def test_compiled_source_uses_torch_functional_signatures_and_shapes():
    args = [randn(4, 6), torch.zeros(6), torch.ones(6), torch.tensor([[1, 2, 3]]), randn(5, 2)]
    theirs = torch.jit.CompilationUnit(SOURCE).f(*args)
    unit = kiln.compile(SOURCE)
    assert_same(list(unit.f(*[K(a) for a in args])), list(theirs))
    graph = str(unit.f.graph_for(*[K(a) for a in args]))
    assert "Float(4, 6" in graph and "Float(1, 3, 2" in graph, graph


# --- kiln.nn layers ----------------------------------------------------------------------------

LAYERS = [
    ("BatchNorm1d", (3,), (4, 3, 5)),
    ("BatchNorm1d", (3,), (6, 3)),
    ("BatchNorm2d", (3,), (2, 3, 4, 4)),
    ("BatchNorm3d", (3,), (2, 3, 2, 2, 2)),
    ("InstanceNorm1d", (3,), (2, 3, 5)),
    ("InstanceNorm1d", (3,), (3, 5)),
    ("InstanceNorm2d", (3,), (2, 3, 4, 4)),
    ("InstanceNorm3d", (3,), (2, 3, 2, 3, 2)),
]
OPTIONS = [{}, {"affine": False}, {"momentum": None}, {"track_running_stats": False},
           {"affine": True, "track_running_stats": True}]


def _copy_from_torch(ours, theirs):
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(-1, 1)
    ours.load_state_dict({k: K(v) for k, v in theirs.state_dict().items()})


@pytest.mark.parametrize("name,args,shape", LAYERS)
@pytest.mark.parametrize("options", OPTIONS)
def test_norm_layers_match_torch_in_train_and_eval(name, args, shape, options):
    theirs = getattr(torch.nn, name)(*args, **options)
    ours = getattr(kiln.nn, name)(*args, **options)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _copy_from_torch(ours, theirs)
    if name.startswith("InstanceNorm") and options.get("momentum", 0.1) is None:
        # F.instance_norm takes a float momentum: torch fails on None too.
        with pytest.raises(TypeError):
            theirs(randn(*shape))
        with pytest.raises(TypeError):
            ours(K(randn(*shape)))
        with pytest.raises(RuntimeError, match="Expected a value of type 'float' for argument 'momentum'"):
            kiln.script(ours)
        return
    scripted = kiln.script(getattr(kiln.nn, name)(*args, **options))
    scripted.load_state_dict({k: K(v) for k, v in theirs.state_dict().items()})
    for step, training in enumerate([True, True, False, True]):
        theirs.train(training)
        ours.train(training)
        scripted.train(training)
        x = randn(*shape, seed=10 + step) * 2 + 0.5
        expected = theirs(x)
        assert_same(ours(K(x)), expected)
        assert_same(scripted(K(x)), expected)
    for key, value in theirs.state_dict().items():
        assert_same(ours.state_dict()[key], value)
        assert_same(scripted.state_dict()[key], value)


def test_batch_norm_layer_errors_and_torch_qualname():
    bn = kiln.nn.BatchNorm2d(3)
    with pytest.raises(ValueError, match="expected 4D input \\(got 3D input\\)"):
        bn(K(randn(2, 3, 4)))
    scripted = kiln.script(kiln.nn.BatchNorm1d(3))
    # torch's qualified name (mangled, ___torch_mangle_N, when another
    # BatchNorm1d type was scripted earlier in the process, as in torch).
    assert re.search(r"__torch__\.torch\.nn\.modules\.batchnorm\.(___torch_mangle_\d+\.)?BatchNorm1d", str(scripted.graph))
    with pytest.raises(RuntimeError, match="expected 2D or 3D input"):
        scripted(K(randn(3)))
    # Checkpoints without num_batches_tracked (torch's version 1) still load.
    state = {k: K(v) for k, v in torch.nn.BatchNorm1d(3).state_dict().items() if k != "num_batches_tracked"}
    kiln.nn.BatchNorm1d(3).load_state_dict(state)


@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_layer(affine):
    theirs = torch.nn.GroupNorm(2, 4, affine=affine)
    ours = kiln.nn.GroupNorm(2, 4, affine=affine)
    assert repr(ours) == repr(theirs)
    _copy_from_torch(ours, theirs)
    x = randn(3, 4, 5)
    assert_same(ours(K(x)), theirs(x))
    scripted = kiln.script(ours)
    assert_same(scripted(K(x)), theirs(x))
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        kiln.nn.GroupNorm(3, 4)


@pytest.mark.parametrize("options", [{}, {"padding_idx": 1}, {"padding_idx": -2, "max_norm": 1.0},
                                     {"norm_type": 1.0, "max_norm": 2.0}])
def test_embedding_layer(options):
    theirs = torch.nn.Embedding(10, 3, **options)
    ours = kiln.nn.Embedding(10, 3, **options)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == ["weight"]
    if "padding_idx" in options:
        assert np.all(ours.weight.numpy()[options["padding_idx"]] == 0)
    ours.load_state_dict({k: K(v) for k, v in theirs.state_dict().items()})
    scripted = kiln.script(kiln.nn.Embedding(10, 3, **options))
    scripted.load_state_dict({k: K(v) for k, v in theirs.state_dict().items()})
    idx = torch.tensor([[1, 2, 8], [8, 0, 3]])
    with torch.no_grad():
        expected = theirs(idx)
    assert_same(ours(K(idx)), expected)
    assert_same(scripted(K(idx)), expected)
    assert_same(ours.weight, theirs.weight)
    pretrained = kiln.nn.Embedding.from_pretrained(K(theirs.weight))
    assert_same(pretrained(K(idx)), torch.nn.Embedding.from_pretrained(theirs.weight)(idx))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_layer(mode):
    theirs = torch.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=0)
    ours = kiln.nn.EmbeddingBag(10, 3, mode=mode, padding_idx=0)
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: K(v) for k, v in theirs.state_dict().items()})
    idx, offsets = torch.tensor([1, 0, 3, 4, 9]), torch.tensor([0, 3])
    expected = theirs(idx, offsets)
    assert_same(ours(K(idx), K(offsets)), expected)
    assert_same(kiln.script(ours)(K(idx), K(offsets)), expected)
    assert_same(kiln.nn.EmbeddingBag.from_pretrained(K(theirs.weight), mode=mode)(K(idx), K(offsets)),
                torch.nn.EmbeddingBag.from_pretrained(theirs.weight, mode=mode)(idx, offsets))


# --- a torch-saved scripted module ---------------------------------------------------------------


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(12, 6, padding_idx=0)
        self.bn = torch.nn.BatchNorm1d(6)
        self.gn = torch.nn.GroupNorm(3, 6)
        self.inn = torch.nn.InstanceNorm1d(6, affine=True, track_running_stats=True)
        self.bag = torch.nn.EmbeddingBag(12, 6, mode="mean")
        self.loss = torch.nn.CrossEntropyLoss(label_smoothing=0.1)

    def forward(self, idx, target):
        x = self.emb(idx).transpose(1, 2)
        y = self.inn(self.gn(self.bn(x)))
        return self.loss(y, target) + self.bag(idx).sum()


def test_torch_saved_module_runs_in_kiln_in_train_and_eval():
    scripted = torch.jit.script(Tagger())
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    loaded = kiln.load(io.BytesIO(buffer.getvalue()))
    idx, target = torch.randint(0, 12, (3, 5)), torch.randint(0, 6, (3, 5))
    for training in [True, False, True]:
        scripted.train(training)
        loaded.train(training)
        with torch.no_grad():
            expected = scripted(idx, target)
        assert_same(loaded(K(idx), K(target)), expected)
    state = loaded.state_dict()
    for key, value in scripted.state_dict().items():
        assert_same(state[key], value)


class _Scaled(kiln.nn.Module):
    """A Final constant assigned to a variable that a branch reassigns, as
    _BatchNorm.forward does with momentum (kiln's frontend change)."""

    __constants__ = ["factor"]

    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x, flag: bool):
        scale = 0.5
        if flag:
            scale = self.factor
        else:
            if self.factor is None:
                scale = 2.0
        return x * scale


def test_a_module_constant_assigned_to_a_variable_is_reassignable():
    scripted = kiln.script(_Scaled(3.0))
    x = kiln.ones([2])
    assert scripted(x, True).numpy().tolist() == [3.0, 3.0]
    assert scripted(x, False).numpy().tolist() == [0.5, 0.5]
