#pragma once
// kiln's vector math: the transcendental functions of pointwise kernels,
// one implementation each (SLEEF's 1-ulp AVX2 code; erfc 1.5 ulp), reached
// three ways that all give the same bits for the same input:
//   - a vector of 8 floats or 4 doubles: vm::sin(__m256), for eager kernels;
//   - one element: kiln_vm_sinf(float), which computes it as a vector (for
//     strided runs and the tails of vector loops);
//   - the variants of GCC's x86 vector function ABI (_ZGVbN4v_kiln_vm_sinf,
//     _ZGVdN8v_..., _ZGVeN16v_...), which the vectorizer calls in generated
//     kernels (kernel_math.h declares kiln_vm_* `omp declare simd`).
// So an element's value does not depend on its position in a loop, on
// whether its run was contiguous, or on whether the op ran eagerly or fused.
#include <cstdint>

// f(x) and f(x, y) of float and double, by SLEEF name stem: the functions of
// libm that kernels use.
// clang-format off
#define KILN_VECTOR_MATH_UNARY(_) \
  _(exp) _(expm1) _(log) _(log1p) _(log10) _(sin) _(cos) _(tan) _(asin) _(acos) _(atan) _(sinh) _(cosh) \
  _(asinh) _(acosh) _(atanh) _(erf) _(erfc) _(lgamma)
#define KILN_VECTOR_MATH_BINARY(_) _(atan2) _(pow) _(fmod)
// clang-format on

extern "C" {
#define KILN_DECLARE_VECTOR_MATH1(fn)      \
  float kiln_vm_##fn##f(float x) noexcept; \
  double kiln_vm_##fn(double x) noexcept;
#define KILN_DECLARE_VECTOR_MATH2(fn)               \
  float kiln_vm_##fn##f(float x, float y) noexcept; \
  double kiln_vm_##fn(double x, double y) noexcept;
KILN_VECTOR_MATH_UNARY(KILN_DECLARE_VECTOR_MATH1)
KILN_VECTOR_MATH_BINARY(KILN_DECLARE_VECTOR_MATH2)
#undef KILN_DECLARE_VECTOR_MATH2
#undef KILN_DECLARE_VECTOR_MATH1
}

#if KILN_HAVE_AVX2
#include <immintrin.h>
#include <sleef.h>

namespace kiln::vm {

// exp and log are inline: softmax and the reductions call them once per
// vector, where one more call layer costs a fifth of their time.
inline __m256 exp(__m256 x) noexcept { return Sleef_expf8_u10avx2(x); }
inline __m256d exp(__m256d x) noexcept { return Sleef_expd4_u10avx2(x); }
inline __m256 log(__m256 x) noexcept { return Sleef_logf8_u10avx2(x); }
inline __m256d log(__m256d x) noexcept { return Sleef_logd4_u10avx2(x); }

// The vector forms, for eager kernels: vm::sin(x) of 8 floats or 4 doubles.
#define KILN_DECLARE_VECTOR_MATH1(fn) \
  __m256 fn(__m256 x) noexcept;       \
  __m256d fn(__m256d x) noexcept;
#define KILN_DECLARE_VECTOR_MATH2(fn)     \
  __m256 fn(__m256 x, __m256 y) noexcept; \
  __m256d fn(__m256d x, __m256d y) noexcept;
KILN_VECTOR_MATH_UNARY(KILN_DECLARE_VECTOR_MATH1)
KILN_VECTOR_MATH_BINARY(KILN_DECLARE_VECTOR_MATH2)
#undef KILN_DECLARE_VECTOR_MATH2
#undef KILN_DECLARE_VECTOR_MATH1

}  // namespace kiln::vm
#endif
