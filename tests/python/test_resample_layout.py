"""Resampling and layout ops (kiln/ops/resample_ops.cpp): upsampling in
every mode and overload, padding, pixel and channel shuffles, im2col/col2im;
F.interpolate, F.pad, F.unfold and F.fold with torch's signatures, eager and
scripted; the kiln.nn layers; and torch-saved scripted modules using them."""
import io
from typing import List

import numpy as np
import pytest
import torch

import kiln
import kiln.nn as knn
import kiln.nn.functional as KF
import torch.nn as tnn
import torch.nn.functional as F
from conftest import assert_same

TN = torch._C._nn


def _x(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _k(x):
    return kiln.from_numpy(x.copy())


def _t(x):
    return torch.from_numpy(x.copy())


def _aten(name):
    return getattr(TN, name, None) or getattr(torch.ops.aten, name)


# (name, spatial dims, has align_corners)
UPSAMPLE = [("upsample_nearest1d", 1, False), ("upsample_nearest2d", 2, False), ("upsample_nearest3d", 3, False),
            ("_upsample_nearest_exact1d", 1, False), ("_upsample_nearest_exact2d", 2, False),
            ("_upsample_nearest_exact3d", 3, False), ("upsample_linear1d", 1, True),
            ("upsample_bilinear2d", 2, True), ("upsample_trilinear3d", 3, True), ("upsample_bicubic2d", 2, True),
            ("_upsample_bilinear2d_aa", 2, True), ("_upsample_bicubic2d_aa", 2, True)]
SIZES = {1: [[11], [3], [7], [14]], 2: [[9, 4], [10, 14], [5, 7], [3, 3]], 3: [[4, 9, 3], [2, 3, 4], [6, 10, 14]]}
INPUT = {1: (2, 3, 7), 2: (2, 3, 5, 7), 3: (1, 2, 3, 5, 7)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,n,align", UPSAMPLE)
def test_upsample_sized(name, n, align, dtype):
    x = _x(INPUT[n], dtype)
    for size in SIZES[n]:
        for ac in ([False, True] if align else [None]):
            args = (size,) if ac is None else (size, ac)
            expected = _aten(name)(_t(x), *args)
            fn = getattr(KF, name)
            assert_same(fn(_k(x), *args), expected, rtol=1e-5, atol=1e-5)
            out = kiln.empty(list(expected.shape), dtype=kiln.float32 if dtype == np.float32 else kiln.float64)
            fn(_k(x), *args, out=out)
            assert_same(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,n,align", UPSAMPLE)
def test_upsample_scales_and_vec(name, n, align):
    x = _x(INPUT[n])
    factors = [1.7, 0.6, 2.5][:n]
    ac = (False,) if align else ()
    # .vec with scale_factors: the output size is floor(in * scale), the scale is used as given.
    expected = _aten(name)(_t(x), None, *ac, factors)
    assert_same(getattr(KF, name)(_k(x), None, *ac, factors), expected, rtol=1e-5, atol=1e-5)
    # .vec with output_size.
    size = SIZES[n][0]
    expected = _aten(name)(_t(x), size, *ac, None)
    assert_same(getattr(KF, name)(_k(x), size, *ac, None), expected, rtol=1e-5, atol=1e-5)
    # The sized form with explicit scales.
    out_size = [int(np.floor(s * f)) for s, f in zip(INPUT[n][2:], factors)]
    expected = _aten(name)(_t(x), out_size, *ac, *factors)
    assert_same(getattr(KF, name)(_k(x), out_size, *ac, *factors), expected, rtol=1e-5, atol=1e-5)


def test_upsample_nearest_uint8():
    x = (np.arange(2 * 3 * 4 * 5) % 251).astype(np.uint8).reshape(2, 3, 4, 5)
    assert_same(kiln.upsample_nearest2d(_k(x), [7, 3]), TN.upsample_nearest2d(_t(x), [7, 3]))


@pytest.mark.parametrize("call", [
    lambda m, x: m.upsample_nearest2d(x, [4]),
    lambda m, x: m.upsample_nearest2d(x[0], [4, 4]),
    lambda m, x: m.upsample_bilinear2d(x, [0, 4], False),
    lambda m, x: m.upsample_bilinear2d(x, [4, 4], False, [2.0, 2.0]),
    lambda m, x: m.upsample_bilinear2d(x, None, False, None),
])
def test_upsample_errors_as_torch(call):
    x = _x((2, 3, 4, 5))
    with pytest.raises(RuntimeError) as theirs:
        call(TN, _t(x))
    with pytest.raises(RuntimeError) as ours:
        call(KF, _k(x))
    assert str(ours.value) == str(theirs.value)


INTERPOLATE = [
    dict(size=[7, 9], mode="bilinear"), dict(size=6, mode="bilinear", align_corners=True),
    dict(scale_factor=2.0), dict(scale_factor=[1.5, 0.5], mode="nearest-exact"),
    dict(scale_factor=1.7, mode="bicubic", align_corners=False), dict(size=(3, 4), mode="bicubic", antialias=True),
    dict(scale_factor=0.4, mode="bilinear", antialias=True), dict(scale_factor=1.3, recompute_scale_factor=True),
    dict(scale_factor=(2.0, 3.0), mode="bilinear", align_corners=True),
    dict(size=[3, 4], mode="area"), dict(scale_factor=0.5, mode="area"),
]


@pytest.mark.parametrize("kwargs", INTERPOLATE, ids=[str(k) for k in INTERPOLATE])
def test_interpolate_eager(kwargs):
    x = _x((2, 3, 5, 7))
    assert_same(KF.interpolate(_k(x), **kwargs), F.interpolate(_t(x), **kwargs), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,kwargs", [((2, 3, 7), dict(scale_factor=2.0, mode="linear")),
                                          ((2, 3, 7), dict(size=4)),
                                          ((1, 2, 3, 4, 5), dict(scale_factor=1.5, mode="trilinear")),
                                          ((1, 2, 3, 4, 5), dict(size=[2, 3, 4], mode="nearest")),
                                          ((2, 3, 7), dict(size=3, mode="area")),
                                          ((1, 2, 3, 4, 5), dict(size=[2, 2, 3], mode="area"))])
def test_interpolate_other_ranks(shape, kwargs):
    x = _x(shape)
    assert_same(KF.interpolate(_k(x), **kwargs), F.interpolate(_t(x), **kwargs), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,kwargs", [((2, 3, 7), dict(size=4, mode="bilinear")),
                                          ((2, 3, 4, 5), dict(size=4, align_corners=True)),
                                          ((2, 3, 4, 5), dict(size=4, scale_factor=2.0)),
                                          ((2, 3, 4, 5), dict(size=[4, 4, 4])),
                                          ((2, 3, 4, 5), dict(scale_factor=2.0, mode="nearest", antialias=True))])
def test_interpolate_errors_as_torch(shape, kwargs):
    x = _x(shape)
    with pytest.raises((ValueError, NotImplementedError)) as theirs:
        F.interpolate(_t(x), **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        KF.interpolate(_k(x), **kwargs)
    assert str(ours.value) == str(theirs.value)


def scripted_resample(x, size: List[int]):
    return (F.interpolate(x, size=size, mode="bilinear", align_corners=False), F.interpolate(x, scale_factor=2.0),
            F.interpolate(x, size=5, mode="bicubic", align_corners=True),
            F.interpolate(x, scale_factor=[1.5, 0.7], mode="bilinear", antialias=True),
            F.interpolate(x, scale_factor=1.3, mode="nearest-exact", recompute_scale_factor=True),
            F.pad(x, [1, 2, 2, 0], mode="reflect"), F.pad(x, [1, 1], value=1.0), F.pad(x, [2, 1, 1, 2], "replicate"),
            F.pad(x, [1, 2, 3, 1], mode="circular"), F.pixel_shuffle(F.pixel_unshuffle(x, 2), 2),
            F.unfold(x, 2), F.fold(F.unfold(x, (2, 3), padding=1), [4, 6], (2, 3), padding=1),
            F.upsample_bilinear(x, scale_factor=2.0), F.channel_shuffle(x, 3))


def test_scripted_functional_path():
    x = _x((2, 6, 4, 6))
    expected = scripted_resample(_t(x), [7, 9])
    scripted = kiln.script(scripted_resample)
    assert_same(scripted(_k(x), [7, 9]), expected, rtol=1e-5, atol=1e-5)
    graph = str(scripted.graph)
    # interpolate, unfold and fold are functions (as in torch's graph); pad and the shuffles builtins.
    assert 'prim::Constant[name="interpolate"]' in graph and "aten::pad" in graph, graph


PAD_CASES = [((2, 3, 7), [2, 1]), ((3, 7), [1, 3]), ((2, 3, 5, 7), [1, 2, 3, 0]), ((3, 5, 7), [2, 2, 1, 1]),
             ((1, 2, 3, 4, 5), [1, 1, 2, 0, 1, 2]), ((2, 3, 5, 7), [-1, 2, 1, -2])]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", PAD_CASES)
def test_pad_modes(shape, pad, mode):
    x = _x(shape)
    try:
        expected = F.pad(_t(x), pad, mode)
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises(RuntimeError) as ours:
            KF.pad(_k(x), pad, mode)
        assert str(ours.value) == str(e).split("\n")[0]
        return
    assert_same(KF.pad(_k(x), pad, mode), expected)


@pytest.mark.parametrize("name,pad", [("reflection_pad1d", [2, 1]), ("reflection_pad2d", [1, 2, 2, 0]),
                                      ("reflection_pad3d", [1, 1, 0, 2, 1, 0]), ("replication_pad1d", [3, 1]),
                                      ("replication_pad2d", [4, 0, 1, 2]), ("replication_pad3d", [1, 2, 0, 1, 2, 2])])
def test_named_pads_and_out(name, pad):
    shape = {1: (2, 3, 5), 2: (2, 3, 5, 6), 3: (1, 2, 3, 4, 5)}[len(pad) // 2]
    x = _x(shape)
    expected = getattr(TN, name)(_t(x), pad)
    assert_same(getattr(kiln, name)(_k(x), pad), expected)
    out = kiln.empty(list(expected.shape))
    getattr(kiln, name)(_k(x), pad, out=out)
    assert_same(out, expected)


def test_constant_pad_nd_and_dtypes():
    for dtype in [np.float64, np.int64, np.int32, np.uint8, np.bool_]:
        x = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
        for pad in [[1, 2], [0, 1, 2, 0], [-1, 1, 1, -1, 0, 1]]:
            assert_same(kiln.constant_pad_nd(_k(x), pad, 1), torch.constant_pad_nd(_t(x), pad, 1))
    x = _x((2, 3))
    assert_same(kiln.constant_pad_nd(_k(x), [1, 1], 2.5), torch.constant_pad_nd(_t(x), [1, 1], 2.5))
    assert_same(KF._pad_circular(_k(_x((1, 2, 5))), [2, 1]), torch.ops.aten._pad_circular(_t(_x((1, 2, 5))), [2, 1]))


@pytest.mark.parametrize("call", [
    lambda m, x: m.constant_pad_nd(x, [1, 2, 3]),
    lambda m, x: m.constant_pad_nd(x, [1] * 8),
    lambda m, x: m.reflection_pad1d(x, [5, 0]),
    lambda m, x: m.pad(x, [1, 1], "reflect", 2.0),
    lambda m, x: m.pad(x, [1, 1], "bogus"),
])
def test_pad_errors_as_torch(call):
    x = _x((2, 3, 4))
    torch_mod = type("T", (), {"constant_pad_nd": staticmethod(torch.constant_pad_nd),
                               "reflection_pad1d": staticmethod(TN.reflection_pad1d), "pad": staticmethod(TN.pad)})
    with pytest.raises(RuntimeError) as theirs:
        call(torch_mod, _t(x))
    with pytest.raises(RuntimeError) as ours:
        call(kiln, _k(x))
    assert str(ours.value) == str(theirs.value).split("\n")[0]


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_shuffles(dtype):
    x = _x((2, 8, 4, 6)).astype(dtype)
    for r in [1, 2]:
        assert_same(kiln.pixel_shuffle(_k(x), r), torch.pixel_shuffle(_t(x), r))
        assert_same(kiln.pixel_unshuffle(_k(x), r), torch.pixel_unshuffle(_t(x), r))
    assert_same(kiln.pixel_shuffle(_k(x[0]), 2), torch.pixel_shuffle(_t(x[0]), 2))
    assert_same(kiln.pixel_shuffle(_k(x.reshape(1, 2, 8, 4, 6)), 2), torch.pixel_shuffle(_t(x.reshape(1, 2, 8, 4, 6)), 2))
    for g in [1, 2, 4, 8]:
        assert_same(kiln.channel_shuffle(_k(x), g), torch.channel_shuffle(_t(x), g))
        assert_same(kiln.native_channel_shuffle(_k(x), g), torch.native_channel_shuffle(_t(x), g))
    assert_same(kiln.channel_shuffle(_k(x[:, :, :, 0]), 4), torch.channel_shuffle(_t(x[:, :, :, 0]), 4))


@pytest.mark.parametrize("call", [
    lambda m, x: m.pixel_shuffle(x, 3), lambda m, x: m.pixel_shuffle(x[0, 0], 2), lambda m, x: m.pixel_shuffle(x, 0),
    lambda m, x: m.pixel_unshuffle(x, 4), lambda m, x: m.pixel_unshuffle(x, 0),
    lambda m, x: m.channel_shuffle(x, 3), lambda m, x: m.channel_shuffle(x, 0),
    lambda m, x: m.channel_shuffle(x[0, 0], 2),
])
def test_shuffle_errors_as_torch(call):
    x = _x((2, 8, 4, 6))
    with pytest.raises(RuntimeError) as theirs:
        call(torch, _t(x))
    with pytest.raises(RuntimeError) as ours:
        call(kiln, _k(x))
    assert str(ours.value) == str(theirs.value)


IM2COL = [((2, 3, 5, 7), [2, 3], [1, 2], [1, 0], [2, 1]), ((3, 5, 7), [3, 3], [1, 1], [1, 1], [1, 1]),
          ((1, 2, 6, 6), [2, 2], [2, 2], [2, 1], [3, 2])]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,k,d,p,s", IM2COL)
def test_im2col_col2im(shape, k, d, p, s, dtype):
    x = _x(shape, dtype)
    cols = TN.im2col(_t(x), k, d, p, s)
    assert_same(kiln.im2col(_k(x), k, d, p, s), cols)
    c = cols.numpy()
    assert_same(kiln.col2im(_k(c), list(shape[-2:]), k, d, p, s), TN.col2im(_t(c), list(shape[-2:]), k, d, p, s))
    assert_same(KF.unfold(_k(x), k, d, p, s), F.unfold(_t(x), k, d, p, s))
    assert_same(KF.fold(_k(c), tuple(shape[-2:]), k, d, p, s), F.fold(_t(c), tuple(shape[-2:]), k, d, p, s))


@pytest.mark.parametrize("call", [
    lambda m, x: m.im2col(x, [9, 9], [1, 1], [0, 0], [1, 1]),
    lambda m, x: m.im2col(x, [0, 2], [1, 1], [0, 0], [1, 1]),
    lambda m, x: m.col2im(x[0], [4, 6], [2, 2], [1, 1], [0, 0], [1, 1]),
])
def test_im2col_errors_as_torch(call):
    x = _x((2, 3, 4, 6))
    with pytest.raises(RuntimeError) as theirs:
        call(TN, _t(x))
    with pytest.raises(RuntimeError) as ours:
        call(KF, _k(x))
    assert str(ours.value) == str(theirs.value)


def test_shape_propagation():
    unit = kiln.compile("def f(x):\n    return (torch.upsample_nearest2d(x, [6, 8]), "
                        "torch.constant_pad_nd(x, [1, 2]), torch.reflection_pad2d(x, [1, 1, 2, 0]), "
                        "torch.pixel_shuffle(x, 1))\n")
    graph = str(unit.f.graph_for(kiln.ones([1, 2, 3, 4])))
    assert "Float(1, 2, 6, 8" in graph and "Float(1, 2, 3, 7" in graph and "Float(1, 2, 5, 6" in graph, graph


LAYERS = [("Upsample", (None, 2.0)), ("Upsample", ((7, 9), None, "bilinear")), ("Upsample", (5, None, "bicubic", True)),
          ("Upsample", (None, (1.5, 2.0), "bilinear", False)), ("UpsamplingNearest2d", (None, 2)),
          ("UpsamplingBilinear2d", ((3, 5),)), ("ConstantPad2d", ((1, 2, 0, 1), 2.5)), ("ZeroPad2d", (2,)),
          ("ReflectionPad2d", (2,)), ("ReplicationPad2d", ((1, 0, 2, 3),)), ("ConstantPad1d", (2, 1.0)),
          ("ConstantPad3d", (1, 0.5)), ("ReplicationPad3d", (1,)), ("ReflectionPad3d", (1,)), ("PixelShuffle", (2,)),
          ("PixelUnshuffle", (2,)), ("ChannelShuffle", (2,)), ("Unfold", (2,)), ("Unfold", ((2, 3), 1, 1, 2)),
          ("Flatten", ()), ("Flatten", (0, 2)), ("Unflatten", (1, (2, 2)))]


@pytest.mark.parametrize("name,args", LAYERS, ids=[f"{n}{a}" for n, a in LAYERS])
def test_layers_match_torch(name, args):
    x = _x((2, 4, 6, 8))
    km, tm = getattr(knn, name)(*args), getattr(tnn, name)(*args)
    assert repr(km) == repr(tm)
    expected = tm(_t(x))
    assert_same(km(_k(x)), expected, rtol=1e-5, atol=1e-5)
    assert_same(kiln.script(km)(_k(x)), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,args,shape", [("ReflectionPad1d", ((1, 2),), (2, 3, 5)),
                                             ("ReplicationPad1d", (2,), (2, 3, 5)),
                                             ("Fold", ((4, 5), 2), (2, 12, 12))])
def test_layers_other_ranks(name, args, shape):
    x = _x(shape)
    km, tm = getattr(knn, name)(*args), getattr(tnn, name)(*args)
    assert repr(km) == repr(tm)
    expected = tm(_t(x))
    assert_same(km(_k(x)), expected)
    assert_same(kiln.script(km)(_k(x)), expected)


class Layout(tnn.Module):
    def __init__(self):
        super().__init__()
        self.pad = tnn.ReflectionPad2d(1)
        self.rep = tnn.ReplicationPad2d((1, 0, 2, 1))
        self.zero = tnn.ZeroPad2d(1)
        self.ps = tnn.PixelShuffle(2)
        self.pu = tnn.PixelUnshuffle(2)
        self.unfold = tnn.Unfold(2)
        self.fold = tnn.Fold((4, 6), 2)
        self.cs = tnn.ChannelShuffle(2)

    def forward(self, x):
        return (self.pad(x), self.rep(x), self.zero(x), self.ps(x), self.pu(x), self.fold(self.unfold(x)), self.cs(x),
                F.pad(x, [1, 1, 2, 0], mode="circular"), F.pad(x, [1, 1], value=0.5))


class Resize(tnn.Module):
    def __init__(self):
        super().__init__()
        self.up = tnn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.up2 = tnn.Upsample(size=(5, 7), mode="nearest")

    def forward(self, x):
        return (self.up(x), self.up2(x), F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=True),
                F.interpolate(x, size=[3, 3], mode="bilinear", antialias=True))


def _save_and_load(module):
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(module.eval()), buf)
    return torch.jit.load(io.BytesIO(buf.getvalue())), kiln.load(io.BytesIO(buf.getvalue()))


def test_torch_saved_layout_module_loads():
    theirs, ours = _save_and_load(Layout())
    x = _x((2, 4, 4, 6))
    assert_same(ours(_k(x)), theirs(_t(x)))


def test_torch_saved_interpolate_module_loads():
    theirs, ours = _save_and_load(Resize())
    x = _x((2, 4, 4, 6))
    assert_same(ours(_k(x)), theirs(_t(x)), rtol=1e-5, atol=1e-5)
