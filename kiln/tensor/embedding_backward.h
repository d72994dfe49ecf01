#pragma once
// The gradient of an embedding lookup (torch 1.13's embedding_dense_backward):
// each index's row of grad_output added to that row of a (num_weights, D)
// zero tensor; padding_idx's row stays zero; with scale_grad_by_freq each
// contribution is divided by how often its index occurs.
#include <optional>

#include "kiln/tensor/tensor.h"

namespace kiln {

Tensor embeddingDenseBackward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                              int64_t padding_idx, bool scale_grad_by_freq);

// The gradients of embedding_bag (torch 1.13's _embedding_bag_backward and
// _embedding_bag_per_sample_weights_backward), dense: the bag of each index
// is found from `offsets` (grad has one row per bag); mode 0 sums (times the
// per-sample weight), 1 averages over the bag's non-padding indices
// (`bag_size`), 2 sends each feature's gradient to `max_indices`.
Tensor embeddingBagBackward(const Tensor& grad, const Tensor& indices, const Tensor& offsets, const Tensor& bag_size,
                            const Tensor& max_indices, int64_t num_weights, bool scale_grad_by_freq, int64_t mode,
                            const std::optional<Tensor>& per_sample_weights, int64_t padding_idx);
Tensor embeddingBagPerSampleWeightsBackward(const Tensor& grad, const Tensor& weight, const Tensor& indices,
                                            const Tensor& offsets, int64_t mode, int64_t padding_idx);

}  // namespace kiln
