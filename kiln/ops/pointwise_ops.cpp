// aten:: registrations of the pointwise tensor ops, with PyTorch 1.13's schemas.
// Python numbers in `Scalar` slots become 0-dim wrapped numbers, so they
// promote as PyTorch's scalars do. Families whose schemas differ only in the
// op name (unary ops, comparisons, bitwise ops) are spelled by macros; each
// expands to PyTorch's exact schema text.
//
// Some out= forms (add.Scalar_out, the Scalar_Tensor_out forms, ...) are ones
// PyTorch generates from the functional op: the result is computed as usual,
// then copied into `out` whatever its dtype (writeOut with OutDtype::Any).
#include "kiln/core/op_registration.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

// `name` and `name.out` of a unary op; KILN_UNARY_OPS adds `name_`.
#define KILN_UNARY_FUNCTIONAL_AND_OUT_OPS(name, fn)                                                    \
  op("aten::" name "(Tensor self) -> Tensor", [](const Tensor& self) { return fn(self); }),           \
      op("aten::" name ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",                          \
         [](const Tensor& self, Tensor out) { return fn##Out(self, out); })
#define KILN_UNARY_OPS(name, fn)                                                                       \
  KILN_UNARY_FUNCTIONAL_AND_OUT_OPS(name, fn),                                                         \
      op("aten::" name "_(Tensor(a!) self) -> Tensor(a!)", [](Tensor self) { return fn##_(self); })

KILN_REGISTER_OPS(
    // The builtin `abs(x)` of TorchScript on a tensor.
    op("prim::abs(Tensor x) -> Tensor", [](const Tensor& x) { return abs(x); }),
    KILN_UNARY_OPS("neg", neg), KILN_UNARY_OPS("negative", neg), KILN_UNARY_OPS("abs", abs),
    KILN_UNARY_OPS("absolute", abs), KILN_UNARY_OPS("exp", exp), KILN_UNARY_OPS("log", log),
    KILN_UNARY_OPS("log1p", log1p), KILN_UNARY_OPS("expm1", expm1), KILN_UNARY_OPS("sqrt", sqrt),
    KILN_UNARY_OPS("rsqrt", rsqrt), KILN_UNARY_OPS("sin", sin), KILN_UNARY_OPS("cos", cos),
    KILN_UNARY_OPS("tan", tan), KILN_UNARY_OPS("tanh", tanh), KILN_UNARY_OPS("sigmoid", sigmoid),
    KILN_UNARY_OPS("relu", relu), KILN_UNARY_OPS("erf", erf), KILN_UNARY_OPS("floor", floor),
    KILN_UNARY_OPS("ceil", ceil), KILN_UNARY_OPS("round", round), KILN_UNARY_OPS("trunc", trunc),
    KILN_UNARY_OPS("fix", trunc), KILN_UNARY_OPS("sign", sign), KILN_UNARY_OPS("reciprocal", reciprocal),
    KILN_UNARY_OPS("logical_not", logicalNot), KILN_UNARY_OPS("bitwise_not", bitwiseNot),
    KILN_UNARY_OPS("log10", log10), KILN_UNARY_OPS("erfc", erfc), KILN_UNARY_OPS("lgamma", lgamma),
    KILN_UNARY_OPS("asin", asin), KILN_UNARY_OPS("arcsin", asin), KILN_UNARY_OPS("acos", acos),
    KILN_UNARY_OPS("arccos", acos), KILN_UNARY_OPS("atan", atan), KILN_UNARY_OPS("arctan", atan),
    KILN_UNARY_OPS("sinh", sinh), KILN_UNARY_OPS("cosh", cosh), KILN_UNARY_OPS("asinh", asinh),
    KILN_UNARY_OPS("arcsinh", asinh), KILN_UNARY_OPS("acosh", acosh), KILN_UNARY_OPS("arccosh", acosh),
    KILN_UNARY_OPS("atanh", atanh), KILN_UNARY_OPS("arctanh", atanh),
    KILN_UNARY_FUNCTIONAL_AND_OUT_OPS("angle", angle), KILN_UNARY_FUNCTIONAL_AND_OUT_OPS("isnan", isnan),
    KILN_UNARY_FUNCTIONAL_AND_OUT_OPS("isinf", isinf), KILN_UNARY_FUNCTIONAL_AND_OUT_OPS("isposinf", isposinf),
    KILN_UNARY_FUNCTIONAL_AND_OUT_OPS("isneginf", isneginf),
    op("aten::isfinite(Tensor self) -> Tensor", [](const Tensor& self) { return isfinite(self); }),

    op("aten::frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)",
       [](const Tensor& self) { return frexp(self); }),
    op("aten::frexp.Tensor_out(Tensor self, *, Tensor(a!) mantissa, Tensor(b!) exponent) -> "
       "(Tensor(a!) mantissa, Tensor(b!) exponent)",
       [](const Tensor& self, Tensor mantissa, Tensor exponent) { return frexpOut(self, mantissa, exponent); }),

    op("aten::round.decimals(Tensor self, *, int decimals) -> Tensor",
       [](const Tensor& self, int64_t decimals) { return round(self, decimals); }),
    op("aten::round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)",
       [](Tensor self, int64_t decimals) { return round_(self, decimals); }),
    op("aten::round.decimals_out(Tensor self, *, int decimals, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t decimals, Tensor out) { return roundOut(self, decimals, out); }),

    op("aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor",
       [](const Tensor& self, const std::string& approximate) { return gelu(self, approximate); }),
    op("aten::gelu_(Tensor(a!) self, *, str approximate=\"none\") -> Tensor(a!)",
       [](Tensor self, const std::string& approximate) { return gelu_(self, approximate); }),
    op("aten::gelu.out(Tensor self, *, str approximate=\"none\", Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::string& approximate, Tensor out) {
         return geluOut(self, approximate, out);
       }), );

#undef KILN_UNARY_OPS
#undef KILN_UNARY_FUNCTIONAL_AND_OUT_OPS

// The five shared forms of sub and its alias subtract.
#define KILN_SUB_OPS(name)                                                                                         \
  op("aten::" name ".Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",                              \
     [](const Tensor& self, const Tensor& other, const Scalar& alpha) { return sub(self, other, alpha); }),        \
      op("aten::" name ".Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",                             \
         [](const Tensor& self, const Scalar& other, const Scalar& alpha) {                                        \
           return sub(self, scalarToTensor(other), alpha);                                                         \
         }),                                                                                                       \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",                 \
         [](Tensor self, const Tensor& other, const Scalar& alpha) { return sub_(self, other, alpha); }),          \
      op("aten::" name "_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",                    \
         [](Tensor self, const Scalar& other, const Scalar& alpha) {                                               \
           return sub_(self, scalarToTensor(other), alpha);                                                        \
         }),                                                                                                       \
      op("aten::" name ".out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",         \
         [](const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out) {                            \
           return subOut(self, other, alpha, out);                                                                 \
         })

KILN_REGISTER_OPS(
    op("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Tensor& other, const Scalar& alpha) { return add(self, other, alpha); }),
    op("aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Scalar& other, const Scalar& alpha) {
         return add(self, scalarToTensor(other), alpha);
       }),
    op("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Tensor& other, const Scalar& alpha) { return add_(self, other, alpha); }),
    op("aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Scalar& other, const Scalar& alpha) {
         return add_(self, scalarToTensor(other), alpha);
       }),
    op("aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out) {
         return addOut(self, other, alpha, out);
       }),
    op("aten::add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, const Scalar& alpha, Tensor out) {
         return writeOut(out, add(self, scalarToTensor(other), alpha), "add", OutDtype::Any);
       }),

    KILN_SUB_OPS("sub"), KILN_SUB_OPS("subtract"),
    op("aten::sub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, const Scalar& alpha, Tensor out) {
         return writeOut(out, sub(self, scalarToTensor(other), alpha), "sub", OutDtype::Any);
       }),

    op("aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Tensor& other, const Scalar& alpha) { return rsub(self, other, alpha); }),
    op("aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Scalar& other, const Scalar& alpha) {
         return rsub(self, scalarToTensor(other), alpha);
       }),
    op("aten::rsub.Tensor_out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out) {
         return rsubOut(self, other, alpha, out);
       }),
    op("aten::rsub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, const Scalar& alpha, Tensor out) {
         return rsubOut(self, scalarToTensor(other), alpha, out);
       }), );

#undef KILN_SUB_OPS

// mul and its alias multiply.
#define KILN_MUL_OPS(name)                                                                                        \
  op("aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor",                                                \
     [](const Tensor& self, const Tensor& other) { return mul(self, other); }),                                   \
      op("aten::" name ".Scalar(Tensor self, Scalar other) -> Tensor",                                            \
         [](const Tensor& self, const Scalar& other) { return mul(self, scalarToTensor(other)); }),               \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",                                   \
         [](Tensor self, const Tensor& other) { return mul_(self, other); }),                                     \
      op("aten::" name "_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",                                   \
         [](Tensor self, const Scalar& other) { return mul_(self, scalarToTensor(other)); }),                     \
      op("aten::" name ".out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",                        \
         [](const Tensor& self, const Tensor& other, Tensor out) { return mulOut(self, other, out); })

// div and its alias divide (true_divide is the same without rounding modes).
#define KILN_DIV_OPS(name)                                                                                        \
  op("aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor",                                                \
     [](const Tensor& self, const Tensor& other) { return div(self, other); }),                                   \
      op("aten::" name ".Scalar(Tensor self, Scalar other) -> Tensor",                                            \
         [](const Tensor& self, const Scalar& other) { return div(self, scalarToTensor(other)); }),               \
      op("aten::" name ".Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",                \
         [](const Tensor& self, const Tensor& other, const std::optional<std::string>& mode) {                    \
           return div(self, other, mode);                                                                         \
         }),                                                                                                      \
      op("aten::" name ".Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",                \
         [](const Tensor& self, const Scalar& other, const std::optional<std::string>& mode) {                    \
           return div(self, scalarToTensor(other), mode);                                                         \
         }),                                                                                                      \
      op("aten::" name ".out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",                        \
         [](const Tensor& self, const Tensor& other, Tensor out) { return divOut(self, other, std::nullopt, out); }), \
      op("aten::" name ".out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)", \
         [](const Tensor& self, const Tensor& other, const std::optional<std::string>& mode, Tensor out) {        \
           return divOut(self, other, mode, out);                                                                 \
         }),                                                                                                      \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",                                   \
         [](Tensor self, const Tensor& other) { return div_(self, other); }),                                     \
      op("aten::" name "_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",                                   \
         [](Tensor self, const Scalar& other) { return div_(self, scalarToTensor(other)); }),                     \
      op("aten::" name "_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)",       \
         [](Tensor self, const Tensor& other, const std::optional<std::string>& mode) {                           \
           return div_(self, other, mode);                                                                        \
         }),                                                                                                      \
      op("aten::" name "_.Scalar_mode(Tensor(a!) self, Scalar other, *, str? rounding_mode) -> Tensor(a!)",       \
         [](Tensor self, const Scalar& other, const std::optional<std::string>& mode) {                           \
           return div_(self, scalarToTensor(other), mode);                                                        \
         })

KILN_REGISTER_OPS(
    KILN_MUL_OPS("mul"), KILN_MUL_OPS("multiply"),
    op("aten::mul.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, Tensor out) {
         return writeOut(out, mul(self, scalarToTensor(other)), "mul", OutDtype::Any);
       }),

    KILN_DIV_OPS("div"), KILN_DIV_OPS("divide"),
    op("aten::div.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, Tensor out) {
         return writeOut(out, div(self, scalarToTensor(other)), "div", OutDtype::Any);
       }),
    op("aten::div.Scalar_mode_out(Tensor self, Scalar other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, const std::optional<std::string>& mode, Tensor out) {
         return writeOut(out, div(self, scalarToTensor(other), mode), "div", OutDtype::Any);
       }),
    op("aten::true_divide.Tensor(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return div(self, other); }),
    op("aten::true_divide.Scalar(Tensor self, Scalar other) -> Tensor",
       [](const Tensor& self, const Scalar& other) { return div(self, scalarToTensor(other)); }),
    op("aten::true_divide.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return divOut(self, other, std::nullopt, out); }),
    op("aten::true_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       [](Tensor self, const Tensor& other) { return div_(self, other); }),
    op("aten::true_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
       [](Tensor self, const Scalar& other) { return div_(self, scalarToTensor(other)); }),

    op("aten::floor_divide(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return floorDivide(self, other); }),
    op("aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor",
       [](const Tensor& self, const Scalar& other) { return floorDivide(self, scalarToTensor(other)); }),
    op("aten::floor_divide.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return floorDivideOut(self, other, out); }),
    op("aten::floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       [](Tensor self, const Tensor& other) { return floorDivide_(self, other); }),
    op("aten::floor_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
       [](Tensor self, const Scalar& other) { return floorDivide_(self, scalarToTensor(other)); }), );

#undef KILN_DIV_OPS
#undef KILN_MUL_OPS

// The Tensor/Scalar forms of remainder and fmod.
#define KILN_MOD_OPS(name, fn)                                                                                    \
  op("aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor",                                                \
     [](const Tensor& self, const Tensor& other) { return fn(self, other); }),                                    \
      op("aten::" name ".Scalar(Tensor self, Scalar other) -> Tensor",                                            \
         [](const Tensor& self, const Scalar& other) { return fn(self, scalarToTensor(other)); }),                \
      op("aten::" name ".Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",                 \
         [](const Tensor& self, const Tensor& other, Tensor out) { return fn##Out(self, other, out); }),          \
      op("aten::" name ".Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",                 \
         [](const Tensor& self, const Scalar& other, Tensor out) {                                                \
           return fn##Out(self, scalarToTensor(other), out);                                                      \
         }),                                                                                                      \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",                                   \
         [](Tensor self, const Tensor& other) { return fn##_(self, other); }),                                    \
      op("aten::" name "_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",                                   \
         [](Tensor self, const Scalar& other) { return fn##_(self, scalarToTensor(other)); })

// `name(Tensor self, Tensor other)` and its out= form; the in-place form
// separately (maximum and minimum have none).
#define KILN_TENSOR_BINARY_OPS(name, fn)                                                                          \
  op("aten::" name "(Tensor self, Tensor other) -> Tensor",                                                       \
     [](const Tensor& self, const Tensor& other) { return fn(self, other); }),                                    \
      op("aten::" name ".out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",                        \
         [](const Tensor& self, const Tensor& other, Tensor out) { return fn##Out(self, other, out); })
#define KILN_TENSOR_BINARY_INPLACE_OP(name, fn)                  \
  op("aten::" name "_(Tensor(a!) self, Tensor other) -> Tensor(a!)", \
     [](Tensor self, const Tensor& other) { return fn##_(self, other); })

KILN_REGISTER_OPS(
    KILN_MOD_OPS("remainder", remainder), KILN_MOD_OPS("fmod", fmod),
    op("aten::remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor",
       [](const Scalar& self, const Tensor& other) { return remainder(scalarToTensor(self), other); }),
    op("aten::remainder.Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& self, const Tensor& other, Tensor out) {
         return writeOut(out, remainder(scalarToTensor(self), other), "remainder", OutDtype::Any);
       }),

    op("aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
       [](const Tensor& self, const Tensor& exponent) { return pow(self, exponent); }),
    op("aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
       [](const Tensor& self, const Scalar& exponent) { return pow(self, exponent); }),
    op("aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor",
       [](const Scalar& self, const Tensor& exponent) { return pow(self, exponent); }),
    op("aten::pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& exponent, Tensor out) { return powOut(self, exponent, out); }),
    op("aten::pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& exponent, Tensor out) { return powOut(self, exponent, out); }),
    op("aten::pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Scalar& self, const Tensor& exponent, Tensor out) { return powOut(self, exponent, out); }),
    op("aten::pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
       [](Tensor self, const Tensor& exponent) { return pow_(self, exponent); }),
    op("aten::pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
       [](Tensor self, const Scalar& exponent) { return pow_(self, exponent); }),

    KILN_TENSOR_BINARY_OPS("atan2", atan2), KILN_TENSOR_BINARY_INPLACE_OP("atan2", atan2),
    KILN_TENSOR_BINARY_OPS("gcd", gcd), KILN_TENSOR_BINARY_INPLACE_OP("gcd", gcd),
    KILN_TENSOR_BINARY_INPLACE_OP("ldexp", ldexp),
    op("aten::ldexp.Tensor(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return ldexp(self, other); }),
    op("aten::ldexp.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return ldexpOut(self, other, out); }),

    op("aten::copysign.Tensor(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return copysign(self, other); }),
    op("aten::copysign.Scalar(Tensor self, Scalar other) -> Tensor",
       [](const Tensor& self, const Scalar& other) { return copysign(self, scalarToTensor(other)); }),
    op("aten::copysign.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return copysignOut(self, other, out); }),
    op("aten::copysign.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& other, Tensor out) {
         return copysignOut(self, scalarToTensor(other), out);
       }),
    op("aten::copysign_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       [](Tensor self, const Tensor& other) { return copysign_(self, other); }),
    op("aten::copysign_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
       [](Tensor self, const Scalar& other) { return copysign_(self, scalarToTensor(other)); }),

    KILN_TENSOR_BINARY_OPS("arctan2", atan2), KILN_TENSOR_BINARY_INPLACE_OP("arctan2", atan2),
    KILN_TENSOR_BINARY_OPS("maximum", maximum), KILN_TENSOR_BINARY_OPS("minimum", minimum),
    KILN_TENSOR_BINARY_OPS("logical_and", logicalAnd), KILN_TENSOR_BINARY_INPLACE_OP("logical_and", logicalAnd),
    KILN_TENSOR_BINARY_OPS("logical_or", logicalOr), KILN_TENSOR_BINARY_INPLACE_OP("logical_or", logicalOr),
    KILN_TENSOR_BINARY_OPS("logical_xor", logicalXor), KILN_TENSOR_BINARY_INPLACE_OP("logical_xor", logicalXor), );

#undef KILN_TENSOR_BINARY_INPLACE_OP
#undef KILN_TENSOR_BINARY_OPS
#undef KILN_MOD_OPS

// The six forms of a comparison.
#define KILN_COMPARISON_OPS(name, fn)                                                                             \
  op("aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor",                                                \
     [](const Tensor& self, const Tensor& other) { return fn(self, other); }),                                    \
      op("aten::" name ".Scalar(Tensor self, Scalar other) -> Tensor",                                            \
         [](const Tensor& self, const Scalar& other) { return fn(self, scalarToTensor(other)); }),                \
      op("aten::" name ".Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",                 \
         [](const Tensor& self, const Tensor& other, Tensor out) { return fn##Out(self, other, out); }),          \
      op("aten::" name ".Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",                 \
         [](const Tensor& self, const Scalar& other, Tensor out) {                                                \
           return fn##Out(self, scalarToTensor(other), out);                                                      \
         }),                                                                                                      \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",                                   \
         [](Tensor self, const Tensor& other) { return fn##_(self, other); }),                                    \
      op("aten::" name "_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",                                   \
         [](Tensor self, const Scalar& other) { return fn##_(self, scalarToTensor(other)); })

KILN_REGISTER_OPS(KILN_COMPARISON_OPS("eq", eq), KILN_COMPARISON_OPS("ne", ne), KILN_COMPARISON_OPS("lt", lt),
                  KILN_COMPARISON_OPS("le", le), KILN_COMPARISON_OPS("gt", gt), KILN_COMPARISON_OPS("ge", ge),
                  KILN_COMPARISON_OPS("not_equal", ne), KILN_COMPARISON_OPS("less", lt),
                  KILN_COMPARISON_OPS("less_equal", le), KILN_COMPARISON_OPS("greater", gt),
                  KILN_COMPARISON_OPS("greater_equal", ge), );

#undef KILN_COMPARISON_OPS


// bitwise_and/or/xor and shifts: Tensor, Scalar and Scalar-first forms.
#define KILN_BITWISE_OPS(name, fn, tensor_scalar)                                                                 \
  op("aten::" name ".Tensor(Tensor self, Tensor other) -> Tensor",                                                \
     [](const Tensor& self, const Tensor& other) { return fn(self, other); }),                                    \
      op("aten::" name "." tensor_scalar "(Tensor self, Scalar other) -> Tensor",                                 \
         [](const Tensor& self, const Scalar& other) { return fn(self, scalarToTensor(other)); }),                \
      op("aten::" name ".Scalar_Tensor(Scalar self, Tensor other) -> Tensor",                                     \
         [](const Scalar& self, const Tensor& other) { return fn(scalarToTensor(self), other); }),                \
      op("aten::" name ".Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",                 \
         [](const Tensor& self, const Tensor& other, Tensor out) { return fn##Out(self, other, out); }),          \
      op("aten::" name "." tensor_scalar "_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",      \
         [](const Tensor& self, const Scalar& other, Tensor out) {                                                \
           return fn##Out(self, scalarToTensor(other), out);                                                      \
         }),                                                                                                      \
      op("aten::" name ".Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",          \
         [](const Scalar& self, const Tensor& other, Tensor out) {                                                \
           return writeOut(out, fn(scalarToTensor(self), other), name, OutDtype::Any);                            \
         }),                                                                                                      \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",                                   \
         [](Tensor self, const Tensor& other) { return fn##_(self, other); }),                                    \
      op("aten::" name "_." tensor_scalar "(Tensor(a!) self, Scalar other) -> Tensor(a!)",                        \
         [](Tensor self, const Scalar& other) { return fn##_(self, scalarToTensor(other)); })

// The dunder forms (__and__, __iand__, ...): functional and in-place, Tensor and Scalar.
#define KILN_DUNDER_OPS(name, fn)                                                                                 \
  op("aten::__" name "__.Tensor(Tensor self, Tensor other) -> Tensor",                                            \
     [](const Tensor& self, const Tensor& other) { return fn(self, other); }),                                    \
      op("aten::__" name "__.Scalar(Tensor self, Scalar other) -> Tensor",                                        \
         [](const Tensor& self, const Scalar& other) { return fn(self, scalarToTensor(other)); }),                \
      op("aten::__i" name "__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",                               \
         [](Tensor self, const Tensor& other) { return fn##_(self, other); }),                                    \
      op("aten::__i" name "__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",                               \
         [](Tensor self, const Scalar& other) { return fn##_(self, scalarToTensor(other)); })
#define KILN_DUNDER_SHIFT_OUT_OPS(name, fn)                                                                       \
  op("aten::__" name "__.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",                 \
     [](const Tensor& self, const Tensor& other, Tensor out) {                                                    \
       return writeOut(out, fn(self, other), "__" name "__", OutDtype::Any);                                     \
     }),                                                                                                          \
      op("aten::__" name "__.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",             \
         [](const Tensor& self, const Scalar& other, Tensor out) {                                                \
           return writeOut(out, fn(self, scalarToTensor(other)), "__" name "__", OutDtype::Any);                 \
         })

KILN_REGISTER_OPS(KILN_BITWISE_OPS("bitwise_and", bitwiseAnd, "Scalar"),
                  KILN_BITWISE_OPS("bitwise_or", bitwiseOr, "Scalar"),
                  KILN_BITWISE_OPS("bitwise_xor", bitwiseXor, "Scalar"),
                  KILN_BITWISE_OPS("bitwise_left_shift", bitwiseLeftShift, "Tensor_Scalar"),
                  KILN_BITWISE_OPS("bitwise_right_shift", bitwiseRightShift, "Tensor_Scalar"),
                  KILN_DUNDER_OPS("and", bitwiseAnd), KILN_DUNDER_OPS("or", bitwiseOr),
                  KILN_DUNDER_OPS("xor", bitwiseXor), KILN_DUNDER_OPS("lshift", bitwiseLeftShift),
                  KILN_DUNDER_OPS("rshift", bitwiseRightShift),
                  KILN_DUNDER_SHIFT_OUT_OPS("lshift", bitwiseLeftShift),
                  KILN_DUNDER_SHIFT_OUT_OPS("rshift", bitwiseRightShift), );

#undef KILN_DUNDER_SHIFT_OUT_OPS
#undef KILN_DUNDER_OPS
#undef KILN_BITWISE_OPS

// clamp and its alias clip.
#define KILN_CLAMP_OPS(name)                                                                                      \
  op("aten::" name "(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",                                 \
     [](const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {                 \
       return clamp(self, min, max);                                                                              \
     }),                                                                                                          \
      op("aten::" name ".Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",                      \
         [](const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {             \
           return clamp(self, min.value_or(Tensor()), max.value_or(Tensor()));                                    \
         }),                                                                                                      \
      op("aten::" name ".out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)",  \
         [](const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max, Tensor out) { \
           return clampOut(self, min, max, out);                                                                  \
         }),                                                                                                      \
      op("aten::" name                                                                                            \
         ".Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out) -> Tensor(a!)",         \
         [](const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max, Tensor out) { \
           return clampOut(self, min.value_or(Tensor()), max.value_or(Tensor()), out);                            \
         }),                                                                                                      \
      op("aten::" name "_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",                    \
         [](Tensor self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {                    \
           return clamp_(self, min, max);                                                                         \
         }),                                                                                                      \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",             \
         [](Tensor self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {                    \
           return clamp_(self, min.value_or(Tensor()), max.value_or(Tensor()));                                   \
         })

// clamp_min and clamp_max: `arg` is the bound's name in the schema;
// `min_bound, max_bound` place the lambda's `bound` on the side it clamps.
#define KILN_CLAMP_SIDE_OPS(name, arg, fn, min_bound, max_bound)                                                  \
  op("aten::" name "(Tensor self, Scalar " arg ") -> Tensor",                                                     \
     [](const Tensor& self, const Scalar& bound) { return fn(self, bound); }),                                    \
      op("aten::" name ".Tensor(Tensor self, Tensor " arg ") -> Tensor",                                          \
         [](const Tensor& self, const Tensor& bound) { return clamp(self, min_bound, max_bound); }),              \
      op("aten::" name ".out(Tensor self, Scalar " arg ", *, Tensor(a!) out) -> Tensor(a!)",                      \
         [](const Tensor& self, const Scalar& bound, Tensor out) { return fn##Out(self, bound, out); }),          \
      op("aten::" name ".Tensor_out(Tensor self, Tensor " arg ", *, Tensor(a!) out) -> Tensor(a!)",               \
         [](const Tensor& self, const Tensor& bound, Tensor out) {                                                \
           return clampOut(self, min_bound, max_bound, out);                                                      \
         }),                                                                                                      \
      op("aten::" name "_(Tensor(a!) self, Scalar " arg ") -> Tensor(a!)",                                        \
         [](Tensor self, const Scalar& bound) { return fn##_(self, bound); }),                                    \
      op("aten::" name "_.Tensor(Tensor(a!) self, Tensor " arg ") -> Tensor(a!)",                                 \
         [](Tensor self, const Tensor& bound) { return clamp_(self, min_bound, max_bound); })

KILN_REGISTER_OPS(KILN_CLAMP_OPS("clamp"), KILN_CLAMP_OPS("clip"),
                  KILN_CLAMP_SIDE_OPS("clamp_min", "min", clampMin, bound, Tensor()),
                  KILN_CLAMP_SIDE_OPS("clamp_max", "max", clampMax, Tensor(), bound), );

#undef KILN_CLAMP_SIDE_OPS
#undef KILN_CLAMP_OPS

// addcmul and addcdiv.
#define KILN_ADDC_OPS(name, fn)                                                                                   \
  op("aten::" name "(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",                  \
     [](const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {                  \
       return fn(self, tensor1, tensor2, value);                                                                  \
     }),                                                                                                          \
      op("aten::" name "_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)",     \
         [](Tensor self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {                     \
           return fn##_(self, tensor1, tensor2, value);                                                           \
         }),                                                                                                      \
      op("aten::" name                                                                                            \
         ".out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor(a!) out) -> Tensor(a!)",    \
         [](const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value, Tensor out) {   \
           return fn##Out(self, tensor1, tensor2, value, out);                                                    \
         })

KILN_REGISTER_OPS(
    KILN_ADDC_OPS("addcmul", addcmul), KILN_ADDC_OPS("addcdiv", addcdiv),

    op("aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
       [](const Tensor& condition, const Tensor& self, const Tensor& other) { return where(condition, self, other); }),
    op("aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
       [](const Tensor& condition, const Scalar& self, const Tensor& other) {
         return where(condition, scalarToTensor(self), other);
       }),
    op("aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
       [](const Tensor& condition, const Tensor& self, const Scalar& other) {
         return where(condition, self, scalarToTensor(other));
       }),
    op("aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor",
       [](const Tensor& condition, const Scalar& self, const Scalar& other) {
         return where(condition, scalarToTensor(self), scalarToTensor(other));
       }),
    op("aten::where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& condition, const Tensor& self, const Tensor& other, Tensor out) {
         return whereOut(condition, self, other, out);
       }),
    op("aten::where(Tensor condition) -> Tensor[]", [](const Tensor& condition) { return where(condition); }),

    op("aten::lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor",
       [](const Tensor& self, const Tensor& end, const Scalar& weight) { return lerp(self, end, weight); }),
    op("aten::lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor",
       [](const Tensor& self, const Tensor& end, const Tensor& weight) { return lerp(self, end, weight); }),
    op("aten::lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& end, const Scalar& weight, Tensor out) {
         return lerpOut(self, end, weight, out);
       }),
    op("aten::lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& end, const Tensor& weight, Tensor out) {
         return lerpOut(self, end, weight, out);
       }),
    op("aten::lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)",
       [](Tensor self, const Tensor& end, const Scalar& weight) { return lerp_(self, end, weight); }),
    op("aten::lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)",
       [](Tensor self, const Tensor& end, const Tensor& weight) { return lerp_(self, end, weight); }), );

#undef KILN_ADDC_OPS

}  // namespace
}  // namespace kiln
