#pragma once
// The multi-class margin losses and max unpooling, with PyTorch 1.13's CPU
// kernels' semantics: the same checks and messages, the same per-sample
// sums in the same order, and their backward kernels. `reduction` is torch's
// enum: 0 none, 1 mean, 2 sum.
#include <optional>
#include <tuple>

#include "kiln/tensor/scalar.h"
#include "kiln/tensor/tensor.h"

namespace kiln {

// Input (N, C) or (C) (or a 0-dim single score), target the class index of
// each sample; p is 1 or 2; weight, when given, one per class.
Tensor multiMarginLoss(const Tensor& self, const Tensor& target, const Scalar& p, const Scalar& margin,
                       const std::optional<Tensor>& weight, int64_t reduction);
Tensor multiMarginLossBackward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Scalar& p,
                               const Scalar& margin, const std::optional<Tensor>& weight, int64_t reduction);

// Input (N, C) or (C), target of the same shape holding each sample's
// classes, ended by the first -1. Returns (loss, is_target: 1 at each
// sample's classes, self's dtype and target's shape).
std::tuple<Tensor, Tensor> multilabelMarginLossForward(const Tensor& self, const Tensor& target, int64_t reduction);
Tensor multilabelMarginLossBackward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                    int64_t reduction, const Tensor& is_target);

// Scatters each (C, *spatial) plane of `self` to the flat positions
// `indices` gives within a zero plane of `output_size` (max_pool's
// indices): max_unpool2d (spatial rank 2) and max_unpool3d (3, whose
// stride and padding torch only checks).
Tensor maxUnpool(const Tensor& self, const Tensor& indices, IntArrayRef output_size);

}  // namespace kiln
