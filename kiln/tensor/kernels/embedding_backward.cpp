#include "kiln/tensor/embedding_backward.h"

#include <algorithm>
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
      scalar_t scale =
          scale_grad_by_freq ? scalar_t(1) / static_cast<scalar_t>(counts[static_cast<size_t>(row)]) : scalar_t(1);
      const scalar_t* src = gp + i * d;
      scalar_t* dst = op + row * d;
      for (int64_t j = 0; j < d; ++j) dst[j] += src[j] * scale;
    }
  });
  return out;
}

namespace {

// The bag of each index: the last bag whose offset is at most its position.
std::vector<int64_t> bagOfEachIndex(const Tensor& offsets, int64_t bags, int64_t count) {
  Tensor off = contiguous(to(offsets, ScalarType::Long));
  const int64_t* op = off.data<int64_t>();
  const int64_t n = std::min<int64_t>(bags, off.numel());
  std::vector<int64_t> bag(static_cast<size_t>(count), -1);
  int64_t b = 0;
  for (int64_t i = 0; i < count; ++i) {
    while (b + 1 < n && op[b + 1] <= i) ++b;
    if (n > 0 && op[b] <= i) bag[static_cast<size_t>(i)] = b;
  }
  return bag;
}

}  // namespace

Tensor embeddingBagBackward(const Tensor& grad, const Tensor& indices, const Tensor& offsets, const Tensor& bag_size,
                            const Tensor& max_indices, int64_t num_weights, bool scale_grad_by_freq, int64_t mode,
                            const std::optional<Tensor>& per_sample_weights, int64_t padding_idx) {
  KILN_CHECK(grad.dim() == 2, "embedding_bag backward: expected a 2-d gradient");
  const int64_t bags = grad.size(0), d = grad.size(1);
  Tensor g = contiguous(grad);
  Tensor out = zeros({num_weights, d}, grad.dtype());
  if (mode == 2) {
    Tensor mi = contiguous(to(max_indices, ScalarType::Long));
    Tensor sizes = contiguous(to(bag_size, ScalarType::Long));
    const int64_t* sp = sizes.data<int64_t>();
    const int64_t known = sizes.numel();
    KILN_DISPATCH_FLOATING_TYPES(out.dtype(), "embedding_bag_backward", [&] {
      const scalar_t* gp = g.data<scalar_t>();
      const int64_t* mp = mi.data<int64_t>();
      scalar_t* o = out.data<scalar_t>();
      for (int64_t b = 0; b < bags; ++b) {
        if (b < known && sp[b] == 0) continue;  // an empty bag read no row
        for (int64_t j = 0; j < d; ++j) {
          const int64_t row = mp[b * d + j];
          if (row >= 0 && row < num_weights && row != padding_idx) o[row * d + j] += gp[b * d + j];
        }
      }
    });
    return out;
  }
  Tensor idx = contiguous(to(indices, ScalarType::Long));
  const int64_t count = idx.numel();
  const int64_t* ip = idx.data<int64_t>();
  std::vector<int64_t> bag = bagOfEachIndex(offsets, bags, count);
  std::vector<int64_t> counts;
  if (scale_grad_by_freq) {
    counts.assign(static_cast<size_t>(num_weights), 0);
    for (int64_t i = 0; i < count; ++i)
      if (ip[i] >= 0 && ip[i] < num_weights) ++counts[static_cast<size_t>(ip[i])];
  }
  Tensor sizes = contiguous(to(bag_size, ScalarType::Long));
  Tensor psw = per_sample_weights ? contiguous(to(*per_sample_weights, grad.dtype())) : Tensor();
  KILN_DISPATCH_FLOATING_TYPES(out.dtype(), "embedding_bag_backward", [&] {
    const scalar_t* gp = g.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    const scalar_t* wp = psw.defined() ? psw.data<scalar_t>() : nullptr;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t row = ip[i], b = bag[static_cast<size_t>(i)];
      if (b < 0 || row == padding_idx) continue;
      KILN_CHECK_INDEX(row >= 0 && row < num_weights, "index out of range in self");
      scalar_t scale = wp ? wp[i] : scalar_t(1);
      if (mode == 1) {
        const int64_t n = sizes.numel() > b ? sizes.data<int64_t>()[b] : 1;
        scale /= static_cast<scalar_t>(std::max<int64_t>(n, 1));
      }
      if (scale_grad_by_freq) scale /= static_cast<scalar_t>(counts[static_cast<size_t>(row)]);
      for (int64_t j = 0; j < d; ++j) o[row * d + j] += gp[b * d + j] * scale;
    }
  });
  return out;
}

Tensor embeddingBagPerSampleWeightsBackward(const Tensor& grad, const Tensor& weight, const Tensor& indices,
                                            const Tensor& offsets, int64_t mode, int64_t padding_idx) {
  KILN_CHECK(mode == 0,
             "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
             "mode='sum'");
  const int64_t bags = grad.size(0), d = grad.size(1);
  Tensor idx = contiguous(to(indices, ScalarType::Long));
  const int64_t count = idx.numel();
  const int64_t* ip = idx.data<int64_t>();
  std::vector<int64_t> bag = bagOfEachIndex(offsets, bags, count);
  Tensor g = contiguous(grad), w = contiguous(to(weight, grad.dtype()));
  Tensor out = zeros({count}, grad.dtype());
  KILN_DISPATCH_FLOATING_TYPES(out.dtype(), "embedding_bag_per_sample_weights_backward", [&] {
    const scalar_t* gp = g.data<scalar_t>();
    const scalar_t* wp = w.data<scalar_t>();
    scalar_t* o = out.data<scalar_t>();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t row = ip[i], b = bag[static_cast<size_t>(i)];
      if (b < 0 || row == padding_idx) continue;
      scalar_t sum = 0;
      for (int64_t j = 0; j < d; ++j) sum += gp[b * d + j] * wp[row * d + j];
      o[i] = sum;
    }
  });
  return out;
}

}  // namespace kiln
