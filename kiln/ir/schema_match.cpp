#include "kiln/ir/schema_match.h"

#include <sstream>

#include "kiln/ir/graph.h"

namespace kiln {

std::optional<std::string> matchTypeVariables(const TypePtr& formal, const TypePtr& actual, TypeEnv& env) {
  if (!formal->hasFreeVariables()) return std::nullopt;
  auto mismatch = [&] { return "cannot match " + irStr(*formal) + " to " + irStr(*actual); };
  if (auto var = formal->cast<VarType>()) {
    auto it = env.find(var->name());
    if (it == env.end()) {
      env[var->name()] = actual;
      return std::nullopt;
    }
    if (auto unified = unifyTypes(it->second, actual)) {
      it->second = *unified;
      return std::nullopt;
    }
    return "Type variable '" + var->name() + "' previously matched to type " + it->second->annotationStr() +
           " is matched to type " + actual->annotationStr();
  }
  if (auto list = formal->cast<ListType>()) {
    if (auto actual_list = actual->cast<ListType>()) {
      return matchTypeVariables(list->elementType(), actual_list->elementType(), env);
    }
    return mismatch();
  }
  if (auto tuple = formal->cast<TupleType>()) {
    auto actual_tuple = actual->cast<TupleType>();
    if (!actual_tuple || actual_tuple->elements().size() != tuple->elements().size()) return mismatch();
    for (size_t i = 0; i < tuple->elements().size(); ++i) {
      if (auto why = matchTypeVariables(tuple->elements()[i], actual_tuple->elements()[i], env)) return why;
    }
    return std::nullopt;
  }
  if (auto optional = formal->cast<OptionalType>()) {
    if (auto actual_optional = actual->cast<OptionalType>()) {
      return matchTypeVariables(optional->elementType(), actual_optional->elementType(), env);
    }
    // None fits Optional[T] without telling what T is.
    if (actual->kind() == TypeKind::None) return std::nullopt;
    return matchTypeVariables(optional->elementType(), actual, env);
  }
  if (auto dict = formal->cast<DictType>()) {
    auto actual_dict = actual->cast<DictType>();
    if (!actual_dict) return mismatch();
    if (auto why = matchTypeVariables(dict->keyType(), actual_dict->keyType(), env)) return why;
    return matchTypeVariables(dict->valueType(), actual_dict->valueType(), env);
  }
  if (formal->kind() == TypeKind::Future || formal->kind() == TypeKind::RRef) {
    if (actual->kind() != formal->kind()) return mismatch();
    return matchTypeVariables(formal->containedTypes()[0], actual->containedTypes()[0], env);
  }
  return mismatch();
}

TypePtr evalTypeVariables(const TypePtr& type, const TypeEnv& env) {
  if (!type->hasFreeVariables()) return type;
  if (auto var = type->cast<VarType>()) {
    auto it = env.find(var->name());
    return it == env.end() ? nullptr : it->second;
  }
  std::vector<TypePtr> contained = type->containedTypes();
  for (TypePtr& t : contained) {
    t = evalTypeVariables(t, env);
    if (!t) return nullptr;
  }
  return type->withContained(std::move(contained));
}

// --- overload resolution for nodes -----------------------------------------------------

bool Node::matches(const FunctionSchema& schema) const {
  if (kind_.toQualString() != schema.name()) return false;
  const auto& formals = schema.arguments();
  if (inputs_.size() < formals.size()) return false;
  if (!schema.isVararg() && inputs_.size() != formals.size()) return false;
  TypeEnv env;
  for (size_t i = 0; i < formals.size(); ++i) {
    TypePtr formal = formals[i].type;
    const TypePtr& actual = inputs_[i]->type();
    if (matchTypeVariables(formal, actual, env)) return false;
    // Variables that stay unbound (None for Optional[T]) still let the
    // subtype check below decide.
    if (TypePtr resolved = evalTypeVariables(formal, env)) formal = resolved;
    if (!actual->isSubtypeOf(*formal)) return false;
  }
  return true;
}

bool Node::matches(std::string_view schema_text) const { return matches(parseSchema(schema_text)); }

std::shared_ptr<const Operator> Node::maybeOperator() const {
  if (!op_ && !kind_has_no_operators_) {
    auto candidates = getAllOperatorsFor(kind_);
    kind_has_no_operators_ = candidates.empty();
    for (const auto& candidate : candidates) {
      if (matches(candidate->schema())) {
        op_ = candidate;
        break;
      }
    }
  }
  return op_;
}

const FunctionSchema* Node::maybeSchema() const {
  auto op = maybeOperator();
  return op ? &op->schema() : nullptr;
}

namespace {
std::string describeNode(const Node& n) {
  std::ostringstream out;
  n.print(out, 0, nullptr, false, true, false, false);
  return out.str();
}
}  // namespace

const Operator& Node::getOperator() const {
  auto op = maybeOperator();
  if (!op) {
    std::ostringstream msg;
    msg << "no overload of " << kind_ << " matches the node\n  " << describeNode(*this) << "\ncandidates:";
    auto candidates = getAllOperatorsFor(kind_);
    if (candidates.empty()) msg << " none (the operator is not registered)";
    for (const auto& c : candidates) msg << "\n  " << c->schema();
    KILN_ERROR(msg.str());
  }
  return *op;
}

const FunctionSchema& Node::schema() const { return getOperator().schema(); }

Operation findOperation(const Node& node) {
  if (auto op = node.maybeOperator()) return op->operationFor(node);
  if (const OperationCreator* creator = findNodeOperation(node.kind())) return (*creator)(node);
  return nullptr;
}

// --- Graph::insert -----------------------------------------------------------------------

namespace {

// One argument of a call being matched: a graph value or a constant still to insert.
struct Actual {
  Value* value = nullptr;
  IValue constant;
  TypePtr type() const { return value ? value->type() : constant.type(); }
};

// `int[2] stride=1`: a single int stands for a fixed-size int list.
std::optional<Actual> convertForFormal(const Actual& a, const Argument& formal) {
  auto list = formal.type->cast<ListType>();
  if (!a.value && list && formal.fixed_size && a.constant.isInt() && list->elementType()->kind() == TypeKind::Int) {
    Actual converted;
    converted.constant = IValue(std::vector<int64_t>(static_cast<size_t>(*formal.fixed_size), a.constant.toInt()));
    return converted;
  }
  return a;
}

struct Match {
  std::vector<Actual> inputs;
  TypeEnv env;
};

std::optional<Match> tryMatch(const FunctionSchema& schema, const std::vector<Graph::NamedValue>& args,
                              const std::vector<Graph::NamedValue>& kwargs, std::string& why) {
  const auto& formals = schema.arguments();
  auto actual = [](const Graph::NamedValue& nv) {
    Actual a;
    a.value = nv.value;
    a.constant = nv.constant;
    return a;
  };
  std::vector<std::optional<Actual>> slots(formals.size());
  size_t positional = 0;
  for (const auto& arg : args) {
    if (positional >= formals.size() || formals[positional].kwarg_only) {
      if (!schema.isVararg()) {
        why = "too many positional arguments";
        return std::nullopt;
      }
      break;
    }
    slots[positional++] = actual(arg);
  }
  for (const auto& kw : kwargs) {
    auto index = kw.name ? schema.argumentIndex(*kw.name) : std::nullopt;
    if (!index) {
      why = "unknown keyword argument '" + kw.name.value_or("") + "'";
      return std::nullopt;
    }
    if (slots[*index]) {
      why = "argument '" + *kw.name + "' given twice";
      return std::nullopt;
    }
    slots[*index] = actual(kw);
  }
  Match m;
  for (size_t i = 0; i < formals.size(); ++i) {
    if (!slots[i]) {
      if (!formals[i].default_value) {
        why = "argument '" + formals[i].name + "' is missing";
        return std::nullopt;
      }
      Actual d;
      d.constant = *formals[i].default_value;
      slots[i] = d;
    }
    Actual a = *convertForFormal(*slots[i], formals[i]);
    TypePtr actual_type = a.type();
    if (auto err = matchTypeVariables(formals[i].type, actual_type, m.env)) {
      why = "argument '" + formals[i].name + "': " + *err;
      return std::nullopt;
    }
    TypePtr formal = evalTypeVariables(formals[i].type, m.env);
    if (!formal) formal = formals[i].type;
    if (!actual_type->isSubtypeOf(*formal)) {
      why = "argument '" + formals[i].name + "' expects " + irStr(*formal) + " but got " + irStr(*actual_type);
      return std::nullopt;
    }
    m.inputs.push_back(std::move(a));
  }
  return m;
}

}  // namespace

Value* Graph::insert(Symbol kind, std::vector<NamedValue> args, std::vector<NamedValue> kwargs,
                     std::optional<SourceRange> range) {
  for (const auto& arg : args) {
    KILN_CHECK(!arg.name, "Graph::insert: keyword argument '", *arg.name, "' among the positional ones");
  }
  auto candidates = getAllOperatorsFor(kind);
  std::ostringstream failures;
  for (const auto& op : candidates) {
    const FunctionSchema& schema = op->schema();
    std::string why;
    auto match = tryMatch(schema, args, kwargs, why);
    if (!match) {
      failures << "\n  " << schema << "\n    " << why;
      continue;
    }
    if (schema.isVarret()) {
      failures << "\n  " << schema << "\n    a variable number of results cannot be inserted";
      continue;
    }
    std::vector<TypePtr> return_types;
    for (const Argument& r : schema.returns()) {
      TypePtr t = evalTypeVariables(r.type, match->env);
      KILN_CHECK(t, "cannot tell the result type ", r.type->str(), " of ", schema, " from the arguments");
      return_types.push_back(std::move(t));
    }
    std::vector<Value*> inputs;
    for (const Actual& a : match->inputs) inputs.push_back(a.value ? a.value : insertConstant(a.constant, range));
    Node* n = create(kind, inputs, return_types.size());
    for (size_t i = 0; i < return_types.size(); ++i) n->output(i)->setType(return_types[i]);
    if (range) n->setSourceRange(*range);
    insertNode(n);
    if (n->outputs().size() == 1) return n->output();
    return insertNode(createTuple(n->outputs()))->output();
  }
  if (candidates.empty()) KILN_ERROR("unknown builtin operator ", kind);
  KILN_ERROR("no overload of ", kind, " accepts these arguments:", failures.str());
}

}  // namespace kiln
