#include "kiln/frontend/sugared_value.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "kiln/core/operator.h"
#include "kiln/frontend/error_report.h"
#include "kiln/tensor/scalar_type.h"
#include "kiln/tensor/scalar_type_names.h"

namespace kiln {

// --- SugaredValue defaults: "this value cannot be used that way" -------------------------

Value* SugaredValue::asValue(const SourceRange& loc, Graph&) {
  throwSourceError(loc, kind() + " cannot be used as a value");
}

SugaredValuePtr SugaredValue::attr(const SourceRange& loc, Graph&, const std::string& field) {
  throwSourceError(loc, "attribute lookup is not defined on " + kind());
}

SugaredValuePtr SugaredValue::call(const SourceRange& loc, Graph&, const std::vector<NamedValue>&,
                                   const std::vector<NamedValue>&, size_t) {
  throwSourceError(loc, "cannot call a " + kind());
}

SugaredValuePtr SugaredValue::iter(const SourceRange& loc, Graph&) {
  throwSourceError(loc, kind() + " object is not iterable");
}

Value* SugaredValue::len(const SourceRange& loc, Graph&) { throwSourceError(loc, kind() + " object has no len()"); }

SugaredValuePtr SugaredValue::getitem(const SourceRange& loc, Graph&, Value*) {
  throwSourceError(loc, kind() + " object is not subscriptable");
}

std::vector<SugaredValuePtr> SugaredValue::asTuple(const SourceRange& loc, Graph&, std::optional<size_t>) {
  throwSourceError(loc, kind() + " cannot be used as a tuple");
}

Value* asSimple(const SugaredValuePtr& v) {
  if (auto simple = std::dynamic_pointer_cast<SimpleValue>(v)) return simple->value();
  return nullptr;
}

// --- SimpleValue --------------------------------------------------------------------------

namespace {

// `x.long()`, `x.float()`, ...: TorchScript's builtin methods that are `x.to(dtype)`.
class TensorCastMethod : public SugaredValue {
 public:
  TensorCastMethod(Value* self, ScalarType dtype) : self_(self), dtype_(dtype) {}
  std::string kind() const override { return "builtin method"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t) override {
    if (!args.empty() || !kwargs.empty()) throwSourceError(loc, "casting methods such as .float() take no arguments");
    std::vector<NamedValue> to_args = {NamedValue(loc, self_),
                                       NamedValue(loc, graph.insertConstant(static_cast<int64_t>(dtype_), loc))};
    return std::make_shared<SimpleValue>(emitBuiltinCall(loc, graph, aten::to, to_args, {}));
  }

 private:
  Value* self_;
  ScalarType dtype_;
};

}  // namespace

std::string SimpleValue::kind() const { return "value of type '" + value_->type()->annotationStr() + "'"; }

namespace {

// The submodule attributes of a ModuleList/ModuleDict type, in order.
// The entries of an iterable module: its submodules (ModuleList, ModuleDict,
// Sequential) or, for one that has none (ParameterList, ParameterDict), its
// parameters.
std::vector<std::string> moduleEntries(const ClassType& cls) {
  std::vector<std::string> modules;
  std::vector<std::string> parameters;
  for (size_t i = 0; i < cls.numAttributes(); ++i) {
    if (cls.attributeKind(i) == SlotKind::Module) modules.push_back(cls.attributeName(i));
    if (cls.attributeKind(i) == SlotKind::Parameter) parameters.push_back(cls.attributeName(i));
  }
  return modules.empty() ? parameters : modules;
}

const ClassType* iterableModule(const Value* v) {
  auto cls = v->type()->cast<ClassType>();
  return cls && cls->iterableKind() != IterableKind::None ? cls : nullptr;
}

bool isIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

Value* emitGetAttr(const SourceRange& loc, Graph& graph, Value* object, const std::string& field) {
  // 1.13 gives attribute nodes no source range.
  Node* n = graph.insertNode(graph.createGetAttr(object, field));
  // TorchScript names the value after the field (`_0` for ModuleList entries).
  n->output()->setDebugName(isIdentifier(field) ? field : "_" + field);
  return n->output();
}

SugaredValuePtr MethodValue::call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                                  const std::vector<NamedValue>& kwargs, size_t) {
  auto cls = self_->type()->cast<ClassType>();
  Function* method = cls ? cls->findMethod(method_) : nullptr;
  if (!method)
    throwSourceError(loc,
                     "'" + self_->type()->annotationStr() + "' object has no attribute or method '" + method_ + "'");
  // The object binds to the first parameter, whatever its name (`def f(s)`).
  const auto& params = method->getSchema().arguments();
  std::optional<NamedValue> self;
  std::vector<NamedValue> positional = args;
  if (!params.empty() && params[0].name == "self") {
    self = NamedValue(loc, "self", self_);
  } else {
    positional.insert(positional.begin(), NamedValue(self_));
  }
  auto [index, matched] = matchSchemas({&method->getSchema()}, loc, graph, positional, kwargs, self);
  (void)index;
  Node* call = graph.insertNode(graph.create(prim::CallMethod, matched.inputs));
  call->s_(attr::name, method_);
  call->setSourceRange(loc);
  call->output()->setType(matched.return_types.empty() ? NoneType::get() : matched.return_types[0]);
  return std::make_shared<SimpleValue>(call->output());
}

SugaredValuePtr ClassValue::attr(const SourceRange& loc, Graph& graph, const std::string& field) {
  if (field == "__new__") return std::make_shared<SpecialFormValue>(prim::CreateObject);
  // `C.hook(module, ...)`: how printed code calls a submodule's hooks (a
  // method used as a function, prim::CallFunction). The method lives as
  // long as its class.
  if (Function* method = type_->findMethod(field)) {
    return std::make_shared<FunctionValue>(std::shared_ptr<Function>(type_, method));
  }
  return SugaredValue::attr(loc, graph, field);
}

SugaredValuePtr ClassValue::call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                                 const std::vector<NamedValue>& kwargs, size_t n_binders) {
  if (type_->isModule()) throwSourceError(loc, "cannot construct module '" + type_->name() + "' in TorchScript");
  if (!type_->findMethod("__init__")) throwSourceError(loc, "class '" + type_->name() + "' has no __init__ method");
  Node* create = graph.insertNode(graph.create(prim::CreateObject));
  create->setSourceRange(loc);
  create->output()->setType(type_);
  MethodValue(create->output(), "__init__").call(loc, graph, args, kwargs, n_binders);
  return std::make_shared<SimpleValue>(create->output());
}

SugaredValuePtr NamedTupleConstructor::call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                                            const std::vector<NamedValue>& kwargs, size_t) {
  std::vector<Argument> fields;
  for (size_t i = 0; i < type_->elements().size(); ++i) {
    Argument field;
    field.name = i < type_->fieldNames().size() ? type_->fieldNames()[i] : "_" + std::to_string(i);
    field.type = type_->elements()[i];
    if (i < defaults_.size()) field.default_value = defaults_[i];
    fields.push_back(std::move(field));
  }
  FunctionSchema schema(type_->name().value_or("NamedTuple"), "", std::move(fields), {});
  std::ostringstream why;
  auto matched = tryMatchSchema(schema, loc, graph, args, kwargs, std::nullopt, &why, true);
  if (!matched) throwSourceError(loc, "cannot construct " + type_->annotationStr() + ":\n" + why.str());
  Node* tuple = graph.insertNode(graph.createTuple(matched->inputs, type_));
  tuple->setSourceRange(loc);
  return std::make_shared<SimpleValue>(tuple->output());
}

SugaredValuePtr ModuleDictMethod::call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                                       const std::vector<NamedValue>& kwargs, size_t) {
  if (!args.empty() || !kwargs.empty()) throwSourceError(loc, method_ + "() takes no arguments");
  std::vector<SugaredValuePtr> entries;
  for (const std::string& key : moduleEntries(*dict_->type()->cast<ClassType>())) {
    auto k = std::make_shared<ConstantValue>(IValue(key));
    if (method_ == "keys") {
      entries.push_back(k);
      continue;
    }
    auto v = std::make_shared<SimpleValue>(emitGetAttr(loc, graph, dict_, key));
    if (method_ == "values") {
      entries.push_back(v);
    } else {
      entries.push_back(std::make_shared<SugaredTupleValue>(std::vector<SugaredValuePtr>{k, v}));
    }
  }
  return std::make_shared<SugaredTupleValue>(std::move(entries));
}

SugaredValuePtr SimpleValue::call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                                  const std::vector<NamedValue>& kwargs, size_t n_binders) {
  auto cls = value_->type()->cast<ClassType>();
  if (cls && cls->isModule()) {
    if (!cls->findMethod("forward")) throwSourceError(loc, "module '" + cls->name() + "' has no forward method");
    return MethodValue(value_, "forward").call(loc, graph, args, kwargs, n_binders);
  }
  if (cls && cls->findMethod("__call__"))
    return MethodValue(value_, "__call__").call(loc, graph, args, kwargs, n_binders);
  return SugaredValue::call(loc, graph, args, kwargs, n_binders);
}

namespace {
// `x.__getitem__(t)` on a tensor: aten::index with the one index tensor, as
// 1.13 emits it (any other index is an error there).
class TensorGetItemMethod : public SugaredValue {
 public:
  explicit TensorGetItemMethod(Value* self) : self_(self) {}
  std::string kind() const override { return "method"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t) override {
    if (args.size() != 1 || !kwargs.empty()) throwSourceError(loc, "expected exactly 1 argument");
    Value* index = args[0].value ? args[0].value : graph.insertConstant(args[0].constant, loc);
    TypePtr element = OptionalType::create(TensorType::get());
    if (!index->type()->isSubtypeOf(*element)) {
      throwSourceError(loc, "Expected a list element that subtypes '" + element->annotationStr() +
                                "' but got an element of type '" + index->type()->annotationStr() + "'");
    }
    Value* indices = graph.insertNode(graph.createList(element, {index}))->output();
    return std::make_shared<SimpleValue>(emitBuiltinCall(loc, graph, aten::index, {self_, indices}));
  }

 private:
  Value* self_;
};
}  // namespace

SugaredValuePtr SimpleValue::attr(const SourceRange& loc, Graph& graph, const std::string& field) {
  const TypePtr& type = value_->type();
  if (auto cls = type->cast<ClassType>()) {
    if (const IValue* constant = cls->findConstant(field)) return std::make_shared<ConstantValue>(*constant);
    if (cls->hasAttribute(field)) return std::make_shared<SimpleValue>(emitGetAttr(loc, graph, value_, field));
    if (cls->findMethod(field)) return std::make_shared<MethodValue>(value_, field);
    if (cls->findMethod(propertyGetterName(field))) {
      return MethodValue(value_, propertyGetterName(field)).call(loc, graph, {}, {}, 1);
    }
    if (cls->iterableKind() == IterableKind::Dict && (field == "items" || field == "keys" || field == "values")) {
      return std::make_shared<ModuleDictMethod>(value_, field);
    }
    std::string what =
        cls->isModule() ? "Module '" + cls->unqualifiedName() + "'" : "'" + cls->unqualifiedName() + "' object";
    throwSourceError(loc, what + " has no attribute or method '" + field + "'");
  }
  if (type->isSubtypeOf(*TensorType::get())) {
    // Tensor properties TorchScript answers with an operator of the same meaning.
    static const std::unordered_map<std::string, Symbol> properties = {
        {"dtype", prim::dtype},
        {"device", prim::device},
        {"requires_grad", prim::requires_grad},
        {"is_cuda", prim::is_cuda},
        {"data", prim::data},
        {"layout", prim::layout},
        {"shape", aten::size},
        {"ndim", aten::dim},
        {"T", Symbol::fromQualString("aten::numpy_T")},
        {"mT", Symbol::fromQualString("aten::mT")},
        {"mH", Symbol::fromQualString("aten::mH")},
        {"H", Symbol::fromQualString("aten::matrix_H")},
        {"is_leaf", Symbol::fromQualString("aten::is_leaf")},
        {"retains_grad", Symbol::fromQualString("aten::retains_grad")},
        {"grad", Symbol::fromQualString("prim::grad")},
        {"real", Symbol::fromQualString("aten::real")},
        {"imag", Symbol::fromQualString("aten::imag")},
    };
    if (auto it = properties.find(field); it != properties.end()) {
      return std::make_shared<SimpleValue>(emitBuiltinCall(loc, graph, it->second, {value_}));
    }
    static const std::unordered_map<std::string, ScalarType> casts = {
        {"float", ScalarType::Float},       {"double", ScalarType::Double}, {"half", ScalarType::Half},
        {"bfloat16", ScalarType::BFloat16}, {"long", ScalarType::Long},     {"int", ScalarType::Int},
        {"short", ScalarType::Short},       {"char", ScalarType::Char},     {"byte", ScalarType::Byte},
        {"bool", ScalarType::Bool},
    };
    if (auto it = casts.find(field); it != casts.end()) return std::make_shared<TensorCastMethod>(value_, it->second);
    if (field == "tolist") return std::make_shared<TensorToListValue>(value_);
    if (field == "__getitem__") return std::make_shared<TensorGetItemMethod>(value_);
  }
  if (type->kind() == TypeKind::Device && (field == "type" || field == "index")) {
    Symbol op = Symbol::fromQualString("prim::" + field);
    return std::make_shared<SimpleValue>(emitBuiltinCall(loc, graph, op, {value_}));
  }
  if (auto tuple = type->cast<TupleType>()) {
    // A NamedTuple's field: prim::TupleIndex with the field's position, as 1.13 emits.
    const auto& names = tuple->fieldNames();
    if (auto it = std::find(names.begin(), names.end(), field); it != names.end()) {
      auto i = static_cast<size_t>(it - names.begin());
      Value* index = graph.insertConstant(static_cast<int64_t>(i), loc);
      Node* n = graph.insertNode(graph.createTupleIndex(value_, index, tuple->elements().at(i)));
      n->setSourceRange(loc);
      return std::make_shared<SimpleValue>(n->output());
    }
  }
  Symbol method = Symbol::fromQualString("aten::" + field);
  if (isBuiltinOperator(method)) {
    return std::make_shared<BuiltinFunction>(method, NamedValue(loc, "self", value_));
  }
  throwSourceError(loc, "'" + type->annotationStr() + "' object has no attribute or method '" + field + "'.");
}

SugaredValuePtr SimpleValue::iter(const SourceRange& loc, Graph& graph) {
  const TypePtr& type = value_->type();
  if (const ClassType* cls = iterableModule(value_)) {
    // ModuleList/ModuleDict: unrolled over the submodules (a dict's keys).
    std::vector<SugaredValuePtr> elements;
    for (const std::string& key : moduleEntries(*cls)) {
      if (cls->iterableKind() == IterableKind::Dict) {
        elements.push_back(std::make_shared<ConstantValue>(IValue(key)));
      } else {
        elements.push_back(std::make_shared<SimpleValue>(emitGetAttr(loc, graph, value_, key)));
      }
    }
    return std::make_shared<SugaredTupleValue>(std::move(elements));
  }
  if (type->cast<ListType>() || type->kind() == TypeKind::String || type->isSubtypeOf(*TensorType::get())) {
    return shared_from_this();
  }
  if (type->cast<DictType>()) return std::make_shared<SimpleValue>(emitBuiltinCall(loc, graph, aten::keys, {value_}));
  if (type->cast<TupleType>()) return std::make_shared<SugaredTupleValue>(asTuple(loc, graph, std::nullopt));
  throwSourceError(loc, "'" + type->annotationStr() + "' object is not iterable");
}

std::optional<int64_t> SimpleValue::staticLen() {
  if (const ClassType* cls = iterableModule(value_)) return static_cast<int64_t>(moduleEntries(*cls).size());
  return std::nullopt;
}

Value* SimpleValue::len(const SourceRange& loc, Graph& graph) {
  const TypePtr& type = value_->type();
  if (auto n = staticLen()) return graph.insertConstant(*n, loc);
  if (type->cast<ListType>() || type->kind() == TypeKind::String || type->cast<DictType>() ||
      type->isSubtypeOf(*TensorType::get())) {
    return emitBuiltinCall(loc, graph, aten::len, {value_});
  }
  throwSourceError(loc, "'" + type->annotationStr() + "' object is not iterable");
}

SugaredValuePtr SimpleValue::getitem(const SourceRange& loc, Graph& graph, Value* index) {
  const TypePtr& type = value_->type();
  if (const ClassType* cls = iterableModule(value_)) {
    std::optional<IValue> key = toIValue(index);
    std::vector<std::string> entries = moduleEntries(*cls);
    if (cls->iterableKind() == IterableKind::List) {
      if (!key || !key->isInt()) throwSourceError(loc, "Index to a ModuleList must be a constant integer");
      int64_t i = key->toInt();
      int64_t n = static_cast<int64_t>(entries.size());
      if (i < -n || i >= n)
        throwSourceError(loc, "Index " + std::to_string(i) + " out of range of length " + std::to_string(n));
      return std::make_shared<SimpleValue>(
          emitGetAttr(loc, graph, value_, entries[static_cast<size_t>(i < 0 ? i + n : i)]));
    }
    if (!key || !key->isString()) throwSourceError(loc, "Key of a ModuleDict must be a constant string");
    if (!cls->hasAttribute(key->toStringRef()))
      throwSourceError(loc, "ModuleDict has no key '" + key->toStringRef() + "'");
    return std::make_shared<SimpleValue>(emitGetAttr(loc, graph, value_, key->toStringRef()));
  }
  if (type->cast<ListType>() || type->kind() == TypeKind::String || type->cast<DictType>()) {
    return std::make_shared<SimpleValue>(emitBuiltinCall(loc, graph, aten::__getitem__, {value_, index}));
  }
  if (type->isSubtypeOf(*TensorType::get())) {
    return std::make_shared<SimpleValue>(
        emitBuiltinCall(loc, graph, aten::select, {value_, graph.insertConstant(int64_t(0), loc), index}));
  }
  throwSourceError(loc, "'" + type->annotationStr() + "' object is not subscriptable");
}

std::vector<SugaredValuePtr> SimpleValue::asTuple(const SourceRange& loc, Graph& graph,
                                                  std::optional<size_t> size_hint) {
  std::vector<SugaredValuePtr> out;
  const TypePtr& type = value_->type();
  if (type->cast<TupleType>()) {
    Node* unpack =
        value_->node()->kind() == prim::TupleConstruct ? nullptr : graph.insertNode(graph.createTupleUnpack(value_));
    if (unpack) {
      for (Value* v : unpack->outputs()) out.push_back(std::make_shared<SimpleValue>(v));
    } else {
      for (Value* v : value_->node()->inputs()) out.push_back(std::make_shared<SimpleValue>(v));
    }
    return out;
  }
  if (type->cast<ListType>()) {
    if (!size_hint) throwSourceError(loc, "cannot statically infer the expected size of a list in this context");
    Node* unpack = graph.insertNode(graph.createListUnpack(value_, *size_hint));
    unpack->setSourceRange(loc);
    for (Value* v : unpack->outputs()) out.push_back(std::make_shared<SimpleValue>(v));
    return out;
  }
  throwSourceError(loc, type->annotationStr() + " cannot be used as a tuple");
}

// --- builtins -----------------------------------------------------------------------------

Value* TensorToListValue::callWithTypeHint(const SourceRange& loc, Graph& graph, const TypePtr& type_hint) {
  if (!type_hint) throwSourceError(loc, "Expected type hint for result of tolist()");
  // The annotation says how deep the list is and what its elements are.
  int64_t depth = 0;
  TypePtr element = type_hint;
  while (auto list = element->cast<ListType>()) {
    element = list->elementType();
    ++depth;
  }
  // A hint with no list (`a: int = x.tolist()`) takes a 0-dim tensor's value.
  int64_t kind;
  switch (element->kind()) {
    case TypeKind::Int: kind = 0; break;
    case TypeKind::Float: kind = 1; break;
    case TypeKind::Bool: kind = 2; break;
    case TypeKind::Complex: kind = 3; break;
    default:
      throwSourceError(loc, element->annotationStr() +
                                " is not one of the supported element types for tolist: int, float, complex, bool");
  }
  Node* n = graph.insertNode(graph.create(Symbol::fromQualString("prim::tolist"),
                                          {self_, graph.insertConstant(depth, loc), graph.insertConstant(kind, loc)}));
  n->setSourceRange(loc);
  n->output()->setType(type_hint);
  return n->output();
}

SugaredValuePtr BuiltinFunction::call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                                      const std::vector<NamedValue>& kwargs, size_t) {
  if (symbol_ == Symbol::fromQualString("aten::device") && args.empty() && kwargs.size() == 1 && kwargs[0].name &&
      *kwargs[0].name == "type") {
    // torch.device(type="cpu"): Python's keyword for aten::device's string.
    NamedValue type = kwargs[0];
    type.name.reset();
    return std::make_shared<SimpleValue>(emitBuiltinCall(loc, graph, symbol_, {type}, {}, self_));
  }
  return std::make_shared<SimpleValue>(emitBuiltinCall(loc, graph, symbol_, args, kwargs, self_));
}

namespace {

std::optional<IValue> moduleConstant(const std::string& module, const std::string& field) {
  if (module == "math") {
    static const std::unordered_map<std::string, double> constants = {
        {"pi", M_PI},
        {"e", M_E},
        {"tau", 2 * M_PI},
        {"inf", std::numeric_limits<double>::infinity()},
        {"nan", std::numeric_limits<double>::quiet_NaN()},
    };
    if (auto it = constants.find(field); it != constants.end()) return IValue(it->second);
  }
  if (module == "cmath") {
    static const std::unordered_map<std::string, IValue> constants = {
        {"pi", IValue(M_PI)},
        {"e", IValue(M_E)},
        {"tau", IValue(2 * M_PI)},
        {"inf", IValue(std::numeric_limits<double>::infinity())},
        {"nan", IValue(std::numeric_limits<double>::quiet_NaN())},
        {"infj", IValue(std::complex<double>(0, std::numeric_limits<double>::infinity()))},
        {"nanj", IValue(std::complex<double>(0, std::numeric_limits<double>::quiet_NaN()))},
    };
    if (auto it = constants.find(field); it != constants.end()) return it->second;
  }
  if (module == "torch" || module == "kiln") {
    // dtypes are ints to TorchScript.
    if (auto dtype = scalarTypeFromPythonName(field)) return IValue(static_cast<int64_t>(*dtype));
    if (field == "strided") return IValue(int64_t(0));
    if (field == "contiguous_format") return IValue(int64_t(0));
    if (field == "preserve_format") return IValue(int64_t(1));
    if (field == "channels_last") return IValue(int64_t(2));
  }
  return std::nullopt;
}

}  // namespace

namespace {
FunctionalHook& functionalHook() {
  static FunctionalHook hook;
  return hook;
}

// torch.nn.functional's pools whose result depends on `return_indices`
// (1.13's boolean_dispatch): the flag, by keyword or at its position, must be
// a constant (False when left out). True calls the operator that returns
// (values, indices), False the one that returns values; the flag itself is
// not passed on. A None stride is the operator's default (empty list), as
// the Python functions 1.13 dispatches to make it.
class BooleanDispatchValue : public SugaredValue {
 public:
  BooleanDispatchValue(std::string name, size_t index) : name_(std::move(name)), index_(index) {}
  std::string kind() const override { return "boolean dispatch"; }

  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t) override {
    std::vector<NamedValue> rest_args = args;
    std::vector<NamedValue> rest_kwargs;
    std::optional<IValue> flag = IValue(false);
    std::string not_constant;
    if (index_ < args.size()) {
      flag = constantOf(args[index_]);
      rest_args.erase(rest_args.begin() + static_cast<std::ptrdiff_t>(index_));
      not_constant = "Argument for boolean dispatch at position " + std::to_string(index_) + " was not constant";
    }
    for (const NamedValue& kw : kwargs) {
      if (kw.name && *kw.name == "return_indices") {
        flag = constantOf(kw);
        not_constant = "Keyword argument 'return_indices' for boolean dispatch at position was not constant";
      } else {
        rest_kwargs.push_back(kw);
      }
    }
    if (!flag || !flag->isBool()) throwSourceError(loc, not_constant);
    bool adaptive = name_.rfind("adaptive_", 0) == 0;
    if (!adaptive) {
      // stride, the third argument.
      auto empty_if_none = [&](NamedValue& v) {
        bool none = v.value ? v.value->type()->kind() == TypeKind::None : v.constant.isNone();
        if (none) v.value = graph.insertNode(graph.createList(IntType::get(), {}))->output();
      };
      if (rest_args.size() > 2) empty_if_none(rest_args[2]);
      for (NamedValue& kw : rest_kwargs) {
        if (kw.name && *kw.name == "stride") empty_if_none(kw);
      }
    }
    Symbol op = Symbol::fromQualString("aten::" + name_ + (flag->toBool() && !adaptive ? "_with_indices" : ""));
    Value* out = emitBuiltinCall(loc, graph, op, rest_args, rest_kwargs);
    if (adaptive && !flag->toBool()) {
      Node* n = graph.insertNode(graph.createTupleIndex(out, graph.insertConstant(int64_t(0), loc), TensorType::get()));
      n->setSourceRange(loc);
      out = n->output();
    }
    return std::make_shared<SimpleValue>(out);
  }

 private:
  static std::optional<IValue> constantOf(const NamedValue& v) {
    if (!v.value) return v.constant;
    return toIValue(v.value);
  }

  std::string name_;
  size_t index_;
};

// torch.jit.is_tracing(): False in compiled code (1.13's function returns
// False when scripting; its inlined graph is that constant).
class IsTracingValue : public SugaredValue {
 public:
  std::string kind() const override { return "function"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t) override {
    if (!args.empty() || !kwargs.empty()) throwSourceError(loc, "is_tracing() takes no arguments");
    return std::make_shared<SimpleValue>(graph.insertConstant(false, loc));
  }
};

// torch.LongTensor and the other legacy constructors: `torch.LongTensor(data)`
// is torch.tensor(data, dtype=long), `torch.LongTensor(2, 3)` torch.empty of
// those sizes, `torch.LongTensor()` an empty tensor, as 1.13 compiles them.
class LegacyTensorConstructor : public SugaredValue {
 public:
  explicit LegacyTensorConstructor(ScalarType dtype) : dtype_(dtype) {}
  std::string kind() const override { return "legacy tensor constructor"; }
  SugaredValuePtr call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, size_t) override {
    std::vector<NamedValue> options = kwargs;
    options.emplace_back(loc, "dtype", graph.insertConstant(IValue(static_cast<int64_t>(dtype_)), loc));
    auto value_of = [&](const NamedValue& v) { return v.value ? v.value : graph.insertConstant(v.constant, loc); };
    bool sizes = !args.empty();
    for (const NamedValue& a : args) sizes = sizes && value_of(a)->type()->kind() == TypeKind::Int;
    std::vector<Value*> values;
    for (const NamedValue& a : args) values.push_back(value_of(a));
    if (sizes) {
      Value* shape = graph.insertNode(graph.createList(IntType::get(), values))->output();
      return std::make_shared<SimpleValue>(emitBuiltinCall(loc, graph, aten::empty, {NamedValue(loc, shape)}, options));
    }
    if (args.size() > 1) throwSourceError(loc, "legacy tensor constructor expects data or sizes");
    Value* data = args.empty() ? graph.insertNode(graph.createList(IntType::get(), {}))->output() : values[0];
    Symbol tensor = Symbol::fromQualString("aten::tensor");
    return std::make_shared<SimpleValue>(emitBuiltinCall(loc, graph, tensor, {NamedValue(loc, data)}, options));
  }

 private:
  ScalarType dtype_;
};

std::optional<ScalarType> legacyConstructorType(const std::string& field) {
  static const std::unordered_map<std::string, ScalarType> types = {
      {"BoolTensor", ScalarType::Bool},     {"LongTensor", ScalarType::Long},
      {"ByteTensor", ScalarType::Byte},     {"CharTensor", ScalarType::Char},
      {"DoubleTensor", ScalarType::Double}, {"FloatTensor", ScalarType::Float},
      {"IntTensor", ScalarType::Int},       {"ShortTensor", ScalarType::Short},
      {"HalfTensor", ScalarType::Half},     {"BFloat16Tensor", ScalarType::BFloat16},
  };
  if (auto it = types.find(field); it != types.end()) return it->second;
  return std::nullopt;
}

// The functions 1.13 defines with boolean_dispatch and the position of
// their `return_indices`.
std::optional<size_t> booleanDispatchIndex(const std::string& field) {
  static const std::unordered_map<std::string, size_t> functions = {
      {"max_pool1d", 6},          {"max_pool2d", 6},          {"max_pool3d", 6},
      {"adaptive_max_pool1d", 2}, {"adaptive_max_pool2d", 2}, {"adaptive_max_pool3d", 2},
  };
  if (auto it = functions.find(field); it != functions.end()) return it->second;
  return std::nullopt;
}
}  // namespace

void setFunctionalHook(FunctionalHook hook) { functionalHook() = std::move(hook); }

SugaredValuePtr BuiltinModule::attr(const SourceRange& loc, Graph& graph, const std::string& field) {
  if (name_ == "torch.nn.functional" || name_ == "kiln.nn.functional") {
    if (auto index = booleanDispatchIndex(field)) return std::make_shared<BooleanDispatchValue>(field, *index);
  }
  if ((name_ == "torch.nn.functional" || name_ == "kiln.nn.functional") && functionalHook()) {
    if (std::shared_ptr<Function> fn = functionalHook()(name_, field)) return makeFunctionValue(std::move(fn));
  }
  if (auto constant = moduleConstant(name_, field)) {
    return std::make_shared<SimpleValue>(graph.insertConstant(*constant, loc));
  }
  std::string qualified = name_ + "." + field;
  if (SugaredValuePtr module = makeBuiltinModule(qualified)) return module;
  if ((name_ == "torch" || name_ == "torch.autograd" || name_ == "kiln") && field == "no_grad") {
    return std::make_shared<BuiltinClassRef>("__torch__.torch.autograd.grad_mode." + field);
  }
  if (name_ == "torch.jit" || name_ == "kiln.jit") {
    if (field == "annotate") return std::make_shared<SpecialFormValue>(Symbol::fromQualString("prim::annotate"));
    if (field == "isinstance")
      return std::make_shared<SpecialFormValue>(Symbol::fromQualString("prim::jit_isinstance"));
    if (field == "is_scripting")
      return std::make_shared<BuiltinFunction>(Symbol::fromQualString("aten::is_scripting"), std::nullopt);
    if (field == "is_tracing") return std::make_shared<IsTracingValue>();
  }
  if (name_ == "torch") {
    if (auto dtype = legacyConstructorType(field)) return std::make_shared<LegacyTensorConstructor>(*dtype);
  }
  if ((name_ == "torch" || name_ == "kiln" || name_ == "torch.functional") && field == "tensordot") {
    return std::make_shared<SpecialFormValue>(Symbol::fromQualString("prim::tensordot"));
  }
  // cmath's functions are TorchScript's complex overloads, two under other
  // names; torch.linalg.<name> is aten::linalg_<name>.
  const bool linalg = name_ == "torch.linalg" || name_ == "kiln.linalg";
  const std::string op_name = linalg             ? "linalg_" + field
                              : name_ != "cmath" ? field
                              : field == "phase" ? "angle"
                              : field == "rect"  ? "polar"
                                                 : field;
  Symbol op = Symbol::fromQualString("aten::" + op_name);
  if (!isBuiltinOperator(op)) {
    // Functions Python's math module has but TorchScript does not.
    static const char* const python_math[] = {"hypot", "fsum", "isqrt", "prod", "perm", "comb",   "nextafter",
                                              "ulp",   "dist", "modf",  "cbrt", "exp2", "isclose"};
    for (const char* f : python_math) {
      if (name_ == "math" && field == f) {
        throwSourceError(loc,
                         "Python builtin <built-in function " + field + "> is currently not supported in Torchscript");
      }
    }
    throwSourceError(loc, "object has no attribute " + field);
  }
  return std::make_shared<BuiltinFunction>(op, std::nullopt);
}

SugaredValuePtr makeBuiltinModule(const std::string& python_name) {
  static const char* const known[] = {"torch",
                                      "math",
                                      "cmath",
                                      "kiln",
                                      "torch.jit",
                                      "kiln.jit",
                                      "torch.autograd",
                                      "kiln.autograd",
                                      "torch.nn",
                                      "kiln.nn",
                                      "torch.nn.functional",
                                      "kiln.nn.functional",
                                      "torch.functional",
                                      "torch.linalg",
                                      "kiln.linalg",
                                      "torch._C",
                                      "torch._C._nn"};
  for (const char* name : known) {
    if (python_name == name) return std::make_shared<BuiltinModule>(python_name);
  }
  return nullptr;
}

SugaredValuePtr makeConstantValue(IValue value) { return std::make_shared<ConstantValue>(std::move(value)); }

SugaredValuePtr makeClassValue(std::shared_ptr<ClassType> type) {
  return std::make_shared<ClassValue>(std::move(type));
}

std::shared_ptr<ClassType> classOfValue(const SugaredValuePtr& value) {
  auto cls = std::dynamic_pointer_cast<ClassValue>(value);
  return cls ? cls->type() : nullptr;
}

SugaredValuePtr makeFunctionValue(std::shared_ptr<Function> function) {
  return std::make_shared<FunctionValue>(std::move(function));
}

// --- functions and constants --------------------------------------------------------------

SugaredValuePtr FunctionValue::call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                                    const std::vector<NamedValue>& kwargs, size_t) {
  const FunctionSchema& schema = function_->getSchema();
  auto [index, matched] = matchSchemas({&schema}, loc, graph, args, kwargs);
  (void)index;
  return emitFunctionCall(loc, graph, function_, matched);
}

SugaredValuePtr emitFunctionCall(const SourceRange& loc, Graph& graph, const std::shared_ptr<Function>& function,
                                 const MatchedSchema& matched) {
  Node* constant = graph.insertNode(graph.create(prim::Constant));
  // Named as TorchScript names functions: `relu` for `__torch__.torch.nn.functional.relu`.
  const std::string& qualified = function->name();
  constant->s_(attr::name, qualified.substr(qualified.rfind('.') + 1));
  constant->output()->setType(FunctionType::create(function->name(), function));
  std::vector<Value*> inputs = {constant->output()};
  inputs.insert(inputs.end(), matched.inputs.begin(), matched.inputs.end());
  Node* call = graph.insertNode(graph.create(prim::CallFunction, inputs));
  call->setSourceRange(loc);
  call->output()->setType(matched.return_types.empty() ? NoneType::get() : matched.return_types[0]);
  return std::make_shared<SimpleValue>(call->output());
}

Value* ConstantValue::asValue(const SourceRange& loc, Graph& graph) { return graph.insertConstant(value_, loc); }

SugaredValuePtr ConstantValue::attr(const SourceRange& loc, Graph& graph, const std::string& field) {
  return SimpleValue(asValue(loc, graph)).attr(loc, graph, field);
}

std::vector<SugaredValuePtr> ConstantValue::asTuple(const SourceRange& loc, Graph& graph,
                                                    std::optional<size_t> size_hint) {
  if (value_.isTuple()) {
    std::vector<SugaredValuePtr> out;
    for (const IValue& e : value_.toTupleRef().elements) out.push_back(std::make_shared<ConstantValue>(e));
    return out;
  }
  return SimpleValue(asValue(loc, graph)).asTuple(loc, graph, size_hint);
}

// --- iteration ----------------------------------------------------------------------------

RangeValue::RangeValue(const SourceRange& loc, Graph& graph, std::vector<Value*> inputs,
                       std::optional<int64_t> static_len)
    : static_len_(static_len) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->type()->kind() != TypeKind::Int) {
      throwSourceError(loc, "all inputs of range must be ints, found " + inputs[i]->type()->annotationStr() +
                                " in argument " + std::to_string(i));
    }
  }
  if (inputs.empty()) throwSourceError(loc, "range expected at least 1 arguments, got 0");
  if (inputs.size() > 3)
    throwSourceError(loc, "range expected at most 3 arguments, got " + std::to_string(inputs.size()));
  if (inputs.size() == 1) {
    end_ = inputs[0];
    start_ = graph.insertConstant(int64_t(0), loc);
    step_ = graph.insertConstant(int64_t(1), loc);
    has_only_end_ = true;
  } else {
    start_ = inputs[0];
    end_ = inputs[1];
    step_ = inputs.size() == 3 ? inputs[2] : graph.insertConstant(int64_t(1), loc);
  }
}

Value* RangeValue::len(const SourceRange& loc, Graph& graph) {
  if (static_len_) return graph.insertConstant(*static_len_, loc);
  if (has_only_end_) return end_;
  return emitBuiltinCall(loc, graph, Symbol::fromQualString("aten::__range_length"), {start_, end_, step_});
}

SugaredValuePtr RangeValue::getitem(const SourceRange& loc, Graph& graph, Value* index) {
  if (has_only_end_) return std::make_shared<SimpleValue>(index);
  return std::make_shared<SimpleValue>(
      emitBuiltinCall(loc, graph, Symbol::fromQualString("aten::__derive_index"), {index, start_, step_}));
}

Value* SugaredTupleValue::asValue(const SourceRange& loc, Graph& graph) {
  std::vector<Value*> values;
  for (const auto& e : elements_) values.push_back(e->asValue(loc, graph));
  return graph.insertNode(graph.createTuple(values))->output();
}

SugaredValuePtr SugaredTupleValue::getitem(const SourceRange& loc, Graph&, Value* index) {
  auto i = toIValue(index);
  if (!i || !i->isInt()) throwSourceError(loc, "Expected integer literal for index into a tuple being iterated");
  int64_t n = static_cast<int64_t>(elements_.size());
  int64_t k = i->toInt() < 0 ? i->toInt() + n : i->toInt();
  if (k < 0 || k >= n)
    throwSourceError(loc, "Index " + std::to_string(i->toInt()) + " out of range of length " + std::to_string(n));
  return elements_[static_cast<size_t>(k)];
}

void IterableTree::addChild(const SourceRange& loc, Graph&, const SugaredValuePtr& child) {
  // Iterating unrolls when every child has a length known now (tuples, and
  // the range enumerate pairs with one); it runs for the shortest.
  std::optional<int64_t> child_len = child->staticLen();
  if (children_.empty()) {
    unroll_length_ = child_len;
  } else if (unroll_length_.has_value() != child_len.has_value()) {
    throwSourceError(loc,
                     "Can not iterate over a module list or tuple with a value that does not have a statically "
                     "determinable length\n");
  } else if (unroll_length_) {
    unroll_length_ = std::min(*unroll_length_, *child_len);
  }
  children_.push_back(child);
}

std::vector<SugaredValuePtr> IterableTree::baseIterables() const {
  std::vector<SugaredValuePtr> out;
  for (const auto& child : children_) {
    if (auto tree = std::dynamic_pointer_cast<IterableTree>(child)) {
      auto sub = tree->baseIterables();
      out.insert(out.end(), sub.begin(), sub.end());
    } else {
      out.push_back(child);
    }
  }
  return out;
}

Value* IterableTree::len(const SourceRange& loc, Graph& graph) {
  std::vector<Value*> lengths;
  for (const auto& base : baseIterables()) lengths.push_back(base->len(loc, graph));
  Value* list = graph.insertNode(graph.createList(IntType::get(), lengths))->output();
  return emitBuiltinCall(loc, graph, prim::min, {list});
}

SugaredValuePtr IterableTree::getitem(const SourceRange& loc, Graph& graph, Value* index) {
  std::vector<SugaredValuePtr> items;
  for (const auto& child : children_) items.push_back(child->getitem(loc, graph, index));
  return std::make_shared<SugaredTupleValue>(std::move(items));
}

// --- print, exceptions, casts ---------------------------------------------------------------

SugaredValuePtr PrintValue::call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                                 const std::vector<NamedValue>& kwargs, size_t) {
  if (!kwargs.empty()) throwSourceError(loc, "print doesn't accept any keyword arguments");
  std::vector<Value*> values;
  for (const auto& a : args) values.push_back(a.value);
  Node* n = graph.insertNode(graph.create(prim::Print, values, 0));
  n->setSourceRange(loc);
  return std::make_shared<SimpleValue>(graph.insertNode(graph.createNone())->output());
}

SugaredValuePtr ExceptionValue::call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                                     const std::vector<NamedValue>&, size_t) {
  Value* message = nullptr;
  if (builtin_) {
    message = graph.insertConstant(name_ + ": ", loc);
    for (const auto& a : args) {
      Value* text = a.value;
      if (text->type()->kind() != TypeKind::String) text = emitBuiltinCall(loc, graph, aten::str, {text});
      message = emitBuiltinCall(loc, graph, aten::add, {message, text});
    }
    return std::make_shared<ExceptionMessageValue>(message, graph.insertNode(graph.createNone())->output());
  }
  if (args.empty()) {
    message = graph.insertConstant(std::string(), loc);
  } else if (args.size() == 1) {
    message = args[0].value;
  } else {
    std::vector<Value*> values;
    for (const auto& a : args) values.push_back(a.value);
    message = graph.insertNode(graph.createTuple(values))->output();
  }
  if (message->type()->kind() != TypeKind::String) message = emitBuiltinCall(loc, graph, aten::str, {message});
  Value* name = graph.insertConstant(std::string("builtins.") + name_, loc);
  return std::make_shared<ExceptionMessageValue>(message, name);
}

SugaredValuePtr CastValue::call(const SourceRange& loc, Graph& graph, const std::vector<NamedValue>& args,
                                const std::vector<NamedValue>& kwargs, size_t n_binders) {
  if (args.size() == 1 && kwargs.empty()) {
    Value* v = args[0].value;
    if (v->type()->isSubtypeOf(*type_)) return std::make_shared<SimpleValue>(v);
    const TypePtr& t = v->type();
    // int(obj), float(obj), bool(obj) (and `if obj:`), str(obj): the magic
    // method of a script object's class, as 1.13 calls it.
    if (const auto* cls = t->cast<ClassType>(); cls && !cls->isModule()) {
      const char* magic = type_->kind() == TypeKind::Int      ? "__int__"
                          : type_->kind() == TypeKind::Float  ? "__float__"
                          : type_->kind() == TypeKind::Bool   ? "__bool__"
                          : type_->kind() == TypeKind::String ? "__str__"
                                                              : nullptr;
      if (magic && cls->findMethod(magic)) return MethodValue(v, magic).call(loc, graph, {}, {}, n_binders);
    }
    if (type_->kind() == TypeKind::Bool &&
        (t->cast<ListType>() || t->kind() == TypeKind::String || t->cast<DictType>())) {
      Value* zero = graph.insertConstant(int64_t(0), loc);
      Value* length = emitBuiltinCall(loc, graph, aten::len, {v});
      return std::make_shared<SimpleValue>(emitBuiltinCall(loc, graph, aten::gt, {length, zero}));
    }
  }
  return BuiltinFunction::call(loc, graph, args, kwargs, n_binders);
}

SugaredValuePtr builtinGlobal(const std::string& name) {
  static const std::unordered_map<std::string, SugaredValuePtr> globals = [] {
    std::unordered_map<std::string, SugaredValuePtr> g;
    auto builtin = [](const char* qualified) {
      return std::make_shared<BuiltinFunction>(Symbol::fromQualString(qualified), std::nullopt);
    };
    auto special = [](const char* qualified) {
      return std::make_shared<SpecialFormValue>(Symbol::fromQualString(qualified));
    };
    g["print"] = std::make_shared<PrintValue>();
    g["float"] = std::make_shared<CastValue>(FloatType::get(), aten::Float);
    g["int"] = std::make_shared<CastValue>(IntType::get(), aten::Int);
    g["bool"] = std::make_shared<CastValue>(BoolType::get(), aten::Bool);
    g["complex"] = std::make_shared<CastValue>(ComplexType::get(), Symbol::fromQualString("aten::Complex"));
    g["str"] = std::make_shared<CastValue>(StringType::get(), aten::str);
    g["len"] = builtin("aten::len");
    g["hex"] = builtin("aten::hex");
    g["oct"] = builtin("aten::oct");
    g["bin"] = builtin("aten::bin");
    g["round"] = builtin("aten::round");
    g["hash"] = builtin("aten::hash");
    g["id"] = builtin("prim::id");
    g["min"] = builtin("prim::min");
    g["max"] = builtin("prim::max");
    g["abs"] = builtin("prim::abs");
    g["all"] = builtin("aten::all");
    g["any"] = builtin("aten::any");
    g["divmod"] = builtin("aten::divmod");
    g["sum"] = builtin("aten::sum");
    g["ord"] = builtin("aten::ord");
    g["chr"] = builtin("aten::chr");
    g["pow"] = builtin("aten::pow");
    g["sorted"] = builtin("aten::sorted");
    g["tuple"] = special("prim::TupleConstruct");
    g["list"] = special("prim::list");
    g["dict"] = special("prim::dict");
    g["slice"] = special("prim::slice");
    g["Ellipsis"] = special("prim::Ellipsis");
    g["isinstance"] = special("prim::isinstance");
    g["range"] = special("prim::range");
    g["zip"] = special("prim::zip");
    g["enumerate"] = special("prim::enumerate");
    g["hasattr"] = special("prim::hasattr");
    g["getattr"] = special("prim::getattr");
    g["AssertionError"] = std::make_shared<ExceptionValue>("AssertionError", /*builtin=*/true);
    for (const char* e :
         {"Exception", "ValueError", "RuntimeError", "TypeError", "KeyError", "IndexError", "NotImplementedError",
          "ZeroDivisionError", "StopIteration", "AttributeError", "ArithmeticError", "OverflowError", "LookupError"}) {
      g[e] = std::make_shared<ExceptionValue>(e);
    }
    for (const char* m : {"torch", "math", "cmath", "kiln"}) g[m] = makeBuiltinModule(m);
    return g;
  }();
  auto it = globals.find(name);
  return it == globals.end() ? nullptr : it->second;
}

}  // namespace kiln
