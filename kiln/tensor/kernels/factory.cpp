// Filled tensors, ranges and identity matrices.
#include "kiln/tensor/factory.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kiln/tensor/iterator.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/scalar_convert.h"

namespace kiln {

namespace {

// a * b + c, rounded once for floating types: PyTorch's AVX2 range kernels
// are compiled with FMA contraction, and matching them bit for bit needs it.
template <typename T>
T mulAdd(T a, T b, T c) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fma(a, b, c);
  } else {
    return a * b + c;
  }
}

// out[i] = value(i) for i in [0, n), rounded the way PyTorch's AVX2 CPU loop
// rounds: in steps of two 32-byte vectors, each vector is `base =
// T(value(first lane))` and lane k is `T(base + k * step)` computed in Step
// (fused into one rounding when kFusedLanes: torch 1.13's compiled arange
// fuses it, its linspace does not); the tail that fills no vector pair is
// element-wise. Ranges then equal torch's bit for bit.
template <bool kFusedLanes, typename T, typename Step, typename Value>
void fillSequence(T* out, int64_t n, Step step, const Value& value) {
  constexpr int64_t kLanes = 32 / static_cast<int64_t>(sizeof(T));
  const int64_t vector_end = n / (2 * kLanes) * (2 * kLanes);
  for (int64_t b = 0; b < vector_end; b += kLanes) {
    const Step base = static_cast<Step>(static_cast<T>(value(b)));
    for (int64_t k = 0; k < kLanes; ++k) {
      const Step lane = kFusedLanes ? mulAdd(static_cast<Step>(k), step, base) : base + static_cast<Step>(k) * step;
      out[b + k] = static_cast<T>(lane);
    }
  }
  for (int64_t i = vector_end; i < n; ++i) out[i] = static_cast<T>(value(i));
}

}  // namespace

ScalarType fullDtype(const Scalar& value) {
  if (value.isBoolean()) return ScalarType::Bool;
  if (value.isIntegral()) return ScalarType::Long;
  return defaultFloatType();
}

Tensor& fill_(Tensor& self, const Scalar& value) {
  auto fill = [&]<typename scalar_t>() {
    const scalar_t v = checkedScalarTo<scalar_t>(value);
    if (self.isContiguous()) {
      scalar_t* data = static_cast<scalar_t*>(self.rawData());
      parallelFor(0, self.numel(), kGrainSize,
                  [&](int64_t begin, int64_t end) { std::fill(data + begin, data + end, v); });
      return;
    }
    // PyTorch's fill_ writes an expanded tensor without complaint.
    TensorIter iter("fill_");
    iter.addOutput(self).checkMemOverlap(false).build();
    iter.forEach([v](char** data, const int64_t* strides, int64_t n) {
      char* p = data[0];
      for (int64_t i = 0; i < n; ++i, p += strides[0]) *reinterpret_cast<scalar_t*>(p) = v;
    });
  };
  if (isComplexType(self.dtype())) {
    KILN_DISPATCH_COMPLEX_TYPES(self.dtype(), "fill_", [&] { fill.template operator()<scalar_t>(); });
  } else {
    KILN_DISPATCH_ALL_TYPES_AND_BOOL(self.dtype(), "fill_", [&] { fill.template operator()<scalar_t>(); });
  }
  return self;
}

Tensor& fill_(Tensor& self, const Tensor& value) {
  KILN_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
             " dimensions.");
  return fill_(self, value.item());
}

Tensor& zero_(Tensor& self) {
  if (!self.isContiguous()) return fill_(self, Scalar(int64_t{0}));
  // Zero is all-bits-zero in every dtype.
  char* data = static_cast<char*>(self.rawData());
  const int64_t item = static_cast<int64_t>(self.itemsize());
  parallelFor(0, self.numel(), kGrainSize, [&](int64_t begin, int64_t end) {
    std::memset(data + begin * item, 0, static_cast<size_t>((end - begin) * item));
  });
  return self;
}

Tensor full(IntArrayRef sizes, const Scalar& value, ScalarType dtype) {
  Tensor t = empty(sizes, dtype);
  fill_(t, value);
  return t;
}

Tensor zeros(IntArrayRef sizes, ScalarType dtype) {
  Tensor t = empty(sizes, dtype);
  zero_(t);
  return t;
}

Tensor ones(IntArrayRef sizes, ScalarType dtype) { return full(sizes, Scalar(int64_t{1}), dtype); }

ScalarType arangeDtype(const Scalar& start, const Scalar& end, const Scalar& step) {
  bool integral = !start.isFloatingPoint() && !end.isFloatingPoint() && !step.isFloatingPoint();
  return integral ? ScalarType::Long : defaultFloatType();
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, ScalarType dtype) {
  Tensor out = empty({0}, dtype);
  return arangeOut(start, end, step, out);
}

Tensor& arangeOut(const Scalar& start, const Scalar& end, const Scalar& step, Tensor& out) {
  KILN_DISPATCH_ALL_TYPES(out.dtype(), "arange_cpu", [&] {
    // PyTorch's CPU accumulation type: the range is computed in double or int64.
    using acc_t = std::conditional_t<std::is_floating_point_v<scalar_t>, double, int64_t>;
    KILN_CHECK(std::isfinite(start.toDouble()) && std::isfinite(end.toDouble()), "arange: unsupported range: ", start,
               " -> ", end);
    const acc_t xstart = checkedScalarTo<acc_t>(start);
    const acc_t xend = checkedScalarTo<acc_t>(end);
    const acc_t xstep = checkedScalarTo<acc_t>(step);
    KILN_CHECK(xstep > 0 || xstep < 0, "arange: step must be nonzero");
    KILN_CHECK((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart),
               "arange: upper bound and larger bound inconsistent with step sign");
    // Only int64 results count in integers; the other dtypes count in double.
    double size_d = std::is_same_v<scalar_t, int64_t>
                        ? std::ceil(static_cast<double>(xend - xstart) / static_cast<double>(xstep))
                        : std::ceil((end.toDouble() - start.toDouble()) / step.toDouble());
    KILN_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max()),
               "arange: invalid size, possible overflow?");
    const int64_t size = static_cast<int64_t>(size_d);
    // Like PyTorch, an out= of the right element count keeps its shape.
    if (out.numel() != size) resizeOutput(out, {size});
    writeContiguous<scalar_t>(out, [&](scalar_t* data) {
      fillSequence<true>(data, size, xstep, [&](int64_t i) { return mulAdd(xstep, static_cast<acc_t>(i), xstart); });
    });
  });
  return out;
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, ScalarType dtype) {
  Tensor out = empty({0}, dtype);
  return linspaceOut(start, end, steps, out);
}

Tensor& linspaceOut(const Scalar& start, const Scalar& end, int64_t steps, Tensor& out) {
  KILN_CHECK(steps >= 0, "linspace: number of steps must be non-negative");
  if (out.numel() != steps) resizeOutput(out, {steps});
  if (steps == 0) return out;
  if (steps == 1) return fill_(out, start);
  KILN_DISPATCH_ALL_TYPES(out.dtype(), "linspace_cpu", [&] {
    // Integer results step in double, float results in their own type.
    using step_t = std::conditional_t<std::is_floating_point_v<scalar_t>, scalar_t, double>;
    const step_t first = static_cast<step_t>(checkedScalarTo<scalar_t>(start));
    const step_t last = static_cast<step_t>(checkedScalarTo<scalar_t>(end));
    const step_t step = (last - first) / static_cast<step_t>(steps - 1);
    // The second half counts back from `end`, so both endpoints are exact.
    const int64_t halfway = steps / 2;
    writeContiguous<scalar_t>(out, [&](scalar_t* data) {
      fillSequence<false>(data, steps, step, [&](int64_t i) {
        return i < halfway ? mulAdd(step, static_cast<step_t>(i), first)
                           : mulAdd(-step, static_cast<step_t>(steps - i - 1), last);
      });
    });
  });
  return out;
}

Tensor eye(int64_t n, int64_t m, ScalarType dtype) {
  Tensor out = empty({0}, dtype);
  return eyeOut(n, m, out);
}

Tensor& eyeOut(int64_t n, int64_t m, Tensor& out) {
  KILN_CHECK(n >= 0, "eye: n must be greater or equal to 0, got ", n);
  KILN_CHECK(m >= 0, "eye: m must be greater or equal to 0, got ", m);
  resizeOutput(out, {n, m});
  zero_(out);
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(out.dtype(), "eye", [&] {
    scalar_t* data = static_cast<scalar_t*>(out.rawData());
    const int64_t diagonal_stride = out.stride(0) + out.stride(1);
    for (int64_t i = 0; i < std::min(n, m); ++i) data[i * diagonal_stride] = scalar_t(1);
  });
  return out;
}

}  // namespace kiln
