// softmax, log_softmax and logsumexp. Each works on lines along one dim:
// the line's max, then exp(x - max) and its sum, so nothing overflows.
// Contiguous lines (the last dim) vectorize along the line with SLEEF's exp;
// lines along an inner dim vectorize across the neighbouring lines instead.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/reduce_utils.h"
#include "kiln/tensor/kernels/simd.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/reduce.h"

namespace kiln {
namespace {

using kernels::Lane;
using kernels::Simd;

// ---------------------------------------------------------------------------
// Contiguous lines

// May miss a NaN, which is harmless here: a NaN anywhere in a line still
// reaches the sum of exps and so every result of the line.
template <typename T>
T lineMax(const T* x, int64_t n) {
  using V = Simd<T>;
  T m = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  if (n >= V::kSize) {
    V acc = V::load(x);
    for (i = V::kSize; i + V::kSize <= n; i += V::kSize) acc = V::max(acc, V::load(x + i));
    m = acc.reduceMax();
  }
  for (; i < n; ++i) m = m < x[i] ? x[i] : m;
  return m;
}

// The sum of exp(x - shift); the exps are also written to `y` when it is not null.
template <typename T>
T lineSumExp(const T* x, T* y, int64_t n, T shift) {
  using V = Simd<T>;
  const V vshift = V::broadcast(shift);
  V acc = V::broadcast(0);
  int64_t i = 0;
  for (; i + V::kSize <= n; i += V::kSize) {
    const V e = (V::load(x + i) - vshift).exp();
    if (y) e.store(y + i);
    acc = acc + e;
  }
  T s = acc.sum();
  for (; i < n; ++i) {
    const T e = std::exp(x[i] - shift);
    if (y) y[i] = e;
    s += e;
  }
  return s;
}

template <typename T>
void softmaxLine(const T* x, T* y, int64_t n, bool log) {
  const T m = lineMax(x, n);
  if (log) {
    // (x - max) - log(sum), in that order: folding max into the shift first
    // would round away the low bits of results far below max.
    const T log_sum = std::log(lineSumExp<T>(x, nullptr, n, m));
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
  } else {
    const T scale = T(1) / lineSumExp(x, y, n, m);
    for (int64_t i = 0; i < n; ++i) y[i] *= scale;
  }
}

// ---------------------------------------------------------------------------
// Lines along an inner dim: V::kSize neighbouring lines at once. The lines
// start at x and y, have n elements, `stride` apart.

template <typename V, typename T>
void softmaxLines(const T* x, T* y, int64_t n, int64_t stride, bool log) {
  V m = V::load(x);
  for (int64_t i = 1; i < n; ++i) m = V::max(m, V::load(x + i * stride));
  V s = V::broadcast(0);
  for (int64_t i = 0; i < n; ++i) {
    const V e = (V::load(x + i * stride) - m).exp();
    if (!log) e.store(y + i * stride);
    s = s + e;
  }
  if (log) {
    const V log_sum = s.log();
    for (int64_t i = 0; i < n; ++i) ((V::load(x + i * stride) - m) - log_sum).store(y + i * stride);
  } else {
    const V scale = V::broadcast(1) / s;
    for (int64_t i = 0; i < n; ++i) (V::load(y + i * stride) * scale).store(y + i * stride);
  }
}

Tensor softmaxImpl(const char* op, const Tensor& self, int64_t dim, OptionalDtype dtype, bool log) {
  const int64_t d = wrapDim(dim, self.dim());
  const Tensor in = contiguous(dtype ? to(self, *dtype) : self);
  KILN_CHECK(isFloatingType(in.dtype()), op, ": not implemented for '", scalarTypeShortName(in.dtype()), "'");
  Tensor out = empty(in.sizes(), in.dtype());
  if (in.numel() == 0) return out;
  const int64_t n = in.dim() == 0 ? 1 : in.sizes()[d];
  int64_t inner = 1;
  for (int64_t k = d + 1; k < in.dim(); ++k) inner *= in.sizes()[k];
  const int64_t outer = in.numel() / (n * inner);
  KILN_DISPATCH_FLOATING_TYPES(in.dtype(), op, [&] {
    using T = scalar_t;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    const int64_t grain = std::max<int64_t>(1, kGrainSize / (n * inner));
    parallelFor(0, outer, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) {
        const T* xo = x + o * n * inner;
        T* yo = y + o * n * inner;
        if (inner == 1) {
          softmaxLine(xo, yo, n, log);
          continue;
        }
        using V = Simd<T>;
        int64_t j = 0;
        for (; j + V::kSize <= inner; j += V::kSize) softmaxLines<V>(xo + j, yo + j, n, inner, log);
        for (; j < inner; ++j) softmaxLines<Lane<T>>(xo + j, yo + j, n, inner, log);
      }
    });
  });
  return out;
}

Tensor& softmaxOutImpl(const char* op, const Tensor& self, int64_t dim, OptionalDtype dtype, bool log, Tensor& out) {
  detail::checkOutDtype(out, dtype.value_or(self.dtype()));
  return detail::assignOut(out, softmaxImpl(op, self, dim, dtype, log));
}

}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, OptionalDtype dtype) {
  return softmaxImpl("softmax", self, dim, dtype, false);
}

Tensor logSoftmax(const Tensor& self, int64_t dim, OptionalDtype dtype) {
  return softmaxImpl("log_softmax", self, dim, dtype, true);
}

Tensor& softmaxOut(const Tensor& self, int64_t dim, OptionalDtype dtype, Tensor& out) {
  return softmaxOutImpl("softmax", self, dim, dtype, false, out);
}

Tensor& logSoftmaxOut(const Tensor& self, int64_t dim, OptionalDtype dtype, Tensor& out) {
  return softmaxOutImpl("log_softmax", self, dim, dtype, true, out);
}

Tensor logsumexp(const Tensor& self, IntArrayRef dims, bool keepdim) {
  // PyTorch 1.13 reduces every dim for an empty list only where the shapes
  // happen to line up (a 0-dim input, or keepdim) and raises otherwise.
  KILN_CHECK(!dims.empty() || keepdim || self.dim() == 0, "logsumexp(): an empty dim list needs keepdim=True, got ",
             "an input of shape ", shapeString(self.sizes()));
  const Tensor in = isIntegralType(self.dtype(), true) ? to(self, defaultFloatType()) : self;
  const detail::DimMask mask = detail::reductionMask(dims, in.dim());
  const Tensor lines = detail::reducedDimsLast(in, mask);
  Tensor out = empty(detail::reducedShape(in.sizes(), mask, true), in.dtype());
  const int64_t outputs = lines.sizes()[0], n = lines.sizes()[1];
  KILN_DISPATCH_FLOATING_TYPES(in.dtype(), "logsumexp", [&] {
    using T = scalar_t;
    const T* x = lines.data<T>();
    T* y = out.data<T>();
    parallelFor(0, outputs, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n)), [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o) {
        T m = lineMax(x + o * n, n);
        if (std::isinf(m)) m = 0;  // all -inf stays -inf, any +inf gives +inf
        y[o] = std::log(lineSumExp<T>(x + o * n, nullptr, n, m)) + m;
      }
    });
  });
  return detail::dropReducedDims(out, mask, keepdim);
}

Tensor& logsumexpOut(const Tensor& self, IntArrayRef dims, bool keepdim, Tensor& out) {
  KILN_CHECK(isFloatingType(out.dtype()), "logsumexp(): Expected floating point type for result tensor, but got: ",
             scalarTypeShortName(out.dtype()));
  return detail::assignOut(out, logsumexp(self, dims, keepdim));
}

}  // namespace kiln
