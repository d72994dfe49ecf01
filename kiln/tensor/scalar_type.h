#pragma once
// Element types. The numbering is PyTorch's: TorchScript graphs carry dtypes
// as plain ints (`%6 : int = prim::Constant[value=6]()` is float32), so the
// numbers are part of the IR format.
#include <complex>
#include <cstdint>
#include <iosfwd>
#include <string_view>

#include "kiln/util/error.h"

namespace kiln {

enum class ScalarType : int8_t {
  Byte = 0,            // uint8
  Char = 1,            // int8
  Short = 2,           // int16
  Int = 3,             // int32
  Long = 4,            // int64
  Half = 5,            // float16 (storage and conversion only)
  Float = 6,           // float32
  Double = 7,          // float64
  ComplexHalf = 8,     // known by number only: no tensor of it can be made
  ComplexFloat = 9,    // complex64: std::complex<float>
  ComplexDouble = 10,  // complex128: std::complex<double>
  Bool = 11,
  BFloat16 = 15,  // storage and conversion only
  Undefined = -1,
};

constexpr int kNumScalarTypes = 16;

size_t elementSize(ScalarType type);
// Torch's Python-facing name: "float32", "int64", "bool", ...
std::string_view scalarTypeName(ScalarType type);
// Torch's C++ name: "Float", "Long", "Bool", ... (used in IR types: Float(2, 3))
std::string_view scalarTypeShortName(ScalarType type);
// Parses either spelling; returns Undefined when unknown.
ScalarType scalarTypeFromName(std::string_view name);
// Validates a dtype given as an int (as TorchScript passes it).
ScalarType scalarTypeFromInt(int64_t value);
std::ostream& operator<<(std::ostream& out, ScalarType type);

inline bool isFloatingType(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::Half || t == ScalarType::BFloat16;
}
inline bool isComplexType(ScalarType t) {
  return t == ScalarType::ComplexHalf || t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble;
}
// complex64 -> float32, complex128 -> float64; other types unchanged.
inline ScalarType toRealValueType(ScalarType t) {
  switch (t) {
    case ScalarType::ComplexHalf: return ScalarType::Half;
    case ScalarType::ComplexFloat: return ScalarType::Float;
    case ScalarType::ComplexDouble: return ScalarType::Double;
    default: return t;
  }
}
// float32 -> complex64, float64 -> complex128 (float16 -> complex32).
inline ScalarType toComplexType(ScalarType t) {
  switch (t) {
    case ScalarType::Half: return ScalarType::ComplexHalf;
    case ScalarType::Double: return ScalarType::ComplexDouble;
    default: return isComplexType(t) ? t : ScalarType::ComplexFloat;
  }
}
inline bool isIntegralType(ScalarType t, bool include_bool) {
  switch (t) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long: return true;
    case ScalarType::Bool: return include_bool;
    default: return false;
  }
}
inline bool isSignedType(ScalarType t) { return t != ScalarType::Byte && t != ScalarType::Bool; }

// PyTorch's promoteTypes lattice.
ScalarType promoteTypes(ScalarType a, ScalarType b);

// The dtype Python floats become (torch.get_default_dtype()).
inline ScalarType defaultFloatType() { return ScalarType::Float; }

template <typename T>
struct CppTypeToScalarType;
#define KILN_CPP_SCALAR(cpp, name)                        \
  template <>                                             \
  struct CppTypeToScalarType<cpp> {                       \
    static constexpr ScalarType value = ScalarType::name; \
  };
KILN_CPP_SCALAR(uint8_t, Byte)
KILN_CPP_SCALAR(int8_t, Char)
KILN_CPP_SCALAR(int16_t, Short)
KILN_CPP_SCALAR(int32_t, Int)
KILN_CPP_SCALAR(int64_t, Long)
KILN_CPP_SCALAR(float, Float)
KILN_CPP_SCALAR(double, Double)
KILN_CPP_SCALAR(bool, Bool)
KILN_CPP_SCALAR(std::complex<float>, ComplexFloat)
KILN_CPP_SCALAR(std::complex<double>, ComplexDouble)
#undef KILN_CPP_SCALAR

}  // namespace kiln

// Dispatch on a runtime dtype: the body sees `scalar_t`.
#define KILN_DISPATCH_CASE(ENUM, TYPE, ...) \
  case ::kiln::ScalarType::ENUM: {          \
    using scalar_t = TYPE;                  \
    return __VA_ARGS__();                   \
  }

#define KILN_DISPATCH_SWITCH(TYPE, NAME, CASES)                                                          \
  [&] {                                                                                                  \
    const ::kiln::ScalarType kiln_dispatch_type_ = (TYPE);                                               \
    switch (kiln_dispatch_type_) {                                                                       \
      CASES                                                                                              \
      default:                                                                                           \
        throw ::kiln::Error(::kiln::detail::str(NAME, ": not implemented for '",                         \
                                                ::kiln::scalarTypeShortName(kiln_dispatch_type_), "'")); \
    }                                                                                                    \
  }()

#define KILN_FLOATING_CASES(...)                \
  KILN_DISPATCH_CASE(Float, float, __VA_ARGS__) \
  KILN_DISPATCH_CASE(Double, double, __VA_ARGS__)

#define KILN_INTEGRAL_CASES(...)                  \
  KILN_DISPATCH_CASE(Byte, uint8_t, __VA_ARGS__)  \
  KILN_DISPATCH_CASE(Char, int8_t, __VA_ARGS__)   \
  KILN_DISPATCH_CASE(Short, int16_t, __VA_ARGS__) \
  KILN_DISPATCH_CASE(Int, int32_t, __VA_ARGS__)   \
  KILN_DISPATCH_CASE(Long, int64_t, __VA_ARGS__)

#define KILN_COMPLEX_CASES(...)                                      \
  KILN_DISPATCH_CASE(ComplexFloat, std::complex<float>, __VA_ARGS__) \
  KILN_DISPATCH_CASE(ComplexDouble, std::complex<double>, __VA_ARGS__)

#define KILN_DISPATCH_COMPLEX_TYPES(TYPE, NAME, ...) KILN_DISPATCH_SWITCH(TYPE, NAME, KILN_COMPLEX_CASES(__VA_ARGS__))
#define KILN_DISPATCH_FLOATING_AND_COMPLEX_TYPES(TYPE, NAME, ...) \
  KILN_DISPATCH_SWITCH(TYPE, NAME, KILN_FLOATING_CASES(__VA_ARGS__) KILN_COMPLEX_CASES(__VA_ARGS__))
#define KILN_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) KILN_DISPATCH_SWITCH(TYPE, NAME, KILN_FLOATING_CASES(__VA_ARGS__))
#define KILN_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) KILN_DISPATCH_SWITCH(TYPE, NAME, KILN_INTEGRAL_CASES(__VA_ARGS__))
#define KILN_DISPATCH_INTEGRAL_TYPES_AND_BOOL(TYPE, NAME, ...) \
  KILN_DISPATCH_SWITCH(TYPE, NAME, KILN_INTEGRAL_CASES(__VA_ARGS__) KILN_DISPATCH_CASE(Bool, bool, __VA_ARGS__))
// Every arithmetic type except bool.
#define KILN_DISPATCH_ALL_TYPES(TYPE, NAME, ...) \
  KILN_DISPATCH_SWITCH(TYPE, NAME, KILN_FLOATING_CASES(__VA_ARGS__) KILN_INTEGRAL_CASES(__VA_ARGS__))
#define KILN_DISPATCH_ALL_TYPES_AND_BOOL(TYPE, NAME, ...)                                \
  KILN_DISPATCH_SWITCH(TYPE, NAME,                                                       \
                       KILN_FLOATING_CASES(__VA_ARGS__) KILN_INTEGRAL_CASES(__VA_ARGS__) \
                           KILN_DISPATCH_CASE(Bool, bool, __VA_ARGS__))
