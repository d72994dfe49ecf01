// var, std, var_mean, std_mean, in two passes over each output's elements
// (mean, then squared deviations), both accumulated in double: more accurate
// than a one-pass update, and within rounding of PyTorch's results.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/tensor/kernels/reduce_utils.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/reduce.h"

namespace kiln {
namespace {

constexpr int64_t kChains = 4;  // independent accumulators, for instruction-level parallelism

template <typename T, typename F>
double sumOf(const T* x, int64_t n, const F& f) {
  double acc[kChains] = {};
  int64_t i = 0;
  for (; i + kChains <= n; i += kChains) {
    for (int64_t j = 0; j < kChains; ++j) acc[j] += f(static_cast<double>(x[i + j]));
  }
  for (; i < n; ++i) acc[0] += f(static_cast<double>(x[i]));
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

constexpr int64_t kColumns = 256;  // lines along an inner dim reduced together

// Fills `variance` (the std when `take_sqrt`) and, when defined, `mean`:
// contiguous tensors of the keepdim shape.
void moments(const Tensor& self, const detail::DimMask& mask, int64_t correction, bool take_sqrt,
             const Tensor& variance, const Tensor& mean) {
  const detail::ReducedBlock b = detail::reducedBlock(self, mask);
  const int64_t n = b.n, inner = b.inner;
  const int64_t blocks = (inner + kColumns - 1) / kColumns;
  const double divisor = std::max<double>(0.0, static_cast<double>(n - correction));
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "var", [&] {
    using T = scalar_t;
    const T* x = b.data.data<T>();
    T* var_out = variance.data<T>();
    T* mean_out = mean.defined() ? mean.data<T>() : nullptr;
    auto finish = [&](int64_t index, double m, double m2) {
      // No elements: NaN whatever the correction (PyTorch fills empty reductions
      // with NaN before dividing, so correction -1's divisor 1 does not give 0).
      const double v = n == 0 ? std::numeric_limits<double>::quiet_NaN() : m2 / divisor;
      var_out[index] = static_cast<T>(take_sqrt ? std::sqrt(v) : v);
      if (mean_out) mean_out[index] = static_cast<T>(m);
    };
    const int64_t task_elems = std::max<int64_t>(1, n * std::min(inner, kColumns));
    parallelFor(0, b.outer * blocks, std::max<int64_t>(1, kGrainSize / task_elems), [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t o = t / blocks, j0 = t % blocks * kColumns, w = std::min(kColumns, inner - j0);
        const T* base = x + o * n * inner + j0;
        if (inner == 1) {
          const double m = sumOf(base, n, [](double v) { return v; }) / static_cast<double>(n);
          finish(o, m, sumOf(base, n, [m](double v) { return (v - m) * (v - m); }));
          continue;
        }
        // Lines along an inner dim: accumulate whole rows of w columns at a time.
        double means[kColumns] = {}, m2[kColumns] = {};
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < w; ++j) means[j] += static_cast<double>(base[i * inner + j]);
        }
        for (int64_t j = 0; j < w; ++j) means[j] /= static_cast<double>(n);
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < w; ++j) {
            const double d = static_cast<double>(base[i * inner + j]) - means[j];
            m2[j] += d * d;
          }
        }
        for (int64_t j = 0; j < w; ++j) finish(o * inner + j0 + j, means[j], m2[j]);
      }
    });
  });
}

std::tuple<Tensor, Tensor> momentsImpl(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction,
                                       bool keepdim, bool take_sqrt, bool with_mean) {
  KILN_CHECK(isFloatingType(self.dtype()), "std and var only support floating point and complex dtypes, got ",
             scalarTypeShortName(self.dtype()));
  const detail::DimMask mask = detail::reductionMask(dims, self.dim());
  const DimVector shape = detail::reducedShape(self.sizes(), mask, true);
  Tensor variance = empty(shape, self.dtype());
  Tensor mean = with_mean ? empty(shape, self.dtype()) : Tensor();
  moments(self, mask, correction.value_or(1), take_sqrt, variance, mean);
  return {detail::dropReducedDims(variance, mask, keepdim),
          with_mean ? detail::dropReducedDims(mean, mask, keepdim) : Tensor()};
}

Tensor& momentOut(const char* op, const Tensor& result, Tensor& out) {
  KILN_CHECK(isFloatingType(out.dtype()), op, "(): expected a floating point out tensor, got ",
             scalarTypeShortName(out.dtype()));
  return detail::assignOut(out, result);
}

}  // namespace

Tensor var(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction, bool keepdim) {
  return std::get<0>(momentsImpl(self, dims, correction, keepdim, false, false));
}

Tensor stdDev(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction, bool keepdim) {
  return std::get<0>(momentsImpl(self, dims, correction, keepdim, true, false));
}

Tensor& varOut(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction, bool keepdim, Tensor& out) {
  return momentOut("var", var(self, dims, correction, keepdim), out);
}

Tensor& stdDevOut(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction, bool keepdim, Tensor& out) {
  return momentOut("std", stdDev(self, dims, correction, keepdim), out);
}

std::tuple<Tensor, Tensor> varMean(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction,
                                   bool keepdim) {
  return momentsImpl(self, dims, correction, keepdim, false, true);
}

std::tuple<Tensor, Tensor> stdMean(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction,
                                   bool keepdim) {
  return momentsImpl(self, dims, correction, keepdim, true, true);
}

std::tuple<Tensor&, Tensor&> varMeanOut(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction,
                                        bool keepdim, Tensor& var_out, Tensor& mean_out) {
  auto [v, m] = varMean(self, dims, correction, keepdim);
  return {detail::assignOut(var_out, v), detail::assignOut(mean_out, m)};
}

std::tuple<Tensor&, Tensor&> stdMeanOut(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction,
                                        bool keepdim, Tensor& std_out, Tensor& mean_out) {
  auto [s, m] = stdMean(self, dims, correction, keepdim);
  return {detail::assignOut(std_out, s), detail::assignOut(mean_out, m)};
}

}  // namespace kiln
