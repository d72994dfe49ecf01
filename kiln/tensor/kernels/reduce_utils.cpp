#include "kiln/tensor/kernels/reduce_utils.h"

#include "kiln/tensor/copy.h"

namespace kiln::detail {

DimMask reductionMask(std::optional<IntArrayRef> dims, int64_t ndim) {
  KILN_CHECK(ndim <= static_cast<int64_t>(kMaxReduceDims), "reductions support at most ", kMaxReduceDims,
             " dims, got a tensor of ", ndim);
  DimMask mask;
  if (!dims || dims->empty()) {
    for (int64_t d = 0; d < ndim; ++d) mask.set(static_cast<size_t>(d));
    return mask;
  }
  for (int64_t dim : *dims) {
    size_t d = static_cast<size_t>(wrapDim(dim, ndim));
    KILN_CHECK(!mask.test(d), "dim ", d, " appears multiple times in the list of dims");
    mask.set(d);
  }
  return mask;
}

DimMask reductionMask(std::optional<int64_t> dim, int64_t ndim) {
  if (!dim) return reductionMask(std::optional<IntArrayRef>(), ndim);
  int64_t d = *dim;
  return reductionMask(std::optional<IntArrayRef>(IntArrayRef(d)), ndim);
}

DimVector reducedShape(IntArrayRef sizes, const DimMask& mask, bool keepdim) {
  DimVector shape;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask.test(d)) {
      shape.push_back(sizes[d]);
    } else if (keepdim) {
      shape.push_back(1);
    }
  }
  return shape;
}

Tensor dropReducedDims(const Tensor& keepdim_result, const DimMask& mask, bool keepdim) {
  if (keepdim) return keepdim_result;
  DimVector shape = reducedShape(keepdim_result.sizes(), mask, false);
  return makeView(keepdim_result, shape, contiguousStrides(shape), keepdim_result.storageOffset());
}

void checkReducible(const char* op, const Tensor& self, const DimMask& mask, bool dim_given) {
  if (self.numel() != 0) return;
  KILN_CHECK(dim_given, op, "(): Expected reduction dim to be specified for input.numel() == 0. ",
             "Specify the reduction dim with the 'dim' argument.");
  for (int64_t d = 0; d < self.dim(); ++d) {
    KILN_CHECK_INDEX(!mask.test(static_cast<size_t>(d)) || self.sizes()[d] != 0, op, "(): Expected reduction dim ", d,
                     " to have non-zero size.");
  }
}

ReducedBlock reducedBlock(const Tensor& self, const DimMask& mask) {
  ReducedBlock block;
  int64_t first = -1, last = -1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!mask.test(static_cast<size_t>(d))) continue;
    if (first < 0) first = d;
    last = d;
  }
  bool adjacent = true;
  for (int64_t d = first; d >= 0 && d <= last; ++d) adjacent = adjacent && mask.test(static_cast<size_t>(d));
  if (adjacent) {
    block.data = contiguous(self);
    for (int64_t d = 0; d < self.dim(); ++d)
      (d < first ? block.outer : d > last ? block.inner : block.n) *= self.sizes()[d];
    return block;
  }
  // Kept dims first, then reduced ones, each in their original order.
  DimVector sizes, strides;
  for (bool reduced : {false, true}) {
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (mask.test(static_cast<size_t>(d)) != reduced) continue;
      sizes.push_back(self.sizes()[d]);
      strides.push_back(self.strides()[d]);
      (reduced ? block.n : block.outer) *= self.sizes()[d];
    }
  }
  block.data = contiguous(makeView(self, sizes, strides, self.storageOffset()));
  return block;
}

void checkOutDtype(const Tensor& out, ScalarType expected) {
  KILN_CHECK(out.dtype() == expected, "Expected out tensor to have dtype ", scalarTypeName(expected), ", but got ",
             scalarTypeName(out.dtype()), " instead");
}

ScalarType reductionDtype(std::optional<ScalarType> dtype, const Tensor* out, ScalarType fallback) {
  if (dtype) {
    if (out) checkOutDtype(*out, *dtype);
    return *dtype;
  }
  return out ? out->dtype() : fallback;
}

}  // namespace kiln::detail
