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
// start at x (and y), have n elements, `stride` apart.

template <typename V, typename T>
V linesMax(const T* x, int64_t n, int64_t stride) {
  V m = V::broadcast(-std::numeric_limits<T>::infinity());
  for (int64_t i = 0; i < n; ++i) m = V::max(m, V::load(x + i * stride));
  return m;
}

// The sums of exp(x - shift); the exps are also written to `y` when it is not null.
template <typename V, typename T>
V linesSumExp(const T* x, T* y, int64_t n, int64_t stride, V shift) {
  V s = V::broadcast(0);
  for (int64_t i = 0; i < n; ++i) {
    const V e = (V::load(x + i * stride) - shift).exp();
    if (y) e.store(y + i * stride);
    s = s + e;
  }
  return s;
}

template <typename V, typename T>
void softmaxLines(const T* x, T* y, int64_t n, int64_t stride, bool log) {
  const V m = linesMax<V>(x, n, stride);
  const V s = linesSumExp<V>(x, log ? nullptr : y, n, stride, m);
  if (log) {
    const V log_sum = s.log();
    for (int64_t i = 0; i < n; ++i) ((V::load(x + i * stride) - m) - log_sum).store(y + i * stride);
  } else {
    const V scale = V::broadcast(1) / s;
    for (int64_t i = 0; i < n; ++i) (V::load(y + i * stride) * scale).store(y + i * stride);
  }
}

// Runs over the lines of a [outer, n, inner] block: row(o) for each line when
// they are contiguous (inner = 1), else group(V{}, o, j) for the lines j..j+V::kSize
// of block o, V being the widest vector type that fits.
template <typename T, typename Row, typename Group>
void forEachLine(const detail::ReducedBlock& b, const Row& row, const Group& group) {
  using V = Simd<T>;
  using W = kernels::Wide<V, 4>;
  parallelFor(0, b.outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, b.n * b.inner)),
              [&](int64_t lo, int64_t hi) {
                for (int64_t o = lo; o < hi; ++o) {
                  if (b.inner == 1) {
                    row(o);
                    continue;
                  }
                  int64_t j = 0;
                  for (; j + W::kSize <= b.inner; j += W::kSize) group(W{}, o, j);
                  for (; j + V::kSize <= b.inner; j += V::kSize) group(V{}, o, j);
                  for (; j < b.inner; ++j) group(Lane<T>{}, o, j);
                }
              });
}

Tensor softmaxImpl(const char* op, const Tensor& self, int64_t dim, OptionalDtype dtype, bool log) {
  const Tensor in = dtype ? to(self, *dtype) : self;
  KILN_CHECK(isFloatingType(in.dtype()), op, ": not implemented for '", scalarTypeShortName(in.dtype()), "'");
  detail::DimMask mask;
  mask.set(static_cast<size_t>(wrapDim(dim, in.dim())));
  const detail::ReducedBlock b = detail::reducedBlock(in, mask);
  Tensor out = empty(in.sizes(), in.dtype());
  if (in.numel() == 0) return out;
  KILN_DISPATCH_FLOATING_TYPES(in.dtype(), op, [&] {
    using T = scalar_t;
    const T* x = b.data.data<T>();
    T* y = out.data<T>();
    forEachLine<T>(
        b, [&](int64_t o) { softmaxLine(x + o * b.n, y + o * b.n, b.n, log); },
        [&](auto vec, int64_t o, int64_t j) {
          const int64_t start = o * b.n * b.inner + j;
          softmaxLines<decltype(vec)>(x + start, y + start, b.n, b.inner, log);
        });
  });
  return out;
}

// logsumexp shifts by the max, except that an infinite max shifts by 0: a line
// of -inf then gives -inf, and one with +inf gives +inf (PyTorch's rule).
template <typename T>
T finiteShift(T max) {
  return std::isinf(max) ? T(0) : max;
}

template <typename V>
V finiteShifts(V max) {
  typename V::value_type lanes[V::kSize];
  max.store(lanes);
  for (auto& m : lanes) m = finiteShift(m);
  return V::load(lanes);
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
  const detail::ReducedBlock b = detail::reducedBlock(in, mask);
  Tensor out = empty(detail::reducedShape(in.sizes(), mask, true), in.dtype());
  KILN_DISPATCH_FLOATING_TYPES(in.dtype(), "logsumexp", [&] {
    using T = scalar_t;
    const T* x = b.data.data<T>();
    T* y = out.data<T>();
    forEachLine<T>(
        b,
        [&](int64_t o) {
          const T m = finiteShift(lineMax(x + o * b.n, b.n));
          y[o] = std::log(lineSumExp<T>(x + o * b.n, nullptr, b.n, m)) + m;
        },
        [&](auto vec, int64_t o, int64_t j) {
          using V = decltype(vec);
          const T* start = x + o * b.n * b.inner + j;
          const V m = finiteShifts(linesMax<V>(start, b.n, b.inner));
          (linesSumExp<V, T>(start, nullptr, b.n, b.inner, m).log() + m).store(y + o * b.inner + j);
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
