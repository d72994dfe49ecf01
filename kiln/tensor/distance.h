#pragma once
// p-norm distances between rows, the kernels of cdist's and pdist's direct
// paths (PyTorch 1.13's CPU semantics: p = 0 counts differing coordinates,
// p = inf takes the largest difference). Floating dtypes; p >= 0.
#include "kiln/tensor/tensor.h"

namespace kiln {

// Between every row of x1 [B, r1, c] and every row of x2 [B, r2, c] of the
// same batch: [B, r1, r2].
Tensor rowDistances(const Tensor& x1, const Tensor& x2, double p);
// Between rows i < j of x [n, c], in (0, 1), (0, 2), ..., (n - 2, n - 1) order.
Tensor rowPairDistances(const Tensor& x, double p);

// Their gradients with respect to x1 and x, for the output gradient `grad`
// and the distances `dist` they returned (torch's subgradient 0 where a
// distance, or for p < 1 a coordinate's difference, is 0).
Tensor rowDistancesBackward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p, const Tensor& dist);
Tensor rowPairDistancesBackward(const Tensor& grad, const Tensor& x, double p, const Tensor& dist);

}  // namespace kiln
