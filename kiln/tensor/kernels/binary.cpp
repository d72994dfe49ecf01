// Binary pointwise kernels: arithmetic, division and its rounding modes,
// powers, comparisons, logical and bitwise ops.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>

#include "kiln/tensor/kernels/kernel_math.h"
#include "kiln/tensor/kernels/loops.h"
#include "kiln/tensor/pointwise.h"

namespace kiln {

namespace {

// How an op's inputs and result are typed.
struct BinarySpec {
  bool int_to_float = false;  // integer and bool inputs compute in float32 (true division)
  bool bool_result = false;   // the result is bool (comparisons, logical ops)
  bool cast_out = true;       // out= must be able to hold the result; false: any dtype, converted
};

constexpr BinarySpec kArithmetic{};
constexpr BinarySpec kTrueDivision{.int_to_float = true};
constexpr BinarySpec kPredicate{.bool_result = true};

// Builds the iterator for out = f(self, other), runs `kernel` and returns the result tensor.
template <typename Kernel>
Tensor binaryOp(const char* name, const Tensor& self, const Tensor& other, const Tensor& out, BinarySpec spec,
                const Kernel& kernel) {
  KILN_CHECK(self.defined() && other.defined(), name, ": expected defined tensors");
  TensorIter iter(name);
  iter.addOutput(out)
      .addInput(self)
      .addInput(other)
      .promoteIntegerToFloat(spec.int_to_float)
      .checkOutputCast(spec.cast_out);
  if (spec.bool_result) iter.outputDtype(ScalarType::Bool);
  iter.build();
  kernel(iter);
  return iter.output();
}

// Wrapping negation (-INT_MIN is INT_MIN, as in two's complement hardware).
template <typename T>
T wrappingNeg(T x) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U(0) - U(x));
}

[[noreturn]] void throwZeroDivision(const char* op) {
  KILN_ERROR("ZeroDivisionError: integer division by zero in ", op);
}

// Complex tensors: plain loops over std::complex, the same arithmetic as
// c10::complex (PyTorch's scalar path).
template <typename F>
bool complexKernel(TensorIter& iter, const F& f) {
  if (!isComplexType(iter.computeDtype())) return false;
  KILN_DISPATCH_COMPLEX_TYPES(iter.computeDtype(), "complex", [&] {
    kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, f.template operator()<scalar_t>());
  });
  return true;
}

void addKernel(TensorIter& iter, const Scalar& alpha) {
  if (complexKernel(iter, [&]<typename T>() {
        const T a = alpha.to<T>();
        return [a](T x, T y) { return x + a * y; };
      })) {
    return;
  }
  KILN_CHECK(isFloatingType(iter.computeDtype()) || !alpha.isFloatingPoint(),
             "For integral input tensors, argument alpha must not be a floating point number.");
  KILN_CHECK(!alpha.isBoolean() || iter.computeDtype() == ScalarType::Bool,
             "Boolean alpha only supported for Boolean results.");
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.computeDtype(), "add", [&] {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      bool a = alpha.toBool();
      kernels::cpuKernel<bool, bool, bool>(iter, [a](bool x, bool y) { return x || (a && y); });
    } else {
      const scalar_t a = kernels::checkedScalarTo<scalar_t>(alpha, "add");
      // k_add's x + a * y, which is x + y for a == 1 (the product is exact).
      if (a == scalar_t(1)) {
        kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(
            iter, [](scalar_t x, scalar_t y) { return k_add(x, y, scalar_t(1)); });
      } else {
        kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [a](scalar_t x, scalar_t y) { return k_add(x, y, a); });
      }
    }
  });
}

void checkSubtractable(const Tensor& self, const Tensor& other) {
  KILN_CHECK(self.defined() && other.defined(), "sub: expected defined tensors");
  KILN_CHECK(self.dtype() != ScalarType::Bool || other.dtype() != ScalarType::Bool,
             "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
             "`logical_xor()` operator instead.");
  KILN_CHECK(self.dtype() != ScalarType::Bool && other.dtype() != ScalarType::Bool,
             "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
             "mask, use the `~` or `logical_not()` operator instead.");
}

void mulKernel(TensorIter& iter) {
  if (complexKernel(iter, []<typename T>() { return [](T x, T y) { return x * y; }; })) return;
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.computeDtype(), "mul", [&] {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      kernels::cpuKernel<bool, bool, bool>(iter, [](bool x, bool y) { return x && y; });
    } else {
      kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [](scalar_t x, scalar_t y) { return k_mul(x, y); });
    }
  });
}

void trueDivKernel(TensorIter& iter) {
  if (complexKernel(iter, []<typename T>() { return [](T x, T y) { return x / y; }; })) return;
  KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), "div", [&] {
    kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [](scalar_t x, scalar_t y) { return x / y; });
  });
}

// Integer floor and trunc division; b != 0. Division by -1 negates, wrapping
// (INT_MIN / -1 traps in hardware).
template <typename T>
T floorDivInt(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wrappingNeg(a);
    if ((a < 0) != (b < 0)) {
      const T quot = static_cast<T>(a / b);
      return static_cast<T>(a % b != 0 ? quot - 1 : quot);
    }
  }
  return static_cast<T>(a / b);
}

template <typename T>
T truncDivInt(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return wrappingNeg(a);
  }
  return static_cast<T>(a / b);
}

// Integer forms (floats go through the FloatOp structs below).
// Python's %: the result takes the divisor's sign.
template <typename T>
T remainderValue(T a, T b) {
  if (b == 0) throwZeroDivision("remainder");
  // INT_MIN % -1 traps in hardware; every remainder by -1 is 0.
  if (std::is_signed_v<T> && b == T(-1)) return T(0);
  T r = static_cast<T>(a % b);
  if (r != 0 && (r < 0) != (b < 0)) r = static_cast<T>(r + b);
  return r;
}

// C's fmod: the result takes the dividend's sign.
template <typename T>
T fmodValue(T a, T b) {
  if (b == 0) throwZeroDivision("fmod");
  if (std::is_signed_v<T> && b == T(-1)) return T(0);
  return static_cast<T>(a % b);
}

// Integers: power by squaring, wrapping on overflow; negative exponents give
// 0 except for bases 1 and -1 (PyTorch's powi).
template <typename T>
T powValue(T base, T exponent) {
  if (std::is_signed_v<T> && exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent % 2) != 0 ? T(-1) : T(1);
    return 0;
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, b = static_cast<U>(base);
  for (auto e = exponent; e != 0; e = static_cast<T>(e / 2)) {
    if (e & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
  }
  return static_cast<T>(result);
}

// The float forms of the ops above: the helpers of kernel_math.h, which
// generated kernels compute with too.
#define KILN_ELEMENT_MATH_OP(Op, expr) \
  struct Op {                          \
    template <typename T>              \
    static T apply(T a, T b) {         \
      return expr;                     \
    }                                  \
  };
KILN_ELEMENT_MATH_OP(FloorDivide, k_floor_divide(a, b))
KILN_ELEMENT_MATH_OP(TruncDivide, m_trunc(a / b))
KILN_ELEMENT_MATH_OP(Remainder, k_remainder(a, b))
KILN_ELEMENT_MATH_OP(Fmod, m_fmod(a, b))
KILN_ELEMENT_MATH_OP(Pow, m_pow(a, b))
KILN_ELEMENT_MATH_OP(Atan2, m_atan2(a, b))
// The sign bit of b on the magnitude of a (NaN signs included).
KILN_ELEMENT_MATH_OP(Copysign, m_copysign(a, b))
#undef KILN_ELEMENT_MATH_OP

// float/double through FloatOp, integers
// through int_fn; bool is not supported.
template <typename FloatOp, typename IntFn>
void floatOrIntKernel(TensorIter& iter, const char* name, const IntFn& int_fn) {
  const ScalarType dtype = iter.computeDtype();
  if (isFloatingType(dtype)) {
    KILN_DISPATCH_FLOATING_TYPES(dtype, name, [&] {
      kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter,
                                                       [](scalar_t a, scalar_t b) { return FloatOp::apply(a, b); });
    });
  } else {
    KILN_DISPATCH_INTEGRAL_TYPES(dtype, name, [&] {
      kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [&](scalar_t a, scalar_t b) { return int_fn(a, b); });
    });
  }
}

void floorDivKernel(TensorIter& iter, const char* name) {
  floatOrIntKernel<FloorDivide>(iter, name, [name](auto a, auto b) {
    if (b == 0) throwZeroDivision(name);
    return floorDivInt(a, b);
  });
}

void truncDivKernel(TensorIter& iter, const char* name) {
  floatOrIntKernel<TruncDivide>(iter, name, [name](auto a, auto b) {
    if (b == 0) throwZeroDivision(name);
    return truncDivInt(a, b);
  });
}

void remainderKernel(TensorIter& iter) {
  floatOrIntKernel<Remainder>(iter, "remainder", [](auto a, auto b) { return remainderValue(a, b); });
}

void fmodKernel(TensorIter& iter) {
  floatOrIntKernel<Fmod>(iter, "fmod", [](auto a, auto b) { return fmodValue(a, b); });
}

void powKernel(TensorIter& iter) {
  if (complexKernel(iter, []<typename T>() { return [](T x, T y) { return std::pow(x, y); }; })) return;
  floatOrIntKernel<Pow>(iter, "pow", [](auto a, auto b) { return powValue(a, b); });
}

// A float-only op through FloatOp.
template <typename FloatOp>
void floatBinaryKernel(TensorIter& iter, const char* name) {
  KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), name, [&] {
    kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [](scalar_t a, scalar_t b) { return FloatOp::apply(a, b); });
  });
}

// Euclid's algorithm on |a| and |b|, as PyTorch runs it: |INT_MIN| stays
// INT_MIN, so gcd(INT_MIN, 0) is INT_MIN.
template <typename T>
T gcdValue(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    a = a < 0 ? wrappingNeg(a) : a;
    b = b < 0 ? wrappingNeg(b) : b;
  }
  while (a != 0) {
    const T divisor = a;
    // Every remainder by -1 is 0 (INT_MIN % -1 traps in hardware).
    a = (std::is_signed_v<T> && a == T(-1)) ? T(0) : static_cast<T>(b % a);
    b = divisor;
  }
  return b;
}

void gcdKernel(TensorIter& iter) {
  KILN_DISPATCH_INTEGRAL_TYPES(iter.computeDtype(), "gcd", [&] {
    kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [](scalar_t a, scalar_t b) { return gcdValue(a, b); });
  });
}

enum class Rounding { None, Trunc, Floor };

Rounding parseRoundingMode(const std::optional<std::string>& mode) {
  if (!mode) return Rounding::None;
  if (*mode == "trunc") return Rounding::Trunc;
  if (*mode == "floor") return Rounding::Floor;
  KILN_ERROR("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", *mode, "'");
}

Tensor divOp(const char* name, const Tensor& self, const Tensor& other, const std::optional<std::string>& mode,
             const Tensor& out) {
  switch (parseRoundingMode(mode)) {
    case Rounding::None: return binaryOp(name, self, other, out, kTrueDivision, trueDivKernel);
    case Rounding::Trunc:
      return binaryOp(name, self, other, out, kArithmetic, [name](TensorIter& iter) { truncDivKernel(iter, name); });
    case Rounding::Floor:
      return binaryOp(name, self, other, out, kArithmetic, [name](TensorIter& iter) { floorDivKernel(iter, name); });
  }
  return Tensor();
}

// maximum/minimum: NaN in either input gives NaN; bool is or/and.
template <bool IsMax>
void extremumKernel(TensorIter& iter) {
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.computeDtype(), IsMax ? "maximum" : "minimum", [&] {
    kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [](scalar_t a, scalar_t b) {
      const scalar_t extremum = IsMax ? std::max(a, b) : std::min(a, b);
      return kernels::select(a != a || b != b, std::numeric_limits<scalar_t>::quiet_NaN(), extremum);
    });
  });
}

// A bool-valued f(a, b) over the inputs' common dtype.
template <typename F>
void predicateKernel(TensorIter& iter, const char* name, const F& f) {
  if (isComplexType(iter.computeDtype())) {
    const bool eq = std::string_view(name).starts_with("eq");
    KILN_CHECK(eq || std::string_view(name).starts_with("ne"), name, ": not implemented for '",
               scalarTypeShortName(iter.computeDtype()), "'");
    KILN_DISPATCH_COMPLEX_TYPES(iter.computeDtype(), name, [&] {
      kernels::cpuKernel<bool, scalar_t, scalar_t>(iter, [eq](scalar_t a, scalar_t b) { return (a == b) == eq; });
    });
    return;
  }
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.computeDtype(), name, [&] {
    kernels::cpuKernel<bool, scalar_t, scalar_t>(iter, [&](scalar_t a, scalar_t b) -> bool { return f(a, b); });
  });
}

// An integer-or-bool op with the result in the inputs' common dtype.
template <typename F>
void bitwiseKernel(TensorIter& iter, const char* name, const F& f) {
  KILN_DISPATCH_INTEGRAL_TYPES_AND_BOOL(iter.computeDtype(), name, [&] {
    kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(
        iter, [&](scalar_t a, scalar_t b) { return static_cast<scalar_t>(f(a, b)); });
  });
}

// Shift counts are taken modulo the width of the promoted operand, as the
// hardware (and PyTorch's scalar loop) does, so no count is undefined.
template <bool Left>
void shiftKernel(TensorIter& iter, const char* name) {
  KILN_DISPATCH_INTEGRAL_TYPES(iter.computeDtype(), name, [&] {
    kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [](scalar_t a, scalar_t b) {
      using Promoted = decltype(+a);
      using U = std::make_unsigned_t<Promoted>;
      const int count = static_cast<int>(b) & static_cast<int>(sizeof(Promoted) * 8 - 1);
      if constexpr (Left) {
        return static_cast<scalar_t>(static_cast<U>(static_cast<std::make_unsigned_t<scalar_t>>(a)) << count);
      } else {
        return static_cast<scalar_t>(static_cast<Promoted>(a) >> count);
      }
    });
  });
}

}  // namespace

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return binaryOp("add", self, other, Tensor(), kArithmetic, [&](TensorIter& iter) { addKernel(iter, alpha); });
}

Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  binaryOp("add_", self, other, self, kArithmetic, [&](TensorIter& iter) { addKernel(iter, alpha); });
  return self;
}

Tensor& addOut(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  binaryOp("add", self, other, out, kArithmetic, [&](TensorIter& iter) { addKernel(iter, alpha); });
  return out;
}

Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  checkSubtractable(self, other);
  return binaryOp("sub", self, other, Tensor(), kArithmetic, [&](TensorIter& iter) { addKernel(iter, -alpha); });
}

Tensor& sub_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  checkSubtractable(self, other);
  binaryOp("sub_", self, other, self, kArithmetic, [&](TensorIter& iter) { addKernel(iter, -alpha); });
  return self;
}

Tensor& subOut(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  checkSubtractable(self, other);
  binaryOp("sub", self, other, out, kArithmetic, [&](TensorIter& iter) { addKernel(iter, -alpha); });
  return out;
}

Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha) { return sub(other, self, alpha); }

Tensor& rsubOut(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  checkSubtractable(self, other);
  BinarySpec spec;
  spec.cast_out = false;
  binaryOp("rsub", other, self, out, spec, [&](TensorIter& iter) { addKernel(iter, -alpha); });
  return out;
}

Tensor div(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode) {
  return divOp("div", self, other, rounding_mode, Tensor());
}

Tensor& div_(Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode) {
  divOp("div_", self, other, rounding_mode, self);
  return self;
}

Tensor& divOut(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode, Tensor& out) {
  divOp("div", self, other, rounding_mode, out);
  return out;
}

// Defines fn, fn_ and fnOut over binaryOp.
#define KILN_BINARY_FORMS(fn, name, spec, kernel)                                                                    \
  Tensor fn(const Tensor& self, const Tensor& other) { return binaryOp(name, self, other, Tensor(), spec, kernel); } \
  Tensor& fn##_(Tensor& self, const Tensor& other) {                                                                 \
    binaryOp(name "_", self, other, self, spec, kernel);                                                             \
    return self;                                                                                                     \
  }                                                                                                                  \
  Tensor& fn##Out(const Tensor& self, const Tensor& other, Tensor& out) {                                            \
    binaryOp(name, self, other, out, spec, kernel);                                                                  \
    return out;                                                                                                      \
  }

#define KILN_PREDICATE_FORMS(fn, name, expr) \
  KILN_BINARY_FORMS(fn, name, kPredicate,    \
                    [](TensorIter& iter) { predicateKernel(iter, name, [](auto a, auto b) { return expr; }); })
#define KILN_BITWISE_FORMS(fn, name, expr) \
  KILN_BINARY_FORMS(fn, name, kArithmetic, \
                    [](TensorIter& iter) { bitwiseKernel(iter, name, [](auto a, auto b) { return expr; }); })

KILN_BINARY_FORMS(mul, "mul", kArithmetic, mulKernel)
KILN_BINARY_FORMS(floorDivide, "floor_divide", kArithmetic,
                  [](TensorIter& iter) { floorDivKernel(iter, "floor_divide"); })
KILN_BINARY_FORMS(remainder, "remainder", kArithmetic, remainderKernel)
KILN_BINARY_FORMS(fmod, "fmod", kArithmetic, fmodKernel)
KILN_BINARY_FORMS(pow, "pow", kArithmetic, powKernel)
KILN_BINARY_FORMS(atan2, "atan2", kTrueDivision, [](TensorIter& iter) { floatBinaryKernel<Atan2>(iter, "atan2"); })
KILN_BINARY_FORMS(copysign, "copysign", kTrueDivision,
                  [](TensorIter& iter) { floatBinaryKernel<Copysign>(iter, "copysign"); })
KILN_BINARY_FORMS(gcd, "gcd", kArithmetic, gcdKernel)
KILN_BINARY_FORMS(maximum, "maximum", kArithmetic, extremumKernel<true>)
KILN_BINARY_FORMS(minimum, "minimum", kArithmetic, extremumKernel<false>)
KILN_PREDICATE_FORMS(eq, "eq", a == b)
KILN_PREDICATE_FORMS(ne, "ne", a != b)
KILN_PREDICATE_FORMS(lt, "lt", a < b)
KILN_PREDICATE_FORMS(le, "le", a <= b)
KILN_PREDICATE_FORMS(gt, "gt", a > b)
KILN_PREDICATE_FORMS(ge, "ge", a >= b)
KILN_PREDICATE_FORMS(logicalAnd, "logical_and", static_cast<bool>(a) && static_cast<bool>(b))
KILN_PREDICATE_FORMS(logicalOr, "logical_or", static_cast<bool>(a) || static_cast<bool>(b))
KILN_PREDICATE_FORMS(logicalXor, "logical_xor", static_cast<bool>(a) != static_cast<bool>(b))
// clang-format reads `a & b` as a declaration of a reference.
// clang-format off
KILN_BITWISE_FORMS(bitwiseAnd, "bitwise_and", a & b)
KILN_BITWISE_FORMS(bitwiseOr, "bitwise_or", a | b)
KILN_BITWISE_FORMS(bitwiseXor, "bitwise_xor", a ^ b)
// clang-format on
KILN_BINARY_FORMS(bitwiseLeftShift, "bitwise_left_shift", kArithmetic,
                  [](TensorIter& iter) { shiftKernel<true>(iter, "bitwise_left_shift"); })
KILN_BINARY_FORMS(bitwiseRightShift, "bitwise_right_shift", kArithmetic,
                  [](TensorIter& iter) { shiftKernel<false>(iter, "bitwise_right_shift"); })

#undef KILN_BITWISE_FORMS
#undef KILN_PREDICATE_FORMS
#undef KILN_BINARY_FORMS

namespace {

Tensor powScalarBaseOp(const Scalar& self, const Tensor& exponent, const Tensor& out) {
  KILN_CHECK(exponent.defined(), "pow: expected a defined exponent");
  const Tensor base = scalarToTensor(self);
  // 1 ** anything is 1, NaN included (True is not 1 here, as in PyTorch).
  if (self.isBoolean() || !self.equal(Scalar(1))) return binaryOp("pow", base, exponent, out, kArithmetic, powKernel);
  // PyTorch fills out= with ones whatever its dtype.
  TensorIter iter("pow");
  iter.addOutput(out).addInput(exponent).computeDtype(resultType(base, exponent)).checkOutputCast(false).build();
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.computeDtype(), "pow", [&] {
    kernels::cpuKernel<scalar_t, scalar_t>(iter, [](scalar_t) { return scalar_t(1); });
  });
  return iter.output();
}

}  // namespace

Tensor pow(const Scalar& self, const Tensor& exponent) { return powScalarBaseOp(self, exponent, Tensor()); }

Tensor& powOut(const Scalar& self, const Tensor& exponent, Tensor& out) {
  powScalarBaseOp(self, exponent, out);
  return out;
}

// PyTorch's definition, two ops: the power's dtype (float32 for integer
// exponents) takes part in the product's promotion.
Tensor ldexp(const Tensor& self, const Tensor& other) { return mul(self, pow(Scalar(2.0), other)); }

Tensor& ldexp_(Tensor& self, const Tensor& other) { return mul_(self, pow(Scalar(2.0), other)); }

Tensor& ldexpOut(const Tensor& self, const Tensor& other, Tensor& out) {
  return mulOut(self, pow(Scalar(2.0), other), out);
}

}  // namespace kiln
