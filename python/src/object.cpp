// TorchScript classes and objects from Python: class types built by hand
// (kiln.nn scripts a module by describing its type: attributes of each kind,
// constants, then methods compiled from the Python source), script classes
// compiled from a Python class's source (kiln.script(cls)), the objects
// (kiln._C.ScriptObject) and their bound methods (ScriptMethod).
#include <pybind11/stl.h>

#include "bindings.h"
#include "kiln/api/kiln.h"
#include "kiln/frontend/class_definition.h"
#include "kiln/frontend/error_report.h"
#include "kiln/frontend/parser.h"
#include "kiln/ir/graph.h"
#include "kiln/runtime/module.h"
#include "kiln/serialization/python_print.h"

namespace kiln::python {

namespace {

// A class type as Python holds it: with the unit that owns its methods,
// which the type itself knows only weakly.
struct PyClassType {
  ClassTypePtr type;
  std::shared_ptr<CompilationUnit> unit;
};

struct PyScriptObject {
  IntrusivePtr<ObjectObj> object;
};

struct PyScriptMethod {
  IntrusivePtr<ObjectObj> object;
  GraphFunction* function;
};

PyClassType classHandle(const ClassTypePtr& type) { return {type, type->compilationUnit()}; }

TypePtr typeFromPython(py::handle type) {
  if (py::isinstance<PyClassType>(type)) return type.cast<PyClassType&>().type;
  if (py::isinstance<py::str>(type)) return parseTypeAnnotation(type.cast<std::string>());
  throw py::type_error("expected a type annotation (str) or a ClassType, got " +
                       std::string(py::str(py::type::handle_of(type).attr("__name__"))));
}

std::optional<TypePtr> inferType(py::handle obj);

std::optional<TypePtr> unifiedElementType(py::handle items) {
  std::optional<TypePtr> unified;
  for (py::handle item : items) {
    auto t = inferType(item);
    if (!t) return std::nullopt;
    if (!unified) {
      unified = *t;
      continue;
    }
    unified = unifyTypes(*unified, *t);
    if (!unified) return std::nullopt;
  }
  return unified;
}

// The TorchScript type of a Python value as a module attribute (torch's
// jit type inference for attributes).
std::optional<TypePtr> inferType(py::handle obj) {
  if (obj.is_none()) return NoneType::get();
  if (py::isinstance<Tensor>(obj)) return TensorType::get();
  if (PyBool_Check(obj.ptr())) return BoolType::get();
  if (PyLong_Check(obj.ptr())) return IntType::get();
  if (PyFloat_Check(obj.ptr())) return FloatType::get();
  if (PyComplex_Check(obj.ptr())) return ComplexType::get();
  if (py::isinstance<py::str>(obj)) return StringType::get();
  if (py::isinstance<PyScriptObject>(obj)) return TypePtr(obj.cast<PyScriptObject&>().object->type);
  if (py::isinstance<py::tuple>(obj)) {
    std::vector<TypePtr> elements;
    for (py::handle item : obj) {
      auto t = inferType(item);
      if (!t) return std::nullopt;
      elements.push_back(*t);
    }
    return TupleType::create(std::move(elements));
  }
  if (py::isinstance<py::list>(obj)) {
    if (py::len(obj) == 0) return std::nullopt;
    auto element = unifiedElementType(obj);
    if (!element) return std::nullopt;
    return ListType::create(*element);
  }
  if (py::isinstance<py::dict>(obj)) {
    auto dict = py::reinterpret_borrow<py::dict>(obj);
    if (dict.empty()) return std::nullopt;
    auto key = unifiedElementType(dict.attr("keys")());
    auto value = unifiedElementType(dict.attr("values")());
    if (!key || !value) return std::nullopt;
    return DictType::create(*key, *value);
  }
  return std::nullopt;
}

IValue toIValueFor(py::handle value, const TypePtr& type, const std::string& what) {
  Argument arg;
  arg.name = what;
  arg.type = type;
  if (auto v = toIValue(withTensorsForArrays(value), arg, /*relaxed=*/false)) return std::move(*v);
  std::string actual = py::str(py::type::handle_of(value).attr("__name__"));
  if (auto t = inferType(value)) actual = (*t)->annotationStr();
  throw Error(what + " expected a value of type " + type->annotationStr() + " but got a value of type " + actual);
}

py::object getAttribute(const IntrusivePtr<ObjectObj>& object, const std::string& name) {
  const ClassType& cls = *object->type;
  if (auto slot = cls.findAttributeSlot(name)) return toPython(object->slot(*slot));
  if (const IValue* constant = cls.findConstant(name)) return toPython(*constant);
  throw py::attribute_error("'" + cls.unqualifiedName() + "' object has no attribute '" + name + "'");
}

void setAttribute(const IntrusivePtr<ObjectObj>& object, const std::string& name, py::handle value) {
  const ClassType& cls = *object->type;
  auto slot = cls.findAttributeSlot(name);
  if (!slot) {
    if (cls.findConstant(name))
      throw Error("cannot set the constant '" + name + "' of '" + cls.unqualifiedName() + "'");
    throw py::attribute_error("'" + cls.unqualifiedName() + "' object has no attribute '" + name + "'");
  }
  object->slot(*slot) =
      toIValueFor(value, cls.attributeType(*slot), "attribute '" + name + "' of '" + cls.unqualifiedName() + "'");
}

PyScriptMethod getMethod(const IntrusivePtr<ObjectObj>& object, const std::string& name) {
  auto* f = dynamic_cast<GraphFunction*>(object->type->findMethod(name));
  if (!f) throw py::attribute_error("'" + object->type->unqualifiedName() + "' object has no method '" + name + "'");
  return {object, f};
}

// The arguments of a call of a bound method: `self`, then the Python ones
// converted as for functions.
Stack methodStack(const PyScriptMethod& m, const py::args& args, const py::kwargs& kwargs, Kwargs* named) {
  const GraphFunction& f = *m.function;
  f.checkPositionalCount(args.size() + 1);
  Stack positional = {IValue(m.object)};
  for (size_t i = 0; i < args.size(); ++i) positional.push_back(argumentToIValue(f, i + 1, args[i]));
  for (auto [key, value] : kwargs) {
    std::string name = py::str(key);
    named->emplace_back(name, argumentToIValue(f, f.keywordIndex(name), value));
  }
  return positional;
}

py::object callMethod(const PyScriptMethod& m, const py::args& args, const py::kwargs& kwargs) {
  Kwargs named;
  Stack positional = methodStack(m, args, kwargs, &named);
  IValue result;
  {
    py::gil_scoped_release no_gil;
    result = (*m.function)(std::move(positional), named);
  }
  return toPython(result);
}

std::string annotationOf(const TypePtr& type) { return type->annotationStr(); }

// One def (decorators and all) parsed from a method's source.
TreeRef parseDef(const std::string& source, const std::string& filename, size_t first_line) {
  Parser parser(std::make_shared<const Source>(source, filename, first_line));
  std::vector<TreeRef> trees = parser.parseFile();
  for (const TreeRef& t : trees) {
    if (t->kind() == TK_DEF) return t;
  }
  throw Error("expected a def in the source of a method (" + filename + ", line " + std::to_string(first_line) + ")");
}

// The classes kiln.nn scripts, as the compiler sees them: it asks for a
// method's source the first time a compiled method uses it, and why an
// attribute of the Python module has no TorchScript type. `method_source(type,
// name)` returns (source, filename, first_line, lookup) or None;
// `explain_missing(type, name)` a str ("" for nothing to add).
class PythonClassResolver : public Resolver {
 public:
  PythonClassResolver(py::object method_source, py::object explain_missing)
      : method_source_(std::move(method_source)), explain_missing_(std::move(explain_missing)) {}
  ~PythonClassResolver() override {
    py::gil_scoped_acquire gil;
    method_source_ = py::object();
    explain_missing_ = py::object();
  }

  SugaredValuePtr resolveValue(const std::string&, Graph&, const SourceRange&) override { return nullptr; }

  std::optional<MethodSource> resolveMethod(const ClassTypePtr& cls, const std::string& name) override {
    if (method_source_.is_none()) return std::nullopt;
    py::gil_scoped_acquire gil;
    py::object found = method_source_(classHandle(cls), name);
    if (found.is_none()) return std::nullopt;
    auto entry = found.cast<py::tuple>();
    if (entry.size() != 4)
      throw py::value_error("method_source returns (source, filename, first_line, lookup) or None");
    TreeRef def = parseDef(entry[0].cast<std::string>(), entry[1].cast<std::string>(), entry[2].cast<size_t>());
    py::object lookup = entry[3];
    return MethodSource{def, lookup.is_none() ? nullptr : makePythonResolver(lookup, name)};
  }

  std::string explainMissingAttribute(const ClassTypePtr& cls, const std::string& name) override {
    if (explain_missing_.is_none()) return {};
    py::gil_scoped_acquire gil;
    return explain_missing_(classHandle(cls), name).cast<std::string>();
  }

 private:
  py::object method_source_;
  py::object explain_missing_;
};

}  // namespace

std::optional<IValue> objectToIValue(py::handle obj, const TypePtr& type) {
  if (!py::isinstance<PyScriptObject>(obj)) return enumMemberToIValue(obj, type);
  const auto& object = obj.cast<PyScriptObject&>().object;
  if (type && !object->type->isSubtypeOf(*type)) return std::nullopt;
  return IValue(object);
}

py::object objectToPython(const IValue& value) {
  if (auto member = enumMemberToPython(value)) return *member;
  return py::cast(PyScriptObject{value.toObject()});
}

std::shared_ptr<ClassType> classTypeFromPython(py::handle obj) {
  if (!py::isinstance<PyClassType>(obj)) return nullptr;
  return obj.cast<PyClassType&>().type;
}

void bindObjects(py::module_& m) {
  py::class_<PyClassType>(m, "ClassType", "A TorchScript class type (a script class or a scripted module's type).")
      .def_property_readonly("name", [](const PyClassType& t) { return t.type->name(); })
      .def_property_readonly("qualified_name", [](const PyClassType& t) { return t.type->name(); })
      .def_property_readonly("is_module", [](const PyClassType& t) { return t.type->isModule(); })
      .def_property_readonly("iterable",
                             [](const PyClassType& t) {
                               switch (t.type->iterableKind()) {
                                 case IterableKind::List: return "list";
                                 case IterableKind::Dict: return "dict";
                                 default: return "";
                               }
                             })
      .def(
          "add_attribute",
          [](PyClassType& t, const std::string& name, py::handle type, const std::string& kind) {
            auto k = slotKindFromName(kind);
            if (!k)
              throw py::value_error("attribute kind must be attribute, parameter, buffer or module, not '" + kind +
                                    "'");
            TypePtr attr_type = typeFromPython(type);
            if ((*k == SlotKind::Parameter || *k == SlotKind::Buffer) &&
                !attr_type->isSubtypeOf(*OptionalType::ofTensor())) {
              throw Error(std::string(slotKindName(*k)) + " '" + name + "' must be a Tensor, not " +
                          attr_type->annotationStr());
            }
            return t.type->addAttribute(name, attr_type, *k);
          },
          py::arg("name"), py::arg("type"), py::arg("kind") = "attribute",
          "Adds an attribute (kind: attribute, parameter, buffer or module); returns its slot.")
      .def(
          "add_constant",
          [](PyClassType& t, const std::string& name, py::handle value) {
            std::optional<IValue> v = constantFromPython(value);
            if (!v) {
              throw Error("constant '" + name + "' of '" + t.type->unqualifiedName() + "' must be None, bool, int, " +
                          "float, str or a tuple of these, not " +
                          std::string(py::str(py::type::handle_of(value).attr("__name__"))));
            }
            t.type->addConstant(name, std::make_shared<const IValue>(std::move(*v)));
          },
          py::arg("name"), py::arg("value"))
      .def("attributes",
           [](const PyClassType& t) {
             std::vector<std::tuple<std::string, std::string, std::string>> out;
             for (size_t i = 0; i < t.type->numAttributes(); ++i) {
               out.emplace_back(t.type->attributeName(i), annotationOf(t.type->attributeType(i)),
                                slotKindName(t.type->attributeKind(i)));
             }
             return out;
           })
      .def("constants",
           [](const PyClassType& t) {
             py::dict out;
             for (const auto& [name, value] : t.type->constants()) out[py::str(name)] = toPython(*value);
             return out;
           })
      .def("attribute_type",
           [](const PyClassType& t, const std::string& name) -> py::object {
             auto slot = t.type->findAttributeSlot(name);
             if (!slot) return py::none();
             const TypePtr& type = t.type->attributeType(*slot);
             if (type->kind() == TypeKind::Class) {
               return py::cast(
                   classHandle(std::const_pointer_cast<ClassType>(std::static_pointer_cast<const ClassType>(type))));
             }
             return py::str(annotationOf(type));
           })
      .def("method_names",
           [](const PyClassType& t) {
             std::vector<std::string> out;
             for (Function* f : t.type->methods()) out.push_back(f->getSchema().name());
             return out;
           })
      .def("has_method",
           [](const PyClassType& t, const std::string& name) { return t.type->findMethod(name) != nullptr; })
      .def("__eq__",
           [](const PyClassType& a, const py::object& b) {
             return py::isinstance<PyClassType>(b) && b.cast<PyClassType&>().type == a.type;
           })
      .def("__hash__", [](const PyClassType& t) { return std::hash<const void*>()(t.type.get()); })
      .def("__repr__", [](const PyClassType& t) { return "<kiln.ClassType " + t.type->name() + ">"; });

  m.def(
      "_new_class_type",
      [](const std::string& qualified_name, bool is_module, const std::string& iterable) {
        IterableKind kind = IterableKind::None;
        if (iterable == "list") {
          kind = IterableKind::List;
        } else if (iterable == "dict") {
          kind = IterableKind::Dict;
        } else if (!iterable.empty()) {
          throw py::value_error("iterable must be '', 'list' or 'dict', not '" + iterable + "'");
        }
        if (kind != IterableKind::None && !is_module) throw py::value_error("only module types can be iterable");
        auto unit = std::make_shared<CompilationUnit>();
        auto type = ClassType::create(qualified_name, is_module, kind);
        CompilationUnit::registerClass(unit, type);
        return PyClassType{type, unit};
      },
      py::arg("qualified_name"), py::arg("is_module") = false, py::arg("iterable") = "",
      "A new, empty class type whose methods get a compilation unit of their own.");

  m.def(
      "_type_of",
      [](py::handle value) -> py::object {
        auto t = inferType(value);
        if (!t) return py::none();
        return py::str((*t)->annotationStr());
      },
      py::arg("value"), "The TorchScript type a Python value gets as an attribute (annotation text), or None.");

  py::class_<PyScriptMethod>(m, "ScriptMethod", "A method of a script object, bound to it.")
      .def("__call__", &callMethod)
      .def_property_readonly("name", [](const PyScriptMethod& sm) { return sm.function->getSchema().name(); })
      .def_property_readonly("graph", [](const PyScriptMethod& sm) { return sm.function->graph(); })
      .def_property_readonly("schema", [](const PyScriptMethod& sm) { return sm.function->getSchema().str(); })
      .def_property_readonly("owner", [](const PyScriptMethod& sm) { return PyScriptObject{sm.object}; })
      .def_property_readonly("code", [](const PyScriptMethod& sm) { return functionCode(*sm.function, true); })
      .def_property_readonly("code_with_constants",
                             [](const PyScriptMethod& sm) { return functionCodeWithConstants(*sm.function, true); })
      .def(
          "graph_for",
          [](const PyScriptMethod& sm, const py::args& args, const py::kwargs& kwargs) {
            Kwargs named;
            Stack stack = methodStack(sm, args, kwargs, &named);
            stack = sm.function->bindArguments(std::move(stack), named);
            sm.function->checkInputs(stack);
            return sm.function->executor().getPlanFor(stack).graph;
          },
          "The specialized, optimized graph these arguments run.")
      .def("__repr__",
           [](const PyScriptMethod& sm) { return "<kiln.ScriptMethod " + sm.function->getSchema().str() + ">"; });

  py::class_<PyScriptObject>(m, "ScriptObject", py::dynamic_attr(),
                             "An object of a TorchScript class: typed attribute slots and compiled methods.")
      .def(py::init([](const PyClassType& t) {
             CompilationUnit::registerClass(t.unit, t.type);
             return PyScriptObject{makeIntrusive<ObjectObj>(t.type)};
           }),
           py::arg("type"))
      .def_property_readonly("type", [](const PyScriptObject& o) { return classHandle(o.object->type); })
      .def("getattr", [](const PyScriptObject& o, const std::string& name) { return getAttribute(o.object, name); })
      .def(
          "_archive_code",
          [](const PyScriptObject& o) {
            // What torch.jit.save writes under code/ for this object's type:
            // [(path, text)] and the CONSTANTS table.
            ArchiveCodeWriter writer;
            writer.convertTypes(o.object->type);
            py::list files, constants;
            for (const CodeFile& f : writer.files()) files.append(py::make_tuple(f.path, f.text));
            for (const IValue& c : writer.constants()) constants.append(toPython(c));
            return py::make_tuple(files, constants);
          },
          "The code/ records of an archive of this object: ([(path, text)], constants).")
      .def("setattr", [](const PyScriptObject& o, const std::string& name,
                         py::handle value) { setAttribute(o.object, name, value); })
      .def("hasattr",
           [](const PyScriptObject& o, const std::string& name) {
             return o.object->type->hasAttribute(name) || o.object->type->findConstant(name) != nullptr;
           })
      .def("has_method",
           [](const PyScriptObject& o, const std::string& name) { return o.object->type->findMethod(name) != nullptr; })
      .def("get_method", [](const PyScriptObject& o, const std::string& name) { return getMethod(o.object, name); })
      .def("__getattr__",
           [](const PyScriptObject& o, const std::string& name) -> py::object {
             const ClassType& cls = *o.object->type;
             if (cls.hasAttribute(name) || cls.findConstant(name)) return getAttribute(o.object, name);
             if (cls.findMethod(name)) return py::cast(getMethod(o.object, name));
             throw py::attribute_error("'" + cls.unqualifiedName() + "' object has no attribute '" + name + "'");
           })
      .def("__setattr__",
           [](py::object self, const std::string& name, py::handle value) {
             // The class's attributes are its slots (type-checked); other
             // names are plain Python attributes of the wrapper.
             const auto& object = self.cast<PyScriptObject&>().object;
             if (object->type->hasAttribute(name) || object->type->findConstant(name)) {
               setAttribute(object, name, value);
               return;
             }
             py::module_::import("builtins").attr("object").attr("__setattr__")(self, name, value);
           })
      .def("__eq__",
           [](const PyScriptObject& a, const py::object& b) {
             return py::isinstance<PyScriptObject>(b) && b.cast<PyScriptObject&>().object.get() == a.object.get();
           })
      .def("__hash__", [](const PyScriptObject& o) { return std::hash<const void*>()(o.object.get()); })
      .def("__repr__", [](const PyScriptObject& o) { return "<kiln.ScriptObject " + o.object->type->name() + ">"; });

  m.def(
      "_compile_methods",
      [](PyClassType& t, const py::dict& methods, const std::vector<std::string>& roots,
         const py::object& method_source, const py::object& explain_missing) {
        std::vector<MethodSource> sources;
        for (auto [key, value] : methods) {
          std::string name = py::str(key);
          if (t.type->findMethod(name)) continue;  // compiled before (a shared type)
          auto entry = value.cast<py::tuple>();
          if (entry.size() != 4) throw py::value_error("methods map names to (source, filename, first_line, lookup)");
          TreeRef def = parseDef(entry[0].cast<std::string>(), entry[1].cast<std::string>(), entry[2].cast<size_t>());
          py::object lookup = entry[3];
          ResolverPtr resolver = lookup.is_none() ? nullptr : makePythonResolver(lookup, name);
          sources.push_back({def, resolver});
        }
        CompilationUnit::registerClass(t.unit, t.type);
        CompilationTarget target = compilationTarget(t.unit);
        ResolverPtr classes;
        if (!method_source.is_none() || !explain_missing.is_none()) {
          classes = std::make_shared<PythonClassResolver>(method_source, explain_missing);
        }
        defineMethods(t.type, sources, roots, target, classes);
      },
      py::arg("type"), py::arg("methods"), py::arg("roots"), py::arg("method_source") = py::none(),
      py::arg("explain_missing") = py::none(),
      "Compiles `roots` (and the methods they use, on this class or others, each the first time it is used) "
      "from {name: (source, filename, first_line, lookup)}; a method not there is asked of "
      "`method_source(type, name)` (the same tuple, or None), and `explain_missing(type, name)` says why a "
      "class lacks an attribute.");

  m.def(
      "_create_method",
      [](PyClassType& t, const std::string& name, const std::shared_ptr<Graph>& graph) {
        if (graph->inputs().empty()) throw Error("the graph of method '" + name + "' needs `self` as its first input");
        if (t.type->findMethod(name)) throw Error("'" + t.type->name() + "' already has a method '" + name + "'");
        auto copy = graph->copy();
        copy->inputs()[0]->setType(t.type);
        CompilationUnit::registerClass(t.unit, t.type);
        t.unit->createMethod(t.type, name, std::move(copy));
      },
      py::arg("type"), py::arg("name"), py::arg("graph"),
      "Adds a method made of a graph (a trace) whose first input is self; the schema comes from the graph.");

  m.def(
      "_compile_class",
      [](const std::string& source, const std::string& filename, size_t first_line, const py::object& lookup,
         const std::string& qualified_name) {
        Parser parser(std::make_shared<const Source>(source, filename, first_line));
        TreeRef class_def;
        for (const TreeRef& t : parser.parseFile()) {
          if (t->kind() == TK_CLASS) {
            class_def = t;
            break;
          }
        }
        if (!class_def) throw Error("expected a class definition in the source of " + qualified_name);
        auto unit = std::make_shared<CompilationUnit>();
        auto type = ClassType::create(qualified_name);
        CompilationUnit::registerClass(unit, type);
        ResolverPtr resolver = lookup.is_none() ? nullptr : makePythonResolver(lookup, qualified_name);
        CompilationTarget target = compilationTarget(unit);
        defineClass(type, class_def, resolver, target);
        return PyClassType{type, unit};
      },
      py::arg("source"), py::arg("filename"), py::arg("first_line"), py::arg("lookup"), py::arg("qualified_name"),
      "Compiles a script class (the source of a `class` statement) into a new class type.");
  m.def(
      "_compile_interface",
      [](const std::string& source, const std::string& filename, size_t first_line, const py::object& lookup,
         const std::string& qualified_name, bool is_module) {
        Parser parser(std::make_shared<const Source>(source, filename, first_line));
        for (const TreeRef& t : parser.parseFile()) {
          if (t->kind() != TK_CLASS) continue;
          ResolverPtr resolver = lookup.is_none() ? nullptr : makePythonResolver(lookup, qualified_name);
          auto unit = std::make_shared<CompilationUnit>();
          ClassTypePtr type = defineInterface(t, qualified_name, is_module, resolver);
          CompilationUnit::registerClass(unit, type);
          return PyClassType{type, unit};
        }
        throw Error("expected a class definition in the source of " + qualified_name);
      },
      py::arg("source"), py::arg("filename"), py::arg("first_line"), py::arg("lookup"), py::arg("qualified_name"),
      py::arg("is_module"),
      "Compiles an interface (the source of a `@torch.jit.interface` class) into an interface type.");
}

}  // namespace kiln::python
