#pragma once
// A number argument (a fill value, alpha and beta, a clamp bound, a lerp
// weight) converted into a tensor's element type: the one checked conversion
// every op uses, with c10's rules and message. Out of range raises "value
// cannot be converted to type uint8_t without overflow"; bool takes any
// number; a negative int wraps into an unsigned type when its magnitude fits
// (so `a - b` on uint8 works as `a + 255 * b`); inf and NaN go into floating
// types only, and finite values must lie within the type's range (float16's
// is +-65504, so 65519 raises though it would round to 65504).
//
// Not for the 0-dim "wrapped numbers" of binary ops (`uint8 + 300`), which
// PyTorch casts without a check.
#include <type_traits>

#include "kiln/tensor/half.h"
#include "kiln/tensor/scalar.h"

namespace kiln {

template <>
struct CppTypeToScalarType<Half> {
  static constexpr ScalarType value = ScalarType::Half;
};
template <>
struct CppTypeToScalarType<BFloat16> {
  static constexpr ScalarType value = ScalarType::BFloat16;
};

// Whether `s` converts to `dtype` without overflow.
bool scalarFits(const Scalar& s, ScalarType dtype);
// Raises PyTorch's overflow error unless scalarFits(s, dtype).
void checkScalarFits(const Scalar& s, ScalarType dtype);

template <typename T>
T checkedScalarTo(const Scalar& s) {
  checkScalarFits(s, CppTypeToScalarType<T>::value);
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(s.toDouble()));
  } else if constexpr (std::is_same_v<T, bool>) {
    return s.toBool();
  } else {
    return s.to<T>();
  }
}

}  // namespace kiln
