// aten:: operators that TorchScript's builtins and sugar compile to (issue 20):
// hash(), the Tensor properties H and mH, tensordot, narrow_copy and the
// tril/triu index factories, with PyTorch 1.13's schemas and messages.
#include <numeric>

#include "kiln/core/op_registration.h"
#include "kiln/ops/composite.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/complex.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/linalg.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using OptDtype = std::optional<ScalarType>;
using OptInt = std::optional<int64_t>;
using OptBool = std::optional<bool>;

// 1.13's hash(): c10::hash of the value. Devices hash as c10::Device does
// (type in the high half, the index as one byte); everything else as
// IValue::hash (std::hash of scalars and strings, tensors by identity, tuples
// combined element by element, lists and dicts unhashable).
int64_t hashValue(const IValue& value) {
  if (value.isDevice()) {
    Device d = value.toDevice();
    return static_cast<int64_t>((static_cast<uint32_t>(d.type) << 16) |
                                static_cast<uint32_t>(static_cast<uint8_t>(d.index)));
  }
  return static_cast<int64_t>(IValue::hash(value));
}

// tensor.H: the conjugate transpose of a matrix; kiln's tensors are real.
Tensor matrixH(const Tensor& self) {
  KILN_CHECK(self.dim() == 2 || self.dim() == 0, "tensor.H is only supported on matrices (2-D tensors). Got ",
             self.dim(), "-D tensor.", self.dim() > 2 ? " For batches of matrices, consider using tensor.mH" : "");
  return self.dim() == 0 ? self : conj(transpose(self, 0, 1));
}

// tensor.mH: the conjugate transpose of the last two dims. kiln has no lazy
// conjugate bit, so for complex tensors it is a copy (a view in 1.13).
Tensor matrixMH(const Tensor& self, const char* op) { return conj(matrixT(self, op)); }

// at::tensordot: the free dimensions of self, then of other; the contracted
// pairs multiplied and summed by one matrix product.
Tensor tensordot(const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other) {
  KILN_CHECK(dims_self.size() == dims_other.size(), "both dimension lists should have same length");
  KILN_CHECK(self.dtype() == other.dtype(), "expected scalar type ", scalarTypeShortName(self.dtype()), " but found ",
             scalarTypeShortName(other.dtype()));
  std::vector<bool> contracted_self(static_cast<size_t>(self.dim())),
      contracted_other(static_cast<size_t>(other.dim()));
  DimVector perm_self, perm_other, free_sizes;
  int64_t size = 1;
  for (size_t i = 0; i < dims_self.size(); ++i) {
    int64_t d1 = wrapDim(dims_self[i], self.dim()), d2 = wrapDim(dims_other[i], other.dim());
    int64_t s1 = self.sizes()[d1], s2 = other.sizes()[d2];
    KILN_CHECK(s1 == s2, "contracted dimensions need to match, but first has size ", s1, " in dim ", dims_self[i],
               " and second has size ", s2, " in dim ", dims_other[i]);
    KILN_CHECK(!contracted_self[static_cast<size_t>(d1)] && !contracted_other[static_cast<size_t>(d2)], "dim ",
               contracted_self[static_cast<size_t>(d1)] ? d1 : d2, " appears multiple times in the list of dims");
    contracted_self[static_cast<size_t>(d1)] = contracted_other[static_cast<size_t>(d2)] = true;
    size *= s1;
  }
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (contracted_self[static_cast<size_t>(d)]) continue;
    perm_self.push_back(d);
    free_sizes.push_back(self.sizes()[d]);
    rows *= self.sizes()[d];
  }
  for (size_t i = 0; i < dims_self.size(); ++i) perm_self.push_back(wrapDim(dims_self[i], self.dim()));
  for (size_t i = 0; i < dims_other.size(); ++i) perm_other.push_back(wrapDim(dims_other[i], other.dim()));
  for (int64_t d = 0; d < other.dim(); ++d) {
    if (contracted_other[static_cast<size_t>(d)]) continue;
    perm_other.push_back(d);
    free_sizes.push_back(other.sizes()[d]);
    cols *= other.sizes()[d];
  }
  if (composite::recording({self, other})) {
    // As torch 1.13 composes it (CompositeImplicitAutograd): the recorded
    // permutes, reshapes and mm carry the gradient.
    using composite::callTensor;
    Tensor a = callTensor("aten::reshape", "",
                          {callTensor("aten::permute", "", {self, IValue(perm_self)}), IValue(DimVector{rows, size})});
    Tensor b =
        callTensor("aten::reshape", "",
                   {callTensor("aten::permute", "", {other, IValue(perm_other)}), IValue(DimVector{size, cols})});
    return callTensor("aten::reshape", "", {callTensor("aten::mm", "", {a, b}), IValue(free_sizes)});
  }
  Tensor a = reshape(permute(self, perm_self), DimVector{rows, size});
  Tensor b = reshape(permute(other, perm_other), DimVector{size, cols});
  return reshape(mm(a, b), free_sizes);
}

Tensor narrowCopy(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  return contiguous(narrow(self, dim, start, length));
}

// torch.tril_indices / triu_indices: the (row, col) pairs of the lower
// (col - row <= offset) or upper (col - row >= offset) triangle, row by row.
template <bool Lower>
Tensor triangleIndices(int64_t row, int64_t col, int64_t offset, OptDtype dtype, OptInt layout, const IValue& device,
                       OptBool pin_memory) {
  const char* name = Lower ? "tril_indices" : "triu_indices";
  KILN_CHECK(row >= 0, "row must be non-negative, got", row);
  KILN_CHECK(col >= 0, "col must be non-negative, got", col);
  KILN_CHECK(!layout || *layout == 0, name, ": kiln only supports the strided layout, got layout ", *layout);
  KILN_CHECK(!pin_memory.value_or(false), name, ": pin_memory needs a CUDA device; kiln runs on the CPU only");
  const bool cpu = device.isNone() || (device.isDevice() && device.toDevice().isCpu()) ||
                   (device.isString() && device.toStringRef().rfind("cpu", 0) == 0);
  KILN_CHECK(cpu, name, ": kiln only supports the cpu device, got ", device);
  ScalarType type = dtype.value_or(ScalarType::Long);
  KILN_CHECK(type == ScalarType::Long || type == ScalarType::Int, "\"", name, "\" not implemented for '",
             scalarTypeShortName(type), "'");
  std::vector<int64_t> rows, cols;
  for (int64_t r = 0; r < row; ++r) {
    for (int64_t c = 0; c < col; ++c) {
      if (Lower ? c - r <= offset : c - r >= offset) {
        rows.push_back(r);
        cols.push_back(c);
      }
    }
  }
  const int64_t n = static_cast<int64_t>(rows.size());
  Tensor out = empty(DimVector{2, n}, ScalarType::Long);
  int64_t* p = out.data<int64_t>();
  std::copy(rows.begin(), rows.end(), p);
  std::copy(cols.begin(), cols.end(), p + n);
  return type == ScalarType::Long ? out : to(out, type);
}

}  // namespace

KILN_REGISTER_OPS(
    op("aten::hash.generic(t value) -> int", [](const IValue& value) { return hashValue(value); }),
    op("aten::mH(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return matrixMH(self, "tensor.mH"); })
        .shape(shapes::mT)
        .derivative({"self: grad.transpose(-2, -1).conj()"}),
    op("aten::mH.a(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return matrixMH(self, "tensor.mH"); })
        .shape(shapes::mT)
        .derivative({"self: grad.transpose(-2, -1).conj()"}),
    op("aten::matrix_H(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return matrixH(self); })
        .shape(shapes::mT)
        .derivative({"self: grad if self.dim() == 0 else grad.transpose(0, 1).conj()"}),
    op("aten::matrix_H.a(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return matrixH(self); })
        .shape(shapes::mT)
        .derivative({"self: grad if self.dim() == 0 else grad.transpose(0, 1).conj()"}),
    op("aten::tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor",
       [](const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other) {
         return tensordot(self, other, dims_self, dims_other);
       }),
    op("aten::tensordot.out(Tensor self, Tensor other, int[] dims_self, int[] dims_other, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, const Tensor& other, IntArrayRef dims_self, IntArrayRef dims_other, Tensor out) {
         return writeOut(out, tensordot(self, other, dims_self, dims_other), "tensordot");
       }),
    op("aten::narrow_copy.out(Tensor self, int dim, SymInt start, SymInt length, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, int64_t start, int64_t length, Tensor out) {
         return writeOut(out, narrowCopy(self, dim, start, length), "narrow_copy");
       }),
    op("aten::tril_indices.out(int row, int col, int offset=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](int64_t row, int64_t col, int64_t offset, Tensor out) {
         return writeOut(out,
                         triangleIndices<true>(row, col, offset, std::nullopt, std::nullopt, IValue(), std::nullopt),
                         "tril_indices");
       }),
    op("aten::triu_indices.out(int row, int col, int offset=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](int64_t row, int64_t col, int64_t offset, Tensor out) {
         return writeOut(out,
                         triangleIndices<false>(row, col, offset, std::nullopt, std::nullopt, IValue(), std::nullopt),
                         "triu_indices");
       }),
    op("aten::narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor",
       [](const Tensor& self, int64_t dim, int64_t start, int64_t length) {
         return narrowCopy(self, dim, start, length);
       })
        .shape(shapes::sameDtype)
        .notDifferentiable("torch 1.13: derivative for aten::narrow_copy is not implemented"),
    op("aten::tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       triangleIndices<true>)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory),
    op("aten::triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, "
       "Device? device=None, bool? pin_memory=None) -> Tensor",
       triangleIndices<false>)
        .traits(OpTrait::NeverRequiresGrad | OpTrait::Factory), );

}  // namespace kiln
