// softmax, log_softmax and logsumexp. Each works on lines along one dim:
// the line's max, then exp(x - max) and its sum, so nothing overflows.
// Contiguous lines (the last dim) vectorize along the line; lines along an
// inner dim vectorize across the neighbouring lines instead. The line
// kernels are vec_kernels.cpp's, at the CPU's vector width.
#include <algorithm>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/reduce_utils.h"
#include "kiln/tensor/kernels/vec_kernels.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/reduce.h"

namespace kiln {
namespace {

// Runs kernel(lo, hi) over ranges of the blocks of `b`, in parallel.
template <typename Kernel>
void forEachBlockRange(const detail::ReducedBlock& b, const Kernel& kernel) {
  parallelFor(0, b.outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, b.n * b.inner)), kernel);
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
    const kernels::VecKernels<T>& k = kernels::vecKernels<T>();
    const T* x = b.data.data<T>();
    T* y = out.data<T>();
    forEachBlockRange(b, [&](int64_t lo, int64_t hi) {
      const int64_t start = lo * b.n * b.inner;
      if (b.inner == 1) {
        k.softmaxRows(x + start, y + start, hi - lo, b.n, log);
      } else {
        k.softmaxColumns(x + start, y + start, hi - lo, b.n, b.inner, log);
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
  const detail::ReducedBlock b = detail::reducedBlock(in, mask);
  Tensor out = empty(detail::reducedShape(in.sizes(), mask, true), in.dtype());
  KILN_DISPATCH_FLOATING_TYPES(in.dtype(), "logsumexp", [&] {
    using T = scalar_t;
    const kernels::VecKernels<T>& k = kernels::vecKernels<T>();
    const T* x = b.data.data<T>();
    T* y = out.data<T>();
    forEachBlockRange(b, [&](int64_t lo, int64_t hi) {
      if (b.inner == 1) {
        k.logsumexpRows(x + lo * b.n, y + lo, hi - lo, b.n);
      } else {
        k.logsumexpColumns(x + lo * b.n * b.inner, y + lo * b.inner, hi - lo, b.n, b.inner);
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
