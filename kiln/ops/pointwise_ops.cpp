// aten:: registrations of the pointwise tensor ops, with PyTorch 1.13's
// schemas and their descriptions: the shape rule, the element expression the
// fuser generates kernels from (kiln/ops/pointwise_spec.h) with the checks
// under which the eager kernel raises, and alias and normalization rules.
// Python numbers in `Scalar` slots become 0-dim wrapped numbers, so they
// promote as PyTorch's scalars do. Families whose schemas differ only in the
// op name (unary ops, comparisons, bitwise ops) are spelled by macros; each
// expands to PyTorch's exact schema text.
//
// Some out= forms (add.Scalar_out, the Scalar_Tensor_out forms, ...) are ones
// PyTorch generates from the functional op: the result is computed as usual,
// then copied into `out` whatever its dtype (writeOut with OutDtype::Any).
#include <cmath>

#include "kiln/core/op_registration.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/rewrite.h"
#include "kiln/ops/fold_rules.h"
#include "kiln/ops/pointwise_spec.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using namespace pointwise;
using namespace shapes;

// abs and angle of a complex tensor are real: the rule's dtype made real.
template <Formula Rule>
std::vector<OutputFacts> realValued(const Args& a) {
  std::vector<OutputFacts> out = Rule(a);
  for (OutputFacts& o : out) {
    if (o.tensor.dtype && isComplexType(*o.tensor.dtype)) o.tensor.dtype = toRealValueType(*o.tensor.dtype);
  }
  return out;
}

// --- what the eager kernels raise on, which generated kernels must not meet -------

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
    negated.constant =
        v.isDouble() ? IValue(-v.toDouble())
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
  if (!e.constant->isBool() && e.constant->toInt() < 0) return refuse(why, "integers to negative integer powers raise");
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

// --- normalization ------------------------------------------------------------------

// rsub(self, other) is sub(other, self).
bool rsubAsSub(Node* n) {
  if (!n->matches("aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")) return false;
  std::vector<Value*> inputs = n->inputs().vec();
  std::swap(inputs[0], inputs[1]);
  return replaceWithCall(n, Symbol::aten("sub"), inputs);
}

// --- declarations -------------------------------------------------------------------

// The unary ops computed in float (integers and bool promote to float32).
std::shared_ptr<const PointwiseSpec> floatUnary(const char* expr) {
  return elementwise(TypeRule::PromoteFloat, DtypeSet::Floating, expr);
}
// Unary ops that keep the dtype, and refuse bool.
std::shared_ptr<const PointwiseSpec> sameUnary(const char* expr) {
  return elementwise(TypeRule::Promote, DtypeSet::NoBool, expr);
}

// `name` and `name.out` of a unary op whose results `rule` types; the
// functional form computes `spec` (null: not fusible). KILN_UNARY_OPS adds
// `name_`.
#define KILN_UNARY_FUNCTIONAL_AND_OUT_OPS(name, fn, rule, spec, ...)                                              \
  op("aten::" name "(Tensor self) -> Tensor", [](const Tensor& self) { return fn(self); })                        \
      .shape(rule)                                                                                                \
      .pointwise(spec) __VA_ARGS__,                                                                               \
      op("aten::" name ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", [](const Tensor& self, Tensor out) { \
        return fn##Out(self, out);                                                                                \
      }).shape(rule)
#define KILN_UNARY_OPS(name, fn, rule, spec, ...)                       \
  KILN_UNARY_FUNCTIONAL_AND_OUT_OPS(name, fn, rule, spec, __VA_ARGS__), \
      op("aten::" name "_(Tensor(a!) self) -> Tensor(a!)", [](Tensor self) { return fn##_(self); })
// Another name of a unary op (arcsin of asin): its three forms are
// normalized into the target's.
#define KILN_UNARY_ALIAS_OPS(name, target, fn, rule)                                       \
  op("aten::" name "(Tensor self) -> Tensor", [](const Tensor& self) { return fn(self); }) \
      .shape(rule)                                                                         \
      .aliasOf("aten::" target),                                                           \
      op("aten::" name ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",               \
         [](const Tensor& self, Tensor out) { return fn##Out(self, out); })                \
          .shape(rule)                                                                     \
          .aliasOf("aten::" target),                                                       \
      op("aten::" name "_(Tensor(a!) self) -> Tensor(a!)", [](Tensor self) {               \
        return fn##_(self);                                                                \
      }).aliasOf("aten::" target "_")

// Piecewise constant (floor, sign, ...): torch gives zero gradients.
#define KILN_ZERO_DERIVATIVE .derivative({"self: torch.zeros_like(grad)"})

KILN_REGISTER_OPS(
    // The builtin `abs(x)` of TorchScript on a tensor.
    op("prim::abs(Tensor x) -> Tensor", [](const Tensor& x) { return abs(x); })
        .derivative({"x: grad * x.sign()", "grad_fn: AbsBackward0"})
        .shape(sameDtype)
        .pointwise(sameUnary("k_abs($x)")),
    KILN_UNARY_OPS("neg", neg, sameDtype, sameUnary("k_neg($self)"), .derivative({"self: -grad"})),
    KILN_UNARY_ALIAS_OPS("negative", "neg", neg, sameDtype),
    KILN_UNARY_OPS("abs", abs, realValued<sameDtype>, sameUnary("k_abs($self)"),
                   .derivative({"self: grad * self.sign()"})),
    KILN_UNARY_ALIAS_OPS("absolute", "abs", abs, realValued<sameDtype>),
    KILN_UNARY_OPS("relu", relu, sameDtype, sameUnary("k_relu($self)"),
                   .derivative({"self: torch.threshold_backward(grad, result, 0)"})),
    KILN_UNARY_OPS("floor", floor, sameDtype, sameUnary("k_floor($self)"), KILN_ZERO_DERIVATIVE),
    KILN_UNARY_OPS("ceil", ceil, sameDtype, sameUnary("k_ceil($self)"), KILN_ZERO_DERIVATIVE),
    KILN_UNARY_OPS("round", round, sameDtype, sameUnary("k_round($self)"), KILN_ZERO_DERIVATIVE),
    KILN_UNARY_OPS("trunc", trunc, sameDtype, sameUnary("k_trunc($self)"), KILN_ZERO_DERIVATIVE),
    KILN_UNARY_ALIAS_OPS("fix", "trunc", trunc, sameDtype),
    KILN_UNARY_OPS("sign", sign, sameDtype, elementwise(TypeRule::Promote, DtypeSet::All, "k_sign($self)"),
                   KILN_ZERO_DERIVATIVE),
    KILN_UNARY_OPS("bitwise_not", bitwiseNot, sameDtype,
                   elementwise(TypeRule::Promote, DtypeSet::IntegralOrBool, "k_bitwise_not($self)")),
    KILN_UNARY_OPS("logical_not", logicalNot, boolDtype,
                   elementwise(TypeRule::Predicate, DtypeSet::All, "!(bool)$self")),

    KILN_UNARY_OPS("exp", exp, floatDtype, floatUnary("m_exp($self)"), .derivative({"self: grad * result"})),
    KILN_UNARY_OPS("expm1", expm1, floatDtype, floatUnary("m_expm1($self)"),
                   .derivative({"self: grad * (result + 1)"})),
    KILN_UNARY_OPS("log", log, floatDtype, floatUnary("m_log($self)"), .derivative({"self: grad / self"})),
    KILN_UNARY_OPS("log1p", log1p, floatDtype, floatUnary("m_log1p($self)"), .derivative({"self: grad / (self + 1)"})),
    KILN_UNARY_OPS("log10", log10, floatDtype, floatUnary("m_log10($self)"),
                   .derivative({"self: grad / (self * 2.302585092994046)"})),
    KILN_UNARY_OPS("sqrt", sqrt, floatDtype, floatUnary("m_sqrt($self)"), .derivative({"self: grad / (2 * result)"})),
    KILN_UNARY_OPS("rsqrt", rsqrt, floatDtype, floatUnary("($T)1 / m_sqrt($self)"),
                   .derivative({"self: -0.5 * grad * result.pow(3)"})),
    KILN_UNARY_OPS("reciprocal", reciprocal, floatDtype, floatUnary("($T)1 / $self"),
                   .derivative({"self: -grad * (result * result)"})),
    KILN_UNARY_OPS("sin", sin, floatDtype, floatUnary("m_sin($self)"), .derivative({"self: grad * self.cos()"})),
    KILN_UNARY_OPS("cos", cos, floatDtype, floatUnary("m_cos($self)"), .derivative({"self: grad * -self.sin()"})),
    KILN_UNARY_OPS("tan", tan, floatDtype, floatUnary("m_tan($self)"),
                   .derivative({"self: grad * (1 + result * result)"})),
    KILN_UNARY_OPS("asin", asin, floatDtype, floatUnary("m_asin($self)"),
                   .derivative({"self: grad * (-self * self + 1).rsqrt()"})),
    KILN_UNARY_ALIAS_OPS("arcsin", "asin", asin, floatDtype),
    KILN_UNARY_OPS("acos", acos, floatDtype, floatUnary("m_acos($self)"),
                   .derivative({"self: grad * -(-self * self + 1).rsqrt()"})),
    KILN_UNARY_ALIAS_OPS("arccos", "acos", acos, floatDtype),
    KILN_UNARY_OPS("atan", atan, floatDtype, floatUnary("m_atan($self)"),
                   .derivative({"self: grad / (self * self + 1)"})),
    KILN_UNARY_ALIAS_OPS("arctan", "atan", atan, floatDtype),
    KILN_UNARY_OPS("sinh", sinh, floatDtype, floatUnary("k_sinh($self)"), .derivative({"self: grad * self.cosh()"})),
    KILN_UNARY_OPS("cosh", cosh, floatDtype, floatUnary("k_cosh($self)"), .derivative({"self: grad * self.sinh()"})),
    KILN_UNARY_OPS("tanh", tanh, floatDtype, floatUnary("k_tanh($self)"),
                   .derivative({"self: grad * (1 - result * result)"})),
    KILN_UNARY_OPS("asinh", asinh, floatDtype, nullptr, .derivative({"self: grad * (self * self + 1).rsqrt()"})),
    KILN_UNARY_ALIAS_OPS("arcsinh", "asinh", asinh, floatDtype),
    KILN_UNARY_OPS("acosh", acosh, floatDtype, nullptr, .derivative({"self: grad * (self * self - 1).rsqrt()"})),
    KILN_UNARY_ALIAS_OPS("arccosh", "acosh", acosh, floatDtype),
    KILN_UNARY_OPS("atanh", atanh, floatDtype, floatUnary("m_atanh($self)"),
                   .derivative({"self: grad / (1 - self * self)"})),
    KILN_UNARY_ALIAS_OPS("arctanh", "atanh", atanh, floatDtype),
    KILN_UNARY_OPS("sigmoid", sigmoid, floatDtype, floatUnary("k_sigmoid($self)"),
                   .derivative({"self: grad * result * (1 - result)"})),
    KILN_UNARY_OPS("erf", erf, floatDtype, floatUnary("m_erf($self)"),
                   .derivative({"self: grad * 1.1283791670955126 * (-self * self).exp()"})),
    KILN_UNARY_OPS("erfc", erfc, floatDtype, floatUnary("m_erfc($self)"),
                   .derivative({"self: grad * -1.1283791670955126 * (-self * self).exp()"})),
    KILN_UNARY_OPS("lgamma", lgamma, floatDtype, nullptr, .derivative({"self: grad * _digamma(self)"})),
    KILN_UNARY_FUNCTIONAL_AND_OUT_OPS("angle", angle, realValued<floatDtype>, nullptr, KILN_ZERO_DERIVATIVE),
    KILN_UNARY_FUNCTIONAL_AND_OUT_OPS("isnan", isnan, boolDtype, nullptr),
    KILN_UNARY_FUNCTIONAL_AND_OUT_OPS("isinf", isinf, boolDtype, nullptr),
    KILN_UNARY_FUNCTIONAL_AND_OUT_OPS("isposinf", isposinf, boolDtype, nullptr),
    KILN_UNARY_FUNCTIONAL_AND_OUT_OPS("isneginf", isneginf, boolDtype, nullptr),
    op("aten::isfinite(Tensor self) -> Tensor", [](const Tensor& self) { return isfinite(self); }).shape(boolDtype),

    op("aten::frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)",
       [](const Tensor& self) { return frexp(self); })
        .derivative({"self: grad / torch.pow(2.0, exponent)", "non_differentiable: exponent"})
        .shape(shapes::frexp),
    op("aten::frexp.Tensor_out(Tensor self, *, Tensor(a!) mantissa, Tensor(b!) exponent) -> "
       "(Tensor(a!) mantissa, Tensor(b!) exponent)",
       [](const Tensor& self, Tensor mantissa, Tensor exponent) { return frexpOut(self, mantissa, exponent); })
        .shape(shapes::frexp),

    op("aten::round.decimals(Tensor self, *, int decimals) -> Tensor",
       [](const Tensor& self, int64_t decimals) { return round(self, decimals); })
        .derivative({"self: torch.zeros_like(grad)", "grad_fn: RoundBackward1"})
        .shape(sameDtype)
        .pointwise(elementwise(TypeRule::Promote, DtypeSet::Floating, nullptr, checkRoundDecimals, emitRoundDecimals)),
    op("aten::round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)",
       [](Tensor self, int64_t decimals) { return round_(self, decimals); }),
    op("aten::round.decimals_out(Tensor self, *, int decimals, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t decimals, Tensor out) { return roundOut(self, decimals, out); })
        .shape(sameDtype),

    op("aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor",
       [](const Tensor& self, const std::string& approximate) { return gelu(self, approximate); })
        .derivative({"self: _gelu_backward(grad, self, approximate)"})
        .shape(sameDtype)
        .pointwise(elementwise(TypeRule::Promote, DtypeSet::Floating, nullptr, checkGelu, emitGelu)),
    op("aten::gelu_(Tensor(a!) self, *, str approximate=\"none\") -> Tensor(a!)",
       [](Tensor self, const std::string& approximate) { return gelu_(self, approximate); }),
    op("aten::gelu.out(Tensor self, *, str approximate=\"none\", Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::string& approximate, Tensor out) { return geluOut(self, approximate, out); })
        .shape(sameDtype), );

#undef KILN_ZERO_DERIVATIVE
#undef KILN_UNARY_ALIAS_OPS
#undef KILN_UNARY_OPS
#undef KILN_UNARY_FUNCTIONAL_AND_OUT_OPS

// The five shared forms of sub and of its alias subtract: `Desc(inplace)`
// completes each declaration's description (`inplace` says which form).
#define KILN_SUB_OPS(name, Desc)                                                                                     \
  op("aten::" name ".Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",                                \
     [](const Tensor& self, const Tensor& other, const Scalar& alpha) { return sub(self, other, alpha); })           \
      .shape(arithmetic) Desc(false),                                                                                \
      op("aten::" name ".Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",                               \
         [](const Tensor& self, const Scalar& other, const Scalar& alpha) {                                          \
           return sub(self, scalarToTensor(other), alpha);                                                           \
         })                                                                                                          \
          .shape(arithmetic) Desc(false),                                                                            \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",                   \
         [](Tensor self, const Tensor& other, const Scalar& alpha) { return sub_(self, other, alpha); }) Desc(true), \
      op("aten::" name "_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",                      \
         [](Tensor self, const Scalar& other, const Scalar& alpha) {                                                 \
           return sub_(self, scalarToTensor(other), alpha);                                                          \
         }) Desc(true),                                                                                              \
      op("aten::" name ".out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",           \
         [](const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out) {                              \
           return subOut(self, other, alpha, out);                                                                   \
         })                                                                                                          \
          .shape(arithmetic) Desc(true)
// sub: the functional forms are fusible; subtract: every form is sub's alias.
#define KILN_SUB_DESCRIPTION(inplace)                \
  .pointwise(inplace ? nullptr : subtraction)        \
      .fold(inplace ? nullptr : folds::addOrSubZero) \
      .derivative({"self: grad", "other: -grad if alpha == 1 else -grad * alpha"})
#define KILN_SUBTRACT_DESCRIPTION(inplace) .aliasOf(inplace ? "aten::sub_" : "aten::sub")

// x - alpha * y, which is add with alpha negated.
const auto subtraction =
    elementwise(TypeRule::Promote, DtypeSet::NoBool, "k_add($self, $other, ($T)(-$alpha))", checkSubtract);
const auto reverseSubtraction =
    elementwise(TypeRule::Promote, DtypeSet::NoBool, "k_add($other, $self, ($T)(-$alpha))", checkSubtract);
const auto addition = elementwise(TypeRule::Promote, DtypeSet::All, "k_add($self, $other, ($T)$alpha)", checkAlpha);

KILN_REGISTER_OPS(
    op("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Tensor& other, const Scalar& alpha) { return add(self, other, alpha); })
        .derivative({"self: grad", "other: grad if alpha == 1 else grad * alpha"})
        .shape(arithmetic)
        .pointwise(addition),
    op("aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Scalar& other, const Scalar& alpha) {
         return add(self, scalarToTensor(other), alpha);
       })
        .derivative({"self: grad"})
        .shape(arithmetic)
        .pointwise(addition)
        .fold(folds::addOrSubZero),
    op("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Tensor& other, const Scalar& alpha) { return add_(self, other, alpha); }),
    op("aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Scalar& other, const Scalar& alpha) { return add_(self, scalarToTensor(other), alpha); }),
    op("aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out) {
         return addOut(self, other, alpha, out);
       })
        .shape(arithmetic),
    op("aten::add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, const Scalar& alpha, Tensor out) {
         return writeOut(out, add(self, scalarToTensor(other), alpha), "add", OutDtype::Any);
       })
        .shape(arithmetic),

    KILN_SUB_OPS("sub", KILN_SUB_DESCRIPTION), KILN_SUB_OPS("subtract", KILN_SUBTRACT_DESCRIPTION),
    op("aten::sub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, const Scalar& alpha, Tensor out) {
         return writeOut(out, sub(self, scalarToTensor(other), alpha), "sub", OutDtype::Any);
       })
        .shape(arithmetic),

    op("aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Tensor& other, const Scalar& alpha) { return rsub(self, other, alpha); })
        .derivative({"self: -grad if alpha == 1 else -grad * alpha", "other: grad"})
        .shape(arithmetic)
        .pointwise(reverseSubtraction)
        .normalize(rsubAsSub),
    op("aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Scalar& other, const Scalar& alpha) {
         return rsub(self, scalarToTensor(other), alpha);
       })
        .derivative({"self: -grad if alpha == 1 else -grad * alpha", "grad_fn: RsubBackward1"})
        .shape(arithmetic)
        .pointwise(reverseSubtraction),
    op("aten::rsub.Tensor_out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out) {
         return rsubOut(self, other, alpha, out);
       })
        .shape(arithmetic),
    op("aten::rsub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, const Scalar& alpha, Tensor out) {
         return rsubOut(self, scalarToTensor(other), alpha, out);
       })
        .shape(arithmetic), );

#undef KILN_SUBTRACT_DESCRIPTION
#undef KILN_SUB_DESCRIPTION
#undef KILN_SUB_OPS

// mul and its alias multiply; `Desc(inplace, scalar)` completes each description.
#define KILN_MUL_OPS(name, Desc)                                                                                   \
  op("aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor",                                                 \
     [](const Tensor& self, const Tensor& other) { return mul(self, other); })                                     \
      .shape(arithmetic) Desc(false, false),                                                                       \
      op("aten::" name ".Scalar(Tensor self, Scalar other) -> Tensor",                                             \
         [](const Tensor& self, const Scalar& other) { return mul(self, scalarToTensor(other)); })                 \
          .shape(arithmetic) Desc(false, true),                                                                    \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",                                    \
         [](Tensor self, const Tensor& other) { return mul_(self, other); }) Desc(true, false),                    \
      op("aten::" name "_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",                                    \
         [](Tensor self, const Scalar& other) { return mul_(self, scalarToTensor(other)); }) Desc(true, true),     \
      op("aten::" name ".out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", [](const Tensor& self,  \
                                                                                              const Tensor& other, \
                                                                                              Tensor out) {        \
        return mulOut(self, other, out);                                                                           \
      }).shape(arithmetic) Desc(true, false)
// A Scalar `other` has no conj() in TorchScript (conj of a real tensor is the tensor itself).
#define KILN_MUL_DESCRIPTION(inplace, scalar)    \
  .pointwise(inplace ? nullptr : multiplication) \
      .fold(inplace ? nullptr : folds::mulByOne) \
      .derivative({scalar ? "self: grad * other" : "self: grad * other.conj()", "other: grad * self.conj()"})
#define KILN_MULTIPLY_DESCRIPTION(inplace, scalar) .aliasOf(inplace ? "aten::mul_" : "aten::mul")

// div and its alias divide (true_divide is the same without rounding
// modes). `Desc(inplace, mode, scalar)` completes each description.
#define KILN_DIV_OPS(name, Desc)                                                                                      \
  op("aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor",                                                    \
     [](const Tensor& self, const Tensor& other) { return div(self, other); })                                        \
      .shape(trueDivide) Desc(false, false, false),                                                                   \
      op("aten::" name ".Scalar(Tensor self, Scalar other) -> Tensor",                                                \
         [](const Tensor& self, const Scalar& other) { return div(self, scalarToTensor(other)); })                    \
          .shape(trueDivide) Desc(false, false, true),                                                                \
      op("aten::" name ".Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",                    \
         [](const Tensor& self, const Tensor& other, const std::optional<std::string>& mode) {                        \
           return div(self, other, mode);                                                                             \
         })                                                                                                           \
          .shape(divMode) Desc(false, true, false),                                                                   \
      op("aten::" name ".Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",                    \
         [](const Tensor& self, const Scalar& other, const std::optional<std::string>& mode) {                        \
           return div(self, scalarToTensor(other), mode);                                                             \
         })                                                                                                           \
          .shape(divMode) Desc(false, true, true),                                                                    \
      op("aten::" name ".out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",                            \
         [](const Tensor& self, const Tensor& other, Tensor out) { return divOut(self, other, std::nullopt, out); })  \
          .shape(trueDivide) Desc(true, false, false),                                                                \
      op("aten::" name ".out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)",   \
         [](const Tensor& self, const Tensor& other, const std::optional<std::string>& mode, Tensor out) {            \
           return divOut(self, other, mode, out);                                                                     \
         })                                                                                                           \
          .shape(trueDivide) Desc(true, true, false),                                                                 \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",                                       \
         [](Tensor self, const Tensor& other) { return div_(self, other); }) Desc(true, false, false),                \
      op("aten::" name "_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",                                       \
         [](Tensor self, const Scalar& other) { return div_(self, scalarToTensor(other)); }) Desc(true, false, true), \
      op("aten::" name "_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)",           \
         [](Tensor self, const Tensor& other, const std::optional<std::string>& mode) {                               \
           return div_(self, other, mode);                                                                            \
         }) Desc(true, true, false),                                                                                  \
      op("aten::" name "_.Scalar_mode(Tensor(a!) self, Scalar other, *, str? rounding_mode) -> Tensor(a!)",           \
         [](Tensor self, const Scalar& other, const std::optional<std::string>& mode) {                               \
           return div_(self, scalarToTensor(other), mode);                                                            \
         }) Desc(true, true, true)
#define KILN_DIV_DESCRIPTION(inplace, mode, scalar)      \
  .pointwise(inplace ? nullptr                           \
             : mode  ? divisionWithMode                  \
                     : trueDivision)                      \
      .fold(inplace || mode ? nullptr : folds::divByOne) \
      .derivative(KILN_DIV_DERIVATIVE_##mode(scalar))
// Rounded quotients are piecewise constant: no gradient.
#define KILN_DIV_DERIVATIVE_false(scalar) \
  { scalar ? "self: grad / other" : "self: grad / other.conj()", "other: -grad * (self / (other * other)).conj()" }
#define KILN_DIV_DERIVATIVE_true(scalar)                                                                        \
  {                                                                                                             \
    "self: grad / other if rounding_mode is None else grad * 0",                                                \
        "other: -grad * self / (other * other) if rounding_mode is None else grad * 0", "grad_fn: DivBackward2" \
  }
#define KILN_DIVIDE_DESCRIPTION(inplace, mode, scalar) .aliasOf(inplace ? "aten::div_" : "aten::div")

const auto multiplication = elementwise(TypeRule::Promote, DtypeSet::All, "k_mul($self, $other)");
const auto trueDivision = elementwise(TypeRule::PromoteFloat, DtypeSet::Floating, "$self / $other");
const auto divisionWithMode = elementwise(TypeRule::Division, DtypeSet::All, nullptr, checkDivMode, emitDivMode);
const auto floorDivision = elementwise(TypeRule::Promote, DtypeSet::Floating, "k_floor_divide($self, $other)");

KILN_REGISTER_OPS(
    KILN_MUL_OPS("mul", KILN_MUL_DESCRIPTION), KILN_MUL_OPS("multiply", KILN_MULTIPLY_DESCRIPTION),
    op("aten::mul.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, Tensor out) {
         return writeOut(out, mul(self, scalarToTensor(other)), "mul", OutDtype::Any);
       })
        .shape(arithmetic),

    KILN_DIV_OPS("div", KILN_DIV_DESCRIPTION), KILN_DIV_OPS("divide", KILN_DIVIDE_DESCRIPTION),
    op("aten::div.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, Tensor out) {
         return writeOut(out, div(self, scalarToTensor(other)), "div", OutDtype::Any);
       })
        .shape(trueDivide),
    op("aten::div.Scalar_mode_out(Tensor self, Scalar other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, const std::optional<std::string>& mode, Tensor out) {
         return writeOut(out, div(self, scalarToTensor(other), mode), "div", OutDtype::Any);
       })
        .shape(trueDivide),
    op("aten::true_divide.Tensor(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return div(self, other); })
        .shape(trueDivide)
        .aliasOf("aten::div"),
    op("aten::true_divide.Scalar(Tensor self, Scalar other) -> Tensor",
       [](const Tensor& self, const Scalar& other) { return div(self, scalarToTensor(other)); })
        .shape(trueDivide)
        .aliasOf("aten::div"),
    op("aten::true_divide.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return divOut(self, other, std::nullopt, out); })
        .shape(trueDivide)
        .aliasOf("aten::div"),
    op("aten::true_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       [](Tensor self, const Tensor& other) { return div_(self, other); })
        .aliasOf("aten::div_"),
    op("aten::true_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
       [](Tensor self, const Scalar& other) { return div_(self, scalarToTensor(other)); })
        .aliasOf("aten::div_"),

    op("aten::floor_divide(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return floorDivide(self, other); })
        .shape(arithmetic)
        .pointwise(floorDivision),
    op("aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor",
       [](const Tensor& self, const Scalar& other) { return floorDivide(self, scalarToTensor(other)); })
        .shape(arithmetic)
        .pointwise(floorDivision),
    op("aten::floor_divide.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return floorDivideOut(self, other, out); })
        .shape(arithmetic),
    op("aten::floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       [](Tensor self, const Tensor& other) { return floorDivide_(self, other); }),
    op("aten::floor_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
       [](Tensor self, const Scalar& other) { return floorDivide_(self, scalarToTensor(other)); }), );

#undef KILN_DIVIDE_DESCRIPTION
#undef KILN_DIV_DESCRIPTION
#undef KILN_DIV_OPS
#undef KILN_MULTIPLY_DESCRIPTION
#undef KILN_MUL_DESCRIPTION
#undef KILN_MUL_OPS

// The Tensor/Scalar forms of remainder and fmod; the functional ones compute `spec`.
#define KILN_MOD_OPS(name, fn, spec, TensorDerivative, ScalarDerivative)                                \
  op("aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor",                                      \
     [](const Tensor& self, const Tensor& other) { return fn(self, other); })                           \
      .shape(arithmetic)                                                                                \
      .pointwise(spec) TensorDerivative,                                                                \
      op("aten::" name ".Scalar(Tensor self, Scalar other) -> Tensor",                                  \
         [](const Tensor& self, const Scalar& other) { return fn(self, scalarToTensor(other)); })       \
          .shape(arithmetic)                                                                            \
          .pointwise(spec) ScalarDerivative,                                                            \
      op("aten::" name ".Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",       \
         [](const Tensor& self, const Tensor& other, Tensor out) { return fn##Out(self, other, out); }) \
          .shape(arithmetic),                                                                           \
      op("aten::" name ".Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",       \
         [](const Tensor& self, const Scalar& other, Tensor out) {                                      \
           return fn##Out(self, scalarToTensor(other), out);                                            \
         })                                                                                             \
          .shape(arithmetic),                                                                           \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",                         \
         [](Tensor self, const Tensor& other) { return fn##_(self, other); }),                          \
      op("aten::" name "_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",                         \
         [](Tensor self, const Scalar& other) { return fn##_(self, scalarToTensor(other)); })

// `name(Tensor self, Tensor other)` and its out= form, typed by `rule`, each
// completed by `Extra` (a pointwise spec, an alias); the in-place form
// separately (maximum and minimum have none).
#define KILN_TENSOR_BINARY_OPS(name, fn, rule, Extra)                                                              \
  op("aten::" name "(Tensor self, Tensor other) -> Tensor",                                                        \
     [](const Tensor& self, const Tensor& other) { return fn(self, other); })                                      \
      .shape(rule) Extra,                                                                                          \
      op("aten::" name ".out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", [](const Tensor& self,  \
                                                                                              const Tensor& other, \
                                                                                              Tensor out) {        \
        return fn##Out(self, other, out);                                                                          \
      }).shape(rule)
#define KILN_TENSOR_BINARY_INPLACE_OP(name, fn)                      \
  op("aten::" name "_(Tensor(a!) self, Tensor other) -> Tensor(a!)", \
     [](Tensor self, const Tensor& other) { return fn##_(self, other); })

const auto pythonRemainder = elementwise(TypeRule::Promote, DtypeSet::Floating, "k_remainder($self, $other)");
const auto cRemainder = elementwise(TypeRule::Promote, DtypeSet::Floating, "m_fmod($self, $other)");
const auto power = elementwise(TypeRule::Promote, DtypeSet::NoBool, "k_power($self, $exponent)");
// copysign moves self's magnitude: its gradient is grad times the sign change (0 where self is 0).
#define KILN_COPYSIGN_SELF_DERIVATIVE "self: torch.where(self == 0, torch.zeros_like(grad), grad * (result / self))"
#define KILN_POW_SELF_DERIVATIVE "self: grad * exponent * self.pow(exponent - 1)"
#define KILN_POW_EXPONENT_DERIVATIVE \
  "exponent: grad * torch.where((self == 0) & (exponent >= 0), torch.zeros_like(result), result * self.log())"
#define KILN_POW_SCALAR_DERIVATIVE "self: grad * 0 if exponent == 0 else grad * exponent * self.pow(exponent - 1)"
// The logical ops read their operands as bools.
std::shared_ptr<const PointwiseSpec> logical(const char* expr) {
  return elementwise(TypeRule::Predicate, DtypeSet::All, expr);
}

KILN_REGISTER_OPS(
    // Integer remainders raise on a zero divisor: fusible in float only.
    // remainder(a, b) = a - floor(a / b) * b, fmod with trunc: the quotient is piecewise constant.
    KILN_MOD_OPS("remainder", remainder, pythonRemainder,
                 .derivative({"self: grad", "other: -grad * self.div(other, rounding_mode='floor')",
                              "grad_fn: RemainderBackward1"}),
                 .derivative({"self: grad", "grad_fn: RemainderBackward0"})),
    KILN_MOD_OPS("fmod", fmod, cRemainder,
                 .derivative({"self: grad", "other: -grad * self.div(other, rounding_mode='trunc')",
                              "grad_fn: FmodBackward1"}),
                 .derivative({"self: grad", "grad_fn: FmodBackward0"})),
    op("aten::remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
       [](const Scalar& self, const Tensor& other) { return remainder(scalarToTensor(self), other); })
        .shape(arithmetic)
        .pointwise(pythonRemainder),
    op("aten::remainder.Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& self, const Tensor& other, Tensor out) {
         return writeOut(out, remainder(scalarToTensor(self), other), "remainder", OutDtype::Any);
       })
        .shape(arithmetic),

    op("aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
       [](const Tensor& self, const Tensor& exponent) { return pow(self, exponent); })
        .derivative({KILN_POW_SELF_DERIVATIVE, KILN_POW_EXPONENT_DERIVATIVE, "grad_fn: PowBackward1"})
        .shape(powOp)
        .pointwise(power),
    op("aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
       [](const Tensor& self, const Scalar& exponent) { return pow(self, exponent); })
        .derivative({KILN_POW_SCALAR_DERIVATIVE})
        .shape(powOp)
        .pointwise(elementwise(TypeRule::Promote, DtypeSet::NoBool, nullptr, checkPowScalar, emitPowScalar)),
    op("aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
       [](const Scalar& self, const Tensor& exponent) { return pow(self, exponent); })
        .derivative({"exponent: _pow_scalar_backward_exponent(grad, self, exponent, result)", "grad_fn: PowBackward2"})
        .shape(powOp)
        .pointwise(power),
    op("aten::pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& exponent, Tensor out) { return powOut(self, exponent, out); })
        .shape(powOp),
    op("aten::pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& exponent, Tensor out) { return powOut(self, exponent, out); })
        .shape(powOp),
    op("aten::pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& self, const Tensor& exponent, Tensor out) { return powOut(self, exponent, out); })
        .shape(powOp),
    op("aten::pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
       [](Tensor self, const Tensor& exponent) { return pow_(self, exponent); })
        .derivative({KILN_POW_SELF_DERIVATIVE, KILN_POW_EXPONENT_DERIVATIVE, "grad_fn: PowBackward1"}),
    // Not pow.Scalar's formulas (whose `self` is the Scalar): those of pow.Tensor_Scalar.
    op("aten::pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
       [](Tensor self, const Scalar& exponent) { return pow_(self, exponent); })
        .derivative({KILN_POW_SCALAR_DERIVATIVE, "grad_fn: PowBackward0"}),

    KILN_TENSOR_BINARY_OPS("atan2", atan2, trueDivide,
                           .pointwise(elementwise(TypeRule::PromoteFloat, DtypeSet::Floating, "m_atan2($self, $other)"))
                               .derivative({"self: grad * other / (self * self + other * other)",
                                            "other: grad * -self / (self * self + other * other)"})),
    KILN_TENSOR_BINARY_INPLACE_OP("atan2", atan2),
    KILN_TENSOR_BINARY_OPS("arctan2", atan2, trueDivide, .aliasOf("aten::atan2")),
    KILN_TENSOR_BINARY_INPLACE_OP("arctan2", atan2).aliasOf("aten::atan2_"),
    KILN_TENSOR_BINARY_OPS("gcd", gcd, arithmetic, ), KILN_TENSOR_BINARY_INPLACE_OP("gcd", gcd),
    KILN_TENSOR_BINARY_INPLACE_OP("ldexp", ldexp)
        .derivative({"self: grad * torch.pow(2.0, other)", "other: grad * result * 0.6931471805599453",
                     "grad_fn: MulBackward0"}),
    op("aten::ldexp.Tensor(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return ldexp(self, other); })
        .derivative({"self: grad * torch.pow(2.0, other)", "other: grad * result * 0.6931471805599453",
                     "grad_fn: MulBackward0"})
        .shape(trueDivide),
    op("aten::ldexp.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return ldexpOut(self, other, out); })
        .shape(trueDivide),

    op("aten::copysign.Tensor(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return copysign(self, other); })
        .derivative({KILN_COPYSIGN_SELF_DERIVATIVE, "other: torch.zeros_like(other)"})
        .shape(trueDivide),
    op("aten::copysign.Scalar(Tensor self, Scalar other) -> Tensor",
       [](const Tensor& self, const Scalar& other) { return copysign(self, scalarToTensor(other)); })
        .derivative({KILN_COPYSIGN_SELF_DERIVATIVE, "grad_fn: CopysignBackward1"})
        .shape(trueDivide),
    op("aten::copysign.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return copysignOut(self, other, out); })
        .shape(trueDivide),
    op("aten::copysign.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, Tensor out) {
         return copysignOut(self, scalarToTensor(other), out);
       })
        .shape(trueDivide),
    op("aten::copysign_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       [](Tensor self, const Tensor& other) { return copysign_(self, other); }),
    op("aten::copysign_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
       [](Tensor self, const Scalar& other) { return copysign_(self, scalarToTensor(other)); }),

    KILN_TENSOR_BINARY_OPS("maximum", maximum, arithmetic,
                           .pointwise(elementwise(TypeRule::Promote, DtypeSet::All, "k_maximum($self, $other)"))
                               .derivative({"self: torch.where(self == other, grad / 2, grad * (self > other))",
                                            "other: torch.where(self == other, grad / 2, grad * (other > self))"})),
    KILN_TENSOR_BINARY_OPS("minimum", minimum, arithmetic,
                           .pointwise(elementwise(TypeRule::Promote, DtypeSet::All, "k_minimum($self, $other)"))
                               .derivative({"self: torch.where(self == other, grad / 2, grad * (self < other))",
                                            "other: torch.where(self == other, grad / 2, grad * (other < self))"})),
    KILN_TENSOR_BINARY_OPS("logical_and", logicalAnd, comparison, .pointwise(logical("(bool)$self && (bool)$other"))),
    KILN_TENSOR_BINARY_INPLACE_OP("logical_and", logicalAnd),
    KILN_TENSOR_BINARY_OPS("logical_or", logicalOr, comparison, .pointwise(logical("(bool)$self || (bool)$other"))),
    KILN_TENSOR_BINARY_INPLACE_OP("logical_or", logicalOr),
    KILN_TENSOR_BINARY_OPS("logical_xor", logicalXor, comparison, .pointwise(logical("(bool)$self != (bool)$other"))),
    KILN_TENSOR_BINARY_INPLACE_OP("logical_xor", logicalXor), );

#undef KILN_COPYSIGN_SELF_DERIVATIVE
#undef KILN_POW_SCALAR_DERIVATIVE
#undef KILN_POW_EXPONENT_DERIVATIVE
#undef KILN_POW_SELF_DERIVATIVE
#undef KILN_TENSOR_BINARY_INPLACE_OP
#undef KILN_TENSOR_BINARY_OPS
#undef KILN_MOD_OPS

// The six forms of a comparison; `Functional`, `OutForm` and `Inplace` complete
// the descriptions of the functional, out= and in-place forms.
#define KILN_COMPARISON_FORMS(name, fn, Functional, OutForm, Inplace)                                            \
  op("aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor",                                               \
     [](const Tensor& self, const Tensor& other) { return fn(self, other); }) Functional,                        \
      op("aten::" name ".Scalar(Tensor self, Scalar other) -> Tensor",                                           \
         [](const Tensor& self, const Scalar& other) { return fn(self, scalarToTensor(other)); }) Functional,    \
      op("aten::" name ".Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",                \
         [](const Tensor& self, const Tensor& other, Tensor out) { return fn##Out(self, other, out); }) OutForm, \
      op("aten::" name ".Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",                \
         [](const Tensor& self, const Scalar& other, Tensor out) {                                               \
           return fn##Out(self, scalarToTensor(other), out);                                                     \
         }) OutForm,                                                                                             \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",                                  \
         [](Tensor self, const Tensor& other) { return fn##_(self, other); }) Inplace,                           \
      op("aten::" name "_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",                                  \
         [](Tensor self, const Scalar& other) { return fn##_(self, scalarToTensor(other)); }) Inplace
// A comparison computed as `$self <cpp_op> $other`, and an alias of one.
// The in-place forms keep self's dtype: a float result carries a zero gradient, as in torch.
#define KILN_COMPARISON_OPS(name, fn, cpp_op)                                                                   \
  KILN_COMPARISON_FORMS(                                                                                        \
      name, fn,                                                                                                 \
      .shape(comparison).pointwise(elementwise(TypeRule::Predicate, DtypeSet::All, "$self " cpp_op " $other")), \
      .shape(comparison), .derivative({"self: torch.zeros_like(grad)", "other: torch.zeros_like(grad)"}))
#define KILN_COMPARISON_ALIAS_OPS(name, target, fn)                            \
  KILN_COMPARISON_FORMS(name, fn, .shape(comparison).aliasOf("aten::" target), \
                        .shape(comparison).aliasOf("aten::" target), .aliasOf("aten::" target "_"))

KILN_REGISTER_OPS(KILN_COMPARISON_OPS("eq", eq, "=="), KILN_COMPARISON_OPS("ne", ne, "!="),
                  KILN_COMPARISON_OPS("lt", lt, "<"), KILN_COMPARISON_OPS("le", le, "<="),
                  KILN_COMPARISON_OPS("gt", gt, ">"), KILN_COMPARISON_OPS("ge", ge, ">="),
                  KILN_COMPARISON_ALIAS_OPS("not_equal", "ne", ne), KILN_COMPARISON_ALIAS_OPS("less", "lt", lt),
                  KILN_COMPARISON_ALIAS_OPS("less_equal", "le", le), KILN_COMPARISON_ALIAS_OPS("greater", "gt", gt),
                  KILN_COMPARISON_ALIAS_OPS("greater_equal", "ge", ge), );

#undef KILN_COMPARISON_ALIAS_OPS
#undef KILN_COMPARISON_OPS
#undef KILN_COMPARISON_FORMS

// bitwise_and/or/xor and shifts: Tensor, Scalar and Scalar-first forms;
// `Functional` completes the functional forms' descriptions.
#define KILN_BITWISE_OPS(name, fn, tensor_scalar, Functional)                                                \
  op("aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor",                                           \
     [](const Tensor& self, const Tensor& other) { return fn(self, other); })                                \
      .shape(arithmetic) Functional,                                                                         \
      op("aten::" name "." tensor_scalar "(Tensor self, Scalar other) -> Tensor",                            \
         [](const Tensor& self, const Scalar& other) { return fn(self, scalarToTensor(other)); })            \
          .shape(arithmetic) Functional,                                                                     \
      op("aten::" name ".Scalar_Tensor(Scalar self, Tensor other) -> Tensor",                                \
         [](const Scalar& self, const Tensor& other) { return fn(scalarToTensor(self), other); })            \
          .shape(arithmetic) Functional,                                                                     \
      op("aten::" name ".Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",            \
         [](const Tensor& self, const Tensor& other, Tensor out) { return fn##Out(self, other, out); })      \
          .shape(arithmetic),                                                                                \
      op("aten::" name "." tensor_scalar "_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)", \
         [](const Tensor& self, const Scalar& other, Tensor out) {                                           \
           return fn##Out(self, scalarToTensor(other), out);                                                 \
         })                                                                                                  \
          .shape(arithmetic),                                                                                \
      op("aten::" name ".Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",     \
         [](const Scalar& self, const Tensor& other, Tensor out) {                                           \
           return writeOut(out, fn(scalarToTensor(self), other), name, OutDtype::Any);                       \
         })                                                                                                  \
          .shape(arithmetic),                                                                                \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",                              \
         [](Tensor self, const Tensor& other) { return fn##_(self, other); }),                               \
      op("aten::" name "_." tensor_scalar "(Tensor(a!) self, Scalar other) -> Tensor(a!)",                   \
         [](Tensor self, const Scalar& other) { return fn##_(self, scalarToTensor(other)); })

// The dunder forms (__and__, __iand__, ...): functional and in-place, Tensor
// and Scalar; `Functional` as above.
#define KILN_DUNDER_OPS(name, fn, Functional)                                                     \
  op("aten::__" name "__.Tensor(Tensor self, Tensor other) -> Tensor",                            \
     [](const Tensor& self, const Tensor& other) { return fn(self, other); })                     \
      .shape(arithmetic) Functional,                                                              \
      op("aten::__" name "__.Scalar(Tensor self, Scalar other) -> Tensor",                        \
         [](const Tensor& self, const Scalar& other) { return fn(self, scalarToTensor(other)); }) \
          .shape(arithmetic) Functional,                                                          \
      op("aten::__i" name "__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",               \
         [](Tensor self, const Tensor& other) { return fn##_(self, other); }),                    \
      op("aten::__i" name "__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",               \
         [](Tensor self, const Scalar& other) { return fn##_(self, scalarToTensor(other)); })
#define KILN_DUNDER_SHIFT_OUT_OPS(name, fn)                                                           \
  op("aten::__" name "__.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",     \
     [](const Tensor& self, const Tensor& other, Tensor out) {                                        \
       return writeOut(out, fn(self, other), "__" name "__", OutDtype::Any);                          \
     })                                                                                               \
      .shape(arithmetic),                                                                             \
      op("aten::__" name "__.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)", \
         [](const Tensor& self, const Scalar& other, Tensor out) {                                    \
           return writeOut(out, fn(self, scalarToTensor(other)), "__" name "__", OutDtype::Any);      \
         })                                                                                           \
          .shape(arithmetic)

// Integer and bool only; `&`, `|` and `^` of C++ on the promoted operands.
#define KILN_BITWISE_SPEC(cpp_op) \
  .pointwise(elementwise(TypeRule::Promote, DtypeSet::IntegralOrBool, "$self " cpp_op " $other"))

KILN_REGISTER_OPS(KILN_BITWISE_OPS("bitwise_and", bitwiseAnd, "Scalar", KILN_BITWISE_SPEC("&")),
                  KILN_BITWISE_OPS("bitwise_or", bitwiseOr, "Scalar", KILN_BITWISE_SPEC("|")),
                  KILN_BITWISE_OPS("bitwise_xor", bitwiseXor, "Scalar", KILN_BITWISE_SPEC("^")),
                  KILN_BITWISE_OPS("bitwise_left_shift", bitwiseLeftShift, "Tensor_Scalar", ),
                  KILN_BITWISE_OPS("bitwise_right_shift", bitwiseRightShift, "Tensor_Scalar", ),
                  KILN_DUNDER_OPS("and", bitwiseAnd, KILN_BITWISE_SPEC("&")),
                  KILN_DUNDER_OPS("or", bitwiseOr, KILN_BITWISE_SPEC("|")),
                  KILN_DUNDER_OPS("xor", bitwiseXor, KILN_BITWISE_SPEC("^")),
                  KILN_DUNDER_OPS("lshift", bitwiseLeftShift, ), KILN_DUNDER_OPS("rshift", bitwiseRightShift, ),
                  KILN_DUNDER_SHIFT_OUT_OPS("lshift", bitwiseLeftShift),
                  KILN_DUNDER_SHIFT_OUT_OPS("rshift", bitwiseRightShift), );

#undef KILN_BITWISE_SPEC
#undef KILN_DUNDER_SHIFT_OUT_OPS
#undef KILN_DUNDER_OPS
#undef KILN_BITWISE_OPS

// clamp and its alias clip; `ScalarForm`, `TensorForm`, `OutForm` and `Inplace`
// complete the descriptions of the functional Scalar and Tensor forms, the
// out= and the in-place forms.
#define KILN_CLAMP_OPS(name, ScalarForm, TensorForm, OutForm, Inplace)                                            \
  op("aten::" name "(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",                                 \
     [](const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {                 \
       return clamp(self, min, max);                                                                              \
     }) ScalarForm,                                                                                               \
      op("aten::" name ".Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",                      \
         [](const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {             \
           return clamp(self, min.value_or(Tensor()), max.value_or(Tensor()));                                    \
         }) TensorForm,                                                                                           \
      op("aten::" name ".out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)",  \
         [](const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max, Tensor out) { \
           return clampOut(self, min, max, out);                                                                  \
         }) OutForm,                                                                                              \
      op("aten::" name                                                                                            \
         ".Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out) -> Tensor(a!)",         \
         [](const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max, Tensor out) { \
           return clampOut(self, min.value_or(Tensor()), max.value_or(Tensor()), out);                            \
         }) OutForm,                                                                                              \
      op("aten::" name "_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",                    \
         [](Tensor self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {                    \
           return clamp_(self, min, max);                                                                         \
         }) Inplace,                                                                                              \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",             \
         [](Tensor self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {                    \
           return clamp_(self, min.value_or(Tensor()), max.value_or(Tensor()));                                   \
         }) Inplace

// clamp_min and clamp_max: `arg` is the bound's name in the schema;
// `min_bound, max_bound` place the lambda's `bound` on the side it clamps;
// the functional forms compute `scalar_spec` and `tensor_spec`.
#define KILN_CLAMP_SIDE_OPS(name, arg, fn, min_bound, max_bound, rule, scalar_spec, tensor_spec, ScalarDerivative, \
                            TensorDerivative)                                                                      \
  op("aten::" name "(Tensor self, Scalar " arg ") -> Tensor",                                                      \
     [](const Tensor& self, const Scalar& bound) { return fn(self, bound); })                                      \
      .shape(rule)                                                                                                 \
      .pointwise(scalar_spec) ScalarDerivative,                                                                    \
      op("aten::" name ".Tensor(Tensor self, Tensor " arg ") -> Tensor",                                           \
         [](const Tensor& self, const Tensor& bound) { return clamp(self, min_bound, max_bound); })                \
          .shape(rule)                                                                                             \
          .pointwise(tensor_spec) TensorDerivative,                                                                \
      op("aten::" name ".out(Tensor self, Scalar " arg ", *, Tensor(a!) out) -> Tensor(a!)",                       \
         [](const Tensor& self, const Scalar& bound, Tensor out) { return fn##Out(self, bound, out); })            \
          .shape(rule),                                                                                            \
      op("aten::" name ".Tensor_out(Tensor self, Tensor " arg ", *, Tensor(a!) out) -> Tensor(a!)",                \
         [](const Tensor& self, const Tensor& bound, Tensor out) {                                                 \
           return clampOut(self, min_bound, max_bound, out);                                                       \
         })                                                                                                        \
          .shape(rule),                                                                                            \
      op("aten::" name "_(Tensor(a!) self, Scalar " arg ") -> Tensor(a!)",                                         \
         [](Tensor self, const Scalar& bound) { return fn##_(self, bound); }),                                     \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor " arg ") -> Tensor(a!)",                                  \
         [](Tensor self, const Tensor& bound) { return clamp_(self, min_bound, max_bound); })

KILN_REGISTER_OPS(
    KILN_CLAMP_OPS(
        "clamp",
        .shape(clampOp)
            .pointwise(elementwise(TypeRule::Promote, DtypeSet::NoBool, nullptr, checkClampScalar, emitClampScalar))
            .derivative({"self: grad * (self.clamp(min, max) == self)", "grad_fn: ClampBackward1"}),
        .shape(clampOp)
            .pointwise(elementwise(TypeRule::Promote, DtypeSet::All, nullptr, checkClampTensor, emitClampTensor))
            .derivative({"self: _clamp_backward(grad, self, min, max)",
                         "min: _clamp_backward_min(grad, self, min, max)",
                         "max: _clamp_backward_max(grad, self, min, max)", "grad_fn: ClampBackward0"}),
        .shape(clampOp), ),
    KILN_CLAMP_OPS("clip", .shape(clampOp).aliasOf("aten::clamp"), .shape(clampOp).aliasOf("aten::clamp"),
                   .shape(clampOp).aliasOf("aten::clamp"), .aliasOf("aten::clamp_")),
    KILN_CLAMP_SIDE_OPS("clamp_min", "min", clampMin, bound, Tensor(), clampMinOp,
                        elementwise(TypeRule::Promote, DtypeSet::NoBool, "k_clamp_min($self, $min)", checkClampMin),
                        elementwise(TypeRule::Promote, DtypeSet::All, "k_maximum($self, $min)"),
                        .derivative({"self: torch.where(self >= min, grad, 0.)"}),
                        .derivative({"self: torch.where(self >= min, grad, 0.)",
                                     "min: torch.where(self < min, grad, 0.)", "grad_fn: ClampMinBackward1"})),
    KILN_CLAMP_SIDE_OPS("clamp_max", "max", clampMax, Tensor(), bound, clampMaxOp,
                        elementwise(TypeRule::Promote, DtypeSet::NoBool, "k_clamp_max($self, $max)", checkClampMax),
                        elementwise(TypeRule::Promote, DtypeSet::All, "k_minimum($self, $max)"),
                        .derivative({"self: torch.where(self <= max, grad, 0.)"}),
                        .derivative({"self: torch.where(self <= max, grad, 0.)",
                                     "max: torch.where(self > max, grad, 0.)", "grad_fn: ClampMaxBackward1"})), );

#undef KILN_CLAMP_SIDE_OPS
#undef KILN_CLAMP_OPS

// addcmul and addcdiv; the functional form computes `spec`.
#define KILN_ADDC_OPS(name, fn, spec, Derivative)                                                                \
  op("aten::" name "(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",                 \
     [](const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {                 \
       return fn(self, tensor1, tensor2, value);                                                                 \
     })                                                                                                          \
      .shape(addcOp)                                                                                             \
      .pointwise(spec) Derivative,                                                                               \
      op("aten::" name "_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)",    \
         [](Tensor self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {                    \
           return fn##_(self, tensor1, tensor2, value);                                                          \
         }),                                                                                                     \
      op("aten::" name                                                                                           \
         ".out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) out) -> Tensor(a!)",   \
         [](const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value, Tensor out) { \
           return fn##Out(self, tensor1, tensor2, value, out);                                                   \
         })                                                                                                      \
          .shape(addcOp)

// where reads its condition as bool: the other operands promote.
const auto selection = elementwise(TypeRule::Promote, DtypeSet::All, "$condition ? $self : $other", checkWhere);

KILN_REGISTER_OPS(
    KILN_ADDC_OPS("addcmul", addcmul,
                  elementwise(TypeRule::Promote, DtypeSet::NoBool, "k_addcmul($self, ($T)$value, $tensor1, $tensor2)",
                              checkAddcmul),
                  .derivative({"self: grad", "tensor1: grad * tensor2 * value", "tensor2: grad * tensor1 * value"})),
    KILN_ADDC_OPS("addcdiv", addcdiv,
                  elementwise(TypeRule::Promote, DtypeSet::Floating, "$self + ($T)$value * $tensor1 / $tensor2",
                              checkAddcdiv),
                  .derivative({"self: grad", "tensor1: grad * value / tensor2",
                               "tensor2: -grad * value * tensor1 / (tensor2 * tensor2)"})),

    op("aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
       [](const Tensor& condition, const Tensor& self, const Tensor& other) { return where(condition, self, other); })
        .derivative({"self: torch.where(condition, grad, 0.)", "other: torch.where(condition, 0., grad)"})
        .shape(whereOp)
        .pointwise(selection),
    op("aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
       [](const Tensor& condition, const Scalar& self, const Tensor& other) {
         return where(condition, scalarToTensor(self), other);
       })
        .derivative({"other: torch.where(condition, 0., grad)", "grad_fn: WhereBackward0"})
        .shape(whereOp)
        .pointwise(selection),
    op("aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
       [](const Tensor& condition, const Tensor& self, const Scalar& other) {
         return where(condition, self, scalarToTensor(other));
       })
        .derivative({"self: torch.where(condition, grad, 0.)", "grad_fn: WhereBackward0"})
        .shape(whereOp)
        .pointwise(selection),
    op("aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor",
       [](const Tensor& condition, const Scalar& self, const Scalar& other) {
         return where(condition, scalarToTensor(self), scalarToTensor(other));
       })
        .shape(whereOp)
        .pointwise(selection),
    op("aten::where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& condition, const Tensor& self, const Tensor& other, Tensor out) {
         return whereOut(condition, self, other, out);
       })
        .shape(whereOp),
    op("aten::where(Tensor condition) -> Tensor[]", [](const Tensor& condition) { return where(condition); })
        .shape(whereCondition)
        .traits(OpTrait::ValueDependentShape),

    op("aten::lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor",
       [](const Tensor& self, const Tensor& end, const Scalar& weight) { return lerp(self, end, weight); })
        .derivative({"self: grad * (1 - weight)", "end: grad * weight"})
        .shape(lerpOp)
        .pointwise(elementwise(TypeRule::Promote, DtypeSet::Floating, "k_lerp($self, $end, ($T)$weight)",
                               checkLerpScalar)),
    op("aten::lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor",
       [](const Tensor& self, const Tensor& end, const Tensor& weight) { return lerp(self, end, weight); })
        .derivative({"self: grad * (1 - weight)", "end: grad * weight", "weight: grad * (end - self)",
                     "grad_fn: LerpBackward1"})
        .shape(lerpOp)
        .pointwise(elementwise(TypeRule::Promote, DtypeSet::Floating, "k_lerp($self, $end, $weight)", checkLerpTensor)),
    op("aten::lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& end, const Scalar& weight, Tensor out) {
         return lerpOut(self, end, weight, out);
       })
        .shape(lerpOp),
    op("aten::lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& end, const Tensor& weight, Tensor out) {
         return lerpOut(self, end, weight, out);
       })
        .shape(lerpOp),
    op("aten::lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)",
       [](Tensor self, const Tensor& end, const Scalar& weight) { return lerp_(self, end, weight); }),
    op("aten::lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)",
       [](Tensor self, const Tensor& end, const Tensor& weight) { return lerp_(self, end, weight); }), );

#undef KILN_ADDC_OPS

}  // namespace
}  // namespace kiln
