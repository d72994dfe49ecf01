#pragma once
// A Python number as an op argument: int, float, bool or complex, kept exactly.
#include <complex>
#include <cstdint>
#include <iosfwd>
#include <type_traits>

#include "kiln/tensor/scalar_type.h"

namespace kiln {

class Scalar {
 public:
  enum class Kind : uint8_t { Int, Double, Bool, Complex };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(double v) : kind_(Kind::Double) { value_.d = v; }
  Scalar(float v) : Scalar(static_cast<double>(v)) {}
  Scalar(bool v) : kind_(Kind::Bool) { value_.i = v; }
  Scalar(int64_t v) : kind_(Kind::Int) { value_.i = v; }
  Scalar(int v) : Scalar(static_cast<int64_t>(v)) {}
  Scalar(long long v) : Scalar(static_cast<int64_t>(v)) {}
  Scalar(std::complex<double> v) : kind_(Kind::Complex) {
    value_.z[0] = v.real();
    value_.z[1] = v.imag();
  }
  Scalar(std::complex<float> v) : Scalar(std::complex<double>(v)) {}

  Kind kind() const { return kind_; }
  bool isFloatingPoint() const { return kind_ == Kind::Double; }
  bool isIntegral() const { return kind_ == Kind::Int; }
  bool isBoolean() const { return kind_ == Kind::Bool; }
  bool isComplex() const { return kind_ == Kind::Complex; }

  // The dtype this number has as a tensor: float64, int64 or bool.
  ScalarType type() const {
    switch (kind_) {
      case Kind::Double: return ScalarType::Double;
      case Kind::Int: return ScalarType::Long;
      case Kind::Bool: return ScalarType::Bool;
      case Kind::Complex: return ScalarType::ComplexDouble;
    }
    return ScalarType::Long;
  }

  // A complex number converts to a real type by its real part (as c10's
  // Scalar does); callers that must refuse complex check isComplex().
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
      using V = typename T::value_type;
      if (kind_ == Kind::Complex) return T(static_cast<V>(value_.z[0]), static_cast<V>(value_.z[1]));
      if (kind_ == Kind::Double) return T(static_cast<V>(value_.d));
      return T(static_cast<V>(value_.i));
    } else {
      if (kind_ == Kind::Double) return static_cast<T>(value_.d);
      if (kind_ == Kind::Complex) return static_cast<T>(value_.z[0]);
      return static_cast<T>(value_.i);
    }
  }
  std::complex<double> toComplexDouble() const { return to<std::complex<double>>(); }
  double toDouble() const { return to<double>(); }
  int64_t toLong() const { return to<int64_t>(); }
  bool toBool() const {
    if (kind_ == Kind::Complex) return value_.z[0] != 0 || value_.z[1] != 0;
    return kind_ == Kind::Double ? value_.d != 0 : value_.i != 0;
  }

  Scalar operator-() const;
  bool equal(const Scalar& other) const;

 private:
  Kind kind_;
  union {
    double d;
    int64_t i;
    double z[2];  // real, imaginary
  } value_;
};

std::ostream& operator<<(std::ostream& out, const Scalar& s);

}  // namespace kiln
