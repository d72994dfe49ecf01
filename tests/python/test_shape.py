"""Views, shape operations and copies, differential against torch 1.13."""
import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same, check_both, kiln_dtype


def aten(lib, name):
    """The op as torch.ops.aten has it (for forms torch's Python API lacks), or kiln's function."""
    return getattr(torch.ops.aten, name) if lib is torch else getattr(kiln, name)


def dt(lib, dtype):
    return dtype if lib is torch else kiln_dtype(dtype)


def storage_ptr(t):
    return t._storage_ptr() if isinstance(t, kiln.Tensor) else t.storage().data_ptr()


def as_list(r):
    return list(r) if isinstance(r, (list, tuple)) else [r]


def check_view(fn, array, write=True):
    """fn(lib, t) agrees with torch, its results share the input's storage exactly
    when torch's do, and writing through them reaches the input as in torch."""
    check_both(fn, array)
    k_in, t_in = kiln.from_numpy(array.copy()), torch.from_numpy(array.copy())
    try:
        t_out = as_list(fn(torch, t_in))
    except Exception:  # noqa: BLE001 - the error itself was compared by check_both
        return
    k_out = as_list(fn(kiln, k_in))
    for k, t in zip(k_out, t_out):
        torch_shares = t.numel() > 0 and storage_ptr(t) == storage_ptr(t_in)
        kiln_shares = k.numel() > 0 and storage_ptr(k) == storage_ptr(k_in)
        assert kiln_shares == torch_shares
    if not write:
        return
    for i, (k, t) in enumerate(zip(k_out, t_out)):
        value = 100 + i
        t_err = k_err = None
        try:
            t[...] = value
        except RuntimeError as e:
            t_err = e
        try:
            k[...] = value
        except RuntimeError as e:
            k_err = e
        assert (t_err is None) == (k_err is None), (t_err, k_err)
    assert_same(k_in, t_in)


@pytest.fixture
def x3(rng):
    return rng.standard_normal((2, 3, 4)).astype(np.float32)


# Three layouts of a (2, 3, 4) tensor: contiguous, permuted, strided.
LAYOUTS = {
    "contiguous": ((2, 3, 4), lambda a: a),
    "permuted": ((4, 3, 2), lambda a: a.permute(2, 1, 0)),
    "strided": ((2, 6, 4), lambda a: a[:, ::2]),
}

VIEW_OPS = {
    "view": lambda a: a.view(6, 4),
    "view_infer": lambda a: a.view(-1, 2, 2),
    "view_flat": lambda a: a.view(-1),
    "view_bad_numel": lambda a: a.view(5, -1),
    "view_two_infer": lambda a: a.view(-1, -1),
    "view_neg": lambda a: a.view(-2, 12),
    "reshape": lambda a: a.reshape(4, 6),
    "reshape_infer": lambda a: a.reshape(-1),
    "transpose": lambda a: a.transpose(0, -1),
    "transpose_same": lambda a: a.transpose(1, 1),
    "transpose_bad": lambda a: a.transpose(0, 3),
    "permute": lambda a: a.permute(1, -1, 0),
    "permute_dup": lambda a: a.permute(0, 0, 1),
    "permute_short": lambda a: a.permute(0, 1),
    "movedim": lambda a: a.movedim(0, -1),
    "movedim_list": lambda a: a.movedim((0, 1), (2, 0)),
    "movedim_dup": lambda a: a.movedim((0, 0), (1, 2)),
    "swapaxes": lambda a: a.swapaxes(0, 2),
    "swapdims": lambda a: a.swapdims(-1, 1),
    "select": lambda a: a.select(1, 2),
    "select_neg": lambda a: a.select(-1, -4),
    "select_oob": lambda a: a.select(1, 3),
    "narrow": lambda a: a.narrow(2, 1, 2),
    "narrow_neg_start": lambda a: a.narrow(-1, -3, 2),
    "narrow_empty_at_end": lambda a: a.narrow(1, 3, 0),
    "narrow_too_long": lambda a: a.narrow(1, 2, 2),
    "expand": lambda a: a.unsqueeze(0).expand(3, -1, -1, -1),
    "expand_size_one": lambda a: a[:, :1].expand(2, 5, 4),
    "expand_bad": lambda a: a.expand(2, 5, 4),
    "squeeze_all": lambda a: a[:, :1, :1].squeeze(),
    "squeeze_dim": lambda a: a[:, :1].squeeze(1),
    "squeeze_noop": lambda a: a.squeeze(0),
    "unsqueeze": lambda a: a.unsqueeze(1),
    "unsqueeze_end": lambda a: a.unsqueeze(-1),
    "unsqueeze_bad": lambda a: a.unsqueeze(5),
    "flatten": lambda a: a.flatten(),
    "flatten_range": lambda a: a.flatten(1, 2),
    "flatten_same": lambda a: a.flatten(1, 1),
    "flatten_bad": lambda a: a.flatten(2, 1),
    "unflatten": lambda a: a.unflatten(2, (2, -1)),
    "unflatten_bad": lambda a: a.unflatten(2, (3, -1)),
    "unbind": lambda a: a.unbind(1),
    "chunk": lambda a: a.chunk(3, -1),
    "chunk_more_than_size": lambda a: a.chunk(7, 0),
    "split": lambda a: a.split(3, 2),
    "split_sizes": lambda a: a.split([1, 3], 2),
    "split_sizes_bad": lambda a: a.split([1, 1], 2),
    "split_with_sizes": lambda a: a.split_with_sizes([2, 1], 1),
    "tensor_split": lambda a: a.tensor_split(3, 2),
    "tensor_split_indices": lambda a: a.tensor_split([1, 3], 2),
    "unsafe_chunk": lambda a: a.unsafe_chunk(2, -1),
    "unsafe_split": lambda a: a.unsafe_split(2, 1),
    "unsafe_split_with_sizes": lambda a: a.unsafe_split_with_sizes([3, 1], 2),
    "detach": lambda a: a.detach(),
    "contiguous": lambda a: a.contiguous(),
    "t_of_select": lambda a: a.select(0, 1).t(),
    "view_as": lambda a: a.contiguous().view_as(a.reshape(4, 6)),
    "expand_as": lambda a: a[:1].expand_as(a),
    "as_strided": lambda a: a.contiguous().as_strided((3, 2), (1, 3)),
    "as_strided_offset": lambda a: a.contiguous().as_strided((2, 2), (4, 1), 5),
    "as_strided_oob": lambda a: a.contiguous().as_strided((3, 2), (10, 1)),
    "T": lambda a: a.T,
    "mT": lambda a: a.mT,
    "mT_of_vector": lambda a: a[0, 0].mT,
    "adjoint": lambda a: a.adjoint(),
    "diagonal": lambda a: a.diagonal(),
    "diagonal_offset": lambda a: a.diagonal(1, -1, 1),
    "diagonal_negative_offset": lambda a: a.diagonal(-1, 0, 2),
    "diagonal_past_the_end": lambda a: a.diagonal(9, 1, 2),
    "diagonal_same_dims": lambda a: a.diagonal(0, 1, -2),
    "unfold": lambda a: a.unfold(2, 2, 1),
    "unfold_step": lambda a: a.unfold(-2, 2, 2),
    "unfold_too_big": lambda a: a.unfold(0, 3, 1),
    "moveaxis": lambda a: a.moveaxis(2, 0),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", list(VIEW_OPS))
def test_views(rng, layout, name):
    shape, prepare = LAYOUTS[layout]
    op = VIEW_OPS[name]
    check_view(lambda lib, a: op(prepare(a)), rng.standard_normal(shape).astype(np.float32))


@pytest.mark.parametrize("name", ["view", "reshape", "transpose", "permute", "select", "narrow", "squeeze_dim",
                                  "unsqueeze", "flatten", "chunk", "split", "unbind"])
def test_views_of_empty_and_int(rng, name):
    op = VIEW_OPS[name]
    check_view(lambda lib, a: op(a), np.zeros((2, 0, 4), np.float32), write=False)
    check_view(lambda lib, a: op(a), rng.integers(-9, 9, (2, 3, 4)))
    check_view(lambda lib, a: op(a), rng.integers(0, 2, (2, 3, 4)).astype(bool))


ZERO_DIM_OPS = {
    "view": lambda a: a.view(1, 1),
    "view_empty": lambda a: a.view([]),
    "reshape": lambda a: a.reshape(-1),
    "t": lambda a: a.t(),
    "transpose": lambda a: a.transpose(0, -1),
    "permute": lambda a: a.permute(()),
    "select": lambda a: a.select(0, 0),
    "narrow": lambda a: a.narrow(0, 0, 1),
    "expand": lambda a: a.expand(2, 3),
    "expand_infer": lambda a: a.expand(-1),
    "squeeze": lambda a: a.squeeze(),
    "squeeze_dim": lambda a: a.squeeze(0),
    "squeeze_bad_dim": lambda a: a.squeeze(1),
    "unsqueeze": lambda a: a.unsqueeze(0),
    "unsqueeze_neg": lambda a: a.unsqueeze(-1),
    "flatten": lambda a: a.flatten(),
    "unbind": lambda a: a.unbind(0),
    "split": lambda a: a.split(1),
    "chunk": lambda a: a.chunk(1),
    "movedim": lambda a: a.movedim(0, 0),
    "unflatten": lambda a: a.unflatten(0, (1,)),
    "T": lambda a: a.T,
    "unfold": lambda a: a.unfold(0, 1, 1),
}


@pytest.mark.parametrize("name", list(ZERO_DIM_OPS))
def test_zero_dim_views(name):
    op = ZERO_DIM_OPS[name]
    check_view(lambda lib, a: op(a), np.array(2.5, dtype=np.float32))


def test_slice_like_python(x3):
    aten_slice = lambda lib: torch.ops.aten.slice if lib is torch else kiln.slice  # noqa: E731
    for args in [(1,), (1, 1), (1, 1, 3), (2, -3, -1), (2, 0, 100, 2), (2, -100, 2), (0, 5, 1), (1, None, None, 2),
                 (2, 3, 1), (-1, 1, None, 3), (1, 0, 3, 0), (1, 0, 3, -1), (3, 0, 1)]:
        check_view(lambda lib, a: aten_slice(lib)(a, *args), x3)
        check_view(lambda lib, a: aten_slice(lib)(a.transpose(0, 2), *args), x3)
    check_both(lambda lib, a: aten_slice(lib)(a, 0), np.array(1.0, np.float32))


def test_view_incompatible_strides_message(x3):
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        kiln.from_numpy(x3).transpose(0, 1).view(-1)
    with pytest.raises(RuntimeError, match=r"shape '\[5, -1\]' is invalid for input of size 24"):
        kiln.from_numpy(x3).view(5, -1)


def test_view_dtype(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    for dtype in [torch.int32, torch.float64, torch.int16, torch.uint8, torch.float32]:
        check_view(lambda lib, t: t.view(dt(lib, dtype)), a, write=False)
        check_view(lambda lib, t: t[:, 1:].view(dt(lib, dtype)), a, write=False)
        check_view(lambda lib, t: t.t().view(dt(lib, dtype)), a, write=False)
    check_both(lambda lib, t: t.view(dt(lib, torch.float64)), np.array(1.0, np.float32))
    check_both(lambda lib, t: t.view(dt(lib, torch.int16)), np.array(1.0, np.float32))


def test_reshape_copies_only_when_needed(x3):
    k = kiln.from_numpy(x3)
    assert k.reshape(6, 4)._storage_ptr() == k._storage_ptr()
    r = k.transpose(0, 2).reshape(-1)
    assert r._storage_ptr() != k._storage_ptr()
    np.testing.assert_array_equal(r.numpy(), x3.transpose(2, 1, 0).reshape(-1))


def test_writes_through_views_reach_base():
    def f(lib, a):
        a.view(6)[0] = 5
        a.t().select(0, 1).copy_(lib.tensor([7.0, 8.0]))
        a.unsqueeze(0).expand(3, 2, 3)[1, 1, 2] = -1
        a.flatten()[3:5] = 9
        return a
    check_both(f, np.arange(6, dtype=np.float32).reshape(2, 3))


def test_inplace_geometry_ops(x3):
    check_both(lambda lib, a: a.transpose_(0, 2), x3)
    check_both(lambda lib, a: a[0].t_(), x3)
    check_both(lambda lib, a: a[:, :1].squeeze_(), x3)
    check_both(lambda lib, a: a[:, :1].squeeze_(1), x3)
    check_both(lambda lib, a: a.unsqueeze_(-2), x3)
    check_both(lambda lib, a: a.swapaxes_(0, 1), x3)
    check_both(lambda lib, a: a.swapdims_(0, 1), x3)
    check_both(lambda lib, a: a.t_(), x3)
    check_both(lambda lib, a: a.as_strided_((4, 3), (1, 4), 2), x3)
    check_both(lambda lib, a: a.as_strided_((4, 3), (10, 4), 2), x3)
    k = kiln.from_numpy(x3)
    same = k.transpose_(0, 1)
    assert same._same_tensor(k) and k.shape == (3, 2, 4)


def test_t_rank_limit(x3):
    check_both(lambda lib, a: a.t(), x3)
    check_both(lambda lib, a: a.t(), x3[0])
    check_both(lambda lib, a: a.t(), x3[0, 0])


def test_detach_and_alias_share_memory(x3):
    k = kiln.from_numpy(x3)
    for r in (k.detach(), kiln.alias(k), k[...], k[:]):
        assert r.data_ptr() == k.data_ptr() and not r._same_tensor(k)


def test_geometry_queries(x3):
    k, t = kiln.from_numpy(x3).transpose(0, 2), torch.from_numpy(x3).transpose(0, 2)
    assert kiln.size(k, -1) == t.size(-1)
    assert kiln.size(k) == list(t.size())
    assert kiln.stride(k, 1) == t.stride(1)
    assert kiln.stride(k) == list(t.stride())
    assert kiln.dim(k) == t.dim() and kiln.numel(k) == t.numel()
    with pytest.raises(IndexError):
        kiln.size(k, 3)


# ---- copies ----

def test_clone_preserves_dense_strides(x3):
    for prep in [lambda a: a, lambda a: a.permute(2, 0, 1), lambda a: a[:, ::2], lambda a: a[:, :1].expand(2, 3, 4)]:
        k, t = prep(kiln.from_numpy(x3)).clone(), prep(torch.from_numpy(x3)).clone()
        assert k.stride() == t.stride()
        assert_same(k, t)
        assert k._storage_ptr() != kiln.from_numpy(x3)._storage_ptr()


def test_clone_and_contiguous_memory_formats(rng):
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    # MemoryFormat codes as TorchScript passes them: 0 contiguous, 1 preserve, 2 channels_last.
    k = kiln.from_numpy(a)
    cl = kiln.clone(k, memory_format=2)
    assert cl.stride() == torch.from_numpy(a).clone(memory_format=torch.channels_last).stride()
    assert_same(cl, torch.from_numpy(a))
    assert kiln.contiguous(cl, memory_format=2)._same_tensor(cl)
    back = cl.contiguous()
    assert back.is_contiguous() and back.stride() == (60, 20, 5, 1)
    assert k.contiguous()._same_tensor(k)
    with pytest.raises(RuntimeError):
        kiln.clone(k[0], memory_format=2)
    assert kiln.contiguous(k, memory_format=1)._same_tensor(k)  # preserve: fine when no copy is needed
    with pytest.raises(RuntimeError):
        kiln.contiguous(k.transpose(0, 3), memory_format=1)
    out = kiln.from_numpy(np.zeros(3, np.float32))
    kiln.clone(k.transpose(0, 3), out=out)
    assert_same(out, torch.from_numpy(a).transpose(0, 3))


def test_copy_broadcast_and_convert(rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float64)
    i = rng.integers(-5, 5, (3, 1))
    check_both(lambda lib, x, y: x.copy_(y), a, b)
    check_both(lambda lib, x, y: x.copy_(y), a, i)
    check_both(lambda lib, x, y: x.t().copy_(y.t()), a, a.copy())
    check_both(lambda lib, x, y: x[:, 1:3].copy_(y[:2]), a, b)
    check_both(lambda lib, x, y: x.copy_(y), i, a)
    check_both(lambda lib, x, y: x.copy_(y), a, rng.standard_normal(3))  # not broadcastable
    check_both(lambda lib, x, y: x.copy_(y), a, np.array([True, False, True, True]))
    check_both(lambda lib, x: x.copy_(x), a)


def test_copy_overlap_checks():
    check_both(lambda lib, x: x[1:].copy_(x[:-1]), np.arange(5.0))
    check_both(lambda lib, x: x[:2].copy_(x[2:4]), np.arange(5.0))
    check_both(lambda lib, x, y: x.expand(3, 5).copy_(y), np.arange(5.0), np.ones((3, 5)))
    check_both(lambda lib, x: x.unsqueeze(0).expand(3, 5).copy_(x), np.arange(5.0))


def test_copy_scalar_overloads():
    k = kiln.from_numpy(np.zeros((2, 2), np.int32))
    kiln.copy_(k, 3)
    assert k.tolist() == [[3, 3], [3, 3]]
    kiln.copy_(k, 2.7)
    assert k.tolist() == [[2, 2], [2, 2]]


# ---- shape operations ----

def test_cat_dtypes_and_dims(rng):
    f32 = rng.standard_normal((2, 3)).astype(np.float32)
    f64 = rng.standard_normal((1, 3))
    i64 = rng.integers(-5, 5, (2, 3))
    i32 = rng.integers(-5, 5, (4, 3)).astype(np.int32)
    u8 = rng.integers(0, 9, (2, 3)).astype(np.uint8)
    i8 = rng.integers(-9, 9, (2, 3)).astype(np.int8)
    b = rng.integers(0, 2, (2, 3)).astype(bool)
    for args in [(f32, f64), (f32, i64), (i64, i32), (u8, i8), (b, i64), (b, b), (u8, b), (f32, i32, b, f64)]:
        check_both(lambda lib, *ts: lib.cat(ts), *args)
    check_both(lambda lib, a, c: lib.cat([a, c], 1), f32, rng.standard_normal((2, 5)).astype(np.float32))
    check_both(lambda lib, a, c: lib.cat([a, c], -1), f32, rng.standard_normal((2, 5)).astype(np.float32))
    check_both(lambda lib, a, c: lib.cat((a.t(), c.t()), 0), f32, f32.copy())
    check_both(lambda lib, a, c: lib.cat([a[:, ::2], c], 1), f32, f32.copy())
    check_both(lambda lib, a: lib.cat([a]), f32)
    check_both(lambda lib, a: lib.concat([a, a], 1), f32)


def test_cat_skips_legacy_empty_and_errors(rng):
    f32 = rng.standard_normal((2, 3)).astype(np.float32)
    e32 = np.zeros(0, np.float32)
    e64 = np.zeros(0, np.float64)
    check_both(lambda lib, a, e: lib.cat([e, a, e]), f32, e32)
    check_both(lambda lib, a, e: lib.cat([e, a], 1), f32, e64)
    check_both(lambda lib, e, f: lib.cat([e, f]), e32, np.zeros(0, np.int32))
    check_both(lambda lib, a, c: lib.cat([a, c]), f32, np.zeros((0, 3), np.float32))
    check_both(lambda lib, a, c: lib.cat([a, c], 1), f32, np.zeros((2, 0), np.float32))
    check_both(lambda lib, a, c: lib.cat([a, c]), f32, np.zeros((2, 4), np.float32))  # size mismatch
    check_both(lambda lib, a, c: lib.cat([a, c]), f32, np.zeros(3, np.float32))  # rank mismatch
    check_both(lambda lib, a, c: lib.cat([a, c]), f32, np.array(1.0, np.float32))  # 0-dim
    check_both(lambda lib, a: lib.cat([a], 2), f32)
    check_both(lambda lib: lib.cat([]))


def with_out(call):
    """Runs call(lib, out, *args) on a resizable copy of the out array (numpy memory can't grow in torch)
    and returns (result, out)."""
    def fn(lib, o, *args):
        out = o.clone()
        return call(lib, out, *args), out
    return fn


def test_cat_and_stack_out(rng):
    f32 = rng.standard_normal((2, 3)).astype(np.float32)
    i64 = rng.integers(-5, 5, (2, 3))
    cat_out = with_out(lambda lib, o, a, b: lib.cat([a, b], out=o))
    check_both(cat_out, np.zeros(1, np.float32), f32, i64)
    check_both(cat_out, np.zeros((4, 3), np.float64), f32, i64)
    check_both(cat_out, np.zeros(0, np.int64), f32, i64)  # float can't be cast to int
    check_both(with_out(lambda lib, o, a, b: lib.stack([a, b], 1, out=o)), np.zeros(0, np.float32), f32, i64)


def test_stack(rng):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    i = rng.integers(-5, 5, (2, 3))
    for dim in [0, 1, 2, -1, -3, 3]:
        check_both(lambda lib, x, y: lib.stack([x, y], dim), a, i)
    check_both(lambda lib, x, y: lib.stack([x.t(), y.t()]), a, i)
    check_both(lambda lib, x, y: lib.stack([x, y]), a, i[:1])
    check_both(lambda lib, x: lib.stack([x, x]), np.array(3.0, np.float32))
    check_both(lambda lib, x: lib.stack([x, x], 1), np.zeros(0, np.float32))
    check_both(lambda lib: lib.stack([]))


def test_repeat(rng):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    for reps in [(2, 1), (1, 3), (2, 1, 2), (3, 2, 1, 2), (0, 2), (2,), (2, -1), (1, 1)]:
        check_both(lambda lib, x: x.repeat(*reps), a)
        check_both(lambda lib, x: x.t().repeat(*reps), a)
    check_both(lambda lib, x: x.repeat(3, 2), np.array(4, np.int64))
    check_both(lambda lib, x: x.repeat([]), np.array(4, np.int64))
    check_both(lambda lib, x: x.repeat(2, 2), np.zeros(0, bool))
    check_both(with_out(lambda lib, o, x: aten(lib, "repeat")(x, [2, 2], out=o)), np.zeros(0, np.float32), a)
    check_both(with_out(lambda lib, o, x: aten(lib, "repeat")(x, [2, 2], out=o)), np.zeros(0, np.int32), a)


def test_flip_roll(rng):
    a = rng.integers(-9, 9, (3, 4, 2))
    for dims in [(0,), (1, 2), (-1, 0), (0, 1, 2), ()]:
        check_both(lambda lib, x: x.flip(dims), a)
        check_both(lambda lib, x: x.transpose(0, 2).flip(dims), a)
    check_both(lambda lib, x: x.flip(0, 0), a)
    check_both(lambda lib, x: x.flip(0), np.array(1.5))
    check_both(lambda lib, x: x.flip(1), np.zeros((2, 0)))
    for shifts, dims in [(1, 0), (-1, 1), (5, 2), (2, None), (-7, None), ((1, 2), (0, 1)), ((1, -2), (2, -1)),
                         ((1, 2), (0,)), ((1, 2), None)]:
        if dims is None:
            check_both(lambda lib, x: x.roll(shifts), a)
            check_both(lambda lib, x: x.transpose(0, 1).roll(shifts), a)
        else:
            check_both(lambda lib, x: x.roll(shifts, dims), a)
            check_both(lambda lib, x: x.transpose(0, 1).roll(shifts, dims), a)
    check_both(lambda lib, x: x.roll(1), np.array(1.5))
    check_both(lambda lib, x: x.roll(1, 0), np.array(1.5))
    check_both(lambda lib, x: x.roll(1, 0), np.zeros((0, 2)))
    check_both(with_out(lambda lib, o, x: aten(lib, "flip")(x, [0], out=o)), np.zeros(0, np.int64), a)
    check_both(with_out(lambda lib, o, x: aten(lib, "roll")(x, [1], [0], out=o)), np.zeros(0, np.int64), a)


@pytest.mark.parametrize("diagonal", [0, 1, -1, 3, -5, 100, -100])
def test_tril_triu(rng, diagonal):
    a = rng.standard_normal((2, 3, 5)).astype(np.float32)
    b = rng.integers(0, 2, (4, 3)).astype(bool)
    for fn in ["tril", "triu"]:
        check_both(lambda lib, x: getattr(x, fn)(diagonal), a)
        check_both(lambda lib, x: getattr(x, fn)(diagonal), a.transpose(2, 0, 1).copy())
        check_both(lambda lib, x: getattr(x.transpose(1, 2), fn)(diagonal), a)
        check_both(lambda lib, x: getattr(x, fn)(diagonal), b)
        check_both(lambda lib, x: getattr(x.transpose(0, 1), fn + "_")(diagonal), b)
        check_both(lambda lib, x: getattr(x[:, ::2], fn + "_")(diagonal), a)
        check_both(with_out(lambda lib, o, x: getattr(lib, fn)(x, diagonal, out=o)), np.zeros(0, np.float32), a)


def test_tril_needs_a_matrix():
    check_both(lambda lib, x: x.tril(), np.arange(3.0))
    check_both(lambda lib, x: x.triu_(), np.array(1.0))
    check_both(lambda lib, x: x.tril(), np.zeros((0, 3)))


def test_ravel_and_misc(x3):
    check_view(lambda lib, a: a.ravel(), x3)
    check_view(lambda lib, a: a.transpose(0, 1).ravel(), x3)
    check_both(lambda lib, a, s: a.narrow(1, s, 2), x3, np.array(1))
    check_both(lambda lib, a, s: a.narrow(1, s, 2), x3, np.array(1.0))
    check_both(lambda lib, a, s: a.tensor_split(s, 2), x3, np.array([1, 3]))
    check_both(lambda lib, a, s: a.tensor_split(s, 2), x3, np.array(3))
    check_both(lambda lib, a, s: a.tensor_split(s, 2), x3, np.array([[1]]))
    check_both(lambda lib, a, s: a.tensor_split(s, 2), x3, np.array([1], np.int32))
    check_both(lambda lib, a: a.tensor_split(0, 2), x3)


def test_schemas_match_torch():
    """Every schema of the ops registered here is one torch 1.13 has, character for character."""
    names = """adjoint alias as_strided cat chunk clone concat contiguous copy_ detach detach_ diagonal dim expand
        expand_as flatten flip gather as_strided_ index index_add index_add_ index_fill index_fill_ index_put index_put_
        index_select mT masked_fill masked_fill_ masked_select moveaxis movedim narrow nonzero numel numpy_T permute
        ravel repeat reshape reshape_as roll scatter scatter_ scatter_add scatter_add_ select select_scatter size slice
        slice_scatter split split_with_sizes squeeze squeeze_ stack stride swapaxes swapaxes_ swapdims swapdims_ t t_
        take tensor_split transpose transpose_ tril tril_ triu triu_ unbind unflatten unfold unsafe_chunk unsafe_split
        unsafe_split_with_sizes unsqueeze unsqueeze_ view view_as""".split()
    ours = {}
    for schema in kiln._C._schemas():
        name = schema.split("(")[0].split(".")[0][len("aten::"):]
        if schema.startswith("aten::") and name in names:
            ours.setdefault(name, []).append(schema)
    assert sorted(ours) == sorted(names)
    for name, schemas in ours.items():
        torch_schemas = {str(s) for s in torch._C._jit_get_schemas_for_operator("aten::" + name)}
        for schema in schemas:
            assert schema in torch_schemas, schema


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "bool"])
def test_transposed_copies_of_large_tensors(rng, dtype):
    # Large enough for the tiled transpose path; odd sizes leave partial tiles.
    a = (rng.standard_normal((67, 45, 3)) * 10).astype(dtype)
    check_both(lambda lib, x: x.transpose(0, 1).contiguous(), a)
    check_both(lambda lib, x: x.permute(2, 0, 1).contiguous(), a)
    check_both(lambda lib, x: x.permute(1, 2, 0).reshape(-1), a)
    check_both(lambda lib, x: x[::2].transpose(0, 2).clone(), a)
    check_both(lambda lib, x, y: x.copy_(y.transpose(0, 1)), a.transpose(1, 0, 2).copy(), a)
    check_both(lambda lib, x, y: x[:, ::2].copy_(y.transpose(0, 1)[:, ::2]), a.transpose(1, 0, 2).copy(), a)


def test_select_and_slice_scatter(rng, x3):
    src = rng.standard_normal((2, 4)).astype(np.float32)
    check_both(lambda lib, a, s: lib.select_scatter(a, s, 1, -1), x3, src)
    check_both(lambda lib, a, s: lib.select_scatter(a.transpose(0, 1), s, 0, 2), x3, src)
    check_both(lambda lib, a, s: lib.select_scatter(a, s, 1, 3), x3, src)
    check_both(lambda lib, a, s: lib.select_scatter(a, s, 0, 0), x3, src)  # wrong src shape
    check_both(lambda lib, a, s: lib.select_scatter(a, s, 1, 0), x3, (src * 10).astype(np.int64))
    block = rng.standard_normal((2, 3, 2)).astype(np.float32)
    check_both(lambda lib, a, s: lib.slice_scatter(a, s, 2, 0, 4, 2), x3, block)
    check_both(lambda lib, a, s: lib.slice_scatter(a, s, -1, 1, None, 2), x3, block)
    check_both(lambda lib, a, s: lib.slice_scatter(a, s, 2, 0, 1), x3, block)
    check_both(with_out(lambda lib, o, a, s: aten(lib, "slice_scatter")(a, s, 2, 0, 4, 2, out=o)),
               np.zeros(0, np.int32), x3, block)
