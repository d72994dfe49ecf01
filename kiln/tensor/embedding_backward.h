#pragma once
// The gradient of an embedding lookup (torch 1.13's embedding_dense_backward):
// each index's row of grad_output added to that row of a (num_weights, D)
// zero tensor; padding_idx's row stays zero; with scale_grad_by_freq each
// contribution is divided by how often its index occurs.
#include "kiln/tensor/tensor.h"

namespace kiln {

Tensor embeddingDenseBackward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                              int64_t padding_idx, bool scale_grad_by_freq);

}  // namespace kiln
