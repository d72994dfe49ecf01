#pragma once
// Views and shape operations, with PyTorch 1.13's semantics and messages.
//
// View functions (view, select, slice, transpose, expand, ...) return tensors
// sharing `self`'s storage: writes through them reach the base. The `_`
// geometry functions (transpose_, squeeze_, ...) change `self`'s own sizes and
// strides. Shape operations (cat, stack, repeat, flip, ...) return new tensors.
#include <optional>
#include <vector>

#include "kiln/tensor/tensor.h"
#include "kiln/util/error.h"

namespace kiln {

// PyTorch's MemoryFormat enum values (what TorchScript passes as an int).
enum class MemoryFormat : int64_t { Contiguous = 0, Preserve = 1, ChannelsLast = 2, ChannelsLast3d = 3 };
MemoryFormat memoryFormatFromInt(int64_t value);
// PyTorch's is_contiguous(memory_format): whether `self` has the layout a
// fresh tensor of that format would (size-1 dims may have any stride). The
// channels-last formats hold only at rank 4 / 5; Preserve asks for plain contiguity.
bool isContiguous(const Tensor& self, MemoryFormat format);

// Calls f(T{}) with an unsigned integer type T of `itemsize` bytes: kernels
// that only move elements need no per-dtype instantiation.
template <typename F>
void withElementType(size_t itemsize, const F& f) {
  switch (itemsize) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: KILN_ERROR("unsupported element size ", itemsize);
  }
}

// ---- Geometry helpers ----

// `shape` with its one -1 replaced so that it holds `numel` elements.
DimVector inferSize(IntArrayRef shape, int64_t numel);
// Strides that let (sizes, strides) be viewed as `new_sizes` without a copy,
// or nullopt when some new dim would span two non-contiguous chunks.
std::optional<DimVector> computeStride(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes);
// Whether the elements tile a dense block without overlap in some dim order.
bool isNonOverlappingAndDense(const Tensor& t);
// PyTorch's memory-overlap checks for ops that write into `t`.
void assertNoInternalOverlap(const Tensor& t);
// Writing `a` while reading `b` is unsafe when they share only part of their memory.
void assertNoPartialOverlap(const Tensor& a, const Tensor& b);
// Like assertNoPartialOverlap, but also rejects `a` and `b` being the same memory.
void assertNoOverlap(const Tensor& a, const Tensor& b);
// Gives `out` the shape `sizes` (fresh contiguous storage) unless it already has it.
Tensor& resizeOutput(Tensor& out, IntArrayRef sizes);
// Which out= dtypes an op accepts (PyTorch differs by op): only the result's,
// any the result can be cast to by category (cat), or any at all (ops that copy).
enum class OutDtype { Exact, Castable, Any };
// Writes `result` to an out= tensor, resized as needed.
Tensor& writeOut(Tensor& out, const Tensor& result, const char* op, OutDtype rule = OutDtype::Exact);

// ---- Views ----

Tensor view(const Tensor& self, IntArrayRef size);
// Reinterprets the bytes as another dtype; the last dim scales with the element size.
Tensor viewDtype(const Tensor& self, ScalarType dtype);
// A view when the strides allow it, else a copy.
Tensor reshape(const Tensor& self, IntArrayRef shape);
Tensor t(const Tensor& self);
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& self, IntArrayRef dims);
// All dims reversed (Python's x.T).
Tensor numpyT(const Tensor& self);
// The last two dims swapped (x.mT; a 0-dim tensor is returned as is); `op` names
// the caller in the 1-D error.
Tensor matrixT(const Tensor& self, const char* op = "tensor.mT");
// The diagonal of the (dim1, dim2) matrices, appended as the last dim.
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
// Windows of `size` elements every `step` along `dim`, as a new last dim.
Tensor unfold(const Tensor& self, int64_t dim, int64_t size, int64_t step);
Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination);
Tensor select(const Tensor& self, int64_t dim, int64_t index);
// Python slice semantics: start/end clamp into range, None means the whole dim.
Tensor slice(const Tensor& self, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
// -1 keeps a size; new leading dims and size-1 dims broadcast (stride 0).
Tensor expand(const Tensor& self, IntArrayRef size);
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, int64_t dim);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes);
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> splitWithSizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> tensorSplit(const Tensor& self, int64_t sections, int64_t dim = 0);
std::vector<Tensor> tensorSplitIndices(const Tensor& self, IntArrayRef indices, int64_t dim = 0);
Tensor asStrided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                 std::optional<int64_t> storage_offset = std::nullopt);
// A new tensor object over the same memory (PyTorch's alias and detach).
Tensor alias(const Tensor& self);

// In-place geometry: `self` itself takes the view's sizes and strides.
Tensor& transpose_(Tensor& self, int64_t dim0, int64_t dim1);
Tensor& t_(Tensor& self);
Tensor& squeeze_(Tensor& self);
Tensor& squeeze_(Tensor& self, int64_t dim);
Tensor& unsqueeze_(Tensor& self, int64_t dim);
Tensor& asStrided_(Tensor& self, IntArrayRef size, IntArrayRef stride,
                   std::optional<int64_t> storage_offset = std::nullopt);

// ---- Copies ----

// `self` when it already has the layout, else a copy in it.
Tensor contiguous(const Tensor& self, MemoryFormat format);
// A copy; Preserve keeps the strides of a dense, non-overlapping input.
Tensor clone(const Tensor& self, MemoryFormat format);
// aten::copy_: src broadcast to self's shape and converted to its dtype, with
// PyTorch's overlap checks.
Tensor& checkedCopy_(Tensor& self, const Tensor& src);
// Sets every element to a 0-dim tensor's value. Like PyTorch's fill_ it has no
// overlap check: every write to a shared location writes the same value.
Tensor& fillWith_(Tensor& self, const Tensor& value);

// ---- Shape operations ----

// Concatenation with type promotion across inputs; 1-D empty tensors are skipped.
Tensor cat(ArrayRef<Tensor> tensors, int64_t dim = 0);
Tensor& catOut(ArrayRef<Tensor> tensors, int64_t dim, Tensor& out);
Tensor stack(ArrayRef<Tensor> tensors, int64_t dim = 0);
Tensor& stackOut(ArrayRef<Tensor> tensors, int64_t dim, Tensor& out);
Tensor repeat(const Tensor& self, IntArrayRef repeats);
// A copy of self with select(dim, index) (resp. the slice) replaced by src, which must have its shape.
Tensor selectScatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index);
Tensor sliceScatter(const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                    std::optional<int64_t> end, int64_t step);
Tensor flip(const Tensor& self, IntArrayRef dims);
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims);
// Lower/upper triangle of the last two dims; the rest is zeroed.
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor triu(const Tensor& self, int64_t diagonal = 0);
Tensor& tril_(Tensor& self, int64_t diagonal = 0);
Tensor& triu_(Tensor& self, int64_t diagonal = 0);

}  // namespace kiln
