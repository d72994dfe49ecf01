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

namespace {

FunctionSchema schemaFromTrace(const std::string& name, const std::shared_ptr<Graph>& graph) {
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
  return FunctionSchema(name, "", std::move(arguments), std::move(returns));
}

// Adds a traced graph, cleaned up, to the module's type as method `name`.
GraphFunction& addTracedMethod(const IValue& module, const std::string& name, const std::shared_ptr<Graph>& graph) {
  const ObjectObj& object = module.toObjectRef();
  const ClassTypePtr& cls = object.type;
  std::shared_ptr<CompilationUnit> unit = cls->compilationUnit();
  if (!unit) unit = object.unit;
  KILN_CHECK(unit, "kiln.trace: the type ", cls->name(), " has no compilation unit for its methods");
  cleanupTrace(graph);
  return unit->createMethod(cls, name, graph, schemaFromTrace(name, graph), /*check_graph=*/false);
}

}  // namespace

std::shared_ptr<GraphFunction> functionFromTrace(const std::string& name, const std::shared_ptr<Graph>& graph) {
  return std::make_shared<GraphFunction>(name, graph, nullptr, schemaFromTrace(name, graph), /*check_graph=*/false);
}

TracedFunction trace(const std::string& name, const std::function<IValue(const Stack&)>& fn,
                     const Stack& example_inputs, const std::vector<std::string>& arg_names, bool strict,
                     tracer::TraceContext context) {
  tracer::TraceResult result = tracer::trace(example_inputs, fn, arg_names, strict, std::move(context));
  cleanupTrace(result.graph);
  return {functionFromTrace(name, result.graph), std::move(result.output)};
}

TracedMethod traceMethod(const IValue& module, const std::string& method_name,
                         const std::function<IValue(const Stack&)>& fn, const Stack& example_inputs,
                         const std::vector<std::string>& arg_names, bool strict, tracer::TraceContext context) {
  KILN_CHECK(module.isObject() && module.toObjectRef().type->isModule(), "kiln.trace: expected a module object");
  KILN_CHECK(!module.toObjectRef().type->findMethod(method_name), "kiln.trace: ", module.toObjectRef().type->name(),
             " has a method '", method_name, "' already");
  Stack inputs = {module};
  inputs.insert(inputs.end(), example_inputs.begin(), example_inputs.end());
  std::vector<std::string> names = {"self.1"};  // as 1.13 prints it
  names.insert(names.end(), arg_names.begin(), arg_names.end());
  tracer::TraceResult result = tracer::trace(
      inputs, [&](const Stack& all) { return fn(Stack(all.begin() + 1, all.end())); }, names, strict,
      std::move(context));
  for (const tracer::TracingState::MethodGraph& m : result.methods) addTracedMethod(m.module, m.name, m.graph);
  GraphFunction& method = addTracedMethod(module, method_name, result.graph);
  return {&method, std::move(result.output)};
}

IValue traceMethodCall(const IValue& module, const std::string& method_name, const std::function<IValue()>& fn) {
  tracer::TracingState* state = tracer::tracingState();
  if (!state || !state->isTracedModule(module)) return fn();
  state->enterMethod(module);
  IValue output;
  try {
    output = fn();
  } catch (...) {
    state->abandonMethod();
    throw;
  }
  state->exitMethod(method_name);
  return output;
}

}  // namespace kiln
