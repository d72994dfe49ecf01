#include "kiln/passes/analysis/node_effects.h"

#include <algorithm>
#include <cmath>

namespace kiln {

bool isMutableType(const Type& type) {
  switch (type.kind()) {
    case TypeKind::Tensor:
    case TypeKind::List:
    case TypeKind::Dict:
    case TypeKind::Class:
    case TypeKind::Any:
    case TypeKind::Future:
    case TypeKind::RRef: return true;
    case TypeKind::Tuple:
    case TypeKind::Optional:
    case TypeKind::Union: {
      auto contained = type.containedTypes();
      return std::any_of(contained.begin(), contained.end(), [](const TypePtr& t) { return isMutableType(*t); });
    }
    default: return false;
  }
}

bool isMutableType(const Value* v) { return isMutableType(*v->type()); }

bool hasSideEffects(const Node* n) {
  static const std::unordered_set<Symbol> kinds = {
      prim::PythonOp,
      Symbol::prim("IgnoredPythonOp"),
      prim::Print,
      prim::RaiseException,
      prim::SetAttr,
      aten::warn,
      Symbol::aten("save"),
      Symbol::aten("manual_seed"),
      prim::AddStatValue,
      prim::TimePoint,
      prim::CallFunction,
      prim::CallMethod,
      prim::BailoutTemplate,
      prim::BailOut,
      prim::rpc_async,
      Symbol::prim("rpc_sync"),
      Symbol::prim("rpc_remote"),
      aten::wait,
      prim::fork,
      prim::awaitable,
      prim::Enter,
      prim::Exit,
  };
  return kinds.count(n->kind()) > 0;
}

bool isNondeterministic(const Node* n) {
  static const std::unordered_set<Symbol> random_kinds = [] {
    std::unordered_set<Symbol> s;
    for (const char* name :
         {"dropout", "dropout_", "feature_dropout", "alpha_dropout", "feature_alpha_dropout", "_fused_dropout",
          "native_dropout", "_standard_gamma", "bernoulli", "bernoulli_", "multinomial", "normal", "normal_", "poisson",
          "binomial", "rrelu", "rrelu_", "rrelu_with_noise", "rand", "rand_like", "randn", "randn_like", "randint",
          "randint_like", "randperm", "uniform_", "exponential_", "geometric_", "cauchy_", "log_normal_", "random_"}) {
      s.insert(Symbol::aten(name));
    }
    return s;
  }();
  const FunctionSchema* schema = n->maybeSchema();
  if (n->kind() == aten::dropout && schema) {
    // Dropout outside training returns its input unchanged.
    auto i = schema->argumentIndex("train");
    auto train = i && *i < n->inputs().size() ? toIValue(n->input(*i)) : std::nullopt;
    if (train && train->isBool() && !train->toBool()) return false;
  }
  if (random_kinds.count(n->kind())) return true;
  if (!schema) return false;
  return std::any_of(schema->arguments().begin(), schema->arguments().end(), [](const Argument& a) {
    const Type* t = a.type.get();
    if (auto opt = t->cast<OptionalType>()) t = opt->getElementType().get();
    return t->kind() == TypeKind::Generator;
  });
}

namespace {

bool sameIValue(const IValue& a, const IValue& b) {
  if (a.tag() != b.tag()) return false;
  auto all_same = [](const std::vector<IValue>& x, const std::vector<IValue>& y) {
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), sameIValue);
  };
  switch (a.tag()) {
    case IValue::Tag::Double:
      return a.toDouble() == b.toDouble() && std::signbit(a.toDouble()) == std::signbit(b.toDouble());
    case IValue::Tag::Tensor: return a.toTensor().dtype() == b.toTensor().dtype() && a == b;
    case IValue::Tag::List: return all_same(a.toListRef().elements, b.toListRef().elements);
    case IValue::Tag::Tuple: return all_same(a.toTupleRef().elements, b.toTupleRef().elements);
    default: return a == b;
  }
}

// The alias sets an argument's annotation names (`a` in `Tensor(a!)`,
// `*` in `t(c -> *)`), as pointers into the schema: no copies.
void collectSets(const AliasInfo& info, std::vector<const std::string*>& out) {
  for (const std::string& s : info.before_sets) out.push_back(&s);
  for (const std::string& s : info.after_sets) out.push_back(&s);
  for (const AliasInfo& c : info.contained) collectSets(c, out);
}

}  // namespace

bool sameConstant(const Value* a, const Value* b) {
  if (a->node()->kind() != prim::Constant || b->node()->kind() != prim::Constant) return false;
  if (*a->type() != *b->type()) return false;
  // Function constants name their callee.
  if (a->type()->kind() == TypeKind::Function) {
    return a->node()->hasAttribute(attr::name) && b->node()->hasAttribute(attr::name) &&
           a->node()->s(attr::name) == b->node()->s(attr::name);
  }
  auto x = toIValue(a);
  auto y = toIValue(b);
  return x && y && sameIValue(*x, *y);
}

AliasClasses::AliasClasses(Graph& graph) {
  for (Value* input : graph.inputs()) markWildcard(input);
  for (Value* output : graph.outputs()) markWildcard(output);
  analyze(graph.block());
  // Classes are final now: record which roots are wildcards and which are written.
  std::unordered_set<const Value*> members;
  members.swap(wildcard_roots_);
  for (const Value* v : members) wildcard_roots_.insert(classOf(v));
  members.clear();
  members.swap(written_roots_);
  for (const Value* v : members) written_roots_.insert(classOf(v));
}

const Value* AliasClasses::classOf(const Value* v) const {
  auto it = parent_.find(v);
  if (it == parent_.end()) return v;
  if (it->second == v) return v;
  const Value* root = classOf(it->second);
  it->second = root;
  return root;
}

bool AliasClasses::isWildcard(const Value* v) const {
  return isMutableType(v) && wildcard_roots_.count(classOf(v)) > 0;
}

bool AliasClasses::hasWriters(const Value* v) const {
  return isMutableType(v) && written_roots_.count(classOf(v)) > 0;
}

std::vector<const Value*> AliasClasses::writtenInputs(const Node* n) const {
  std::vector<const Value*> written;
  const FunctionSchema* schema = n->maybeSchema();
  if (!schema) return written;
  for (size_t i = 0; i < schema->arguments().size() && i < n->inputs().size(); ++i) {
    if (schema->arguments()[i].isOutOrInPlace()) written.push_back(n->input(i));
  }
  return written;
}

void AliasClasses::unite(const Value* a, const Value* b) {
  if (!isMutableType(a) || !isMutableType(b)) return;
  const Value* ra = classOf(a);
  const Value* rb = classOf(b);
  parent_.emplace(ra, ra);
  parent_[rb] = ra;
}

void AliasClasses::markWildcard(const Value* v) {
  if (isMutableType(v)) wildcard_roots_.insert(v);
}

void AliasClasses::analyze(Block* block) {
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) analyze(b);
    analyzeNode(n);
  }
}

void AliasClasses::analyzeNode(Node* n) {
  switch (n->kind()) {
    case prim::Constant: return;
    case prim::If:
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        for (Block* b : n->blocks()) unite(n->output(i), b->outputs()[i]);
      }
      return;
    case prim::Loop: {
      Block* body = n->blocks()[0];
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        unite(n->output(i), n->input(i + 2));
        unite(n->output(i), body->inputs()[i + 1]);
        unite(n->output(i), body->outputs()[i + 1]);
      }
      return;
    }
    default: break;
  }
  for (const Value* v : writtenInputs(n)) written_roots_.insert(v);
  const FunctionSchema* schema = n->maybeSchema();
  bool side_effects = hasSideEffects(n);
  if (!schema || !n->kind().isAten() || side_effects) {
    // Only aten schemas spell out their aliasing; for the rest (tuple and
    // list construction, unpacking, attribute access) any output may alias
    // any input, and calls may hand out anything.
    for (Value* out : n->outputs()) {
      for (Value* in : n->inputs()) unite(out, in);
      if (side_effects) markWildcard(out);
    }
    if (side_effects) {
      for (Value* in : n->inputs()) markWildcard(in);
    }
    return;
  }
  // (input index, set) for every set an input's annotation names.
  std::vector<std::pair<size_t, const std::string*>> input_sets;
  std::vector<const std::string*> sets;
  for (size_t i = 0; i < n->inputs().size() && i < schema->arguments().size(); ++i) {
    const Argument& arg = schema->arguments()[i];
    if (!arg.alias_info) continue;
    sets.clear();
    collectSets(*arg.alias_info, sets);
    for (const std::string* set : sets) {
      if (*set == "*") markWildcard(n->input(i));
      input_sets.emplace_back(i, set);
    }
  }
  for (size_t j = 0; j < n->outputs().size() && j < schema->returns().size(); ++j) {
    const Argument& ret = schema->returns()[j];
    if (!ret.alias_info) continue;
    sets.clear();
    collectSets(*ret.alias_info, sets);
    for (const std::string* set : sets) {
      if (*set == "*") {
        markWildcard(n->output(j));
        continue;
      }
      for (const auto& [i, input_set] : input_sets) {
        if (*input_set == *set) unite(n->output(j), n->input(i));
      }
    }
  }
}

}  // namespace kiln
