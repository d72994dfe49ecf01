#include "kiln/tensor/scalar_type_names.h"

#include <utility>

namespace kiln {

std::optional<ScalarType> scalarTypeFromPythonName(std::string_view name) {
  static constexpr std::pair<std::string_view, ScalarType> kNames[] = {
      {"uint8", ScalarType::Byte},
      {"int8", ScalarType::Char},
      {"int16", ScalarType::Short},
      {"short", ScalarType::Short},
      {"int32", ScalarType::Int},
      {"int", ScalarType::Int},
      {"int64", ScalarType::Long},
      {"long", ScalarType::Long},
      {"float16", ScalarType::Half},
      {"half", ScalarType::Half},
      {"float32", ScalarType::Float},
      {"float", ScalarType::Float},
      {"float64", ScalarType::Double},
      {"double", ScalarType::Double},
      {"bool", ScalarType::Bool},
      {"bfloat16", ScalarType::BFloat16},
      {"complex64", ScalarType::ComplexFloat},
      {"cfloat", ScalarType::ComplexFloat},
      {"complex128", ScalarType::ComplexDouble},
      {"cdouble", ScalarType::ComplexDouble},
  };
  for (const auto& [n, type] : kNames) {
    if (n == name) return type;
  }
  return std::nullopt;
}

const char* scalarTypeCppName(ScalarType type) {
  switch (type) {
    case ScalarType::Byte: return "unsigned char";
    case ScalarType::Char: return "signed char";
    case ScalarType::Short: return "short int";
    case ScalarType::Int: return "int";
    case ScalarType::Long: return "long int";
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
    case ScalarType::Bool: return "bool";
    case ScalarType::Half: return "c10::Half";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::ComplexFloat: return "c10::complex<float>";
    case ScalarType::ComplexDouble: return "c10::complex<double>";
    default: return "undefined";
  }
}

}  // namespace kiln
