#include "kiln/frontend/schema_matching.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "kiln/core/argument_binder.h"
#include "kiln/core/operator.h"
#include "kiln/frontend/builtin_functions.h"
#include "kiln/frontend/error_report.h"

namespace kiln {

namespace {

const TypePtr& unwrapOptional(const TypePtr& t) {
  if (auto opt = t->cast<OptionalType>()) return opt->elementType();
  return t;
}

// `int[2] stride` given one int: the int is repeated.
bool isIntOrFloatUsedAsList(const Value* value, const Argument& arg) {
  auto list = unwrapOptional(arg.type)->cast<ListType>();
  if (!list || !arg.fixed_size) return false;
  TypeKind elem = list->elementType()->kind();
  TypeKind actual = value->type()->kind();
  return (elem == TypeKind::Int || elem == TypeKind::Float) && actual == elem;
}

// A tuple whose elements all fit the list's element type.
bool convertibleToList(const TypePtr& type, const TypePtr& list_type) {
  auto list = list_type->cast<ListType>();
  if (!list) return false;
  if (type->isSubtypeOf(*list_type)) return true;
  if (auto tuple = type->cast<TupleType>()) {
    for (const TypePtr& e : tuple->elements()) {
      if (!e->isSubtypeOf(*list->elementType())) return false;
    }
    return true;
  }
  return false;
}

// The last positional argument is a list, so `f(1, 2)` may stand for `f([1, 2])`
// (not for `int[2]`, which takes one int, nor for lists of type variables).
bool varargsCanBeUsedAsList(const FunctionSchema& schema, size_t index, const Argument& arg) {
  bool is_last_positional = index + 1 == schema.arguments().size() || schema.arguments()[index + 1].kwarg_only;
  auto list = arg.type->cast<ListType>();
  return is_last_positional && list && !list->elementType()->cast<VarType>() && !arg.fixed_size;
}

std::string typeMismatch(const Argument& arg, const TypePtr& actual) {
  return "Expected a value of type '" + arg.type->annotationStr() + "' for argument '" + arg.name +
         "' but instead found type '" + actual->annotationStr() + "'.\n";
}

Value* tryMatchArgument(const Argument& arg, Graph& graph, const SourceRange& loc, const NamedValue& named,
                        std::ostream* failures, const std::function<std::ostream&()>& err, bool allow_conversions,
                        TypeEnv& env) {
  Value* value = named.value;
  // A bare `[]` passed to a list argument is a list of what the argument wants.
  if (value->node()->kind() == prim::EmptyListLiteral) {
    if (auto list = unwrapOptional(arg.type)->cast<ListType>(); list && !list->hasFreeVariables()) {
      value = graph.insertNode(graph.createList(list->elementType(), {}))->output();
    }
  }
  // A tuple passed for a `t[]` binds t to the tuple's unified element type
  // (it is converted to a list below).
  bool bound_from_tuple = false;
  if (auto list = unwrapOptional(arg.type)->cast<ListType>(); list && list->hasFreeVariables()) {
    if (auto tuple = value->type()->cast<TupleType>(); tuple && !tuple->elements().empty()) {
      std::optional<TypePtr> unified = tuple->elements()[0];
      for (const TypePtr& e : tuple->elements()) unified = unified ? unifyTypes(*unified, e) : unified;
      bound_from_tuple = unified && !matchTypeVariables(list->elementType(), *unified, env);
    }
  }
  if (isIntOrFloatUsedAsList(value, arg)) {
    std::vector<Value*> repeated(static_cast<size_t>(*arg.fixed_size), value);
    value = graph.insertNode(graph.createList(value->type(), repeated))->output();
  }
  if (auto why = bound_from_tuple ? std::nullopt : matchTypeVariables(arg.type, value->type(), env)) {
    if (failures) {
      err() << "Could not match type " << value->type()->annotationStr() << " to " << arg.type->annotationStr()
            << " in argument '" << arg.name << "': " << *why << ".\n";
    }
    return nullptr;
  }
  TypePtr concrete = evalTypeVariables(arg.type, env);
  if (!concrete) {
    // A variable bound by nothing (None for Optional[t]): the value's own type decides.
    concrete = arg.type;
  }
  value = tryConvertToType(loc, graph, concrete, value, allow_conversions);
  if (!value->type()->isSubtypeOf(*concrete)) {
    if (failures) {
      std::ostream& out = err() << typeMismatch(arg, value->type());
      if (auto list = value->type()->cast<ListType>(); list && list->elementType()->kind() == TypeKind::Tensor &&
                                                       value->node()->kind() == prim::ListConstruct &&
                                                       value->node()->inputs().empty()) {
        out << "Empty lists default to List[Tensor]. Add a variable annotation to the assignment to create an empty "
               "list of another type (torch.jit.annotate(List[T, []]) where T is the type of elements in the list "
               "for Python 2)\n";
      }
    }
    return nullptr;
  }
  return value;
}

// Packs `args` into a list of `element_type` for a varargs call.
Value* tryCreateList(const TypePtr& element_type, Graph& graph, const SourceRange& loc,
                     const std::vector<NamedValue>& args, size_t first, std::ostream* failures,
                     const std::function<std::ostream&()>& err, bool allow_conversions, TypeEnv& env) {
  Argument elem_arg;
  elem_arg.name = "<varargs>";
  elem_arg.type = element_type;
  std::vector<Value*> values;
  for (size_t i = first; i < args.size(); ++i) {
    Value* v = tryMatchArgument(elem_arg, graph, loc, args[i], failures, err, allow_conversions, env);
    if (!v) return nullptr;
    values.push_back(v);
  }
  return graph.insertNode(graph.createList(element_type, values))->output();
}

}  // namespace

namespace {

std::vector<Value*> tupleElements(Graph& graph, Value* tuple) {
  if (tuple->node()->kind() == prim::TupleConstruct) {
    return std::vector<Value*>(tuple->node()->inputs().begin(), tuple->node()->inputs().end());
  }
  Node* unpack = graph.insertNode(graph.createTupleUnpack(tuple));
  return std::vector<Value*>(unpack->outputs().begin(), unpack->outputs().end());
}

}  // namespace

Value* tryConvertToType(const SourceRange& loc, Graph& graph, const TypePtr& concrete_type, Value* value,
                        bool allow_conversions) {
  // Converting to Optional[T] is converting to T.
  if (auto opt = concrete_type->cast<OptionalType>()) {
    if (value->type()->kind() != TypeKind::Optional && value->type()->kind() != TypeKind::None) {
      return tryConvertToType(loc, graph, opt->elementType(), value, allow_conversions);
    }
  }
  if (auto tuple = value->type()->cast<TupleType>()) {
    // Tuples of the right element types become lists (always allowed).
    if (auto list = concrete_type->cast<ListType>(); list && convertibleToList(value->type(), concrete_type)) {
      return graph.insertNode(graph.createList(list->elementType(), tupleElements(graph, value)))->output();
    }
    // A tuple converts element by element.
    if (auto target = concrete_type->cast<TupleType>();
        target && !value->type()->isSubtypeOf(*target) && target->elements().size() == tuple->elements().size()) {
      std::vector<Value*> elements = tupleElements(graph, value);
      for (size_t i = 0; i < elements.size(); ++i) {
        elements[i] = tryConvertToType(loc, graph, target->elements()[i], elements[i], allow_conversions);
      }
      return graph.insertNode(graph.createTuple(elements))->output();
    }
  }
  if (!allow_conversions) return value;
  const Type& actual = *value->type();
  TypeKind target = concrete_type->kind();
  auto insert = [&](Symbol op) { return graph.insert(op, {value}, {}, loc); };
  if (actual.isSubtypeOf(*TensorType::get())) {
    if (target == TypeKind::Float) return insert(aten::FloatImplicit);
    if (target == TypeKind::Int) return insert(aten::IntImplicit);
    if (target == TypeKind::Number) return insert(aten::ScalarImplicit);
    if (target == TypeKind::Complex) return insert(Symbol::fromQualString("aten::ComplexImplicit"));
  } else if (actual.kind() == TypeKind::Number) {
    if (target == TypeKind::Float) return insert(aten::Float);
    if (target == TypeKind::Int) return insert(aten::Int);
  }
  if (actual.kind() == TypeKind::String && target == TypeKind::Device)
    return insert(Symbol::fromQualString("aten::device"));
  return value;
}

Value* packOutputs(Graph& graph, ArrayRef<Value*> values) {
  if (values.size() == 1) return values[0];
  if (values.empty()) return graph.insertNode(graph.createNone())->output();
  return graph.insertNode(graph.createTuple(values))->output();
}

namespace {

// The script compiler's conversions for the argument binder: TorchScript's
// implicit conversions (when allowed), `[]` typed by its parameter, tuples
// for lists, a single int for `int[2]`, and varargs packed into a list.
class ScriptPolicy : public ConversionPolicy {
 public:
  ScriptPolicy(Graph& graph, const SourceRange& loc, const std::vector<NamedValue>& args,
               const std::vector<NamedValue>& kwargs, const std::optional<NamedValue>& self, bool want_messages,
               bool allow_conversions)
      : graph_(graph), loc_(loc), args_(args), kwargs_(kwargs), self_(self), want_messages_(want_messages),
        allow_conversions_(allow_conversions) {}

  bool packsPositionals(const FunctionSchema& schema, size_t param_index, size_t first) override {
    const Argument& arg = schema.arguments()[param_index];
    if (!varargsCanBeUsedAsList(schema, param_index, arg)) return false;
    const TypePtr& actual_type = args_[first].value->type();
    return actual_type->kind() != TypeKind::List && !convertibleToList(actual_type, unwrapOptional(arg.type));
  }

  std::optional<std::string> convert(const Argument& arg, const ParamSource& source, TypeEnv& env) override {
    // Most conversions succeed, and a failed overload only needs its reason
    // when the call fails as a whole: the stream is made when first written.
    std::optional<std::ostringstream> why;
    std::function<std::ostream&()> err = [&]() -> std::ostream& {
      if (!why) why.emplace();
      return *why;
    };
    std::ostream* failures = want_messages_ ? &err() : nullptr;
    Value* matched = nullptr;
    switch (source.kind) {
      case ParamSource::Kind::Self: matched = match(arg, *self_, failures, err, env); break;
      case ParamSource::Kind::Positional: matched = match(arg, args_[source.index], failures, err, env); break;
      case ParamSource::Kind::Keyword: matched = match(arg, kwargs_[source.index], failures, err, env); break;
      case ParamSource::Kind::Default:
        matched = match(arg, NamedValue(loc_, graph_.insertConstant(*arg.default_value, loc_)), failures, err, env);
        break;
      case ParamSource::Kind::Packed: {
        const TypePtr& element = arg.type->cast<ListType>()->elementType();
        matched = tryCreateList(element, graph_, loc_, args_, source.index, failures, err, allow_conversions_, env);
        break;
      }
    }
    if (!matched) return why ? why->str() : std::string();
    inputs.push_back(matched);
    return std::nullopt;
  }

  std::vector<Value*> inputs;

 private:
  Value* match(const Argument& arg, const NamedValue& named, std::ostream* failures,
               const std::function<std::ostream&()>& err, TypeEnv& env) {
    return tryMatchArgument(arg, graph_, loc_, named, failures, err, allow_conversions_, env);
  }

  Graph& graph_;
  const SourceRange& loc_;
  const std::vector<NamedValue>& args_;
  const std::vector<NamedValue>& kwargs_;
  const std::optional<NamedValue>& self_;
  bool want_messages_;
  bool allow_conversions_;
};

}  // namespace

std::optional<MatchedSchema> tryMatchSchema(const FunctionSchema& schema, const SourceRange& loc, Graph& graph,
                                            const std::vector<NamedValue>& args, const std::vector<NamedValue>& kwargs,
                                            std::optional<NamedValue> self, std::ostream* failures,
                                            bool allow_conversions) {
  auto err = [&]() -> std::ostream& {
    *failures << "\n" << schema.str() << ":\n";
    return *failures;
  };
  CallShape shape;
  shape.num_positional = args.size();
  for (const NamedValue& kw : kwargs) shape.keywords.push_back(kw.name.value_or(""));
  // As in 1.13, an aten operator's `self` may be passed as `input=`
  // (torch.ceil(input=x)), the name torch's Python functions give it.
  if (schema.name().rfind("aten::", 0) == 0 && schema.argumentIndex("self") && !schema.argumentIndex("input")) {
    for (std::string& name : shape.keywords) {
      if (name == "input") name = "self";
    }
  }
  shape.has_self = self.has_value();
  ScriptPolicy policy(graph, loc, args, kwargs, self, failures != nullptr, allow_conversions);
  TypeEnv env;
  BindResult bound = bindArguments(schema, shape, policy, env);
  if (!bound) {
    if (failures) err() << bound.failure.message;
    return std::nullopt;
  }
  MatchedSchema result;
  result.inputs = std::move(policy.inputs);
  // Arguments past the `*` of a vararg schema go on unconverted.
  for (size_t position : bound.bound->varargs) result.inputs.push_back(args[position].value);
  for (const Argument& r : schema.returns()) {
    TypePtr t = evalTypeVariables(r.type, env);
    if (!t) {
      if (failures) err() << "Could not infer the result type " << r.type->annotationStr() << ".\n";
      return std::nullopt;
    }
    result.return_types.push_back(std::move(t));
  }
  return result;
}

namespace {

std::string prefixLines(const std::string& text, const std::string& prefix) {
  std::string out;
  bool at_line_start = true;
  for (char c : text) {
    if (at_line_start) out += prefix;
    out += c;
    at_line_start = c == '\n';
  }
  return out;
}

}  // namespace

std::pair<size_t, MatchedSchema> matchSchemas(const std::vector<const FunctionSchema*>& schemas, const SourceRange& loc,
                                              Graph& graph, const std::vector<NamedValue>& args,
                                              const std::vector<NamedValue>& kwargs,
                                              const std::optional<NamedValue>& self) {
  KILN_INTERNAL_ASSERT(!schemas.empty(), "matchSchemas without schemas");
  if (schemas.size() == 1) {
    // Without messages first: collecting them costs more than matching.
    if (auto m = tryMatchSchema(*schemas[0], loc, graph, args, kwargs, self, nullptr, true)) return {0, *m};
    std::ostringstream failures;
    tryMatchSchema(*schemas[0], loc, graph, args, kwargs, self, &failures, true);
    throwSourceError(loc, failures.str());
  }
  // Exact matches first, so that conversions never shadow a better overload.
  for (bool allow_conversions : {false, true}) {
    for (size_t i = 0; i < schemas.size(); ++i) {
      if (auto m = tryMatchSchema(*schemas[i], loc, graph, args, kwargs, self, nullptr, allow_conversions)) {
        return {i, *m};
      }
    }
  }
  std::ostringstream failures;
  for (const FunctionSchema* schema : schemas) {
    tryMatchSchema(*schema, loc, graph, args, kwargs, self, &failures, true);
  }
  throwSourceError(loc, "Arguments for call are not valid.\nThe following variants are available:\n" +
                            prefixLines(failures.str(), "  ") + "\nThe original call is");
}

namespace {

// Where torch 1.13 lists an overload among those of its operator; unknown
// overloads come after the known ones.
size_t torchOverloadRank(const FunctionSchema& schema) {
  static const std::unordered_map<std::string, size_t> ranks = [] {
    static const char* const order[] = {
#include "kiln/frontend/torch_overload_order.inc"
    };
    std::unordered_map<std::string, size_t> out;
    for (size_t i = 0; i < std::size(order); ++i) out.emplace(order[i], i);
    return out;
  }();
  auto it = ranks.find(schema.name() + "." + schema.overloadName());
  return it == ranks.end() ? std::numeric_limits<size_t>::max() : it->second;
}

// The overloads of `name` in the order TorchScript tries them, sorted once
// per name (again only when operators were registered since).
std::shared_ptr<const std::vector<OperatorPtr>> overloadsInTorchOrder(Symbol name) {
  struct Entry {
    uint64_t version;
    std::shared_ptr<const std::vector<OperatorPtr>> operators;
  };
  static std::mutex mutex;
  static std::unordered_map<Symbol, Entry> cache;
  uint64_t version = operatorRegistryVersion();
  std::lock_guard lock(mutex);
  auto it = cache.find(name);
  if (it != cache.end() && it->second.version == version) return it->second.operators;
  std::vector<OperatorPtr> operators = getAllOperatorsFor(name);
  std::stable_sort(operators.begin(), operators.end(), [](const OperatorPtr& a, const OperatorPtr& b) {
    return torchOverloadRank(a->schema()) < torchOverloadRank(b->schema());
  });
  auto sorted = std::make_shared<const std::vector<OperatorPtr>>(std::move(operators));
  cache[name] = Entry{version, sorted};
  return sorted;
}

}  // namespace

Value* emitBuiltinCall(const SourceRange& loc, Graph& graph, Symbol name, const std::vector<NamedValue>& args,
                       const std::vector<NamedValue>& kwargs, const std::optional<NamedValue>& self) {
  auto sorted = overloadsInTorchOrder(name);
  const std::vector<OperatorPtr>& operators = *sorted;
  const std::vector<ScriptBuiltin>& builtins = scriptBuiltinsFor(name);
  if (operators.empty() && builtins.empty()) {
    throwSourceError(loc, "Unknown builtin op: " + name.toQualString() + ".\nCould not find any similar ops to " +
                              name.toQualString() +
                              ". This op may not exist or may not be currently supported in TorchScript.\n");
  }
  std::vector<const FunctionSchema*> schemas;
  for (const auto& op : operators) schemas.push_back(&op->schema());
  for (const ScriptBuiltin& b : builtins) schemas.push_back(&b.schema);
  auto [index, matched] = matchSchemas(schemas, loc, graph, args, kwargs, self);
  if (index >= operators.size()) {
    // Builtins written in TorchScript are small: inlined, not called.
    return graph.insertGraph(*builtins[index - operators.size()].graph, matched.inputs).at(0);
  }
  Node* n = graph.insertNode(graph.create(name, matched.inputs, 0));
  n->setSourceRange(loc);
  for (const TypePtr& t : matched.return_types) n->addOutput()->setType(t);
  // After the outputs: adding one forgets the operator.
  n->setOperator(operators[index]);
  // Returns that the schema names (`-> (Tensor values, Tensor indices)`)
  // pack into a NamedTuple with those fields, as 1.13 packs them: script
  // code may read `torch.max(x, 1).indices`.
  const auto& returns = operators[index]->schema().returns();
  bool named = returns.size() > 1 &&
               std::all_of(returns.begin(), returns.end(), [](const Argument& r) { return !r.name.empty(); });
  if (named && n->outputs().size() == returns.size()) {
    std::vector<std::string> names;
    std::vector<TypePtr> types;
    for (size_t i = 0; i < returns.size(); ++i) {
      names.push_back(returns[i].name);
      types.push_back(n->outputs()[i]->type());
    }
    return graph.insertNode(graph.createTuple(n->outputs(), TupleType::createNamed(std::nullopt, names, types)))
        ->output();
  }
  return packOutputs(graph, n->outputs());
}

Value* emitBuiltinCall(const SourceRange& loc, Graph& graph, Symbol name, const std::vector<Value*>& args) {
  std::vector<NamedValue> named;
  for (Value* v : args) named.emplace_back(loc, v);
  return emitBuiltinCall(loc, graph, name, named, {});
}

bool isBuiltinOperator(Symbol name) {
  return !overloadsInTorchOrder(name)->empty() || !scriptBuiltinsFor(name).empty();
}

}  // namespace kiln
