// kiln.trace's native part: run a Python function under the tracer
// (kiln/frontend/tracer.h) and make a ScriptFunction of what it recorded.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <map>
#include <tuple>

#include "bindings.h"
#include "kiln/api/trace.h"
#include "kiln/frontend/tracer.h"
#include "kiln/ir/graph.h"
#include "kiln/passes/inliner.h"

namespace kiln::python {

namespace {

// An example input as the tracer sees it: tensors, tuples and lists of
// them; other values keep a type only so that the error can name it.
IValue inputToIValue(py::handle obj) {
  if (py::isinstance<Tensor>(obj)) return IValue(obj.cast<Tensor>());
  if (py::isinstance<py::tuple>(obj)) {
    std::vector<IValue> elements;
    for (py::handle e : obj) elements.push_back(inputToIValue(e));
    return IValue::tuple(std::move(elements));
  }
  if (py::isinstance<py::list>(obj)) {
    std::vector<IValue> elements;
    bool tensors = true;
    for (py::handle e : obj) {
      elements.push_back(inputToIValue(e));
      tensors = tensors && elements.back().isTensor();
    }
    TypePtr element = tensors ? TensorType::get() : (elements.empty() ? TensorType::get() : elements[0].type());
    return IValue::list(element, std::move(elements));
  }
  if (py::isinstance<py::dict>(obj)) {
    // Dict(str, Tensor) or Dict(int, Tensor); other dicts keep what the error needs.
    auto items = py::reinterpret_borrow<py::dict>(obj);
    bool str_keys = true, int_keys = true;
    for (auto [key, value] : items) {
      str_keys = str_keys && py::isinstance<py::str>(key);
      int_keys = int_keys && PyLong_Check(key.ptr()) && !PyBool_Check(key.ptr());
    }
    TypePtr key_type = str_keys ? StringType::get() : int_keys ? IntType::get() : nullptr;
    if (!key_type) KILN_ERROR("kiln.trace: dict inputs need str or int keys");
    std::vector<std::pair<IValue, IValue>> entries;
    TypePtr value_type = TensorType::get();  // a non-tensor value's type, for the tracer's error
    for (auto [key, value] : items) {
      entries.emplace_back(str_keys ? IValue(key.cast<std::string>()) : IValue(key.cast<int64_t>()),
                           inputToIValue(value));
      if (!entries.back().second.isTensor()) value_type = entries.back().second.type();
    }
    auto dict = makeIntrusive<DictObj>(key_type, value_type);
    for (auto& [k, v] : entries) dict->insertOrAssign(std::move(k), std::move(v));
    return IValue(std::move(dict));
  }
  if (auto number = numberToIValue(obj)) return *number;
  if (py::isinstance<py::str>(obj)) return IValue(obj.cast<std::string>());
  if (obj.is_none()) return IValue();
  KILN_ERROR("Type '", std::string(py::str(py::type::handle_of(obj).attr("__name__"))),
             "' cannot be traced. Only Tensors and (possibly nested) Lists, Dicts, and Tuples of Tensors can be "
             "traced");
}

[[noreturn]] void badOutput() {
  KILN_ERROR("Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from traced functions");
}

// What the traced function returned: tensors, and tuples, lists and
// dicts (str keys) of them.
IValue outputToIValue(py::handle obj) {
  if (py::isinstance<Tensor>(obj)) return IValue(obj.cast<Tensor>());
  if (py::isinstance<py::tuple>(obj)) {
    std::vector<IValue> elements;
    for (py::handle e : obj) elements.push_back(outputToIValue(e));
    return IValue::tuple(std::move(elements));
  }
  if (py::isinstance<py::list>(obj)) {
    std::vector<IValue> elements;
    for (py::handle e : obj) {
      if (!py::isinstance<Tensor>(e)) badOutput();
      elements.push_back(IValue(e.cast<Tensor>()));
    }
    return IValue::list(TensorType::get(), std::move(elements));
  }
  if (py::isinstance<py::dict>(obj)) {
    auto dict = makeIntrusive<DictObj>(StringType::get(), TensorType::get());
    for (auto [key, value] : py::reinterpret_borrow<py::dict>(obj)) {
      if (!py::isinstance<py::str>(key) || !py::isinstance<Tensor>(value)) badOutput();
      dict->insertOrAssign(IValue(key.cast<std::string>()), IValue(value.cast<Tensor>()));
    }
    return IValue(std::move(dict));
  }
  badOutput();
}

// What kiln.trace's Python part tells the tracer: value names and source
// locations (either callback may be None). The callbacks run where an
// operator runs, often without the GIL.
tracer::TraceContext traceContext(const py::object& name_lookup, const py::object& location_lookup) {
  tracer::TraceContext context;
  if (!name_lookup.is_none()) {
    context.value_name = [name_lookup](const Tensor& t) {
      py::gil_scoped_acquire gil;
      return name_lookup(t).cast<std::string>();
    };
  }
  // One Source per (file, line): the line's text, numbered as in the file.
  auto sources = std::make_shared<std::map<std::pair<std::string, int64_t>, std::shared_ptr<const Source>>>();
  if (!location_lookup.is_none()) {
    context.source_range = [location_lookup, sources]() -> SourceRange {
      py::gil_scoped_acquire gil;
      py::object where = location_lookup();
      if (where.is_none()) return {};
      auto [file, line, text] = where.cast<std::tuple<std::string, int64_t, std::string>>();
      if (line < 1) return {};
      auto& source = (*sources)[{file, line}];
      if (!source) source = std::make_shared<const Source>(text, file, static_cast<size_t>(line));
      return SourceRange(source, 0, source->text().size());
    };
  }
  return context;
}

IValue moduleObject(py::handle obj) {
  auto module = objectToIValue(obj, nullptr);
  if (!module || !module->toObjectRef().type->isModule()) {
    throw py::type_error("expected the ScriptObject of a module");
  }
  return *module;
}

}  // namespace

void bindTrace(py::module_& m) {
  m.def(
      "_trace",
      [](const std::string& name, const py::function& fn, const py::tuple& inputs,
         const std::vector<std::string>& names, bool strict, const py::object& name_lookup,
         const py::object& location_lookup) {
        Stack stack;
        for (py::handle input : inputs) stack.push_back(inputToIValue(input));
        py::object result;
        tracer::TraceContext context = traceContext(name_lookup, location_lookup);
        TracedFunction traced = trace(
            name,
            [&](const Stack&) {
              result = fn(*inputs);
              return outputToIValue(result);
            },
            stack, names, strict, std::move(context));
        return py::make_tuple(traced.function, result);
      },
      py::arg("name"), py::arg("fn"), py::arg("inputs"), py::arg("names"), py::arg("strict") = true,
      py::arg("name_lookup") = py::none(), py::arg("location_lookup") = py::none(),
      "Calls fn(*inputs) while tracing; returns (a ScriptFunction of the trace, fn's result). "
      "name_lookup(tensor) names values (\"\" for none); location_lookup() gives (file, line, line text) "
      "of the code recording a node, or None.");
  m.def(
      "_trace_method",
      [](const py::object& module, const std::string& method_name, const py::function& fn, const py::tuple& inputs,
         const std::vector<std::string>& names, bool strict, const py::object& name_lookup,
         const py::object& location_lookup) {
        Stack stack;
        for (py::handle input : inputs) stack.push_back(inputToIValue(input));
        py::object result;
        traceMethod(
            moduleObject(module), method_name,
            [&](const Stack&) {
              result = fn(*inputs);
              return outputToIValue(result);
            },
            stack, names, strict, traceContext(name_lookup, location_lookup));
        return result;
      },
      py::arg("module"), py::arg("method_name"), py::arg("fn"), py::arg("inputs"), py::arg("names"),
      py::arg("strict") = true, py::arg("name_lookup") = py::none(), py::arg("location_lookup") = py::none(),
      "Traces fn(*inputs) (the eager code of `module`'s method) with the module (a ScriptObject) as `self`, and "
      "adds the trace to the module's type as method `method_name`; returns fn's result.");
  m.def(
      "_trace_method_call",
      [](const py::object& module, const std::string& method_name, const py::function& fn, const py::tuple& args,
         const py::dict& kwargs) {
        py::object result;
        // What the call returns is not checked: its outputs are what the caller uses.
        traceMethodCall(moduleObject(module), method_name, [&]() {
          result = fn(*args, **kwargs);
          return IValue();
        });
        return result;
      },
      py::arg("module"), py::arg("method_name"), py::arg("fn"), py::arg("args"), py::arg("kwargs"),
      "fn(*args, **kwargs), the eager code of a call of `module`'s method (module a ScriptObject), recorded in the "
      "module trace running as a call of a method traced into the module's type.");
  m.def(
      "_is_tracing", [] { return tracer::isTracing(); }, "Whether this thread is tracing.");
  m.def(
      "_untraced",
      [](const py::function& fn) {
        tracer::TracingSuspended untraced;
        return fn();
      },
      py::arg("fn"), "fn() with this thread's trace (if any) suspended.");
  m.def(
      "_set_tracer_warning_handler",
      [](py::function handler) {
        // Kept for the life of the process (never destroyed after Python is gone).
        auto* kept = new py::function(std::move(handler));
        tracer::setWarningHandler([kept](const std::string& message) {
          py::gil_scoped_acquire gil;
          (*kept)(message);
        });
      },
      py::arg("handler"), "handler(message) receives the tracer's warnings.");
  m.def(
      "_canonical_trace_text",
      [](const std::shared_ptr<Graph>& graph) {
        // What two traces are compared by (check_trace): the graph with shapes
        // erased and no source locations, as 1.13 compares canonicalized graphs.
        auto copy = graph->copy();
        inlineCalls(copy);
        std::function<void(Block*)> erase = [&](Block* b) {
          for (Value* v : b->inputs()) v->setType(unshapedType(v->type()));
          for (Node* n : b->nodes()) {
            for (Value* v : n->outputs()) v->setType(unshapedType(v->type()));
            for (Block* inner : n->blocks()) erase(inner);
          }
        };
        erase(copy->block());
        return copy->toString(/*print_source_locations=*/false);
      },
      py::arg("graph"));
}

}  // namespace kiln::python
