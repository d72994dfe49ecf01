#pragma once
// Matching a call's arguments against operator schemas, as TorchScript 1.13
// does: positional then keyword arguments, defaults, type variables, varargs
// packed into a list (`x.view(2, 3)`), a single int for `int[2]`, and the
// implicit conversions (tuple to list, Tensor to int/float/Scalar, number to
// int/float, str to Device) tried only when no overload matches without them.
// Errors list every candidate with why it did not match.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kiln/core/function_schema.h"
#include "kiln/ir/graph.h"

namespace kiln {

struct MatchedSchema {
  std::vector<Value*> inputs;
  std::vector<TypePtr> return_types;
};

// Matches one schema; on failure writes why to `failure_messages` when given.
std::optional<MatchedSchema> tryMatchSchema(const FunctionSchema& schema, const SourceRange& loc, Graph& graph,
                                            const std::vector<NamedValue>& args, const std::vector<NamedValue>& kwargs,
                                            std::optional<NamedValue> self, std::ostream* failure_messages,
                                            bool allow_conversions);

// The first of `schemas` that matches (index and match), or a kiln::Error in
// TorchScript's words listing the candidates.
std::pair<size_t, MatchedSchema> matchSchemas(const std::vector<const FunctionSchema*>& schemas, const SourceRange& loc,
                                              Graph& graph, const std::vector<NamedValue>& args,
                                              const std::vector<NamedValue>& kwargs,
                                              const std::optional<NamedValue>& self = std::nullopt);

// Inserts a call of the operator `name` (the matching overload), returning its
// output (a tuple of outputs for several results; None for none).
Value* emitBuiltinCall(const SourceRange& loc, Graph& graph, Symbol name, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, const std::optional<NamedValue>& self = std::nullopt);

// The same with positional arguments only.
Value* emitBuiltinCall(const SourceRange& loc, Graph& graph, Symbol name, const std::vector<Value*>& args);

// Whether a call of `name` can match anything: an operator or a builtin function.
bool isBuiltinOperator(Symbol name);

// `value` converted to `concrete_type` where TorchScript converts implicitly
// (unchanged when no conversion applies).
Value* tryConvertToType(const SourceRange& loc, Graph& graph, const TypePtr& concrete_type, Value* value,
                        bool allow_conversions);

// Several results become one tuple value.
Value* packOutputs(Graph& graph, ArrayRef<Value*> values);

}  // namespace kiln
