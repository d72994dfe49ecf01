// aten:: registrations of searching and counting: searchsorted, bucketize,
// bincount, histc, argwhere and the consecutive / per-dim forms of unique,
// with PyTorch 1.13's schemas. Kernels: kiln/tensor/kernels/search.cpp.
//
// Gradients, as in torch 1.13: the integer results carry none (listed in
// tests/python/test_autograd_coverage.py); histc's result never requires
// grad; bincount and the unique forms have a grad_fn that raises.
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/index.h"
#include "kiln/tensor/search.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using OptTensor = std::optional<Tensor>;
using OptString = std::optional<std::string>;
using Unique = std::tuple<Tensor, Tensor, Tensor>;

// torch's check of the out= dtype, which it makes before searching.
Tensor searchsortedOut(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                       const OptString& side, const OptTensor& sorter, Tensor out) {
  const ScalarType want = out_int32 ? ScalarType::Int : ScalarType::Long;
  KILN_CHECK(out.dtype() == want,
             "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) depending "
             "on whether out_int32 flag is True, but we got output tensor's dtype ",
             scalarTypeShortName(out.dtype()), " and out_int32 flag is ", out_int32 ? "True" : "False");
  return writeOut(out, searchsorted(sorted_sequence, values, out_int32, right, side, sorter), "searchsorted");
}

// A Python number searched for: a 0-dim tensor of its own type (not a
// wrapped number), as torch makes it.
Tensor scalarValue(const Scalar& value) {
  Tensor t = scalarToTensor(value);
  t.impl()->setWrappedNumber(false);
  return t;
}

Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  KILN_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return searchsorted(boundaries, self, out_int32, right, std::nullopt, std::nullopt);
}

Tensor bucketizeOut(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right, Tensor out) {
  KILN_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return searchsortedOut(boundaries, self, out_int32, right, std::nullopt, std::nullopt, std::move(out));
}

Unique writeThree(const Unique& r, Tensor a, Tensor b, Tensor c, const char* op) {
  writeOut(a, std::get<0>(r), op);
  writeOut(b, std::get<1>(r), op);
  writeOut(c, std::get<2>(r), op);
  return {a, b, c};
}

// --- shape rules ---

using shapes::Args;
using shapes::contiguousOut;
using Out = std::vector<shapes::OutputFacts>;

// searchsorted and bucketize: the values' sizes (`self`; a Scalar is 0-dim),
// int32 or int64 as out_int32 says.
Out searchRule(const Args& a) {
  std::optional<bool> int32 = a.knownBool("out_int32");
  std::optional<ScalarType> dtype;
  if (int32) dtype = *int32 ? ScalarType::Int : ScalarType::Long;
  const TensorType* values = a.tensor("self");
  VaryingShape sizes = values ? values->sizes() : VaryingShape(std::vector<std::optional<int64_t>>{});
  return {contiguousOut(dtype, sizes)};
}

// histc: `bins` counts in self's dtype.
Out histcRule(const Args& a) {
  const TensorType* self = a.tensor("self");
  std::optional<int64_t> bins = a.knownInt("bins");
  return {contiguousOut(self ? self->scalarType() : std::nullopt,
                        bins ? VaryingShape(std::vector<std::optional<int64_t>>{*bins}) : VaryingShape(1))};
}

constexpr const char* kUniqueNotDifferentiable = "torch 1.13 has no derivative for unique";

}  // namespace

KILN_REGISTER_OPS(
    op("aten::searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, "
       "str? side=None, Tensor? sorter=None) -> Tensor",
       [](const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right, const OptString& side,
          const OptTensor& sorter) { return searchsorted(sorted_sequence, self, out_int32, right, side, sorter); })
        .shape(searchRule),
    op("aten::searchsorted.Tensor_out(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, "
       "bool right=False, str? side=None, Tensor? sorter=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right, const OptString& side,
          const OptTensor& sorter, Tensor out) {
         return searchsortedOut(sorted_sequence, self, out_int32, right, side, sorter, std::move(out));
       })
        .shape(searchRule),
    op("aten::searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, "
       "str? side=None, Tensor? sorter=None) -> Tensor",
       [](const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right, const OptString& side,
          const OptTensor& sorter) {
         return searchsorted(sorted_sequence, scalarValue(self), out_int32, right, side, sorter);
       })
        .shape(searchRule),
    op("aten::searchsorted.Scalar_out(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, "
       "bool right=False, str? side=None, Tensor? sorter=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right, const OptString& side,
          const OptTensor& sorter, Tensor out) {
         return searchsortedOut(sorted_sequence, scalarValue(self), out_int32, right, side, sorter, std::move(out));
       })
        .shape(searchRule),

    op("aten::bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
       [](const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
         return bucketize(self, boundaries, out_int32, right);
       })
        .shape(searchRule),
    op("aten::bucketize.Tensor_out(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& boundaries, bool out_int32, bool right, Tensor out) {
         return bucketizeOut(self, boundaries, out_int32, right, std::move(out));
       })
        .shape(searchRule),
    op("aten::bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
       [](const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
         return bucketize(scalarValue(self), boundaries, out_int32, right);
       })
        .shape(searchRule),
    op("aten::bucketize.Scalar_out(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& self, const Tensor& boundaries, bool out_int32, bool right, Tensor out) {
         return bucketizeOut(scalarValue(self), boundaries, out_int32, right, std::move(out));
       })
        .shape(searchRule),

    op("aten::bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor",
       [](const Tensor& self, const OptTensor& weights, int64_t minlength) {
         return bincount(self, weights, minlength);
       })
        .notDifferentiable("torch 1.13 has no derivative for bincount")
        .traits(OpTrait::ValueDependentShape),
    op("aten::bincount.out(Tensor self, Tensor? weights=None, int minlength=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const OptTensor& weights, int64_t minlength, Tensor out) {
         return writeOut(out, bincount(self, weights, minlength), "bincount");
       })
        .traits(OpTrait::ValueDependentShape),

    op("aten::histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor",
       [](const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
         return histc(self, bins, min, max);
       })
        .shape(histcRule)
        .traits(OpTrait::NeverRequiresGrad),
    op("aten::histc.out(Tensor self, int bins=100, Scalar min=0, Scalar max=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max, Tensor out) {
         return writeOut(out, histc(self, bins, min, max), "histc");
       })
        .shape(histcRule)
        .traits(OpTrait::NeverRequiresGrad),

    op("aten::argwhere(Tensor self) -> Tensor", [](const Tensor& self) { return nonzero(self); })
        .traits(OpTrait::ValueDependentShape),

    op("aten::unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) -> "
       "(Tensor, Tensor, Tensor)",
       [](const Tensor& self, bool return_inverse, bool return_counts, std::optional<int64_t> dim) {
         return unique(self, dim, true, return_inverse, return_counts);
       })
        .notDifferentiable(kUniqueNotDifferentiable)
        .traits(OpTrait::ValueDependentShape),
    op("aten::unique_consecutive.out(Tensor self, bool return_inverse=False, bool return_counts=False, "
       "int? dim=None, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
       [](const Tensor& self, bool return_inverse, bool return_counts, std::optional<int64_t> dim, Tensor out0,
          Tensor out1, Tensor out2) {
         return writeThree(unique(self, dim, true, return_inverse, return_counts), out0, out1, out2,
                           "unique_consecutive");
       })
        .traits(OpTrait::ValueDependentShape),
    // sorted=False sorts all the same, as in torch.
    op("aten::unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
       "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
       [](const Tensor& self, int64_t dim, bool /*sorted*/, bool return_inverse, bool return_counts) {
         return unique(self, dim, false, return_inverse, return_counts);
       })
        .notDifferentiable(kUniqueNotDifferentiable)
        .traits(OpTrait::ValueDependentShape),
    op("aten::unique_dim.out(Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
       "bool return_counts=False, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), "
       "Tensor(c!))",
       [](const Tensor& self, int64_t dim, bool /*sorted*/, bool return_inverse, bool return_counts, Tensor out0,
          Tensor out1, Tensor out2) {
         return writeThree(unique(self, dim, false, return_inverse, return_counts), out0, out1, out2, "unique_dim");
       })
        .traits(OpTrait::ValueDependentShape),
    op("aten::unique_dim_consecutive(Tensor self, int dim, bool return_inverse=False, bool return_counts=False) -> "
       "(Tensor, Tensor, Tensor)",
       [](const Tensor& self, int64_t dim, bool return_inverse, bool return_counts) {
         return unique(self, dim, true, return_inverse, return_counts);
       })
        .notDifferentiable(kUniqueNotDifferentiable)
        .traits(OpTrait::ValueDependentShape),
    op("aten::unique_dim_consecutive.out(Tensor self, int dim, bool return_inverse=False, bool return_counts=False, "
       "*, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
       [](const Tensor& self, int64_t dim, bool return_inverse, bool return_counts, Tensor out0, Tensor out1,
          Tensor out2) {
         return writeThree(unique(self, dim, true, return_inverse, return_counts), out0, out1, out2,
                           "unique_dim_consecutive");
       })
        .traits(OpTrait::ValueDependentShape), );

}  // namespace kiln
