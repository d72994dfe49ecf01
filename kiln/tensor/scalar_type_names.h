#pragma once
// Python's names of the dtypes (torch.float32, torch.long, ...). The script
// compiler (torch.<name> in source) and the unpickler (a pickled dtype is a
// global named by its Python name) share this one table. Also the C++ element
// type names that torch's messages print for a tensor's dtype (its TypeMeta
// names: "float", "long int").
#include <optional>
#include <string_view>

#include "kiln/tensor/scalar_type.h"

namespace kiln {

// The dtype torch.<name> stands for, or nullopt if `name` is no dtype.
std::optional<ScalarType> scalarTypeFromPythonName(std::string_view name);

// The C++ element type's name: "float", "long int", "c10::Half", ...
const char* scalarTypeCppName(ScalarType type);

}  // namespace kiln
