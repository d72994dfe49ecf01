#pragma once
// Convolution, as torch 1.13 computes it: forward and transposed, 1 to 3
// spatial dims, groups, stride, dilation, padding (numbers, or 'same' /
// 'valid'), output_padding. float32 runs on oneDNN; float64, integer
// dtypes and whatever oneDNN declines run on kiln's im2col + GEMM kernel.
// Shapes and arguments are checked with torch's messages.
#include <optional>
#include <string>

#include "kiln/tensor/tensor.h"

namespace kiln {

// aten::convolution: batched input (N, C, spatial...), parameters of one
// value per spatial dim or a single value for all.
Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups);
// aten::_convolution_mode: padding "same" or "valid".
Tensor convolutionMode(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                       const std::string& padding, IntArrayRef dilation, int64_t groups);

// aten::conv1d/2d/3d and conv_transpose1d/2d/3d: `spatial` dims, input with or
// without its batch dim.
Tensor convNd(int64_t spatial, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups);
Tensor convNdMode(int64_t spatial, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                  IntArrayRef stride, const std::string& padding, IntArrayRef dilation, int64_t groups);
Tensor convTransposeNd(int64_t spatial, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                       IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                       IntArrayRef dilation);

}  // namespace kiln
