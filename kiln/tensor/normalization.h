#pragma once
// Batch, instance and group normalization (layer norm lives elsewhere), with
// PyTorch 1.13's CPU semantics: statistics accumulate in double, the output
// is x * alpha + beta per channel, and training-mode batch norm updates the
// running statistics in place (momentum, unbiased variance).
#include <optional>
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

using OptionalTensor = std::optional<Tensor>;

// (output, save_mean, save_invstd); in eval mode the saved tensors are empty.
std::tuple<Tensor, Tensor, Tensor> nativeBatchNorm(const Tensor& input, const OptionalTensor& weight,
                                                   const OptionalTensor& bias, const OptionalTensor& running_mean,
                                                   const OptionalTensor& running_var, bool training, double momentum,
                                                   double eps);
Tensor batchNorm(const Tensor& input, const OptionalTensor& weight, const OptionalTensor& bias,
                 const OptionalTensor& running_mean, const OptionalTensor& running_var, bool training, double momentum,
                 double eps);
Tensor instanceNorm(const Tensor& input, const OptionalTensor& weight, const OptionalTensor& bias,
                    const OptionalTensor& running_mean, const OptionalTensor& running_var, bool use_input_stats,
                    double momentum, double eps);
// (output, mean, rstd), mean and rstd of shape (N, group).
std::tuple<Tensor, Tensor, Tensor> nativeGroupNorm(const Tensor& input, const OptionalTensor& weight,
                                                   const OptionalTensor& bias, int64_t n, int64_t c, int64_t hxw,
                                                   int64_t group, double eps);
Tensor groupNorm(const Tensor& input, int64_t num_groups, const OptionalTensor& weight, const OptionalTensor& bias,
                 double eps);

}  // namespace kiln
