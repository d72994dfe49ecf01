#pragma once
// Pointwise tensor operations (unary, binary, ternary), with PyTorch's
// broadcasting and type promotion. `_` suffixes write into the first argument;
// `Out` forms write into `out`.
#include "kiln/tensor/tensor.h"

namespace kiln {

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& addOut(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out);

}  // namespace kiln
