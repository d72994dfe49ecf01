#include "kiln/ir/schema_match.h"

#include <sstream>

#include "kiln/ir/graph.h"

namespace kiln {

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
Actual convertForFormal(const Actual& a, const Argument& formal) {
  auto list = formal.type->cast<ListType>();
  if (!a.value && list && formal.fixed_size && a.constant.isInt() && list->elementType()->kind() == TypeKind::Int) {
    Actual converted;
    converted.constant = IValue(std::vector<int64_t>(static_cast<size_t>(*formal.fixed_size), a.constant.toInt()));
    return converted;
  }
  return a;
}

Actual actualOf(const NamedValue& nv) {
  Actual a;
  a.value = nv.value;
  a.constant = nv.constant;
  return a;
}

// Graph::insert's conversions: none beyond a single int for `int[N]`; every
// argument must be a subtype of its parameter's type.
class InsertPolicy : public ConversionPolicy {
 public:
  InsertPolicy(const std::vector<NamedValue>& args, const std::vector<NamedValue>& kwargs)
      : args_(args), kwargs_(kwargs) {}

  std::optional<std::string> convert(const Argument& formal, const ParamSource& source, TypeEnv& env) override {
    Actual a;
    switch (source.kind) {
      case ParamSource::Kind::Positional: a = actualOf(args_[source.index]); break;
      case ParamSource::Kind::Keyword: a = actualOf(kwargs_[source.index]); break;
      case ParamSource::Kind::Default: a.constant = *formal.default_value; break;
      case ParamSource::Kind::Self:
      case ParamSource::Kind::Packed: return "cannot bind '" + formal.name + "'";  // never asked for
    }
    a = convertForFormal(a, formal);
    TypePtr actual_type = a.type();
    if (auto err = matchTypeVariables(formal.type, actual_type, env)) return "argument '" + formal.name + "': " + *err;
    TypePtr concrete = evalTypeVariables(formal.type, env);
    if (!concrete) concrete = formal.type;
    if (!actual_type->isSubtypeOf(*concrete)) {
      return "argument '" + formal.name + "' expects " + irStr(*concrete) + " but got " + irStr(*actual_type);
    }
    inputs.push_back(std::move(a));
    return std::nullopt;
  }

  std::vector<Actual> inputs;

 private:
  const std::vector<NamedValue>& args_;
  const std::vector<NamedValue>& kwargs_;
};

// Graph::insert's own wording for a call that does not fit.
std::string describeFailure(const BindFailure& f) {
  switch (f.kind) {
    case BindFailure::Kind::Conversion: return f.message;
    case BindFailure::Kind::Missing: return "argument '" + f.name + "' is missing";
    case BindFailure::Kind::TooManyPositional: return "too many positional arguments";
    case BindFailure::Kind::UnknownKeyword: return "unknown keyword argument '" + f.name + "'";
    case BindFailure::Kind::KeywordTwice:
    case BindFailure::Kind::ParamNamedTwice: return "argument '" + f.name + "' given twice";
    case BindFailure::Kind::SelfUnused: return f.message;
  }
  return f.message;
}

struct Match {
  std::vector<Actual> inputs;
  TypeEnv env;
};

std::optional<Match> tryMatch(const FunctionSchema& schema, const std::vector<NamedValue>& args,
                              const std::vector<NamedValue>& kwargs, std::string& why) {
  CallShape shape;
  shape.num_positional = args.size();
  for (const NamedValue& kw : kwargs) shape.keywords.push_back(kw.name.value_or(""));
  InsertPolicy policy(args, kwargs);
  Match m;
  BindResult bound = bindArguments(schema, shape, policy, m.env);
  if (!bound) {
    why = describeFailure(bound.failure);
    return std::nullopt;
  }
  m.inputs = std::move(policy.inputs);
  // Arguments past the `*` of a vararg schema go on as they are.
  for (size_t position : bound.bound->varargs) m.inputs.push_back(actualOf(args[position]));
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
