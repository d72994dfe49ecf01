// aten:: registrations of gather/scatter and indexing ops, with PyTorch 1.13's schemas.
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/index.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

// A `Tensor?[]` argument: None entries become undefined tensors (full slices).
std::vector<Tensor> optionalTensors(const IValue& list) {
  std::vector<Tensor> out;
  for (const IValue& v : list.toListRef().elements) out.push_back(v.isNone() ? Tensor() : v.toTensor());
  return out;
}

// The out-of-place forms work on a copy of self with its layout.
Tensor copyOf(const Tensor& self) { return clone(self, MemoryFormat::Preserve); }

Tensor scatterSrc(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce) {
  Tensor out = copyOf(self);
  return scatter_(out, dim, index, src, reduce);
}

Tensor scatterValue(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, ScatterReduce reduce) {
  Tensor out = copyOf(self);
  return scatter_(out, dim, index, value, reduce);
}

Tensor indexPut(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
  Tensor out = copyOf(self);
  return indexPut_(out, indices, values, accumulate);
}

Tensor indexAdd(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  Tensor out = copyOf(self);
  return indexAdd_(out, dim, index, source, alpha);
}

Tensor indexFill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  Tensor out = copyOf(self);
  return indexFill_(out, dim, index, value);
}

// index_fill's 0-dim Tensor value.
Scalar fillValue(const Tensor& value) {
  KILN_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
             value.dim(), " dimension(s).");
  return value.item();
}

KILN_REGISTER_OPS(
    op("aten::index_select(Tensor self, int dim, Tensor index) -> Tensor",
       [](const Tensor& self, int64_t dim, const Tensor& index) { return indexSelect(self, dim, index); })
        .shape(shapes::indexSelect)
        .derivative({"self: torch.zeros_like(self).index_add(dim, index, grad)"}),
    op("aten::index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, Tensor out) {
         return writeOut(out, indexSelect(self, dim, index), "index_select()");
       })
        .shape(shapes::indexSelect),
    op("aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
       [](const Tensor& self, int64_t dim, const Tensor& index, bool) { return gather(self, dim, index); })
        .shape(shapes::take)
        .derivative({"self: torch.zeros_like(self).scatter_add(dim, index, grad)"}),
    op("aten::gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, bool, Tensor out) {
         return writeOut(out, gather(self, dim, index), "gather()");
       })
        .shape(shapes::take),
    op("aten::take(Tensor self, Tensor index) -> Tensor",
       [](const Tensor& self, const Tensor& index) { return take(self, index); })
        .shape(shapes::take)
        .derivative({"self: torch.zeros_like(self).reshape(-1).index_add(0, (index.reshape(-1) + self.numel()) % "
                     "max(self.numel(), 1), grad.reshape(-1)).reshape(self.size())"}),
    op("aten::take.out(Tensor self, Tensor index, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& index, Tensor out) { return writeOut(out, take(self, index), "take()"); })
        .shape(shapes::take),

    // scatter: value/src forms, optional reduce, in-place and out=.
    op("aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
         return scatterSrc(self, dim, index, src, ScatterReduce::None);
       })
        .shape(shapes::likeSelf)
        .derivative({"self: grad.scatter(dim, index, 0)", "src: grad.gather(dim, index)", "grad_fn: ScatterBackward0"}),
    op("aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
         return scatterValue(self, dim, index, value, ScatterReduce::None);
       })
        .shape(shapes::likeSelf)
        .derivative({"self: grad.scatter(dim, index, 0)", "grad_fn: ScatterBackward1"}),
    op("aten::scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce) {
         return scatterSrc(self, dim, index, src, scatterReduceFromString(reduce));
       })
        .shape(shapes::likeSelf)
        .notDifferentiable("torch 1.13: derivative for aten::scatter is not implemented (its reduce overloads)"),
    op("aten::scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, const std::string& reduce) {
         return scatterValue(self, dim, index, value, scatterReduceFromString(reduce));
       })
        .shape(shapes::likeSelf)
        .notDifferentiable("torch 1.13: derivative for aten::scatter is not implemented (its reduce overloads)"),
    op("aten::scatter.src_out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, Tensor out) {
         return writeOut(out, scatterSrc(self, dim, index, src, ScatterReduce::None), "scatter()");
       })
        .shape(shapes::likeSelf),
    op("aten::scatter.value_out(Tensor self, int dim, Tensor index, Scalar value, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, Tensor out) {
         return writeOut(out, scatterValue(self, dim, index, value, ScatterReduce::None), "scatter()");
       })
        .shape(shapes::likeSelf),
    op("aten::scatter.reduce_out(Tensor self, int dim, Tensor index, Tensor src, *, str reduce, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
          Tensor out) {
         return writeOut(out, scatterSrc(self, dim, index, src, scatterReduceFromString(reduce)), "scatter()");
       })
        .shape(shapes::likeSelf),
    op("aten::scatter.value_reduce_out(Tensor self, int dim, Tensor index, Scalar value, *, str reduce, Tensor(a!) "
       "out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, const std::string& reduce,
          Tensor out) {
         return writeOut(out, scatterValue(self, dim, index, value, scatterReduceFromString(reduce)), "scatter()");
       })
        .shape(shapes::likeSelf),
    op("aten::scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
       [](Tensor self, int64_t dim, const Tensor& index, const Tensor& src) {
         return scatter_(self, dim, index, src, ScatterReduce::None);
       }),
    op("aten::scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)",
       [](Tensor self, int64_t dim, const Tensor& index, const Scalar& value) {
         return scatter_(self, dim, index, value, ScatterReduce::None);
       }),
    op("aten::scatter_.reduce(Tensor(a!) self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor(a!)",
       [](Tensor self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce) {
         return scatter_(self, dim, index, src, scatterReduceFromString(reduce));
       }),
    op("aten::scatter_.value_reduce(Tensor(a!) self, int dim, Tensor index, Scalar value, *, str reduce) -> "
       "Tensor(a!)",
       [](Tensor self, int64_t dim, const Tensor& index, const Scalar& value, const std::string& reduce) {
         return scatter_(self, dim, index, value, scatterReduceFromString(reduce));
       }),
    op("aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
         return scatterSrc(self, dim, index, src, ScatterReduce::Add);
       })
        .shape(shapes::likeSelf)
        .derivative({"self: grad", "src: grad.gather(dim, index)"}),
    op("aten::scatter_add.out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, Tensor out) {
         return writeOut(out, scatterSrc(self, dim, index, src, ScatterReduce::Add), "scatter_add()");
       })
        .shape(shapes::likeSelf),
    op("aten::scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
       [](Tensor self, int64_t dim, const Tensor& index, const Tensor& src) {
         return scatterAdd_(self, dim, index, src);
       }),

    // index_add / index_fill.
    op("aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
         return indexAdd(self, dim, index, source, alpha);
       })
        .shape(shapes::likeSelf)
        .derivative({"self: grad",
                     "source: grad.index_select(dim, index) * alpha if source.dim() > 0 else grad.index_select(dim, "
                     "index).reshape(source.size()) * alpha"}),
    op("aten::index_add.out(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha, Tensor out) {
         return writeOut(out, indexAdd(self, dim, index, source, alpha), "index_add()");
       })
        .shape(shapes::likeSelf),
    op("aten::index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
         return indexAdd_(self, dim, index, source, alpha);
       }),
    op("aten::index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
         return indexFill(self, dim, index, value);
       })
        .shape(shapes::likeSelf)
        .derivative({"self: grad.index_fill(dim, index, 0)", "grad_fn: IndexFillBackward0"}),
    op("aten::index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
         return indexFill(self, dim, index, fillValue(value));
       })
        .shape(shapes::likeSelf)
        .derivative({"self: grad.index_fill(dim, index, 0)", "value: (grad - grad.index_fill(dim, index, 0)).sum()",
                     "grad_fn: IndexFillBackward1"}),
    op("aten::index_fill.int_Scalar_out(Tensor self, int dim, Tensor index, Scalar value, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, Tensor out) {
         return writeOut(out, indexFill(self, dim, index, value), "index_fill()", OutDtype::Any);
       })
        .shape(shapes::likeSelf),
    op("aten::index_fill.int_Tensor_out(Tensor self, int dim, Tensor index, Tensor value, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value, Tensor out) {
         return writeOut(out, indexFill(self, dim, index, fillValue(value)), "index_fill()", OutDtype::Any);
       })
        .shape(shapes::likeSelf),
    op("aten::index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)",
       [](Tensor self, int64_t dim, const Tensor& index, const Scalar& value) {
         return indexFill_(self, dim, index, value);
       }),
    op("aten::index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) -> Tensor(a!)",
       [](Tensor self, int64_t dim, const Tensor& index, const Tensor& value) {
         return indexFill_(self, dim, index, fillValue(value));
       }),

    // Masks.
    op("aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor",
       [](const Tensor& self, const Tensor& mask, const Scalar& value) { return maskedFill(self, mask, value); })
        .shape(shapes::maskedFill)
        .derivative({"self: grad.masked_fill(mask, 0)", "grad_fn: MaskedFillBackward0"}),
    op("aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
       [](const Tensor& self, const Tensor& mask, const Tensor& value) {
         return maskedFill(self, mask, maskedFillValue(value));
       })
        .shape(shapes::maskedFill)
        .derivative({"self: grad.masked_fill(mask, 0)", "value: torch.where(mask, grad, torch.zeros_like(grad)).sum()",
                     "grad_fn: MaskedFillBackward1"}),
    op("aten::masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& mask, const Scalar& value, Tensor out) {
         return writeOut(out, maskedFill(self, mask, value), "masked_fill()", OutDtype::Any);
       })
        .shape(shapes::maskedFill),
    op("aten::masked_fill.Tensor_out(Tensor self, Tensor mask, Tensor value, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& mask, const Tensor& value, Tensor out) {
         return writeOut(out, maskedFill(self, mask, maskedFillValue(value)), "masked_fill()", OutDtype::Any);
       })
        .shape(shapes::maskedFill),
    op("aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)",
       [](Tensor self, const Tensor& mask, const Scalar& value) { return maskedFill_(self, mask, value); }),
    op("aten::masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)",
       [](Tensor self, const Tensor& mask, const Tensor& value) {
         return maskedFill_(self, mask, maskedFillValue(value));
       }),
    op("aten::masked_select(Tensor self, Tensor mask) -> Tensor",
       [](const Tensor& self, const Tensor& mask) { return maskedSelect(self, mask); })
        .shape(shapes::maskedSelect)
        .traits(OpTrait::ValueDependentShape)
        .derivative(
            {"self: (torch.zeros_like(self) * mask).index_put([mask.expand_as(torch.zeros_like(self) * mask)], grad)"}),
    op("aten::masked_select.out(Tensor self, Tensor mask, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& mask, Tensor out) {
         return writeOut(out, maskedSelect(self, mask), "masked_select()");
       })
        .shape(shapes::maskedSelect)
        .traits(OpTrait::ValueDependentShape),
    op("aten::nonzero(Tensor self) -> Tensor", [](const Tensor& self) { return nonzero(self); })
        .shape(shapes::nonzero)
        .traits(OpTrait::ValueDependentShape),
    // numpy's nonzero: one index tensor per dim (a 0-dim self counts as 1-D).
    op("aten::nonzero_numpy(Tensor self) -> Tensor[]",
       [](const Tensor& self) { return unbind(nonzero(self.dim() == 0 ? unsqueeze(self, 0) : self), 1); })
        .traits(OpTrait::ValueDependentShape),
    op("aten::nonzero.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return writeOut(out, nonzero(self), "nonzero()"); })
        .shape(shapes::nonzero)
        .traits(OpTrait::ValueDependentShape),

    // Advanced indexing.
    op("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
       [](const Tensor& self, const IValue& indices) { return index(self, optionalTensors(indices)); })
        .derivative({"self: torch.zeros_like(self).index_put(indices, grad, True)"})
        .shape(shapes::index),
    op("aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const IValue& indices, Tensor out) {
         return writeOut(out, index(self, optionalTensors(indices)), "index()", OutDtype::Any);
       })
        .shape(shapes::index),
    op("aten::index.Tensor_hacked_twin(Tensor self, Tensor[] indices) -> Tensor",
       [](const Tensor& self, const std::vector<Tensor>& indices) { return index(self, indices); })
        .derivative({"self: torch.zeros_like(self).index_put(indices, grad, True)", "grad_fn: IndexBackward0"})
        .shape(shapes::index),
    op("aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)",
       [](Tensor self, const IValue& indices, const Tensor& values, bool accumulate) {
         return indexPut_(self, optionalTensors(indices), values, accumulate);
       }),
    op("aten::index_put_.hacked_twin(Tensor(a!) self, Tensor[] indices, Tensor values, bool accumulate=False) -> "
       "Tensor(a!)",
       [](Tensor self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
         return indexPut_(self, indices, values, accumulate);
       }),
    op("aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
       [](const Tensor& self, const IValue& indices, const Tensor& values, bool accumulate) {
         return indexPut(self, optionalTensors(indices), values, accumulate);
       })
        .shape(shapes::likeSelf)
        .derivative({"self: grad if accumulate else grad.index_put(indices, torch.zeros_like(values), False)",
                     "values: grad.index(indices)"}),
    op("aten::index_put.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, *, Tensor(a!) "
       "out) -> Tensor(a!)",
       [](const Tensor& self, const IValue& indices, const Tensor& values, bool accumulate, Tensor out) {
         return writeOut(out, indexPut(self, optionalTensors(indices), values, accumulate), "index_put()",
                         OutDtype::Any);
       })
        .shape(shapes::likeSelf),
    // The implementation names torch's index_put dispatches to (`unsafe` skips
    // checks kiln always makes).
    op("aten::_index_put_impl(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, bool "
       "unsafe=False) -> Tensor",
       [](const Tensor& self, const IValue& indices, const Tensor& values, bool accumulate, bool) {
         return indexPut(self, optionalTensors(indices), values, accumulate);
       })
        .shape(shapes::likeSelf)
        .derivative({"self: grad if accumulate else grad.index_put(indices, torch.zeros_like(values), False)",
                     "values: grad.index(indices)"}),
    op("aten::_index_put_impl.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, bool "
       "unsafe=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const IValue& indices, const Tensor& values, bool accumulate, bool, Tensor out) {
         return writeOut(out, indexPut(self, optionalTensors(indices), values, accumulate), "_index_put_impl",
                         OutDtype::Any);
       })
        .shape(shapes::likeSelf),
    op("aten::_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False, bool "
       "unsafe=False) -> Tensor(a!)",
       [](Tensor self, const IValue& indices, const Tensor& values, bool accumulate, bool) {
         return indexPut_(self, optionalTensors(indices), values, accumulate);
       }),
    op("aten::_index_put_impl_.hacked_twin(Tensor(a!) self, Tensor[] indices, Tensor values, bool accumulate=False, "
       "bool unsafe=False) -> Tensor(a!)",
       [](Tensor self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate, bool) {
         return indexPut_(self, indices, values, accumulate);
       })
        // No functional twin to take the formula from.
        .derivative({"self: grad if accumulate else grad.index_put(indices, torch.zeros_like(values), False)",
                     "values: grad.index(indices)"}),
    op("aten::index_put.hacked_twin(Tensor self, Tensor[] indices, Tensor values, bool accumulate=False) -> Tensor",
       [](const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate) {
         return indexPut(self, indices, values, accumulate);
       })
        .shape(shapes::likeSelf)
        .derivative({"self: grad if accumulate else grad.index_put(indices, torch.zeros_like(values), False)",
                     "values: grad.index(indices)", "grad_fn: IndexPutBackward0"}), );

}  // namespace
}  // namespace kiln
