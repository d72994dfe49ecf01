#pragma once
// Pointwise tensor operations (unary, binary, ternary), with PyTorch's
// broadcasting and type promotion. `_` suffixes write into the first argument;
// `Out` forms write into `out`. Python numbers take part as 0-dim wrapped
// numbers (scalarToTensor), which promote only by category, as in PyTorch.
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kiln/tensor/tensor.h"

namespace kiln {

// The three forms of an op: functional, in-place, out=.
#define KILN_DECLARE_UNARY(name)   \
  Tensor name(const Tensor& self); \
  Tensor& name##_(Tensor& self);   \
  Tensor& name##Out(const Tensor& self, Tensor& out);

// Integer and bool inputs give float32 results.
KILN_DECLARE_UNARY(exp)
KILN_DECLARE_UNARY(log)
KILN_DECLARE_UNARY(log1p)
KILN_DECLARE_UNARY(expm1)
KILN_DECLARE_UNARY(sqrt)
KILN_DECLARE_UNARY(rsqrt)
KILN_DECLARE_UNARY(sin)
KILN_DECLARE_UNARY(cos)
KILN_DECLARE_UNARY(tan)
KILN_DECLARE_UNARY(tanh)
KILN_DECLARE_UNARY(sigmoid)
KILN_DECLARE_UNARY(erf)
KILN_DECLARE_UNARY(erfc)
KILN_DECLARE_UNARY(lgamma)
KILN_DECLARE_UNARY(log10)
KILN_DECLARE_UNARY(asin)
KILN_DECLARE_UNARY(acos)
KILN_DECLARE_UNARY(atan)
KILN_DECLARE_UNARY(sinh)
KILN_DECLARE_UNARY(cosh)
KILN_DECLARE_UNARY(asinh)
KILN_DECLARE_UNARY(acosh)
KILN_DECLARE_UNARY(atanh)
KILN_DECLARE_UNARY(reciprocal)
// The result keeps the input dtype.
KILN_DECLARE_UNARY(neg)
KILN_DECLARE_UNARY(abs)
KILN_DECLARE_UNARY(floor)
KILN_DECLARE_UNARY(ceil)
KILN_DECLARE_UNARY(round)
KILN_DECLARE_UNARY(trunc)
KILN_DECLARE_UNARY(sign)
KILN_DECLARE_UNARY(relu)
KILN_DECLARE_UNARY(bitwiseNot)
// The result is bool.
KILN_DECLARE_UNARY(logicalNot)
#undef KILN_DECLARE_UNARY

// The argument of a real number: pi for x < 0, else 0; NaN stays NaN.
// Integer and bool inputs give float32 results.
Tensor angle(const Tensor& self);
Tensor& angleOut(const Tensor& self, Tensor& out);

// Class tests with bool results; integers and bool are never NaN or infinite.
// isnan and isinf write any out= dtype, isposinf and isneginf only bool.
Tensor isnan(const Tensor& self);
Tensor& isnanOut(const Tensor& self, Tensor& out);
Tensor isinf(const Tensor& self);
Tensor& isinfOut(const Tensor& self, Tensor& out);
Tensor isposinf(const Tensor& self);
Tensor& isposinfOut(const Tensor& self, Tensor& out);
Tensor isneginf(const Tensor& self);
Tensor& isneginfOut(const Tensor& self, Tensor& out);
Tensor isfinite(const Tensor& self);

// self = mantissa * 2^exponent with 0.5 <= |mantissa| < 1 (float self only;
// the mantissa has self's dtype, the exponent is int32; inf and NaN give
// exponent 0). The out= tensors must have exactly those dtypes.
std::tuple<Tensor, Tensor> frexp(const Tensor& self);
std::tuple<Tensor, Tensor> frexpOut(const Tensor& self, Tensor& mantissa, Tensor& exponent);

// Rounds to `decimals` decimal places (negative: to tens, hundreds, ...), float only.
Tensor round(const Tensor& self, int64_t decimals);
Tensor& round_(Tensor& self, int64_t decimals);
Tensor& roundOut(const Tensor& self, int64_t decimals, Tensor& out);

// approximate: "none" (erf form) or "tanh".
Tensor gelu(const Tensor& self, std::string_view approximate = "none");
Tensor& gelu_(Tensor& self, std::string_view approximate = "none");
Tensor& geluOut(const Tensor& self, std::string_view approximate, Tensor& out);

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& addOut(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out);

// self - alpha * other; bool tensors are rejected as in PyTorch.
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& sub_(Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& subOut(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out);
// other - alpha * self; out= takes any dtype.
Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& rsubOut(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out);

// rounding_mode: none (true division, ints give float32), "trunc" or "floor".
// Integer division by zero with a rounding mode raises ZeroDivisionError.
Tensor div(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode = std::nullopt);
Tensor& div_(Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode = std::nullopt);
Tensor& divOut(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode, Tensor& out);

#define KILN_DECLARE_BINARY(name)                       \
  Tensor name(const Tensor& self, const Tensor& other); \
  Tensor& name##_(Tensor& self, const Tensor& other);   \
  Tensor& name##Out(const Tensor& self, const Tensor& other, Tensor& out);

KILN_DECLARE_BINARY(mul)
KILN_DECLARE_BINARY(floorDivide)
// Python's %: the result has the sign of the divisor.
KILN_DECLARE_BINARY(remainder)
// C's fmod: the result has the sign of the dividend.
KILN_DECLARE_BINARY(fmod)
// Integers follow Python (negative exponents give 0 except for bases 1 and -1).
KILN_DECLARE_BINARY(pow)
KILN_DECLARE_BINARY(atan2)
// |self| with the sign (bit) of other; integer and bool inputs give float32.
KILN_DECLARE_BINARY(copysign)
// Greatest common divisor of |self| and |other|, integers only.
KILN_DECLARE_BINARY(gcd)
// self * 2 ** other, computed as those two ops (so 2 ** other may overflow
// where the product would not, as in PyTorch).
KILN_DECLARE_BINARY(ldexp)
// NaN-propagating elementwise max/min.
KILN_DECLARE_BINARY(maximum)
KILN_DECLARE_BINARY(minimum)
// Comparisons and logical ops give bool (in place: 0/1 in self's dtype).
KILN_DECLARE_BINARY(eq)
KILN_DECLARE_BINARY(ne)
KILN_DECLARE_BINARY(lt)
KILN_DECLARE_BINARY(le)
KILN_DECLARE_BINARY(gt)
KILN_DECLARE_BINARY(ge)
KILN_DECLARE_BINARY(logicalAnd)
KILN_DECLARE_BINARY(logicalOr)
KILN_DECLARE_BINARY(logicalXor)
// Integer and bool only.
KILN_DECLARE_BINARY(bitwiseAnd)
KILN_DECLARE_BINARY(bitwiseOr)
KILN_DECLARE_BINARY(bitwiseXor)
KILN_DECLARE_BINARY(bitwiseLeftShift)
KILN_DECLARE_BINARY(bitwiseRightShift)
#undef KILN_DECLARE_BINARY

// self ** exponent for a Python-number exponent: no broadcasting work, fast
// paths for the common exponents; integers to negative integer powers raise.
Tensor pow(const Tensor& self, const Scalar& exponent);
Tensor& pow_(Tensor& self, const Scalar& exponent);
Tensor& powOut(const Tensor& self, const Scalar& exponent, Tensor& out);
// base ** exponent for a Python-number base.
Tensor pow(const Scalar& self, const Tensor& exponent);
Tensor& powOut(const Scalar& self, const Tensor& exponent, Tensor& out);

// condition ? self : other (condition bool, or uint8 as PyTorch still accepts).
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
Tensor& whereOut(const Tensor& condition, const Tensor& self, const Tensor& other, Tensor& out);
// The indices of the nonzero elements of `condition`, one int64 tensor per dim.
std::vector<Tensor> where(const Tensor& condition);

// Bounds given as numbers; at least one must be given.
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max);
Tensor& clamp_(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max);
Tensor& clampOut(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max, Tensor& out);
// Bounds given as tensors (undefined = none), broadcast with self.
Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max);
Tensor& clamp_(Tensor& self, const Tensor& min, const Tensor& max);
Tensor& clampOut(const Tensor& self, const Tensor& min, const Tensor& max, Tensor& out);
// One-sided clamps; a NaN bound makes every element NaN.
Tensor clampMin(const Tensor& self, const Scalar& min);
Tensor& clampMin_(Tensor& self, const Scalar& min);
Tensor& clampMinOut(const Tensor& self, const Scalar& min, Tensor& out);
Tensor clampMax(const Tensor& self, const Scalar& max);
Tensor& clampMax_(Tensor& self, const Scalar& max);
Tensor& clampMaxOut(const Tensor& self, const Scalar& max, Tensor& out);

// self + value * tensor1 * tensor2
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor& addcmul_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor& addcmulOut(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value, Tensor& out);
// self + value * tensor1 / tensor2 (integer tensor1 and tensor2 are rejected).
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor& addcdiv_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor& addcdivOut(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value, Tensor& out);

// self + weight * (end - self); float tensors of one dtype.
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight);
Tensor& lerp_(Tensor& self, const Tensor& end, const Scalar& weight);
Tensor& lerpOut(const Tensor& self, const Tensor& end, const Scalar& weight, Tensor& out);
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
Tensor& lerp_(Tensor& self, const Tensor& end, const Tensor& weight);
Tensor& lerpOut(const Tensor& self, const Tensor& end, const Tensor& weight, Tensor& out);

}  // namespace kiln
