// Script frontend bindings: parsing (for tests and tools) and compiling
// TorchScript source, with names the source does not define looked up in
// Python (kiln.script resolves them through a function's closure and globals).
#include <pybind11/stl.h>

#include "bindings.h"
#include "kiln/api/kiln.h"
#include "kiln/frontend/class_definition.h"
#include "kiln/frontend/error_report.h"
#include "kiln/frontend/parser.h"
#include "kiln/frontend/schema_matching.h"
#include "kiln/frontend/sugared_value.h"

namespace kiln::python {

namespace {

// A Python NamedTuple class compiled for script code (what kiln.script's
// lookup hands the resolver for it).
struct PyNamedTuple {
  SugaredValuePtr value;
  std::string qualified_name;
};

// A function with declared overloads (torch.jit._overload): one compiled
// function per declaration (its signature, the implementation's body). A
// call runs the first whose schema the arguments match, as 1.13 picks.
class OverloadedFunctionValue : public SugaredValue {
 public:
  explicit OverloadedFunctionValue(std::vector<std::shared_ptr<GraphFunction>> functions)
      : functions_(std::move(functions)) {}
  std::string kind() const override { return "overloaded function"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t) override {
    std::vector<const FunctionSchema*> schemas;
    for (const auto& f : functions_) schemas.push_back(&f->getSchema());
    auto [index, matched] = matchSchemas(schemas, loc, graph, args, kwargs);
    return emitFunctionCall(loc, graph, functions_[index], matched);
  }

 private:
  std::vector<std::shared_ptr<GraphFunction>> functions_;
};

// torch.nn.modules.utils._pair and its kin (kiln.script's _NTuple): a list
// argument as it is, a tuple as a list, anything else repeated n times into
// a list, as 1.13 compiles them.
class NTupleValue : public SugaredValue {
 public:
  explicit NTupleValue(size_t n) : n_(n) {}
  std::string kind() const override { return "function"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t) override {
    if (args.size() != 1 || !kwargs.empty()) throwSourceError(loc, "expected one argument");
    Value* x = args[0].value ? args[0].value : graph.insertConstant(args[0].constant, loc);
    if (x->type()->cast<ListType>()) return std::make_shared<SimpleValue>(x);
    std::vector<Value*> elements;
    TypePtr element_type = x->type();
    if (auto tuple = x->type()->cast<TupleType>()) {
      for (const SugaredValuePtr& e : SimpleValue(x).asTuple(loc, graph, std::nullopt)) {
        elements.push_back(e->asValue(loc, graph));
      }
      element_type = tuple->elements().empty() ? IntType::get() : tuple->elements()[0];
      for (const TypePtr& t : tuple->elements()) {
        if (*t != *element_type) throwSourceError(loc, "expected a tuple of one element type");
      }
    } else {
      elements.assign(n_, x);
    }
    Node* list = graph.insertNode(graph.createList(element_type, elements));
    list->setSourceRange(loc);
    return std::make_shared<SimpleValue>(list->output());
  }

 private:
  size_t n_;
};

// A builtin function of torch or math that script code names
// (`neg = torch.add`, `from torch._C import _infer_size`), or the class
// torch.device: the builtin its module gives for its name, as 1.13 finds
// builtins by the function object, not the name it is bound to.
SugaredValuePtr builtinOfPython(py::handle value, Graph& graph, const SourceRange& loc) {
  bool is_type = PyType_Check(value.ptr());
  if (!PyCFunction_Check(value.ptr()) && !is_type) return nullptr;
  py::object module = py::getattr(value, "__module__", py::none());
  py::object name = py::getattr(value, "__name__", py::none());
  if (!py::isinstance<py::str>(module) || !py::isinstance<py::str>(name)) return nullptr;
  std::string module_name = module.cast<std::string>();
  std::string field = name.cast<std::string>();
  if (is_type && !(module_name == "torch" && field == "device")) return nullptr;
  if (module_name != "torch" && module_name.rfind("torch._C", 0) != 0 && module_name != "math") return nullptr;
  SugaredValuePtr builtin_module = makeBuiltinModule(module_name);
  return builtin_module ? builtin_module->attr(loc, graph, field) : nullptr;
}

// Resolves names through a Python callable: `lookup(name)` returns `(value,)`
// for a name it knows, None otherwise, and `()` for a function whose
// compilation is under way (a recursive call). Compiled functions become calls,
// modules the builtin modules of their name, Python constants constants;
// anything else is left to the emitter (its builtins, or an undefined-name
// error). An error compiling a callee (lookup scripts Python functions on
// demand) is reported with the call that led to it, as TorchScript does.
class PythonResolver : public Resolver, public std::enable_shared_from_this<PythonResolver> {
 public:
  PythonResolver(py::object lookup, std::string caller) : lookup_(std::move(lookup)), caller_(std::move(caller)) {}
  ~PythonResolver() override {
    py::gil_scoped_acquire gil;
    lookup_ = py::object();
  }

  SugaredValuePtr resolveValue(const std::string& name, Graph& graph, const SourceRange& loc) override {
    py::gil_scoped_acquire gil;
    py::object found;
    try {
      found = lookup_(name);
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_RuntimeError)) throw;
      std::string message = py::str(e.value());
      throw Error(message + "\n" + calledFrom(name, loc));
    }
    if (found.is_none()) return nullptr;
    py::tuple found_tuple = found.cast<py::tuple>();
    if (found_tuple.empty()) {
      throwSourceError(loc, "function '" + name + "' is called recursively. Recursive calls are not supported");
    }
    py::object value = found_tuple[0];
    if (py::isinstance<GraphFunction>(value)) return makeFunctionValue(value.cast<std::shared_ptr<GraphFunction>>());
    // Modules first: one may answer any attribute (a module's __getattr__).
    if (py::isinstance(value, py::module_::import("types").attr("ModuleType"))) {
      std::string module_name = value.attr("__name__").cast<std::string>();
      if (auto module = makeBuiltinModule(module_name)) return module;
      return std::make_shared<PythonModuleValue>(shared_from_this(), name, module_name);
    }
    if (py::hasattr(value, "__kiln_overloads__")) {
      std::vector<std::shared_ptr<GraphFunction>> functions;
      for (py::handle f : value.attr("__kiln_overloads__"))
        functions.push_back(f.cast<std::shared_ptr<GraphFunction>>());
      return std::make_shared<OverloadedFunctionValue>(std::move(functions));
    }
    if (auto cls = classTypeFromPython(value)) return makeClassValue(cls);
    if (py::isinstance<PyNamedTuple>(value)) return value.cast<PyNamedTuple&>().value;
    if (auto enum_class = enumClassValue(value)) return enum_class;
    if (auto constant = constantFromPython(value)) return makeConstantValue(std::move(*constant));
    if (auto builtin = builtinOfPython(value, graph, loc)) return builtin;
    if (py::hasattr(value, "__kiln_ntuple__")) {
      return std::make_shared<NTupleValue>(value.attr("__kiln_ntuple__").cast<size_t>());
    }
    return nullptr;
  }

  // A Python annotation object the name is bound to (torch.Tensor,
  // torch.device, List[int]) as kiln._jit._type_text spells it.
  TypePtr resolveType(const std::string& name, const SourceRange&) override {
    py::gil_scoped_acquire gil;
    py::object found = lookup_(name);
    if (found.is_none()) return nullptr;
    py::tuple found_tuple = found.cast<py::tuple>();
    if (found_tuple.empty()) return nullptr;
    py::object text = py::module_::import("kiln._jit").attr("_type_text")(found_tuple[0]);
    if (text.is_none()) return nullptr;
    return parseTypeAnnotation(text.cast<std::string>());
  }

 private:
  // A Python module other than the builtin ones (`some_module.Type`): its
  // attributes are looked up as dotted names.
  class PythonModuleValue : public SugaredValue {
   public:
    PythonModuleValue(std::shared_ptr<PythonResolver> resolver, std::string path, std::string module_name)
        : resolver_(std::move(resolver)), path_(std::move(path)), module_name_(std::move(module_name)) {}
    std::string kind() const override { return "python module"; }
    SugaredValuePtr attr(const SourceRange& loc, Graph& graph, const std::string& field) override {
      if (auto value = resolver_->resolveValue(path_ + "." + field, graph, loc)) return value;
      throwSourceError(
          loc, "Python module '" + module_name_ + "' has no attribute '" + field + "' that TorchScript can use");
    }

   private:
    std::shared_ptr<PythonResolver> resolver_;
    std::string path_;
    std::string module_name_;
  };

  std::string calledFrom(const std::string& name, const SourceRange& loc) const {
    std::string out = "'" + name + "' is being compiled since it was called from '" + caller_ + "'";
    if (auto where = loc.fileLineCol()) {
      out += "\n  File \"" + std::get<0>(*where) + "\", line " + std::to_string(std::get<1>(*where)) + "\n" +
             loc.underlinedLine();
    }
    return out;
  }

  py::object lookup_;
  std::string caller_;
};

}  // namespace

std::optional<IValue> constantFromPython(py::handle obj) {
  if (obj.is_none()) return IValue();
  if (PyBool_Check(obj.ptr())) return IValue(obj.ptr() == Py_True);
  if (PyLong_Check(obj.ptr())) {
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    if (overflow) return std::nullopt;
    return IValue(static_cast<int64_t>(value));
  }
  if (PyFloat_Check(obj.ptr())) return IValue(PyFloat_AsDouble(obj.ptr()));
  if (PyComplex_Check(obj.ptr())) {
    Py_complex z = PyComplex_AsCComplex(obj.ptr());
    return IValue(std::complex<double>(z.real, z.imag));
  }
  if (PyUnicode_Check(obj.ptr())) return IValue(obj.cast<std::string>());
  if (PyTuple_Check(obj.ptr())) {
    std::vector<IValue> elements;
    for (py::handle item : obj) {
      auto v = constantFromPython(item);
      if (!v) return std::nullopt;
      elements.push_back(std::move(*v));
    }
    return IValue::tuple(std::move(elements));
  }
  return std::nullopt;
}

ResolverPtr makePythonResolver(py::object lookup, std::string caller) {
  return std::make_shared<PythonResolver>(std::move(lookup), std::move(caller));
}

void bindFrontend(py::module_& m) {
  // torch.nn.functional's Python-written functions are kiln.nn.functional's
  // scriptable equivalents (kiln.nn.functional._SCRIPTABLE), compiled on demand.
  setFunctionalHook([](const std::string&, const std::string& field) -> std::shared_ptr<Function> {
    py::gil_scoped_acquire gil;
    py::object fn;
    try {
      py::dict table = py::module_::import("kiln.nn.functional").attr("_SCRIPTABLE");
      if (!table.contains(field)) return nullptr;
      fn = py::module_::import("kiln._jit").attr("script")(table[py::str(field)]);
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_RuntimeError)) throw;
      throw Error(std::string(py::str(e.value())));
    }
    if (!py::isinstance<GraphFunction>(fn)) return nullptr;
    return fn.cast<std::shared_ptr<GraphFunction>>();
  });
  py::class_<PyNamedTuple>(m, "NamedTupleType", "A Python NamedTuple class as a TorchScript named tuple type.")
      .def_property_readonly("qualified_name", [](const PyNamedTuple& t) { return t.qualified_name; });
  m.def(
      "_compile_named_tuple",
      [](const std::string& source, const std::string& filename, size_t first_line, const py::object& lookup,
         const std::string& qualified_name) {
        Parser parser(std::make_shared<const Source>(source, filename, first_line));
        for (const TreeRef& t : parser.parseFile()) {
          if (t->kind() != TK_CLASS) continue;
          ResolverPtr resolver = lookup.is_none() ? nullptr : makePythonResolver(lookup, qualified_name);
          return PyNamedTuple{defineNamedTuple(t, qualified_name, resolver), qualified_name};
        }
        throw Error("expected a class definition in the source of " + qualified_name);
      },
      py::arg("source"), py::arg("filename"), py::arg("first_line"), py::arg("lookup"), py::arg("qualified_name"),
      "Compiles a NamedTuple class (the source of its `class` statement) into a named tuple type.");
  // One s-expression line per top-level statement.
  m.def(
      "_parse_source",
      [](const std::string& text) {
        std::string out;
        for (const TreeRef& tree : parseSource(text)) out += tree->toString() + "\n";
        return out;
      },
      py::arg("text"));
  m.def(
      "_compile",
      [](const std::string& source, const std::string& filename, size_t starting_line, const py::object& lookup,
         const std::string& caller) {
        ResolverPtr resolver;
        if (!lookup.is_none()) resolver = makePythonResolver(lookup, caller);
        return compile(source, resolver, filename, starting_line);
      },
      py::arg("source"), py::arg("filename") = "<string>", py::arg("starting_line") = 1, py::arg("lookup") = py::none(),
      py::arg("caller") = "",
      "Compiles TorchScript source into a new compilation unit. `lookup(name)` (optional) returns (value,) for "
      "names the source does not define, None for names it does not know, () for a function being compiled.");
}

}  // namespace kiln::python
