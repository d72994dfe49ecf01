#pragma once
// Small fixed-width vector types for the reduction and softmax kernels:
// Simd<T> is an AVX2 vector (8 floats, 4 doubles) with kiln's vector math's
// exp and log (vector_math.h) when kiln is built for x86-64-v3, and Lane<T>
// (one element, the same math) otherwise.
// Lane<T> also serves the tails of vector loops.
#include <cmath>
#include <cstdint>

#include "kiln/tensor/kernels/vector_math.h"

#if KILN_HAVE_AVX2
#include <immintrin.h>
#endif

namespace kiln::kernels {

// exp and log of one element as the vector forms compute them (vector_math.h).
inline float vmExp(float x) { return kiln_vm_expf(x); }
inline double vmExp(double x) { return kiln_vm_exp(x); }
inline float vmLog(float x) { return kiln_vm_logf(x); }
inline double vmLog(double x) { return kiln_vm_log(x); }

// One element acting as a vector of width 1: the portable path and the tails.
template <typename T>
struct Lane {
  using value_type = T;
  static constexpr int64_t kSize = 1;
  T v;
  static Lane load(const T* p) { return {*p}; }
  static Lane broadcast(T x) { return {x}; }
  void store(T* p) const { *p = v; }
  Lane operator+(Lane o) const { return {v + o.v}; }
  Lane operator-(Lane o) const { return {v - o.v}; }
  Lane operator*(Lane o) const { return {v * o.v}; }
  Lane operator/(Lane o) const { return {v / o.v}; }
  static Lane max(Lane a, Lane b) { return {a.v < b.v ? b.v : a.v}; }
  Lane exp() const { return {vmExp(v)}; }
  Lane log() const { return {vmLog(v)}; }
  T sum() const { return v; }
  T reduceMax() const { return v; }
};

template <typename T>
struct SimdOf {
  using type = Lane<T>;
};

#if KILN_HAVE_AVX2
// AVX2 vectors. `max` is the instruction's: where either operand is NaN it
// returns the second, so callers that must propagate NaN check for it.
template <typename T, int64_t N, typename Ops>
struct Avx2Vec {
  using value_type = T;
  static constexpr int64_t kSize = N;
  typename Ops::Raw v;
  static Avx2Vec load(const T* p) { return {Ops::load(p)}; }
  static Avx2Vec broadcast(T x) { return {Ops::set1(x)}; }
  void store(T* p) const { Ops::store(p, v); }
  Avx2Vec operator+(Avx2Vec o) const { return {Ops::add(v, o.v)}; }
  Avx2Vec operator-(Avx2Vec o) const { return {Ops::sub(v, o.v)}; }
  Avx2Vec operator*(Avx2Vec o) const { return {Ops::mul(v, o.v)}; }
  Avx2Vec operator/(Avx2Vec o) const { return {Ops::div(v, o.v)}; }
  static Avx2Vec max(Avx2Vec a, Avx2Vec b) { return {Ops::max(a.v, b.v)}; }
  Avx2Vec exp() const { return {Ops::exp(v)}; }
  Avx2Vec log() const { return {Ops::log(v)}; }
  T sum() const { return Ops::sum(v); }
  T reduceMax() const {
    T lanes[N];
    store(lanes);
    T m = lanes[0];
    for (T x : lanes) m = m < x ? x : m;
    return m;
  }
};

struct FloatOps {
  using Raw = __m256;
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
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
};

struct DoubleOps {
  using Raw = __m256d;
  static __m256d load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
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
};

template <>
struct SimdOf<float> {
  using type = Avx2Vec<float, 8, FloatOps>;
};
template <>
struct SimdOf<double> {
  using type = Avx2Vec<double, 4, DoubleOps>;
};
#endif

template <typename T>
using Simd = typename SimdOf<T>::type;

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

}  // namespace kiln::kernels
