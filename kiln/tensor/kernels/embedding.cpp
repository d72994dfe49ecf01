// Embedding lookups. Rows are copied (embedding) or accumulated in the
// weight's type in index order (embedding_bag), so sums match PyTorch's
// bit for bit; bags and lookups are spread over threads above a grain.
#include "kiln/tensor/embedding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

// Indices as a contiguous int64 tensor (torch accepts Long and Int).
Tensor longIndices(const Tensor& indices, const char* arg, const char* op) {
  KILN_CHECK(indices.dtype() == ScalarType::Long || indices.dtype() == ScalarType::Int,
             "Expected tensor for argument #1 '", arg,
             "' to have one of the following scalar types: Long, Int; but got ",
             indices.dtype() == ScalarType::Float    ? "torch.FloatTensor"
             : indices.dtype() == ScalarType::Double ? "torch.DoubleTensor"
                                                     : std::string(scalarTypeName(indices.dtype())),
             " instead (while checking arguments for ", op, ")");
  return contiguous(to(indices, ScalarType::Long));
}

// y += row and y += s * row over a row: separate, unaliased loops, so they vectorize.
template <typename T>
void addRow(T* __restrict y, const T* __restrict row, int64_t dim) {
  for (int64_t j = 0; j < dim; ++j) y[j] += row[j];
}

template <typename T>
void addScaledRow(T* __restrict y, const T* __restrict row, T s, int64_t dim) {
  for (int64_t j = 0; j < dim; ++j) y[j] += s * row[j];
}

constexpr int64_t kPrefetchAhead = 4;

template <typename T>
void prefetchRow(const T* row, int64_t dim) {
  const char* p = reinterpret_cast<const char*>(row);
  const int64_t bytes = dim * static_cast<int64_t>(sizeof(T));
  for (int64_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx) {
  (void)padding_idx;  // only the gradient skips the padding row
  KILN_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  const Tensor idx = longIndices(indices, "indices", "embedding");
  const int64_t rows = weight.size(0), dim = weight.size(1), count = idx.numel();
  const int64_t* ip = idx.data<int64_t>();
  for (int64_t i = 0; i < count; ++i) KILN_CHECK_INDEX(ip[i] >= 0 && ip[i] < rows, "index out of range in self");
  DimVector out_shape(indices.sizes().begin(), indices.sizes().end());
  out_shape.push_back(dim);
  Tensor out = empty(out_shape, weight.dtype());
  if (out.numel() == 0) return out;
  const Tensor w = contiguous(weight);
  const size_t row_bytes = static_cast<size_t>(dim) * w.itemsize();
  const char* src = static_cast<const char*>(w.rawData());
  char* dst = static_cast<char*>(out.rawData());
  parallelFor(0, count, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, dim)), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      std::memcpy(dst + static_cast<size_t>(i) * row_bytes, src + static_cast<size_t>(ip[i]) * row_bytes, row_bytes);
    }
  });
  return out;
}

Tensor& embeddingRenorm_(Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  KILN_CHECK(self.dim() == 2, "embedding_renorm_(): expected self to be 2-D, got ", self.dim(), "-D");
  const Tensor idx = longIndices(indices, "indices", "embedding_renorm_");
  const int64_t rows = self.size(0), dim = self.size(1);
  const int64_t* ip = idx.data<int64_t>();
  std::set<int64_t> unique;
  for (int64_t i = 0; i < idx.numel(); ++i) {
    KILN_CHECK_INDEX(ip[i] >= 0 && ip[i] < rows, "index out of range in self");
    unique.insert(ip[i]);
  }
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "embedding_renorm_", [&] {
    using T = scalar_t;
    const int64_t s0 = self.stride(0), s1 = self.stride(1);
    T* base = static_cast<T*>(self.rawData());
    for (int64_t r : unique) {
      T* row = base + r * s0;
      double norm = 0;
      if (norm_type == 1) {
        for (int64_t j = 0; j < dim; ++j) norm += std::abs(static_cast<double>(row[j * s1]));
      } else if (norm_type == 2) {
        for (int64_t j = 0; j < dim; ++j) norm += static_cast<double>(row[j * s1]) * static_cast<double>(row[j * s1]);
        norm = std::sqrt(norm);
      } else if (std::isinf(norm_type)) {
        for (int64_t j = 0; j < dim; ++j) norm = std::max(norm, std::abs(static_cast<double>(row[j * s1])));
      } else {
        for (int64_t j = 0; j < dim; ++j) norm += std::pow(std::abs(static_cast<double>(row[j * s1])), norm_type);
        norm = std::pow(norm, 1.0 / norm_type);
      }
      if (norm > max_norm) {
        const T scale = static_cast<T>(max_norm / (norm + 1e-7));
        for (int64_t j = 0; j < dim; ++j) row[j * s1] *= scale;
      }
    }
  });
  return self;
}

std::tuple<Tensor, Tensor, Tensor, Tensor> embeddingBag(const Tensor& weight, const Tensor& indices,
                                                        const Tensor& offsets, int64_t mode,
                                                        const std::optional<Tensor>& per_sample_weights,
                                                        bool include_last_offset, int64_t padding_idx) {
  KILN_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  KILN_CHECK(indices.dim() == 1, "Expected 1-dimensional tensor, but got ", indices.dim(),
             "-dimensional tensor for argument #1 'indices' (while checking arguments for embedding_bag)");
  KILN_CHECK(offsets.dim() == 1, "Expected 1-dimensional tensor, but got ", offsets.dim(),
             "-dimensional tensor for argument #1 'offsets' (while checking arguments for embedding_bag)");
  KILN_CHECK(mode >= 0 && mode <= 2, "embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got ", mode);
  KILN_CHECK(
      isFloatingType(weight.dtype()) && weight.dtype() != ScalarType::Half && weight.dtype() != ScalarType::BFloat16,
      "\"embedding_bag_cpu\" not implemented for '", scalarTypeShortName(weight.dtype()), "'");
  const bool weighted = per_sample_weights && per_sample_weights->defined();
  if (weighted) {
    KILN_CHECK(mode == 0, "embedding_bag: per_sample_weights only supported with mode='sum'");
    KILN_CHECK(per_sample_weights->dim() == 1 && per_sample_weights->numel() == indices.numel(),
               "embedding_bag: Expected per_sample_weights to have the same shape as indices, got ",
               shapeString(per_sample_weights->sizes()), " and ", shapeString(indices.sizes()));
    KILN_CHECK(per_sample_weights->dtype() == weight.dtype(), "expected scalar type ",
               scalarTypeShortName(weight.dtype()), " but found ", scalarTypeShortName(per_sample_weights->dtype()));
  }
  const Tensor idx = longIndices(indices, "indices", "embedding_bag");
  const Tensor offs = longIndices(offsets, "offsets", "embedding_bag");
  const int64_t count = idx.numel(), rows = weight.size(0), dim = weight.size(1);
  const int64_t* ip = idx.data<int64_t>();
  const int64_t* op = offs.data<int64_t>();
  const int64_t n_offsets = offs.numel();
  if (n_offsets > 0) {
    KILN_CHECK(op[0] == 0,
               "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
               "However, got ",
               op[0]);
    KILN_CHECK(op[n_offsets - 1] <= count, "offsets[-1] can not be greater than input's length ", count,
               " but got offsets[-1] of ", op[n_offsets - 1]);
  }
  for (int64_t b = 0; b < n_offsets; ++b) {
    KILN_CHECK(op[b] >= 0, "embedding_bag: offsets must not be negative, got offsets[", b, "] = ", op[b]);
  }
  for (int64_t i = 0; i < count; ++i) {
    KILN_CHECK_INDEX(ip[i] >= 0 && ip[i] < rows,
                     "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be ", ip[i]);
  }
  const int64_t bags = include_last_offset ? std::max<int64_t>(0, n_offsets - 1) : n_offsets;
  auto bagStart = [&](int64_t b) { return std::min(op[b], count); };
  auto bagEnd = [&](int64_t b) { return b + 1 < n_offsets ? std::min(op[b + 1], count) : count; };

  Tensor out = zeros({bags, dim}, weight.dtype());
  Tensor bag_size = zeros({bags}, ScalarType::Long);
  Tensor offset2bag = mode == 0 ? empty({0}, ScalarType::Long) : zeros({count}, ScalarType::Long);
  Tensor max_indices = mode == 2 ? zeros({bags, dim}, ScalarType::Long) : zeros({bags}, ScalarType::Long);
  const Tensor w = contiguous(weight);
  const Tensor psw = weighted ? contiguous(*per_sample_weights) : Tensor();
  int64_t* bs = bag_size.data<int64_t>();
  int64_t* o2b = mode == 0 ? nullptr : offset2bag.data<int64_t>();
  int64_t* mi = max_indices.data<int64_t>();
  KILN_DISPATCH_FLOATING_TYPES(weight.dtype(), "embedding_bag", [&] {
    using T = scalar_t;
    const T* wp = w.data<T>();
    const T* pp = weighted ? psw.data<T>() : nullptr;
    T* yp = out.data<T>();
    parallelFor(0, bags, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, dim * 4)), [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) {
        T* y = yp + b * dim;
        int64_t n = 0;
        const int64_t begin = bagStart(b), end = bagEnd(b);
        for (int64_t i = begin; i < end; ++i) {
          if (o2b) o2b[i] = b;
          // Rows are scattered over the table: start loading a later one.
          if (i + kPrefetchAhead < count) prefetchRow(wp + ip[i + kPrefetchAhead] * dim, dim);
          const int64_t r = ip[i];
          if (r == padding_idx) continue;
          const T* row = wp + r * dim;
          if (mode == 2) {
            int64_t* m = mi + b * dim;
            if (n == 0) {
              for (int64_t j = 0; j < dim; ++j) {
                y[j] = row[j];
                m[j] = r;
              }
            } else {
              for (int64_t j = 0; j < dim; ++j) {
                if (row[j] > y[j]) {
                  y[j] = row[j];
                  m[j] = r;
                }
              }
            }
          } else if (pp) {
            addScaledRow(y, row, pp[i], dim);
          } else {
            addRow(y, row, dim);
          }
          ++n;
        }
        if (mode == 1 && n > 0) {
          const T divisor = static_cast<T>(n);
          for (int64_t j = 0; j < dim; ++j) y[j] /= divisor;
        }
        if (mode != 0) bs[b] = n;
        if (mode == 1) mi[b] = n;
      }
    });
  });
  return {out, offset2bag, bag_size, max_indices};
}

}  // namespace kiln
