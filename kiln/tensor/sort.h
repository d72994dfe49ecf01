#pragma once
// Sorting along a dim with PyTorch 1.13's CPU semantics: NaN sorts after
// every number (first when descending), -0.0 and 0.0 are equal, indices are
// int64. `stable` keeps equal elements in input order; an unstable sort
// orders them exactly as PyTorch's (libstdc++'s introsort) does, so that
// results never differ from torch's. A 0-dim tensor sorts as one element.
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false, bool stable = false);
// `values` must have self's dtype and `indices` int64; both are resized.
std::tuple<Tensor&, Tensor&> sortOut(const Tensor& self, int64_t dim, bool descending, bool stable, Tensor& values,
                                     Tensor& indices);
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false, bool stable = false);
// `out` may have any dtype.
Tensor& argsortOut(const Tensor& self, int64_t dim, bool descending, bool stable, Tensor& out);
// Sorted along dim 0 (unstable, ascending).
Tensor msort(const Tensor& self);
Tensor& msortOut(const Tensor& self, Tensor& out);

}  // namespace kiln
