#pragma once
// A weight prepacked for many products with few rows (internal to
// kiln/tensor/kernels): c = a @ w^T + bias, with w [n x k] as torch stores
// a linear or recurrent weight. BLAS packs the weight at every call; with a
// few rows of a (a recurrent layer's step at a small batch) that packing
// costs about as much as the product, and a layer makes the same product
// once per time step. Packed once per layer call into panels of 16 output
// columns (k rows of 16 floats each, zero-padded past n), each step is
// kiln's micro-kernel over the panels (gemm_kernel.h): an LSTM step of 8
// rows by 512 x 2048 took 0.22 ms against oneDNN's 0.44 (AMD Zen 3, AVX2).
#include <cstdint>

#include "kiln/tensor/tensor.h"

namespace kiln::detail {

class PackedWeightNT {
 public:
  // Whether this build has the kernel (AVX2).
  static bool available();

  PackedWeightNT(const float* w, int64_t n, int64_t k);

  // c[m x n] (rows ldc apart) = a[m x k] (rows lda apart) @ w^T (+ bias[n]).
  void multiply(int64_t m, const float* a, int64_t lda, const float* bias, float* c, int64_t ldc) const;

 private:
  int64_t n_, k_;
  Tensor panels_;  // [ceil(n / 16)][k][16]
};

}  // namespace kiln::detail
