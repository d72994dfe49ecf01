// The p-norm of the difference of two rows, for every pair cdist and pdist
// ask for, without materializing the differences. Sums accumulate in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/distance.h"
#include "kiln/tensor/parallel.h"

namespace kiln {
namespace {

// One reduction per p: what each coordinate adds and how the total ends.
template <typename T>
T rowDistance(const T* a, const T* b, int64_t c, double p) {
  double total = 0;
  if (p == 0) {
    for (int64_t k = 0; k < c; ++k) total += a[k] != b[k];
    return static_cast<T>(total);
  }
  if (std::isinf(p)) {
    for (int64_t k = 0; k < c; ++k) total = std::max(total, std::abs(static_cast<double>(a[k]) - b[k]));
    return static_cast<T>(total);
  }
  if (p == 1) {
    for (int64_t k = 0; k < c; ++k) total += std::abs(static_cast<double>(a[k]) - b[k]);
    return static_cast<T>(total);
  }
  if (p == 2) {
    for (int64_t k = 0; k < c; ++k) {
      const double d = static_cast<double>(a[k]) - b[k];
      total += d * d;
    }
    return static_cast<T>(std::sqrt(total));
  }
  for (int64_t k = 0; k < c; ++k) total += std::pow(std::abs(static_cast<double>(a[k]) - b[k]), p);
  return static_cast<T>(std::pow(total, 1.0 / p));
}

}  // namespace

Tensor rowDistances(const Tensor& x1, const Tensor& x2, double p) {
  const Tensor a = contiguous(x1), b = contiguous(x2);
  const int64_t batches = a.sizes()[0], r1 = a.sizes()[1], r2 = b.sizes()[1], c = a.sizes()[2];
  Tensor result = empty({batches, r1, r2}, a.dtype());
  KILN_DISPATCH_FLOATING_TYPES(a.dtype(), "cdist", [&] {
    using T = scalar_t;
    const T* xa = a.data<T>();
    const T* xb = b.data<T>();
    T* out = result.data<T>();
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(r2 * c, 1));
    parallelFor(0, batches * r1, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t row = lo; row < hi; ++row) {
        const T* left = xa + row * c;
        const T* right = xb + row / r1 * r2 * c;
        for (int64_t j = 0; j < r2; ++j) out[row * r2 + j] = rowDistance(left, right + j * c, c, p);
      }
    });
  });
  return result;
}

Tensor rowPairDistances(const Tensor& x, double p) {
  const Tensor in = contiguous(x);
  const int64_t n = in.sizes()[0], c = in.sizes()[1];
  Tensor result = empty({n * (n - 1) / 2}, in.dtype());
  KILN_DISPATCH_FLOATING_TYPES(in.dtype(), "pdist", [&] {
    using T = scalar_t;
    const T* data = in.data<T>();
    T* out = result.data<T>();
    parallelFor(0, n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * c, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        // Pairs (i, j > i) start after the n - 1 + n - 2 + ... + n - i pairs of the rows before i.
        T* row_out = out + i * (2 * n - i - 1) / 2;
        for (int64_t j = i + 1; j < n; ++j) row_out[j - i - 1] = rowDistance(data + i * c, data + j * c, c, p);
      }
    });
  });
  return result;
}

}  // namespace kiln
