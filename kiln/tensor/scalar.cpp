#include "kiln/tensor/scalar.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>

#include "kiln/tensor/scalar_convert.h"
#include "kiln/util/error.h"

namespace kiln {

Scalar Scalar::operator-() const {
  switch (kind_) {
    case Kind::Double: return Scalar(-value_.d);
    case Kind::Int: return Scalar(-value_.i);
    // Stays a bool: sub and rsub negate alpha, and PyTorch rejects a bool
    // alpha (for non-bool results) before negating it.
    case Kind::Bool: return *this;
    case Kind::Complex: return Scalar(-toComplexDouble());
  }
  return *this;
}

bool Scalar::equal(const Scalar& other) const {
  if (kind_ == Kind::Complex || other.kind_ == Kind::Complex) return toComplexDouble() == other.toComplexDouble();
  if (kind_ == Kind::Double || other.kind_ == Kind::Double) return toDouble() == other.toDouble();
  return value_.i == other.value_.i;
}

std::ostream& operator<<(std::ostream& out, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Double: return out << s.toDouble();
    case Scalar::Kind::Int: return out << s.toLong();
    case Scalar::Kind::Bool: return out << (s.toBool() ? "True" : "False");
    case Scalar::Kind::Complex: {
      const std::complex<double> z = s.toComplexDouble();
      return out << z.real() << (z.imag() >= 0 ? "+" : "-") << std::fabs(z.imag()) << "j";
    }
  }
  return out;
}

namespace {

struct Range {
  double lowest, max;
  bool is_floating, is_unsigned;
  const char* name;  // c10's spelling, as in its overflow message
};

template <typename T>
constexpr Range rangeOf(const char* name) {
  using Limits = std::numeric_limits<T>;
  return {static_cast<double>(Limits::lowest()), static_cast<double>(Limits::max()), !Limits::is_integer,
          !Limits::is_signed, name};
}

Range rangeOf(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Byte: return rangeOf<uint8_t>("uint8_t");
    case ScalarType::Char: return rangeOf<int8_t>("int8_t");
    case ScalarType::Short: return rangeOf<int16_t>("int16_t");
    case ScalarType::Int: return rangeOf<int32_t>("int");
    case ScalarType::Long: return rangeOf<int64_t>("int64_t");
    case ScalarType::Float: return rangeOf<float>("float");
    case ScalarType::Double: return rangeOf<double>("double");
    case ScalarType::Half: return {-65504.0, 65504.0, true, false, "at::Half"};
    case ScalarType::BFloat16: return {-0x1.fep127, 0x1.fep127, true, false, "at::BFloat16"};
    default: return {0, 0, false, false, "bool"};
  }
}

}  // namespace

bool scalarFits(const Scalar& s, ScalarType dtype) {
  // Bool results and bool numbers never overflow.
  if (dtype == ScalarType::Bool || s.isBoolean() || isComplexType(dtype)) return true;
  // A complex number goes only into complex tensors (c10: "value cannot be
  // converted to type float without overflow" for a nonzero imaginary part).
  if (s.isComplex() && s.toComplexDouble().imag() != 0) return false;
  const Range r = rangeOf(dtype);
  if (s.isFloatingPoint()) {
    const double d = s.toDouble();
    if (std::isnan(d) || std::isinf(d)) return r.is_floating;
    // int64's max rounds up to 2^63 as a double, which does not fit.
    if (dtype == ScalarType::Long) return d >= r.lowest && d < r.max;
    return d >= r.lowest && d <= r.max;
  }
  const int64_t i = s.toLong();
  if (dtype == ScalarType::Long || dtype == ScalarType::Float || dtype == ScalarType::Double) return true;
  if (r.is_unsigned) {
    const uint64_t magnitude = i < 0 ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
    return static_cast<double>(magnitude) <= r.max;
  }
  return static_cast<double>(i) >= r.lowest && static_cast<double>(i) <= r.max;
}

void checkScalarFits(const Scalar& s, ScalarType dtype) {
  KILN_CHECK(scalarFits(s, dtype), "value cannot be converted to type ", rangeOf(dtype).name, " without overflow");
}

}  // namespace kiln
