#pragma once
// Building blocks of the pointwise kernels: a branch-free select and, with
// AVX2, vectors of 8 floats or 4 doubles, loops that run a vector function
// over contiguous runs, and an inline exp. Only kernel .cpp files include this.
//
// mapKernel/zipKernel take one function object usable on a scalar T and, with
// AVX2, on Vec<T>::type (__m256 / __m256d, which are also GCC vector types, so
// +, -, *, /, comparisons and `mask ? a : b` work on them elementwise):
//
//   zipKernel<scalar_t>(iter, [](auto a, auto b) { return a * b + a; });
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "kiln/tensor/kernels/loops.h"

#if KILN_HAVE_AVX2
#include <immintrin.h>
#include <sleef.h>
#endif

namespace kiln::kernels {

template <size_t Size>
struct UnsignedOfSize;
template <>
struct UnsignedOfSize<1> { using type = uint8_t; };
template <>
struct UnsignedOfSize<2> { using type = uint16_t; };
template <>
struct UnsignedOfSize<4> { using type = uint32_t; };
template <>
struct UnsignedOfSize<8> { using type = uint64_t; };

// c ? a : b by masking bits: the compiler vectorizes it, where the branch it
// makes of `?:` mispredicts on every other element of a random mask.
template <typename T>
T select(bool c, T a, T b) {
  using Bits = typename UnsignedOfSize<sizeof(T)>::type;
  const auto mask = static_cast<Bits>(Bits(0) - Bits(c));
  return std::bit_cast<T>(static_cast<Bits>((std::bit_cast<Bits>(a) & mask) | (std::bit_cast<Bits>(b) & ~mask)));
}

#if KILN_HAVE_AVX2

template <typename T>
struct Vec;
template <>
struct Vec<float> {
  using type = __m256;
  static constexpr int kWidth = 8;
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
};
template <>
struct Vec<double> {
  using type = __m256d;
  static constexpr int kWidth = 4;
  static __m256d load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
};

// out[i] = f(in[i]) a vector at a time. The tail goes through a padded
// buffer, so every element of a contiguous run gets the same arithmetic.
template <typename T, typename F>
void mapBlock(T* out, const T* in, int64_t n, const F& f) {
  using V = Vec<T>;
  int64_t i = 0;
  for (; i + V::kWidth <= n; i += V::kWidth) V::store(out + i, f(V::load(in + i)));
  if (i < n) {
    T buffer[V::kWidth] = {};
    std::copy(in + i, in + n, buffer);
    V::store(buffer, f(V::load(buffer)));
    std::copy(buffer, buffer + (n - i), out + i);
  }
}

// out[i] = f(a[i], b[i]), like mapBlock.
template <typename T, typename F>
void zipBlock(T* out, const T* a, const T* b, int64_t n, const F& f) {
  using V = Vec<T>;
  int64_t i = 0;
  for (; i + V::kWidth <= n; i += V::kWidth) V::store(out + i, f(V::load(a + i), V::load(b + i)));
  if (i < n) {
    T buffer_a[V::kWidth] = {}, buffer_b[V::kWidth] = {};
    std::copy(a + i, a + n, buffer_a);
    std::copy(b + i, b + n, buffer_b);
    V::store(buffer_a, f(V::load(buffer_a), V::load(buffer_b)));
    std::copy(buffer_a, buffer_a + (n - i), out + i);
  }
}

inline __m256 negate(__m256 x) { return _mm256_xor_ps(x, _mm256_set1_ps(-0.0f)); }
inline __m256d negate(__m256d x) { return _mm256_xor_pd(x, _mm256_set1_pd(-0.0)); }
// +0 or -0 with the sign of x.
inline __m256 signedZero(__m256 x) { return _mm256_and_ps(x, _mm256_set1_ps(-0.0f)); }
inline __m256d signedZero(__m256d x) { return _mm256_and_pd(x, _mm256_set1_pd(-0.0)); }
inline __m256 floor(__m256 x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
inline __m256d floor(__m256d x) { return _mm256_round_pd(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }

// SLEEF's fmod gives NaN where a / b overflows; NaN lanes are redone with
// std::fmod (which keeps the NaN of inf % b or a % 0), so contiguous and
// strided runs agree. (PyTorch's vector path keeps SLEEF's NaN there.)
template <typename V>
V redoNaNLanesOfFmod(V r, V a, V b) {
  for (int i = 0; i < static_cast<int>(sizeof(V) / sizeof(r[0])); ++i) {
    if (r[i] != r[i]) r[i] = std::fmod(a[i], b[i]);
  }
  return r;
}
inline __m256 fmod(__m256 a, __m256 b) {
  const __m256 r = Sleef_fmodf8_avx2(a, b);
  return _mm256_movemask_ps(_mm256_cmp_ps(r, r, _CMP_UNORD_Q)) == 0 ? r : redoNaNLanesOfFmod(r, a, b);
}
inline __m256d fmod(__m256d a, __m256d b) {
  const __m256d r = Sleef_fmodd4_avx2(a, b);
  return _mm256_movemask_pd(_mm256_cmp_pd(r, r, _CMP_UNORD_Q)) == 0 ? r : redoNaNLanesOfFmod(r, a, b);
}

// exp of 8 floats, inline: in sigmoid and gelu the out-of-line SLEEF call
// costs more than the arithmetic around it. Cody-Waite reduction and Cephes'
// polynomial, within 2 ulp of expf; NaN stays NaN, overflow gives inf.
// `InNormalRange`: the caller guarantees -87 <= x <= 0, which saves the
// clamping and the two-step scaling.
template <bool InNormalRange = false>
inline __m256 exp8(__m256 x) {
  if constexpr (!InNormalRange) {
    // Beyond these bounds the result is 0 or inf; clamping keeps 2^n finite in two factors.
    // (min/max return their second operand for NaN, so NaN passes through.)
    x = _mm256_max_ps(_mm256_set1_ps(-104.0f), _mm256_min_ps(_mm256_set1_ps(89.0f), x));
  }
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  auto pow2 = [](__m256 e) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(e), _mm256_set1_epi32(127)), 23));
  };
  if constexpr (InNormalRange) return _mm256_mul_ps(p, pow2(n));
  // 2^n as 2^h * 2^(n-h): n reaches -150 and 129, beyond one exponent field.
  const __m256 h = _mm256_round_ps(_mm256_mul_ps(n, _mm256_set1_ps(0.5f)), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  return _mm256_mul_ps(_mm256_mul_ps(p, pow2(h)), pow2(_mm256_sub_ps(n, h)));
}

#endif  // KILN_HAVE_AVX2

// out = f(in) for float or double T.
template <typename T, typename F>
void mapKernel(TensorIter& iter, const F& f) {
#if KILN_HAVE_AVX2
  cpuKernelBlock<T, T>(
      iter, [&](T x) { return f(x); }, [&](T* out, const T* in, int64_t n) { mapBlock<T>(out, in, n, f); });
#else
  cpuKernel<T, T>(iter, [&](T x) { return f(x); });
#endif
}

// out = f(a, b) for float or double T.
template <typename T, typename F>
void zipKernel(TensorIter& iter, const F& f) {
#if KILN_HAVE_AVX2
  cpuBinaryKernelBlock<T, T, T>(
      iter, [&](T a, T b) { return f(a, b); },
      [&](T* out, const T* a, const T* b, int64_t n) { zipBlock<T>(out, a, b, n, f); });
#else
  cpuKernel<T, T, T>(iter, [&](T a, T b) { return f(a, b); });
#endif
}

}  // namespace kiln::kernels
