#pragma once
// Gather/scatter and advanced indexing, with PyTorch 1.13's semantics.
//
// Out-of-range indices raise kiln::Error (IndexError for advanced indexing,
// as PyTorch does); nothing is read or written out of bounds.
#include <string>

#include "kiln/tensor/tensor.h"

namespace kiln {

// How scatter combines a value with what is already there.
enum class ScatterReduce { None, Add, Multiply };
// "add" or "multiply" (the `reduce=` argument of scatter).
ScatterReduce scatterReduceFromString(const std::string& reduce);

// out[..., i, ...] = self[..., index[i], ...] along `dim`; index is int32/int64, at most 1-D.
Tensor indexSelect(const Tensor& self, int64_t dim, const Tensor& index);
// out[i][j] = self[index[i][j]][j] (dim 0); index is int64 with self's rank.
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
// self[index[i][j]][j] (op)= src[i][j] (dim 0).
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 ScatterReduce reduce = ScatterReduce::None);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                 ScatterReduce reduce = ScatterReduce::None);
Tensor& scatterAdd_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
// self[..., index[i], ...] += alpha * source[..., i, ...] along `dim`.
Tensor& indexAdd_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
// self[..., index[i], ...] = value along `dim`.
Tensor& indexFill_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
// self.flatten()[index], shaped like index.
Tensor take(const Tensor& self, const Tensor& index);

// Where mask (bool, broadcast to self) is set, self takes `value` (cast to its dtype).
Tensor& maskedFill_(Tensor& self, const Tensor& mask, const Scalar& value);
// The out-of-place form broadcasts self and mask together.
Tensor maskedFill(const Tensor& self, const Tensor& mask, const Scalar& value);
// A 0-dim tensor value, as masked_fill.Tensor takes.
Scalar maskedFillValue(const Tensor& value);
// The elements of self where mask is set (broadcast together), as a 1-D tensor.
Tensor maskedSelect(const Tensor& self, const Tensor& mask);
// The coordinates of the nonzero elements: an int64 [n, self.dim()] tensor in row-major order.
Tensor nonzero(const Tensor& self);

// self[..., index[i], ...] = source[..., i, ...] along dim (index_copy_).
Tensor& indexCopy_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source);
// Where mask (broadcast to self) is set, self takes source's elements in order.
Tensor& maskedScatter_(Tensor& self, const Tensor& mask, const Tensor& source);
// self.flatten()[index] = source (or += when accumulate); negative indices count from the end.
Tensor& put_(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate);
// index_reduce_ and scatter_reduce_: the values going to one element of
// self combine by `reduce` ("sum" for scatter only, "prod", "mean", "amax",
// "amin"), with self's own value unless include_self is false.
Tensor& indexReduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                     bool include_self);
Tensor& scatterReduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                       bool include_self);

// Advanced indexing (aten::index): indices[d] indexes dim d (an undefined
// tensor is a full slice; bool/uint8 masks stand for their nonzero
// coordinates). Index tensors broadcast together; when they are adjacent the
// result's indexed dims replace them in place, else they come first.
Tensor index(const Tensor& self, ArrayRef<Tensor> indices);
// self[indices] = values (broadcast), or += when accumulate. values must have self's dtype.
Tensor& indexPut_(Tensor& self, ArrayRef<Tensor> indices, const Tensor& values, bool accumulate = false);

}  // namespace kiln
