#pragma once
// Matching values' types against schema types with type variables
// (`t[] self, t el`), as node overload resolution and Graph::insert do.
#include <optional>
#include <string>
#include <unordered_map>

#include "kiln/core/type.h"

namespace kiln {

using TypeEnv = std::unordered_map<std::string, TypePtr>;

// Binds the type variables of `formal` from `actual` into `env` (unifying
// with earlier bindings). Returns an explanation when they cannot match.
std::optional<std::string> matchTypeVariables(const TypePtr& formal, const TypePtr& actual, TypeEnv& env);

// `type` with its variables replaced from `env`; null if one is unbound.
TypePtr evalTypeVariables(const TypePtr& type, const TypeEnv& env);

}  // namespace kiln
