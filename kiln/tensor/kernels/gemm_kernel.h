#pragma once
// kiln's float GEMM micro-kernel (internal to kiln/tensor/kernels), for
// products whose right operand kiln lays out itself: a Winograd
// convolution's transformed weights (winograd.cpp) and the prepacked
// weights of a recurrent layer's steps (packed_gemm.cpp). R rows of A
// (broadcast one element at a time) against C column blocks of 8 floats of
// B, all R x C accumulators in registers (6 x 2 uses 12 of the 16 AVX2
// registers), one pass over K.
#include <cstdint>

#include "kiln/tensor/kernels/vec.h"

#if KILN_HAVE_AVX2
#include <immintrin.h>

namespace kiln::kernels {

// The rows one call takes at most.
constexpr int kGemmRows = 6;

// C[R x 8C] = A[R x K] B (+ bias[8C] when not null). A's rows are lda
// apart; B's column block j at k is the 8 floats at b + j * b_block + k * b_k;
// C's rows are ldc apart.
template <int R, int C>
inline void gemmMicroKernel(const float* a, int64_t lda, const float* b, int64_t b_block, int64_t b_k, int64_t k_size,
                            const float* bias, float* c, int64_t ldc) {
  using V = Vec<float>;
  static_assert(V::kSize == 8, "the micro-kernel runs on 8-float vectors");
  V acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) acc[r][j] = V::broadcast(0.f);
  for (int64_t k = 0; k < k_size; ++k) {
    V bv[C];
    for (int j = 0; j < C; ++j) bv[j] = V::load(b + j * b_block + k * b_k);
    for (int r = 0; r < R; ++r) {
      const V av = V::broadcast(a[r * lda + k]);
      for (int j = 0; j < C; ++j) acc[r][j] = V{_mm256_fmadd_ps(av.v, bv[j].v, acc[r][j].v)};
    }
  }
  // The bias as vectors chosen before the stores (zeros without one), not a
  // conditional update of the accumulators.
  V add[C];
  for (int j = 0; j < C; ++j) add[j] = bias ? V::load(bias + 8 * j) : V::broadcast(0.f);
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < C; ++j) (acc[r][j] + add[j]).store(c + r * ldc + 8 * j);
}

// gemmMicroKernel for 1 to kGemmRows rows.
template <int C>
inline void gemmMicroRows(int rows, const float* a, int64_t lda, const float* b, int64_t b_block, int64_t b_k,
                          int64_t k_size, const float* bias, float* c, int64_t ldc) {
  switch (rows) {
    case 1: return gemmMicroKernel<1, C>(a, lda, b, b_block, b_k, k_size, bias, c, ldc);
    case 2: return gemmMicroKernel<2, C>(a, lda, b, b_block, b_k, k_size, bias, c, ldc);
    case 3: return gemmMicroKernel<3, C>(a, lda, b, b_block, b_k, k_size, bias, c, ldc);
    case 4: return gemmMicroKernel<4, C>(a, lda, b, b_block, b_k, k_size, bias, c, ldc);
    case 5: return gemmMicroKernel<5, C>(a, lda, b, b_block, b_k, k_size, bias, c, ldc);
    default: return gemmMicroKernel<6, C>(a, lda, b, b_block, b_k, k_size, bias, c, ldc);
  }
}

}  // namespace kiln::kernels

#endif  // KILN_HAVE_AVX2
