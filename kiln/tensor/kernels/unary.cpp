// Unary pointwise kernels. The floating-point ops compute each element with
// the helpers of kernel_math.h, the header generated kernels open with, so an
// op gives the same bits eagerly and fused; the transcendental functions
// there are kiln's vector math (vector_math.h), the same in vector loops and
// in single elements. The loops are plain scalar code that the compiler
// vectorizes where runs are contiguous.
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <type_traits>

#include "kiln/tensor/complex.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/kernel_math.h"
#include "kiln/tensor/kernels/loops.h"
#include "kiln/tensor/pointwise.h"

namespace kiln {

namespace {

// An op computed by its kernel_math.h helper.
#define KILN_ELEMENT_MATH_OP(Op, expr) \
  struct Op {                          \
    template <typename T>              \
    static T apply(T x) {              \
      return expr;                     \
    }                                  \
  };

KILN_ELEMENT_MATH_OP(Exp, m_exp(x))
KILN_ELEMENT_MATH_OP(Log, m_log(x))
KILN_ELEMENT_MATH_OP(Log10, m_log10(x))
KILN_ELEMENT_MATH_OP(Log1p, m_log1p(x))
KILN_ELEMENT_MATH_OP(Expm1, m_expm1(x))
KILN_ELEMENT_MATH_OP(Sin, m_sin(x))
KILN_ELEMENT_MATH_OP(Cos, m_cos(x))
KILN_ELEMENT_MATH_OP(Tan, m_tan(x))
KILN_ELEMENT_MATH_OP(Asin, m_asin(x))
KILN_ELEMENT_MATH_OP(Acos, m_acos(x))
KILN_ELEMENT_MATH_OP(Atan, m_atan(x))
KILN_ELEMENT_MATH_OP(Atanh, m_atanh(x))
KILN_ELEMENT_MATH_OP(Asinh, m_asinh(x))
KILN_ELEMENT_MATH_OP(Acosh, m_acosh(x))
KILN_ELEMENT_MATH_OP(Sinh, k_sinh(x))
KILN_ELEMENT_MATH_OP(Cosh, k_cosh(x))
KILN_ELEMENT_MATH_OP(Tanh, k_tanh(x))
KILN_ELEMENT_MATH_OP(Sigmoid, k_sigmoid(x))
KILN_ELEMENT_MATH_OP(Erf, m_erf(x))
KILN_ELEMENT_MATH_OP(Erfc, m_erfc(x))
KILN_ELEMENT_MATH_OP(Lgamma, m_lgamma(x))
KILN_ELEMENT_MATH_OP(Sqrt, m_sqrt(x))
KILN_ELEMENT_MATH_OP(Rsqrt, T(1) / m_sqrt(x))
KILN_ELEMENT_MATH_OP(Reciprocal, T(1) / x)
KILN_ELEMENT_MATH_OP(GeluErf, k_gelu_erf(x))
KILN_ELEMENT_MATH_OP(GeluTanh, k_gelu_tanh(x))
// The argument of a real number: pi for x < 0, else 0 (-0 included); NaN stays NaN.
KILN_ELEMENT_MATH_OP(Angle, x != x ? x : (x < T(0) ? std::numbers::pi_v<T> : T(0)))
#undef KILN_ELEMENT_MATH_OP

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
};

template <typename Op>
void floatKernel(TensorIter& iter, const char* name) {
  if (isComplexType(iter.computeDtype())) return complexUnaryKernel(iter, name);
  KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), name, [&] {
    kernels::cpuKernel<scalar_t, scalar_t>(iter, [](scalar_t x) { return Op::apply(x); });
  });
}

// Rounding leaves integers as they are.
template <typename Op>
void roundingKernel(TensorIter& iter, const char* name) {
  if (isFloatingType(iter.computeDtype())) return floatKernel<Op>(iter, name);
  KILN_DISPATCH_INTEGRAL_TYPES(iter.computeDtype(), name,
                               [&] { kernels::cpuKernel<scalar_t, scalar_t>(iter, [](scalar_t x) { return x; }); });
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
  if (isComplexType(iter.computeDtype())) return complexUnaryKernel(iter, "neg");
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
  Tensor fn(const Tensor& self) {                                       \
    prologue;                                                           \
    return unaryOp(name, self, Tensor(), kind, kernel);                 \
  }                                                                     \
  Tensor& fn##Out(const Tensor& self, Tensor& out) {                    \
    prologue;                                                           \
    unaryOp(name, self, out, kind, kernel);                             \
    return out;                                                         \
  }
// Defines fn, fn_ and fnOut.
#define KILN_UNARY_FORMS(fn, name, kind, prologue, kernel)        \
  KILN_UNARY_FUNCTIONAL_AND_OUT(fn, name, kind, prologue, kernel) \
  Tensor& fn##_(Tensor& self) {                                   \
    prologue;                                                     \
    unaryOp(name "_", self, self, kind, kernel);                  \
    return self;                                                  \
  }

#define KILN_FLOAT_UNARY(fn, name, Op) \
  KILN_UNARY_FORMS(fn, name, UnaryKind::Float, (void)0, [](TensorIter& iter) { floatKernel<Op>(iter, name); })
#define KILN_ROUNDING_UNARY(fn, name, mode)                                                                  \
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
// angle and abs of a complex tensor are real: they have their own kernels (complex.h).
Tensor angle(const Tensor& self) {
  if (self.defined() && isComplexType(self.dtype())) return complexAngle(self);
  return unaryOp("angle", self, Tensor(), UnaryKind::Float,
                 [](TensorIter& iter) { floatKernel<Angle>(iter, "angle"); });
}
Tensor& angleOut(const Tensor& self, Tensor& out) {
  if (self.defined() && isComplexType(self.dtype())) return copy_(out, complexAngle(self));
  unaryOp("angle", self, out, UnaryKind::Float, [](TensorIter& iter) { floatKernel<Angle>(iter, "angle"); });
  return out;
}

KILN_ROUNDING_UNARY(floor, "floor", Rounding::Floor)
KILN_ROUNDING_UNARY(ceil, "ceil", Rounding::Ceil)
KILN_ROUNDING_UNARY(trunc, "trunc", Rounding::Trunc)
KILN_ROUNDING_UNARY(round, "round", Rounding::HalfEven)

KILN_UNARY_FORMS(neg, "neg", UnaryKind::Same, checkNotBool(self, kNegBool), negKernel)
Tensor abs(const Tensor& self) {
  if (self.defined() && isComplexType(self.dtype())) return complexAbs(self);
  checkNotBool(self, "\"abs\" not implemented for 'Bool'");
  return unaryOp("abs", self, Tensor(), UnaryKind::Same, absKernel);
}
Tensor& absOut(const Tensor& self, Tensor& out) {
  if (self.defined() && isComplexType(self.dtype())) return copy_(out, complexAbs(self));
  checkNotBool(self, "\"abs\" not implemented for 'Bool'");
  unaryOp("abs", self, out, UnaryKind::Same, absKernel);
  return out;
}
Tensor& abs_(Tensor& self) {
  KILN_CHECK(!self.defined() || !isComplexType(self.dtype()), "In-place abs is not supported for complex tensors.");
  checkNotBool(self, "\"abs\" not implemented for 'Bool'");
  unaryOp("abs_", self, self, UnaryKind::Same, absKernel);
  return self;
}
KILN_UNARY_FORMS(sign, "sign", UnaryKind::Same, (void)0, signKernel)
KILN_UNARY_FORMS(relu, "relu", UnaryKind::SameAnyOut, checkNotBool(self, "Boolean inputs not supported for relu"),
                 reluKernel)
KILN_UNARY_FORMS(bitwiseNot, "bitwise_not", UnaryKind::Same, (void)0, bitwiseNotKernel)
KILN_UNARY_FORMS(logicalNot, "logical_not", UnaryKind::Bool, (void)0, logicalNotKernel)

// The class tests. Comparisons with inf vectorize where std::isinf would not.
#define KILN_CLASSIFY(name, kind, integral_value, expr)                                \
  KILN_UNARY_FUNCTIONAL_AND_OUT(name, #name, kind, (void)0, [](TensorIter& iter) {     \
    classifyKernel(iter, #name, integral_value, []<typename T>(T x) { return expr; }); \
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

// The forms of k_pow_scalar (kernel_math.h), each in its own loop.
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
      kernels::cpuKernel<T, T>(iter, [e](T x) { return m_pow(x, static_cast<T>(e)); });
    }
  });
}

// PyTorch's complex pow with a number exponent: 0 and 1 give ones and a
// copy, 0.5, -0.5 and -1 take sqrt, rsqrt and reciprocal, 2, 3 and -2
// multiply, anything else is std::pow.
void powComplexKernel(TensorIter& iter, const Scalar& exponent) {
  const std::complex<double> e = exponent.toComplexDouble();
  if (e == 0.5 || e == -0.5 || e == -1.0) {
    return complexUnaryKernel(iter, e == 0.5 ? "sqrt" : e == -0.5 ? "rsqrt" : "reciprocal");
  }
  KILN_DISPATCH_COMPLEX_TYPES(iter.computeDtype(), "pow", [&] {
    using T = scalar_t;
    if (e == 0.0) {
      kernels::cpuKernel<T, T>(iter, [](T) { return T(1); });
    } else if (e == 1.0) {
      kernels::cpuKernel<T, T>(iter, [](T x) { return x; });
    } else if (e == 2.0) {
      kernels::cpuKernel<T, T>(iter, [](T x) { return x * x; });
    } else if (e == 3.0) {
      kernels::cpuKernel<T, T>(iter, [](T x) { return x * x * x; });
    } else if (e == -2.0) {
      kernels::cpuKernel<T, T>(iter, [](T x) { return T(1) / (x * x); });
    } else {
      kernels::cpuKernel<T, T>(iter, [c = T(e)](T x) { return std::pow(x, c); });
    }
  });
}

Tensor powScalarOp(const char* name, const Tensor& self, const Scalar& exponent, const Tensor& out) {
  KILN_CHECK(self.defined(), name, ": expected a defined tensor");
  KILN_CHECK(!(isIntegralType(self.dtype(), true) && exponent.isIntegral() && exponent.toLong() < 0),
             "Integers to negative integer powers are not allowed.");
  const ScalarType dtype = resultType(self, exponent);
  // PyTorch computes pow with a number exponent directly in the output's dtype.
  kernels::checkExactOutDtype(out, dtype, name);
  if (isComplexType(dtype)) {
    TensorIter iter(name);
    iter.addOutput(out).addInput(self).computeDtype(dtype).build();
    powComplexKernel(iter, exponent);
    return iter.output();
  }
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
