#pragma once
// Matrix products. float32/float64 go through BLAS (oneDNN's sgemm for
// float32 where oneDNN has AVX-512, else OpenBLAS; strided and
// transposed operands are passed as they are when BLAS can read them);
// integer dtypes use plain loops, as PyTorch's CPU fallback does. Operands
// must share one dtype (no type promotion, as in PyTorch); shapes and dtypes
// are checked with PyTorch's messages. `Out` forms resize `out`.
#include <optional>

#include "kiln/tensor/tensor.h"

namespace kiln {

// self (n x k) @ mat2 (k x m).
Tensor mm(const Tensor& self, const Tensor& mat2);
Tensor& mmOut(const Tensor& self, const Tensor& mat2, Tensor& out);
// Batched: (b x n x k) @ (b x k x m).
Tensor bmm(const Tensor& self, const Tensor& mat2);
Tensor& bmmOut(const Tensor& self, const Tensor& mat2, Tensor& out);
// beta * self + alpha * (mat1 @ mat2), self broadcast to the product's shape.
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor& addmmOut(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
                 Tensor& out);
// beta * self + alpha * (batch1 @ batch2), batched.
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
Tensor& baddbmmOut(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                   const Scalar& alpha, Tensor& out);
// Matrix-vector: (n x k) @ (k).
Tensor mv(const Tensor& self, const Tensor& vec);
Tensor& mvOut(const Tensor& self, const Tensor& vec, Tensor& out);
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta = 1, const Scalar& alpha = 1);
Tensor& addmvOut(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha,
                 Tensor& out);
// Inner product of two 1-D tensors (a 0-dim result).
Tensor dot(const Tensor& self, const Tensor& other);
Tensor& dotOut(const Tensor& self, const Tensor& other, Tensor& out);
// Outer product of two 1-D tensors (with type promotion, as torch.outer).
Tensor outer(const Tensor& self, const Tensor& vec2);
Tensor& outerOut(const Tensor& self, const Tensor& vec2, Tensor& out);
// torch.matmul: dot, mv, mm or a batched product with broadcast batch dims,
// depending on the operands' ranks.
Tensor matmul(const Tensor& self, const Tensor& other);
Tensor& matmulOut(const Tensor& self, const Tensor& other, Tensor& out);
// input @ weight^T (+ bias).
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias);

// c = beta * c + alpha * a @ b over float32 matrices in memory, the GEMM
// under every float product above: a is n x k and b is k x m, each with its
// own row and column strides in elements (one of the two 1, as BLAS reads
// them), c row-major with leading dimension ldc. beta == 0 never reads c.
void gemmFloat(int64_t n, int64_t m, int64_t k, float alpha, const float* a, int64_t a_row_stride, int64_t a_col_stride,
               const float* b, int64_t b_row_stride, int64_t b_col_stride, float beta, float* c, int64_t ldc);
Tensor& linearOut(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, Tensor& out);

}  // namespace kiln
