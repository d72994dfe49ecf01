#pragma once
// kiln's public C++ API: compile TorchScript source into a compilation unit
// whose functions run on IValues.
//
//   auto cu = kiln::compile("def f(x: Tensor) -> Tensor:\n    return x * 2\n");
//   kiln::IValue y = cu->getFunction("f")({kiln::IValue(x)});
//
// and modules (kiln/runtime/module.h): objects of a module type with
// parameters, buffers, submodules, attributes and methods compiled from source.
//
//   kiln::Module m("Scale");
//   m.register_parameter("w", w);
//   m.define("def forward(self, x: Tensor) -> Tensor:\n    return x * self.w\n");
//   kiln::IValue y = m.forward({kiln::IValue(x)});
#include <memory>
#include <string>

#include "kiln/api/freeze.h"
#include "kiln/api/optimize_for_inference.h"
#include "kiln/api/trace.h"
#include "kiln/frontend/ir_emitter.h"
#include "kiln/frontend/resolver.h"
#include "kiln/runtime/function.h"
#include "kiln/runtime/module.h"

namespace kiln {

// Compiles every function in `source` (a TorchScript program: defs, with
// `import` lines accepted). `filename` names the source in errors and
// tracebacks. Names the source does not define go to `resolver`, then to
// the builtins. Raises kiln::Error for invalid programs.
std::shared_ptr<CompilationUnit> compile(const std::string& source, const ResolverPtr& resolver = nullptr,
                                         const std::string& filename = "<string>");

// As compile(), adding the functions to an existing unit (their names must be new).
void compileInto(CompilationUnit& unit, const std::string& source, const ResolverPtr& resolver = nullptr,
                 const std::string& filename = "<string>");

// As compile(), for text cut out of a larger file (a Python function's
// source): `starting_line` is the file line of the text's first line, so
// errors and tracebacks name the line in the file.
std::shared_ptr<CompilationUnit> compile(const std::string& source, const ResolverPtr& resolver,
                                         const std::string& filename, size_t starting_line);
void compileInto(CompilationUnit& unit, const std::string& source, const ResolverPtr& resolver,
                 const std::string& filename, size_t starting_line);

// As compileInto(), for a shared unit: the source may also define classes
// (`class Foo:` becomes `__torch__.Foo`, its methods compiled into the unit).
void compileInto(const std::shared_ptr<CompilationUnit>& unit, const std::string& source, const ResolverPtr& resolver,
                 const std::string& filename, size_t starting_line);

// Where the compiler puts what it compiles for a shared unit: functions,
// classes and methods, each graph cleaned up as TorchScript 1.13 does
// (kiln::compile, Module::define, the Python bindings).
CompilationTarget compilationTarget(const std::shared_ptr<CompilationUnit>& unit);

}  // namespace kiln
