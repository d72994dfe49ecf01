#pragma once
// The gradients of pooling (torch 1.13's max_pool2d_with_indices_backward,
// avg_pool2d_backward, _adaptive_avg_pool2d_backward and their 1-d and 3-d
// forms): the output gradient sent back to the input elements each output
// read. `spatial` is the number of pooled (trailing) dims; the output sizes
// are grad_output's.
#include <optional>

#include "kiln/tensor/tensor.h"

namespace kiln {

// Each output's gradient to the input element `indices` names (its index within its plane).
Tensor maxPoolBackward(int64_t spatial, const Tensor& grad_output, const Tensor& self, const Tensor& indices);
Tensor avgPoolBackward(int64_t spatial, const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                       IntArrayRef stride, IntArrayRef padding, bool count_include_pad,
                       std::optional<int64_t> divisor_override);
Tensor adaptiveAvgPoolBackward(int64_t spatial, const Tensor& grad_output, const Tensor& self);

}  // namespace kiln
