// The element math of pointwise operators: the k_* and m_* helpers that
// operator descriptions' element expressions call (kiln/ops/pointwise_spec.h).
// This one header serves both ways an element is computed: eager kernels
// include it (kiln/tensor/kernels/*.cpp), and the build embeds its text at
// the start of every kernel the fuser generates (kiln/fuser/kernel_prelude.h),
// so that an op gives the same bits eagerly and fused.
//
// Written in plain C++17 with no includes, so that a generated kernel
// compiles in a fraction of a second; each helper computes what PyTorch
// computes for the op, branch-free where it can, so that element loops
// vectorize. Include guards rather than `#pragma once`: in a kernel it is
// the main file.
#ifndef KILN_TENSOR_KERNELS_KERNEL_MATH_H
#define KILN_TENSOR_KERNELS_KERNEL_MATH_H
// The helpers are laid out one family a line, which reads better in generated
// kernels than clang-format's layout.
// clang-format off

// With AVX-512, 512-bit vectors: GCC prefers 256-bit ones on Intel CPUs,
// which leaves these arithmetic-bound loops 15% slower.
#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)
#pragma GCC target("prefer-vector-width=512")
#endif
typedef __INT8_TYPE__ int8_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __INT16_TYPE__ int16_t;
typedef __INT32_TYPE__ int32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT16_TYPE__ uint16_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __UINT64_TYPE__ uint64_t;
union KernelScalar { int64_t i; double f; };

// The transcendental functions come from kiln's vector math library
// (vector_math.h): kiln_vm_sinf and its vector variants under the names of
// GCC's vector function ABI, which the vectorizer calls for a loop of
// `omp declare simd` calls. Every variant, the scalar one included, computes
// with the same SLEEF code, so an element's result does not depend on
// whether it fell in a vector or in a loop's tail. They are declared under
// names of their own (asm labels): as GCC builtins, sin and cos of one value
// would merge into a sincos call, which does not vectorize.
extern "C" {
#define K_SIMD _Pragma("omp declare simd notinbranch") __attribute__((const))
#define K_LIBM1(fn) \
  K_SIMD float k_libm_##fn##f(float) noexcept __asm__("kiln_vm_" #fn "f"); \
  K_SIMD double k_libm_##fn(double) noexcept __asm__("kiln_vm_" #fn);
#define K_LIBM2(fn) \
  K_SIMD float k_libm_##fn##f(float, float) noexcept __asm__("kiln_vm_" #fn "f"); \
  K_SIMD double k_libm_##fn(double, double) noexcept __asm__("kiln_vm_" #fn);
K_LIBM1(exp) K_LIBM1(expm1) K_LIBM1(log) K_LIBM1(log1p) K_LIBM1(log10)
K_LIBM1(sin) K_LIBM1(cos) K_LIBM1(tan) K_LIBM1(asin) K_LIBM1(acos) K_LIBM1(atan)
K_LIBM1(sinh) K_LIBM1(cosh) K_LIBM1(asinh) K_LIBM1(acosh) K_LIBM1(atanh) K_LIBM1(erf) K_LIBM1(erfc) K_LIBM1(lgamma)
K_LIBM2(atan2) K_LIBM2(pow) K_LIBM2(fmod)
// Builtins that are single instructions under -fno-math-errno -fno-trapping-math.
#define K_INSN1(fn) float fn##f(float) noexcept; double fn(double) noexcept;
K_INSN1(sqrt) K_INSN1(fabs) K_INSN1(floor) K_INSN1(ceil) K_INSN1(trunc) K_INSN1(nearbyint)
float copysignf(float, float) noexcept;
double copysign(double, double) noexcept;
}

// m_f: f for float and double.
#define K_MATH1(fn, f32, f64) \
  static inline float m_##fn(float x) { return f32(x); } \
  static inline double m_##fn(double x) { return f64(x); }
#define K_MATH2(fn, f32, f64) \
  static inline float m_##fn(float x, float y) { return f32(x, y); } \
  static inline double m_##fn(double x, double y) { return f64(x, y); }
#define K_VECTOR_MATH1(fn) K_MATH1(fn, k_libm_##fn##f, k_libm_##fn)
#define K_VECTOR_MATH2(fn) K_MATH2(fn, k_libm_##fn##f, k_libm_##fn)
// float exp is inline (below), within 1 ulp: faster than SLEEF's call, and
// its parts serve tanh and sigmoid.
static inline float k_expf(float x);
K_MATH1(exp, k_expf, k_libm_exp) K_VECTOR_MATH1(expm1) K_VECTOR_MATH1(log) K_VECTOR_MATH1(log1p) K_VECTOR_MATH1(log10)
K_VECTOR_MATH1(sin) K_VECTOR_MATH1(cos) K_VECTOR_MATH1(tan) K_VECTOR_MATH1(asin) K_VECTOR_MATH1(acos)
K_VECTOR_MATH1(atan) K_VECTOR_MATH1(sinh) K_VECTOR_MATH1(cosh) K_VECTOR_MATH1(asinh) K_VECTOR_MATH1(acosh)
K_VECTOR_MATH1(atanh) K_VECTOR_MATH1(erf) K_VECTOR_MATH1(erfc) K_VECTOR_MATH1(lgamma)
K_VECTOR_MATH2(atan2) K_VECTOR_MATH2(pow) K_VECTOR_MATH2(fmod)
K_MATH1(sqrt, sqrtf, sqrt) K_MATH1(fabs, fabsf, fabs) K_MATH1(floor, floorf, floor) K_MATH1(ceil, ceilf, ceil)
K_MATH1(trunc, truncf, trunc) K_MATH1(nearbyint, nearbyintf, nearbyint)
K_MATH2(copysign, copysignf, copysign)

// a * b + c rounded once (an FMA instruction where the CPU has one). Every
// multiply-add below that should round once says so with k_fma: the library
// and the generated kernels are compiled with -ffp-contract=off, so that no
// compiler's choice to contract, or not (GCC contracts at -O2 and above, not
// at -O1), changes a result, and eager and fused results agree at any
// optimization level.
static inline float k_fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
static inline double k_fma(double a, double b, double c) { return __builtin_fma(a, b, c); }

// Float exp, tanh and sigmoid share one reduction: x = n ln2 + r with
// |r| <= ln2/2 (ln2 in two parts, so r is exact), a polynomial in r, and 2^n
// put together from its exponent bits. n is rounded by adding 1.5 * 2^23,
// which leaves it in the low bits of the sum: cheaper than a round and a
// conversion. What the reduction returns in `n_bits` is those bits; their
// low 22 bits are n, and k_pow2 needs no more than those.
static inline float k_reduce_ln2(float x, int32_t& n_bits) {
  const float shifted = k_fma(x, 1.44269504088896341f, 12582912.0f);
  n_bits = __builtin_bit_cast(int32_t, shifted);
  const float n = shifted - 12582912.0f;
  return k_fma(-n, 1.428606765330187045e-06f, k_fma(-n, 0.693145751953125f, x));
}
// e^r - 1 for |r| <= ln2/2: Cephes' minimax coefficients for expf.
static inline float k_expm1_reduced(float r) {
  float p = 1.9875691500e-4f;
  p = k_fma(p, r, 1.3981999507e-3f);
  p = k_fma(p, r, 8.3334519073e-3f);
  p = k_fma(p, r, 4.1665795894e-2f);
  p = k_fma(p, r, 1.6666665459e-1f);
  p = k_fma(p, r, 5.0000001201e-1f);
  return k_fma(r * r, p, r);
}
// 2^n for n in [-127, 128] (-127 gives 0, 128 infinity), from n or the bits
// k_reduce_ln2 gives for it: the shift drops all but the low 9 bits.
static inline float k_pow2(int32_t n) { return __builtin_bit_cast(float, (n + 127) << 23); }

// e^x within 1 ulp. 2^n is applied as two factors of 2^(n/2) so results
// near overflow and in the subnormal range come out right. NaN stays NaN
// (through r); the clamps only keep n in int range: beyond them the result is
// inf or 0 anyway.
static inline float k_expf(float x) {
  x = x > 88.8f ? 88.8f : x;
  x = x < -104.0f ? -104.0f : x;
  int32_t n_bits;
  const float r = k_reduce_ln2(x, n_bits);
  // e^r by its Taylor series to r^7 (below float's half ulp): 1 + (e^r - 1)
  // would round once more, to 1.013 ulp.
  float p = 1.0f / 5040;
  p = k_fma(p, r, 1.0f / 720);
  p = k_fma(p, r, 1.0f / 120);
  p = k_fma(p, r, 1.0f / 24);
  p = k_fma(p, r, 1.0f / 6);
  p = k_fma(p, r, 0.5f);
  p = k_fma(p, r, 1.0f);
  p = k_fma(p, r, 1.0f);
  const int32_t n = (n_bits << 10) >> 10, half = n >> 1;  // n, sign-extended from 22 bits
  return p * k_pow2(half) * k_pow2(n - half);
}

template <class T> struct k_is_float { static constexpr bool value = false; };
template <> struct k_is_float<float> { static constexpr bool value = true; };
template <> struct k_is_float<double> { static constexpr bool value = true; };
#define K_FLOAT(T) k_is_float<T>::value
#define K_NAN(T) ((T)__builtin_nan(""))

// Integer arithmetic wraps as two's complement. 32- and 64-bit integers
// compute in the unsigned type of their size (eager kernels are built without
// -fwrapv, and signed overflow is undefined); narrower ones promote to int,
// where their sums and products cannot overflow.
template <class T> struct k_wrapping { typedef T type; };
template <> struct k_wrapping<int32_t> { typedef uint32_t type; };
template <> struct k_wrapping<int64_t> { typedef uint64_t type; };
// x + alpha * y: in floating point rounded once, as PyTorch's vectorized add
// (fmadd) computes it; integers wrap; bool: or.
template <class T> static inline T k_add(T a, T b, T alpha) {
  typedef typename k_wrapping<T>::type W;
  if constexpr (K_FLOAT(T)) return k_fma(alpha, b, a); else return (T)((W)a + (W)alpha * (W)b);
}
static inline bool k_add(bool a, bool b, bool alpha) { return a || (alpha && b); }
template <class T> static inline T k_mul(T a, T b) {
  typedef typename k_wrapping<T>::type W;
  return (T)((W)a * (W)b);
}
static inline bool k_mul(bool a, bool b) { return a && b; }
template <class T> static inline T k_neg(T a) { return (T)-a; }
template <class T> static inline T k_abs(T a) {
  if constexpr (K_FLOAT(T)) return m_fabs(a); else return a < (T)0 ? (T)-a : a;
}
// NaN passes (the comparison is false).
template <class T> static inline T k_relu(T a) { return a < (T)0 ? (T)0 : a; }
// NaN gives 0.
template <class T> static inline T k_sign(T a) { return (T)(((T)0 < a) - (a < (T)0)); }
static inline bool k_sign(bool a) { return a; }
template <class T> static inline T k_bitwise_not(T a) { return (T)~a; }
static inline bool k_bitwise_not(bool a) { return !a; }

// Rounding leaves integers as they are; round is half to even.
template <class T> static inline T k_floor(T a) { if constexpr (K_FLOAT(T)) return m_floor(a); else return a; }
template <class T> static inline T k_ceil(T a) { if constexpr (K_FLOAT(T)) return m_ceil(a); else return a; }
template <class T> static inline T k_trunc(T a) { if constexpr (K_FLOAT(T)) return m_trunc(a); else return a; }
template <class T> static inline T k_round(T a) { if constexpr (K_FLOAT(T)) return m_nearbyint(a); else return a; }

template <class T> static inline T k_sigmoid(T x) { return (T)1 / ((T)1 + m_exp(-x)); }
// The same in float with one scale factor: e^-x = (2 e^r) 2^(n-1) reaches
// infinity (sigmoid 0) where float e^-x overflows, and below e^-87, where
// 1 + e^-x is 1, it is 0 instead of subnormal. Within 2.5 ulp, as the
// formula itself (the sum rounds).
static inline float k_sigmoid(float x) {
  float z = -x;
  z = z > 88.8f ? 88.8f : z;
  z = z < -87.0f ? -87.0f : z;
  int32_t n_bits;
  const float er = k_expm1_reduced(k_reduce_ln2(z, n_bits)) + 1.0f;
  return 1.0f / k_fma(er + er, k_pow2(n_bits - 1), 1.0f);
}
// SLEEF's vector sinh and cosh overflow early (from 88.5 in float, 709 in
// double); past 88 (708) they are e^|x| / 2, computed as (e^(|x|/2) / 2) * e^(|x|/2).
template <class T> static inline T k_exp_half(T a) { const T e = m_exp((T)0.5 * a); return ((T)0.5 * e) * e; }
template <class T> static inline T k_sinh(T x) {
  const T a = m_fabs(x), big = m_copysign(k_exp_half(a), x), small = m_sinh(x);
  return a > (T)(sizeof(T) == 4 ? 88 : 708) ? big : small;
}
template <class T> static inline T k_cosh(T x) {
  const T a = m_fabs(x), big = k_exp_half(a), small = m_cosh(x);
  return a > (T)(sizeof(T) == 4 ? 88 : 708) ? big : small;
}
// Double tanh within 2 ulp: its Taylor series near 0 (to x^27 below 0.4),
// 1 - 2 / (e^2|x| + 1) beyond.
static const double k_tanh_taylor[14] = {
    1.0, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835, -1382.0 / 155925, 21844.0 / 6081075,
    -929569.0 / 638512875, 6404582.0 / 10854718875, -443861162.0 / 1856156927625,
    18888466084.0 / 194896477400625, -113927491862.0 / 2900518163668125,
    58870668456604.0 / 3698160658676859375, -8374643517010684.0 / 1298054391195577640625.0};
static inline double k_tanh(double x) {
  const double a = m_fabs(x), z = x * x;
  double p = k_tanh_taylor[13];
  for (int k = 12; k >= 0; --k) p = k_fma(p, z, k_tanh_taylor[k]);
  const double series = x * p, outer = m_copysign(1.0 - 2.0 / (m_exp(2.0 * a) + 1.0), x);
  return a < 0.4 ? series : outer;
}
// Float tanh within 2 ulp, twice as fast as a Taylor series near 0 and
// 1 - 2 / (e^2|x| + 1) beyond: (1 - e) / (1 + e) for e = e^-2|x| = 2^n (1 + q),
// numerator and denominator each rounded once as (1 - 2^n) - 2^n q and
// (1 + 2^n) + 2^n q. Near 0 (n = 0) the numerator is -q exactly, so nothing
// cancels. |x| stops at 10, where tanh rounds to 1.
static inline float k_tanh(float x) {
  const float a = m_fabs(x);
  int32_t n_bits;
  const float q = k_expm1_reduced(k_reduce_ln2(-2.0f * (a > 10.0f ? 10.0f : a), n_bits)), s = k_pow2(n_bits);
  return m_copysign(k_fma(-s, q, 1.0f - s) / k_fma(s, q, 1.0f + s), x);
}
template <class T> static inline T k_gelu_erf(T x) {
  return (T)0.5 * x * ((T)1 + m_erf(x * (T)0.70710678118654757));  // sqrt(1/2)
}
// In float, erf by the approximation PyTorch vectorizes (Abramowitz-Stegun
// 7.1.26, absolute error below 1.5e-7): five times faster than a 1-ulp erf.
// erf(|z| >= 6) is 1 in float; capping |z| there keeps e^-z^2 normal, and the
// comparison lets NaN through.
static inline float k_gelu_erf(float x) {
  const float z = x * 0.70710678118654757f, a0 = m_fabs(z), a = 6.0f < a0 ? 6.0f : a0;
  const float t = 1.0f / k_fma(0.3275911f, a, 1.0f);
  float p = k_fma(1.061405429f, t, -1.453152027f);
  p = k_fma(p, t, 1.421413741f);
  p = k_fma(p, t, -0.284496736f);
  p = k_fma(p, t, 0.254829592f);
  const float erf_z = m_copysign(k_fma(-(p * t), k_expf(-(a * a)), 1.0f), z);
  return (x * 0.5f) * (1.0f + erf_z);
}
template <class T> static inline T k_gelu_tanh(T x) {
  const T inner = (T)0.79788456080286541 * k_fma((T)0.044715, x * x * x, x);  // sqrt(2/pi)
  return (T)0.5 * x * ((T)1 + k_tanh(inner));
}

// maximum/minimum: NaN in either gives NaN; bool is or/and.
template <class T> static inline T k_maximum(T a, T b) {
  const T m = a < b ? b : a;
  if constexpr (K_FLOAT(T)) return (a != a || b != b) ? K_NAN(T) : m; else return m;
}
template <class T> static inline T k_minimum(T a, T b) {
  const T m = b < a ? b : a;
  if constexpr (K_FLOAT(T)) return (a != a || b != b) ? K_NAN(T) : m; else return m;
}
// One-sided clamps that keep a NaN x and ignore a NaN bound, bound first as
// x86's maxps/minps compare.
template <class T> static inline T k_at_least(T x, T lo) { return lo > x ? lo : x; }
template <class T> static inline T k_at_most(T x, T hi) { return hi < x ? hi : x; }
// clamp with both bounds, clamp_min, clamp_max: a NaN bound gives NaN.
template <class T> static inline T k_clamp(T x, T lo, T hi) {
  const T c = k_at_most(k_at_least(x, lo), hi);
  if constexpr (K_FLOAT(T)) return (lo != lo || hi != hi) ? K_NAN(T) : c; else return c;
}
template <class T> static inline T k_clamp_min(T x, T lo) {
  const T c = k_at_least(x, lo);
  if constexpr (K_FLOAT(T)) return lo != lo ? K_NAN(T) : c; else return c;
}
template <class T> static inline T k_clamp_max(T x, T hi) {
  const T c = k_at_most(x, hi);
  if constexpr (K_FLOAT(T)) return hi != hi ? K_NAN(T) : c; else return c;
}

// Python's floor division of floats, from fmod so that 1 // 0.1 is 9.
template <class T> static inline T k_floor_divide(T a, T b) {
  const T q = a / b, mod = m_fmod(a, b);
  T div = (a - mod) / b;
  div = (mod != (T)0 && ((b < (T)0) != (mod < (T)0))) ? div - (T)1 : div;
  T floor_div = m_floor(div);
  floor_div = div - floor_div > (T)0.5 ? floor_div + (T)1 : floor_div;
  floor_div = div == (T)0 ? m_copysign((T)0, q) : floor_div;
  return b == (T)0 ? q : floor_div;
}
// Python's %: the result takes the divisor's sign.
template <class T> static inline T k_remainder(T a, T b) {
  const T mod = m_fmod(a, b);
  return (mod != (T)0 && ((b < (T)0) != (mod < (T)0))) ? mod + b : mod;
}

// Integer powers by squaring, wrapping; negative exponents give 0 except for
// bases 1 and -1. (A loop per element: integer powers do not vectorize.)
template <class T> static inline T k_powi(T base, T exponent) {
  if (exponent < (T)0) return base == (T)1 ? (T)1 : base == (T)-1 ? (T)(exponent % 2 != 0 ? -1 : 1) : (T)0;
  uint64_t result = 1, b = (uint64_t)base;
  for (T e = exponent; e != (T)0; e = (T)(e / 2)) {
    if (e & 1) result *= b;
    b *= b;
  }
  return (T)result;
}
template <class T> static inline T k_power(T a, T b) {
  if constexpr (K_FLOAT(T)) return m_pow(a, b); else return k_powi(a, b);
}
// A number exponent picks the form, as kiln's pow does (a constant exponent
// folds to one form). Every form is computed, then selected one statement at
// a time: nested selects with arms computed inside them do not vectorize.
template <class T> static inline T k_pow_scalar(T x, double e) {
  const T root = m_sqrt(x), power = m_pow(x, (T)e), square = x * x;
  const T inverse_root = (T)1 / root, inverse = (T)1 / x, cube = square * x, inverse_square = (T)1 / square;
  T r = power;
  r = e == -2 ? inverse_square : r;
  r = e == 3 ? cube : r;
  r = e == 2 ? square : r;
  r = e == -1 ? inverse : r;
  r = e == -0.5 ? inverse_root : r;
  r = e == 0.5 ? root : r;
  r = e == 1 ? x : r;
  r = e == 0 ? (T)1 : r;
  return r;
}

// self + value * tensor1 * tensor2, the product added with one rounding;
// integers wrap.
template <class T> static inline T k_addcmul(T a, T v, T b, T c) {
  typedef typename k_wrapping<T>::type W;
  if constexpr (K_FLOAT(T)) return k_fma(v * b, c, a); else return (T)((W)a + (W)v * (W)b * (W)c);
}

// lerp as torch 1.13 computes it on CPU.
template <class T> static inline T k_lerp(T a, T b, T w) {
  const T diff = b - a, from_a = k_fma(w, diff, a), from_b = k_fma(-diff, (T)1 - w, b);
  return w < (T)0.5 ? from_a : from_b;  // torch 1.13 tests w, not fabs(w)
}

// clang-format on
#endif  // KILN_TENSOR_KERNELS_KERNEL_MATH_H
