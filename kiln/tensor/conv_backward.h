#pragma once
// The gradients of a convolution, torch 1.13's aten::convolution_backward:
// of the input (a transposed convolution of the output gradient, run by
// oneDNN as the forward is), of the weight (oneDNN's backward-weights
// primitive for float32, else a convolution of the input with the output
// gradient) and of the bias (the output gradient summed over all dims but
// the channels). Results not asked for in `output_mask` are undefined.
#include <array>
#include <optional>
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

std::tuple<Tensor, Tensor, Tensor> convolutionBackward(const Tensor& grad_output, const Tensor& input,
                                                       const Tensor& weight, IntArrayRef stride, IntArrayRef padding,
                                                       IntArrayRef dilation, bool transposed,
                                                       IntArrayRef output_padding, int64_t groups,
                                                       std::array<bool, 3> output_mask);

}  // namespace kiln
