// median, nanmedian, kthvalue, mode, cummax, cummin, logcumsumexp.
//
// The input is viewed as contiguous [outer, n, inner] lines along the dim
// (kiln/tensor/kernels/reduce_utils.h). Each selection copies its line to a
// buffer and runs the same algorithm over the same comparison as PyTorch's
// CPU kernel (std::nth_element for median, Sedgewick's quickselect for
// kthvalue, std::sort of (value, index) pairs for mode): where the order
// leaves ties or NaNs unordered, the element chosen then depends on the
// algorithm's steps, and only running the same steps picks the same one.
// Lines run in parallel.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/reduce_utils.h"
#include "kiln/tensor/order_stats.h"
#include "kiln/tensor/parallel.h"

namespace kiln {
namespace {

template <typename T>
bool isNan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

// The lines of a contiguous tensor along dim d: line l starts at start(l)
// and steps by `inner`.
struct Lines {
  int64_t count = 0, n = 1, inner = 1;
  int64_t start(int64_t line) const { return line / inner * n * inner + line % inner; }
};

Lines linesOf(const Tensor& contiguous_self, int64_t d) {
  Lines lines;
  lines.n = contiguous_self.dim() == 0 ? 1 : contiguous_self.sizes()[d];
  for (int64_t k = d + 1; k < contiguous_self.dim(); ++k) lines.inner *= contiguous_self.sizes()[k];
  lines.count = lines.n == 0 ? 0 : contiguous_self.numel() / lines.n;
  return lines;
}

// A per-thread buffer of `size` elements, reused from line to line.
template <typename E>
std::vector<E>& scratch(int64_t size) {
  thread_local std::vector<E> buffer;
  buffer.resize(static_cast<size_t>(size));
  return buffer;
}

// Runs `pick(line, n) -> (value, index)` on a scratch copy of every line of `self`
// along `dim`: one (value, index) per line, shaped as a reduction over dim.
// `op` names the op in errors; `dtype_name` is PyTorch's kernel name in its
// unsupported-dtype error.
template <typename Pick>
std::tuple<Tensor, Tensor> selectAlongDim(const char* op, const char* dtype_name, const Tensor& self, int64_t dim,
                                          bool keepdim, bool with_bool, const Pick& pick) {
  const int64_t d = wrapDim(dim, self.dim());
  const detail::DimMask mask = detail::reductionMask(std::optional<int64_t>(d), self.dim());
  detail::checkReducible(op, self, mask, true);
  KILN_CHECK(with_bool || self.dtype() != ScalarType::Bool, "\"", dtype_name, "\" not implemented for 'Bool'");
  const Tensor in = contiguous(self);
  const DimVector kept = detail::reducedShape(self.sizes(), mask, true);
  Tensor values = empty(kept, self.dtype());
  Tensor indices = empty(kept, ScalarType::Long);
  const Lines lines = linesOf(in, d);
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(in.dtype(), dtype_name, [&] {
    using T = scalar_t;
    const T* x = in.data<T>();
    T* v = values.data<T>();
    int64_t* idx = indices.data<int64_t>();
    parallelFor(0, lines.count, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(lines.n, 1)),
                [&](int64_t lo, int64_t hi) {
                  const auto line = std::make_unique_for_overwrite<T[]>(static_cast<size_t>(lines.n));
                  for (int64_t l = lo; l < hi; ++l) {
                    const T* src = x + lines.start(l);
                    for (int64_t i = 0; i < lines.n; ++i) line[i] = src[i * lines.inner];
                    auto [value, index] = pick(line.get(), lines.n);
                    v[l] = value;
                    idx[l] = index;
                  }
                });
  });
  return {detail::dropReducedDims(values, mask, keepdim), detail::dropReducedDims(indices, mask, keepdim)};
}

// PyTorch's median along a dim: the first NaN if any (median), else the
// element of rank (m - 1) / 2 among the m non-NaN ones, ties ordered by index.
template <typename T>
std::pair<T, int64_t> medianOfLine(const T* line, int64_t size, bool ignore_nan) {
  if (!ignore_nan) {
    const T* nan = std::find_if(line, line + size, isNan<T>);
    if (nan != line + size) return {*nan, nan - line};
  }
  std::vector<int64_t>& order = scratch<int64_t>(size);
  std::iota(order.begin(), order.end(), 0);
  const int64_t nans = ignore_nan ? std::count_if(line, line + size, isNan<T>) : 0;
  const auto nth = order.begin() + (size - nans - 1) / 2;
  std::nth_element(order.begin(), nth, order.end(), [&](int64_t i, int64_t j) {
    return line[i] < line[j] || (line[i] == line[j] && i < j) || (isNan(line[j]) && !isNan(line[i]));
  });
  return {line[*nth], *nth};
}

// Sedgewick's quickselect as PyTorch's kthvalue runs it: NaN above numbers;
// moves values and their indices together.
template <typename T>
std::pair<T, int64_t> kthOfLine(T* values, int64_t size, int64_t k) {
  std::vector<int64_t>& index = scratch<int64_t>(size);
  std::iota(index.begin(), index.end(), 0);
  const auto greater = [](T a, T b) { return (isNan(a) && !isNan(b)) || a > b; };
  const auto swap = [&](int64_t i, int64_t j) {
    std::swap(values[i], values[j]);
    std::swap(index[i], index[j]);
  };
  int64_t lo = 0, hi = size - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (greater(values[lo], values[hi])) swap(lo, hi);
      break;
    }
    // Median of three as the pivot, left at lo.
    swap((lo + hi) >> 1, lo + 1);
    if (greater(values[lo + 1], values[hi])) swap(lo + 1, hi);
    if (greater(values[lo], values[hi])) swap(lo, hi);
    if (greater(values[lo + 1], values[lo])) swap(lo + 1, lo);
    int64_t i = lo + 1, j = hi;
    const T pivot = values[lo];
    while (true) {
      do ++i;
      while (greater(pivot, values[i]));
      do --j;
      while (greater(values[j], pivot));
      if (j < i) break;
      swap(i, j);
    }
    swap(lo, j);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
  return {values[k], index[k]};
}

// PyTorch's mode: (value, index) pairs sorted by value with `<` (which
// leaves NaN unordered, so where NaNs land is std::sort's doing), then the
// longest run of equal values, the first such run on ties, reported with
// the index of its last element.
template <typename T>
std::pair<T, int64_t> modeOfLine(const T* line, int64_t size) {
  std::vector<std::pair<T, int64_t>>& items = scratch<std::pair<T, int64_t>>(size);
  for (int64_t i = 0; i < size; ++i) items[static_cast<size_t>(i)] = {line[i], i};
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::pair<T, int64_t> best{};
  int64_t run = 0, best_run = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    ++run;
    if (i + 1 == items.size() || items[i].first != items[i + 1].first) {
      if (run > best_run) {
        best = items[i];
        best_run = run;
      }
      run = 0;
    }
  }
  return best;
}

// cummax (kMax) or cummin: the running extremum along dim; a later equal
// value takes over (>= / <=), and a NaN takes over for good.
template <bool kMax>
std::tuple<Tensor, Tensor> cumulativeExtremum(const char* op, const Tensor& self, int64_t dim) {
  const int64_t d = wrapDim(dim, self.dim());
  const Tensor in = contiguous(self);
  Tensor values = empty(self.sizes(), self.dtype());
  Tensor indices = empty(self.sizes(), ScalarType::Long);
  const Lines lines = linesOf(in, d);
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(in.dtype(), op, [&] {
    using T = scalar_t;
    const T* x = in.data<T>();
    T* v = values.data<T>();
    int64_t* idx = indices.data<int64_t>();
    parallelFor(0, lines.count, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(lines.n, 1)),
                [&](int64_t lo, int64_t hi) {
                  for (int64_t l = lo; l < hi; ++l) {
                    const int64_t start = lines.start(l);
                    T best = x[start];
                    int64_t at = 0;
                    for (int64_t i = 0; i < lines.n; ++i) {
                      const T cur = x[start + i * lines.inner];
                      const bool wins = kMax ? cur >= best : cur <= best;
                      if (isNan(cur) || (!isNan(best) && wins)) {
                        best = cur;
                        at = i;
                      }
                      v[start + i * lines.inner] = best;
                      idx[start + i * lines.inner] = at;
                    }
                  }
                });
  });
  return {values, indices};
}

}  // namespace

Tensor median(const Tensor& self, bool ignore_nan) {
  KILN_CHECK(self.dtype() != ScalarType::Bool, "\"median_cpu\" not implemented for 'Bool'");
  // PyTorch 1.13: the median of nothing is NaN.
  if (self.numel() == 0) return to(scalarToTensor(Scalar(std::numeric_limits<double>::quiet_NaN())), self.dtype());
  const Tensor in = contiguous(self);
  Tensor result = empty({}, self.dtype());
  KILN_DISPATCH_ALL_TYPES(in.dtype(), "median_cpu", [&] {
    using T = scalar_t;
    std::vector<T> values(in.data<T>(), in.data<T>() + in.numel());
    const auto size = static_cast<int64_t>(values.size());
    // Unlike the dim form, PyTorch partitions the values themselves: which of
    // two equal zeros (0.0, -0.0) lands in the middle is std::nth_element's doing.
    if (!ignore_nan && std::any_of(values.begin(), values.end(), isNan<T>)) {
      *result.data<T>() = std::numeric_limits<T>::quiet_NaN();
      return;
    }
    const int64_t nans = ignore_nan ? std::count_if(values.begin(), values.end(), isNan<T>) : 0;
    const auto nth = values.begin() + (size - nans - 1) / 2;
    if (ignore_nan) {
      std::nth_element(values.begin(), nth, values.end(), [](T a, T b) { return a < b || (isNan(b) && !isNan(a)); });
    } else {
      std::nth_element(values.begin(), nth, values.end());
    }
    *result.data<T>() = *nth;
  });
  return result;
}

std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim, bool ignore_nan) {
  return selectAlongDim("median", "median_out", self, dim, keepdim, false,
                        [&](const auto* line, int64_t n) { return medianOfLine(line, n, ignore_nan); });
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  const int64_t d = wrapDim(dim, self.dim());
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[d];
  if (n > 0) {
    KILN_CHECK(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension ", d);
  }
  return selectAlongDim("kthvalue", "kthvalue_cpu", self, dim, keepdim, false,
                        [&](auto* line, int64_t n) { return kthOfLine(line, n, k - 1); });
}

std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim) {
  return selectAlongDim("mode", "mode_cpu", self, dim, keepdim, true,
                        [](const auto* line, int64_t n) { return modeOfLine(line, n); });
}

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  return cumulativeExtremum<true>("cummax", self, dim);
}

std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) {
  return cumulativeExtremum<false>("cummin", self, dim);
}

Tensor logcumsumexp(const Tensor& self, int64_t dim) {
  const int64_t d = wrapDim(dim, self.dim());
  KILN_CHECK(isFloatingType(self.dtype()), "\"logcumsumexp_out_cpu\" not implemented for '",
             scalarTypeShortName(self.dtype()), "'");
  const Tensor in = contiguous(self);
  Tensor result = empty(self.sizes(), self.dtype());
  const Lines lines = linesOf(in, d);
  KILN_DISPATCH_FLOATING_TYPES(in.dtype(), "logcumsumexp", [&] {
    using T = scalar_t;
    const T* x = in.data<T>();
    T* y = result.data<T>();
    // log(exp(a) + exp(b)) as PyTorch's kernel computes it, in T: the larger
    // plus log1p(exp(smaller - larger)); NaN propagates; equal infinities
    // (where that would give NaN) are their own sum.
    const auto logAddExp = [](T a, T acc) {
      const T lo = std::isnan(acc) ? acc : std::min(a, acc);
      const T hi = std::isnan(acc) ? acc : std::max(a, acc);
      if (lo != hi || std::isfinite(lo)) return static_cast<T>(std::log1p(std::exp(lo - hi)) + hi);
      return a;
    };
    parallelFor(0, lines.count, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(lines.n, 1)),
                [&](int64_t lo, int64_t hi) {
                  for (int64_t l = lo; l < hi; ++l) {
                    const int64_t start = lines.start(l);
                    T acc = -std::numeric_limits<T>::infinity();
                    for (int64_t i = 0; i < lines.n; ++i) {
                      acc = logAddExp(x[start + i * lines.inner], acc);
                      y[start + i * lines.inner] = acc;
                    }
                  }
                });
  });
  return result;
}

}  // namespace kiln
