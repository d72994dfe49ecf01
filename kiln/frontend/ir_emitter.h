#pragma once
// The IR emitter (seed 001 "IR Emitter"): turns `def` trees into graphs.
// Each function is emitted with prim::Store/prim::Load for variables and
// prim::BreakStmt/ContinueStmt/ReturnStmt for exits, then converted to SSA
// (convert_to_ssa.h). Calls to other functions of the same source compile
// the callee first; recursion is an error, as in TorchScript.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/function.h"
#include "kiln/frontend/resolver.h"
#include "kiln/frontend/tree.h"

namespace kiln {

class Graph;

// Where compiled functions go (the runtime's CompilationUnit, through kiln/api).
struct CompilationTarget {
  // A function already defined under `name`, or null.
  std::function<std::shared_ptr<Function>(const std::string& name)> find;
  // Takes the SSA graph of a newly compiled function and its schema; returns
  // the function calls to it will use.
  std::function<std::shared_ptr<Function>(const std::string& name, std::shared_ptr<Graph> graph, FunctionSchema schema)>
      define;
};

// Compiles every `def` among `definitions` (top-level statements of a
// source: imports are accepted and skipped; other statements are errors).
// Errors raise kiln::Error in TorchScript's layout.
void defineFunctions(const std::vector<TreeRef>& definitions, const ResolverPtr& resolver, CompilationTarget& target);

}  // namespace kiln
