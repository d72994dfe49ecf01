#include "kiln/tensor/scalar_type.h"

#include <ostream>

namespace kiln {

size_t elementSize(ScalarType type) {
  switch (type) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Bool: return 1;
    case ScalarType::Short:
    case ScalarType::Half:
    case ScalarType::BFloat16: return 2;
    case ScalarType::Int:
    case ScalarType::Float: return 4;
    case ScalarType::Long:
    case ScalarType::Double:
    case ScalarType::ComplexFloat: return 8;
    case ScalarType::ComplexDouble: return 16;
    case ScalarType::ComplexHalf: return 4;
    case ScalarType::Undefined: break;
  }
  KILN_ERROR("elementSize: undefined dtype");
}

std::string_view scalarTypeName(ScalarType type) {
  switch (type) {
    case ScalarType::Byte: return "uint8";
    case ScalarType::Char: return "int8";
    case ScalarType::Short: return "int16";
    case ScalarType::Int: return "int32";
    case ScalarType::Long: return "int64";
    case ScalarType::Half: return "float16";
    case ScalarType::Float: return "float32";
    case ScalarType::Double: return "float64";
    case ScalarType::Bool: return "bool";
    case ScalarType::BFloat16: return "bfloat16";
    case ScalarType::ComplexHalf: return "complex32";
    case ScalarType::ComplexFloat: return "complex64";
    case ScalarType::ComplexDouble: return "complex128";
    case ScalarType::Undefined: return "undefined";
  }
  return "undefined";
}

std::string_view scalarTypeShortName(ScalarType type) {
  switch (type) {
    case ScalarType::Byte: return "Byte";
    case ScalarType::Char: return "Char";
    case ScalarType::Short: return "Short";
    case ScalarType::Int: return "Int";
    case ScalarType::Long: return "Long";
    case ScalarType::Half: return "Half";
    case ScalarType::Float: return "Float";
    case ScalarType::Double: return "Double";
    case ScalarType::Bool: return "Bool";
    case ScalarType::BFloat16: return "BFloat16";
    case ScalarType::ComplexHalf: return "ComplexHalf";
    case ScalarType::ComplexFloat: return "ComplexFloat";
    case ScalarType::ComplexDouble: return "ComplexDouble";
    case ScalarType::Undefined: return "Undefined";
  }
  return "Undefined";
}

ScalarType scalarTypeFromName(std::string_view name) {
  static constexpr ScalarType all[] = {ScalarType::Byte,         ScalarType::Char,        ScalarType::Short,
                                       ScalarType::Int,          ScalarType::Long,        ScalarType::Half,
                                       ScalarType::Float,        ScalarType::Double,      ScalarType::Bool,
                                       ScalarType::BFloat16,     ScalarType::ComplexHalf, ScalarType::ComplexFloat,
                                       ScalarType::ComplexDouble};
  for (ScalarType t : all) {
    if (name == scalarTypeName(t) || name == scalarTypeShortName(t)) return t;
  }
  if (name == "float") return ScalarType::Float;
  if (name == "double") return ScalarType::Double;
  if (name == "long") return ScalarType::Long;
  if (name == "int") return ScalarType::Int;
  if (name == "short") return ScalarType::Short;
  if (name == "half") return ScalarType::Half;
  if (name == "cfloat") return ScalarType::ComplexFloat;
  if (name == "cdouble") return ScalarType::ComplexDouble;
  if (name == "chalf") return ScalarType::ComplexHalf;
  return ScalarType::Undefined;
}

ScalarType scalarTypeFromInt(int64_t value) {
  switch (value) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
    case 9:
    case 10:
    case 11:
    case 15: return static_cast<ScalarType>(value);
    default:
      KILN_ERROR("unsupported dtype code ", value,
                 " (kiln supports uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128, "
                 "bool, bfloat16)");
  }
}

std::ostream& operator<<(std::ostream& out, ScalarType type) { return out << scalarTypeShortName(type); }

ScalarType promoteTypes(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  if (isComplexType(a) || isComplexType(b)) {
    // The complex type whose parts hold both (complex64 + float64 = complex128).
    const ScalarType real = promoteTypes(toRealValueType(a), toRealValueType(b));
    if (real == ScalarType::Double) return ScalarType::ComplexDouble;
    if (real == ScalarType::Half) return ScalarType::ComplexHalf;
    if (real == ScalarType::Float || real == ScalarType::BFloat16) return ScalarType::ComplexFloat;
    return isComplexType(a) ? a : b;
  }
  // Rows and columns: u1 i1 i2 i4 i8 f2 f4 f8 b1 bf16, PyTorch's table.
  auto index = [](ScalarType t) {
    switch (t) {
      case ScalarType::Byte: return 0;
      case ScalarType::Char: return 1;
      case ScalarType::Short: return 2;
      case ScalarType::Int: return 3;
      case ScalarType::Long: return 4;
      case ScalarType::Half: return 5;
      case ScalarType::Float: return 6;
      case ScalarType::Double: return 7;
      case ScalarType::Bool: return 8;
      case ScalarType::BFloat16: return 9;
      default: return -1;
    }
  };
  constexpr auto u1 = ScalarType::Byte, i1 = ScalarType::Char, i2 = ScalarType::Short, i4 = ScalarType::Int,
                 i8 = ScalarType::Long, f2 = ScalarType::Half, f4 = ScalarType::Float, f8 = ScalarType::Double,
                 b1 = ScalarType::Bool, bf = ScalarType::BFloat16;
  static constexpr ScalarType table[10][10] = {
      /* u1 */ {u1, i2, i2, i4, i8, f2, f4, f8, u1, bf},
      /* i1 */ {i2, i1, i2, i4, i8, f2, f4, f8, i1, bf},
      /* i2 */ {i2, i2, i2, i4, i8, f2, f4, f8, i2, bf},
      /* i4 */ {i4, i4, i4, i4, i8, f2, f4, f8, i4, bf},
      /* i8 */ {i8, i8, i8, i8, i8, f2, f4, f8, i8, bf},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f8, f2, f4},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f8, f4, f4},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
      /* b1 */ {u1, i1, i2, i4, i8, f2, f4, f8, b1, bf},
      /* bf */ {bf, bf, bf, bf, bf, f4, f4, f8, bf, bf},
  };
  int ia = index(a), ib = index(b);
  KILN_CHECK(ia >= 0 && ib >= 0, "promoteTypes: unsupported dtypes ", a, " and ", b);
  return table[ia][ib];
}

}  // namespace kiln
