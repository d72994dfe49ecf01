#pragma once
// An argument of a call being built: a graph Value or a C++ value still to be
// inserted as a constant, optionally by keyword, with where it was written.
// Graph::insert and the script compiler's schema matching both take these.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "kiln/core/ivalue.h"
#include "kiln/ir/source_range.h"

namespace kiln {

class Value;

struct NamedValue {
  NamedValue(Value* v) : value(v) {}
  NamedValue(IValue v) : constant(std::move(v)) {}
  NamedValue(int v) : constant(static_cast<int64_t>(v)) {}
  NamedValue(int64_t v) : constant(v) {}
  NamedValue(double v) : constant(v) {}
  NamedValue(bool v) : constant(v) {}
  NamedValue(const char* v) : constant(std::string(v)) {}
  NamedValue(std::string n, Value* v) : name(std::move(n)), value(v) {}
  NamedValue(std::string n, IValue v) : name(std::move(n)), constant(std::move(v)) {}
  NamedValue(SourceRange loc, Value* v) : loc(std::move(loc)), value(v) {}
  NamedValue(SourceRange loc, std::string n, Value* v) : loc(std::move(loc)), name(std::move(n)), value(v) {}

  // Where the argument was written (empty for arguments built in C++).
  SourceRange loc;
  std::optional<std::string> name;
  // The graph value; null when `constant` is the argument.
  Value* value = nullptr;
  IValue constant;
};

}  // namespace kiln
