// kiln.function_from_graph and the Function object: running graphs from
// Python. Arguments are converted to IValues by the function's schema, the
// graph runs with the GIL released (forked tasks may print from other
// threads), and results come back as Python values.
#include <pybind11/stl.h>

#include <sstream>

#include "bindings.h"
#include "kiln/frontend/tracer.h"
#include "kiln/fuser/fuser.h"
#include "kiln/fuser/kernel_compiler.h"
#include "kiln/ir/graph.h"
#include "kiln/ops/prim_ops.h"
#include "kiln/passes/analysis/shape_analysis.h"
#include "kiln/runtime/function.h"
#include "kiln/runtime/memory_plan.h"
#include "kiln/tensor/allocation_hook.h"

namespace kiln::python {

namespace {

py::object callFunction(GraphFunction& f, const py::args& args, const py::kwargs& kwargs) {
  f.checkPositionalCount(args.size());
  Stack positional;
  for (size_t i = 0; i < args.size(); ++i) positional.push_back(argumentToIValue(f, i, args[i]));
  Kwargs named;
  for (auto [key, value] : kwargs) {
    std::string name = py::str(key);
    named.emplace_back(name, argumentToIValue(f, f.keywordIndex(name), value));
  }
  IValue result;
  {
    py::gil_scoped_release no_gil;
    result = f(std::move(positional), named);
  }
  return toPython(result);
}

Stack stackFor(GraphFunction& f, const py::args& args) {
  Stack stack;
  f.checkPositionalCount(args.size());
  for (size_t i = 0; i < args.size(); ++i) stack.push_back(argumentToIValue(f, i, args[i]));
  stack = f.bindArguments(std::move(stack));
  f.checkInputs(stack);
  return stack;
}

// `specialized` (what the executor would give the input) with the complete
// type of every tensor in `value`.
TypePtr completeInputType(const TypePtr& specialized, const IValue& value) {
  if (value.isTensor() && value.toTensor().defined() && specialized->kind() == TypeKind::Tensor) {
    return TensorType::fromTensor(value.toTensor());
  }
  auto tuple = specialized->cast<TupleType>();
  if (!value.isTuple() || !tuple || tuple->elements().size() != value.toTupleRef().elements.size()) {
    return specialized;
  }
  std::vector<TypePtr> elements;
  for (size_t i = 0; i < tuple->elements().size(); ++i) {
    elements.push_back(completeInputType(tuple->elements()[i], value.toTupleRef().elements[i]));
  }
  return tuple->withContained(std::move(elements));
}

}  // namespace

py::object withTensorsForArrays(py::handle obj) {
  if (py::isinstance<py::array>(obj)) return py::cast(tensorFromNumpy(py::reinterpret_borrow<py::array>(obj)));
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    py::list converted;
    for (py::handle item : obj) converted.append(withTensorsForArrays(item));
    if (py::isinstance<py::tuple>(obj)) return py::tuple(converted);
    return converted;
  }
  if (py::isinstance<py::dict>(obj)) {
    py::dict converted;
    for (auto [key, value] : py::reinterpret_borrow<py::dict>(obj)) {
      converted[withTensorsForArrays(key)] = withTensorsForArrays(value);
    }
    return converted;
  }
  return py::reinterpret_borrow<py::object>(obj);
}

IValue argumentToIValue(const GraphFunction& f, size_t position, py::handle given) {
  const Argument& formal = f.getSchema().arguments()[position];
  CastFailure why;
  if (auto v = scriptValueToIValue(given, formal.type, &why)) return std::move(*v);
  // The value's type as 1.13 names it: its class's name, a namedtuple's fields.
  std::string type_name = py::str(py::type::handle_of(given).attr("__name__"));
  if (py::isinstance<py::tuple>(given) && py::hasattr(given, "_fields")) {
    type_name += " (aka NamedTuple(";
    bool first = true;
    for (py::handle field : given.attr("_fields")) {
      type_name += (first ? "" : ", ") + std::string(py::str(field));
      first = false;
    }
    type_name += "))";
  }
  if (py::isinstance<Tensor>(given)) type_name = "Tensor";
  if (auto object = objectToIValue(given, nullptr)) type_name = object->toObjectRef().type->annotationStr();
  try {
    f.throwTypeMismatch(position, type_name, py::repr(given));
  } catch (const Error& e) {
    throw Error(e.what() + why.details());
  }
}

void bindRuntime(py::module_& m) {
  py::class_<GraphFunction, std::shared_ptr<GraphFunction>>(
      m, "ScriptFunction",
      "A TorchScript function made of a graph. Calling it "
      "specializes the graph to the arguments (dtype, rank, ...), "
      "caches the compiled plan per specialization and runs it. "
      "Arguments may be kiln tensors, numpy arrays, Python "
      "scalars, lists, tuples, dicts and None.")
      .def("__call__",
           [](const std::shared_ptr<GraphFunction>& f, const py::args& args, const py::kwargs& kwargs) {
             // A call in a trace is recorded as prim::CallFunction holding the callee.
             if (tracer::TracingState* state = tracer::tracingState()) state->noteOwner(f);
             return callFunction(*f, args, kwargs);
           })
      .def("__repr__", [](const GraphFunction& f) { return "<kiln.ScriptFunction " + f.getSchema().str() + ">"; })
      .def_property_readonly("name", &GraphFunction::name)
      .def_property_readonly("graph", &GraphFunction::graph)
      .def_property_readonly("schema", [](const GraphFunction& f) { return f.getSchema().str(); })
      .def_property_readonly("code", [](const GraphFunction& f) { return functionCode(f, false); })
      .def_property_readonly("code_with_constants",
                             [](const GraphFunction& f) { return functionCodeWithConstants(f, false); })
      .def(
          "graph_for",
          [](GraphFunction& f, const py::args& args) { return f.executor().getPlanFor(stackFor(f, args)).graph; },
          "The specialized, optimized graph these arguments run.")
      .def(
          "code_for",
          [](GraphFunction& f, const py::args& args) {
            std::ostringstream out;
            out << *f.executor().getPlanFor(stackFor(f, args)).code;
            return out.str();
          },
          "The interpreter instructions these arguments run.")
      .def_property_readonly("num_plans", [](GraphFunction& f) { return f.executor().numPlans(); });

  m.def(
      "function_from_graph",
      [](const std::string& name, const std::shared_ptr<Graph>& graph) {
        // The function owns a copy: later edits of the caller's graph do not reach it.
        return std::make_shared<GraphFunction>(name, graph->copy());
      },
      py::arg("name"), py::arg("graph"));
  py::class_<CompilationUnit, std::shared_ptr<CompilationUnit>>(m, "CompilationUnit")
      .def(py::init<>())
      .def(
          "create_function",
          [](const std::shared_ptr<CompilationUnit>& cu, const std::string& name, const std::shared_ptr<Graph>& graph) {
            cu->createFunction(name, graph->copy());
            return cu->findFunctionShared(name);
          },
          py::arg("name"), py::arg("graph"), py::keep_alive<0, 1>(),
          "Adds a function made of a graph; prim::CallFunction in the unit's graphs finds it by name.")
      .def("find_function", &CompilationUnit::findFunctionShared, py::arg("name"), py::keep_alive<0, 1>())
      .def("function_names", [](const CompilationUnit& cu) {
        std::vector<std::string> names;
        for (GraphFunction* f : cu.functions()) names.push_back(f->name());
        return names;
      });

  m.def(
      "_propagate_shapes",
      [](GraphFunction& f, const py::tuple& args, bool complete) {
        Stack stack = stackFor(f, py::reinterpret_borrow<py::args>(args));
        ArgumentSpec spec(stack.data(), stack.size());
        auto graph = f.graph()->copy();
        for (size_t i = 0; i < graph->inputs().size() && i < stack.size(); ++i) {
          Value* input = graph->inputs()[i];
          TypePtr t = spec.refinedInputType(i, input->type());
          input->setType(complete ? completeInputType(t, stack[i]) : t);
        }
        propagateShapes(graph);
        return graph;
      },
      py::arg("fn"), py::arg("args"), py::arg("complete") = true,
      "A copy of fn's graph with input types from `args` (complete, or as the executor specializes them) "
      "and every tensor type refined by shape propagation.");
  m.def("_set_graph_executor_optimize", &setGraphExecutorOptimize, py::arg("optimize"));
  m.def("_get_graph_executor_optimize", &graphExecutorOptimize);
  m.def("_set_shape_specialization_limit", &setShapeSpecializationLimit, py::arg("limit"),
        "How many distinct input shapes per dtype/rank signature get plans specialized to their sizes "
        "(0: ranks only, as 1.13's legacy executor).");
  m.def("_get_shape_specialization_limit", &shapeSpecializationLimit);
  m.def("_set_memory_planning", &setMemoryPlanning, py::arg("enabled"),
        "Turns static memory plans for shape-specialized executions on or off (KILN_MEMORY_PLAN=0 starts it off).");
  m.def("_get_memory_planning", &memoryPlanning);
  m.def(
      "_memory_plan_stats",
      [] {
        MemoryPlanStats stats = memoryPlanStats();
        py::dict out;
        out["plans"] = stats.plans;
        out["planned_runs"] = stats.planned_runs;
        out["deviations"] = stats.deviations;
        out["given_up"] = stats.given_up;
        out["arena_bytes"] = stats.arena_bytes;
        return out;
      },
      "Process-wide counts of memory plans built, runs served from them, runs that left them, "
      "planners that gave up, and the bytes of the arenas built.");
  m.def(
      "_storage_allocations",
      [] {
        StorageAllocationCounts counts = storageAllocationCounts();
        return py::make_tuple(counts.count, counts.bytes);
      },
      "(count, bytes) of the tensor memory requests this thread sent to the allocator, not served by a "
      "memory plan, since it started.");
  m.def("_jit_set_fusion_enabled", &fuser::setFusionEnabled, py::arg("enabled"),
        "Turns the fuser on or off for plans compiled from now on (KILN_FUSION=0 starts it off).");
  m.def("_jit_fusion_enabled", &fuser::fusionEnabled);
  m.def(
      "_fusion_stats",
      [] {
        fuser::FusionStats stats = fuser::fusionStats();
        fuser::KernelCacheStats cache = fuser::kernelCacheStats();
        py::dict out;
        out["kernel_runs"] = stats.kernel_runs;
        out["fallback_runs"] = stats.fallback_runs;
        out["fallback_reasons"] = stats.fallback_reasons;
        out["compiled"] = cache.compiled;
        out["disk_hits"] = cache.disk_hits;
        out["memory_hits"] = cache.memory_hits;
        out["compile_failures"] = cache.failures;
        out["compile_seconds"] = cache.compile_seconds;
        return out;
      },
      "The fuser's counters: group calls run as kernels or node by node (and why), kernels compiled, "
      "loaded from the disk cache or found in memory, and time spent compiling.");
  m.def("_reset_fusion_stats", [] {
    fuser::resetFusionStats();
    fuser::resetKernelCacheStats();
  });
  m.def("_kernel_cache_dir", &fuser::kernelCacheDir);
  m.def("is_grad_enabled", &isGradEnabled);
  m.def("_set_grad_enabled", &setGradEnabled, py::arg("enabled"));

  // `print` in TorchScript writes to sys.stdout, from whichever thread runs it.
  setPrintHandler([](const std::string& text) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    py::module_::import("sys").attr("stdout").attr("write")(text);
  });
}

}  // namespace kiln::python
