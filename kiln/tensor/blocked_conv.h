#pragma once
// The kernels behind kiln.optimize_for_inference (kiln/passes/
// fuse_dnnl_convolution.h, kiln/passes/dnnl_blocked_layout.h): float32 2-d
// convolution on oneDNN with its post-ops fused (residual sum, then one
// eltwise), weights prepacked once into oneDNN's preferred layout, and
// activations in oneDNN's channel-blocked layout nChw<b>c.
//
// A blocked activation is an ordinary contiguous float tensor of shape
// (N, ceil(C/b), H, W, b): channel c lives at [n, c/b, h, w, c%b], and the
// channels past C of the last block are zero (oneDNN pads them so). Its
// logical channel count C is not in the shape; the ops carry it.
#include <optional>
#include <string>

#include "kiln/tensor/tensor.h"

namespace kiln {

// The channel block oneDNN's fastest convolutions use on this CPU: 16 with
// AVX-512, 8 with AVX2, 0 when neither (no blocked layout then).
int64_t dnnlChannelBlock();

// (N, C, H, W) float32 -> (N, ceil(C/block), H, W, block), and back.
Tensor toBlocked(const Tensor& x, int64_t block);
Tensor fromBlocked(const Tensor& x, int64_t channels);

// What a fused convolution computes and how its operands are laid out. A
// block of 0 means plain NCHW.
struct FusedConv2dParams {
  DimVector weight_size;  // torch's (OC, C/groups, kh, kw)
  DimVector stride, padding, dilation;
  int64_t groups = 1;
  int64_t in_block = 0, out_block = 0;
  bool has_bias = false, has_residual = false;
  // "none", "relu", "hardtanh" (alpha = min, beta = max), "silu",
  // "sigmoid", "tanh", "gelu" (exact), "gelu_tanh", "elu" (alpha).
  std::string activation = "none";
  double alpha = 0, beta = 0;
};

// Whether `activation` names an eltwise post-op fusedConv2d supports.
bool isFusableActivation(const std::string& activation);

// torch's contiguous float32 weight as oneDNN's preferred (blocked) weight
// layout for the convolution `p` describes, as a 1-d float tensor; nullopt
// when oneDNN has no implementation for it.
std::optional<Tensor> prepackConv2dWeight(const Tensor& weight, const FusedConv2dParams& p);

// act(conv(input, weight) + bias + residual), `weight` from
// prepackConv2dWeight with the same parameters, or torch's 4-d weight. A
// torch weight that oneDNN wants in another layout is converted once per
// weight and wanted layout (whatever input sizes and thread counts share
// that layout) and kept when the activations are blocked (a
// frozen graph's constant); with plain activations (the executor's fusion
// of live parameters, which the user may change in place) it is converted
// on every call. `input` and `residual`
// (the output's shape and layout) are laid out as in_block and out_block say.
Tensor fusedConv2d(const Tensor& input, const Tensor& packed_weight, const std::optional<Tensor>& bias,
                   const std::optional<Tensor>& residual, const FusedConv2dParams& p);

// The converted weights fusedConv2d keeps (see above), counting only those
// whose constant is still alive elsewhere: the others are dropped first.
struct ConvertedConvWeightStats {
  int64_t count = 0;
  int64_t bytes = 0;
};
ConvertedConvWeightStats convertedConvWeightStats();

// Whether fusedConv2d computes exactly what torch's conv2d (then add of the
// residual, then the activation) computes for these operands: float32, a
// batched 4-d input of the weight's channels, a bias of one value per
// output channel, a residual of the output's shape, an output that is not
// empty, plain layouts, and a convolution oneDNN runs. The executor's
// post-op fusion (kiln/passes/fuse_conv_post_ops.h) runs the unfused ops
// otherwise, so that other dtypes and torch's errors stay as they were.
bool canRunFusedConv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                       const std::optional<Tensor>& residual, const FusedConv2dParams& p);

// max_pool2d of a blocked activation of `channels` channels, blocked
// result; torch's arguments (kernel, stride, padding, dilation of 1 or 2 values).
Tensor blockedMaxPool2d(const Tensor& x, int64_t channels, IntArrayRef kernel, IntArrayRef stride, IntArrayRef padding,
                        IntArrayRef dilation, bool ceil_mode);

}  // namespace kiln
