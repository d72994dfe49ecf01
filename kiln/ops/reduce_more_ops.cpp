// More of PyTorch 1.13's reductions, composed of kiln's kernels as torch
// composes them: nansum, nanmean, count_nonzero, trace and the in-place
// cumsum_ and cumprod_.
#include <vector>

#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/scalar_type_names.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using Dtype = std::optional<ScalarType>;

// Self with NaN replaced by 0 (integers and bool have none).
Tensor zeroNans(const Tensor& self) {
  if (!isFloatingType(self.dtype())) return self;
  return where(isnan(self), scalarToTensor(Scalar(0.0)), self);
}

Tensor nansum(const Tensor& self, OptionalDims dim, bool keepdim, Dtype dtype) {
  return sum(zeroNans(self), dim, keepdim, dtype);
}

Tensor nanmean(const Tensor& self, OptionalDims dim, bool keepdim, Dtype dtype) {
  KILN_CHECK(isFloatingType(self.dtype()), "nanmean(): expected input to have floating point dtype but got ",
             scalarTypeShortName(self.dtype()));
  const Tensor count = sum(logicalNot(isnan(self)), dim, keepdim);
  return div(nansum(self, dim, keepdim, dtype), count);
}

Tensor countNonzero(const Tensor& self, IntArrayRef dim) {
  return sum(ne(self, scalarToTensor(Scalar(int64_t{0}))), dim, false, ScalarType::Long);
}

Tensor countNonzero(const Tensor& self, std::optional<int64_t> dim) {
  if (!dim) return sum(ne(self, scalarToTensor(Scalar(int64_t{0}))), std::nullopt, false, ScalarType::Long);
  const std::vector<int64_t> dims{*dim};
  return countNonzero(self, IntArrayRef(dims));
}

Tensor trace(const Tensor& self) {
  KILN_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  KILN_CHECK(self.dtype() != ScalarType::Bool, "\"trace\" not implemented for 'Bool'");
  return sum(diagonal(self));
}

// cumsum_/cumprod_: a dtype other than self's raises, as in torch.
void checkInplaceDtype(const Tensor& self, Dtype dtype) {
  KILN_CHECK(!dtype || *dtype == self.dtype(), "Bad in-place call: input tensor dtype ",
             scalarTypeCppName(self.dtype()), " and output tensor dtype ", scalarTypeCppName(*dtype), " should match");
}

}  // namespace

KILN_REGISTER_OPS(
    op("aten::nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, OptionalDims dim, bool keepdim, Dtype dtype) {
         return nansum(self, dim, keepdim, dtype);
       })
        .derivative({"self: _sum_backward(grad, self.size(), dim, keepdim) * self.isnan().logical_not()"})
        .shape(shapes::reduceUpcast),
    op("aten::nansum.out(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) "
       "out) -> Tensor(a!)",
       [](const Tensor& self, OptionalDims dim, bool keepdim, Dtype dtype, Tensor out) {
         return writeOut(out, nansum(self, dim, keepdim, dtype), "nansum");
       })
        .shape(shapes::reduceUpcast),
    op("aten::nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, OptionalDims dim, bool keepdim, Dtype dtype) {
         return nanmean(self, dim, keepdim, dtype);
       })
        .derivative({"self: _sum_backward(grad / self.isnan().logical_not().sum(dim, keepdim), self.size(), dim, "
                     "keepdim) * self.isnan().logical_not()"})
        .shape(shapes::reduceDtype),
    op("aten::nanmean.out(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) "
       "out) -> Tensor(a!)",
       [](const Tensor& self, OptionalDims dim, bool keepdim, Dtype dtype, Tensor out) {
         return writeOut(out, nanmean(self, dim, keepdim, dtype), "nanmean");
       })
        .shape(shapes::reduceDtype),

    op("aten::count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor",
       [](const Tensor& self, IntArrayRef dim) { return countNonzero(self, dim); }),
    op("aten::count_nonzero.dim_IntList_out(Tensor self, int[] dim, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef dim, Tensor out) {
         return writeOut(out, countNonzero(self, dim), "count_nonzero");
       }),
    op("aten::count_nonzero(Tensor self, int? dim=None) -> Tensor",
       [](const Tensor& self, std::optional<int64_t> dim) { return countNonzero(self, dim); }),
    op("aten::count_nonzero.out(Tensor self, int? dim=None, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, std::optional<int64_t> dim, Tensor out) {
         return writeOut(out, countNonzero(self, dim), "count_nonzero");
       }),

    op("aten::trace(Tensor self) -> Tensor", [](const Tensor& self) { return trace(self); })
        .derivative({"self: grad * torch.eye(self.size(0), self.size(1), dtype=self.dtype)"}),
    op("aten::trace.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return writeOut(out, trace(self), "trace"); }),

    op("aten::cumsum_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)",
       [](Tensor self, int64_t dim, Dtype dtype) {
         checkInplaceDtype(self, dtype);
         return copy_(self, cumsum(self, dim, dtype));
       }),
    op("aten::cumprod_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)",
       [](Tensor self, int64_t dim, Dtype dtype) {
         checkInplaceDtype(self, dtype);
         return copy_(self, cumprod(self, dim, dtype));
       }), );

}  // namespace kiln
