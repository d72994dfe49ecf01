#pragma once
// Pooling, as torch 1.13 computes it: max (with torch's flat indices into
// each input plane, NaN propagating), average (ceil_mode,
// count_include_pad, divisor_override) and adaptive average and max, over 1
// to 3 spatial dims, batched or not. float32 max and average pooling run on
// oneDNN where its semantics match; the rest on kiln's kernels.
#include <optional>
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

// `name` is the op's name for messages ("max_pool2d").
Tensor maxPool(int64_t spatial, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
               IntArrayRef dilation, bool ceil_mode, const char* name);
std::tuple<Tensor, Tensor> maxPoolWithIndices(int64_t spatial, const Tensor& self, IntArrayRef kernel_size,
                                              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                              bool ceil_mode, const char* name);
Tensor avgPool(int64_t spatial, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
               bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override, const char* name);
Tensor adaptiveAvgPool(int64_t spatial, const Tensor& self, IntArrayRef output_size, const char* name);
std::tuple<Tensor, Tensor> adaptiveMaxPool(int64_t spatial, const Tensor& self, IntArrayRef output_size,
                                           const char* name);

// torch's pooling output size (floor or ceil mode) of one dim.
int64_t poolingOutputSize(int64_t input, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode);

}  // namespace kiln
