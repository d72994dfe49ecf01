// The fuser's op table. Each row follows what kiln's own kernel does for the
// op (kiln/tensor/kernels/*.cpp): the same promotion, the same arithmetic in
// the same type, and a `check` for every dtype or argument value on which
// that kernel raises, since a generated kernel cannot raise.
#include "kiln/fuser/fusible_ops.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <unordered_map>

#include "kiln/core/function_schema.h"
#include "kiln/core/operator.h"
#include "kiln/ir/graph.h"
#include "kiln/util/jit_log.h"

namespace kiln::fuser::detail {

namespace {

template <typename T>
std::pair<double, double> limitsOf() {
  return {static_cast<double>(std::numeric_limits<T>::lowest()), static_cast<double>(std::numeric_limits<T>::max())};
}

// kiln's checkedScalarTo<T>: whether the number `v` converts to `t` without overflow.
bool constantFits(const IValue& v, ScalarType t) {
  std::pair<double, double> bounds;
  switch (t) {
    case ScalarType::Byte: bounds = limitsOf<uint8_t>(); break;
    case ScalarType::Char: bounds = limitsOf<int8_t>(); break;
    case ScalarType::Short: bounds = limitsOf<int16_t>(); break;
    case ScalarType::Int: bounds = limitsOf<int32_t>(); break;
    case ScalarType::Long: bounds = limitsOf<int64_t>(); break;
    case ScalarType::Float: bounds = limitsOf<float>(); break;
    default: return true;  // bool takes anything, double holds every number
  }
  if (v.isDouble()) {
    const double d = v.toDouble();
    if (std::isinf(d) || std::isnan(d)) return isFloatingType(t);
    return d >= bounds.first && d <= bounds.second;
  }
  if (!v.isInt() || !isIntegralType(t, false) || t == ScalarType::Long) return true;
  const int64_t i = v.toInt();
  if (t == ScalarType::Byte) {
    // Unsigned: the magnitude must fit, whatever the sign.
    const uint64_t magnitude = i < 0 ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
    return magnitude <= static_cast<uint64_t>(bounds.second);
  }
  return static_cast<double>(i) >= bounds.first && static_cast<double>(i) <= bounds.second;
}

// Whether the number argument `s` converts to `t` as kiln's kernel converts
// it. A runtime number passes only when no value of its type could overflow.
bool numberFits(const ValueType& s, ScalarType t, const char* what, std::string* why) {
  if (s.isNone() || t == ScalarType::Bool || s.dtype == ScalarType::Bool) return true;
  bool fits;
  if (s.constant) {
    fits = constantFits(*s.constant, t);
  } else {
    fits = s.dtype == ScalarType::Double ? t == ScalarType::Double : (t == ScalarType::Long || isFloatingType(t));
  }
  return fits || refuse(why, std::string(what) + " may not fit " + std::string(scalarTypeName(t)) + ", which raises");
}

// add (and, with alpha negated, sub): kiln's addKernel rejects a float
// alpha with an integral result and a bool alpha with a non-bool one, and
// range-checks alpha.
bool checkAlphaValue(const ValueType& alpha, ScalarType compute, std::string* why) {
  if (alpha.dtype == ScalarType::Double && !isFloatingType(compute))
    return refuse(why, "a float alpha with an integral result raises");
  if (alpha.dtype == ScalarType::Bool && compute != ScalarType::Bool)
    return refuse(why, "a bool alpha with a non-bool result raises");
  return numberFits(alpha, compute, "alpha", why);
}

bool checkAlpha(const OpTyping& t, std::string* why) { return checkAlphaValue(t.arg("alpha"), t.compute, why); }

// sub is add with -alpha (a negated bool stays a bool, which raises); bool operands raise.
bool checkSubtract(const OpTyping& t, std::string* why) {
  if (t.arg("self").dtype == ScalarType::Bool || t.arg("other").dtype == ScalarType::Bool)
    return refuse(why, "subtraction with a bool operand raises");
  ValueType negated = t.arg("alpha");
  if (negated.constant) {
    const IValue& v = *negated.constant;
    negated.constant = v.isDouble() ? IValue(-v.toDouble())
                                    : IValue(static_cast<int64_t>(0 - static_cast<uint64_t>(v.isBool() ? v.toBool() : v.toInt())));
  }
  return checkAlphaValue(negated, t.compute, why);
}

std::optional<std::string> roundingMode(const OpTyping& t) {
  const ValueType& mode = t.arg("rounding_mode");
  if (mode.isNone()) return std::nullopt;
  return mode.constant->toStringRef();
}

bool checkDivMode(const OpTyping& t, std::string* why) {
  const auto mode = roundingMode(t);
  if (mode && *mode != "trunc" && *mode != "floor") return refuse(why, "an unknown rounding_mode raises");
  if (mode && !isFloatingType(t.compute)) return refuse(why, "integer division raises on a zero divisor");
  return true;
}

std::string emitDivMode(const OpTyping& t) {
  const auto mode = roundingMode(t);
  const std::string& a = t.expr("self");
  const std::string& b = t.expr("other");
  if (!mode) return a + " / " + b;
  if (*mode == "trunc") return "m_trunc(" + a + " / " + b + ")";
  return "k_floor_divide(" + a + ", " + b + ")";
}

// pow with a number exponent: integer results only for a constant exponent
// kiln accepts (non-negative, in range).
bool checkPowScalar(const OpTyping& t, std::string* why) {
  if (isFloatingType(t.compute)) return true;
  const ValueType& e = t.arg("exponent");
  if (!e.constant) return refuse(why, "an integer power with a runtime exponent may raise");
  if (!e.constant->isBool() && e.constant->toInt() < 0)
    return refuse(why, "integers to negative integer powers raise");
  return numberFits(e, t.compute, "exponent", why);
}

std::string emitPowScalar(const OpTyping& t) {
  const std::string& x = t.expr("self");
  if (!isFloatingType(t.compute)) return "k_powi(" + x + ", " + t.expr("exponent") + ")";
  // The exponent is compared as a double (kiln picks sqrt, x*x, ... by it).
  const ValueType& e = t.arg("exponent");
  const std::string exponent = e.constant ? cppLiteral(e.constant->toDouble()) : "(double)" + t.raw("exponent");
  return "k_pow_scalar(" + x + ", " + exponent + ")";
}

bool checkClampScalar(const OpTyping& t, std::string* why) {
  const ValueType& lo = t.arg("min");
  const ValueType& hi = t.arg("max");
  if (lo.isNone() && hi.isNone()) return refuse(why, "clamp without bounds raises");
  return numberFits(lo, t.compute, "min", why) && numberFits(hi, t.compute, "max", why);
}

std::string emitClampScalar(const OpTyping& t) {
  const std::string& x = t.expr("self");
  if (t.arg("max").isNone()) return "k_at_least(" + x + ", " + t.expr("min") + ")";
  if (t.arg("min").isNone()) return "k_at_most(" + x + ", " + t.expr("max") + ")";
  return "k_clamp(" + x + ", " + t.expr("min") + ", " + t.expr("max") + ")";
}

// clamp with tensor bounds: one bound is maximum/minimum (bool allowed),
// both go through kiln's clamp kernel (no bool).
bool checkClampTensor(const OpTyping& t, std::string* why) {
  const bool has_min = !t.arg("min").isNone(), has_max = !t.arg("max").isNone();
  if (!has_min && !has_max) return refuse(why, "clamp without bounds raises");
  if (has_min && has_max && t.compute == ScalarType::Bool) return refuse(why, "clamp of bool raises");
  return true;
}

std::string emitClampTensor(const OpTyping& t) {
  const std::string& x = t.expr("self");
  if (t.arg("max").isNone()) return "k_maximum(" + x + ", " + t.expr("min") + ")";
  if (t.arg("min").isNone()) return "k_minimum(" + x + ", " + t.expr("max") + ")";
  return "k_clamp(" + x + ", " + t.expr("min") + ", " + t.expr("max") + ")";
}

bool checkClampMin(const OpTyping& t, std::string* why) { return numberFits(t.arg("min"), t.compute, "min", why); }
bool checkClampMax(const OpTyping& t, std::string* why) { return numberFits(t.arg("max"), t.compute, "max", why); }

bool checkLerpScalar(const OpTyping& t, std::string* why) {
  if (t.arg("self").dtype != t.arg("end").dtype) return refuse(why, "lerp with different dtypes raises");
  return numberFits(t.arg("weight"), t.compute, "weight", why);
}

bool checkLerpTensor(const OpTyping& t, std::string* why) {
  const ScalarType dtype = t.arg("self").dtype;
  if (t.arg("end").dtype != dtype || t.arg("weight").dtype != dtype)
    return refuse(why, "lerp with different dtypes raises");
  return true;
}

bool checkAddcmul(const OpTyping& t, std::string* why) { return numberFits(t.arg("value"), t.compute, "value", why); }

bool checkAddcdiv(const OpTyping& t, std::string* why) {
  if (isIntegralType(t.arg("tensor1").dtype, true) && isIntegralType(t.arg("tensor2").dtype, true))
    return refuse(why, "addcdiv of integer tensors raises");
  return checkAddcmul(t, why);
}

bool checkWhere(const OpTyping& t, std::string* why) {
  const ScalarType c = t.arg("condition").dtype;
  if (c != ScalarType::Bool && c != ScalarType::Byte) return refuse(why, "where with a non-bool condition raises");
  // kiln's where checks a number operand against the result dtype. A runtime
  // float into a float result is let through (where(c, x, y) with a float y
  // is common): the one number that raises there, beyond float32's range,
  // becomes inf in the fused kernel.
  for (const char* name : {"self", "other"}) {
    const ValueType& v = t.arg(name);
    if (v.kind != ValueType::Kind::Number) continue;
    const bool runtime_float = !v.constant && v.dtype == ScalarType::Double && isFloatingType(t.compute);
    if (!runtime_float && !numberFits(v, t.compute, name, why)) return false;
  }
  return true;
}

std::string approximation(const OpTyping& t) { return t.arg("approximate").constant->toStringRef(); }

bool checkGelu(const OpTyping& t, std::string* why) {
  const std::string a = approximation(t);
  return a == "none" || a == "tanh" || refuse(why, "gelu with an unknown approximation raises");
}

std::string emitGelu(const OpTyping& t) {
  return (approximation(t) == "tanh" ? "k_gelu_tanh(" : "k_gelu_erf(") + t.expr("self") + ")";
}

bool checkRoundDecimals(const OpTyping& t, std::string* why) {
  return t.arg("decimals").constant->isInt() || refuse(why, "round with non-int decimals");
}

// kiln scales by 10^|decimals| in the element type, rounds half to even, and scales back.
std::string emitRoundDecimals(const OpTyping& t) {
  const int64_t decimals = t.arg("decimals").constant->toInt();
  const std::string& x = t.expr("self");
  if (decimals == 0) return "m_nearbyint(" + x + ")";
  const double scale_value = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  const std::string scale = std::string("(") + cppType(t.compute) + ")" + cppLiteral(scale_value);
  if (decimals < 0) return "m_nearbyint(" + x + " / " + scale + ") * " + scale;
  return "m_nearbyint(" + x + " * " + scale + ") / " + scale;
}

// aten::to: only plain dtype conversions (no layout, device or memory format).
std::string emitCast(const OpTyping& t) { return castExpr(t.expr("self"), t.compute, t.result); }

bool checkTo(const OpTyping& t, std::string* why) {
  for (const char* name : {"layout", "device", "pin_memory", "memory_format"}) {
    const ValueType* arg = t.find(name);
    if (arg && !arg->isNone()) return refuse(why, std::string("aten::to with a ") + name + " argument");
  }
  return true;
}

// The unary ops kiln computes in float (integers and bool promote to float32).
#define KILN_FLOAT_UNARY(name, expr) {"aten::" name "(Tensor self) -> Tensor", TypeRule::PromoteFloat, DtypeSet::Floating, expr}
// The six comparisons: Tensor and Scalar forms.
#define KILN_COMPARISON(name, op)                                                                                   \
  {"aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor", TypeRule::Predicate, DtypeSet::All, "$self " op " $other"}, \
      {"aten::" name ".Scalar(Tensor self, Scalar other) -> Tensor", TypeRule::Predicate, DtypeSet::All, "$self " op " $other"}
// bitwise_and/or/xor and the dunder forms TorchScript's &, |, ^ call.
#define KILN_BITWISE(name, dunder, op)                                                                                    \
  {"aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor", TypeRule::Promote, DtypeSet::IntegralOrBool, "$self " op " $other"}, \
      {"aten::" name ".Scalar(Tensor self, Scalar other) -> Tensor", TypeRule::Promote, DtypeSet::IntegralOrBool, "$self " op " $other"}, \
      {"aten::" name ".Scalar_Tensor(Scalar self, Tensor other) -> Tensor", TypeRule::Promote, DtypeSet::IntegralOrBool,        \
       "$self " op " $other"},                                                                                           \
      {"aten::__" dunder "__.Tensor(Tensor self, Tensor other) -> Tensor", TypeRule::Promote, DtypeSet::IntegralOrBool,        \
       "$self " op " $other"},                                                                                           \
      {"aten::__" dunder "__.Scalar(Tensor self, Scalar other) -> Tensor", TypeRule::Promote, DtypeSet::IntegralOrBool,        \
       "$self " op " $other"}

const FusibleOp kFusibleOps[] = {
    // Arithmetic.
    {"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", TypeRule::Promote, DtypeSet::All,
     "k_add($self, $other, ($T)$alpha)", checkAlpha},
    {"aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", TypeRule::Promote, DtypeSet::All,
     "k_add($self, $other, ($T)$alpha)", checkAlpha},
    {"aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", TypeRule::Promote, DtypeSet::NoBool,
     "k_add($self, $other, ($T)(-$alpha))", checkSubtract},
    {"aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", TypeRule::Promote, DtypeSet::NoBool,
     "k_add($self, $other, ($T)(-$alpha))", checkSubtract},
    {"aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", TypeRule::Promote, DtypeSet::NoBool,
     "k_add($other, $self, ($T)(-$alpha))", checkSubtract},
    {"aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", TypeRule::Promote, DtypeSet::NoBool,
     "k_add($other, $self, ($T)(-$alpha))", checkSubtract},
    {"aten::mul.Tensor(Tensor self, Tensor other) -> Tensor", TypeRule::Promote, DtypeSet::All, "k_mul($self, $other)"},
    {"aten::mul.Scalar(Tensor self, Scalar other) -> Tensor", TypeRule::Promote, DtypeSet::All, "k_mul($self, $other)"},
    {"aten::div.Tensor(Tensor self, Tensor other) -> Tensor", TypeRule::PromoteFloat, DtypeSet::Floating,
     "$self / $other"},
    {"aten::div.Scalar(Tensor self, Scalar other) -> Tensor", TypeRule::PromoteFloat, DtypeSet::Floating,
     "$self / $other"},
    {"aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", TypeRule::Division,
     DtypeSet::All, nullptr, checkDivMode, emitDivMode},
    {"aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor", TypeRule::Division,
     DtypeSet::All, nullptr, checkDivMode, emitDivMode},
    {"aten::floor_divide(Tensor self, Tensor other) -> Tensor", TypeRule::Promote, DtypeSet::Floating,
     "k_floor_divide($self, $other)"},
    {"aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor", TypeRule::Promote, DtypeSet::Floating,
     "k_floor_divide($self, $other)"},
    // Integer remainders raise on a zero divisor: float only.
    {"aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor", TypeRule::Promote, DtypeSet::Floating,
     "k_remainder($self, $other)"},
    {"aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor", TypeRule::Promote, DtypeSet::Floating,
     "k_remainder($self, $other)"},
    {"aten::remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", TypeRule::Promote, DtypeSet::Floating,
     "k_remainder($self, $other)"},
    {"aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor", TypeRule::Promote, DtypeSet::Floating,
     "m_fmod($self, $other)"},
    {"aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor", TypeRule::Promote, DtypeSet::Floating,
     "m_fmod($self, $other)"},
    {"aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", TypeRule::Promote, DtypeSet::NoBool,
     "k_power($self, $exponent)"},
    {"aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", TypeRule::Promote, DtypeSet::NoBool, nullptr,
     checkPowScalar, emitPowScalar},
    {"aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor", TypeRule::Promote, DtypeSet::NoBool,
     "k_power($self, $exponent)"},
    {"aten::atan2(Tensor self, Tensor other) -> Tensor", TypeRule::PromoteFloat, DtypeSet::Floating,
     "m_atan2($self, $other)"},
    {"aten::maximum(Tensor self, Tensor other) -> Tensor", TypeRule::Promote, DtypeSet::All,
     "k_maximum($self, $other)"},
    {"aten::minimum(Tensor self, Tensor other) -> Tensor", TypeRule::Promote, DtypeSet::All,
     "k_minimum($self, $other)"},
    {"aten::addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", TypeRule::Promote,
     DtypeSet::NoBool, "$self + ($T)$value * $tensor1 * $tensor2", checkAddcmul},
    {"aten::addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", TypeRule::Promote,
     DtypeSet::Floating, "$self + ($T)$value * $tensor1 / $tensor2", checkAddcdiv},
    {"aten::lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", TypeRule::Promote, DtypeSet::Floating,
     "k_lerp($self, $end, ($T)$weight)", checkLerpScalar},
    {"aten::lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", TypeRule::Promote, DtypeSet::Floating,
     "k_lerp($self, $end, $weight)", checkLerpTensor},

    // Unary ops of any dtype but bool.
    {"aten::neg(Tensor self) -> Tensor", TypeRule::Promote, DtypeSet::NoBool, "k_neg($self)"},
    {"aten::abs(Tensor self) -> Tensor", TypeRule::Promote, DtypeSet::NoBool, "k_abs($self)"},
    {"prim::abs(Tensor x) -> Tensor", TypeRule::Promote, DtypeSet::NoBool, "k_abs($x)"},
    {"aten::relu(Tensor self) -> Tensor", TypeRule::Promote, DtypeSet::NoBool, "k_relu($self)"},
    {"aten::floor(Tensor self) -> Tensor", TypeRule::Promote, DtypeSet::NoBool, "k_floor($self)"},
    {"aten::ceil(Tensor self) -> Tensor", TypeRule::Promote, DtypeSet::NoBool, "k_ceil($self)"},
    {"aten::trunc(Tensor self) -> Tensor", TypeRule::Promote, DtypeSet::NoBool, "k_trunc($self)"},
    {"aten::round(Tensor self) -> Tensor", TypeRule::Promote, DtypeSet::NoBool, "k_round($self)"},
    {"aten::round.decimals(Tensor self, *, int decimals) -> Tensor", TypeRule::Promote, DtypeSet::Floating, nullptr,
     checkRoundDecimals, emitRoundDecimals},
    {"aten::sign(Tensor self) -> Tensor", TypeRule::Promote, DtypeSet::All, "k_sign($self)"},
    {"aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor", TypeRule::Promote, DtypeSet::Floating, nullptr,
     checkGelu, emitGelu},

    // Unary ops computed in float.
    KILN_FLOAT_UNARY("exp", "m_exp($self)"), KILN_FLOAT_UNARY("expm1", "m_expm1($self)"),
    KILN_FLOAT_UNARY("log", "m_log($self)"), KILN_FLOAT_UNARY("log1p", "m_log1p($self)"),
    KILN_FLOAT_UNARY("log10", "m_log10($self)"), KILN_FLOAT_UNARY("sqrt", "m_sqrt($self)"),
    KILN_FLOAT_UNARY("rsqrt", "($T)1 / m_sqrt($self)"), KILN_FLOAT_UNARY("reciprocal", "($T)1 / $self"),
    KILN_FLOAT_UNARY("sin", "m_sin($self)"), KILN_FLOAT_UNARY("cos", "m_cos($self)"),
    KILN_FLOAT_UNARY("tan", "m_tan($self)"), KILN_FLOAT_UNARY("asin", "m_asin($self)"),
    KILN_FLOAT_UNARY("acos", "m_acos($self)"), KILN_FLOAT_UNARY("atan", "m_atan($self)"),
    KILN_FLOAT_UNARY("sinh", "k_sinh($self)"), KILN_FLOAT_UNARY("cosh", "k_cosh($self)"),
    KILN_FLOAT_UNARY("tanh", "k_tanh($self)"), KILN_FLOAT_UNARY("atanh", "m_atanh($self)"),
    KILN_FLOAT_UNARY("sigmoid", "k_sigmoid($self)"), KILN_FLOAT_UNARY("erf", "m_erf($self)"),
    KILN_FLOAT_UNARY("erfc", "m_erfc($self)"),

    // Clamps.
    {"aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", TypeRule::Promote, DtypeSet::NoBool,
     nullptr, checkClampScalar, emitClampScalar},
    {"aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", TypeRule::Promote,
     DtypeSet::All, nullptr, checkClampTensor, emitClampTensor},
    {"aten::clamp_min(Tensor self, Scalar min) -> Tensor", TypeRule::Promote, DtypeSet::NoBool,
     "k_clamp_min($self, $min)", checkClampMin},
    {"aten::clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", TypeRule::Promote, DtypeSet::All,
     "k_maximum($self, $min)"},
    {"aten::clamp_max(Tensor self, Scalar max) -> Tensor", TypeRule::Promote, DtypeSet::NoBool,
     "k_clamp_max($self, $max)", checkClampMax},
    {"aten::clamp_max.Tensor(Tensor self, Tensor max) -> Tensor", TypeRule::Promote, DtypeSet::All,
     "k_minimum($self, $max)"},

    // Selection.
    {"aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", TypeRule::Promote, DtypeSet::All,
     "$condition ? $self : $other", checkWhere},
    {"aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor", TypeRule::Promote,
     DtypeSet::All, "$condition ? $self : $other", checkWhere},
    {"aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor", TypeRule::Promote,
     DtypeSet::All, "$condition ? $self : $other", checkWhere},
    {"aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor", TypeRule::Promote, DtypeSet::All,
     "$condition ? $self : $other", checkWhere},

    // Comparisons and logic (bool results).
    KILN_COMPARISON("eq", "=="), KILN_COMPARISON("ne", "!="), KILN_COMPARISON("lt", "<"),
    KILN_COMPARISON("le", "<="), KILN_COMPARISON("gt", ">"), KILN_COMPARISON("ge", ">="),
    {"aten::logical_not(Tensor self) -> Tensor", TypeRule::Predicate, DtypeSet::All, "!(bool)$self"},
    {"aten::logical_and(Tensor self, Tensor other) -> Tensor", TypeRule::Predicate, DtypeSet::All,
     "(bool)$self && (bool)$other"},
    {"aten::logical_or(Tensor self, Tensor other) -> Tensor", TypeRule::Predicate, DtypeSet::All,
     "(bool)$self || (bool)$other"},
    {"aten::logical_xor(Tensor self, Tensor other) -> Tensor", TypeRule::Predicate, DtypeSet::All,
     "(bool)$self != (bool)$other"},
    {"aten::bitwise_not(Tensor self) -> Tensor", TypeRule::Promote, DtypeSet::IntegralOrBool, "k_bitwise_not($self)"},
    KILN_BITWISE("bitwise_and", "and", "&"), KILN_BITWISE("bitwise_or", "or", "|"),
    KILN_BITWISE("bitwise_xor", "xor", "^"),

    // Conversions.
    {"aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
     "MemoryFormat? memory_format=None) -> Tensor(a)",
     TypeRule::Cast, DtypeSet::All, nullptr, checkTo, emitCast},
    {"aten::to.prim_dtype(Tensor(a) self, int? dtype=None, bool non_blocking=False, bool copy=False) -> Tensor(b|a)",
     TypeRule::Cast, DtypeSet::All, nullptr, checkTo, emitCast},
    {"aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
     "bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> "
     "Tensor(a)",
     TypeRule::Cast, DtypeSet::All, nullptr, checkTo, emitCast},
    {"aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, "
     "MemoryFormat? memory_format=None) -> Tensor(a)",
     TypeRule::Cast, DtypeSet::All, nullptr, checkTo, emitCast},
    {"aten::type_as(Tensor self, Tensor other) -> Tensor", TypeRule::Cast, DtypeSet::All, nullptr, nullptr, emitCast},
};

#undef KILN_BITWISE
#undef KILN_COMPARISON
#undef KILN_FLOAT_UNARY

std::string schemaKey(const std::string& name, const std::string& overload) { return name + "." + overload; }

// Whether kiln registers the row's schema with exactly its text; a row it
// does not (a typo, an op kiln lacks) can never match a node.
bool isRegisteredAsWritten(const FusibleOp& op) {
  const FunctionSchema schema = parseSchema(op.schema);
  const OperatorPtr registered = findOperator(Symbol::fromQualString(schema.name()), schema.overloadName());
  return registered && registered->schema().str() == schema.str();
}

// The registered rows by name and overload.
const std::unordered_map<std::string, const FusibleOp*>& registeredOps() {
  static const auto* ops = [] {
    auto* map = new std::unordered_map<std::string, const FusibleOp*>();
    for (const FusibleOp& op : kFusibleOps) {
      if (!isRegisteredAsWritten(op)) {
        GRAPH_DEBUG("fuser: ", op.schema, " is not registered as written; not fusible");
        continue;
      }
      const FunctionSchema schema = parseSchema(op.schema);
      map->emplace(schemaKey(schema.name(), schema.overloadName()), &op);
    }
    return map;
  }();
  return *ops;
}

}  // namespace

size_t OpTyping::index(const char* name) const {
  const auto i = node->maybeSchema()->argumentIndex(name);
  KILN_INTERNAL_ASSERT(i && *i < args.size(), "fuser op table names no argument ", name);
  return *i;
}

const ValueType* OpTyping::find(const char* name) const {
  const auto i = node->maybeSchema()->argumentIndex(name);
  return i && *i < args.size() ? &args[*i] : nullptr;
}

bool refuse(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return false;
}

std::vector<std::string> unregisteredFusibleOps() {
  std::vector<std::string> missing;
  for (const FusibleOp& op : kFusibleOps)
    if (!isRegisteredAsWritten(op)) missing.emplace_back(op.schema);
  return missing;
}

const FusibleOp* findFusibleOp(const Node* n) {
  const FunctionSchema* schema = n->maybeSchema();
  if (!schema) return nullptr;
  const auto& ops = registeredOps();
  auto it = ops.find(schemaKey(schema->name(), schema->overloadName()));
  return it == ops.end() ? nullptr : it->second;
}

ArgRole argRole(const Argument& arg, TypeRule rule) {
  const TypeKind kind = arg.type->kind();
  const bool is_tensor = kind == TypeKind::Tensor ||
                         (kind == TypeKind::Optional && arg.type->containedTypes()[0]->kind() == TypeKind::Tensor);
  if (arg.name == "condition") return ArgRole::Condition;
  if (rule == TypeRule::Cast) {
    if (arg.name == "other") return ArgRole::DtypeSource;
    return arg.name == "self" ? ArgRole::Operand : ArgRole::Constant;
  }
  if (is_tensor) return ArgRole::Operand;
  if (arg.type_text.rfind("Scalar", 0) == 0 && arg.type_text != "ScalarType" && arg.type_text != "ScalarType?") {
    const bool is_param = arg.name == "alpha" || arg.name == "value" || arg.name == "weight";
    return is_param ? ArgRole::Param : ArgRole::Operand;
  }
  return ArgRole::Constant;
}

bool isKernelDtype(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
    case ScalarType::Float:
    case ScalarType::Double: return true;
    default: return false;
  }
}

const char* cppType(ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::Byte: return "uint8_t";
    case ScalarType::Char: return "int8_t";
    case ScalarType::Short: return "int16_t";
    case ScalarType::Int: return "int32_t";
    case ScalarType::Long: return "int64_t";
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
    default: KILN_INTERNAL_ASSERT(false, "no kernel type for ", t);
  }
  return "";
}

std::string castExpr(const std::string& v, ScalarType from, ScalarType to) {
  if (from == to) return v;
  const std::string type = cppType(to);
  // From bool as a select: GCC does not vectorize a conversion of a C++ bool.
  if (from == ScalarType::Bool) return "(" + v + " ? (" + type + ")1 : (" + type + ")0)";
  return "(" + type + ")" + v;
}

std::string cppLiteral(double v) {
  if (std::isnan(v)) return "__builtin_nan(\"\")";
  if (std::isinf(v)) return v > 0 ? "__builtin_inf()" : "(-__builtin_inf())";
  // The shortest decimal that reads back as v, so the source stays readable.
  char buf[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string text = buf;
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return v < 0 ? "(" + text + ")" : text;
}

std::string cppLiteral(const IValue& v) {
  if (v.isBool()) return v.toBool() ? "true" : "false";
  if (v.isDouble()) return cppLiteral(v.toDouble());
  KILN_INTERNAL_ASSERT(v.isInt(), "not a number constant: ", v);
  const int64_t i = v.toInt();
  if (i == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
  char buf[32];
  std::snprintf(buf, sizeof buf, i < 0 ? "(%" PRId64 "LL)" : "%" PRId64 "LL", i);
  return buf;
}

}  // namespace kiln::fuser::detail
