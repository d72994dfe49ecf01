#pragma once
// Declaring TorchScript's operators on Python numbers (int, float, Scalar),
// shared by scalar_ops.cpp and math_ops.cpp. PyTorch 1.13 computes these in
// C++, and kiln reproduces C++'s results where they differ from Python's:
// int64 overflow wraps, mixed int/float operands compute in double, and the
// `Scalar` overloads of unary functions pass their result through a C++
// `float` or `int` (so `math.exp` on a `Scalar` has float32 precision).
//
// A bool in a `Scalar` slot counts as an int: TorchScript's number type has
// no bool, and torch.ops passes Python bools there as ints.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "kiln/core/op_registration.h"

namespace kiln::number {

// Two's complement int64 arithmetic: PyTorch's results on overflow, without
// C++'s undefined behaviour.
inline int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrapNeg(int64_t a) { return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(a)); }

// C++'s truncating a / b and a % b (b != 0), with INT64_MIN / -1 wrapping
// where the hardware (and PyTorch) would trap.
inline int64_t truncDiv(int64_t a, int64_t b) { return b == -1 ? wrapNeg(a) : a / b; }
inline int64_t truncMod(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }

// A double -> int64 conversion as x86 performs C++'s cast: NaN and values
// outside the int64 range become INT64_MIN.
inline int64_t truncToInt(double d) {
  if (d >= -0x1p63 && d < 0x1p63) return static_cast<int64_t>(d);
  return std::numeric_limits<int64_t>::min();
}

// PyTorch's checked float -> int conversion (for math.floor, math.ceil and
// the quotient of a mixed divmod): NaN, infinities and values beyond 2**63
// raise; others truncate.
inline int64_t integralFloatToInt(double a) {
  KILN_CHECK(a >= -0x1p63 && a <= 0x1p63, "Cannot convert float ", std::to_string(a), " to integer");
  return truncToInt(a);
}

// The float computation for two `Scalar`s when either is a float, else the
// int one, as PyTorch's `(Scalar a, Scalar b)` overloads choose. The result
// is a Scalar when the two computations return different types.
template <typename IntFn, typename FloatFn>
auto onNumbers(const Scalar& a, const Scalar& b, IntFn int_fn, FloatFn float_fn) {
  using IntResult = decltype(int_fn(int64_t{}, int64_t{}));
  using FloatResult = decltype(float_fn(0.0, 0.0));
  using Result = std::conditional_t<std::is_same_v<IntResult, FloatResult>, IntResult, Scalar>;
  KILN_CHECK(!a.isComplex() && !b.isComplex(), "this operator is not implemented for complex numbers");
  if (a.isFloatingPoint() || b.isFloatingPoint()) return Result(float_fn(a.toDouble(), b.toDouble()));
  return Result(int_fn(a.toLong(), b.toLong()));
}

// A unary `Scalar` overload: `fn` on the number, its result cast to
// `IntCast` for an int argument and to `FloatCast` for a float one.
template <typename IntCast, typename FloatCast, typename Fn>
Scalar onNumber(const Scalar& a, Fn fn) {
  KILN_CHECK(!a.isComplex(), "this operator is not implemented for complex numbers");
  if (a.isFloatingPoint()) return Scalar(static_cast<FloatCast>(fn(a.toDouble())));
  return Scalar(static_cast<IntCast>(fn(a.toLong())));
}

}  // namespace kiln::number

// The `.int`, `.float`, `.int_float`, `.float_int` and `(Scalar a, Scalar b)`
// overloads of a binary operator. `int_fn` and `float_fn` name its two
// computations (functions or overload sets); mixed operands use `float_fn`,
// as C++ converts the int to double. `scalar_overload` is "" or
// ".Scalar_Scalar", as PyTorch names the Scalar form of this operator. Any
// further arguments complete the `.int` overload's declaration
// (`.fold(folds::mulByOne)`).
#define KILN_NUMBER_BINARY_OPS(name, scalar_overload, int_result, float_result, scalar_result, int_fn, float_fn, ...) \
  KILN_NUMBER_INT_FLOAT_OPS(name, ".int", ".float", int_result, float_result, int_fn, float_fn, __VA_ARGS__),         \
      KILN_NUMBER_MIXED_OPS(name, float_result, float_fn),                                                            \
      KILN_NUMBER_SCALAR_OP(name scalar_overload, scalar_result, int_fn, float_fn)

// `name<int_overload>(int a, int b)` and `name<float_overload>(float a, float b)`;
// further arguments complete the int overload's declaration.
#define KILN_NUMBER_INT_FLOAT_OPS(name, int_overload, float_overload, int_result, float_result, int_fn, float_fn, ...) \
  ::kiln::op(name int_overload "(int a, int b) -> " int_result, [](int64_t a, int64_t b) { return int_fn(a, b); })     \
      __VA_ARGS__,                                                                                                     \
      ::kiln::op(name float_overload "(float a, float b) -> " float_result,                                            \
                 [](double a, double b) { return float_fn(a, b); })

// `name.int_float(int a, float b)` and `name.float_int(float a, int b)`.
#define KILN_NUMBER_MIXED_OPS(name, result, float_fn)                                  \
  ::kiln::op(name ".int_float(int a, float b) -> " result,                             \
             [](int64_t a, double b) { return float_fn(static_cast<double>(a), b); }), \
      ::kiln::op(name ".float_int(float a, int b) -> " result,                         \
                 [](double a, int64_t b) { return float_fn(a, static_cast<double>(b)); })

// `qualified_name(Scalar a, Scalar b)`.
#define KILN_NUMBER_SCALAR_OP(qualified_name, result, int_fn, float_fn)                                              \
  ::kiln::op(qualified_name "(Scalar a, Scalar b) -> " result, [](const Scalar& a, const Scalar& b) {                \
    return ::kiln::number::onNumbers(                                                                                \
        a, b, [](int64_t x, int64_t y) { return int_fn(x, y); }, [](double x, double y) { return float_fn(x, y); }); \
  })

// `name.int(int a)`, `name.float(float a)` and `name.Scalar(Scalar a) -> Scalar`
// of a unary function `fn` (an overload set taking int64_t and double); the
// Scalar form casts the result to `int_cast` or `float_cast`, as PyTorch does.
// Further arguments complete the `.int` overload's declaration.
#define KILN_NUMBER_UNARY_OPS(name, int_result, float_result, int_cast, float_cast, fn, ...)    \
  ::kiln::op(name ".int(int a) -> " int_result, [](int64_t a) { return fn(a); }) __VA_ARGS__,   \
      ::kiln::op(name ".float(float a) -> " float_result, [](double a) { return fn(a); }),      \
      ::kiln::op(name ".Scalar(Scalar a) -> Scalar", [](const Scalar& a) {                      \
        return ::kiln::number::onNumber<int_cast, float_cast>(a, [](auto x) { return fn(x); }); \
      })
