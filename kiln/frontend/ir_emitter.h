#pragma once
// The IR emitter: turns `def` trees into graphs.
// Each function is emitted with prim::Store/prim::Load for variables and
// prim::BreakStmt/ContinueStmt/ReturnStmt for exits, then converted to SSA
// (convert_to_ssa.h). Calls to other functions of the same source compile
// the callee first; recursion is an error, as in TorchScript.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/function.h"
#include "kiln/core/type.h"
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
  // For sources with classes: takes a new class type (its methods will be
  // defined in the same place), and a compiled method of a class.
  std::function<void(const ClassTypePtr& cls)> define_class;
  std::function<Function*(const ClassTypePtr& cls, const std::string& name, std::shared_ptr<Graph> graph,
                          FunctionSchema schema)>
      define_method;
};

// Compiles every `def` and `class` among `definitions` (top-level
// statements of a source: imports are accepted and skipped; other statements
// are errors). A class `Foo` becomes the type `__torch__.Foo`: its __init__
// defines the attributes (`self.x = v`, typed by the value or an annotation
// `self.x: T = v`), and every method is compiled.
// Errors raise kiln::Error in TorchScript's layout.
void defineFunctions(const std::vector<TreeRef>& definitions, const ResolverPtr& resolver, CompilationTarget& target);

// Compiles a script class (a `class` tree) into `cls`, as defineFunctions does.
void defineClass(const ClassTypePtr& cls, const TreeRef& class_def, const ResolverPtr& resolver,
                 CompilationTarget& target);

// Compiles methods of a class whose attributes are already known (a module
// type): those named in `roots`, and the methods they reach through
// `self.name(...)` (or `self.sub.name(...)` on a submodule's class), each
// compiled the first time it is used. A method is found among `methods`, or
// else asked of `classes` (Resolver::resolveMethod), which also explains
// attributes the classes lack. Methods never reached are never compiled.
void defineMethods(const ClassTypePtr& cls, const std::vector<MethodSource>& methods,
                   const std::vector<std::string>& roots, CompilationTarget& target,
                   const ResolverPtr& classes = nullptr);

}  // namespace kiln
