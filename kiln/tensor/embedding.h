#pragma once
// Embedding lookups: embedding (rows of a table by index), embedding_bag
// (sums, means or maxima of bags of rows) and embedding_renorm_.
#include <optional>
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx);
// Rescales, in place, the rows of `self` that `indices` names whose
// norm_type-norm exceeds max_norm to norm max_norm.
Tensor& embeddingRenorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type);
// (output, offset2bag, bag_size, max_indices); mode 0 sum, 1 mean, 2 max.
// padding_idx < 0: none.
std::tuple<Tensor, Tensor, Tensor, Tensor> embeddingBag(const Tensor& weight, const Tensor& indices,
                                                        const Tensor& offsets, int64_t mode,
                                                        const std::optional<Tensor>& per_sample_weights,
                                                        bool include_last_offset, int64_t padding_idx);

}  // namespace kiln
