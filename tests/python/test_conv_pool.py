"""Convolution and pooling against torch 1.13: every overload eagerly
(float32 and float64, groups, dilation, stride, padding='same', transposed
with output_padding, non-contiguous and unbatched inputs, ceil_mode,
indices), in scripts with shape propagation, in a torch-saved scripted
module loaded by kiln, and as kiln.nn layers with torch's state dicts; bad
arguments raise torch's messages."""
import io

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same, check_both, convert

RTOL = {np.float32: 1e-4, np.float64: 1e-10}
ATOL = {np.float32: 1e-5, np.float64: 1e-10}


def _array(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _check(fn, *args, dtype=np.float32, **kwargs):
    check_both(fn, *args, rtol=RTOL[dtype], atol=ATOL[dtype], **kwargs)


# ---- convolution ----------------------------------------------------------------------------------

# (input shape, weight shape, kwargs) for conv1d/2d/3d.
CONV_CASES = [
    ((2, 4, 11), (6, 4, 3), {}),
    ((2, 4, 11), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    ((1, 3, 12), (4, 3, 4), dict(padding="same", dilation=2)),
    ((1, 3, 12), (4, 3, 4), dict(padding="valid", stride=3)),
    ((3, 10), (5, 3, 3), dict(padding=2)),  # unbatched
    ((2, 4, 9, 8), (6, 4, 3, 3), dict(stride=(2, 1), padding=(1, 2))),
    ((1, 6, 9, 9), (6, 1, 3, 3), dict(padding=1, groups=6)),  # depthwise
    ((2, 4, 10, 9), (8, 2, 3, 2), dict(dilation=(2, 3), groups=2)),
    ((1, 4, 8, 7), (5, 4, 4, 3), dict(padding="same")),  # asymmetric 'same'
    ((1, 4, 8, 7), (5, 4, 2, 2), dict(padding="same", dilation=3)),
    ((4, 7, 7), (3, 4, 1, 1), {}),  # unbatched 1x1
    ((2, 3, 5, 6, 7), (4, 3, 3, 2, 3), dict(stride=(1, 2, 1), padding=1)),
    ((1, 4, 5, 5, 5), (4, 2, 2, 2, 2), dict(padding="same", groups=2, dilation=2)),
]


def _conv_fn(rank):
    return {3: "conv1d", 4: "conv2d", 5: "conv3d"}[rank]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv_matches_torch(case, bias, dtype):
    x_shape, w_shape, kwargs = CONV_CASES[case]
    name = _conv_fn(len(w_shape))
    x, w = _array(x_shape, dtype, 1), _array(w_shape, dtype, 2)
    b = _array((w_shape[0],), dtype, 3) if bias else None
    _check(lambda lib, x, w, b: getattr(lib.nn.functional, name)(x, w, b, **kwargs), x, w, b, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_non_contiguous_input_and_weight(dtype):
    x = _array((2, 9, 4, 8), dtype)  # used as (2, 4, 8, 9) through a transpose
    w = _array((3, 3, 6, 4), dtype, 1)

    def f(lib, x, w):
        return lib.nn.functional.conv2d(x.permute(0, 2, 3, 1), w.permute(2, 3, 0, 1), None, 1, 1)
    _check(f, x, w, dtype=dtype)


def test_conv_integer_dtype():
    x = np.arange(2 * 3 * 6 * 6, dtype=np.int64).reshape(2, 3, 6, 6) % 7
    w = np.arange(4 * 3 * 3 * 3, dtype=np.int64).reshape(4, 3, 3, 3) % 5 - 2
    check_both(lambda lib, x, w: lib.nn.functional.conv2d(x, w, None, 2, 1), x, w)


def test_conv_empty_batch():
    check_both(lambda lib, x, w: lib.nn.functional.conv2d(x, w), _array((0, 3, 5, 5)), _array((2, 3, 3, 3)))


# (input shape, weight shape, kwargs) for conv_transpose1d/2d/3d.
TRANSPOSE_CASES = [
    ((2, 4, 7), (4, 3, 3), {}),
    ((2, 4, 7), (4, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((3, 6), (3, 2, 4), dict(stride=3, dilation=2, output_padding=2)),  # unbatched
    ((2, 4, 5, 6), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1, groups=2)),
    ((1, 4, 5, 5), (4, 2, 3, 2), dict(stride=(2, 3), padding=(0, 1), output_padding=(1, 2), dilation=(1, 2))),
    ((1, 6, 4, 4), (6, 1, 3, 3), dict(groups=6, stride=2)),
    ((1, 2, 3, 4, 3), (2, 3, 2, 3, 2), dict(stride=2, padding=(0, 1, 0), output_padding=(1, 0, 1))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", range(len(TRANSPOSE_CASES)))
def test_conv_transpose_matches_torch(case, bias, dtype):
    x_shape, w_shape, kwargs = TRANSPOSE_CASES[case]
    name = {3: "conv_transpose1d", 4: "conv_transpose2d", 5: "conv_transpose3d"}[len(w_shape)]
    groups = kwargs.get("groups", 1)
    x, w = _array(x_shape, dtype, 1), _array(w_shape, dtype, 2)
    b = _array((w_shape[1] * groups,), dtype, 3) if bias else None
    _check(lambda lib, x, w, b: getattr(lib.nn.functional, name)(x, w, b, **kwargs), x, w, b, dtype=dtype)


CONVOLUTION_SOURCE = """
def convolution(x, w, b: Optional[Tensor], transposed: bool):
    return torch.convolution(x, w, b, [2], [1], [1], transposed, [1], 1)

def underscore(x, w, b: Optional[Tensor], transposed: bool):
    return torch._convolution(x, w, b, [2, 2], [1, 1], [1, 1], transposed, [1, 1], 1, False, False, True, True)

def deprecated(x, w, b: Optional[Tensor], transposed: bool):
    return torch._convolution(x, w, b, [2, 2], [1, 1], [1, 1], transposed, [1, 1], 1, False, False, True)

def mode(x, w, b: Optional[Tensor], transposed: bool):
    return torch._convolution_mode(x, w, b, [1], "same", [2], 1)
"""


@pytest.mark.parametrize("fn", ["convolution", "underscore", "deprecated", "mode"])
@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_overloads_in_scripts(fn, transposed):
    if fn == "mode" and transposed:
        return
    x, w, b = _array((2, 4, 7, 6)), _array((4, 4, 3, 3), seed=1), _array((4,), seed=2)
    theirs = getattr(torch.jit.CompilationUnit(CONVOLUTION_SOURCE), fn)
    ours = getattr(kiln.compile(CONVOLUTION_SOURCE), fn)
    for bias in (b, None):
        t = theirs(*convert([x, w, bias], "torch"), transposed)
        k = ours(*convert([x, w, bias], "kiln"), transposed)
        assert_same(k, t, rtol=1e-4, atol=1e-5)


def test_out_forms():
    x = _array((2, 3, 6, 6))
    t = torch.from_numpy(x.copy())
    k = kiln.from_numpy(x.copy())

    def out(name, *args, count=1):
        outs = {"out": kiln.empty(0)}
        if count == 2:
            outs["indices"] = kiln.empty(0, dtype=kiln.int64)
        return kiln._C._overload(name)(k, *args, **outs)
    assert_same(out("aten::max_pool2d_with_indices.out", [2, 2], [], [0, 0], [1, 1], False, count=2),
                torch.nn.functional.max_pool2d(t, 2, return_indices=True))
    assert_same(out("aten::max_pool3d_with_indices.out", [2, 2, 2], [], [0, 0, 0], [1, 1, 1], False, count=2),
                torch.nn.functional.max_pool3d(t, 2, return_indices=True))
    assert_same(out("aten::avg_pool2d.out", [2, 2], [], [0, 0], False, True, None),
                torch.nn.functional.avg_pool2d(t, 2))
    assert_same(out("aten::avg_pool3d.out", [2, 2, 2], [], [0, 0, 0], False, True, None),
                torch.nn.functional.avg_pool3d(t, 2))
    for name in ("adaptive_avg_pool2d", "_adaptive_avg_pool2d"):
        assert_same(out(f"aten::{name}.out", [2, 3]), torch.nn.functional.adaptive_avg_pool2d(t, (2, 3)))
    for name in ("adaptive_avg_pool3d", "_adaptive_avg_pool3d"):
        assert_same(out(f"aten::{name}.out", [2, 3, 2]), torch.nn.functional.adaptive_avg_pool3d(t, (2, 3, 2)))
    assert_same(out("aten::adaptive_max_pool2d.out", [2, 3], count=2),
                torch.nn.functional.adaptive_max_pool2d(t, (2, 3), return_indices=True))
    assert_same(out("aten::adaptive_max_pool3d.out", [2, 3, 2], count=2),
                torch.nn.functional.adaptive_max_pool3d(t, (2, 3, 2), return_indices=True))
    w = _array((4, 3, 3, 3), seed=1)
    expected = torch.nn.functional.conv2d(t, torch.from_numpy(w), None, 1, 1)
    for name, extra in (("aten::convolution.out", ()), ("aten::_convolution.out", (False, False, True, True))):
        result = kiln._C._overload(name)(k, kiln.from_numpy(w), None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                          *extra, out=kiln.empty(0))
        assert_same(result, expected, rtol=1e-4, atol=1e-5)


# ---- pooling ----------------------------------------------------------------------------------------

# (input shape, kwargs) for max_pool and avg_pool of the input's spatial rank.
MAX_POOL_CASES = [
    (1, (2, 3, 11), dict(kernel_size=3)),
    (1, (2, 3, 11), dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
    (1, (3, 10), dict(kernel_size=4, stride=3, ceil_mode=True)),
    (2, (2, 3, 9, 10), dict(kernel_size=3, stride=2, padding=1)),
    (2, (1, 2, 9, 10), dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), dilation=(2, 1), ceil_mode=True)),
    (2, (3, 7, 7), dict(kernel_size=2, ceil_mode=True)),  # unbatched
    (3, (1, 2, 5, 6, 7), dict(kernel_size=2, stride=(1, 2, 2), padding=1, ceil_mode=True)),
    (2, (2, 4, 6, 5), dict(kernel_size=3, stride=1, padding=1)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(MAX_POOL_CASES)))
def test_max_pool_with_and_without_indices(case, dtype):
    n, shape, kwargs = MAX_POOL_CASES[case]
    x = _array(shape, dtype)
    name = f"max_pool{n}d"
    _check(lambda lib, x: getattr(lib.nn.functional, name)(x, **kwargs), x, dtype=dtype)
    _check(lambda lib, x: getattr(lib.nn.functional, name)(x, return_indices=True, **kwargs), x, dtype=dtype)


def test_max_pool_propagates_nan_and_ties_pick_the_first():
    x = np.zeros((1, 1, 4, 4), dtype=np.float32)
    x[0, 0, 1, 2] = np.nan
    x[0, 0, 3, 3] = -np.inf
    for name in ("max_pool2d", "adaptive_max_pool2d"):
        size = 2
        check_both(lambda lib, x: getattr(lib.nn.functional, name)(x, size, return_indices=True), x)



@pytest.mark.parametrize("kwargs", [dict(kernel_size=4), dict(kernel_size=3, stride=2, padding=1, dilation=2),
                                    dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)])
def test_max_pool1d_nan_and_infinities(kwargs):
    # max_pool1d without indices takes a branch-free path; NaN still wins its window.
    x = _array((2, 3, 23))
    x[0, 0, 5] = np.nan
    x[1, 2, 0] = np.nan
    x[0, 1, 7:11] = -np.inf
    x[1, 1, 3] = np.inf
    check_both(lambda lib, x: lib.nn.functional.max_pool1d(x, **kwargs), x)
    check_both(lambda lib, x: lib.nn.functional.max_pool1d(x, return_indices=True, **kwargs), x)
    check_both(lambda lib, x: lib.nn.functional.max_pool2d(x, (1, 3)), x[None])

AVG_POOL_CASES = [
    (1, (2, 3, 11), dict(kernel_size=3)),
    (1, (2, 3, 11), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, count_include_pad=False)),
    (1, (3, 11), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
    (2, (2, 3, 9, 10), dict(kernel_size=3, stride=2, padding=1)),
    (2, (2, 3, 9, 10), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, (2, 3, 9, 10), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    (2, (1, 2, 8, 9), dict(kernel_size=(2, 4), stride=(3, 2), padding=(1, 2), divisor_override=5)),
    (2, (3, 7, 7), dict(kernel_size=2)),
    (3, (1, 2, 5, 6, 7), dict(kernel_size=2, stride=(1, 2, 2), padding=1, ceil_mode=True)),
    (3, (1, 2, 5, 6, 7), dict(kernel_size=3, padding=1, count_include_pad=False)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(AVG_POOL_CASES)))
def test_avg_pool(case, dtype):
    n, shape, kwargs = AVG_POOL_CASES[case]
    _check(lambda lib, x: getattr(lib.nn.functional, f"avg_pool{n}d")(x, **kwargs), _array(shape, dtype), dtype=dtype)


def test_avg_pool_integers():
    x = np.arange(2 * 3 * 7 * 7, dtype=np.int64).reshape(2, 3, 7, 7) % 11 - 5
    check_both(lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1), x)


ADAPTIVE_CASES = [
    (1, (2, 3, 10), 4),
    (1, (3, 10), 3),
    (2, (2, 3, 9, 10), (4, 3)),
    (2, (2, 3, 7, 7), 1),
    (2, (3, 5, 5), (7, 2)),  # larger than the input
    (3, (1, 2, 5, 6, 7), (2, 3, 4)),
    (3, (2, 5, 6, 7), 3),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(ADAPTIVE_CASES)))
def test_adaptive_pools(case, dtype):
    n, shape, size = ADAPTIVE_CASES[case]
    x = _array(shape, dtype)
    _check(lambda lib, x: getattr(lib.nn.functional, f"adaptive_avg_pool{n}d")(x, size), x, dtype=dtype)
    _check(lambda lib, x: getattr(lib.nn.functional, f"adaptive_max_pool{n}d")(x, size, return_indices=True), x,
           dtype=dtype)


def test_adaptive_avg_pool_none_keeps_the_input_size():
    check_both(lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (None, 3)), _array((1, 2, 5, 7)))


def test_underscore_adaptive_avg_pool():
    x = _array((2, 3, 9, 10))
    for name, size in (("_adaptive_avg_pool2d", [4, 3]), ("_adaptive_avg_pool3d", [2, 4, 3])):
        expected = getattr(torch, name)(torch.from_numpy(x.copy()), size)
        assert_same(kiln._C._overload(f"aten::{name}")(kiln.from_numpy(x.copy()), size), expected)


# ---- scripts, shapes and archives ----------------------------------------------------------------

SCRIPT_SOURCE = """
def net(x, w, b, wt):
    y = torch.nn.functional.conv2d(x, w, b, 1, 1)
    y = torch.relu(y)
    p = torch.max_pool2d(y, [3, 3], [2, 2], [1, 1], [1, 1], True)
    v, i = torch.nn.functional.max_pool2d_with_indices(y, [2, 2])
    a = torch.nn.functional.avg_pool2d(p, [2, 2], [1, 1], [1, 1], False, False)
    t = torch.conv_transpose2d(a, wt, None, [2, 2], [1, 1], [1, 1])
    q = torch.nn.functional.conv2d(x, w, None, 1, "same")
    return torch.nn.functional.adaptive_avg_pool2d(t, [1, 1]), torch.adaptive_max_pool1d(p.flatten(2), [3]), i, q
"""


def test_script_matches_torch_and_types_shapes():
    args = [_array((2, 3, 10, 10)), _array((8, 3, 3, 3), seed=1), _array((8,), seed=2), _array((8, 4, 3, 3), seed=3)]
    theirs = torch.jit.CompilationUnit(SCRIPT_SOURCE).net(*convert(args, "torch"))
    unit = kiln.compile(SCRIPT_SOURCE)
    ours = unit.net(*convert(args, "kiln"))
    assert_same(ours, theirs, rtol=1e-4, atol=1e-5)
    graph = str(unit.net.graph_for(*convert(args, "kiln")))
    for sizes in ("Float(2, 8, 10, 10", "Float(2, 8, 6, 6", "Long(2, 8, 5, 5", "Float(2, 8, 7, 7",
                  "Float(2, 4, 14, 14", "Float(2, 4, 1, 1", "Float(2, 8, 3", "Long(2, 8, 3"):
        assert sizes in graph, (sizes, graph)


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.depthwise = torch.nn.Conv2d(8, 8, 3, padding="same", groups=8, bias=False)
        self.pool = torch.nn.MaxPool2d(2, ceil_mode=True)
        self.up = torch.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
        self.avg = torch.nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.head = torch.nn.AdaptiveAvgPool2d(1)
        self.peak = torch.nn.AdaptiveMaxPool2d((2, 3), return_indices=True)
        self.line = torch.nn.Conv1d(4, 2, 3, dilation=2)
        self.volume = torch.nn.Conv3d(1, 2, 2)

    def forward(self, x):
        y = self.pool(torch.relu(self.depthwise(self.conv(x))))
        z = self.avg(self.up(y))
        values, indices = self.peak(z)
        line = self.line(z.flatten(2))
        volume = self.volume(z.unsqueeze(1))
        return self.head(z), values, indices, line, volume


class KilnNet(kiln.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = kiln.nn.Conv2d(3, 8, 3, padding=1)
        self.depthwise = kiln.nn.Conv2d(8, 8, 3, padding="same", groups=8, bias=False)
        self.pool = kiln.nn.MaxPool2d(2, ceil_mode=True)
        self.up = kiln.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
        self.avg = kiln.nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.head = kiln.nn.AdaptiveAvgPool2d(1)
        self.peak = kiln.nn.AdaptiveMaxPool2d((2, 3), return_indices=True)
        self.line = kiln.nn.Conv1d(4, 2, 3, dilation=2)
        self.volume = kiln.nn.Conv3d(1, 2, 2)

    def forward(self, x):
        y = self.pool(kiln.relu(self.depthwise(self.conv(x))))
        z = self.avg(self.up(y))
        values, indices = self.peak(z)
        line = self.line(z.flatten(2))
        volume = self.volume(z.unsqueeze(1))
        return self.head(z), values, indices, line, volume


def _kiln_state(module):
    return {k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in module.state_dict().items()}


def test_torch_saved_scripted_module_runs_in_kiln():
    torch.manual_seed(0)
    module = torch.jit.script(TorchNet().eval())
    buffer = io.BytesIO()
    torch.jit.save(module, buffer)
    loaded = kiln.load(io.BytesIO(buffer.getvalue()))
    for shape in ((1, 3, 9, 9), (2, 3, 8, 10)):
        x = _array(shape)
        assert_same(loaded(kiln.from_numpy(x.copy())), module(torch.from_numpy(x.copy())), rtol=1e-4, atol=1e-5)


def test_kiln_nn_layers_with_torch_state_dict():
    torch.manual_seed(0)
    theirs = TorchNet().eval()
    ours = KilnNet()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for name, value in ours.state_dict().items():
        assert tuple(value.shape) == tuple(theirs.state_dict()[name].shape)
    ours.load_state_dict(_kiln_state(theirs))
    assert repr(ours).replace("KilnNet", "TorchNet") == repr(theirs)
    scripted = kiln.script(ours)
    x = _array((2, 3, 9, 9))
    expected = theirs(torch.from_numpy(x.copy()))
    assert_same(ours(kiln.from_numpy(x.copy())), expected, rtol=1e-4, atol=1e-5)
    assert_same(scripted(kiln.from_numpy(x.copy())), expected, rtol=1e-4, atol=1e-5)


LAYERS = [
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1, bias=False), (2, 4, 9)),
    ("Conv2d", (4, 6, (3, 2)), dict(dilation=2, groups=2, padding="same"), (1, 4, 8, 8)),
    ("Conv3d", (2, 3, 2), dict(padding="valid"), (1, 2, 4, 5, 4)),
    ("ConvTranspose1d", (4, 6, 3), dict(stride=2, output_padding=1, groups=2), (2, 4, 5)),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, padding=1, dilation=2, bias=False), (1, 4, 5, 5)),
    ("ConvTranspose3d", (2, 2, 2), dict(stride=2), (1, 2, 3, 3, 3)),
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 10)),
    ("MaxPool2d", (3,), dict(stride=2, return_indices=True, ceil_mode=True), (2, 3, 10, 9)),
    ("MaxPool3d", (2,), dict(dilation=2), (1, 2, 6, 6, 6)),
    ("AvgPool1d", (3,), dict(stride=2, padding=1), (2, 3, 10)),
    ("AvgPool2d", (3,), dict(ceil_mode=True, divisor_override=2), (2, 3, 10, 9)),
    ("AvgPool3d", (2,), dict(count_include_pad=False, padding=1), (1, 2, 5, 5, 5)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveAvgPool2d", ((3, 2),), {}, (2, 3, 10, 9)),
    ("AdaptiveAvgPool3d", (2,), {}, (1, 2, 5, 5, 5)),
    ("AdaptiveMaxPool1d", (4,), dict(return_indices=True), (2, 3, 10)),
    ("AdaptiveMaxPool2d", ((3, 2),), {}, (2, 3, 10, 9)),
    ("AdaptiveMaxPool3d", (2,), {}, (1, 2, 5, 5, 5)),
]


@pytest.mark.parametrize("layer", LAYERS, ids=[layer[0] for layer in LAYERS])
def test_layer_matches_torch(layer):
    name, args, kwargs, shape = layer
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(kiln.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(_kiln_state(theirs))
    x = _array(shape)
    expected = theirs(torch.from_numpy(x.copy()))
    assert_same(ours(kiln.from_numpy(x.copy())), expected, rtol=1e-4, atol=1e-5)
    assert_same(kiln.script(ours)(kiln.from_numpy(x.copy())), expected, rtol=1e-4, atol=1e-5)


def test_conv_default_init_has_torch_bounds():
    kiln.manual_seed(0)
    conv = kiln.nn.Conv2d(4, 8, 3)
    bound = 1 / np.sqrt(4 * 9)
    w, b = conv.weight.numpy(), conv.bias.numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(b).max() <= bound
    transposed = kiln.nn.ConvTranspose2d(4, 8, 3, groups=2)
    assert tuple(transposed.weight.shape) == (4, 4, 3, 3)
    assert np.abs(transposed.weight.numpy()).max() <= 1 / np.sqrt(4 * 9)


def test_conv_transpose_output_size():
    theirs = torch.nn.ConvTranspose2d(3, 2, 3, stride=2)
    ours = kiln.nn.ConvTranspose2d(3, 2, 3, stride=2)
    ours.load_state_dict(_kiln_state(theirs))
    x = _array((1, 3, 4, 4))
    expected = theirs(torch.from_numpy(x.copy()), output_size=[10, 9])
    assert_same(ours(kiln.from_numpy(x.copy()), output_size=[10, 9]), expected, rtol=1e-4, atol=1e-5)
    assert_same(kiln.script(ours)(kiln.from_numpy(x.copy()), [10, 9]), expected, rtol=1e-4, atol=1e-5)


def test_layer_constructor_errors_match_torch():
    for args, kwargs in [((4, 6, 3), dict(groups=4)), ((4, 6, 3), dict(groups=0)),
                         ((4, 6, 3), dict(padding="full")), ((4, 6, 3), dict(padding="same", stride=2)),
                         ((4, 6, 3), dict(padding_mode="mirror"))]:
        with pytest.raises(ValueError) as theirs:
            torch.nn.Conv2d(*args, **kwargs)
        with pytest.raises(ValueError) as ours:
            kiln.nn.Conv2d(*args, **kwargs)
        assert str(ours.value) == str(theirs.value)


# ---- errors ---------------------------------------------------------------------------------------

ERRORS = [
    (lambda lib, x, w: lib.nn.functional.conv2d(x[0, 0], w), "Expected 3D (unbatched) or 4D (batched) input"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x, w[:, :3]), "to have 3 channels, but got 4 channels instead"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=-1), "negative padding is not supported"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=0), "non-positive stride is not supported"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x, w, dilation=0), "non-positive dilation is not supported"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x, w, groups=0), "non-positive groups is not supported"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x, w.repeat(1, 1, 4, 4)), "Kernel size can't be greater"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x, w[:, :2], groups=4), "expected weight to be divisible by 4"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x, w, w[0, 0, 0]), "expected bias to be 1-dimensional"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="same", stride=2), "not supported for strided"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="full"), "Invalid padding string: 'full'"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x.double(), w), "expected scalar type Double but found Float"),
    (lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=[1, 1, 1]), "expected stride to be a single integer"),
    (lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w[:4], stride=2, output_padding=2),
     "output padding must be smaller than either stride or dilation"),
    (lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w), "expected input[2, 4, 6, 6] to have 6 channels"),
    (lambda lib, x, w: lib.nn.functional.conv_transpose2d(x[:, :, :1, :1], w[:4], padding=3),
     "Output size is too small"),
    (lambda lib, x, w: lib.nn.functional.max_pool2d(x[0, 0], 2), "3D or 4D"),
    (lambda lib, x, w: lib.nn.functional.max_pool2d(x, 2, padding=2), "pad should be at most half of kernel size"),
    (lambda lib, x, w: lib.nn.functional.max_pool2d(x, 2, padding=-1), "pad must be non-negative"),
    (lambda lib, x, w: lib.nn.functional.max_pool2d(x, 7), "Output size is too small"),
    (lambda lib, x, w: lib.nn.functional.max_pool2d(x, 2, stride=0), "stride should not be zero"),
    (lambda lib, x, w: lib.nn.functional.max_pool2d(x, 2, dilation=0), "dilation should be greater than zero"),
    (lambda lib, x, w: lib.nn.functional.max_pool2d(x, [2, 2, 2]), "kernel_size must either be a single int"),
    (lambda lib, x, w: lib.nn.functional.max_pool2d(x.long(), 2), "not implemented for 'Long'"),
    (lambda lib, x, w: lib.nn.functional.avg_pool2d(x, 7), "Output size is too small"),
    (lambda lib, x, w: lib.nn.functional.avg_pool2d(x, 2, divisor_override=0), "divisor must be not zero"),
    (lambda lib, x, w: lib.nn.functional.avg_pool1d(x[0, 0, 0], 2), "Expected 2 to 3 dimensions"),
    (lambda lib, x, w: lib.nn.functional.adaptive_avg_pool2d(x[0, 0], 2), "Expected 3D or 4D tensor"),
    (lambda lib, x, w: lib.nn.functional.adaptive_avg_pool2d(x, -1), "must be greater than or equal to 0"),
    (lambda lib, x, w: lib.nn.functional.adaptive_max_pool2d(x[:, :0], 2), "non-zero size for non-batch"),
    (lambda lib, x, w: lib.nn.functional.adaptive_avg_pool3d(x[0, 0], 2), "Expected 4D or 5D tensor"),
    (lambda lib, x, w: lib.nn.functional.max_pool3d(x, 2, padding=-1), "pad must be non-negative"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_bad_arguments_raise_torchs_message(index):
    fn, message = ERRORS[index]
    x, w = _array((2, 4, 6, 6)), _array((6, 4, 3, 3), seed=1)
    with pytest.raises(Exception) as theirs:
        fn(torch, torch.from_numpy(x), torch.from_numpy(w))
    assert message in str(theirs.value)
    with pytest.raises(RuntimeError) as ours:
        fn(kiln, kiln.from_numpy(x), kiln.from_numpy(w))
    assert message in str(ours.value)


def test_torch_traced_module_runs_in_kiln():
    """Tracing records aten::_convolution and the pooling ops as torch runs them."""
    torch.manual_seed(0)
    traced = torch.jit.trace(TorchNet().eval(), torch.ones(1, 3, 9, 9))
    buffer = io.BytesIO()
    torch.jit.save(traced, buffer)
    loaded = kiln.load(io.BytesIO(buffer.getvalue()))
    x = _array((1, 3, 9, 9))
    assert_same(loaded(kiln.from_numpy(x.copy())), traced(torch.from_numpy(x.copy())), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv_padding_modes_pad_with_f_pad(mode):
    theirs = torch.nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode=mode)
    ours = kiln.nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode=mode)
    assert repr(ours) == repr(theirs)
    ours.load_state_dict(_kiln_state(theirs))
    x = _array((2, 3, 6, 7))
    expected = theirs(torch.from_numpy(x.copy()))
    assert_same(ours(kiln.from_numpy(x.copy())), expected, rtol=1e-4, atol=1e-5)
    assert_same(kiln.script(ours)(kiln.from_numpy(x.copy())), expected, rtol=1e-4, atol=1e-5)
