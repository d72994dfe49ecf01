#include "kiln/tensor/scalar.h"

#include <ostream>

namespace kiln {

Scalar Scalar::operator-() const {
  switch (kind_) {
    case Kind::Double: return Scalar(-value_.d);
    case Kind::Int: return Scalar(-value_.i);
    case Kind::Bool: return Scalar(static_cast<int64_t>(-value_.i));
  }
  return *this;
}

bool Scalar::equal(const Scalar& other) const {
  if (kind_ == Kind::Double || other.kind_ == Kind::Double) return toDouble() == other.toDouble();
  return value_.i == other.value_.i;
}

std::ostream& operator<<(std::ostream& out, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Double: return out << s.toDouble();
    case Scalar::Kind::Int: return out << s.toLong();
    case Scalar::Kind::Bool: return out << (s.toBool() ? "True" : "False");
  }
  return out;
}

}  // namespace kiln
