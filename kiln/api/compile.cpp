#include "kiln/api/kiln.h"

#include "kiln/frontend/ir_emitter.h"
#include "kiln/frontend/parser.h"
#include "kiln/passes/cleanup.h"

namespace kiln {

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
  defineFunctions(definitions, resolver, target);
}

void compileInto(CompilationUnit& unit, const std::string& source, const ResolverPtr& resolver,
                 const std::string& filename) {
  compileInto(unit, source, resolver, filename, 1);
}

std::shared_ptr<CompilationUnit> compile(const std::string& source, const ResolverPtr& resolver,
                                         const std::string& filename, size_t starting_line) {
  auto unit = std::make_shared<CompilationUnit>();
  compileInto(*unit, source, resolver, filename, starting_line);
  return unit;
}

std::shared_ptr<CompilationUnit> compile(const std::string& source, const ResolverPtr& resolver,
                                         const std::string& filename) {
  return compile(source, resolver, filename, 1);
}

}  // namespace kiln
