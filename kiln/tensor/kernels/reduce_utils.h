#pragma once
// What the reduction, softmax and scan kernels share: which dims an op
// reduces, the shapes it produces, PyTorch's out= conventions, and the
// [outer, reduced, inner] block view that line-wise kernels work on.
#include <bitset>
#include <optional>

#include "kiln/tensor/shape.h"  // resizeOutput, writeOut
#include "kiln/tensor/tensor.h"

namespace kiln::detail {

constexpr size_t kMaxReduceDims = 64;
// Bit d is set when dim d is reduced.
using DimMask = std::bitset<kMaxReduceDims>;

// The dims `dims` names, wrapped; absent or empty names every dim. A dim
// named twice is an error.
DimMask reductionMask(std::optional<IntArrayRef> dims, int64_t ndim);
// The single dim `dim` (wrapped), or every dim when absent.
DimMask reductionMask(std::optional<int64_t> dim, int64_t ndim);
// The result shape: reduced dims become 1 (keepdim) or disappear.
DimVector reducedShape(IntArrayRef sizes, const DimMask& mask, bool keepdim);
// A contiguous result of reducedShape(..., keepdim=true), viewed with the
// shape `keepdim` asks for.
Tensor dropReducedDims(const Tensor& keepdim_result, const DimMask& mask, bool keepdim);
// max, min, argmax, ... have no identity: every reduced dim must be non-empty.
void checkReducible(const char* op, const Tensor& self, const DimMask& mask, bool dim_given);

// `self` as a contiguous [outer, n, inner] block whose middle index runs over
// the reduced elements, so that element (o, j) of a contiguous keepdim result
// reduces data[o][*][j]. Reduced dims that are adjacent keep the input's
// layout (a copy only if it is not contiguous); others are moved last (inner = 1).
struct ReducedBlock {
  Tensor data;
  int64_t outer = 1, n = 1, inner = 1;
};
ReducedBlock reducedBlock(const Tensor& self, const DimMask& mask);

// Resizes `out` to `result`'s shape and copies `result` (converting dtype)
// into it; out= dtype rules are checked by the callers (checkOutDtype).
inline Tensor& assignOut(Tensor& out, const Tensor& result) { return writeOut(out, result, "out=", OutDtype::Any); }
void checkOutDtype(const Tensor& out, ScalarType expected);
// The dtype an op computes in: `dtype` if given (then `out`, if any, must
// have it), else `out`'s dtype if given, else `fallback`.
ScalarType reductionDtype(std::optional<ScalarType> dtype, const Tensor* out, ScalarType fallback);

}  // namespace kiln::detail
