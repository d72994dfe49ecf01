#pragma once
// Order statistics and running extrema along a dim, with PyTorch 1.13's CPU
// semantics, ties and NaN rules included:
//  - median returns the lower of the two middle values; a line holding NaN
//    gives NaN (its first NaN and that index); nanmedian ignores NaNs (NaN
//    only when every element is NaN);
//  - kthvalue orders NaN above every number;
//  - mode is the most frequent value, the smallest of equally frequent ones,
//    and the index of one of its occurrences chosen as PyTorch's does;
//  - cummax/cummin take the latest index among equal extrema, and once a NaN
//    is seen it is the running extremum (each later NaN moves the index).
// Values have self's dtype, indices are int64. A 0-dim tensor is one line of
// one element.
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

// The median of every element (`ignore_nan`: nanmedian).
Tensor median(const Tensor& self, bool ignore_nan);
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim, bool ignore_nan);
// The k-th smallest (1-based) along dim.
std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim);
std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim);

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim);
// log(cumsum(exp(x))) along dim without overflow; floating dtypes only.
Tensor logcumsumexp(const Tensor& self, int64_t dim);

}  // namespace kiln
