#pragma once
// Searching and counting with PyTorch 1.13's CPU semantics: searchsorted
// (and bucketize through it), bincount, histc and the consecutive and
// per-dim forms of unique. Each checks its arguments as torch does and
// raises torch's message; results never depend on the thread count.
#include <optional>
#include <string>
#include <tuple>

#include "kiln/tensor/scalar.h"
#include "kiln/tensor/tensor.h"

namespace kiln {

// For each value, the index in its sequence (the innermost dim of
// `sorted_sequence`, one sequence for all values when it is 1-D, else one per
// leading index) of the first element >= the value (right or side "right":
// >), read through `sorter` when given. The two are compared in their
// promoted dtype, with torch's binary search (a NaN value lands past the
// end). The result has `values`' shape, int64 or (out_int32) int32.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    const std::optional<std::string>& side, const std::optional<Tensor>& sorter);

// Histogram of a 1-D tensor of non-negative integers: max(self.max() + 1,
// minlength) counts (int64), or sums of `weights` (float32 for float32
// weights, else float64).
Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength);

// Histogram of the elements of a float tensor in `bins` equal bins over
// [min, max] (the data's range when min == max); elements outside are
// ignored. The result has self's dtype.
Tensor histc(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max);

// The slices of `self` along `dim` (the elements, dim unset) with runs of
// equal neighbours collapsed to one (consecutive), or the distinct slices in
// ascending lexicographic order (!consecutive, dim set). Returns (unique,
// inverse: for each input slice the index of its unique slice, counts).
// With a dim, inverse and counts are always computed (as torch does);
// without one, each is an empty tensor unless asked for, and inverse has
// self's shape.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& self, std::optional<int64_t> dim, bool consecutive,
                                          bool return_inverse, bool return_counts);

}  // namespace kiln
