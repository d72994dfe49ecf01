#pragma once
// The gradients of batch, layer and group normalization (torch 1.13's
// native_batch_norm_backward, native_layer_norm_backward,
// native_group_norm_backward): (input, weight, bias) gradients, those not
// asked for in `mask` undefined. Statistics that are missing (undefined, or
// empty where the schema takes a Tensor) are computed again from the input,
// so that the ops that return only the normalized tensor can use them.
#include <array>
#include <optional>
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

using NormGrads = std::tuple<Tensor, Tensor, Tensor>;

NormGrads batchNormBackward(const Tensor& grad, const Tensor& input, const std::optional<Tensor>& weight,
                            const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                            const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd,
                            bool train, double eps, std::array<bool, 3> mask);
NormGrads layerNormBackward(const Tensor& grad, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean,
                            const Tensor& rstd, const std::optional<Tensor>& weight, double eps,
                            std::array<bool, 3> mask);
NormGrads groupNormBackward(const Tensor& grad, const Tensor& input, const Tensor& mean, const Tensor& rstd,
                            const std::optional<Tensor>& weight, int64_t group, double eps, std::array<bool, 3> mask);

}  // namespace kiln
