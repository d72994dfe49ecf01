#pragma once
// A Python number as an op argument: int, float or bool, kept exactly.
#include <cstdint>
#include <iosfwd>

#include "kiln/tensor/scalar_type.h"

namespace kiln {

class Scalar {
 public:
  enum class Kind : uint8_t { Int, Double, Bool };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(double v) : kind_(Kind::Double) { value_.d = v; }
  Scalar(float v) : Scalar(static_cast<double>(v)) {}
  Scalar(bool v) : kind_(Kind::Bool) { value_.i = v; }
  Scalar(int64_t v) : kind_(Kind::Int) { value_.i = v; }
  Scalar(int v) : Scalar(static_cast<int64_t>(v)) {}
  Scalar(long long v) : Scalar(static_cast<int64_t>(v)) {}

  Kind kind() const { return kind_; }
  bool isFloatingPoint() const { return kind_ == Kind::Double; }
  bool isIntegral() const { return kind_ == Kind::Int; }
  bool isBoolean() const { return kind_ == Kind::Bool; }

  // The dtype this number has as a tensor: float64, int64 or bool.
  ScalarType type() const {
    switch (kind_) {
      case Kind::Double: return ScalarType::Double;
      case Kind::Int: return ScalarType::Long;
      case Kind::Bool: return ScalarType::Bool;
    }
    return ScalarType::Long;
  }

  template <typename T>
  T to() const {
    if (kind_ == Kind::Double) return static_cast<T>(value_.d);
    return static_cast<T>(value_.i);
  }
  double toDouble() const { return to<double>(); }
  int64_t toLong() const { return to<int64_t>(); }
  bool toBool() const { return kind_ == Kind::Double ? value_.d != 0 : value_.i != 0; }

  Scalar operator-() const;
  bool equal(const Scalar& other) const;

 private:
  Kind kind_;
  union {
    double d;
    int64_t i;
  } value_;
};

std::ostream& operator<<(std::ostream& out, const Scalar& s);

}  // namespace kiln
