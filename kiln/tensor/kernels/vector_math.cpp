// kiln's vector math (vector_math.h): every variant of a function computes
// through one 8-float or 4-double AVX2 function, so all of them agree bit
// for bit. Narrower variants run it on a zero-extended vector, wider ones on
// halves, and one element on a broadcast.
#include "kiln/tensor/kernels/vector_math.h"

#include <cmath>
#include <limits>

#if KILN_HAVE_AVX2
#include <sleef.h>

namespace kiln::vm {
namespace {

// The lanes of x with |x| > high or 0 < |x| < low, as a bit mask.
int lanesOutside(__m256 x, float low, float high) {
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 below = _mm256_and_ps(_mm256_cmp_ps(a, _mm256_set1_ps(low), _CMP_LT_OQ),
                                     _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_GT_OQ));
  return _mm256_movemask_ps(_mm256_or_ps(below, _mm256_cmp_ps(a, _mm256_set1_ps(high), _CMP_GT_OQ)));
}
int lanesOutside(__m256d x, double low, double high) {
  const __m256d a = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
  const __m256d below = _mm256_and_pd(_mm256_cmp_pd(a, _mm256_set1_pd(low), _CMP_LT_OQ),
                                      _mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_GT_OQ));
  return _mm256_movemask_pd(_mm256_or_pd(below, _mm256_cmp_pd(a, _mm256_set1_pd(high), _CMP_GT_OQ)));
}
int nanLanes(__m256 r) { return _mm256_movemask_ps(_mm256_cmp_ps(r, r, _CMP_UNORD_Q)); }
int nanLanes(__m256d r) { return _mm256_movemask_pd(_mm256_cmp_pd(r, r, _CMP_UNORD_Q)); }

// result, with the lanes set in `lanes` replaced by f(x[lane]) (or f(x, y)).
template <typename V, typename F>
V redoLanes(V result, V x, int lanes, const F& f) {
  for (int i = 0; lanes != 0; ++i, lanes >>= 1) {
    if (lanes & 1) result[i] = f(x[i]);
  }
  return result;
}
template <typename V, typename F>
V redoLanes(V result, V x, V y, int lanes, const F& f) {
  for (int i = 0; lanes != 0; ++i, lanes >>= 1) {
    if (lanes & 1) result[i] = f(x[i], y[i]);
  }
  return result;
}

}  // namespace

#define KILN_SLEEF_FUNCTION1(fn, f8, d4)         \
  __m256 fn(__m256 x) noexcept { return f8(x); } \
  __m256d fn(__m256d x) noexcept { return d4(x); }
#define KILN_SLEEF_FUNCTION2(fn, f8, d4)                      \
  __m256 fn(__m256 x, __m256 y) noexcept { return f8(x, y); } \
  __m256d fn(__m256d x, __m256d y) noexcept { return d4(x, y); }

KILN_SLEEF_FUNCTION1(expm1, Sleef_expm1f8_u10avx2, Sleef_expm1d4_u10avx2)
KILN_SLEEF_FUNCTION1(log1p, Sleef_log1pf8_u10avx2, Sleef_log1pd4_u10avx2)
KILN_SLEEF_FUNCTION1(log10, Sleef_log10f8_u10avx2, Sleef_log10d4_u10avx2)
KILN_SLEEF_FUNCTION1(asin, Sleef_asinf8_u10avx2, Sleef_asind4_u10avx2)
KILN_SLEEF_FUNCTION1(acos, Sleef_acosf8_u10avx2, Sleef_acosd4_u10avx2)
KILN_SLEEF_FUNCTION1(atan, Sleef_atanf8_u10avx2, Sleef_atand4_u10avx2)
KILN_SLEEF_FUNCTION1(atanh, Sleef_atanhf8_u10avx2, Sleef_atanhd4_u10avx2)
KILN_SLEEF_FUNCTION1(erf, Sleef_erff8_u10avx2, Sleef_erfd4_u10avx2)
KILN_SLEEF_FUNCTION1(erfc, Sleef_erfcf8_u15avx2, Sleef_erfcd4_u15avx2)
KILN_SLEEF_FUNCTION1(lgamma, Sleef_lgammaf8_u10avx2, Sleef_lgammad4_u10avx2)
KILN_SLEEF_FUNCTION2(atan2, Sleef_atan2f8_u10avx2, Sleef_atan2d4_u10avx2)
KILN_SLEEF_FUNCTION2(pow, Sleef_powf8_u10avx2, Sleef_powd4_u10avx2)

#undef KILN_SLEEF_FUNCTION2
#undef KILN_SLEEF_FUNCTION1

// SLEEF's sin, cos and tan reduce the whole vector the slower way when any
// lane is large (|x| >= 125 in float, 15 in double) or NaN, and that way may
// round the other lanes differently: a lane's result would depend on its
// neighbours (and so on where a loop's vectors start). The large and NaN
// lanes are computed alone instead, each on a broadcast, and the others
// together with those lanes zeroed.
int largeLanes(__m256 x, float limit) {
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  return _mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(limit), _CMP_NLT_UQ));
}
int largeLanes(__m256d x, double limit) {
  const __m256d a = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
  return _mm256_movemask_pd(_mm256_cmp_pd(a, _mm256_set1_pd(limit), _CMP_NLT_UQ));
}
__m256 withLanesZeroed(__m256 x, float limit) {
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  return _mm256_blendv_ps(x, _mm256_setzero_ps(), _mm256_cmp_ps(a, _mm256_set1_ps(limit), _CMP_NLT_UQ));
}
__m256d withLanesZeroed(__m256d x, double limit) {
  const __m256d a = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
  return _mm256_blendv_pd(x, _mm256_setzero_pd(), _mm256_cmp_pd(a, _mm256_set1_pd(limit), _CMP_NLT_UQ));
}
constexpr float kTrigFastLimitFloat = 125.0f;
constexpr double kTrigFastLimitDouble = 15.0;

#define KILN_SLEEF_TRIG(fn, f8, d4)                                                     \
  __m256 fn(__m256 x) noexcept {                                                        \
    const int lanes = largeLanes(x, kTrigFastLimitFloat);                               \
    if (!lanes) return f8(x);                                                           \
    return redoLanes(f8(withLanesZeroed(x, kTrigFastLimitFloat)), x, lanes,             \
                     [](float v) { return _mm256_cvtss_f32(f8(_mm256_set1_ps(v))); });  \
  }                                                                                     \
  __m256d fn(__m256d x) noexcept {                                                      \
    const int lanes = largeLanes(x, kTrigFastLimitDouble);                              \
    if (!lanes) return d4(x);                                                           \
    return redoLanes(d4(withLanesZeroed(x, kTrigFastLimitDouble)), x, lanes,            \
                     [](double v) { return _mm256_cvtsd_f64(d4(_mm256_set1_pd(v))); }); \
  }

KILN_SLEEF_TRIG(sin, Sleef_sinf8_u10avx2, Sleef_sind4_u10avx2)
KILN_SLEEF_TRIG(cos, Sleef_cosf8_u10avx2, Sleef_cosd4_u10avx2)
KILN_SLEEF_TRIG(tan, Sleef_tanf8_u10avx2, Sleef_tand4_u10avx2)
#undef KILN_SLEEF_TRIG

// SLEEF's asinh and acosh overflow to inf above sqrt(max) and lose digits
// on subnormals; its sinh and cosh give inf from 88.5 (709 in double) though
// the result overflows only past 89.4 (710.5). Those lanes are computed by
// libm instead (with a margin), as a function of the value alone.
#define KILN_SLEEF_FUNCTION_IN_RANGE(fn, f8, d4, float_low, float_high, double_low, double_high) \
  __m256 fn(__m256 x) noexcept {                                                                 \
    const int lanes = lanesOutside(x, float_low, float_high);                                    \
    return lanes ? redoLanes(f8(x), x, lanes, [](float v) { return std::fn(v); }) : f8(x);       \
  }                                                                                              \
  __m256d fn(__m256d x) noexcept {                                                               \
    const int lanes = lanesOutside(x, double_low, double_high);                                  \
    return lanes ? redoLanes(d4(x), x, lanes, [](double v) { return std::fn(v); }) : d4(x);      \
  }

constexpr float kFloatMin = std::numeric_limits<float>::min();
constexpr double kDoubleMin = std::numeric_limits<double>::min();
KILN_SLEEF_FUNCTION_IN_RANGE(asinh, Sleef_asinhf8_u10avx2, Sleef_asinhd4_u10avx2, kFloatMin, 1e18f, kDoubleMin, 1e150)
KILN_SLEEF_FUNCTION_IN_RANGE(acosh, Sleef_acoshf8_u10avx2, Sleef_acoshd4_u10avx2, kFloatMin, 1e18f, kDoubleMin, 1e150)
KILN_SLEEF_FUNCTION_IN_RANGE(sinh, Sleef_sinhf8_u10avx2, Sleef_sinhd4_u10avx2, 0.0f, 88.0f, 0.0, 708.0)
KILN_SLEEF_FUNCTION_IN_RANGE(cosh, Sleef_coshf8_u10avx2, Sleef_coshd4_u10avx2, 0.0f, 88.0f, 0.0, 708.0)
#undef KILN_SLEEF_FUNCTION_IN_RANGE

// SLEEF's fmod gives NaN where a / b overflows; NaN lanes are redone by libm
// (which keeps the NaN of inf % b or a % 0). (PyTorch's vector path keeps
// SLEEF's NaN there.)
__m256 fmod(__m256 x, __m256 y) noexcept {
  const __m256 r = Sleef_fmodf8_avx2(x, y);
  const int lanes = nanLanes(r);
  return lanes ? redoLanes(r, x, y, lanes, [](float a, float b) { return std::fmod(a, b); }) : r;
}
__m256d fmod(__m256d x, __m256d y) noexcept {
  const __m256d r = Sleef_fmodd4_avx2(x, y);
  const int lanes = nanLanes(r);
  return lanes ? redoLanes(r, x, y, lanes, [](double a, double b) { return std::fmod(a, b); }) : r;
}

}  // namespace kiln::vm

// The scalar entry points and GCC's vector function ABI variants (x86:
// b = SSE, c = AVX, d = AVX2, e = AVX-512; N<lanes>; v per vector argument).
// Declared here and defined in one place, so that no header shows the ABI's
// mangled names to other code.
namespace {

inline __m256 widen(__m128 x) { return _mm256_zextps128_ps256(x); }
inline __m256d widen(__m128d x) { return _mm256_zextpd128_pd256(x); }

// The halves of a 512-bit vector through memory: the extract and insert
// intrinsics start from an undefined vector, which g++ 12 reports as used
// uninitialized.
__attribute__((target("avx512f"))) inline __m256 lowHalf(__m512 x) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, x);
  return _mm256_load_ps(lanes);
}
__attribute__((target("avx512f"))) inline __m256 highHalf(__m512 x) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, x);
  return _mm256_load_ps(lanes + 8);
}
__attribute__((target("avx512f"))) inline __m512 join(__m256 low, __m256 high) {
  alignas(64) float lanes[16];
  _mm256_store_ps(lanes, low);
  _mm256_store_ps(lanes + 8, high);
  return _mm512_load_ps(lanes);
}
__attribute__((target("avx512f"))) inline __m256d lowHalf(__m512d x) {
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, x);
  return _mm256_load_pd(lanes);
}
__attribute__((target("avx512f"))) inline __m256d highHalf(__m512d x) {
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, x);
  return _mm256_load_pd(lanes + 4);
}
__attribute__((target("avx512f"))) inline __m512d join(__m256d low, __m256d high) {
  alignas(64) double lanes[8];
  _mm256_store_pd(lanes, low);
  _mm256_store_pd(lanes + 4, high);
  return _mm512_load_pd(lanes);
}

}  // namespace

extern "C" {

#define KILN_VECTOR_ABI1(fn)                                                                            \
  float kiln_vm_##fn##f(float x) noexcept { return _mm256_cvtss_f32(kiln::vm::fn(_mm256_set1_ps(x))); } \
  double kiln_vm_##fn(double x) noexcept { return _mm256_cvtsd_f64(kiln::vm::fn(_mm256_set1_pd(x))); }  \
  __m128 _ZGVbN4v_kiln_vm_##fn##f(__m128 x) { return _mm256_castps256_ps128(kiln::vm::fn(widen(x))); }  \
  __m128d _ZGVbN2v_kiln_vm_##fn(__m128d x) { return _mm256_castpd256_pd128(kiln::vm::fn(widen(x))); }   \
  __m256 _ZGVcN8v_kiln_vm_##fn##f(__m256 x) { return kiln::vm::fn(x); }                                 \
  __m256d _ZGVcN4v_kiln_vm_##fn(__m256d x) { return kiln::vm::fn(x); }                                  \
  __m256 _ZGVdN8v_kiln_vm_##fn##f(__m256 x) { return kiln::vm::fn(x); }                                 \
  __m256d _ZGVdN4v_kiln_vm_##fn(__m256d x) { return kiln::vm::fn(x); }                                  \
  __attribute__((target("avx512f"))) __m512 _ZGVeN16v_kiln_vm_##fn##f(__m512 x) {                       \
    return join(kiln::vm::fn(lowHalf(x)), kiln::vm::fn(highHalf(x)));                                   \
  }                                                                                                     \
  __attribute__((target("avx512f"))) __m512d _ZGVeN8v_kiln_vm_##fn(__m512d x) {                         \
    return join(kiln::vm::fn(lowHalf(x)), kiln::vm::fn(highHalf(x)));                                   \
  }
#define KILN_VECTOR_ABI2(fn)                                                                   \
  float kiln_vm_##fn##f(float x, float y) noexcept {                                           \
    return _mm256_cvtss_f32(kiln::vm::fn(_mm256_set1_ps(x), _mm256_set1_ps(y)));               \
  }                                                                                            \
  double kiln_vm_##fn(double x, double y) noexcept {                                           \
    return _mm256_cvtsd_f64(kiln::vm::fn(_mm256_set1_pd(x), _mm256_set1_pd(y)));               \
  }                                                                                            \
  __m128 _ZGVbN4vv_kiln_vm_##fn##f(__m128 x, __m128 y) {                                       \
    return _mm256_castps256_ps128(kiln::vm::fn(widen(x), widen(y)));                           \
  }                                                                                            \
  __m128d _ZGVbN2vv_kiln_vm_##fn(__m128d x, __m128d y) {                                       \
    return _mm256_castpd256_pd128(kiln::vm::fn(widen(x), widen(y)));                           \
  }                                                                                            \
  __m256 _ZGVcN8vv_kiln_vm_##fn##f(__m256 x, __m256 y) { return kiln::vm::fn(x, y); }          \
  __m256d _ZGVcN4vv_kiln_vm_##fn(__m256d x, __m256d y) { return kiln::vm::fn(x, y); }          \
  __m256 _ZGVdN8vv_kiln_vm_##fn##f(__m256 x, __m256 y) { return kiln::vm::fn(x, y); }          \
  __m256d _ZGVdN4vv_kiln_vm_##fn(__m256d x, __m256d y) { return kiln::vm::fn(x, y); }          \
  __attribute__((target("avx512f"))) __m512 _ZGVeN16vv_kiln_vm_##fn##f(__m512 x, __m512 y) {   \
    return join(kiln::vm::fn(lowHalf(x), lowHalf(y)), kiln::vm::fn(highHalf(x), highHalf(y))); \
  }                                                                                            \
  __attribute__((target("avx512f"))) __m512d _ZGVeN8vv_kiln_vm_##fn(__m512d x, __m512d y) {    \
    return join(kiln::vm::fn(lowHalf(x), lowHalf(y)), kiln::vm::fn(highHalf(x), highHalf(y))); \
  }

KILN_VECTOR_MATH_UNARY(KILN_VECTOR_ABI1)
KILN_VECTOR_MATH_BINARY(KILN_VECTOR_ABI2)

#undef KILN_VECTOR_ABI2
#undef KILN_VECTOR_ABI1
}

#else  // !KILN_HAVE_AVX2: a portable build computes with libm.

extern "C" {
#define KILN_LIBM1(fn)                                           \
  float kiln_vm_##fn##f(float x) noexcept { return std::fn(x); } \
  double kiln_vm_##fn(double x) noexcept { return std::fn(x); }
#define KILN_LIBM2(fn)                                                       \
  float kiln_vm_##fn##f(float x, float y) noexcept { return std::fn(x, y); } \
  double kiln_vm_##fn(double x, double y) noexcept { return std::fn(x, y); }
KILN_VECTOR_MATH_UNARY(KILN_LIBM1)
KILN_VECTOR_MATH_BINARY(KILN_LIBM2)
#undef KILN_LIBM2
#undef KILN_LIBM1
}

#endif
