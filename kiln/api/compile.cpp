#include "kiln/api/kiln.h"

#include "kiln/frontend/error_report.h"
#include "kiln/frontend/ir_emitter.h"
#include "kiln/frontend/parser.h"
#include "kiln/frontend/tree_views.h"
#include "kiln/passes/cleanup.h"

namespace kiln {

CompilationTarget compilationTarget(const std::shared_ptr<CompilationUnit>& unit) {
  CompilationTarget target;
  CompilationUnit* raw = unit.get();
  std::weak_ptr<CompilationUnit> weak = unit;
  target.find = [raw](const std::string& name) -> std::shared_ptr<Function> { return raw->findFunctionShared(name); };
  target.define = [raw](const std::string& name, std::shared_ptr<Graph> graph,
                        FunctionSchema schema) -> std::shared_ptr<Function> {
    runCleanupPasses(graph);
    raw->createFunction(name, std::move(graph), std::move(schema), /*check_graph=*/false);
    return raw->findFunctionShared(name);
  };
  target.define_class = [weak](const ClassTypePtr& cls) { CompilationUnit::registerClass(weak.lock(), cls); };
  target.define_method = [raw](const ClassTypePtr& cls, const std::string& name, std::shared_ptr<Graph> graph,
                               FunctionSchema schema) -> Function* {
    runCleanupPasses(graph);
    // A method belongs to its class's unit (a ModuleList's __len__ is
    // defined while its parent compiles).
    std::shared_ptr<CompilationUnit> owner = cls->compilationUnit();
    CompilationUnit* dest = owner ? owner.get() : raw;
    return &dest->createMethod(cls, name, std::move(graph), std::move(schema), /*check_graph=*/false);
  };
  return target;
}

void compileInto(CompilationUnit& unit, const std::string& source, const ResolverPtr& resolver,
                 const std::string& filename, size_t starting_line) {
  Parser parser(std::make_shared<const Source>(source, filename, starting_line));
  std::vector<TreeRef> definitions = parser.parseFile();
  CompilationTarget target;
  target.find = [&](const std::string& name) -> std::shared_ptr<Function> { return unit.findFunctionShared(name); };
  target.define = [&](const std::string& name, std::shared_ptr<Graph> graph,
                      FunctionSchema schema) -> std::shared_ptr<Function> {
    runCleanupPasses(graph);
    // The fuzzer lints every compiled graph; here it would only cost time.
    unit.createFunction(name, std::move(graph), std::move(schema), /*check_graph=*/false);
    return unit.findFunctionShared(name);
  };
  // Classes need the unit as a shared pointer (their objects keep it alive).
  target.define_class = [&](const ClassTypePtr&) {
    KILN_ERROR("classes can be compiled only into a unit made by kiln::compile (a shared CompilationUnit)");
  };
  defineFunctions(definitions, resolver, target);
}

void compileInto(const std::shared_ptr<CompilationUnit>& unit, const std::string& source, const ResolverPtr& resolver,
                 const std::string& filename, size_t starting_line) {
  Parser parser(std::make_shared<const Source>(source, filename, starting_line));
  std::vector<TreeRef> definitions = parser.parseFile();
  CompilationTarget target = compilationTarget(unit);
  defineFunctions(definitions, resolver, target);
}

void compileInto(CompilationUnit& unit, const std::string& source, const ResolverPtr& resolver,
                 const std::string& filename) {
  compileInto(unit, source, resolver, filename, 1);
}

std::shared_ptr<CompilationUnit> compile(const std::string& source, const ResolverPtr& resolver,
                                         const std::string& filename, size_t starting_line) {
  auto unit = std::make_shared<CompilationUnit>();
  compileInto(unit, source, resolver, filename, starting_line);
  return unit;
}

void Object::define(const std::string& source, const ResolverPtr& resolver, const std::string& filename) {
  std::shared_ptr<CompilationUnit> unit = compilationUnit();
  KILN_CHECK(unit, "the methods of '", type()->name(), "' have no compilation unit to go to");
  Parser parser(std::make_shared<const Source>(source, filename, 1));
  std::vector<MethodSource> methods;
  std::vector<std::string> names;
  for (const TreeRef& tree : parser.parseFile()) {
    if (tree->kind() == TK_IMPORT || tree->kind() == TK_IMPORT_FROM) continue;
    if (tree->kind() != TK_DEF)
      throwSourceError(tree->range(), "expected def but found '" + kindToString(tree->kind()) + "'");
    methods.push_back({tree, resolver});
    names.push_back(Def(tree).name().name());
  }
  CompilationTarget target = compilationTarget(unit);
  defineMethods(type(), methods, names, target);
}

std::shared_ptr<CompilationUnit> compile(const std::string& source, const ResolverPtr& resolver,
                                         const std::string& filename) {
  return compile(source, resolver, filename, 1);
}

}  // namespace kiln
