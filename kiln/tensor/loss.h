#pragma once
// Loss functions with PyTorch 1.13's semantics. `reduction` is torch's enum:
// 0 none, 1 mean, 2 sum.
#include <optional>
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

Tensor mseLoss(const Tensor& self, const Tensor& target, int64_t reduction);
Tensor l1Loss(const Tensor& self, const Tensor& target, int64_t reduction);
Tensor smoothL1Loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta);
Tensor huberLoss(const Tensor& self, const Tensor& target, int64_t reduction, double delta);
// Inputs of 1 or 2 dims; (output, total_weight).
std::tuple<Tensor, Tensor> nllLossForward(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                          int64_t reduction, int64_t ignore_index);
// Inputs of 4 dims, targets of 3; (output, total_weight).
std::tuple<Tensor, Tensor> nllLoss2dForward(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t ignore_index);
// Any rank: dispatches to the two above as torch's nll_loss_nd does.
Tensor nllLossNd(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                 int64_t ignore_index);
Tensor crossEntropyLoss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                        int64_t reduction, int64_t ignore_index, double label_smoothing);
Tensor binaryCrossEntropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                          int64_t reduction);
Tensor binaryCrossEntropyWithLogits(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                    const std::optional<Tensor>& pos_weight, int64_t reduction);
Tensor klDiv(const Tensor& self, const Tensor& target, int64_t reduction, bool log_target);

}  // namespace kiln
