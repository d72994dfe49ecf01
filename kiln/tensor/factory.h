#pragma once
// Tensors made from a shape and a value: filled tensors, ranges, identity
// matrices, and the fill operations behind them. Dtype defaults follow
// PyTorch 1.13 (see fullDtype and arangeDtype). `Out` forms resize `out` to
// the result's shape, as PyTorch's resize_output does.
#include <optional>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/shape.h"  // resizeOutput
#include "kiln/tensor/tensor.h"

namespace kiln {

// Calls fill(T* data) to write `out`'s elements in row-major order, through a
// contiguous temporary when `out` is strided.
template <typename T, typename Fill>
void writeContiguous(Tensor& out, const Fill& fill) {
  if (out.isContiguous()) {
    fill(static_cast<T*>(out.rawData()));
    return;
  }
  Tensor tmp = empty(out.sizes(), out.dtype());
  fill(static_cast<T*>(tmp.rawData()));
  copy_(out, tmp);
}

// The dtype torch.full gives a fill value when none is asked for: bool, int64
// or the default float dtype.
ScalarType fullDtype(const Scalar& value);

Tensor& fill_(Tensor& self, const Scalar& value);
// Fills with a 0-dim tensor's value.
Tensor& fill_(Tensor& self, const Tensor& value);
Tensor& zero_(Tensor& self);

Tensor full(IntArrayRef sizes, const Scalar& value, ScalarType dtype);
Tensor zeros(IntArrayRef sizes, ScalarType dtype = ScalarType::Float);
Tensor ones(IntArrayRef sizes, ScalarType dtype = ScalarType::Float);

// arange's dtype when none is given: int64 if start, end and step are all
// integers (bools count as integers), else the default float dtype.
ScalarType arangeDtype(const Scalar& start, const Scalar& end, const Scalar& step);
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, ScalarType dtype);
Tensor& arangeOut(const Scalar& start, const Scalar& end, const Scalar& step, Tensor& out);

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, ScalarType dtype);
Tensor& linspaceOut(const Scalar& start, const Scalar& end, int64_t steps, Tensor& out);

// n x m with ones on the diagonal.
Tensor eye(int64_t n, int64_t m, ScalarType dtype);
Tensor& eyeOut(int64_t n, int64_t m, Tensor& out);

}  // namespace kiln
