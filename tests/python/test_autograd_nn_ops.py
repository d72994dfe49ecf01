"""Eager gradients of the neural-network operators against torch 1.13:
convolutions (oneDNN backward), pools, batch/layer/group/instance norm,
embedding, dropout, the activations, the recurrent networks and their cells;
each program on contiguous and non-contiguous inputs, and a float64
finite-difference gradcheck of kiln's own gradients. Then whole blocks: a
ResNet-like conv-bn-relu-pool stack and an nn.LSTM give torch's parameter
gradients for the same weights."""
import numpy as np
import pytest
import torch

import kiln
from autograd_check import arrays, assert_gradients_match_torch, away_from_kinks, gradcheck

# torch warns that padding="same" with an even kernel pads a copy of the input (kiln does the same).
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")


def F(lib):
    return lib.nn.functional


def _bn_train(lib, x, w, b):
    return F(lib).batch_norm(x, lib.zeros(3), lib.ones(3), w, b, training=True, momentum=0.1, eps=1e-5)


def _bn_eval(lib, x, w, b):
    mean = lib.from_numpy(np.array([0.1, -0.2, 0.3], dtype=np.float32))
    var = lib.from_numpy(np.array([0.5, 1.5, 2.0], dtype=np.float32))
    return F(lib).batch_norm(x, mean.to(x.dtype), var.to(x.dtype), w, b, training=False)


def _indices(lib):
    return lib.from_numpy(np.array([[1, 2, 4], [4, 3, 1]]))


def _bag_indices(lib):
    return lib.from_numpy(np.array([1, 2, 4, 5, 4, 3, 2]))


def _bag_offsets(lib, last=False):
    return lib.from_numpy(np.array([0, 3, 3, 5] + ([7] if last else [])))


def _softmax_mask(lib):
    return lib.from_numpy(np.array([[[True, False, False], [False, False, True], [False, False, False],
                                      [True, True, False]]] * 2))


def _lstm(lib, x, h, c, wi, wh, bi, bh, wi2, wh2, bi2, bh2):
    return lib.lstm(x, [h, c], [wi, wh, bi, bh, wi2, wh2, bi2, bh2], True, 2, 0.0, True, False, False)


def _gru(lib, x, h, wi, wh, bi, bh, wi2, wh2, bi2, bh2):
    # bidirectional, batch first
    return lib.gru(x, h, [wi, wh, bi, bh, wi2, wh2, bi2, bh2], True, 1, 0.0, True, True, True)


H, I, B, T = 3, 2, 2, 3

# name: (function of (lib, *inputs), input shapes)
PROGRAMS = {
    "conv2d": (lambda lib, x, w, b: F(lib).conv2d(x, w, b, stride=2, padding=1), [(2, 2, 5, 5), (3, 2, 3, 3), (3,)]),
    "conv2d_groups_dilation": (lambda lib, x, w: F(lib).conv2d(x, w, None, 1, 1, 2, 2), [(1, 4, 6, 6), (4, 2, 2, 2)]),
    "conv2d_unbatched": (lambda lib, x, w: F(lib).conv2d(x, w, padding=1), [(2, 4, 4), (3, 2, 3, 3)]),
    "conv2d_padding_same": (lambda lib, x, w, b: F(lib).conv2d(x, w, b, padding="same", dilation=(1, 2)),
                            [(1, 2, 5, 6), (3, 2, 2, 3), (3,)]),
    "conv1d_padding_same_unbatched": (lambda lib, x, w: F(lib).conv1d(x, w, padding="same"), [(2, 7), (3, 2, 4)]),
    "conv2d_padding_valid": (lambda lib, x, w: F(lib).conv2d(x, w, padding="valid"), [(1, 2, 5, 5), (3, 2, 3, 3)]),
    "conv1d": (lambda lib, x, w, b: F(lib).conv1d(x, w, b, 2, 1), [(2, 3, 7), (4, 3, 3), (4,)]),
    "conv3d": (lambda lib, x, w, b: F(lib).conv3d(x, w, b, 1, 1), [(1, 2, 3, 4, 4), (2, 2, 2, 3, 3), (2,)]),
    "conv_transpose2d": (lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, 2, 1, 1), [(1, 3, 4, 4), (3, 2, 3, 3),
                                                                                          (2,)]),
    "conv_transpose2d_groups": (lambda lib, x, w: F(lib).conv_transpose2d(x, w, None, 2, 0, 0, 2),
                                [(1, 4, 3, 3), (4, 2, 2, 2)]),
    "conv_transpose1d": (lambda lib, x, w: F(lib).conv_transpose1d(x, w, None, 2, 1, 1), [(2, 3, 5), (3, 2, 3)]),
    "max_pool2d": (lambda lib, x: F(lib).max_pool2d(x, 3, 2, 1), [(2, 2, 6, 6)]),
    "max_pool2d_ceil_dilation": (lambda lib, x: F(lib).max_pool2d(x, 2, 2, 0, 2, ceil_mode=True), [(1, 2, 7, 7)]),
    "max_pool2d_indices": (lambda lib, x: F(lib).max_pool2d(x, 2, return_indices=True)[0], [(2, 2, 4, 6)]),
    "max_pool1d": (lambda lib, x: F(lib).max_pool1d(x, 3, 2), [(2, 3, 9)]),
    "max_pool3d": (lambda lib, x: F(lib).max_pool3d(x, 2), [(1, 2, 4, 4, 4)]),
    "avg_pool2d": (lambda lib, x: F(lib).avg_pool2d(x, 3, 2, 1), [(2, 2, 6, 6)]),
    "avg_pool2d_exclude_pad": (lambda lib, x: F(lib).avg_pool2d(x, 3, 2, 1, count_include_pad=False), [(1, 2, 7, 7)]),
    "avg_pool2d_ceil": (lambda lib, x: F(lib).avg_pool2d(x, 3, 2, 1, ceil_mode=True), [(1, 2, 6, 6)]),
    "avg_pool2d_divisor": (lambda lib, x: F(lib).avg_pool2d(x, 2, divisor_override=3), [(1, 2, 4, 4)]),
    "avg_pool1d": (lambda lib, x: F(lib).avg_pool1d(x, 3, 2), [(2, 3, 9)]),
    "avg_pool3d": (lambda lib, x: F(lib).avg_pool3d(x, 2), [(1, 2, 4, 4, 4)]),
    "adaptive_avg_pool2d": (lambda lib, x: F(lib).adaptive_avg_pool2d(x, (3, 2)), [(2, 2, 7, 5)]),
    "adaptive_avg_pool1d": (lambda lib, x: F(lib).adaptive_avg_pool1d(x, 4), [(2, 3, 7)]),
    "adaptive_avg_pool3d": (lambda lib, x: F(lib).adaptive_avg_pool3d(x, 2), [(1, 2, 3, 4, 5)]),
    "adaptive_max_pool2d": (lambda lib, x: F(lib).adaptive_max_pool2d(x, (3, 2)), [(2, 2, 7, 5)]),
    "batch_norm_train": (_bn_train, [(4, 3, 3, 3), (3,), (3,)]),
    "batch_norm_train_2d": (_bn_train, [(6, 3), (3,), (3,)]),
    "batch_norm_eval": (_bn_eval, [(4, 3, 5), (3,), (3,)]),
    "native_batch_norm": (lambda lib, x, w, b: lib.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)[0],
                          [(4, 3, 5), (3,), (3,)]),
    "layer_norm": (lambda lib, x, w, b: F(lib).layer_norm(x, (3, 4), w, b, 1e-3), [(2, 3, 3, 4), (3, 4), (3, 4)]),
    "layer_norm_no_affine": (lambda lib, x: F(lib).layer_norm(x, (6,)), [(3, 4, 6)]),
    "native_layer_norm": (lambda lib, x, w, b: lib.native_layer_norm(x, [6], w, b, 1e-5)[0], [(3, 4, 6), (6,), (6,)]),
    "group_norm": (lambda lib, x, w, b: F(lib).group_norm(x, 2, w, b, 1e-3), [(3, 4, 3, 3), (4,), (4,)]),
    "instance_norm": (lambda lib, x, w, b: F(lib).instance_norm(x, weight=w, bias=b), [(3, 4, 3, 3), (4,), (4,)]),
    "embedding": (lambda lib, w: F(lib).embedding(_indices(lib), w), [(5, 4)]),
    "embedding_padding_idx": (lambda lib, w: F(lib).embedding(_indices(lib), w, padding_idx=3), [(5, 4)]),
    "embedding_scale_grad_by_freq": (lambda lib, w: F(lib).embedding(_indices(lib), w, scale_grad_by_freq=True),
                                     [(5, 4)]),
    "embedding_bag_sum": (lambda lib, w: F(lib).embedding_bag(_bag_indices(lib), w, _bag_offsets(lib), mode="sum"),
                          [(6, 3)]),
    "embedding_bag_mean_padding_idx": (
        lambda lib, w: F(lib).embedding_bag(_bag_indices(lib), w, _bag_offsets(lib), mode="mean", padding_idx=2),
        [(6, 3)]),
    "embedding_bag_max": (lambda lib, w: F(lib).embedding_bag(_bag_indices(lib), w, _bag_offsets(lib), mode="max"),
                          [(6, 3)]),
    "embedding_bag_per_sample_weights": (
        lambda lib, w, p: F(lib).embedding_bag(_bag_indices(lib), w, _bag_offsets(lib), mode="sum",
                                               per_sample_weights=p),
        [(6, 3), (7,)]),
    "embedding_bag_last_offset": (
        lambda lib, w: F(lib).embedding_bag(_bag_indices(lib), w, _bag_offsets(lib, True), mode="mean",
                                            include_last_offset=True),
        [(6, 3)]),
    "dropout_eval": (lambda lib, x: F(lib).dropout(x, 0.5, training=False), [(4, 5)]),
    "silu": (lambda lib, x: F(lib).silu(x), [(4, 5)]),
    "mish": (lambda lib, x: F(lib).mish(x), [(4, 5)]),
    "hardtanh": (lambda lib, x: F(lib).hardtanh(x, -0.5, 0.5), [(4, 5)]),
    "relu6": (lambda lib, x: F(lib).relu6(x * 4), [(4, 5)]),
    "hardswish": (lambda lib, x: F(lib).hardswish(x * 4), [(4, 5)]),
    "hardsigmoid": (lambda lib, x: F(lib).hardsigmoid(x * 4), [(4, 5)]),
    "elu": (lambda lib, x: F(lib).elu(x, 0.7), [(4, 5)]),
    "elu_inplace": (lambda lib, x: F(lib).elu_(x * 1, 0.7), [(4, 5)]),
    "selu": (lambda lib, x: F(lib).selu(x), [(4, 5)]),
    "celu": (lambda lib, x: F(lib).celu(x, 1.3), [(4, 5)]),
    "leaky_relu": (lambda lib, x: F(lib).leaky_relu(x, 0.2), [(4, 5)]),
    "softplus": (lambda lib, x: F(lib).softplus(x * 5, 2, 3), [(4, 5)]),
    "softshrink": (lambda lib, x: F(lib).softshrink(x, 0.5), [(4, 5)]),
    "hardshrink": (lambda lib, x: F(lib).hardshrink(x, 0.5), [(4, 5)]),
    "threshold": (lambda lib, x: F(lib).threshold(x, 0.1, 2.0), [(4, 5)]),
    "logsigmoid": (lambda lib, x: F(lib).logsigmoid(x), [(4, 5)]),
    "prelu": (lambda lib, x, w: F(lib).prelu(x, w), [(2, 3, 4), (3,)]),
    "prelu_one_weight": (lambda lib, x, w: F(lib).prelu(x, w), [(2, 3, 4), (1,)]),
    "glu": (lambda lib, x: F(lib).glu(x, 1), [(3, 4, 5)]),
    "lstm": (_lstm, [(T, B, I), (2, B, H), (2, B, H), (4 * H, I), (4 * H, H), (4 * H,), (4 * H,), (4 * H, H),
                     (4 * H, H), (4 * H,), (4 * H,)]),
    "gru_bidirectional_batch_first": (_gru, [(B, T, I), (2, B, H), (3 * H, I), (3 * H, H), (3 * H,), (3 * H,),
                                             (3 * H, I), (3 * H, H), (3 * H,), (3 * H,)]),
    "rnn_tanh": (lambda lib, x, h, wi, wh: lib.rnn_tanh(x, h, [wi, wh], False, 1, 0.0, True, False, False),
                 [(T, B, I), (1, B, H), (H, I), (H, H)]),
    "rnn_relu": (lambda lib, x, h, wi, wh: lib.rnn_relu(x, h, [wi, wh], False, 1, 0.0, True, False, False),
                 [(T, B, I), (1, B, H), (H, I), (H, H)]),
    "lstm_cell": (lambda lib, x, h, c, wi, wh, bi, bh: lib.lstm_cell(x, [h, c], wi, wh, bi, bh),
                  [(B, I), (B, H), (B, H), (4 * H, I), (4 * H, H), (4 * H,), (4 * H,)]),
    "gru_cell": (lambda lib, x, h, wi, wh, bi, bh: lib.gru_cell(x, h, wi, wh, bi, bh),
                 [(B, I), (B, H), (3 * H, I), (3 * H, H), (3 * H,), (3 * H,)]),
    "rnn_tanh_cell": (lambda lib, x, h, wi, wh: lib.rnn_tanh_cell(x, h, wi, wh), [(B, I), (B, H), (H, I), (H, H)]),
    "interpolate_nearest": (lambda lib, x: F(lib).interpolate(x, scale_factor=2, mode="nearest"), [(1, 2, 3, 4)]),
    "interpolate_nearest_size": (lambda lib, x: F(lib).interpolate(x, size=(5, 3), mode="nearest"), [(1, 2, 3, 4)]),
    "interpolate_nearest1d": (lambda lib, x: F(lib).interpolate(x, scale_factor=1.7, mode="nearest"), [(2, 2, 5)]),
    "interpolate_nearest3d": (lambda lib, x: F(lib).interpolate(x, size=(3, 4, 2), mode="nearest"), [(1, 1, 2, 3, 3)]),
    "interpolate_nearest_exact": (lambda lib, x: F(lib).interpolate(x, size=(5, 3), mode="nearest-exact"),
                                  [(1, 2, 3, 4)]),
    "interpolate_linear": (lambda lib, x: F(lib).interpolate(x, scale_factor=2.5, mode="linear"), [(2, 2, 4)]),
    "interpolate_bilinear": (lambda lib, x: F(lib).interpolate(x, size=(5, 3), mode="bilinear"), [(1, 2, 3, 4)]),
    "interpolate_bilinear_align_corners": (
        lambda lib, x: F(lib).interpolate(x, scale_factor=2, mode="bilinear", align_corners=True), [(1, 2, 3, 4)]),
    "interpolate_bicubic": (lambda lib, x: F(lib).interpolate(x, size=(5, 6), mode="bicubic"), [(1, 2, 3, 4)]),
    "interpolate_trilinear": (lambda lib, x: F(lib).interpolate(x, scale_factor=1.5, mode="trilinear"),
                              [(1, 1, 2, 3, 3)]),
    "interpolate_bilinear_antialias": (
        lambda lib, x: F(lib).interpolate(x, size=(3, 2), mode="bilinear", antialias=True), [(1, 2, 6, 5)]),
    "interpolate_bicubic_antialias": (
        lambda lib, x: F(lib).interpolate(x, size=(3, 2), mode="bicubic", antialias=True), [(1, 2, 6, 5)]),
    "pad_constant": (lambda lib, x: F(lib).pad(x, (1, 2, 0, 1), value=0.5), [(2, 2, 3, 4)]),
    "pad_constant_negative": (lambda lib, x: F(lib).pad(x, (1, -1)), [(2, 2, 3, 4)]),
    "pad_reflect": (lambda lib, x: F(lib).pad(x, (1, 2, 2, 1), mode="reflect"), [(1, 2, 4, 5)]),
    "pad_replicate": (lambda lib, x: F(lib).pad(x, (1, 2, 3, 1), mode="replicate"), [(1, 2, 3, 4)]),
    "pad_reflect1d": (lambda lib, x: F(lib).pad(x, (2, 3), mode="reflect"), [(2, 2, 5)]),
    "pad_replicate3d": (lambda lib, x: F(lib).pad(x, (1, 0, 2, 1, 1, 1), mode="replicate"), [(1, 1, 2, 3, 3)]),
    "reflection_pad2d_unbatched": (lambda lib, x: lib.nn.ReflectionPad2d(2)(x), [(2, 4, 5)]),
    "pixel_shuffle": (lambda lib, x: F(lib).pixel_shuffle(x, 2), [(1, 8, 2, 3)]),
    "pixel_unshuffle": (lambda lib, x: F(lib).pixel_unshuffle(x, 2), [(1, 2, 4, 6)]),
    "unfold": (lambda lib, x: F(lib).unfold(x, 2, 1, 1, 2), [(1, 2, 4, 5)]),
    "fold": (lambda lib, x: F(lib).fold(x, (4, 5), 2), [(1, 8, 12)]),
    "scaled_dot_product_attention": (lambda lib, q, k, v: F(lib)._scaled_dot_product_attention(q, k, v)[0],
                                     [(2, 3, 4), (2, 5, 4), (2, 5, 3)]),
    "scaled_dot_product_attention_causal": (
        lambda lib, q, k, v: F(lib)._scaled_dot_product_attention(q, k, v, None, 0.0, False, True)[0],
        [(2, 4, 4), (2, 4, 4), (2, 4, 3)]),
    "scaled_dot_product_attention_float_mask": (
        lambda lib, q, k, v, m: F(lib)._scaled_dot_product_attention(q, k, v, m)[0],
        [(2, 3, 4), (2, 5, 4), (2, 5, 3), (3, 5)]),
    "masked_softmax": (lambda lib, x: (torch if lib is torch else F(lib))._masked_softmax(x, _softmax_mask(lib), 1, 2),
                       [(2, 4, 3)]),
}

# Derivatives not defined everywhere: inputs away from the kinks (and from ties in the pools).
_KINKED = {"hardtanh", "relu6", "hardswish", "hardsigmoid", "elu", "elu_inplace", "selu", "celu", "leaky_relu",
           "softshrink", "hardshrink", "threshold", "prelu", "prelu_one_weight", "rnn_relu"}


def _values(name, dtype=np.float32):
    fn, shapes = PROGRAMS[name]
    values = arrays(shapes, dtype=dtype)
    if name in _KINKED or "pool" in name:
        values = away_from_kinks(values)
    return fn, values


# torch 1.13's CPU _masked_softmax reads a non-contiguous input in memory order.
_CONTIGUOUS_ONLY = {"masked_softmax"}


@pytest.mark.parametrize("noncontiguous", [False, True], ids=["contiguous", "noncontiguous"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradients_match_torch(name, noncontiguous):
    if noncontiguous and name in _CONTIGUOUS_ONLY:
        pytest.skip("torch's forward differs")
    fn, values = _values(name)
    assert_gradients_match_torch(fn, values, noncontiguous)


# torch's gradients that are not the derivative by design: padding_idx's row
# gets none, scale_grad_by_freq divides by the index's count.
_NOT_DERIVATIVES = {"embedding_padding_idx", "embedding_scale_grad_by_freq"}


@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - _NOT_DERIVATIVES))
def test_gradcheck_float64(name):
    fn, values = _values(name, np.float64)
    gradcheck(fn, values)


def test_grad_fn_names():
    x = kiln.randn(1, 2, 5, 5, requires_grad=True)
    w = kiln.randn(3, 2, 3, 3, requires_grad=True)
    assert type(F(kiln).conv2d(x, w)).__name__ == "Tensor"
    assert F(kiln).conv2d(x, w).grad_fn.name() == "ConvolutionBackward0"
    assert F(kiln).max_pool2d(x, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert F(kiln).dropout(x, 0.5, training=True).grad_fn.name() == "NativeDropoutBackward0"
    assert F(kiln).layer_norm(x, (5,)).grad_fn.name() == "NativeLayerNormBackward0"


def test_dropout_gradient_is_the_mask():
    # torch's semantics: the gradient is the kept mask over (1 - p), also where the input is 0.
    x = kiln.from_numpy(np.zeros((50, 40), dtype=np.float32))
    x.requires_grad_(True)
    y = F(kiln).dropout(x * 1, 0.25, training=True)
    y.sum().backward()
    g = x.grad.numpy()
    assert set(np.unique(g)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.6 < (g != 0).mean() < 0.9
    x = kiln.from_numpy(np.ones((50, 40), dtype=np.float32))
    x.requires_grad_(True)
    y = F(kiln).dropout(x, 0.25, training=True)
    y.backward(kiln.ones(50, 40))
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    for kind in ["feature_dropout", "alpha_dropout", "feature_alpha_dropout"]:
        x = kiln.randn(4, 6, 3, requires_grad=True)
        getattr(kiln, kind)(x, 0.4, True).sum().backward()
        assert x.grad is not None and (x.grad.numpy() == 0).any()


def test_batch_norm_updates_running_stats_in_training():
    tx = torch.randn(4, 3, 5)
    kx = kiln.from_numpy(tx.numpy().copy())
    t_bn, k_bn = torch.nn.BatchNorm1d(3), kiln.nn.BatchNorm1d(3)
    k_bn.load_state_dict({k: kiln.from_numpy(v.numpy().copy()) for k, v in t_bn.state_dict().items()})
    t_bn(tx).pow(2).sum().backward()
    k_bn(kx).pow(2).sum().backward()
    for (name, t), (_, k) in zip(t_bn.state_dict().items(), k_bn.state_dict().items()):
        np.testing.assert_allclose(k.numpy(), t.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    np.testing.assert_allclose(k_bn.weight.grad.numpy(), t_bn.weight.grad.numpy(), rtol=1e-4, atol=1e-5)


def _copy_weights(t_module, k_module):
    k_module.load_state_dict({k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in t_module.state_dict().items()})


def _assert_parameter_gradients_match(t_module, k_module, rtol=1e-4, atol=1e-5):
    t_params = dict(t_module.named_parameters())
    k_params = dict(k_module.named_parameters())
    assert sorted(t_params) == sorted(k_params)
    for name, t in t_params.items():
        np.testing.assert_allclose(k_params[name].grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol, err_msg=name)


def _resnet_block(nn):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
            self.bn0 = nn.BatchNorm2d(8)
            self.pool = nn.MaxPool2d(3, 2, 1)
            self.conv1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(8)
            self.down = nn.Conv2d(8, 16, 1, stride=2, bias=False)
            self.fc = nn.Linear(16, 5)

        def forward(self, x):
            x = self.pool(nn.functional.relu(self.bn0(self.stem(x))))
            y = nn.functional.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            x = nn.functional.relu(x + y)
            x = self.down(x)
            x = nn.functional.adaptive_avg_pool2d(x, (1, 1)).flatten(1)
            return self.fc(x)

    return Block()


def test_resnet_block_parameter_gradients_match_torch():
    torch.manual_seed(0)
    t_model, k_model = _resnet_block(torch.nn), _resnet_block(kiln.nn)
    _copy_weights(t_model, k_model)
    x = np.random.default_rng(3).standard_normal((2, 3, 16, 16)).astype(np.float32)
    t_out = t_model(torch.from_numpy(x))
    k_out = k_model(kiln.from_numpy(x))
    np.testing.assert_allclose(k_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-4, atol=1e-5)
    t_out.pow(2).sum().backward()
    k_out.pow(2).sum().backward()
    _assert_parameter_gradients_match(t_model, k_model, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_module_parameter_gradients_match_torch(bidirectional):
    torch.manual_seed(0)
    t_lstm = torch.nn.LSTM(3, 5, num_layers=2, batch_first=True, bidirectional=bidirectional)
    k_lstm = kiln.nn.LSTM(3, 5, num_layers=2, batch_first=True, bidirectional=bidirectional)
    _copy_weights(t_lstm, k_lstm)
    x = np.random.default_rng(4).standard_normal((2, 6, 3)).astype(np.float32)
    t_out, (t_h, t_c) = t_lstm(torch.from_numpy(x))
    k_out, (k_h, k_c) = k_lstm(kiln.from_numpy(x))
    (t_out.sum() + t_h.pow(2).sum() + t_c.sum()).backward()
    (k_out.sum() + k_h.pow(2).sum() + k_c.sum()).backward()
    _assert_parameter_gradients_match(t_lstm, k_lstm)


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_lstm_with_projections_parameter_gradients_match_torch(bidirectional, batch_first):
    torch.manual_seed(0)
    options = dict(num_layers=2, batch_first=batch_first, bidirectional=bidirectional, proj_size=3)
    t_lstm, k_lstm = torch.nn.LSTM(4, 6, **options), kiln.nn.LSTM(4, 6, **options)
    _copy_weights(t_lstm, k_lstm)
    x = np.random.default_rng(7).standard_normal((2, 5, 4) if batch_first else (5, 2, 4)).astype(np.float32)
    results = []
    for lib, lstm in ((torch, t_lstm), (kiln, k_lstm)):
        inp = lib.from_numpy(x.copy())
        inp.requires_grad_(True)
        out, (h, c) = lstm(inp)
        assert tuple(out.shape[-1:]) == (3 * (2 if bidirectional else 1),) and tuple(h.shape[-1:]) == (3,)
        (out.pow(2).sum() + h.sum() + c.pow(2).sum()).backward()
        results.append((out.detach().numpy(), inp.grad.numpy()))
    for k_value, t_value in zip(results[1], results[0]):
        np.testing.assert_allclose(k_value, t_value, rtol=1e-4, atol=1e-5)
    _assert_parameter_gradients_match(t_lstm, k_lstm)


def test_without_grad_the_fused_kernels_run():
    # No input requires grad: the results have no grad_fn (the fused kernels ran).
    x = kiln.randn(4, 2, 3)
    lstm = kiln.nn.LSTM(3, 4)
    with kiln.no_grad():
        out, _ = lstm(x)
    assert out.grad_fn is None and not out.requires_grad


@pytest.mark.parametrize("cls, args", [("MultiheadAttention", (8, 2)), ("TransformerEncoderLayer", (8, 2, 16, 0.0))])
def test_attention_module_parameter_gradients_match_torch(cls, args):
    torch.manual_seed(0)
    t_module = getattr(torch.nn, cls)(*args, batch_first=True)
    k_module = getattr(kiln.nn, cls)(*args, batch_first=True)
    _copy_weights(t_module, k_module)
    x = np.random.default_rng(5).standard_normal((2, 5, 8)).astype(np.float32)
    if cls == "MultiheadAttention":
        t_out = t_module(*[torch.from_numpy(x)] * 3)[0]
        k_out = k_module(*[kiln.from_numpy(x)] * 3)[0]
    else:
        t_out, k_out = t_module(torch.from_numpy(x)), k_module(kiln.from_numpy(x))
    t_out.pow(2).sum().backward()
    k_out.pow(2).sum().backward()
    _assert_parameter_gradients_match(t_module, k_module)


@pytest.mark.parametrize("cls, options", [("LSTM", {}), ("GRU", {}), ("LSTM", {"proj_size": 2})])
def test_packed_sequence_gradients_match_torch(cls, options):
    torch.manual_seed(0)
    t_rnn = getattr(torch.nn, cls)(3, 4, num_layers=2, bidirectional=True, **options)
    k_rnn = getattr(kiln.nn, cls)(3, 4, num_layers=2, bidirectional=True, **options)
    _copy_weights(t_rnn, k_rnn)
    x = np.random.default_rng(6).standard_normal((5, 3, 3)).astype(np.float32)
    lengths = [5, 3, 2]
    grads = []
    for lib, rnn in ((torch, t_rnn), (kiln, k_rnn)):
        inp = lib.from_numpy(x.copy())
        inp.requires_grad_(True)
        packed = lib.nn.utils.rnn.pack_padded_sequence(inp, lib.from_numpy(np.array(lengths)))
        out, state = rnn(packed)
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(out)
        h = state[0] if cls == "LSTM" else state
        (padded.pow(2).sum() + h.sum()).backward()
        grads.append(inp.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-5)
    _assert_parameter_gradients_match(t_rnn, k_rnn)


def test_pad_sequence_gradients_match_torch():
    values = arrays([(4, 3), (2, 3), (3, 3)])

    def program(lib, a, b, c):
        if lib is torch:
            return torch.nn.utils.rnn.pad_sequence([a, b, c], batch_first=True, padding_value=0.5)
        return F(kiln).pad_sequence([a, b, c], batch_first=True, padding_value=0.5)

    assert_gradients_match_torch(program, values)


# ----- issue 21's last forward ops: circular padding, _pad_enum, nested tensors from a mask -----

def _nested_mask(lib):
    return lib.from_numpy(np.array([[True, True, True, False], [True, False, False, False]]))


LAST_OPS = {
    "pad_circular_1d": (lambda m, x: F(m).pad(x, (2, 1), mode="circular"), [(2, 3, 4)]),
    "pad_circular_3d": (lambda m, x: F(m).pad(x, (1, 0, 0, 2, 1, 1), mode="circular"), [(1, 2, 2, 3, 2)]),
    "pad_circular_negative": (lambda m, x: F(m).pad(x, (-1, 2, 1, -2), mode="circular"), [(1, 2, 4, 5)]),
    "_pad_circular": (lambda m, x: (torch.ops.aten._pad_circular if m is torch else kiln._functions.op(
        "_pad_circular"))(x, [1, 2]), [(2, 3, 4)]),
    "_pad_enum_reflect": (lambda m, x: (torch.ops.aten._pad_enum if m is torch else kiln._functions.op(
        "_pad_enum"))(x, [1, 2], 1, None), [(2, 3, 4)]),
    "_pad_enum_circular": (lambda m, x: (torch.ops.aten._pad_enum if m is torch else kiln._functions.op(
        "_pad_enum"))(x, [1, 2], 3, None), [(2, 3, 4)]),
    "nested_from_mask_to_padded": (lambda m, x: (torch.ops.aten.to_padded_tensor if m is torch else
                                                 kiln._functions.op("to_padded_tensor"))(
        (torch._nested_tensor_from_mask if m is torch else kiln._functions.op("_nested_tensor_from_mask"))(
            x * 2, _nested_mask(m)), 0.0, [2, 5, 3]), [(2, 4, 3)]),
}


@pytest.mark.parametrize("noncontiguous", [False, True], ids=["contiguous", "noncontiguous"])
@pytest.mark.parametrize("name", sorted(LAST_OPS))
def test_last_forward_ops_match_torch(name, noncontiguous):
    fn, shapes = LAST_OPS[name]
    assert_gradients_match_torch(fn, arrays(shapes), noncontiguous)


@pytest.mark.parametrize("name", sorted(LAST_OPS))
def test_last_forward_ops_gradcheck(name):
    fn, shapes = LAST_OPS[name]
    gradcheck(fn, arrays(shapes, dtype=np.float64))
