#pragma once
// One binder for the arguments of a call against a FunctionSchema, shared by
// Graph::insert, the script compiler and the Python dispatcher: positional
// arguments, then keywords, kwarg-only parameters, defaults, `*` varargs,
// trailing positionals packed into a list parameter (`x.view(2, 3)`), and
// type variables (`t[] self, t el`) unified in a TypeEnv.
//
// The binder only sees the call's shape (how many positionals, which
// keywords, whether a `self` comes apart); each parameter's value and its
// conversion (TorchScript's implicit conversions, Python numbers for Tensor,
// ...) are a ConversionPolicy's business: the caller's policy converts its
// own values (graph Values, Python objects) and keeps the results.
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/core/function_schema.h"
#include "kiln/core/type.h"

namespace kiln {

using TypeEnv = std::unordered_map<std::string, TypePtr>;

// Binds the type variables of `formal` from `actual` into `env` (unifying
// with earlier bindings). Returns an explanation when they cannot match.
std::optional<std::string> matchTypeVariables(const TypePtr& formal, const TypePtr& actual, TypeEnv& env);

// `type` with its variables replaced from `env`; null if one is unbound.
TypePtr evalTypeVariables(const TypePtr& type, const TypeEnv& env);

// A call as the binder sees it.
struct CallShape {
  size_t num_positional = 0;
  // The keyword arguments' names, in call order.
  std::vector<std::string> keywords;
  // A `self` given apart from the positionals (a method call in script):
  // it goes to the parameter named "self".
  bool has_self = false;
};

// Where one schema parameter's value comes from.
struct ParamSource {
  enum class Kind {
    Positional,  // positional argument `index`
    Keyword,     // keyword argument `index` (into CallShape::keywords)
    Self,        // the call's self
    Default,     // the parameter's default value
    Packed,      // positionals [index, end) packed into the list parameter
  };
  Kind kind = Kind::Positional;
  size_t index = 0;
  size_t end = 0;
};

// Why a call does not fit a schema. `message` is TorchScript's wording (the
// policy's own message for Conversion); callers with other wordings format
// from `kind`, `name` and the counts.
struct BindFailure {
  enum class Kind {
    Conversion,         // the policy rejected parameter `name`'s value
    Missing,            // no value and no default for parameter `name`
    ParamNamedTwice,    // two parameters named `name` took the same keyword
    SelfUnused,         // the schema has no parameter named "self"
    TooManyPositional,  // `given` positionals, at most `used` fit
    UnknownKeyword,     // keyword `name` names no parameter
    KeywordTwice,       // keyword `name` names a parameter given positionally
  };
  Kind kind = Kind::Conversion;
  std::string name;
  size_t used = 0;
  size_t given = 0;
  std::string message;
};

// The per-call decisions the binder leaves to its caller.
class ConversionPolicy {
 public:
  virtual ~ConversionPolicy() = default;
  // Whether positionals [first, num_positional) go packed into the list
  // parameter `param_index` (called only while positionals remain for it).
  virtual bool packsPositionals(const FunctionSchema& /*schema*/, size_t /*param_index*/, size_t /*first*/) {
    return false;
  }
  // Converts the value `source` gives `param`, binding type variables in
  // `env`, and keeps the result. Returns why it does not fit, or nullopt.
  virtual std::optional<std::string> convert(const Argument& param, const ParamSource& source, TypeEnv& env) = 0;
};

struct BoundArguments {
  // One per schema parameter, in schema order.
  std::vector<ParamSource> params;
  // Positionals passed on through the `*` of a vararg schema (aten::format, prim::Print).
  std::vector<size_t> varargs;
};

struct BindResult {
  std::optional<BoundArguments> bound;
  BindFailure failure;  // meaningful when !bound
  explicit operator bool() const { return bound.has_value(); }
};

// Binds the call `shape` to `schema`'s parameters in schema order, asking
// `policy` to convert each parameter's value as soon as its source is known
// (so the first failure in schema order is the one reported, as in torch).
BindResult bindArguments(const FunctionSchema& schema, const CallShape& shape, ConversionPolicy& policy, TypeEnv& env);

}  // namespace kiln
