#pragma once
// Operator signatures in PyTorch's schema language:
//   aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
// parsed into typed arguments (with defaults, kwarg-only markers, fixed list
// sizes and alias annotations) and printed back as the same text.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kiln/core/ivalue.h"
#include "kiln/core/symbol.h"
#include "kiln/core/type.h"

namespace kiln {

// `(a)`, `(a!)`, `(a -> *)`, `(*)`: which alias sets a value belongs to
// before and after the call, and whether the op writes to it.
struct AliasInfo {
  std::vector<std::string> before_sets;
  std::vector<std::string> after_sets;
  bool is_write = false;
  std::vector<AliasInfo> contained;  // for `Tensor(a)[]`-style element annotations
  std::string str() const;
};

struct Argument {
  std::string name;
  TypePtr type;
  // The schema's spelling of the type where it says more than `type`
  // (ScalarType, Layout, Device, MemoryFormat are ints to the compiler).
  std::string type_text;
  std::optional<int64_t> fixed_size;  // int[2]
  std::optional<IValue> default_value;
  std::string default_text;  // printed as written
  bool kwarg_only = false;
  std::optional<AliasInfo> alias_info;

  bool isOutOrInPlace() const { return alias_info && alias_info->is_write; }
  std::string str() const;
};

class FunctionSchema {
 public:
  FunctionSchema(std::string name, std::string overload_name, std::vector<Argument> arguments,
                 std::vector<Argument> returns, bool is_vararg = false, bool is_varret = false);

  const std::string& name() const { return name_; }
  const std::string& overloadName() const { return overload_name_; }
  const std::vector<Argument>& arguments() const { return arguments_; }
  const std::vector<Argument>& returns() const { return returns_; }
  bool isVararg() const { return is_vararg_; }
  bool isVarret() const { return is_varret_; }
  std::optional<size_t> argumentIndex(std::string_view name) const;
  // Whether the op writes to any argument (in-place and out= forms).
  bool isMutable() const;
  std::string str() const;

 private:
  std::string name_;
  std::string overload_name_;
  std::vector<Argument> arguments_;
  std::vector<Argument> returns_;
  bool is_vararg_;
  bool is_varret_;
};

std::ostream& operator<<(std::ostream& out, const FunctionSchema& schema);

// Parses a full schema (`ns::name.overload(args) -> rets`); errors carry the
// column and a caret under the offending text.
FunctionSchema parseSchema(std::string_view text);
// Parses a schema or a bare operator name (`aten::relu`).
std::variant<std::string, FunctionSchema> parseSchemaOrName(std::string_view text);

}  // namespace kiln
