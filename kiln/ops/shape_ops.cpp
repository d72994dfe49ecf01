// aten:: registrations of views, shape operations and copies, with PyTorch 1.13's schemas.
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/complex.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

// narrow.Tensor takes its start as a 0-dim integer tensor.
int64_t startFromTensor(const Tensor& start) {
  KILN_CHECK(start.dim() == 0 && isIntegralType(start.dtype(), /*include_bool=*/false),
             "start must be an 0-dim integral Tensor.");
  return start.item().toLong();
}

std::vector<Tensor> tensorSplitBy(const Tensor& self, const Tensor& spec, int64_t dim) {
  KILN_CHECK(spec.dtype() == ScalarType::Long,
             "tensor_split expected tensor_indices_or_sections to have dtype of long, but got ", spec.dtype());
  KILN_CHECK(spec.dim() <= 1,
             "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, "
             "but got a tensor with ",
             spec.dim(), " dims");
  if (spec.dim() == 0) return tensorSplit(self, spec.item().toLong(), dim);
  Tensor c = contiguous(spec);
  const int64_t* p = c.data<int64_t>();
  return tensorSplitIndices(self, IntArrayRef(p, static_cast<size_t>(c.numel())), dim);
}

Tensor cloneWith(const Tensor& self, std::optional<int64_t> format) {
  return clone(self, format ? memoryFormatFromInt(*format) : MemoryFormat::Preserve);
}

// aten::copy, the functional copy_: self's shape, dtype and layout, src's values.
Tensor copied(const Tensor& self, const Tensor& src) {
  Tensor result = clone(self, MemoryFormat::Preserve);
  return checkedCopy_(result, src);
}

// copy_.int/float: torch copies the number as a tensor, overlap checks included.
Tensor fillFrom(Tensor self, const Scalar& value) { return checkedCopy_(self, scalarToTensor(value)); }

// size.int/stride.int: a 0-dim tensor has no dims to ask about.
int64_t checkedDim(const Tensor& self, int64_t dim) {
  KILN_CHECK_INDEX(self.dim() > 0, "Dimension specified as ", dim, " but tensor has no dimensions");
  return wrapDim(dim, self.dim());
}

// The out= forms PyTorch generates for ops returning Tensor[]: one out tensor
// per piece, each resized and written whatever its dtype.
void writeOuts(std::vector<Tensor>& outs, const std::vector<Tensor>& pieces, const char* op) {
  KILN_CHECK(outs.size() == pieces.size(), op, ": expected ", pieces.size(), " out tensors, got ", outs.size());
  for (size_t i = 0; i < outs.size(); ++i) writeOut(outs[i], pieces[i], op, OutDtype::Any);
}

// Views of each tensor expanded to the shape they broadcast to.
std::vector<Tensor> broadcastTensors(const std::vector<Tensor>& tensors) {
  DimVector shape;
  for (const Tensor& t : tensors) shape = broadcastShapes(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(expand(t, shape));
  return out;
}

Tensor detached(const Tensor& self) {
  Tensor out = alias(self);
  out.impl()->setRequiresGrad(false);
  return out;
}

// Formula fragments of as_strided's backward: one past the last storage
// element a strided geometry reads; the storage both geometries read; the
// gradient added into it at the result's elements, read back at self's.
#define KILN_STRIDED_EXTENT(size, stride, offset) \
  offset " + sum([(" size "[i] - 1) * " stride "[i] for i in range(len(" size "))]) + 1"
#define KILN_AS_STRIDED_OFFSET "(self.storage_offset() if storage_offset is None else storage_offset)"
#define KILN_AS_STRIDED_STORAGE                                                                  \
  "max(" KILN_STRIDED_EXTENT("size", "stride", KILN_AS_STRIDED_OFFSET) ", " KILN_STRIDED_EXTENT( \
      "self.size()", "self.stride()", "self.storage_offset()") ")"
#define KILN_AS_STRIDED_BACKWARD                                                                     \
  "grad.new_zeros([" KILN_AS_STRIDED_STORAGE "]).index_add(0, torch.arange(" KILN_AS_STRIDED_STORAGE \
  ").as_strided(size, stride, " KILN_AS_STRIDED_OFFSET                                               \
  ").reshape(-1), grad.reshape(-1))[torch.arange(" KILN_AS_STRIDED_STORAGE                           \
  ").as_strided(self.size(), self.stride(), self.storage_offset())]"

KILN_REGISTER_OPS(
    // Views.
    op("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
       [](const Tensor& self, IntArrayRef size) { return view(self, size); })
        .derivative({"self: grad.reshape(self.size())"})
        .shape(shapes::view),
    op("aten::view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)",
       [](const Tensor& self, ScalarType dtype) { return viewDtype(self, dtype); })
        .shape(shapes::viewDtype)
        .derivative({"non_differentiable: result"}),
    op("aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a)",
       [](const Tensor& self, const Tensor& other) { return view(self, other.sizes()); })
        .shape(shapes::viewAsOther)
        .traits(OpTrait::OnlySelfRequiresGrad)
        .derivative({"self: grad.reshape(self.size())", "grad_fn: ViewBackward0"}),
    op("aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
       [](const Tensor& self, IntArrayRef shape) { return reshape(self, shape); })
        .derivative({"self: grad.reshape(self.size())", "grad_fn: ReshapeAliasBackward0"})
        .shape(shapes::view),
    op("aten::reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)",
       [](const Tensor& self, const Tensor& other) { return reshape(self, other.sizes()); })
        .shape(shapes::viewAsOther)
        .traits(OpTrait::OnlySelfRequiresGrad)
        .derivative({"self: grad.reshape(self.size())", "grad_fn: ReshapeAliasBackward0"}),
    op("aten::ravel(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return reshape(self, DimVector{-1}); })
        .shape(shapes::ravel)
        .derivative({"self: grad.reshape(self.size())", "grad_fn: ViewBackward0"}),
    op("aten::t(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return t(self); })
        .derivative({"self: grad.t()", "grad_fn: TBackward0"})
        .shape(shapes::transpose2d),
    op("aten::t_(Tensor(a!) self) -> Tensor(a!)", [](Tensor self) { return t_(self); })
        .derivative({"self: grad.t()", "grad_fn: TBackward1"}),
    op("aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
       [](const Tensor& self, int64_t dim0, int64_t dim1) { return transpose(self, dim0, dim1); })
        .derivative({"self: grad.transpose(dim0, dim1)"})
        .shape(shapes::transpose),
    op("aten::transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)",
       [](Tensor self, int64_t dim0, int64_t dim1) { return transpose_(self, dim0, dim1); })
        .derivative({"self: grad.transpose(dim0, dim1)", "grad_fn: TransposeBackward1"}),
    op("aten::swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)",
       [](const Tensor& self, int64_t dim0, int64_t dim1) { return transpose(self, dim0, dim1); })
        .shape(shapes::transpose)
        .aliasOf("aten::transpose")
        .derivative({"self: grad.transpose(axis0, axis1)", "grad_fn: TransposeBackward0"}),
    op("aten::swapaxes_(Tensor(a!) self, int axis0, int axis1) -> Tensor(a!)",
       [](Tensor self, int64_t dim0, int64_t dim1) { return transpose_(self, dim0, dim1); })
        .aliasOf("aten::transpose_")
        .derivative({"self: grad.transpose(axis0, axis1)", "grad_fn: TransposeBackward1"}),
    op("aten::swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
       [](const Tensor& self, int64_t dim0, int64_t dim1) { return transpose(self, dim0, dim1); })
        .shape(shapes::transpose)
        .aliasOf("aten::transpose")
        .derivative({"self: grad.transpose(dim0, dim1)", "grad_fn: TransposeBackward0"}),
    op("aten::swapdims_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)",
       [](Tensor self, int64_t dim0, int64_t dim1) { return transpose_(self, dim0, dim1); })
        .aliasOf("aten::transpose_")
        .derivative({"self: grad.transpose(dim0, dim1)", "grad_fn: TransposeBackward1"}),
    op("aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)",
       [](const Tensor& self, IntArrayRef dims) { return permute(self, dims); })
        .derivative({"self: _permute_backward(grad, dims)"})
        .shape(shapes::permute),
    op("aten::numpy_T(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return numpyT(self); })
        .shape(shapes::numpyT)
        .derivative({"self: grad.permute([grad.dim() - 1 - i for i in range(grad.dim())])",
                     "grad_fn: PermuteBackward0"}),
    op("aten::numpy_T.a(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return numpyT(self); })
        .shape(shapes::numpyT)
        .derivative({"self: grad.permute([grad.dim() - 1 - i for i in range(grad.dim())])",
                     "grad_fn: PermuteBackward0"}),
    op("aten::mT(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return matrixT(self); })
        .shape(shapes::mT)
        .derivative({"self: grad.transpose(-2, -1)", "grad_fn: TransposeBackward0"}),
    op("aten::mT.a(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return matrixT(self); })
        .shape(shapes::mT)
        .derivative({"self: grad.transpose(-2, -1)", "grad_fn: TransposeBackward0"}),
    // The conjugate of the matrix transpose: a copy for complex tensors (kiln has no lazy conjugate bit).
    op("aten::adjoint(Tensor(a) self) -> Tensor(a)",
       [](const Tensor& self) { return conj(matrixT(self, "tensor.adjoint()")); })
        .shape(shapes::mT)
        .derivative({"self: grad.transpose(-2, -1)", "grad_fn: TransposeBackward0"}),
    op("aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
       [](const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
         return diagonal(self, offset, dim1, dim2);
       })
        .shape(shapes::diagonal)
        .derivative({"self: grad.new_zeros([self.numel()]).index_add(0, "
                     "torch.arange(self.numel()).reshape(self.size()).diagonal(offset, dim1, dim2).reshape(-1), "
                     "grad.reshape(-1)).reshape(self.size())"}),
    op("aten::unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)",
       [](const Tensor& self, int64_t dim, int64_t size, int64_t step) { return unfold(self, dim, size, step); })
        .shape(shapes::unfold)
        .derivative({"self: grad.new_zeros([self.numel()]).index_add(0, "
                     "torch.arange(self.numel()).reshape(self.size()).unfold(dimension, size, step).reshape(-1), "
                     "grad.reshape(-1)).reshape(self.size())"}),
    op("aten::moveaxis.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
       [](const Tensor& self, IntArrayRef source, IntArrayRef destination) {
         return movedim(self, source, destination);
       })
        .shape(shapes::movedim)
        .aliasOf("aten::movedim"),
    op("aten::moveaxis.int(Tensor(a) self, int source, int destination) -> Tensor(a)",
       [](const Tensor& self, int64_t source, int64_t destination) {
         return movedim(self, DimVector{source}, DimVector{destination});
       })
        .shape(shapes::movedim)
        .aliasOf("aten::movedim"),
    op("aten::movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
       [](const Tensor& self, IntArrayRef source, IntArrayRef destination) {
         return movedim(self, source, destination);
       })
        .shape(shapes::movedim)
        .derivative({"self: grad.movedim(destination, source)", "grad_fn: PermuteBackward0"}),
    op("aten::movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)",
       [](const Tensor& self, int64_t source, int64_t destination) {
         return movedim(self, DimVector{source}, DimVector{destination});
       })
        .shape(shapes::movedim)
        .derivative({"self: grad.movedim(destination, source)", "grad_fn: PermuteBackward0"}),
    op("aten::select.int(Tensor(a) self, int dim, int index) -> Tensor(a)",
       [](const Tensor& self, int64_t dim, int64_t index) { return select(self, dim, index); })
        .derivative({"self: torch.zeros_like(self).select_scatter(grad, dim, index)"})
        .shape(shapes::select),
    op("aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> "
       "Tensor(a)",
       [](const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
         return slice(self, dim, start, end, step);
       })
        .derivative({"self: torch.zeros_like(self).slice_scatter(grad, dim, start, end, step)"})
        .shape(shapes::slice),
    op("aten::narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)",
       [](const Tensor& self, int64_t dim, int64_t start, int64_t length) { return narrow(self, dim, start, length); })
        .shape(shapes::narrow)
        .derivative({"self: torch.zeros_like(self).slice_scatter(grad, dim, start if start >= 0 else start + "
                     "self.size(dim), (start if start >= 0 else start + self.size(dim)) + length)",
                     "grad_fn: SliceBackward0"}),
    op("aten::narrow.Tensor(Tensor(a) self, int dim, Tensor start, int length) -> Tensor(a)",
       [](const Tensor& self, int64_t dim, const Tensor& start, int64_t length) {
         return narrow(self, dim, startFromTensor(start), length);
       })
        .shape(shapes::narrow)
        .derivative(
            {"self: torch.zeros_like(self).slice_scatter(grad, dim, int(start) if int(start) >= 0 else int(start) + "
             "self.size(dim), (int(start) if int(start) >= 0 else int(start) + self.size(dim)) + length)",
             "grad_fn: SliceBackward0"}),
    op("aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
       [](const Tensor& self, IntArrayRef size, bool) { return expand(self, size); })
        .derivative({"self: grad"})
        .shape(shapes::expand),
    op("aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)",
       [](const Tensor& self, const Tensor& other) { return expand(self, other.sizes()); })
        .derivative({"self: grad", "grad_fn: ExpandBackward0"})
        .shape(shapes::expandAs)
        .traits(OpTrait::OnlySelfRequiresGrad),
    op("aten::broadcast_tensors(Tensor[] tensors) -> Tensor[]", broadcastTensors)
        .derivative({"tensors: grads", "grad_fn: ExpandBackward0"}),
    op("aten::squeeze(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return squeeze(self); })
        .derivative({"self: grad.reshape(self.size())"})
        .shape(shapes::squeeze),
    op("aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
       [](const Tensor& self, int64_t dim) { return squeeze(self, dim); })
        .derivative({"self: grad.reshape(self.size())", "grad_fn: SqueezeBackward1"})
        .shape(shapes::squeeze),
    op("aten::squeeze_(Tensor(a!) self) -> Tensor(a!)", [](Tensor self) { return squeeze_(self); })
        .derivative({"self: grad.reshape(self.size())", "grad_fn: SqueezeBackward2"}),
    op("aten::squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)",
       [](Tensor self, int64_t dim) { return squeeze_(self, dim); })
        .derivative({"self: grad.reshape(self.size())", "grad_fn: SqueezeBackward3"}),
    op("aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
       [](const Tensor& self, int64_t dim) { return unsqueeze(self, dim); })
        .derivative({"self: grad.squeeze(dim)"})
        .shape(shapes::unsqueeze),
    op("aten::unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)",
       [](Tensor self, int64_t dim) { return unsqueeze_(self, dim); })
        .derivative({"self: grad.squeeze(dim)", "grad_fn: UnsqueezeBackward1"}),
    op("aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
       [](const Tensor& self, int64_t start_dim, int64_t end_dim) { return flatten(self, start_dim, end_dim); })
        .derivative({"self: grad.reshape(self.size())", "grad_fn: ReshapeAliasBackward0"})
        .shape(shapes::flatten),
    op("aten::unflatten.int(Tensor(a) self, int dim, int[] sizes) -> Tensor(a)",
       [](const Tensor& self, int64_t dim, IntArrayRef sizes) { return unflatten(self, dim, sizes); })
        .shape(shapes::unflatten)
        .derivative({"self: grad.reshape(self.size())", "grad_fn: ViewBackward0"}),
    op("aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
       [](const Tensor& self, int64_t dim) { return unbind(self, dim); })
        .derivative({"self: torch.stack(grads, dim)"})
        .shape(shapes::unbind),
    op("aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
       [](const Tensor& self, int64_t chunks, int64_t dim) { return chunk(self, chunks, dim); })
        .derivative({"self: torch.cat(grads, dim)", "grad_fn: SplitBackward0"})
        .shape(shapes::chunk),
    // split.Tensor first: an int[] parameter also accepts a bare int from Python.
    op("aten::split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[]",
       [](const Tensor& self, int64_t split_size, int64_t dim) { return split(self, split_size, dim); })
        .derivative({"self: torch.cat(grads, dim)", "grad_fn: SplitBackward0"})
        .shape(shapes::split),
    op("aten::split.sizes(Tensor(a -> *) self, int[] split_size, int dim=0) -> Tensor(a)[]",
       [](const Tensor& self, IntArrayRef sizes, int64_t dim) { return splitWithSizes(self, sizes, dim); })
        .derivative({"self: torch.cat(grads, dim)", "grad_fn: SplitWithSizesBackward0"})
        .shape(shapes::splitWithSizes),
    op("aten::split(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]",
       [](const Tensor& self, IntArrayRef sizes, int64_t dim) { return splitWithSizes(self, sizes, dim); })
        .shape(shapes::split)
        .derivative({"self: torch.cat(grads, dim)", "grad_fn: SplitWithSizesBackward0"}),
    op("aten::split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]",
       [](const Tensor& self, IntArrayRef sizes, int64_t dim) { return splitWithSizes(self, sizes, dim); })
        .derivative({"self: torch.cat(grads, dim)"})
        .shape(shapes::splitWithSizes),
    // The unsafe_ forms differ only in autograd's view tracking, which kiln does not do.
    op("aten::unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]",
       [](const Tensor& self, int64_t chunks, int64_t dim) { return chunk(self, chunks, dim); })
        .shape(shapes::chunk)
        .derivative({"self: torch.cat(grads, dim)", "grad_fn: UnsafeSplitBackward0"}),
    op("aten::unsafe_split.Tensor(Tensor self, int split_size, int dim=0) -> Tensor[]",
       [](const Tensor& self, int64_t split_size, int64_t dim) { return split(self, split_size, dim); })
        .shape(shapes::split)
        .derivative({"self: torch.cat(grads, dim)"}),
    op("aten::unsafe_split_with_sizes(Tensor self, int[] split_sizes, int dim=0) -> Tensor[]",
       [](const Tensor& self, IntArrayRef sizes, int64_t dim) { return splitWithSizes(self, sizes, dim); })
        .shape(shapes::splitWithSizes)
        .derivative({"self: torch.cat(grads, dim)"}),
    op("aten::unsafe_split.Tensor_out(Tensor self, int split_size, int dim=0, *, Tensor(a!)[] out) -> ()",
       [](const Tensor& self, int64_t split_size, int64_t dim, std::vector<Tensor> out) {
         writeOuts(out, split(self, split_size, dim), "unsafe_split");
       }),
    op("aten::unsafe_split_with_sizes.out(Tensor self, int[] split_sizes, int dim=0, *, Tensor(a!)[] out) -> ()",
       [](const Tensor& self, IntArrayRef sizes, int64_t dim, std::vector<Tensor> out) {
         writeOuts(out, splitWithSizes(self, sizes, dim), "unsafe_split_with_sizes");
       }),
    op("aten::tensor_split.sections(Tensor(a -> *) self, int sections, int dim=0) -> Tensor(a)[]",
       [](const Tensor& self, int64_t sections, int64_t dim) { return tensorSplit(self, sections, dim); })
        .shape(shapes::tensorSplit)
        .derivative({"self: torch.cat(grads, dim)", "grad_fn: SliceBackward0"}),
    op("aten::tensor_split.indices(Tensor(a -> *) self, int[] indices, int dim=0) -> Tensor(a)[]",
       [](const Tensor& self, IntArrayRef indices, int64_t dim) { return tensorSplitIndices(self, indices, dim); })
        .shape(shapes::tensorSplit)
        .derivative({"self: torch.cat(grads, dim)", "grad_fn: SliceBackward0"}),
    op("aten::tensor_split.tensor_indices_or_sections(Tensor(a -> *) self, Tensor tensor_indices_or_sections, int "
       "dim=0) -> Tensor(a)[]",
       [](const Tensor& self, const Tensor& spec, int64_t dim) { return tensorSplitBy(self, spec, dim); })
        .shape(shapes::tensorSplit)
        .derivative({"self: torch.cat(grads, dim)", "grad_fn: SliceBackward0"}),
    op("aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
       [](const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> offset) {
         return asStrided(self, size, stride, offset);
       })
        .shape(shapes::asStrided)
        .derivative({"self: " KILN_AS_STRIDED_BACKWARD}),
    op("aten::as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> "
       "Tensor(a!)",
       [](Tensor self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> offset) {
         return asStrided_(self, size, stride, offset);
       }),
    op("aten::alias(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return alias(self); })
        .shape(shapes::alias)
        .derivative({"self: grad", "grad_fn: AliasBackward0"}),
    op("aten::detach(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return detached(self); })
        .shape(shapes::alias)
        .traits(OpTrait::NeverRequiresGrad),
    op("aten::detach_(Tensor(a!) self) -> Tensor(a!)",
       [](Tensor self) {
         self.impl()->setRequiresGrad(false);
         return self;
       })
        .traits(OpTrait::NeverRequiresGrad),

    // Geometry queries.
    op("aten::size.int(Tensor self, int dim) -> int",
       [](const Tensor& self, int64_t dim) { return self.sizes()[checkedDim(self, dim)]; }),
    op("aten::size(Tensor self) -> int[]", [](const Tensor& self) { return DimVector(self.sizes()); }),
    op("aten::stride.int(Tensor self, int dim) -> int",
       [](const Tensor& self, int64_t dim) { return self.strides()[checkedDim(self, dim)]; }),
    op("aten::stride(Tensor self) -> int[]", [](const Tensor& self) { return DimVector(self.strides()); }),
    op("aten::dim(Tensor self) -> int", [](const Tensor& self) { return self.dim(); }),
    op("aten::numel(Tensor self) -> int", [](const Tensor& self) { return self.numel(); }),

    // Copies.
    op("aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)",
       [](const Tensor& self, int64_t format) { return contiguous(self, memoryFormatFromInt(format)); })
        .derivative({"self: grad", "grad_fn: CloneBackward0"})
        .shape(shapes::contiguousOp),
    op("aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
       [](const Tensor& self, std::optional<int64_t> format) { return cloneWith(self, format); })
        .derivative({"self: grad"})
        .shape(shapes::sameDtype),
    op("aten::clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, std::optional<int64_t> format, Tensor out) {
         return writeOut(out, cloneWith(self, format), "clone", OutDtype::Any);
       })
        .shape(shapes::sameDtype),
    op("aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
       [](Tensor self, const Tensor& src, bool) { return checkedCopy_(self, src); })
        .derivative({"self: torch.zeros_like(grad)", "src: grad", "grad_fn: torch::autograd::CopyBackwards"}),
    op("aten::copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
       [](const Tensor& self, const Tensor& src, bool) { return copied(self, src); })
        .shape(shapes::likeSelf)
        .derivative({"self: torch.zeros_like(grad)", "src: grad"}),
    op("aten::copy.out(Tensor self, Tensor src, bool non_blocking=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& src, bool, Tensor out) {
         return writeOut(out, copied(self, src), "copy", OutDtype::Any);
       }),
    op("aten::copy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       [](Tensor self, const Tensor& other) { return checkedCopy_(self, other); })
        .derivative({"self: torch.zeros_like(grad)", "other: grad", "grad_fn: torch::autograd::CopyBackwards"}),
    op("aten::copy_.int(Tensor(a!) self, int other) -> Tensor(a!)",
       [](Tensor self, int64_t other) { return fillFrom(self, other); })
        .derivative({"self: torch.zeros_like(grad)", "grad_fn: FillBackward2"}),
    op("aten::copy_.float(Tensor(a!) self, float other) -> Tensor(a!)",
       [](Tensor self, double other) { return fillFrom(self, other); })
        .derivative({"self: torch.zeros_like(grad)", "grad_fn: FillBackward2"}),

    // Shape operations.
    op("aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
       [](const std::vector<Tensor>& tensors, int64_t dim) { return cat(tensors, dim); })
        .derivative({"tensors: _cat_backward(grad, tensors, dim)"})
        .shape(shapes::cat),
    op("aten::cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, int64_t dim, Tensor out) { return catOut(tensors, dim, out); })
        .shape(shapes::cat),
    op("aten::concat(Tensor[] tensors, int dim=0) -> Tensor",
       [](const std::vector<Tensor>& tensors, int64_t dim) { return cat(tensors, dim); })
        .shape(shapes::cat)
        .aliasOf("aten::cat"),
    op("aten::concat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, int64_t dim, Tensor out) { return catOut(tensors, dim, out); })
        .shape(shapes::cat)
        .aliasOf("aten::cat"),
    op("aten::stack(Tensor[] tensors, int dim=0) -> Tensor",
       [](const std::vector<Tensor>& tensors, int64_t dim) { return stack(tensors, dim); })
        .derivative({"tensors: grad.unbind(dim)"})
        .shape(shapes::stack),
    op("aten::stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, int64_t dim, Tensor out) { return stackOut(tensors, dim, out); })
        .shape(shapes::stack),
    op("aten::repeat(Tensor self, SymInt[] repeats) -> Tensor",
       [](const Tensor& self, IntArrayRef repeats) { return repeat(self, repeats); })
        .shape(shapes::repeat)
        .traits(OpTrait::Expensive)
        .derivative({"self: grad.reshape([repeats[j // 2] if j % 2 == 0 else (1 if j // 2 < len(repeats) - self.dim() "
                     "else self.size(j // 2 - len(repeats) + self.dim())) for j in range(2 * len(repeats))]).sum([2 * "
                     "i for i in range(len(repeats))]).reshape(self.size())"}),
    op("aten::repeat.out(Tensor self, SymInt[] repeats, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef repeats, Tensor out) {
         return writeOut(out, repeat(self, repeats), "repeat", OutDtype::Any);
       })
        .shape(shapes::repeat)
        .traits(OpTrait::Expensive),
    op("aten::select_scatter(Tensor self, Tensor src, int dim, int index) -> Tensor",
       [](const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
         return selectScatter(self, src, dim, index);
       })
        .shape(shapes::likeSelf)
        .derivative({"self: grad.select_scatter(torch.zeros_like(src), dim, index)", "src: grad.select(dim, index)"}),
    op("aten::select_scatter.out(Tensor self, Tensor src, int dim, int index, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& src, int64_t dim, int64_t index, Tensor out) {
         return writeOut(out, selectScatter(self, src, dim, index), "select_scatter", OutDtype::Any);
       })
        .shape(shapes::likeSelf),
    op("aten::slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) "
       "-> Tensor",
       [](const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
          int64_t step) { return sliceScatter(self, src, dim, start, end, step); })
        .shape(shapes::likeSelf)
        .derivative({"self: grad.slice_scatter(torch.zeros_like(src), dim, start, end, step)",
                     "src: grad.slice(dim, start, end, step)"}),
    op("aten::slice_scatter.out(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt "
       "step=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
          int64_t step, Tensor out) {
         return writeOut(out, sliceScatter(self, src, dim, start, end, step), "slice_scatter", OutDtype::Any);
       })
        .shape(shapes::likeSelf),
    op("aten::flip(Tensor self, int[] dims) -> Tensor",
       [](const Tensor& self, IntArrayRef dims) { return flip(self, dims); })
        .shape(shapes::sameDtype)
        .derivative({"self: grad.flip(dims)"}),
    op("aten::flip.out(Tensor self, int[] dims, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef dims, Tensor out) {
         return writeOut(out, flip(self, dims), "flip", OutDtype::Any);
       })
        .shape(shapes::sameDtype),
    op("aten::roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor",
       [](const Tensor& self, IntArrayRef shifts, IntArrayRef dims) { return roll(self, shifts, dims); })
        .shape(shapes::sameDtype)
        .derivative({"self: grad.roll([-s for s in shifts], dims)"}),
    op("aten::roll.out(Tensor self, int[1] shifts, int[1] dims=[], *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef shifts, IntArrayRef dims, Tensor out) {
         return writeOut(out, roll(self, shifts, dims), "roll", OutDtype::Any);
       })
        .shape(shapes::sameDtype),
    op("aten::tril(Tensor self, int diagonal=0) -> Tensor",
       [](const Tensor& self, int64_t diagonal) { return tril(self, diagonal); })
        .shape(shapes::sameDtype)
        .derivative({"self: grad.tril(diagonal)"}),
    op("aten::tril.out(Tensor self, int diagonal=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t diagonal, Tensor out) { return writeOut(out, tril(self, diagonal), "tril"); })
        .shape(shapes::sameDtype),
    op("aten::tril_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)",
       [](Tensor self, int64_t diagonal) { return tril_(self, diagonal); }),
    op("aten::triu(Tensor self, int diagonal=0) -> Tensor",
       [](const Tensor& self, int64_t diagonal) { return triu(self, diagonal); })
        .shape(shapes::sameDtype)
        .derivative({"self: grad.triu(diagonal)"}),
    op("aten::triu.out(Tensor self, int diagonal=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t diagonal, Tensor out) { return writeOut(out, triu(self, diagonal), "triu"); })
        .shape(shapes::sameDtype),
    op("aten::triu_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)",
       [](Tensor self, int64_t diagonal) { return triu_(self, diagonal); }), );

}  // namespace
}  // namespace kiln
