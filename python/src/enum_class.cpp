// Python Enum classes in script code, as TorchScript 1.13 takes them without
// scripting: kiln compiles an Enum as a script class with the attributes
// `name` and `value` (and `__eq__`/`__ne__` by name; kiln._jit writes its
// source), and its members are objects of it. `Color.RED` constructs the
// member, `for c in Color` iterates over all of them; members passed from
// Python become such objects and come back as the Enum's members.
#include <pybind11/stl.h>

#include <map>

#include "bindings.h"
#include "kiln/frontend/error_report.h"
#include "kiln/frontend/sugared_value.h"
#include "kiln/ir/graph.h"

namespace kiln::python {

namespace {

struct EnumMember {
  std::string name;
  IValue value;
};

// The value an Enum class's name stands for in script code.
class EnumClassValue : public ClassValue {
 public:
  EnumClassValue(ClassTypePtr type, std::vector<EnumMember> members)
      : ClassValue(std::move(type)), members_(std::move(members)) {}
  std::string kind() const override { return "enum"; }

  SugaredValuePtr attr(const SourceRange& loc, Graph& graph, const std::string& field) override {
    for (const EnumMember& m : members_) {
      if (m.name == field) return std::make_shared<SimpleValue>(member(loc, graph, m));
    }
    throwSourceError(loc, "'" + type()->unqualifiedName() + "' has no enum member '" + field + "'");
  }
  SugaredValuePtr iter(const SourceRange& loc, Graph& graph) override {
    std::vector<Value*> values;
    for (const EnumMember& m : members_) values.push_back(member(loc, graph, m));
    Value* list = graph.insertNode(graph.createList(type(), values))->output();
    return std::make_shared<SimpleValue>(list)->iter(loc, graph);
  }

 private:
  Value* member(const SourceRange& loc, Graph& graph, const EnumMember& m) {
    std::vector<NamedValue> args = {NamedValue(loc, graph.insertConstant(IValue(m.name), loc)),
                                    NamedValue(loc, graph.insertConstant(m.value, loc))};
    return ClassValue::call(loc, graph, args, {}, 1)->asValue(loc, graph);
  }

  std::vector<EnumMember> members_;
};

struct PyEnumClass {
  ClassTypePtr type;
  std::vector<EnumMember> members;
  py::object class_type;  // the kiln._C.ClassType: it keeps the unit holding the methods alive
};

// The Enums script code has seen, by their class type's name: members go
// in as objects of the type and come back as members of the Python class.
struct EnumEntry {
  py::object python_class;
  ClassTypePtr type;
};
std::map<std::string, EnumEntry>& enumClasses() {
  static auto* classes = new std::map<std::string, EnumEntry>();
  return *classes;
}

}  // namespace

SugaredValuePtr enumClassValue(py::handle obj) {
  if (!py::isinstance<PyEnumClass>(obj)) return nullptr;
  const auto& e = obj.cast<PyEnumClass&>();
  return std::make_shared<EnumClassValue>(e.type, e.members);
}

std::optional<py::object> enumMemberToPython(const IValue& value) {
  if (!value.isObject()) return std::nullopt;
  auto& classes = enumClasses();
  auto it = classes.find(value.toObject()->type->name());
  if (it == classes.end()) return std::nullopt;
  return it->second.python_class[py::str(value.toObject()->getAttr("name").toStringRef())];
}

std::optional<IValue> enumMemberToIValue(py::handle obj, const TypePtr& type) {
  for (const auto& [name, entry] : enumClasses()) {
    if (!py::isinstance(obj, entry.python_class)) continue;
    if (type && !entry.type->isSubtypeOf(*type)) return std::nullopt;
    auto value = constantFromPython(obj.attr("value"));
    if (!value) return std::nullopt;
    auto object = makeIntrusive<ObjectObj>(entry.type);
    object->setAttr("name", IValue(obj.attr("name").cast<std::string>()));
    object->setAttr("value", std::move(*value));
    return IValue(std::move(object));
  }
  return std::nullopt;
}

void bindEnumClasses(py::module_& m) {
  py::class_<PyEnumClass>(m, "EnumClass", "A Python Enum class as script code sees it.");
  m.def(
      "_enum_class",
      [](py::handle class_type, const std::vector<std::pair<std::string, py::object>>& members,
         py::object python_class) {
        auto type = classTypeFromPython(class_type);
        if (!type) throw py::type_error("expected a kiln._C.ClassType");
        PyEnumClass out{type, {}, py::reinterpret_borrow<py::object>(class_type)};
        for (const auto& [name, value] : members) {
          auto v = constantFromPython(value);
          if (!v) throw Error("enum member " + name + " has a value TorchScript cannot hold");
          out.members.push_back({name, *v});
        }
        enumClasses()[type->name()] = EnumEntry{std::move(python_class), type};
        return out;
      },
      py::arg("class_type"), py::arg("members"), py::arg("python_class"),
      "An Enum class for script code: its class type, its members (name, value) and the Python class.");
}

}  // namespace kiln::python
