// Calling registered operators from Python. Every `aten::` operator becomes a
// kiln function (and a Tensor method when its first argument is `Tensor self`)
// through one generic path: match the Python arguments against each overload's
// schema, convert them to IValues, run the operation on a stack, convert the
// results back. No op has a hand-written binding.
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "bindings.h"
#include "kiln/core/argument_binder.h"
#include "kiln/core/dispatch_hook.h"

namespace kiln::python {

namespace {

bool isPythonInt(py::handle obj) { return PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr()); }
bool isPythonNumber(py::handle obj) {
  return PyLong_Check(obj.ptr()) || PyFloat_Check(obj.ptr()) || PyBool_Check(obj.ptr()) || PyComplex_Check(obj.ptr());
}
IValue complexToIValue(py::handle obj) {
  Py_complex z = PyComplex_AsCComplex(obj.ptr());
  return IValue(std::complex<double>(z.real, z.imag));
}
bool isSequence(py::handle obj) { return py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj); }

std::optional<IValue> toIValueOfType(py::handle obj, const TypePtr& type, const std::string& type_text, bool relaxed);

// Whether `actual` fits `pattern`, a schema type whose variables match anything.
bool matchesPattern(const TypePtr& actual, const TypePtr& pattern) {
  if (pattern->kind() == TypeKind::Var) return true;
  if (!pattern->hasFreeVariables()) return actual->isSubtypeOf(*pattern);
  auto contained = actual->containedTypes();
  auto pattern_contained = pattern->containedTypes();
  if (actual->kind() != pattern->kind() || contained.size() != pattern_contained.size()) return false;
  for (size_t i = 0; i < contained.size(); ++i) {
    if (!matchesPattern(contained[i], pattern_contained[i])) return false;
  }
  return true;
}

// A schema type with its variables bound to Tensor: the type of an empty
// container, as TorchScript types `[]` and `{}`.
TypePtr defaultType(const TypePtr& pattern) {
  if (pattern->kind() == TypeKind::Var) return TensorType::get();
  std::vector<TypePtr> contained;
  for (const TypePtr& t : pattern->containedTypes()) contained.push_back(defaultType(t));
  return contained.empty() ? pattern : pattern->withContained(std::move(contained));
}

bool isEmptyContainer(const IValue& v) {
  return (v.isList() && v.toListRef().elements.empty()) || (v.isDict() && v.toDictRef().empty());
}

// The element type of a container built from Python values for a schema
// type with variables (`t[]`, `Dict(str, t)`): the values' unified type, as
// TorchScript types a literal. Empty lists and dicts among the values say
// nothing about their own element types and take the unified one
// (`[[1], []]` is a List[List[int]]).
std::optional<TypePtr> inferElementType(std::vector<IValue>& values, const TypePtr& pattern) {
  if (!pattern->hasFreeVariables()) return pattern;
  if (values.empty()) return defaultType(pattern);
  TypePtr unified;
  for (const IValue& v : values) {
    if (isEmptyContainer(v)) continue;
    TypePtr t = unshapedType(v.type());
    auto next = unified ? unifyTypes(unified, t) : std::optional<TypePtr>(t);
    if (!next) return std::nullopt;
    unified = *next;
  }
  if (!unified) unified = values[0].type();
  for (IValue& v : values) {
    if (!isEmptyContainer(v)) continue;
    if (const auto* list_type = unified->cast<ListType>(); list_type && v.isList()) {
      v.toListRef().element_type = list_type->elementType();
    } else if (const auto* dict_type = unified->cast<DictType>(); dict_type && v.isDict()) {
      v.toDictRef().key_type = dict_type->keyType();
      v.toDictRef().value_type = dict_type->valueType();
    } else {
      return std::nullopt;
    }
  }
  if (!matchesPattern(unified, pattern)) return std::nullopt;
  return unified;
}

// A Python value as the IValue of its own type, for a schema type variable.
std::optional<IValue> inferIValue(py::handle obj) {
  if (py::isinstance<Tensor>(obj)) return IValue(obj.cast<Tensor>());
  if (auto n = numberToIValue(obj)) return n;
  if (py::isinstance<py::str>(obj)) return IValue(obj.cast<std::string>());
  if (obj.is_none()) return IValue();
  if (auto object = objectToIValue(obj, nullptr)) return object;
  if (py::isinstance<py::list>(obj)) return toIValueOfType(obj, ListType::create(VarType::create("t")), "", false);
  if (py::isinstance<py::dict>(obj)) {
    return toIValueOfType(obj, DictType::create(VarType::create("k"), VarType::create("v")), "", false);
  }
  if (py::isinstance<py::tuple>(obj)) {
    std::vector<IValue> elems;
    for (py::handle item : obj) {
      auto v = inferIValue(item);
      if (!v) return std::nullopt;
      elems.push_back(std::move(*v));
    }
    return IValue::tuple(std::move(elems));
  }
  return std::nullopt;
}

// A Union (or Any) parameter takes a value whose own type (an int is `int`,
// [1, 2] is `List[int]`) is one of its members, as torch 1.13 converts it: a
// bool is not an int here, nor an int a float, and an empty list or dict has
// no type.
std::optional<IValue> unionToIValue(py::handle obj, const TypePtr& type) {
  if ((py::isinstance<py::list>(obj) || py::isinstance<py::dict>(obj)) && py::len(obj) == 0) return std::nullopt;
  if (auto v = inferIValue(obj); v && v->type()->isSubtypeOf(*type)) return v;
  return std::nullopt;
}

std::optional<IValue> toIValueOfType(py::handle obj, const TypePtr& type, const std::string& type_text, bool relaxed) {
  switch (type->kind()) {
    case TypeKind::Tensor:
      if (py::isinstance<Tensor>(obj)) return IValue(obj.cast<Tensor>());
      if (relaxed && isPythonNumber(obj)) return IValue(scalarToTensor(numberToIValue(obj)->toScalar()));
      return std::nullopt;
    case TypeKind::Int:
      if (type_text.rfind("ScalarType", 0) == 0) {
        if (auto dtype = dtypeFromObject(obj)) return IValue(static_cast<int64_t>(*dtype));
        return std::nullopt;
      }
      if (isPythonInt(obj)) return IValue(obj.cast<int64_t>());
      if (relaxed && PyBool_Check(obj.ptr())) return IValue(static_cast<int64_t>(obj.cast<bool>()));
      return std::nullopt;
    case TypeKind::Float:
      if (PyFloat_Check(obj.ptr()) || isPythonInt(obj)) return IValue(obj.cast<double>());
      return std::nullopt;
    case TypeKind::Bool:
      if (PyBool_Check(obj.ptr())) return IValue(obj.cast<bool>());
      return std::nullopt;
    case TypeKind::Complex:
      // Python ints and floats widen to complex, as torch's List[complex] takes [1j, 2].
      if (PyComplex_Check(obj.ptr()) || PyFloat_Check(obj.ptr()) || isPythonInt(obj)) return complexToIValue(obj);
      return std::nullopt;
    case TypeKind::Number:
      if (isPythonNumber(obj)) return numberToIValue(obj);
      if (relaxed && py::isinstance<Tensor>(obj)) {
        Tensor t = obj.cast<Tensor>();
        if (t.numel() == 1) return IValue(t.item());
      }
      return std::nullopt;
    case TypeKind::String:
      if (py::isinstance<py::str>(obj)) return IValue(obj.cast<std::string>());
      return std::nullopt;
    case TypeKind::None:
      if (obj.is_none()) return IValue();
      return std::nullopt;
    case TypeKind::Device:
      if (py::isinstance<py::str>(obj) && obj.cast<std::string>().rfind("cpu", 0) == 0)
        return IValue(std::string("cpu"));
      return std::nullopt;
    case TypeKind::Generator: return std::nullopt;  // only None, handled by Optional
    case TypeKind::Optional: {
      if (obj.is_none()) return IValue();
      return toIValueOfType(obj, type->cast<OptionalType>()->elementType(), type_text, relaxed);
    }
    case TypeKind::List: {
      const TypePtr& elem = type->cast<ListType>()->elementType();
      if (elem->kind() == TypeKind::Int && isPythonInt(obj)) {
        // `int[1] dim` accepts a bare int (t.sum(1)).
        return IValue(std::vector<int64_t>{obj.cast<int64_t>()});
      }
      if (!isSequence(obj)) return std::nullopt;
      std::vector<IValue> elems;
      for (py::handle item : obj) {
        auto v = toIValueOfType(item, elem, "", relaxed);
        if (!v) return std::nullopt;
        elems.push_back(std::move(*v));
      }
      TypePtr elem_type = elem;
      if (elem->hasFreeVariables()) {
        auto inferred = inferElementType(elems, elem);
        if (!inferred) return std::nullopt;
        elem_type = *inferred;
      }
      return IValue(makeIntrusive<ListObj>(std::move(elem_type), std::move(elems)));
    }
    case TypeKind::Dict: {
      if (!py::isinstance<py::dict>(obj)) return std::nullopt;
      const auto* dict_type = type->cast<DictType>();
      std::vector<IValue> keys, values;
      for (auto item : obj.cast<py::dict>()) {
        auto key = toIValueOfType(item.first, dict_type->keyType(), "", relaxed);
        auto value = toIValueOfType(item.second, dict_type->valueType(), "", relaxed);
        if (!key || !value) return std::nullopt;
        keys.push_back(std::move(*key));
        values.push_back(std::move(*value));
      }
      auto key_type = inferElementType(keys, dict_type->keyType());
      auto value_type = inferElementType(values, dict_type->valueType());
      if (!key_type || !value_type) return std::nullopt;
      auto dict = makeIntrusive<DictObj>(*key_type, *value_type);
      for (size_t i = 0; i < keys.size(); ++i) dict->insertOrAssign(std::move(keys[i]), std::move(values[i]));
      return IValue(std::move(dict));
    }
    case TypeKind::Tuple: {
      const auto& elems_t = type->cast<TupleType>()->elements();
      if (!isSequence(obj) || py::len(obj) != elems_t.size()) return std::nullopt;
      std::vector<IValue> elems;
      size_t i = 0;
      for (py::handle item : obj) {
        auto v = toIValueOfType(item, elems_t[i++], "", relaxed);
        if (!v) return std::nullopt;
        elems.push_back(std::move(*v));
      }
      // A NamedTuple parameter's value carries its name and fields (from a
      // Python namedtuple or a plain tuple, as 1.13 accepts both).
      return IValue(makeIntrusive<TupleObj>(std::move(elems), type->cast<TupleType>()->isNamed() ? type : nullptr));
    }
    case TypeKind::Any:
    case TypeKind::Union: return unionToIValue(obj, type);
    case TypeKind::Var: return inferIValue(obj);
    case TypeKind::Class: return objectToIValue(obj, type);
    default: return std::nullopt;
  }
}

std::string pythonTypeName(py::handle obj) {
  if (py::isinstance<Tensor>(obj)) return "Tensor";
  if (dtypeFromObject(obj)) return "dtype";
  return py::str(py::type::handle_of(obj).attr("__name__"));
}

// One Python-visible operator name with all its overloads.
class OpDispatcher {
 public:
  OpDispatcher(std::string name, std::vector<OperatorPtr> overloads)
      : name_(std::move(name)), overloads_(std::move(overloads)) {}

  py::object call(py::args args, py::kwargs kwargs) const {
    Stack stack;
    Mutated mutated;
    const bool out_tuple = hasOutTuple(kwargs);
    for (bool relaxed : {false, true}) {
      for (const OperatorPtr& op : overloads_) {
        stack.clear();
        mutated.clear();
        const std::optional<py::kwargs> spread =
            out_tuple ? spreadOutTuple(op->schema(), kwargs) : std::optional<py::kwargs>();
        if (bind(op->schema(), args, spread ? *spread : kwargs, relaxed, stack, mutated)) {
          py::object result = run(*op, stack);
          writeBack(mutated);
          return result;
        }
      }
    }
    throw kiln::TypeError(mismatchMessage(args, kwargs));
  }

  const std::string& name() const { return name_; }
  std::vector<std::string> signatures() const {
    std::vector<std::string> out;
    for (const auto& op : overloads_) out.push_back(op->schema().str());
    return out;
  }

 private:
  // torch's Python API takes the outputs of an operator with several as one
  // tuple, `torch.sort(x, out=(values, indices))`, where the schema names
  // each (`*, Tensor(a!) values, Tensor(b!) indices`): the keyword arguments
  // with `out` spread over those names, or nullopt where that does not apply.
  static bool hasOutTuple(const py::kwargs& kwargs) {
    if (!kwargs.contains("out")) return false;
    py::handle out = kwargs["out"];
    return py::isinstance<py::tuple>(out) || py::isinstance<py::list>(out);
  }

  // Only for kwargs with hasOutTuple.
  static std::optional<py::kwargs> spreadOutTuple(const FunctionSchema& schema, const py::kwargs& kwargs) {
    py::handle out = kwargs["out"];
    std::vector<const Argument*> outs;
    for (const Argument& a : schema.arguments()) {
      if (a.name == "out") return std::nullopt;
      if (a.kwarg_only && a.isOutOrInPlace() && a.type->kind() == TypeKind::Tensor) outs.push_back(&a);
    }
    const py::sequence given = py::reinterpret_borrow<py::sequence>(out);
    if (outs.size() < 2 || given.size() != outs.size()) return std::nullopt;
    py::kwargs spread;
    for (const auto& [key, value] : kwargs) {
      if (py::str(key).cast<std::string>() != "out") spread[key] = value;
    }
    for (size_t i = 0; i < outs.size(); ++i) spread[py::str(outs[i]->name)] = given[i];
    return spread;
  }

  // Python lists and dicts passed to a container the operator mutates in place
  // (`t[](a!) self`), with the IValue the operator saw.
  using Mutated = std::vector<std::pair<py::handle, IValue>>;

  // The operator mutated copies of the Python containers: show the changes in
  // the caller's objects, as list.append(x) would.
  static void writeBack(const Mutated& mutated) {
    for (const auto& [obj, value] : mutated) {
      py::object updated = toPython(value);
      if (py::isinstance<py::list>(obj)) {
        if (PyList_SetSlice(obj.ptr(), 0, PY_SSIZE_T_MAX, updated.ptr()) != 0) throw py::error_already_set();
      } else {
        obj.attr("clear")();
        obj.attr("update")(updated);
      }
    }
  }

  // The Python dispatcher's conversions for the argument binder: Python
  // values to IValues of the parameters' types (Python numbers for Tensor
  // in the relaxed pass), trailing ints packed into an int[] parameter.
  class PythonPolicy : public ConversionPolicy {
   public:
    PythonPolicy(const std::vector<py::handle>& args, const std::vector<py::handle>& kwargs, bool relaxed, Stack& stack,
                 Mutated& mutated)
        : args_(args), kwargs_(kwargs), relaxed_(relaxed), stack_(stack), mutated_(mutated) {}

    // `x.view(2, 3)`, `zeros(2, 3)`: trailing ints packed into the int[] parameter.
    bool packsPositionals(const FunctionSchema& schema, size_t param_index, size_t first) override {
      const Argument& param = schema.arguments()[param_index];
      size_t npositional = 0;
      for (const Argument& a : schema.arguments()) npositional += a.kwarg_only ? 0 : 1;
      return param.type->kind() == TypeKind::List &&
             param.type->cast<ListType>()->elementType()->kind() == TypeKind::Int && param_index + 1 == npositional &&
             args_.size() > npositional && isPythonInt(args_[first]);
    }

    std::optional<std::string> convert(const Argument& param, const ParamSource& source, TypeEnv&) override {
      std::optional<IValue> value;
      switch (source.kind) {
        case ParamSource::Kind::Packed: {
          std::vector<int64_t> packed;
          for (size_t j = source.index; j < source.end; ++j) {
            if (!isPythonInt(args_[j])) return "";
            packed.push_back(args_[j].cast<int64_t>());
          }
          value = IValue(packed);
          break;
        }
        case ParamSource::Kind::Positional:
        case ParamSource::Kind::Keyword: {
          py::handle arg = source.kind == ParamSource::Kind::Positional ? args_[source.index] : kwargs_[source.index];
          value = toIValueOfType(arg, param.type, param.type_text, relaxed_);
          if (!value) return "";
          noteMutated(param, arg, *value, mutated_);
          break;
        }
        case ParamSource::Kind::Default: value = *param.default_value; break;
        case ParamSource::Kind::Self: return "";  // Python calls pass self positionally
      }
      stack_.push_back(std::move(*value));
      return std::nullopt;
    }

   private:
    const std::vector<py::handle>& args_;
    const std::vector<py::handle>& kwargs_;
    bool relaxed_;
    Stack& stack_;
    Mutated& mutated_;
  };

  static bool bind(const FunctionSchema& schema, const py::args& args, const py::kwargs& kwargs, bool relaxed,
                   Stack& stack, Mutated& mutated) {
    CallShape shape;
    shape.num_positional = args.size();
    std::vector<py::handle> positional(args.begin(), args.end());
    std::vector<py::handle> keyword_values;
    if (kwargs) {
      for (auto item : kwargs) {
        shape.keywords.push_back(py::str(item.first));
        keyword_values.push_back(item.second);
      }
      // torch's Python functions call `self` `input` (torch.ceil(input=x)).
      if (schema.argumentIndex("self") && !schema.argumentIndex("input")) {
        for (std::string& name : shape.keywords) {
          if (name == "input") name = "self";
        }
      }
    }
    PythonPolicy policy(positional, keyword_values, relaxed, stack, mutated);
    TypeEnv env;
    BindResult bound = bindArguments(schema, shape, policy, env);
    // A `*` schema's extra positionals have no Python binding.
    return bound && bound.bound->varargs.empty();
  }

  static void noteMutated(const Argument& param, py::handle arg, const IValue& value, Mutated& mutated) {
    TypeKind kind = param.type->kind();
    bool container = (kind == TypeKind::List && py::isinstance<py::list>(arg)) ||
                     (kind == TypeKind::Dict && py::isinstance<py::dict>(arg));
    // `t[](a!)` marks the container written; `Tensor(a!)[]` only its elements.
    if (container && param.isOutOrInPlace() && param.type_text.ends_with("!)")) mutated.emplace_back(arg, value);
  }

  py::object run(const Operator& op, Stack& stack) const {
    {
      py::gil_scoped_release no_gil;
      runOperator(op, stack);  // the tracer, when active, records the call here
    }
    const auto& rets = op.schema().returns();
    if (rets.size() == 1 && !op.schema().isVarret()) return toPython(stack.back());
    if (stack.empty()) return py::none();
    py::tuple values(stack.size());
    for (size_t i = 0; i < stack.size(); ++i) values[i] = toPython(stack[i]);
    if (!rets.empty() && !rets[0].name.empty()) return namedTuple(op.schema())(*values);
    return values;
  }

  // torch returns named tuples (values, indices) for ops such as max.dim.
  py::object namedTuple(const FunctionSchema& schema) const {
    static std::unordered_map<std::string, py::object>* cache = new std::unordered_map<std::string, py::object>();
    std::string key = schema.name() + "." + schema.overloadName();
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
    py::list fields;
    for (const Argument& r : schema.returns()) fields.append(r.name);
    std::string type_name(Symbol::fromQualString(schema.name()).name());
    py::object type = py::module_::import("collections").attr("namedtuple")(type_name, fields);
    cache->emplace(key, type);
    return type;
  }

  std::string mismatchMessage(const py::args& args, const py::kwargs& kwargs) const {
    std::ostringstream out;
    out << name_ << "() received an invalid combination of arguments - got (";
    bool first = true;
    for (py::handle a : args) {
      out << (first ? "" : ", ") << pythonTypeName(a);
      first = false;
    }
    if (kwargs) {
      for (auto item : kwargs) {
        out << (first ? "" : ", ") << std::string(py::str(item.first)) << "=" << pythonTypeName(item.second);
        first = false;
      }
    }
    out << "), but expected one of:";
    for (const auto& op : overloads_) {
      std::string s = op->schema().str();
      out << "\n * " << s.substr(s.find('('), s.find(" -> ") - s.find('('));
    }
    return out.str();
  }

  std::string name_;
  std::vector<OperatorPtr> overloads_;
};

}  // namespace

std::optional<IValue> numberToIValue(py::handle obj) {
  if (PyBool_Check(obj.ptr())) return IValue(obj.cast<bool>());
  if (PyLong_Check(obj.ptr())) return IValue(obj.cast<int64_t>());
  if (PyFloat_Check(obj.ptr())) return IValue(obj.cast<double>());
  if (PyComplex_Check(obj.ptr())) return complexToIValue(obj);
  return std::nullopt;
}

std::optional<IValue> toIValue(py::handle obj, const Argument& arg, bool relaxed) {
  return toIValueOfType(obj, arg.type, arg.type_text, relaxed);
}

// A TorchScript NamedTuple comes to Python as a collections.namedtuple
// class of its name and fields (one class per type), as torch returns them
// from modules that were loaded rather than scripted from Python.
static py::object namedTupleClass(const TupleType& type) {
  static auto* cache = new std::unordered_map<std::string, py::object>();
  std::string key = type.name().value_or("NamedTuple");
  for (const std::string& f : type.fieldNames()) key += "," + f;
  auto it = cache->find(key);
  if (it != cache->end()) return it->second;
  py::list fields;
  for (const std::string& f : type.fieldNames()) fields.append(f);
  std::string name = type.name().value_or("NamedTuple");
  name = name.substr(name.rfind('.') + 1);
  py::object cls = py::module_::import("collections").attr("namedtuple")(name, fields);
  cache->emplace(key, cls);
  return cls;
}

py::object toPython(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None: return py::none();
    case IValue::Tag::Tensor: return py::cast(v.toTensor());
    case IValue::Tag::Double: return py::float_(v.toDouble());
    case IValue::Tag::Complex: {
      const std::complex<double> z = v.toComplexDouble();
      return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(z.real(), z.imag()));
    }
    case IValue::Tag::Int: return py::int_(v.toInt());
    case IValue::Tag::Bool: return py::bool_(v.toBool());
    case IValue::Tag::String: return py::str(v.toStringRef());
    case IValue::Tag::List: {
      py::list out;
      for (const IValue& e : v.toListRef().elements) out.append(toPython(e));
      return out;
    }
    case IValue::Tag::Tuple: {
      const auto& elems = v.toTupleRef().elements;
      py::tuple out(elems.size());
      for (size_t i = 0; i < elems.size(); ++i) out[i] = toPython(elems[i]);
      const TypePtr& type = v.toTupleRef().type;
      if (type && type->isa<TupleType>() && !type->cast<TupleType>()->fieldNames().empty()) {
        return namedTupleClass(*type->cast<TupleType>())(*out);
      }
      return out;
    }
    case IValue::Tag::Device: return py::str(v.toDevice().str());
    case IValue::Tag::Dict: {
      py::dict out;
      for (const auto& [key, value] : v.toDictRef().items()) out[toPython(key)] = toPython(value);
      return out;
    }
    case IValue::Tag::Object: return objectToPython(v);
    case IValue::Tag::Future: KILN_ERROR("cannot convert a ", v.tagName(), " to a Python value");
  }
  return py::none();
}

namespace {

bool mentionsTensor(const TypePtr& type) {
  if (type->kind() == TypeKind::Tensor) return true;
  for (const TypePtr& contained : type->containedTypes()) {
    if (mentionsTensor(contained)) return true;
  }
  return false;
}

// torch.* and Tensor methods are the tensor library; TorchScript's own
// scalar, list and string operators (aten::add.int, aten::len.t, ...) and
// node-dependent prims are reachable from graphs only, as in PyTorch.
bool exposedToPython(const Operator& op) {
  if (op.isNodeDependent() || op.exposure() == OpExposure::ScriptOnly) return false;
  for (const Argument& a : op.schema().arguments()) {
    if (mentionsTensor(a.type)) return true;
  }
  for (const Argument& r : op.schema().returns()) {
    if (mentionsTensor(r.type)) return true;
  }
  return false;
}

}  // namespace

void bindDispatch(py::module_& m) {
  py::class_<OpDispatcher>(m, "OpDispatcher")
      .def("__call__", &OpDispatcher::call)
      .def_property_readonly("name", &OpDispatcher::name)
      .def_property_readonly("signatures", &OpDispatcher::signatures);

  // {name: OpDispatcher} for every operator of a namespace, keyed by the bare name.
  m.def("_operators", [](const std::string& ns) {
    std::map<std::string, std::vector<OperatorPtr>> by_name;
    for (const OperatorPtr& op : getAllOperators()) {
      if (op->symbol().ns() == ns && exposedToPython(*op)) by_name[std::string(op->symbol().name())].push_back(op);
    }
    py::dict out;
    for (auto& [name, ops] : by_name) out[py::str(name)] = OpDispatcher(name, std::move(ops));
    return out;
  });
  // Names whose first argument is `Tensor self`: these are Tensor methods too.
  m.def("_method_names", [](const std::string& ns) {
    std::set<std::string> names;
    for (const OperatorPtr& op : getAllOperators()) {
      const auto& args = op->schema().arguments();
      if (op->symbol().ns() == ns && exposedToPython(*op) && !args.empty() && args[0].name == "self" &&
          args[0].type->kind() == TypeKind::Tensor) {
        names.insert(std::string(op->symbol().name()));
      }
    }
    return names;
  });
  // One overload by its full name ("aten::remainder.int"), exposed or not:
  // lets tests call TorchScript-only operators directly.
  m.def("_overload", [](const std::string& qualified) {
    auto dot = qualified.find('.', qualified.find("::"));
    std::string name = qualified.substr(0, dot);
    std::string overload = dot == std::string::npos ? "" : qualified.substr(dot + 1);
    OperatorPtr op = findOperator(Symbol::fromQualString(name), overload);
    KILN_CHECK(op, "no operator ", qualified);
    KILN_CHECK(!op->isNodeDependent(), qualified, " needs a graph node to run");
    return OpDispatcher(std::string(op->symbol().name()), {op});
  });
  m.def("_schemas", [] {
    std::vector<std::string> out;
    for (const OperatorPtr& op : getAllOperators()) out.push_back(op->schema().str());
    return out;
  });
  m.def("_parse_schema", [](const std::string& text) { return parseSchema(text).str(); });
}

}  // namespace kiln::python
