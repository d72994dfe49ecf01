#include "kiln/api/trace.h"

#include "kiln/ir/graph.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/lower_tuples.h"
#include "kiln/passes/normalize_ops.h"

namespace kiln {

void cleanupTrace(const std::shared_ptr<Graph>& graph) {
  normalizeOps(graph);
  lowerSimpleTuples(graph);
  eliminateDeadCode(graph);
  graph->lint();
}

std::shared_ptr<GraphFunction> functionFromTrace(const std::string& name, const std::shared_ptr<Graph>& graph) {
  std::vector<Argument> arguments;
  for (Value* input : graph->inputs()) {
    Argument a;
    a.name = input->hasDebugName() ? input->debugNameBase() : "input" + std::to_string(arguments.size());
    a.type = unshapedType(input->type());
    arguments.push_back(std::move(a));
  }
  std::vector<Argument> returns;
  for (Value* output : graph->outputs()) {
    Argument r;
    r.type = unshapedType(output->type());
    returns.push_back(std::move(r));
  }
  return std::make_shared<GraphFunction>(name, graph, nullptr,
                                         FunctionSchema(name, "", std::move(arguments), std::move(returns)),
                                         /*check_graph=*/false);
}

TracedFunction trace(const std::string& name, const std::function<IValue(const Stack&)>& fn,
                     const Stack& example_inputs, const std::vector<std::string>& arg_names, bool strict,
                     tracer::TraceContext context) {
  tracer::TraceResult result = tracer::trace(example_inputs, fn, arg_names, strict, std::move(context));
  cleanupTrace(result.graph);
  return {functionFromTrace(name, result.graph), std::move(result.output)};
}

}  // namespace kiln
