// The p-norm of the difference of two rows, for every pair cdist and pdist
// ask for, and its gradient, without materializing the differences (a
// [r1, r2, c] tensor). Sums accumulate in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

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

// d ||a - b||_p / d a_k times grad, for the coordinate difference d = a_k - b_k.
double coordinateGrad(double d, double dist, double grad, double p) {
  const auto sign = [](double x) { return static_cast<double>((x > 0) - (x < 0)); };
  if (p == 0) return 0;
  if (p == 1) return grad * sign(d);
  if (std::isinf(p)) return std::abs(d) == dist ? grad * sign(d) : 0;
  if (dist == 0) return 0;
  if (p == 2) return grad * d / dist;
  if (p < 2) return d == 0 && p < 1 ? 0 : sign(d) * std::pow(std::abs(d), p - 1) * grad / std::pow(dist, p - 1);
  return d * std::pow(std::abs(d), p - 2) * grad / std::pow(dist, p - 1);
}

// Adds grad * d dist(a, b) / d a to acc[0, c).
template <typename T>
void addRowGrad(double* acc, const T* a, const T* b, int64_t c, double dist, double grad, double p) {
  for (int64_t k = 0; k < c; ++k) acc[k] += coordinateGrad(static_cast<double>(a[k]) - b[k], dist, grad, p);
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

Tensor rowDistancesBackward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p, const Tensor& dist) {
  const Tensor a = contiguous(x1), b = contiguous(x2), g = contiguous(grad), d = contiguous(dist);
  const int64_t batches = a.sizes()[0], r1 = a.sizes()[1], r2 = b.sizes()[1], c = a.sizes()[2];
  KILN_CHECK(g.numel() == batches * r1 * r2 && d.numel() == g.numel(), "_cdist_backward: expected grad and cdist of ",
             batches * r1 * r2, " elements, got ", g.numel(), " and ", d.numel());
  KILN_CHECK(g.dtype() == a.dtype() && d.dtype() == a.dtype(), "_cdist_backward: grad and cdist must have x1's dtype");
  Tensor result = empty(a.sizes(), a.dtype());
  KILN_DISPATCH_FLOATING_TYPES(a.dtype(), "_cdist_backward", [&] {
    using T = scalar_t;
    const T* xa = a.data<T>();
    const T* xb = b.data<T>();
    const T* g_data = g.data<T>();
    const T* d_data = d.data<T>();
    T* out = result.data<T>();
    const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(r2 * c, 1));
    parallelFor(0, batches * r1, grain, [&](int64_t lo, int64_t hi) {
      std::vector<double> acc(static_cast<size_t>(c));
      for (int64_t row = lo; row < hi; ++row) {
        std::fill(acc.begin(), acc.end(), 0.0);
        const T* right = xb + row / r1 * r2 * c;
        for (int64_t j = 0; j < r2; ++j) {
          addRowGrad(acc.data(), xa + row * c, right + j * c, c, d_data[row * r2 + j], g_data[row * r2 + j], p);
        }
        std::copy(acc.begin(), acc.end(), out + row * c);
      }
    });
  });
  return result;
}

Tensor rowPairDistancesBackward(const Tensor& grad, const Tensor& x, double p, const Tensor& dist) {
  const Tensor in = contiguous(x), g = contiguous(grad), d = contiguous(dist);
  const int64_t n = in.sizes()[0], c = in.sizes()[1];
  KILN_CHECK(g.numel() == n * (n - 1) / 2 && d.numel() == g.numel(), "_pdist_backward: expected grad and pdist of ",
             n * (n - 1) / 2, " elements, got ", g.numel(), " and ", d.numel());
  KILN_CHECK(g.dtype() == in.dtype() && d.dtype() == in.dtype(),
             "_pdist_backward: grad and pdist must have self's dtype");
  Tensor result = empty(in.sizes(), in.dtype());
  KILN_DISPATCH_FLOATING_TYPES(in.dtype(), "_pdist_backward", [&] {
    using T = scalar_t;
    const T* data = in.data<T>();
    const T* g_data = g.data<T>();
    const T* d_data = d.data<T>();
    T* out = result.data<T>();
    // Row i's gradient sums over every pair it is in; the gradient is odd in
    // the difference, so each pair counts as (i, j) seen from row i.
    const auto pair = [n](int64_t i, int64_t j) { return i * (2 * n - i - 1) / 2 + j - i - 1; };
    parallelFor(0, n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n * c, 1)), [&](int64_t lo, int64_t hi) {
      std::vector<double> acc(static_cast<size_t>(c));
      for (int64_t i = lo; i < hi; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < n; ++j) {
          if (j == i) continue;
          const int64_t k = j > i ? pair(i, j) : pair(j, i);
          addRowGrad(acc.data(), data + i * c, data + j * c, c, d_data[k], g_data[k], p);
        }
        std::copy(acc.begin(), acc.end(), out + i * c);
      }
    });
  });
  return result;
}

}  // namespace kiln
