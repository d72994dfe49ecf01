// More of PyTorch 1.13's pointwise operators: log2, exp2, square, frac,
// deg2rad, rad2deg, sinc, logit, erfinv, digamma, polygamma, i0, sgn,
// signbit, positive, nan_to_num, heaviside, hypot, xlogy, logaddexp(2),
// fmax, fmin, nextafter, float_power, lcm, isclose, allclose, equal, isreal
// and isin, with every overload torch has, torch's dtype rules and errors.
//
// Ops whose element is an expression of kernel_math.h helpers declare it
// once (KILN_PROMOTING_UNARY_OPS): the eager kernel is the expression
// compiled here, and the fuser writes the same text into its kernels, so
// fused and eager results are the same bits. The special functions
// (erfinv, digamma, polygamma, i0) compute in double with the standard
// library and are not fused.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "kiln/core/op_registration.h"
#include "kiln/ops/elementwise_ops.h"
#include "kiln/ops/pointwise_spec.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/complex.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/kernels/kernel_math.h"
#include "kiln/tensor/kernels/loops.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"
#include "kiln/tensor/type_promotion.h"

namespace kiln {
namespace {

using namespace pointwise;
using namespace shapes;

// PyTorch's message for a dtype its CPU kernel lacks.
[[noreturn]] void notImplemented(const char* name, ScalarType dtype) {
  KILN_ERROR("\"", name, "_cpu\" not implemented for '", scalarTypeShortName(dtype), "'");
}

// out = f(self), integers and bool computed in the default float dtype (as
// log2 and sinc are); `make<T>()` gives the element function for type T.
template <typename Make>
Tensor promotingUnary(const char* name, const Tensor& self, const Tensor& out, const Make& make) {
  KILN_CHECK(self.defined(), name, ": expected a defined tensor");
  TensorIter iter(name);
  iter.addOutput(out).addInput(self).promoteIntegerToFloat(true).build();
  const ScalarType dtype = iter.computeDtype();
  if (!isFloatingType(dtype)) notImplemented(name, dtype);
  KILN_DISPATCH_FLOATING_TYPES(dtype, name, [&] {
    auto f = make.template operator()<scalar_t>();
    kernels::cpuKernel<scalar_t, scalar_t>(iter, [&f](scalar_t x) { return f(x); });
  });
  return iter.output();
}

// The element function of an expression over `self` (no parameters).
#define KILN_PROMOTING_ELEMENT(...) []<typename T>() { return [](T self) -> T { return __VA_ARGS__; }; }

// aten::name, name_ and name.out of a unary op computed in float (integers
// and bool promote to float32), whose element is the expression given; the
// fuser reads the same expression.
#define KILN_PROMOTING_UNARY_OPS(name, formula, ...)                                                               \
  op("aten::" name "(Tensor self) -> Tensor",                                                                      \
     [](const Tensor& self) { return promotingUnary(name, self, Tensor(), KILN_PROMOTING_ELEMENT(__VA_ARGS__)); }) \
      .shape(floatDtype)                                                                                           \
      .pointwise(elementwiseFromCpp(TypeRule::PromoteFloat, DtypeSet::Floating, #__VA_ARGS__, {"self"}))           \
      .derivative(KILN_PP_UNPAREN formula),                                                                        \
      op("aten::" name "_(Tensor(a!) self) -> Tensor(a!)",                                                         \
         [](Tensor self) {                                                                                         \
           promotingUnary(name "_", self, self, KILN_PROMOTING_ELEMENT(__VA_ARGS__));                              \
           return self;                                                                                            \
         }),                                                                                                       \
      op("aten::" name ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", [](const Tensor& self, Tensor out) {  \
        promotingUnary(name, self, out, KILN_PROMOTING_ELEMENT(__VA_ARGS__));                                      \
        return out;                                                                                                \
      }).shape(floatDtype)

// The same, for an element function computed in double by a function of
// this file (not fused).
#define KILN_SPECIAL_UNARY_OPS(name, fn, formula)                                                                 \
  op("aten::" name "(Tensor self) -> Tensor",                                                                     \
     [](const Tensor& self) { return promotingUnary(name, self, Tensor(), inDouble(fn)); })                       \
      .shape(floatDtype)                                                                                          \
      .derivative(KILN_PP_UNPAREN formula),                                                                       \
      op("aten::" name "_(Tensor(a!) self) -> Tensor(a!)",                                                        \
         [](Tensor self) {                                                                                        \
           promotingUnary(name "_", self, self, inDouble(fn));                                                    \
           return self;                                                                                           \
         }),                                                                                                      \
      op("aten::" name ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", [](const Tensor& self, Tensor out) { \
        promotingUnary(name, self, out, inDouble(fn));                                                            \
        return out;                                                                                               \
      }).shape(floatDtype)

// An element function of double, as a `make<T>()` that converts through double.
template <typename F>
auto inDouble(F f) {
  return [f]<typename T>() { return [f](T x) -> T { return static_cast<T>(f(static_cast<double>(x))); }; };
}

// float_power's results are double, in pow's broadcast shape.
std::vector<OutputFacts> floatPowerShape(const Args& a) {
  std::vector<OutputFacts> out = powOp(a);
  for (OutputFacts& o : out) {
    if (o.kind == OutputFacts::Kind::Tensor) o.tensor.dtype = ScalarType::Double;
  }
  return out;
}

// heaviside: self's dtype (values must have it too; the kernel raises
// otherwise); the broadcast sizes are left unknown.
std::vector<OutputFacts> heavisideShape(const Args& a) {
  const TensorType* self = a.tensor("self");
  if (!self) return {};
  return {tensorOut(self->scalarType(), VaryingShape())};
}

// --- special functions ----------------------------------------------------------

// The inverse error function: a rational first guess (Giles' approximation),
// refined by Newton steps on erf; +-1 give +-inf, outside [-1, 1] NaN.
double erfinvValue(double y) {
  if (std::isnan(y) || y < -1.0 || y > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (y == 1.0) return std::numeric_limits<double>::infinity();
  if (y == -1.0) return -std::numeric_limits<double>::infinity();
  if (y == 0.0) return y;
  double w = -std::log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                     0.246640727, 1.50140941})
      p = c + p * w;
    x = p * y;
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                     1.00167406, 2.83297682})
      p = c + p * w;
    x = p * y;
  }
  const double two_over_sqrt_pi = 2.0 / std::sqrt(std::numbers::pi);
  for (int i = 0; i < 3; ++i) {
    const double slope = two_over_sqrt_pi * std::exp(-x * x);
    if (slope == 0.0) break;
    x -= (std::erf(x) - y) / slope;
  }
  return x;
}

// psi(x), as PyTorch's calc_digamma: psi(+-0) = -+inf, NaN at negative
// integers, reflection below 0, recurrence up to 10 and the asymptotic series.
double digammaValue(double x) {
  constexpr double kPi = std::numbers::pi;
  if (x == 0) return std::copysign(std::numeric_limits<double>::infinity(), -x);
  if (x < 0) {
    if (x == std::trunc(x)) return std::numeric_limits<double>::quiet_NaN();
    // psi(1 - x) - pi / tan(pi x), with x's fractional part for the tangent.
    double r = std::modf(x, &r);
    return digammaValue(1 - x) - kPi / std::tan(kPi * r);
  }
  double result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  if (x == 10) return result + 2.25175258906672110764;
  constexpr double kA[] = {8.33333333333333333333E-2,  -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                           -4.16666666666666666667E-3, 3.96825396825396825397E-3,  -8.33333333333333333333E-3,
                           8.33333333333333333333E-2};
  double y = 0;
  if (x < 1.0e17) {
    const double z = 1 / (x * x);
    double p = 0;
    for (double a : kA) p = p * z + a;
    y = z * p;
  }
  return result + std::log(x) - 0.5 / x - y;
}

// The Hurwitz zeta function zeta(s, q) for s > 1 (Euler-Maclaurin
// summation, as Cephes computes it).
double zetaValue(double s, double q) {
  constexpr double kMachEp = 1.11022302462515654042E-16;
  constexpr double kB[] = {12.0,
                           -720.0,
                           30240.0,
                           -1209600.0,
                           47900160.0,
                           -1.8924375803183791606e9,
                           7.47242496e10,
                           -2.950130727918164224e12,
                           1.1646782814350067249e14,
                           -4.5979787224074726105e15,
                           1.8152105401943546773e17,
                           -7.1661652561756670113e18};
  if (s == 1) return std::numeric_limits<double>::infinity();
  if (q <= 0) {
    if (q == std::floor(q)) return std::numeric_limits<double>::infinity();
    if (s != std::floor(s)) return std::numeric_limits<double>::quiet_NaN();
  }
  double sum = std::pow(q, -s), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    i += 1;
    a += 1;
    b = std::pow(a, -s);
    sum += b;
    if (std::fabs(b / sum) < kMachEp) return sum;
  }
  const double w = a;
  sum += b * w / (s - 1);
  sum -= 0.5 * b;
  double fac = 1, k = 0;
  for (double bj : kB) {
    fac *= s + k;
    b /= w;
    const double t = fac * b / bj;
    sum += t;
    if (std::fabs(t / sum) < kMachEp) break;
    k += 1;
    fac *= s + k;
    b /= w;
    k += 1;
  }
  return sum;
}

// The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) for n >= 1.
double polygammaValue(int64_t n, double x) {
  if (n == 0) return digammaValue(x);
  if (n == 1) {
    // trigamma as torch computes it: reflection below 1/2, six recurrence
    // steps and the asymptotic series.
    constexpr double kPi = std::numbers::pi;
    double sign = 1, result = 0;
    if (x < 0.5) {
      sign = -1;
      const double s = std::sin(kPi * x);
      result -= (kPi * kPi) / (s * s);
      x = 1 - x;
    }
    for (int i = 0; i < 6; ++i) {
      result += 1 / (x * x);
      x += 1;
    }
    const double ixx = 1 / (x * x);
    result += (1 + 1 / (2 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x;
    return sign * result;
  }
  const double factorial = std::tgamma(static_cast<double>(n) + 1);
  const double sign = (n % 2) != 0 ? 1.0 : -1.0;
  return sign * factorial * zetaValue(static_cast<double>(n) + 1, x);
}

// The modified Bessel function I_nu(x) for nu = 0 or 1 and x >= 0: the
// power series below 40, the asymptotic expansion above.
double besselI(int nu, double x) {
  if (x < 40) {
    const double q = x * x / 4;
    double term = nu == 0 ? 1.0 : x / 2, sum = term;
    for (int k = 1; k < 500; ++k) {
      term *= q / (static_cast<double>(k) * static_cast<double>(k + nu));
      sum += term;
      if (term < sum * 1e-17) break;
    }
    return sum;
  }
  if (x > 720) return std::numeric_limits<double>::infinity();
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 30; ++k) {
    const double odd = 2.0 * k - 1;
    term *= -(mu - odd * odd) / (static_cast<double>(k) * 8 * x);
    sum += term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum)) break;
  }
  // e^x split in two, so that e^x / sqrt(x) does not overflow before the division.
  const double half = std::exp(x / 2);
  return half * (half / std::sqrt(2 * std::numbers::pi * x)) * sum;
}

// torch 1.13 gives NaN at the infinities (its Chebyshev series meets inf * 0).
double i0Value(double x) {
  if (!std::isfinite(x)) return std::numeric_limits<double>::quiet_NaN();
  return besselI(0, std::fabs(x));
}

double i1Value(double x) {
  if (!std::isfinite(x)) return std::numeric_limits<double>::quiet_NaN();
  const double v = besselI(1, std::fabs(x));
  return x < 0 ? -v : v;
}

Tensor polygammaOp(int64_t n, const Tensor& self, const Tensor& out, const char* name) {
  KILN_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  return promotingUnary(name, self, out, inDouble([n](double x) { return polygammaValue(n, x); }));
}

// logit with eps: inputs clamped to [eps, 1 - eps] first (no clamping when eps is None or negative).
Tensor logitOp(const Tensor& self, std::optional<double> eps, const Tensor& out, const char* name) {
  const double e = eps.value_or(-1.0);
  return promotingUnary(name, self, out, [e]<typename T>() {
    const T lo = static_cast<T>(e), hi = static_cast<T>(1.0 - e);
    const bool clamp = e >= 0;
    return [=](T x) -> T {
      if (clamp) {
        x = x < lo ? lo : x;  // then hi wins where eps > 0.5, as in torch
        x = x > hi ? hi : x;
      }
      return m_log(x / ((T)1 - x));
    };
  });
}

// --- dtype-keeping unary ops ------------------------------------------------------

Tensor signbitOp(const Tensor& self, const Tensor& out) {
  KILN_CHECK(self.defined(), "signbit: expected a defined tensor");
  if (out.defined()) kernels::checkExactOutDtype(out, ScalarType::Bool, "signbit");
  TensorIter iter("signbit");
  iter.addOutput(out).addInput(self).promoteInputs(false).outputDtype(ScalarType::Bool).build();
  const ScalarType dtype = self.dtype();
  if (dtype == ScalarType::Bool) {
    kernels::cpuKernel<bool, bool>(iter, [](bool) { return false; });
  } else if (isFloatingType(dtype)) {
    KILN_DISPATCH_FLOATING_TYPES(dtype, "signbit", [&] {
      kernels::cpuKernel<bool, scalar_t>(iter, [](scalar_t x) { return std::signbit(x); });
    });
  } else {
    KILN_DISPATCH_INTEGRAL_TYPES(dtype, "signbit", [&] {
      kernels::cpuKernel<bool, scalar_t>(iter, [](scalar_t x) { return x < scalar_t(0); });
    });
  }
  return iter.output();
}

// nan_to_num: NaN, +inf and -inf replaced (by default 0 and the dtype's
// largest and lowest values); integers and bool are copied.
Tensor nanToNumOp(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf, const Tensor& out) {
  KILN_CHECK(self.defined(), "nan_to_num: expected a defined tensor");
  if (out.defined()) kernels::checkExactOutDtype(out, self.dtype(), "nan_to_num");
  TensorIter iter("nan_to_num");
  iter.addOutput(out).addInput(self).build();
  const ScalarType dtype = iter.computeDtype();
  if (!isFloatingType(dtype)) {
    KILN_DISPATCH_ALL_TYPES_AND_BOOL(
        dtype, "nan_to_num", [&] { kernels::cpuKernel<scalar_t, scalar_t>(iter, [](scalar_t x) { return x; }); });
    return iter.output();
  }
  KILN_DISPATCH_FLOATING_TYPES(dtype, "nan_to_num", [&] {
    using L = std::numeric_limits<scalar_t>;
    const scalar_t n = static_cast<scalar_t>(nan.value_or(0.0));
    const scalar_t p = posinf ? static_cast<scalar_t>(*posinf) : L::max();
    const scalar_t m = neginf ? static_cast<scalar_t>(*neginf) : L::lowest();
    kernels::cpuKernel<scalar_t, scalar_t>(iter, [=](scalar_t x) {
      if (x != x) return n;
      if (x == L::infinity()) return p;
      if (x == -L::infinity()) return m;
      return x;
    });
  });
  return iter.output();
}

Tensor positiveOp(const Tensor& self) {
  KILN_CHECK(self.dtype() != ScalarType::Bool, "The `+` operator, on a bool tensor is not supported.");
  return self;
}

Tensor square(const Tensor& self) { return pow(self, Scalar(int64_t{2})); }

Tensor isrealOp(const Tensor& self) {
  if (!isComplexType(self.dtype())) {
    return ones(self.sizes(), ScalarType::Bool);
  }
  return eq(imag(self), scalarToTensor(Scalar(0.0)));
}

// --- binary ops -------------------------------------------------------------------

// Which dtypes a binary kernel computes in.
enum class BinaryDtypes { Floating, PromoteFloat, All, Integral };

// out = f(a, b) in result_type(a, b) (or float for PromoteFloat); `make<T>()`
// gives the element function.
template <BinaryDtypes dtypes, typename Make>
Tensor binaryKernel(const char* name, const char* kernel_name, const Tensor& a, const Tensor& b, const Tensor& out,
                    const Make& make) {
  KILN_CHECK(a.defined() && b.defined(), name, ": expected defined tensors");
  TensorIter iter(name);
  iter.addOutput(out).addInput(a).addInput(b);
  if constexpr (dtypes == BinaryDtypes::PromoteFloat) iter.promoteIntegerToFloat(true);
  iter.build();
  const ScalarType dtype = iter.computeDtype();
  auto run = [&]<typename T>() {
    auto f = make.template operator()<T>();
    kernels::cpuKernel<T, T, T>(iter, [&f](T x, T y) { return f(x, y); });
  };
  if constexpr (dtypes == BinaryDtypes::Floating || dtypes == BinaryDtypes::PromoteFloat) {
    if (!isFloatingType(dtype)) notImplemented(kernel_name, dtype);
    KILN_DISPATCH_FLOATING_TYPES(dtype, name, [&] { run.template operator()<scalar_t>(); });
  } else if constexpr (dtypes == BinaryDtypes::Integral) {
    if (!isIntegralType(dtype, false)) notImplemented(kernel_name, dtype);
    KILN_DISPATCH_INTEGRAL_TYPES(dtype, name, [&] { run.template operator()<scalar_t>(); });
  } else {
    KILN_DISPATCH_ALL_TYPES_AND_BOOL(dtype, name, [&] { run.template operator()<scalar_t>(); });
  }
  return iter.output();
}

#define KILN_BINARY_ELEMENT(...) []<typename T>() { return [](T self, T other) -> T { return __VA_ARGS__; }; }

// aten::name(self, other), name.out and (with KILN_BINARY_INPLACE_OP) name_.
#define KILN_BINARY_OPS(name, kname, dtypes, shape_rule, spec, formula, ...)                                       \
  op("aten::" name "(Tensor self, Tensor other) -> Tensor",                                                        \
     [](const Tensor& self, const Tensor& other) {                                                                 \
       return binaryKernel<dtypes>(name, kname, self, other, Tensor(), KILN_BINARY_ELEMENT(__VA_ARGS__));          \
     })                                                                                                            \
      .shape(shape_rule)                                                                                           \
      .pointwise(spec)                                                                                             \
      .derivative(KILN_PP_UNPAREN formula),                                                                        \
      op("aten::" name ".out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", [](const Tensor& self,  \
                                                                                              const Tensor& other, \
                                                                                              Tensor out) {        \
        binaryKernel<dtypes>(name, kname, self, other, out, KILN_BINARY_ELEMENT(__VA_ARGS__));                     \
        return out;                                                                                                \
      }).shape(shape_rule)
#define KILN_BINARY_INPLACE_OP(name, kname, dtypes, ...)                                                    \
  op("aten::" name "_(Tensor(a!) self, Tensor other) -> Tensor(a!)", [](Tensor self, const Tensor& other) { \
    binaryKernel<dtypes>(name "_", kname, self, other, self, KILN_BINARY_ELEMENT(__VA_ARGS__));             \
    return self;                                                                                            \
  })

// The binary element functions compute every candidate and select, so that
// the loops vectorize (the math helpers are `omp declare simd`).

// log(e^a + e^b) without overflow: the larger plus log1p(e^-|a - b|); NaN
// propagates through a - b; equal infinities give that infinity.
template <typename T>
T logaddexpValue(T a, T b) {
  const T r = (a > b ? a : b) + m_log1p(m_exp(-k_abs(a - b)));
  return (a == b) & (k_abs(a) == std::numeric_limits<T>::infinity()) ? a : r;
}

// log2(2^a + 2^b), the same way.
template <typename T>
T logaddexp2Value(T a, T b) {
  const T r = (a > b ? a : b) + m_log1p(m_exp(-k_abs(a - b) * (T)0.6931471805599453)) * (T)1.4426950408889634;
  return (a == b) & (k_abs(a) == std::numeric_limits<T>::infinity()) ? a : r;
}

// sqrt(a^2 + b^2) without overflow: float in double; double by the library.
template <typename T>
T hypotValue(T a, T b) {
  if constexpr (std::is_same_v<T, float>) {
    const float r = static_cast<float>(m_sqrt(static_cast<double>(a) * a + static_cast<double>(b) * b));
    const float inf = std::numeric_limits<float>::infinity();
    return k_abs(a) == inf || k_abs(b) == inf ? inf : r;
  } else {
    return std::hypot(a, b);
  }
}

// x * log(y), 0 where x is 0 (unless y is NaN).
template <typename T>
T xlogyValue(T x, T y) {
  const T r = x * m_log(y);
  return (y != y) | (x != T(0)) ? r : T(0);
}

// The next representable value after x towards y, by stepping x's bits.
template <typename T>
T nextafterValue(T x, T y) {
  using Bits = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  const Bits bits = __builtin_bit_cast(Bits, x);
  const Bits stepped = (x < y) == (x > T(0)) ? bits + 1 : bits - 1;
  const T from_zero = m_copysign(std::numeric_limits<T>::denorm_min(), y);
  return x != x || y != y ? x + y : (x == y ? y : (x == T(0) ? from_zero : __builtin_bit_cast(T, stepped)));
}

// fmax/fmin: NaN loses to a number.
#define KILN_FMAX_EXPR (other != other || self > other) && self == self ? self : (other != other ? self : other)
#define KILN_FMIN_EXPR (other != other || self < other) && self == self ? self : (other != other ? self : other)

template <typename T>
T lcmValue(T a, T b) {
  // gcd by Euclid on |a|, |b|; lcm = |a / gcd * b|.
  auto abs_value = [](T v) { return std::is_signed_v<T> && v < 0 ? static_cast<T>(-v) : v; };
  T x = abs_value(a), y = abs_value(b);
  while (y != 0) {
    const T r = static_cast<T>(x % y);
    x = y;
    y = r;
  }
  if (x == 0) return 0;
  return abs_value(static_cast<T>(a / x * b));
}

Tensor xlogyOp(const Tensor& self, const Tensor& other, const Tensor& out, const char* name) {
  return binaryKernel<BinaryDtypes::PromoteFloat>(
      name, "xlogy", self, other, out, []<typename T>() { return [](T x, T y) -> T { return xlogyValue(x, y); }; });
}

Tensor heavisideOp(const Tensor& self, const Tensor& values, const Tensor& out, const char* name) {
  KILN_CHECK(self.dtype() == values.dtype(), "heaviside is not yet implemented for tensors with different dtypes.");
  return binaryKernel<BinaryDtypes::All>(name, "heaviside", self, values, out, []<typename T>() {
    return [](T x, T v) -> T {
      if constexpr (std::is_same_v<T, bool>) {
        return x ? true : v;
      } else {
        return x == T(0) ? v : static_cast<T>(x > T(0));
      }
    };
  });
}

// float_power is pow in double (torch composes it so), with pow's special
// cases (x ** 0.5 is sqrt, ...); in-place and out= need double tensors.
Tensor floatPower(const Tensor& self, const Tensor& exponent) {
  return pow(to(self, ScalarType::Double), to(exponent, ScalarType::Double));
}
Tensor floatPower(const Tensor& self, const Scalar& exponent) {
  return pow(to(self, ScalarType::Double), exponent.isIntegral() ? exponent : Scalar(exponent.toDouble()));
}
Tensor floatPower(const Scalar& self, const Tensor& exponent) {
  return pow(Scalar(self.toDouble()), to(exponent, ScalarType::Double));
}

Tensor& floatPowerInplace(Tensor& self, const Tensor& result) {
  KILN_CHECK(self.dtype() == ScalarType::Double, "the base given to float_power_ has dtype ",
             scalarTypeShortName(self.dtype()), " but the operation's result requires dtype Double");
  return copy_(self, result);
}

Tensor& floatPowerOut(Tensor& out, const Tensor& result) {
  KILN_CHECK(out.dtype() == ScalarType::Double, "the output given to float_power has dtype ",
             scalarTypeShortName(out.dtype()), " but the operation's result requires dtype Double");
  return writeOut(out, result, "float_power");
}

Tensor nextafterOp(const Tensor& self, const Tensor& other, const Tensor& out, const char* name) {
  return binaryKernel<BinaryDtypes::Floating>(name, "nextafter", self, other, out, []<typename T>() {
    return [](T x, T y) -> T { return nextafterValue(x, y); };
  });
}

// --- comparisons of whole tensors ---------------------------------------------------

Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  KILN_CHECK(self.dtype() == other.dtype(), scalarTypeShortName(self.dtype()), " did not match ",
             scalarTypeShortName(other.dtype()));
  KILN_CHECK(rtol >= 0, "rtol must be greater than or equal to zero, but got ", rtol);
  KILN_CHECK(atol >= 0, "atol must be greater than or equal to zero, but got ", atol);
  TensorIter iter("isclose");
  iter.addOutput(Tensor()).addInput(self).addInput(other).outputDtype(ScalarType::Bool).build();
  auto close = [=]<typename T, typename C>(T a, T b) -> bool {
    if (a == b) return true;
    if constexpr (std::is_floating_point_v<T>) {
      if (equal_nan && a != a && b != b) return true;
    }
    if (rtol == 0 && atol == 0) return false;
    // Integers compare in float32, as torch casts them to the default dtype.
    const C x = static_cast<C>(a), y = static_cast<C>(b);
    const C actual = m_fabs(x - y);
    const C allowed = static_cast<C>(atol) + m_fabs(static_cast<C>(rtol) * y);
    return std::isfinite(actual) && actual <= allowed;
  };
  const ScalarType dtype = iter.computeDtype();
  if (isFloatingType(dtype)) {
    KILN_DISPATCH_FLOATING_TYPES(dtype, "isclose", [&] {
      kernels::cpuKernel<bool, scalar_t, scalar_t>(
          iter, [&](scalar_t a, scalar_t b) { return close.template operator()<scalar_t, scalar_t>(a, b); });
    });
  } else {
    KILN_DISPATCH_INTEGRAL_TYPES_AND_BOOL(dtype, "isclose", [&] {
      kernels::cpuKernel<bool, scalar_t, scalar_t>(
          iter, [&](scalar_t a, scalar_t b) { return close.template operator()<scalar_t, float>(a, b); });
    });
  }
  return iter.output();
}

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return all(isclose(self, other, rtol, atol, equal_nan)).item().toBool();
}

bool equalOp(const Tensor& self, const Tensor& other) {
  if (self.sizes() != other.sizes()) return false;
  if (self.numel() == 0) return true;
  return all(eq(self, other)).item().toBool();
}

// isin: each element's membership in test_elements (sorted once, then a
// binary search per element), in the two's promoted dtype; NaN is in nothing.
Tensor isinOp(const Tensor& elements, const Tensor& test_elements, bool invert, const Tensor& out) {
  const ScalarType dtype = resultType(
      {{elements.dtype(), elements.dim() == 0 ? PromotionTier::ZeroDim : PromotionTier::Dimensioned},
       {test_elements.dtype(), test_elements.dim() == 0 ? PromotionTier::ZeroDim : PromotionTier::Dimensioned}});
  const Tensor tests = contiguous(to(test_elements, dtype));
  TensorIter iter("isin");
  iter.addOutput(out).addInput(elements).computeDtype(dtype).outputDtype(ScalarType::Bool);
  iter.build();
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(dtype, "isin", [&] {
    const scalar_t* data = static_cast<const scalar_t*>(tests.rawData());
    std::vector<scalar_t> sorted;
    for (int64_t j = 0; j < tests.numel(); ++j) {
      if (data[j] == data[j]) sorted.push_back(data[j]);  // NaN matches nothing
    }
    std::sort(sorted.begin(), sorted.end(), [](scalar_t a, scalar_t b) { return a < b; });
    kernels::cpuKernel<bool, scalar_t>(iter, [&](scalar_t x) {
      if (x != x) return invert;
      const bool found =
          std::binary_search(sorted.begin(), sorted.end(), x, [](scalar_t a, scalar_t b) { return a < b; });
      return found != invert;
    });
  });
  return iter.output();
}

Tensor boolOut(Tensor& out, const Tensor& result, const char* name) { return writeOut(out, result, name); }

}  // namespace

KILN_REGISTER_OPS(
    KILN_PROMOTING_UNARY_OPS("log2", ({"self: grad / (self * 0.6931471805599453)"}),
                             m_log(self) * (T)1.4426950408889634),
    // 2^x: float as e^(x ln 2) in double (exact enough, and fast), double by pow.
    KILN_PROMOTING_UNARY_OPS("exp2", ({"self: grad * result * 0.6931471805599453"}),
                             sizeof(T) == 4 ? (T)m_exp((double)self * 0.6931471805599453)
                                            : (T)m_pow((double)2, (double)self)),
    KILN_PROMOTING_UNARY_OPS("deg2rad", ({"self: grad * 0.017453292519943295"}), self*(T)0.017453292519943295),
    KILN_PROMOTING_UNARY_OPS("rad2deg", ({"self: grad * 57.29577951308232"}), self*(T)57.29577951308232),
    // sin(pi x) / (pi x), 1 at 0.
    KILN_PROMOTING_UNARY_OPS(
        "sinc",
        ({"self: grad * torch.where(self == 0, torch.zeros_like(self), (self * 3.141592653589793 * (self * "
          "3.141592653589793).cos() - (self * 3.141592653589793).sin()) / (self * self * 3.141592653589793))"}),
        self == (T)0 ? (T)1 : m_sin(self * (T)3.141592653589793) / (self * (T)3.141592653589793)),
    // x - trunc(x), floating tensors only.
    KILN_FLOAT_UNARY_OPS("frac", ({"self: grad"}), self - m_trunc(self)),
    KILN_SPECIAL_UNARY_OPS("erfinv", erfinvValue, ({"self: grad * 0.886226925452758 * (result * result).exp()"})),
    KILN_SPECIAL_UNARY_OPS("digamma", digammaValue, ({"self: grad * torch.polygamma(1, self)"})),
    KILN_SPECIAL_UNARY_OPS("i0", i0Value, ({"self: grad * torch.special_i1(self)"})),
    op("aten::special_i1(Tensor self) -> Tensor",
       [](const Tensor& self) { return promotingUnary("special_i1", self, Tensor(), inDouble(i1Value)); })
        .shape(floatDtype)
        .derivative({"self: grad * (torch.i0(self) - torch.where(self == 0, torch.full_like(self, 0.5), result / "
                     "self))"}),
    op("aten::special_i1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) {
         promotingUnary("special_i1", self, out, inDouble(i1Value));
         return out;
       })
        .shape(floatDtype),

    op("aten::polygamma(int n, Tensor self) -> Tensor",
       [](int64_t n, const Tensor& self) { return polygammaOp(n, self, Tensor(), "polygamma"); })
        .shape(floatDtype)
        .derivative({"self: grad * torch.polygamma(n + 1, self)"}),
    op("aten::polygamma.out(int n, Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](int64_t n, const Tensor& self, Tensor out) {
         polygammaOp(n, self, out, "polygamma");
         return out;
       })
        .shape(floatDtype),
    op("aten::polygamma_(Tensor(a!) self, int n) -> Tensor(a!)",
       [](Tensor self, int64_t n) {
         polygammaOp(n, self, self, "polygamma_");
         return self;
       }),

    op("aten::logit(Tensor self, float? eps=None) -> Tensor",
       [](const Tensor& self, std::optional<double> eps) { return logitOp(self, eps, Tensor(), "logit"); })
        .shape(floatDtype)
        .derivative({"self: grad / (self * (1 - self)) if eps is None else torch.where((self < eps) | (self > 1 - "
                     "eps), torch.zeros_like(self), grad / (self * (1 - self)))"}),
    op("aten::logit.out(Tensor self, float? eps=None, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, std::optional<double> eps, Tensor out) {
         logitOp(self, eps, out, "logit");
         return out;
       })
        .shape(floatDtype),
    op("aten::logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)",
       [](Tensor self, std::optional<double> eps) {
         logitOp(self, eps, self, "logit_");
         return self;
       }),

    op("aten::square(Tensor self) -> Tensor", [](const Tensor& self) { return square(self); })
        .shape(powOp)
        .derivative({"self: 2 * grad * self"}),
    op("aten::square.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return powOut(self, Scalar(int64_t{2}), out); }),
    op("aten::square_(Tensor(a!) self) -> Tensor(a!)", [](Tensor self) { return pow_(self, Scalar(int64_t{2})); }),

    op("aten::sgn(Tensor self) -> Tensor", [](const Tensor& self) { return sign(self); })
        .shape(sameDtype)
        .pointwise(elementwise(TypeRule::Promote, DtypeSet::All, "k_sign($self)"))
        .derivative({"self: torch.zeros_like(grad)"}),
    op("aten::sgn.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return signOut(self, out); })
        .shape(sameDtype),
    op("aten::sgn_(Tensor(a!) self) -> Tensor(a!)", [](Tensor self) { return sign_(self); }),

    op("aten::signbit(Tensor self) -> Tensor", [](const Tensor& self) { return signbitOp(self, Tensor()); })
        .shape(boolDtype),
    op("aten::signbit.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) {
         signbitOp(self, out);
         return out;
       })
        .shape(boolDtype),

    op("aten::positive(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return positiveOp(self); })
        .shape(shapes::alias)
        .traits(OpTrait::NeverRequiresGrad),

    op("aten::nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
       [](const Tensor& self, std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
         return nanToNumOp(self, nan, posinf, neginf, Tensor());
       })
        .shape(sameDtype)
        .derivative({"self: grad * torch.isfinite(self)"}),
    op("aten::nan_to_num.out(Tensor self, float? nan=None, float? posinf=None, float? neginf=None, *, Tensor(a!) "
       "out) -> Tensor(a!)",
       [](const Tensor& self, std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf,
          Tensor out) {
         nanToNumOp(self, nan, posinf, neginf, out);
         return out;
       })
        .shape(sameDtype),
    op("aten::nan_to_num_(Tensor(a!) self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor(a!)",
       [](Tensor self, std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
         nanToNumOp(self, nan, posinf, neginf, self);
         return self;
       }),

    op("aten::isreal(Tensor self) -> Tensor", [](const Tensor& self) { return isrealOp(self); }).shape(boolDtype), );

KILN_REGISTER_OPS(
    KILN_BINARY_OPS("hypot", "hypot", BinaryDtypes::Floating, arithmetic, nullptr,
                    ({"self: grad * self / result", "other: grad * other / result"}), hypotValue(self, other)),
    KILN_BINARY_INPLACE_OP("hypot", "hypot", BinaryDtypes::Floating, hypotValue(self, other)),
    KILN_BINARY_OPS("logaddexp", "logaddexp", BinaryDtypes::Floating, arithmetic, nullptr,
                    ({"self: grad / (1 + (other - self).exp())", "other: grad / (1 + (self - other).exp())"}),
                    logaddexpValue(self, other)),
    KILN_BINARY_OPS("logaddexp2", "logaddexp2", BinaryDtypes::Floating, arithmetic, nullptr,
                    ({"self: grad / (1 + torch.pow(2.0, other - self))",
                      "other: grad / (1 + torch.pow(2.0, self - other))"}),
                    logaddexp2Value(self, other)),
    KILN_BINARY_OPS("fmax", "fmax", BinaryDtypes::All, arithmetic, nullptr,
                    ({"self: torch.where((self >= other) | other.isnan(), grad, torch.zeros_like(grad))",
                      "other: torch.where((self >= other) | other.isnan(), torch.zeros_like(grad), grad)"}),
                    KILN_FMAX_EXPR),
    KILN_BINARY_OPS("fmin", "fmin", BinaryDtypes::All, arithmetic, nullptr,
                    ({"self: torch.where((self <= other) | other.isnan(), grad, torch.zeros_like(grad))",
                      "other: torch.where((self <= other) | other.isnan(), torch.zeros_like(grad), grad)"}),
                    KILN_FMIN_EXPR),
    KILN_BINARY_OPS("lcm", "lcm", BinaryDtypes::Integral, arithmetic, nullptr, ({}), lcmValue(self, other)),
    KILN_BINARY_INPLACE_OP("lcm", "lcm", BinaryDtypes::Integral, lcmValue(self, other)),

    op("aten::nextafter(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return nextafterOp(self, other, Tensor(), "nextafter"); })
        .shape(arithmetic),
    op("aten::nextafter.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) {
         nextafterOp(self, other, out, "nextafter");
         return out;
       })
        .shape(arithmetic),
    op("aten::nextafter_(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       [](Tensor self, const Tensor& other) {
         nextafterOp(self, other, self, "nextafter_");
         return self;
       }),

    op("aten::heaviside(Tensor self, Tensor values) -> Tensor",
       [](const Tensor& self, const Tensor& values) { return heavisideOp(self, values, Tensor(), "heaviside"); })
        .shape(heavisideShape),
    op("aten::heaviside.out(Tensor self, Tensor values, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& values, Tensor out) {
         heavisideOp(self, values, out, "heaviside");
         return out;
       })
        .shape(heavisideShape),
    op("aten::heaviside_(Tensor(a!) self, Tensor values) -> Tensor(a!)",
       [](Tensor self, const Tensor& values) {
         heavisideOp(self, values, self, "heaviside_");
         return self;
       }),

    op("aten::xlogy.Tensor(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return xlogyOp(self, other, Tensor(), "xlogy"); })
        .shape(trueDivide)
        .derivative({"self: grad * torch.xlogy((self != 0), other)", "other: grad * self / other"}),
    op("aten::xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor",
       [](const Tensor& self, const Scalar& other) { return xlogyOp(self, scalarToTensor(other), Tensor(), "xlogy"); })
        .shape(trueDivide)
        .derivative({"self: grad * torch.xlogy((self != 0), other)", "grad_fn: XlogyBackward1"}),
    op("aten::xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor",
       [](const Scalar& self, const Tensor& other) { return xlogyOp(scalarToTensor(self), other, Tensor(), "xlogy"); })
        .shape(trueDivide)
        .derivative({"other: grad * self / other", "grad_fn: XlogyBackward2"}),
    op("aten::xlogy.OutTensor(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) {
         xlogyOp(self, other, out, "xlogy");
         return out;
       })
        .shape(trueDivide),
    op("aten::xlogy.OutScalar_Self(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& self, const Tensor& other, Tensor out) {
         xlogyOp(scalarToTensor(self), other, out, "xlogy");
         return out;
       })
        .shape(trueDivide),
    op("aten::xlogy.OutScalar_Other(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, Tensor out) {
         xlogyOp(self, scalarToTensor(other), out, "xlogy");
         return out;
       })
        .shape(trueDivide),
    op("aten::xlogy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       [](Tensor self, const Tensor& other) {
         xlogyOp(self, other, self, "xlogy_");
         return self;
       }),
    op("aten::xlogy_.Scalar_Other(Tensor(a!) self, Scalar other) -> Tensor(a!)",
       [](Tensor self, const Scalar& other) {
         xlogyOp(self, scalarToTensor(other), self, "xlogy_");
         return self;
       }),

    op("aten::float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
       [](const Tensor& self, const Tensor& exponent) { return floatPower(self, exponent); })
        .shape(floatPowerShape)
        .derivative({"self: (grad * exponent * self.double().pow(exponent.double() - 1)).type_as(self)",
                     "exponent: (grad * result * self.double().log()).type_as(exponent)"}),
    op("aten::float_power.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
       [](const Tensor& self, const Scalar& exponent) { return floatPower(self, exponent); })
        .shape(floatPowerShape)
        .derivative({"self: (grad * exponent * self.double().pow(exponent - 1)).type_as(self)",
                     "grad_fn: PowBackward0"}),
    op("aten::float_power.Scalar(Scalar self, Tensor exponent) -> Tensor",
       [](const Scalar& self, const Tensor& exponent) { return floatPower(self, exponent); })
        .shape(floatPowerShape)
        .derivative({"exponent: (grad * result * math.log(self)).type_as(exponent)", "grad_fn: PowBackward2"}),
    op("aten::float_power.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& exponent, Tensor out) {
         return floatPowerOut(out, floatPower(self, exponent));
       }),
    op("aten::float_power.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& self, const Tensor& exponent, Tensor out) {
         return floatPowerOut(out, floatPower(self, exponent));
       }),
    op("aten::float_power.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& exponent, Tensor out) {
         return floatPowerOut(out, floatPower(self, exponent));
       }),
    op("aten::float_power_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
       [](Tensor self, const Tensor& exponent) { return floatPowerInplace(self, floatPower(self, exponent)); })
        .derivative({"self: grad * exponent * self.pow(exponent - 1)", "exponent: grad * result * self.log()"}),
    op("aten::float_power_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
       [](Tensor self, const Scalar& exponent) { return floatPowerInplace(self, floatPower(self, exponent)); })
        .derivative({"self: grad * exponent * self.pow(exponent - 1)"}),

    op("aten::isclose(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, bool "
       "equal_nan=False) -> Tensor",
       [](const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
         return isclose(self, other, rtol, atol, equal_nan);
       })
        .shape(comparison),
    op("aten::allclose(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, bool "
       "equal_nan=False) -> bool",
       [](const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
         return allclose(self, other, rtol, atol, equal_nan);
       }),
    op("aten::equal(Tensor self, Tensor other) -> bool",
       [](const Tensor& self, const Tensor& other) { return equalOp(self, other); }),

    op("aten::isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool "
       "invert=False) -> Tensor",
       [](const Tensor& elements, const Tensor& test_elements, bool, bool invert) {
         return isinOp(elements, test_elements, invert, Tensor());
       }),
    op("aten::isin.Tensor_Tensor_out(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool "
       "invert=False, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& elements, const Tensor& test_elements, bool, bool invert, Tensor out) {
         return boolOut(out, isinOp(elements, test_elements, invert, Tensor()), "isin");
       }),
    op("aten::isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool "
       "invert=False) -> Tensor",
       [](const Tensor& elements, const Scalar& test, bool, bool invert) {
         return isinOp(elements, scalarToTensor(test), invert, Tensor());
       }),
    op("aten::isin.Tensor_Scalar_out(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool "
       "invert=False, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& elements, const Scalar& test, bool, bool invert, Tensor out) {
         return boolOut(out, isinOp(elements, scalarToTensor(test), invert, Tensor()), "isin");
       }),
    op("aten::isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool "
       "invert=False) -> Tensor",
       [](const Scalar& element, const Tensor& test_elements, bool, bool invert) {
         return isinOp(scalarToTensor(element), test_elements, invert, Tensor());
       }),
    op("aten::isin.Scalar_Tensor_out(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool "
       "invert=False, Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& element, const Tensor& test_elements, bool, bool invert, Tensor out) {
         return boolOut(out, isinOp(scalarToTensor(element), test_elements, invert, Tensor()), "isin");
       }), );

}  // namespace kiln
