// Unary pointwise kernels. Contiguous float/double runs of the
// transcendental ops go through SLEEF's AVX2 functions (or short inline AVX2
// code where a SLEEF call would dominate); strided runs and the other ops use
// scalar lambdas, which the compiler vectorizes where it can.
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

#include "kiln/tensor/kernels/vec.h"
#include "kiln/tensor/pointwise.h"

namespace kiln {

namespace {

#if KILN_HAVE_AVX2
using kernels::exp8;
using kernels::negate;
#endif
using kernels::mapKernel;

// Each op: a scalar form for any floating T and, with AVX2, the vector forms.
#if KILN_HAVE_AVX2
#define KILN_VECTOR_FORMS(f8, d4)                            \
  static __m256 apply(__m256 x) { return f8(x); }            \
  static __m256d apply(__m256d x) { return d4(x); }
#else
#define KILN_VECTOR_FORMS(f8, d4)
#endif

// An op whose scalar form is std::fn and whose vector forms are SLEEF's.
#define KILN_SLEEF_OP(Op, fn, f8, d4)                      \
  struct Op {                                              \
    template <typename T>                                  \
    static T apply(T x) { return std::fn(x); }             \
    KILN_VECTOR_FORMS(f8, d4)                              \
  };

KILN_SLEEF_OP(Exp, exp, Sleef_expf8_u10avx2, Sleef_expd4_u10avx2)
KILN_SLEEF_OP(Log, log, Sleef_logf8_u10avx2, Sleef_logd4_u10avx2)
KILN_SLEEF_OP(Log10, log10, Sleef_log10f8_u10avx2, Sleef_log10d4_u10avx2)
KILN_SLEEF_OP(Log1p, log1p, Sleef_log1pf8_u10avx2, Sleef_log1pd4_u10avx2)
KILN_SLEEF_OP(Expm1, expm1, Sleef_expm1f8_u10avx2, Sleef_expm1d4_u10avx2)
KILN_SLEEF_OP(Sin, sin, Sleef_sinf8_u10avx2, Sleef_sind4_u10avx2)
KILN_SLEEF_OP(Cos, cos, Sleef_cosf8_u10avx2, Sleef_cosd4_u10avx2)
KILN_SLEEF_OP(Tan, tan, Sleef_tanf8_u10avx2, Sleef_tand4_u10avx2)
KILN_SLEEF_OP(Asin, asin, Sleef_asinf8_u10avx2, Sleef_asind4_u10avx2)
KILN_SLEEF_OP(Acos, acos, Sleef_acosf8_u10avx2, Sleef_acosd4_u10avx2)
KILN_SLEEF_OP(Atan, atan, Sleef_atanf8_u10avx2, Sleef_atand4_u10avx2)
KILN_SLEEF_OP(Atanh, atanh, Sleef_atanhf8_u10avx2, Sleef_atanhd4_u10avx2)
// The 3.5-ulp SLEEF tanh is three times faster than the 1-ulp one and still
// far inside float tolerance.
KILN_SLEEF_OP(Tanh, tanh, Sleef_tanhf8_u35avx2, Sleef_tanhd4_u35avx2)
KILN_SLEEF_OP(Erf, erf, Sleef_erff8_u10avx2, Sleef_erfd4_u10avx2)
KILN_SLEEF_OP(Erfc, erfc, Sleef_erfcf8_u15avx2, Sleef_erfcd4_u15avx2)

#undef KILN_SLEEF_OP

#if KILN_HAVE_AVX2
// The lanes of x with |x| > high or 0 < |x| < low, as a bit mask.
inline int lanesOutside(__m256 x, float low, float high) {
  const __m256 a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 below = _mm256_and_ps(_mm256_cmp_ps(a, _mm256_set1_ps(low), _CMP_LT_OQ),
                                     _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_GT_OQ));
  return _mm256_movemask_ps(_mm256_or_ps(below, _mm256_cmp_ps(a, _mm256_set1_ps(high), _CMP_GT_OQ)));
}
inline int lanesOutside(__m256d x, double low, double high) {
  const __m256d a = _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
  const __m256d below = _mm256_and_pd(_mm256_cmp_pd(a, _mm256_set1_pd(low), _CMP_LT_OQ),
                                      _mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_GT_OQ));
  return _mm256_movemask_pd(_mm256_or_pd(below, _mm256_cmp_pd(a, _mm256_set1_pd(high), _CMP_GT_OQ)));
}

// result, with the lanes set in `lanes` replaced by f(x[lane]).
template <typename V, typename F>
V redoLanes(V result, V x, int lanes, const F& f) {
  for (int i = 0; lanes != 0; ++i, lanes >>= 1) {
    if (lanes & 1) result[i] = f(x[i]);
  }
  return result;
}
#endif

// SLEEF functions that are exact only on part of the range: asinh and acosh
// overflow to inf above sqrt(max) and lose digits on subnormals, sinh and
// cosh give inf from 88.5 (709 in double) though the result overflows only
// past 89.4 (710.5). Lanes with |x| outside [low, high] (with a margin) are
// redone with the scalar form, so contiguous and strided runs agree.
// (PyTorch's vector path keeps SLEEF's inf for sinh and cosh there.)
#if KILN_HAVE_AVX2
#define KILN_SLEEF_OP_IN_RANGE(Op, fn, f8, d4, float_low, float_high, double_low, double_high)     \
  struct Op {                                                                                     \
    template <typename T>                                                                         \
    static T apply(T x) { return std::fn(x); }                                                    \
    static __m256 apply(__m256 x) {                                                               \
      const int lanes = lanesOutside(x, float_low, float_high);                                   \
      return lanes ? redoLanes(f8(x), x, lanes, [](float v) { return std::fn(v); }) : f8(x);      \
    }                                                                                             \
    static __m256d apply(__m256d x) {                                                             \
      const int lanes = lanesOutside(x, double_low, double_high);                                 \
      return lanes ? redoLanes(d4(x), x, lanes, [](double v) { return std::fn(v); }) : d4(x);     \
    }                                                                                             \
  };
#else
#define KILN_SLEEF_OP_IN_RANGE(Op, fn, f8, d4, float_low, float_high, double_low, double_high) \
  struct Op {                                                                                 \
    template <typename T>                                                                     \
    static T apply(T x) { return std::fn(x); }                                                \
  };
#endif

constexpr float kFloatMin = std::numeric_limits<float>::min();
constexpr double kDoubleMin = std::numeric_limits<double>::min();
KILN_SLEEF_OP_IN_RANGE(Asinh, asinh, Sleef_asinhf8_u10avx2, Sleef_asinhd4_u10avx2, kFloatMin, 1e18f, kDoubleMin, 1e150)
KILN_SLEEF_OP_IN_RANGE(Acosh, acosh, Sleef_acoshf8_u10avx2, Sleef_acoshd4_u10avx2, kFloatMin, 1e18f, kDoubleMin, 1e150)
KILN_SLEEF_OP_IN_RANGE(Sinh, sinh, Sleef_sinhf8_u10avx2, Sleef_sinhd4_u10avx2, 0.0f, 88.0f, 0.0, 708.0)
KILN_SLEEF_OP_IN_RANGE(Cosh, cosh, Sleef_coshf8_u10avx2, Sleef_coshd4_u10avx2, 0.0f, 88.0f, 0.0, 708.0)
#undef KILN_SLEEF_OP_IN_RANGE

// std::lgamma sets the global `signgam`, a data race in parallel loops; the
// reentrant forms keep the sign to themselves.
struct Lgamma {
  static float apply(float x) {
    int sign;
    return ::lgammaf_r(x, &sign);
  }
  static double apply(double x) {
    int sign;
    return ::lgamma_r(x, &sign);
  }
  KILN_VECTOR_FORMS(Sleef_lgammaf8_u10avx2, Sleef_lgammad4_u10avx2)
};

#undef KILN_VECTOR_FORMS

// The argument of a real number: pi for x < 0, else 0 (-0 included); NaN stays NaN.
struct Angle {
  template <typename T>
  static T apply(T x) { return x != x ? x : (x < T(0) ? std::numbers::pi_v<T> : T(0)); }
#if KILN_HAVE_AVX2
  static __m256 apply(__m256 x) {
    const __m256 angle = _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ),
                                       _mm256_set1_ps(std::numbers::pi_v<float>));
    return _mm256_blendv_ps(angle, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
  static __m256d apply(__m256d x) {
    const __m256d angle = _mm256_and_pd(_mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_LT_OQ),
                                        _mm256_set1_pd(std::numbers::pi));
    return _mm256_blendv_pd(angle, x, _mm256_cmp_pd(x, x, _CMP_UNORD_Q));
  }
#endif
};

struct Sqrt {
  template <typename T>
  static T apply(T x) { return std::sqrt(x); }
#if KILN_HAVE_AVX2
  static __m256 apply(__m256 x) { return _mm256_sqrt_ps(x); }
  static __m256d apply(__m256d x) { return _mm256_sqrt_pd(x); }
#endif
};

struct Rsqrt {
  template <typename T>
  static T apply(T x) { return T(1) / std::sqrt(x); }
#if KILN_HAVE_AVX2
  static __m256 apply(__m256 x) { return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(x)); }
  static __m256d apply(__m256d x) { return _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_sqrt_pd(x)); }
#endif
};

struct Reciprocal {
  template <typename T>
  static T apply(T x) { return T(1) / x; }
#if KILN_HAVE_AVX2
  static __m256 apply(__m256 x) { return _mm256_div_ps(_mm256_set1_ps(1.0f), x); }
  static __m256d apply(__m256d x) { return _mm256_div_pd(_mm256_set1_pd(1.0), x); }
#endif
};

struct Sigmoid {
  template <typename T>
  static T apply(T x) { return T(1) / (T(1) + std::exp(-x)); }
#if KILN_HAVE_AVX2
  static __m256 apply(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_div_ps(one, _mm256_add_ps(one, exp8(negate(x))));
  }
  static __m256d apply(__m256d x) {
    const __m256d one = _mm256_set1_pd(1.0);
    return _mm256_div_pd(one, _mm256_add_pd(one, Sleef_expd4_u10avx2(negate(x))));
  }
#endif
};

// gelu(x) = x/2 * (1 + erf(x / sqrt(2))).
struct GeluErf {
  static constexpr double kSqrtHalf = std::numbers::sqrt2 / 2;
  template <typename T>
  static T apply(T x) { return T(0.5) * x * (T(1) + std::erf(x * T(kSqrtHalf))); }
#if KILN_HAVE_AVX2
  // SLEEF's erff is five times slower than all of PyTorch's gelu; this is the
  // approximation PyTorch vectorizes (Abramowitz-Stegun 7.1.26, absolute
  // error below 1.5e-7 in erf).
  static __m256 apply(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 z = _mm256_mul_ps(x, _mm256_set1_ps(static_cast<float>(kSqrtHalf)));
    const __m256 sign = _mm256_and_ps(z, _mm256_set1_ps(-0.0f));
    // erf(|z| >= 6) is 1 in float; capping |z| keeps exp(-z^2) in exp8's normal range (NaN passes).
    const __m256 a = _mm256_min_ps(_mm256_set1_ps(6.0f), _mm256_xor_ps(z, sign));
    const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(_mm256_set1_ps(0.3275911f), a, one));
    __m256 poly = _mm256_fmadd_ps(_mm256_set1_ps(1.061405429f), t, _mm256_set1_ps(-1.453152027f));
    poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(1.421413741f));
    poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(-0.284496736f));
    poly = _mm256_fmadd_ps(poly, t, _mm256_set1_ps(0.254829592f));
    const __m256 e = exp8<true>(negate(_mm256_mul_ps(a, a)));
    const __m256 erf = _mm256_xor_ps(_mm256_fnmadd_ps(_mm256_mul_ps(poly, t), e, one), sign);
    return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.5f)), _mm256_add_ps(one, erf));
  }
  static __m256d apply(__m256d x) {
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d erf = Sleef_erfd4_u10avx2(_mm256_mul_pd(x, _mm256_set1_pd(kSqrtHalf)));
    return _mm256_mul_pd(_mm256_mul_pd(x, _mm256_set1_pd(0.5)), _mm256_add_pd(one, erf));
  }
#endif
};

// gelu(x) ~ x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
struct GeluTanh {
  static constexpr double kBeta = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2/pi)
  static constexpr double kKappa = 0.044715;
  template <typename T>
  static T apply(T x) {
    const T inner = T(kBeta) * (x + T(kKappa) * (x * x * x));
    return T(0.5) * x * (T(1) + std::tanh(inner));
  }
#if KILN_HAVE_AVX2
  static __m256 apply(__m256 x) {
    const __m256 cube = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
    const __m256 inner = _mm256_mul_ps(_mm256_set1_ps(static_cast<float>(kBeta)),
                                       _mm256_fmadd_ps(_mm256_set1_ps(static_cast<float>(kKappa)), cube, x));
    return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.5f)),
                         _mm256_add_ps(_mm256_set1_ps(1.0f), Sleef_tanhf8_u35avx2(inner)));
  }
  static __m256d apply(__m256d x) {
    const __m256d cube = _mm256_mul_pd(_mm256_mul_pd(x, x), x);
    const __m256d inner =
        _mm256_mul_pd(_mm256_set1_pd(kBeta), _mm256_fmadd_pd(_mm256_set1_pd(kKappa), cube, x));
    return _mm256_mul_pd(_mm256_mul_pd(x, _mm256_set1_pd(0.5)),
                         _mm256_add_pd(_mm256_set1_pd(1.0), Sleef_tanhd4_u35avx2(inner)));
  }
#endif
};

enum class Rounding { Floor, Ceil, Trunc, HalfEven };

// Rounding to an integral value.
template <Rounding Mode>
struct RoundTo {
  template <typename T>
  static T apply(T x) {
    switch (Mode) {
      case Rounding::Floor: return std::floor(x);
      case Rounding::Ceil: return std::ceil(x);
      case Rounding::Trunc: return std::trunc(x);
      case Rounding::HalfEven: return std::nearbyint(x);  // as PyTorch rounds
    }
    return x;
  }
#if KILN_HAVE_AVX2
  static constexpr int kSseMode = Mode == Rounding::Floor  ? _MM_FROUND_TO_NEG_INF
                                  : Mode == Rounding::Ceil ? _MM_FROUND_TO_POS_INF
                                  : Mode == Rounding::Trunc ? _MM_FROUND_TO_ZERO
                                                            : _MM_FROUND_TO_NEAREST_INT;
  static __m256 apply(__m256 x) { return _mm256_round_ps(x, kSseMode | _MM_FROUND_NO_EXC); }
  static __m256d apply(__m256d x) { return _mm256_round_pd(x, kSseMode | _MM_FROUND_NO_EXC); }
#endif
};

template <typename Op>
void floatKernel(TensorIter& iter, const char* name) {
  KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), name, [&] {
    mapKernel<scalar_t>(iter, [](auto x) { return Op::apply(x); });
  });
}

// Rounding leaves integers as they are.
template <typename Op>
void roundingKernel(TensorIter& iter, const char* name) {
  if (isFloatingType(iter.computeDtype())) return floatKernel<Op>(iter, name);
  KILN_DISPATCH_INTEGRAL_TYPES(iter.computeDtype(), name, [&] {
    kernels::cpuKernel<scalar_t, scalar_t>(iter, [](scalar_t x) { return x; });
  });
}

// Integers negate through the unsigned type: -INT_MIN wraps instead of being undefined.
template <typename T>
T negValue(T x) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U(0) - U(x));
  } else {
    return -x;
  }
}

template <typename T>
T absValue(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::abs(x);
  } else if constexpr (std::is_unsigned_v<T>) {
    return x;
  } else {
    return x < T(0) ? negValue(x) : x;
  }
}

void negKernel(TensorIter& iter) {
  KILN_DISPATCH_ALL_TYPES(iter.computeDtype(), "neg", [&] {
    kernels::cpuKernel<scalar_t, scalar_t>(iter, [](scalar_t x) { return negValue(x); });
  });
}

void absKernel(TensorIter& iter) {
  KILN_DISPATCH_ALL_TYPES(iter.computeDtype(), "abs", [&] {
    kernels::cpuKernel<scalar_t, scalar_t>(iter, [](scalar_t x) { return absValue(x); });
  });
}

void signKernel(TensorIter& iter) {
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.computeDtype(), "sign", [&] {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      kernels::cpuKernel<bool, bool>(iter, [](bool x) { return x; });
    } else {
      // NaN gives 0, as in PyTorch.
      kernels::cpuKernel<scalar_t, scalar_t>(
          iter, [](scalar_t x) { return static_cast<scalar_t>((scalar_t(0) < x) - (x < scalar_t(0))); });
    }
  });
}

void reluKernel(TensorIter& iter) {
  KILN_DISPATCH_ALL_TYPES(iter.computeDtype(), "relu", [&] {
    // NaN passes through (the comparison is false).
    kernels::cpuKernel<scalar_t, scalar_t>(iter, [](scalar_t x) { return x < scalar_t(0) ? scalar_t(0) : x; });
  });
}

template <typename T>
T bitwiseNotValue(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return !x;
  } else {
    return static_cast<T>(~x);
  }
}

void bitwiseNotKernel(TensorIter& iter) {
  KILN_DISPATCH_INTEGRAL_TYPES_AND_BOOL(iter.computeDtype(), "bitwise_not", [&] {
    kernels::cpuKernel<scalar_t, scalar_t>(iter, [](scalar_t x) { return bitwiseNotValue(x); });
  });
}

void logicalNotKernel(TensorIter& iter) {
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.computeDtype(), "logical_not", [&] {
    kernels::cpuKernel<bool, scalar_t>(iter, [](scalar_t x) { return !static_cast<bool>(x); });
  });
}

template <typename T>
constexpr T kInf = std::numeric_limits<T>::infinity();

// A floating-point class test (isnan, isinf, ...). Integers and bool are
// never NaN or infinite: they give `integral_value` without a look.
template <typename Pred>
void classifyKernel(TensorIter& iter, const char* name, bool integral_value, const Pred& pred) {
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.computeDtype(), name, [&] {
    if constexpr (std::is_floating_point_v<scalar_t>) {
      kernels::cpuKernel<bool, scalar_t>(iter, [&](scalar_t x) -> bool { return pred(x); });
    } else {
      kernels::cpuKernel<bool, scalar_t>(iter, [integral_value](scalar_t) { return integral_value; });
    }
  });
}

void roundDecimalsKernel(TensorIter& iter, int64_t decimals) {
  KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), "round", [&] {
    // PyTorch's arithmetic: scale by 10^|decimals| in the element type, round, scale back.
    const auto scale = static_cast<scalar_t>(std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals)));
    if (decimals < 0) {
      kernels::cpuKernel<scalar_t, scalar_t>(iter, [scale](scalar_t x) { return std::nearbyint(x / scale) * scale; });
    } else {
      kernels::cpuKernel<scalar_t, scalar_t>(iter, [scale](scalar_t x) { return std::nearbyint(x * scale) / scale; });
    }
  });
}

enum class UnaryKind {
  Float,       // integer and bool inputs compute in float32; out= takes any dtype the result casts to
  Same,        // the result has self's dtype; out= must have exactly that dtype
  SameAnyOut,  // like Same, but out= takes any dtype
  Bool,        // the result is bool; out= takes any dtype
  BoolOnly,    // the result is bool; out= must be bool
};

template <typename Kernel>
Tensor unaryOp(const char* name, const Tensor& self, const Tensor& out, UnaryKind kind, const Kernel& kernel) {
  KILN_CHECK(self.defined(), name, ": expected a defined tensor");
  TensorIter iter(name);
  iter.addOutput(out).addInput(self);
  switch (kind) {
    case UnaryKind::Float: iter.promoteIntegerToFloat(true); break;
    case UnaryKind::Same: kernels::checkExactOutDtype(out, self.dtype(), name); break;
    case UnaryKind::SameAnyOut: iter.checkOutputCast(false); break;
    case UnaryKind::Bool: iter.outputDtype(ScalarType::Bool); break;
    case UnaryKind::BoolOnly:
      kernels::checkExactOutDtype(out, ScalarType::Bool, name);
      iter.outputDtype(ScalarType::Bool);
      break;
  }
  iter.build();
  kernel(iter);
  return iter.output();
}

// (An undefined self is left for unaryOp to report.)
void checkNotBool(const Tensor& self, const char* message) {
  KILN_CHECK(!self.defined() || self.dtype() != ScalarType::Bool, message);
}

constexpr const char* kNegBool =
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the "
    "`~` or `logical_not()` operator instead.";

}  // namespace

// Defines fn and fnOut; `prologue` runs first with `self` in scope.
#define KILN_UNARY_FUNCTIONAL_AND_OUT(fn, name, kind, prologue, kernel) \
  Tensor fn(const Tensor& self) {                                      \
    prologue;                                                          \
    return unaryOp(name, self, Tensor(), kind, kernel);                \
  }                                                                    \
  Tensor& fn##Out(const Tensor& self, Tensor& out) {                   \
    prologue;                                                          \
    unaryOp(name, self, out, kind, kernel);                            \
    return out;                                                        \
  }
// Defines fn, fn_ and fnOut.
#define KILN_UNARY_FORMS(fn, name, kind, prologue, kernel)             \
  KILN_UNARY_FUNCTIONAL_AND_OUT(fn, name, kind, prologue, kernel)      \
  Tensor& fn##_(Tensor& self) {                                        \
    prologue;                                                          \
    unaryOp(name "_", self, self, kind, kernel);                       \
    return self;                                                       \
  }

#define KILN_FLOAT_UNARY(fn, name, Op) \
  KILN_UNARY_FORMS(fn, name, UnaryKind::Float, (void)0, [](TensorIter& iter) { floatKernel<Op>(iter, name); })
#define KILN_ROUNDING_UNARY(fn, name, mode)                              \
  KILN_UNARY_FORMS(fn, name, UnaryKind::Same, checkNotBool(self, "\"" name "\" not implemented for 'Bool'"), \
                   [](TensorIter& iter) { roundingKernel<RoundTo<mode>>(iter, name); })

KILN_FLOAT_UNARY(exp, "exp", Exp)
KILN_FLOAT_UNARY(log, "log", Log)
KILN_FLOAT_UNARY(log1p, "log1p", Log1p)
KILN_FLOAT_UNARY(expm1, "expm1", Expm1)
KILN_FLOAT_UNARY(sqrt, "sqrt", Sqrt)
KILN_FLOAT_UNARY(rsqrt, "rsqrt", Rsqrt)
KILN_FLOAT_UNARY(sin, "sin", Sin)
KILN_FLOAT_UNARY(cos, "cos", Cos)
KILN_FLOAT_UNARY(tan, "tan", Tan)
KILN_FLOAT_UNARY(tanh, "tanh", Tanh)
KILN_FLOAT_UNARY(sigmoid, "sigmoid", Sigmoid)
KILN_FLOAT_UNARY(erf, "erf", Erf)
KILN_FLOAT_UNARY(reciprocal, "reciprocal", Reciprocal)
KILN_FLOAT_UNARY(log10, "log10", Log10)
KILN_FLOAT_UNARY(asin, "asin", Asin)
KILN_FLOAT_UNARY(acos, "acos", Acos)
KILN_FLOAT_UNARY(atan, "atan", Atan)
KILN_FLOAT_UNARY(sinh, "sinh", Sinh)
KILN_FLOAT_UNARY(cosh, "cosh", Cosh)
KILN_FLOAT_UNARY(asinh, "asinh", Asinh)
KILN_FLOAT_UNARY(acosh, "acosh", Acosh)
KILN_FLOAT_UNARY(atanh, "atanh", Atanh)
KILN_FLOAT_UNARY(erfc, "erfc", Erfc)
KILN_FLOAT_UNARY(lgamma, "lgamma", Lgamma)
KILN_UNARY_FUNCTIONAL_AND_OUT(angle, "angle", UnaryKind::Float, (void)0,
                              [](TensorIter& iter) { floatKernel<Angle>(iter, "angle"); })

KILN_ROUNDING_UNARY(floor, "floor", Rounding::Floor)
KILN_ROUNDING_UNARY(ceil, "ceil", Rounding::Ceil)
KILN_ROUNDING_UNARY(trunc, "trunc", Rounding::Trunc)
KILN_ROUNDING_UNARY(round, "round", Rounding::HalfEven)

KILN_UNARY_FORMS(neg, "neg", UnaryKind::Same, checkNotBool(self, kNegBool), negKernel)
KILN_UNARY_FORMS(abs, "abs", UnaryKind::Same, checkNotBool(self, "\"abs\" not implemented for 'Bool'"), absKernel)
KILN_UNARY_FORMS(sign, "sign", UnaryKind::Same, (void)0, signKernel)
KILN_UNARY_FORMS(relu, "relu", UnaryKind::SameAnyOut, checkNotBool(self, "Boolean inputs not supported for relu"),
                 reluKernel)
KILN_UNARY_FORMS(bitwiseNot, "bitwise_not", UnaryKind::Same, (void)0, bitwiseNotKernel)
KILN_UNARY_FORMS(logicalNot, "logical_not", UnaryKind::Bool, (void)0, logicalNotKernel)

// The class tests. Comparisons with inf vectorize where std::isinf would not.
#define KILN_CLASSIFY(name, kind, integral_value, expr)                                  \
  KILN_UNARY_FUNCTIONAL_AND_OUT(name, #name, kind, (void)0, [](TensorIter& iter) {       \
    classifyKernel(iter, #name, integral_value, []<typename T>(T x) { return expr; });   \
  })
KILN_CLASSIFY(isnan, UnaryKind::Bool, false, x != x)
KILN_CLASSIFY(isinf, UnaryKind::Bool, false, std::abs(x) == kInf<T>)
KILN_CLASSIFY(isposinf, UnaryKind::BoolOnly, false, x == kInf<T>)
KILN_CLASSIFY(isneginf, UnaryKind::BoolOnly, false, x == -kInf<T>)
#undef KILN_CLASSIFY

// torch has no out= form of isfinite.
Tensor isfinite(const Tensor& self) {
  return unaryOp("isfinite", self, Tensor(), UnaryKind::Bool, [](TensorIter& iter) {
    classifyKernel(iter, "isfinite", true, []<typename T>(T x) { return std::abs(x) < kInf<T>; });
  });
}

#undef KILN_ROUNDING_UNARY
#undef KILN_FLOAT_UNARY
#undef KILN_UNARY_FORMS
#undef KILN_UNARY_FUNCTIONAL_AND_OUT

namespace {

Tensor roundDecimalsOp(const char* name, const Tensor& self, const Tensor& out, int64_t decimals) {
  KILN_CHECK(self.defined(), name, ": expected a defined tensor");
  KILN_CHECK(isFloatingType(self.dtype()), "\"round\" with decimals is not implemented for '",
             scalarTypeShortName(self.dtype()), "'");
  return unaryOp(name, self, out, UnaryKind::Same, [decimals](TensorIter& iter) {
    if (decimals == 0) {
      floatKernel<RoundTo<Rounding::HalfEven>>(iter, "round");
    } else {
      roundDecimalsKernel(iter, decimals);
    }
  });
}

}  // namespace

Tensor round(const Tensor& self, int64_t decimals) { return roundDecimalsOp("round", self, Tensor(), decimals); }
Tensor& round_(Tensor& self, int64_t decimals) {
  roundDecimalsOp("round_", self, self, decimals);
  return self;
}
Tensor& roundOut(const Tensor& self, int64_t decimals, Tensor& out) {
  roundDecimalsOp("round", self, out, decimals);
  return out;
}

namespace {

Tensor geluOp(const char* name, const Tensor& self, std::string_view approximate, const Tensor& out) {
  KILN_CHECK(approximate == "none" || approximate == "tanh", name,
             ": approximate argument must be either none or tanh, got '", approximate, "'");
  const bool use_tanh = approximate == "tanh";
  return unaryOp(name, self, out, UnaryKind::Same, [use_tanh](TensorIter& iter) {
    if (use_tanh) {
      floatKernel<GeluTanh>(iter, "gelu");
    } else {
      floatKernel<GeluErf>(iter, "gelu");
    }
  });
}

}  // namespace

Tensor gelu(const Tensor& self, std::string_view approximate) { return geluOp("gelu", self, approximate, Tensor()); }
Tensor& gelu_(Tensor& self, std::string_view approximate) {
  geluOp("gelu_", self, approximate, self);
  return self;
}
Tensor& geluOut(const Tensor& self, std::string_view approximate, Tensor& out) {
  geluOp("gelu", self, approximate, out);
  return out;
}

// pow with a number exponent: a unary map over self.
namespace {

// base ** e for floating base, e not one of the exponents with a cheaper form.
struct PowFloat {
  double exponent;
  // The scalar path raises in double, as PyTorch does for a double exponent.
  template <typename T>
  T operator()(T x) const { return static_cast<T>(std::pow(x, exponent)); }
#if KILN_HAVE_AVX2
  __m256 operator()(__m256 x) const { return Sleef_powf8_u10avx2(x, _mm256_set1_ps(static_cast<float>(exponent))); }
  __m256d operator()(__m256d x) const { return Sleef_powd4_u10avx2(x, _mm256_set1_pd(exponent)); }
#endif
};

void powFloatKernel(TensorIter& iter, double e) {
  if (e == 0.5) return floatKernel<Sqrt>(iter, "pow");
  if (e == -0.5) return floatKernel<Rsqrt>(iter, "pow");
  if (e == -1) return floatKernel<Reciprocal>(iter, "pow");
  KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), "pow", [&] {
    using T = scalar_t;
    if (e == 2) {
      kernels::cpuKernel<T, T>(iter, [](T x) { return x * x; });
    } else if (e == 3) {
      kernels::cpuKernel<T, T>(iter, [](T x) { return x * x * x; });
    } else if (e == -2) {
      kernels::cpuKernel<T, T>(iter, [](T x) { return T(1) / (x * x); });
    } else {
      mapKernel<T>(iter, PowFloat{e});
    }
  });
}

Tensor powScalarOp(const char* name, const Tensor& self, const Scalar& exponent, const Tensor& out) {
  KILN_CHECK(self.defined(), name, ": expected a defined tensor");
  KILN_CHECK(!(isIntegralType(self.dtype(), true) && !exponent.isFloatingPoint() && exponent.toLong() < 0),
             "Integers to negative integer powers are not allowed.");
  const ScalarType dtype = resultType(self, exponent);
  // PyTorch computes pow with a number exponent directly in the output's dtype.
  kernels::checkExactOutDtype(out, dtype, name);
  if (!isFloatingType(dtype)) {
    // Integer powers: a non-negative integer exponent promotes like a 0-dim exponent tensor.
    KILN_DISPATCH_INTEGRAL_TYPES_AND_BOOL(dtype, name, [&] { kernels::checkedScalarTo<scalar_t>(exponent, name); });
    Tensor result = out;
    const Tensor wrapped = scalarToTensor(exponent);
    return result.defined() ? powOut(self, wrapped, result) : pow(self, wrapped);
  }
  TensorIter iter(name);
  iter.addOutput(out).addInput(self).computeDtype(dtype).build();
  const double e = exponent.toDouble();
  if (e == 0 || e == 1) {
    KILN_DISPATCH_FLOATING_TYPES(dtype, "pow", [&] {
      kernels::cpuKernel<scalar_t, scalar_t>(iter, [e](scalar_t x) { return e == 0 ? scalar_t(1) : x; });
    });
  } else {
    powFloatKernel(iter, e);
  }
  return iter.output();
}

}  // namespace

Tensor pow(const Tensor& self, const Scalar& exponent) { return powScalarOp("pow", self, exponent, Tensor()); }

Tensor& pow_(Tensor& self, const Scalar& exponent) {
  powScalarOp("pow_", self, exponent, self);
  return self;
}

Tensor& powOut(const Tensor& self, const Scalar& exponent, Tensor& out) {
  powScalarOp("pow", self, exponent, out);
  return out;
}

namespace {

void checkFrexpInput(const Tensor& self) {
  KILN_CHECK(self.defined(), "frexp: expected a defined tensor");
  KILN_CHECK(isFloatingType(self.dtype()), "torch.frexp() only supports floating-point dtypes, got ", self.dtype());
}

// Both outputs have their dtypes already (mantissa: self's, exponent: int32).
void frexpInto(const Tensor& self, const Tensor& mantissa, const Tensor& exponent) {
  TensorIter iter("frexp");
  iter.addOutput(mantissa).addOutput(exponent).addInput(self).promoteInputs(false).build();
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "frexp", [&] {
    iter.forEach([](char** data, const int64_t* strides, int64_t n) {
      char *m = data[0], *e = data[1];
      const char* x = data[2];
      for (int64_t i = 0; i < n; ++i, m += strides[0], e += strides[1], x += strides[2]) {
        int exp = 0;
        *reinterpret_cast<scalar_t*>(m) = std::frexp(*reinterpret_cast<const scalar_t*>(x), &exp);
        *reinterpret_cast<int32_t*>(e) = exp;
      }
    });
  });
}

}  // namespace

std::tuple<Tensor, Tensor> frexp(const Tensor& self) {
  checkFrexpInput(self);
  Tensor mantissa = empty(self.sizes(), self.dtype());
  Tensor exponent = empty(self.sizes(), ScalarType::Int);
  frexpInto(self, mantissa, exponent);
  return {mantissa, exponent};
}

std::tuple<Tensor, Tensor> frexpOut(const Tensor& self, Tensor& mantissa, Tensor& exponent) {
  checkFrexpInput(self);
  KILN_CHECK(mantissa.defined() && exponent.defined(), "frexp: expected defined out= tensors");
  KILN_CHECK(mantissa.dtype() == self.dtype(), "torch.frexp() expects mantissa to have dtype ", self.dtype(),
             " but got ", mantissa.dtype());
  KILN_CHECK(exponent.dtype() == ScalarType::Int, "torch.frexp() expects exponent to have int dtype but got ",
             exponent.dtype());
  frexpInto(self, mantissa, exponent);
  return {mantissa, exponent};
}

}  // namespace kiln
