#include "kiln/tensor/embedding_backward.h"

#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/shape.h"

namespace kiln {

Tensor embeddingDenseBackward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                              int64_t padding_idx, bool scale_grad_by_freq) {
  KILN_CHECK(indices.dtype() == ScalarType::Long || indices.dtype() == ScalarType::Int,
             "embedding_backward: indices must be an integer tensor");
  const int64_t n = indices.numel();
  const int64_t d = n == 0 ? grad_output.size(-1) : grad_output.numel() / n;
  Tensor idx = contiguous(to(indices, ScalarType::Long));
  Tensor g = contiguous(grad_output);
  Tensor out = zeros({num_weights, d}, grad_output.dtype());
  const int64_t* ip = idx.data<int64_t>();
  std::vector<int64_t> counts;
  if (scale_grad_by_freq) {
    counts.assign(static_cast<size_t>(num_weights), 0);
    for (int64_t i = 0; i < n; ++i)
      if (ip[i] >= 0 && ip[i] < num_weights) ++counts[static_cast<size_t>(ip[i])];
  }
  KILN_DISPATCH_FLOATING_TYPES(out.dtype(), "embedding_backward", [&] {
    const scalar_t* gp = g.data<scalar_t>();
    scalar_t* op = out.data<scalar_t>();
    for (int64_t i = 0; i < n; ++i) {
      int64_t row = ip[i];
      KILN_CHECK_INDEX(row >= 0 && row < num_weights, "index out of range in self");
      if (row == padding_idx) continue;
      scalar_t scale = scale_grad_by_freq ? scalar_t(1) / static_cast<scalar_t>(counts[static_cast<size_t>(row)])
                                          : scalar_t(1);
      const scalar_t* src = gp + i * d;
      scalar_t* dst = op + row * d;
      for (int64_t j = 0; j < d; ++j) dst[j] += src[j] * scale;
    }
  });
  return out;
}

}  // namespace kiln
