// The `math` module on Python numbers as TorchScript compiles it, with
// PyTorch 1.13's schemas and results: elementary functions on int, float and
// Scalar, floor/ceil to int, the two-argument functions (atan2, copysign,
// fmod, math.remainder, log with a base), factorial, gcd, frexp, ldexp,
// modf, isnan/isinf/isfinite. The C library computes each function, as in
// PyTorch, so results agree bit for bit; number_ops.h explains the float32
// rounding of the Scalar overloads.
#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <tuple>

#include "kiln/ops/fold_rules.h"
#include "kiln/ops/number_ops.h"

namespace kiln {
namespace {

namespace math {

// Halves go to the even neighbour, as in Python's round() (the default
// floating-point rounding mode; kiln never changes it).
double round(double a) { return std::nearbyint(a); }

// The int floor and ceiling of a float as PyTorch's compiled code computes
// them: the truncation, stepped when it lies on the wrong side of `a` (so at
// a = 2**63, where the truncation wraps to INT64_MIN, ceil is INT64_MIN + 1).
// An int goes through double unchanged: INT64_MAX becomes INT64_MIN.
int64_t floor(double a) {
  int64_t t = number::integralFloatToInt(a);
  return static_cast<double>(t) > a ? t - 1 : t;
}
int64_t ceil(double a) {
  int64_t t = number::integralFloatToInt(a);
  return static_cast<double>(t) < a ? t + 1 : t;
}
int64_t floor(int64_t a) { return number::integralFloatToInt(static_cast<double>(a)); }
int64_t ceil(int64_t a) { return number::integralFloatToInt(static_cast<double>(a)); }

double degrees(double a) { return a * (180.0 / std::numbers::pi); }
double radians(double a) { return a * (std::numbers::pi / 180.0); }

// The argument of a real number: pi for a negative sign bit (-0.0 and
// negative NaNs included), else 0.
double angle(double a) { return std::signbit(a) ? std::numbers::pi : 0.0; }

double logBase(double a, double base) { return std::log(a) / std::log(base); }

// PyTorch takes a C++ int, so the argument is narrowed to 32 bits. The
// result is n! mod 2**64 except that the power of two is shifted by its
// exponent mod 64, as PyTorch's `odd_part << exponent` computes on x86.
int64_t factorial(int64_t a) {
  const auto n = static_cast<int32_t>(a);
  KILN_CHECK(n >= 0, "factorial() not defined for negative values");
  uint64_t odd_part = 1;
  for (uint32_t i = 3; i <= static_cast<uint32_t>(n); ++i) odd_part *= i >> std::countr_zero(i);
  const int twos = n - std::popcount(static_cast<uint32_t>(n));
  return static_cast<int64_t>(odd_part << (twos & 63));
}

// Non-negative, as Python's math.gcd (INT64_MIN stays negative: it wraps).
int64_t gcd(int64_t a, int64_t b) {
  while (b != 0) {
    int64_t r = number::truncMod(a, b);
    a = b;
    b = r;
  }
  return a < 0 ? number::wrapNeg(a) : a;
}

std::tuple<double, int64_t> frexp(double a) {
  int exponent = 0;
  double mantissa = std::frexp(a, &exponent);
  return {mantissa, exponent};
}

std::tuple<double, double> modf(double a) {
  double integral = 0;
  double fraction = std::modf(a, &integral);
  return {fraction, integral};
}

}  // namespace math

// Elementary functions: a float for either argument type; the Scalar
// overloads round to float32.
#define KILN_MATH_FUNCTION(name, fn) KILN_NUMBER_UNARY_OPS("aten::" name, "float", "float", float, float, fn)

KILN_REGISTER_OPS(
    KILN_MATH_FUNCTION("sqrt", std::sqrt), KILN_MATH_FUNCTION("exp", std::exp), KILN_MATH_FUNCTION("expm1", std::expm1),
    KILN_MATH_FUNCTION("log", std::log), KILN_MATH_FUNCTION("log10", std::log10),
    KILN_MATH_FUNCTION("log1p", std::log1p), KILN_MATH_FUNCTION("sin", std::sin), KILN_MATH_FUNCTION("cos", std::cos),
    KILN_MATH_FUNCTION("tan", std::tan), KILN_MATH_FUNCTION("asin", std::asin), KILN_MATH_FUNCTION("acos", std::acos),
    KILN_MATH_FUNCTION("atan", std::atan), KILN_MATH_FUNCTION("sinh", std::sinh), KILN_MATH_FUNCTION("cosh", std::cosh),
    KILN_MATH_FUNCTION("tanh", std::tanh), KILN_MATH_FUNCTION("asinh", std::asinh),
    KILN_MATH_FUNCTION("acosh", std::acosh), KILN_MATH_FUNCTION("atanh", std::atanh),
    KILN_MATH_FUNCTION("erf", std::erf), KILN_MATH_FUNCTION("erfc", std::erfc),
    KILN_MATH_FUNCTION("gamma", std::tgamma), KILN_MATH_FUNCTION("lgamma", std::lgamma),
    KILN_MATH_FUNCTION("fabs", std::fabs), KILN_MATH_FUNCTION("degrees", math::degrees),
    KILN_MATH_FUNCTION("radians", math::radians), KILN_MATH_FUNCTION("round", math::round),
    KILN_MATH_FUNCTION("angle", math::angle),
    // math.floor and math.ceil are ints; their Scalar forms narrow to C++ int.
    KILN_NUMBER_UNARY_OPS("aten::floor", "int", "int", int, int, math::floor),
    KILN_NUMBER_UNARY_OPS("aten::ceil", "int", "int", int, int, math::ceil, .fold(folds::conversionToOwnType)),

    op("aten::isnan.float(float a) -> bool", [](double a) { return std::isnan(a); }),
    op("aten::isinf.float(float a) -> bool", [](double a) { return std::isinf(a); }),
    op("aten::isfinite.float(float a) -> bool", [](double a) { return std::isfinite(a); }),
    op("aten::factorial.int(int a) -> int", [](int64_t a) { return math::factorial(a); }),
    op("aten::gcd.int(int a, int b) -> int", [](int64_t a, int64_t b) { return math::gcd(a, b); }),
    op("aten::frexp(float a) -> (float, int)", [](double a) { return math::frexp(a); }),
    // PyTorch passes the exponent to std::ldexp as a C++ int: narrowed to 32 bits.
    op("aten::ldexp(float x, int i) -> float",
       [](double x, int64_t i) { return std::ldexp(x, static_cast<int32_t>(i)); }),
    op("aten::modf(float a) -> (float, float)", [](double a) { return math::modf(a); }), );

#undef KILN_MATH_FUNCTION

// Binary functions: always a float. Mixed and Scalar operands compute in double.
#define KILN_MATH_BINARY_FUNCTION(name, scalar_overload, fn) \
  KILN_NUMBER_BINARY_OPS("aten::" name, scalar_overload, "float", "float", "float", fn, fn)

KILN_REGISTER_OPS(KILN_MATH_BINARY_FUNCTION("atan2", ".Scalar_Scalar", std::atan2),
                  KILN_MATH_BINARY_FUNCTION("copysign", "", std::copysign),
                  KILN_MATH_BINARY_FUNCTION("fmod", "", std::fmod),
                  KILN_MATH_BINARY_FUNCTION("mathremainder", "", std::remainder),
                  // math.log(a, base): its int and float forms are named .int_int and .float_float.
                  KILN_NUMBER_INT_FLOAT_OPS("aten::log", ".int_int", ".float_float", "float", "float", math::logBase,
                                            math::logBase),
                  KILN_NUMBER_MIXED_OPS("aten::log", "float", math::logBase),
                  KILN_NUMBER_SCALAR_OP("aten::log.Scalar_Scalar", "float", math::logBase, math::logBase), );

#undef KILN_MATH_BINARY_FUNCTION

}  // namespace
}  // namespace kiln
