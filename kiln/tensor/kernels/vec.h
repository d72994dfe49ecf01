#pragma once
// Vec<T>: the fixed-width vector that the eager kernels of vec_kernels.cpp
// (sums, softmax, logsumexp) are written over. One interface, three forms,
// picked by what the translation unit is compiled for:
//   - AVX-512, 16 floats or 8 doubles, where the unit is built with AVX-512
//     flags (vec_kernels_avx512.cpp: the library stays x86-64-v3 and picks
//     that twin at run time, see vec_kernels.h);
//   - AVX2, 8 floats or 4 doubles, in the rest of an x86-64-v3 build;
//   - Lane<T>, one element, in a portable build. Lane<T> is also the width-1
//     form that loops over several widths end with.
// The interface: load, loadPartial (the first n lanes; the others `fill`),
// broadcast, store, storePartial (the first n lanes), + - * /, max, exp,
// log, sum (of the lanes) and reduceMax.
//
// exp and log give an element the same bits in every form: each runs the
// one AVX2 SLEEF function of vector_math.h, the AVX-512 form on each half
// and Lane on a broadcast (kiln_vm_expf), as the vector ABI variants of
// vector_math.cpp do. max(a, b) is the instruction's, a > b ? a : b: where
// either operand is NaN it returns b, in every form, so callers that must
// propagate NaN check for it. sum and reduceMax combine the lanes in a tree
// of adds or maxes whose shape depends on the width: a sum may differ
// between widths by rounding, and a NaN lane may or may not win reduceMax.
//
// Everything here is in an inline namespace named for the instruction set.
// The AVX2 and AVX-512 units both compile these inline functions; under one
// name the linker would keep one copy for both, and AVX-512 code could then
// run on a machine without it.
#include <cmath>
#include <cstdint>

#include "kiln/tensor/kernels/vector_math.h"

#if KILN_HAVE_AVX2
#include <immintrin.h>
#if defined(__AVX512F__) && defined(__AVX512DQ__)
#define KILN_VEC_AVX512 1
#define KILN_VEC_NAMESPACE avx512
#else
#define KILN_VEC_NAMESPACE avx2
#endif
#else
#define KILN_VEC_NAMESPACE portable
#endif

namespace kiln::kernels {
inline namespace KILN_VEC_NAMESPACE {

// exp and log of one element as the vector forms compute them (vector_math.h).
inline float vmExp(float x) { return kiln_vm_expf(x); }
inline double vmExp(double x) { return kiln_vm_exp(x); }
inline float vmLog(float x) { return kiln_vm_logf(x); }
inline double vmLog(double x) { return kiln_vm_log(x); }

// One element acting as a vector of width 1.
template <typename T>
struct Lane {
  using value_type = T;
  static constexpr int64_t kSize = 1;
  T v;
  static Lane load(const T* p) { return {*p}; }
  static Lane loadPartial(const T* p, int64_t n, T fill) { return {n > 0 ? *p : fill}; }
  static Lane broadcast(T x) { return {x}; }
  void store(T* p) const { *p = v; }
  void storePartial(T* p, int64_t n) const {
    if (n > 0) *p = v;
  }
  Lane operator+(Lane o) const { return {v + o.v}; }
  Lane operator-(Lane o) const { return {v - o.v}; }
  Lane operator*(Lane o) const { return {v * o.v}; }
  Lane operator/(Lane o) const { return {v / o.v}; }
  static Lane max(Lane a, Lane b) { return {a.v > b.v ? a.v : b.v}; }
  Lane exp() const { return {vmExp(v)}; }
  Lane log() const { return {vmLog(v)}; }
  T sum() const { return v; }
  T reduceMax() const { return v; }
};

// A register of Ops::kSize elements; Ops holds the instructions.
template <typename Ops>
struct Packed {
  using value_type = typename Ops::T;
  using T = value_type;
  static constexpr int64_t kSize = Ops::kSize;
  typename Ops::Raw v;
  static Packed load(const T* p) { return {Ops::load(p)}; }
  // Reads only p[0, n), 0 <= n <= kSize.
  static Packed loadPartial(const T* p, int64_t n, T fill) { return {Ops::loadPartial(p, n, fill)}; }
  static Packed broadcast(T x) { return {Ops::set1(x)}; }
  void store(T* p) const { Ops::store(p, v); }
  // Writes only p[0, n), 0 <= n <= kSize.
  void storePartial(T* p, int64_t n) const { Ops::storePartial(p, n, v); }
  Packed operator+(Packed o) const { return {Ops::add(v, o.v)}; }
  Packed operator-(Packed o) const { return {Ops::sub(v, o.v)}; }
  Packed operator*(Packed o) const { return {Ops::mul(v, o.v)}; }
  Packed operator/(Packed o) const { return {Ops::div(v, o.v)}; }
  static Packed max(Packed a, Packed b) { return {Ops::max(a.v, b.v)}; }
  Packed exp() const { return {Ops::exp(v)}; }
  Packed log() const { return {Ops::log(v)}; }
  T sum() const { return Ops::sum(v); }
  T reduceMax() const { return Ops::reduceMax(v); }
};

#if KILN_HAVE_AVX2
struct Avx2FloatOps {
  using T = float;
  using Raw = __m256;
  static constexpr int64_t kSize = 8;
  static __m256i firstLanes(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static __m256 loadPartial(const float* p, int64_t n, float fill) {
    const __m256i mask = firstLanes(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, mask), _mm256_castsi256_ps(mask));
  }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
  static void storePartial(float* p, int64_t n, __m256 v) { _mm256_maskstore_ps(p, firstLanes(n), v); }
  static __m256 set1(float x) { return _mm256_set1_ps(x); }
  static __m256 add(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
  static __m256 sub(__m256 a, __m256 b) { return _mm256_sub_ps(a, b); }
  static __m256 mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
  static __m256 div(__m256 a, __m256 b) { return _mm256_div_ps(a, b); }
  static __m256 max(__m256 a, __m256 b) { return _mm256_max_ps(a, b); }
  static __m256 exp(__m256 v) { return kiln::vm::exp(v); }
  static __m256 log(__m256 v) { return kiln::vm::log(v); }
  static float sum(__m256 v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
  }
  static float reduceMax(__m256 v) {
    __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_max_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_max_ss(x, _mm_movehdup_ps(x)));
  }
};

struct Avx2DoubleOps {
  using T = double;
  using Raw = __m256d;
  static constexpr int64_t kSize = 4;
  static __m256i firstLanes(int64_t n) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
  }
  static __m256d load(const double* p) { return _mm256_loadu_pd(p); }
  static __m256d loadPartial(const double* p, int64_t n, double fill) {
    const __m256i mask = firstLanes(n);
    return _mm256_blendv_pd(_mm256_set1_pd(fill), _mm256_maskload_pd(p, mask), _mm256_castsi256_pd(mask));
  }
  static void store(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
  static void storePartial(double* p, int64_t n, __m256d v) { _mm256_maskstore_pd(p, firstLanes(n), v); }
  static __m256d set1(double x) { return _mm256_set1_pd(x); }
  static __m256d add(__m256d a, __m256d b) { return _mm256_add_pd(a, b); }
  static __m256d sub(__m256d a, __m256d b) { return _mm256_sub_pd(a, b); }
  static __m256d mul(__m256d a, __m256d b) { return _mm256_mul_pd(a, b); }
  static __m256d div(__m256d a, __m256d b) { return _mm256_div_pd(a, b); }
  static __m256d max(__m256d a, __m256d b) { return _mm256_max_pd(a, b); }
  static __m256d exp(__m256d v) { return kiln::vm::exp(v); }
  static __m256d log(__m256d v) { return kiln::vm::log(v); }
  static double sum(__m256d v) {
    __m128d x = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(x, _mm_unpackhi_pd(x, x)));
  }
  static double reduceMax(__m256d v) {
    const __m128d x = _mm_max_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_max_sd(x, _mm_unpackhi_pd(x, x)));
  }
};
#endif

#if KILN_VEC_AVX512
// The halves go through the AVX512DQ extract and insert forms, and max
// through its zero-masked form (all lanes on, one vmaxps): the plain
// AVX512F intrinsics start from an undefined vector, which g++ 12 reports
// as used uninitialized.
inline __m256 lowHalf(__m512 x) { return _mm512_extractf32x8_ps(x, 0); }
inline __m256 highHalf(__m512 x) { return _mm512_extractf32x8_ps(x, 1); }
inline __m512 join(__m256 low, __m256 high) { return _mm512_insertf32x8(_mm512_castps256_ps512(low), high, 1); }
inline __m256d lowHalf(__m512d x) { return _mm256_castps_pd(lowHalf(_mm512_castpd_ps(x))); }
inline __m256d highHalf(__m512d x) { return _mm256_castps_pd(highHalf(_mm512_castpd_ps(x))); }
inline __m512d join(__m256d low, __m256d high) {
  return _mm512_castps_pd(join(_mm256_castpd_ps(low), _mm256_castpd_ps(high)));
}

// Loads read two 256-bit halves. On the Zen 5 this was measured on, sums
// streaming from L2 or L3 with 512-bit loads ran 1.2x slower than with
// 256-bit ones, and 1.7x slower where the data is not 64-byte aligned (as
// numpy's is not); two halves ran as fast as AVX2 there, and cost a tenth
// against 512-bit loads in L1. (Stores measured the same either way.)
struct Avx512FloatOps {
  using T = float;
  using Raw = __m512;
  static constexpr int64_t kSize = 16;
  static __mmask16 firstLanes(int64_t n) { return static_cast<__mmask16>((1u << n) - 1); }
  static __m512 load(const float* p) { return join(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)); }
  static __m512 loadPartial(const float* p, int64_t n, float fill) {
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), firstLanes(n), p);
  }
  static void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
  static void storePartial(float* p, int64_t n, __m512 v) { _mm512_mask_storeu_ps(p, firstLanes(n), v); }
  static __m512 set1(float x) { return _mm512_set1_ps(x); }
  static __m512 add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
  static __m512 sub(__m512 a, __m512 b) { return _mm512_sub_ps(a, b); }
  static __m512 mul(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
  static __m512 div(__m512 a, __m512 b) { return _mm512_div_ps(a, b); }
  static __m512 max(__m512 a, __m512 b) { return _mm512_maskz_max_ps(static_cast<__mmask16>(-1), a, b); }
  static __m512 exp(__m512 v) { return join(kiln::vm::exp(lowHalf(v)), kiln::vm::exp(highHalf(v))); }
  static __m512 log(__m512 v) { return join(kiln::vm::log(lowHalf(v)), kiln::vm::log(highHalf(v))); }
  static float sum(__m512 v) { return Avx2FloatOps::sum(_mm256_add_ps(lowHalf(v), highHalf(v))); }
  static float reduceMax(__m512 v) { return Avx2FloatOps::reduceMax(_mm256_max_ps(lowHalf(v), highHalf(v))); }
};

struct Avx512DoubleOps {
  using T = double;
  using Raw = __m512d;
  static constexpr int64_t kSize = 8;
  static __mmask8 firstLanes(int64_t n) { return static_cast<__mmask8>((1u << n) - 1); }
  static __m512d load(const double* p) { return join(_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)); }
  static __m512d loadPartial(const double* p, int64_t n, double fill) {
    return _mm512_mask_loadu_pd(_mm512_set1_pd(fill), firstLanes(n), p);
  }
  static void store(double* p, __m512d v) { _mm512_storeu_pd(p, v); }
  static void storePartial(double* p, int64_t n, __m512d v) { _mm512_mask_storeu_pd(p, firstLanes(n), v); }
  static __m512d set1(double x) { return _mm512_set1_pd(x); }
  static __m512d add(__m512d a, __m512d b) { return _mm512_add_pd(a, b); }
  static __m512d sub(__m512d a, __m512d b) { return _mm512_sub_pd(a, b); }
  static __m512d mul(__m512d a, __m512d b) { return _mm512_mul_pd(a, b); }
  static __m512d div(__m512d a, __m512d b) { return _mm512_div_pd(a, b); }
  static __m512d max(__m512d a, __m512d b) { return _mm512_maskz_max_pd(static_cast<__mmask8>(-1), a, b); }
  static __m512d exp(__m512d v) { return join(kiln::vm::exp(lowHalf(v)), kiln::vm::exp(highHalf(v))); }
  static __m512d log(__m512d v) { return join(kiln::vm::log(lowHalf(v)), kiln::vm::log(highHalf(v))); }
  static double sum(__m512d v) { return Avx2DoubleOps::sum(_mm256_add_pd(lowHalf(v), highHalf(v))); }
  static double reduceMax(__m512d v) { return Avx2DoubleOps::reduceMax(_mm256_max_pd(lowHalf(v), highHalf(v))); }
};
#endif

template <typename T>
struct VecOf {
  using type = Lane<T>;
};
#if KILN_VEC_AVX512
template <>
struct VecOf<float> {
  using type = Packed<Avx512FloatOps>;
};
template <>
struct VecOf<double> {
  using type = Packed<Avx512DoubleOps>;
};
#elif KILN_HAVE_AVX2
template <>
struct VecOf<float> {
  using type = Packed<Avx2FloatOps>;
};
template <>
struct VecOf<double> {
  using type = Packed<Avx2DoubleOps>;
};
#endif

// The widest vector of T this unit is compiled for.
template <typename T>
using Vec = typename VecOf<T>::type;

// K vectors side by side, used as one: loops that walk memory with a stride
// (lines along an inner dim) then read whole cache lines per step.
template <typename V, int K>
struct Wide {
  using value_type = typename V::value_type;
  static constexpr int64_t kSize = V::kSize * K;
  V parts[K];

  template <typename F>
  static Wide make(const F& f) {
    Wide w;
    for (int k = 0; k < K; ++k) w.parts[k] = f(k);
    return w;
  }
  static Wide load(const value_type* p) {
    return make([&](int k) { return V::load(p + k * V::kSize); });
  }
  static Wide broadcast(value_type x) {
    return make([&](int) { return V::broadcast(x); });
  }
  void store(value_type* p) const {
    for (int k = 0; k < K; ++k) parts[k].store(p + k * V::kSize);
  }
  Wide operator+(const Wide& o) const {
    return make([&](int k) { return parts[k] + o.parts[k]; });
  }
  Wide operator-(const Wide& o) const {
    return make([&](int k) { return parts[k] - o.parts[k]; });
  }
  Wide operator*(const Wide& o) const {
    return make([&](int k) { return parts[k] * o.parts[k]; });
  }
  Wide operator/(const Wide& o) const {
    return make([&](int k) { return parts[k] / o.parts[k]; });
  }
  static Wide max(const Wide& a, const Wide& b) {
    return make([&](int k) { return V::max(a.parts[k], b.parts[k]); });
  }
  Wide exp() const {
    return make([&](int k) { return parts[k].exp(); });
  }
  Wide log() const {
    return make([&](int k) { return parts[k].log(); });
  }
};

}  // namespace KILN_VEC_NAMESPACE
}  // namespace kiln::kernels
