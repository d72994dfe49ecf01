#pragma once
// Layer normalization over the trailing `normalized_shape` dims of a tensor.
#include <optional>
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

// (output, mean, rstd); mean and rstd have the input's leading sizes followed
// by a 1 for each normalized dim, as torch's CPU kernel returns them.
std::tuple<Tensor, Tensor, Tensor> nativeLayerNorm(const Tensor& input, IntArrayRef normalized_shape,
                                                   const std::optional<Tensor>& weight,
                                                   const std::optional<Tensor>& bias, double eps);
Tensor layerNorm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                 const std::optional<Tensor>& bias, double eps);

}  // namespace kiln
