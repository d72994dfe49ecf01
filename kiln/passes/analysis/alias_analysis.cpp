#include "kiln/passes/analysis/alias_analysis.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "kiln/ir/walk.h"
#include "kiln/passes/analysis/memory_dag.h"
#include "kiln/passes/analysis/node_effects.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

// The types whose wildcards stand for the memory a value of some type may
// refer to (1.13's mapTypeToAliasTypeSet): tensors of every shape share one,
// Optional[T] is T, a tuple keeps only its mutable members, a union lists
// its mutable members. Empty for immutable types.
using AliasTypes = std::vector<TypePtr>;

TypePtr singleType(const AliasTypes& types) { return types.size() == 1 ? types[0] : UnionType::create(types); }

AliasTypes aliasTypesOf(const TypePtr& type) {
  auto members = [](const std::vector<TypePtr>& types) {
    AliasTypes out;
    for (const TypePtr& t : types) {
      AliasTypes inner = aliasTypesOf(t);
      out.insert(out.end(), inner.begin(), inner.end());
    }
    return out;
  };
  switch (type->kind()) {
    case TypeKind::Tensor:
    case TypeKind::List:
    case TypeKind::Dict:
    case TypeKind::Class: return {unshapedType(type)};
    case TypeKind::Any: return {type};
    case TypeKind::Optional: return aliasTypesOf(type->containedTypes()[0]);
    case TypeKind::Union: return members(type->containedTypes());
    case TypeKind::Tuple: {
      AliasTypes inner = members(type->containedTypes());
      if (inner.empty()) return {};
      return {TupleType::create(std::move(inner))};
    }
    case TypeKind::Future:
    case TypeKind::RRef: {
      AliasTypes inner = aliasTypesOf(type->containedTypes()[0]);
      if (inner.empty()) return {};
      return {type->withContained({singleType(inner)})};
    }
    default: return {};
  }
}

// What a container of this (alias) type holds: a class's attributes, the
// element types of the rest.
std::vector<TypePtr> heldTypes(const Type& type) {
  if (const auto* cls = type.cast<ClassType>()) {
    std::vector<TypePtr> out;
    for (size_t i = 0; i < cls->numAttributes(); ++i) out.push_back(cls->attributeType(i));
    return out;
  }
  return type.containedTypes();
}

// Values that never alias anything although their type could (PyTorch's
// Value::mustBeNone and prim::Uninitialized).
bool nonAliasing(const Value* v) {
  if (v->type()->kind() == TypeKind::None) return true;
  const Node* n = v->node();
  if (n->kind() == prim::AutogradZero || n->kind() == prim::Uninitialized) return true;
  return n->kind() == prim::Constant && !n->hasAttributes() && v->type()->kind() == TypeKind::Optional;
}

bool anySideEffects(const Node* n) {
  return walkNodes(n, WalkOrder::PreOrder,
                   [](const Node* m) { return hasSideEffects(m) ? WalkResult::interrupt() : WalkResult::advance(); })
      .wasInterrupted();
}

// How the analysis treats a node: the special cases of 1.13's analyzeImpl,
// then the schema's annotations, then "anything may happen".
enum class Rule {
  If,
  Loop,
  Subgraph,   // points its subgraph's inputs at its inputs and its outputs at the subgraph's
  Fork,       // inputs escape; the future is fresh
  Wait,       // the forked work may have written anything
  Creator,    // fresh outputs
  Container,  // prim::ListConstruct/TupleConstruct/DictConstruct
  Extractor,  // outputs taken out of a container: wildcards
  Forward,    // output i points to input i (casts, profiling, guards)
  BailOut,
  Chunk,
  BroadcastingChunk,
  SetAttr,
  Norm,  // batch_norm/instance_norm write their running stats when computing them
  Ignore,
  Conservative,
  Schema,
};

Rule ruleFor(const Node* n) {
  static const std::unordered_map<Symbol, Rule> special = [] {
    std::unordered_map<Symbol, Rule> m;
    auto add = [&](Rule rule, std::initializer_list<Symbol> kinds) {
      for (Symbol k : kinds) m.emplace(k, rule);
    };
    add(Rule::If, {prim::If});
    add(Rule::Loop, {prim::Loop});
    add(Rule::Subgraph, {prim::FusionGroup, prim::DifferentiableGraph, prim::FallbackGraph,
                         Symbol::prim("FunctionalGraph"), Symbol::prim("CudaFusionGroup")});
    add(Rule::Fork,
        {prim::fork, prim::awaitable, prim::rpc_async, Symbol::prim("rpc_sync"), Symbol::prim("rpc_remote")});
    add(Rule::Wait, {aten::wait});
    add(Rule::Creator,
        {prim::Constant, prim::AutogradZero, prim::AutogradAdd, prim::Closure, prim::CreateObject, prim::Uninitialized,
         prim::MMTreeReduce, prim::MMBatchSide, prim::BroadcastSizes, prim::StaticSubgraph, prim::TensorExprGroup,
         Symbol::prim("tolist"), Symbol::prim("FusedConcat"), Symbol::prim("ChunkSizes")});
    add(Rule::Container, {prim::ListConstruct, prim::TupleConstruct, prim::DictConstruct});
    add(Rule::Extractor, {prim::TupleUnpack, prim::TupleIndex, prim::TupleSlice, prim::ListUnpack, prim::PythonOp,
                          prim::GetAttr, prim::unchecked_tuple_element});
    add(Rule::Forward, {prim::unchecked_cast, prim::profile, prim::profile_ivalue, prim::Guard, prim::TypeCheck,
                        prim::RequiresGradCheck});
    add(Rule::BailOut, {prim::BailOut});
    add(Rule::Chunk, {prim::ConstantChunk});
    add(Rule::BroadcastingChunk, {Symbol::prim("BroadcastingChunk")});
    add(Rule::SetAttr, {prim::SetAttr});
    add(Rule::Norm, {Symbol::aten("batch_norm"), Symbol::aten("instance_norm")});
    add(Rule::Ignore, {prim::Print, prim::isinstance});
    add(Rule::Conservative, {prim::CallFunction, prim::CallMethod, prim::Enter, prim::Exit});
    return m;
  }();
  if (auto it = special.find(n->kind()); it != special.end()) {
    if (it->second == Rule::Subgraph && !n->hasAttribute(attr::Subgraph)) return Rule::Conservative;
    if (it->second == Rule::Norm && !n->maybeSchema()) return Rule::Conservative;
    return it->second;
  }
  return n->maybeSchema() ? Rule::Schema : Rule::Conservative;
}

// Whether batch_norm/instance_norm updates its running statistics: unless
// its `training` (`use_input_stats`) argument is the constant false.
bool updatesRunningStats(const Node* n) {
  Symbol flag = Symbol::attr(n->kind() == Symbol::aten("batch_norm") ? "training" : "use_input_stats");
  auto value = n->get(flag);
  return !(value && value->isBool() && !value->toBool());
}

}  // namespace

struct AliasDbState {
  explicit AliasDbState(Graph& graph) : graph(graph) {}

  Graph& graph;
  MemoryDAG dag;
  std::unordered_map<const Value*, Element*> elements;
  // One wildcard per alias type, by its printed name.
  std::map<std::string, Element*> wildcards;
  MemoryLocations wildcard_locations;
  mutable std::unordered_map<TypePtr, AliasTypes> alias_types;
  std::vector<const Value*> wildcard_values;
  std::unordered_set<const Value*> wildcard_value_set;
  // Writes as the analysis finds them; finish() turns them into locations.
  std::vector<std::pair<const Node*, const Value*>> writes;
  std::vector<std::pair<const Node*, const Value*>> contained_writes;
  std::vector<const Node*> writes_to_all_wildcards;
  std::unordered_map<const Node*, MemoryLocations> write_index;
  MemoryLocations written;

  // --- types and elements ------------------------------------------------------------

  const AliasTypes& aliasTypes(const TypePtr& type) const {
    auto it = alias_types.find(type);
    if (it == alias_types.end()) it = alias_types.emplace(type, aliasTypesOf(type)).first;
    return it->second;
  }
  bool isMutable(const Value* v) const { return !aliasTypes(v->type()).empty(); }

  const Element* elementOf(const Value* v) const {
    auto it = elements.find(v);
    return it == elements.end() ? nullptr : it->second;
  }

  Element* findWildcard(const TypePtr& type) const {
    const AliasTypes& types = aliasTypes(type);
    if (types.empty()) return nullptr;
    auto it = wildcards.find(singleType(types)->str());
    return it == wildcards.end() ? nullptr : it->second;
  }

  Element* getOrCreateWildcard(const TypePtr& type) {
    const AliasTypes& types = aliasTypes(type);
    if (types.empty()) return nullptr;
    std::string name = singleType(types)->str();
    if (auto it = wildcards.find(name); it != wildcards.end()) return it->second;
    Element* w = dag.makeFreshElement(nullptr);
    wildcards.emplace(std::move(name), w);
    wildcard_locations.set(w->index);
    addHeldWildcards(w, types);
    return w;
  }

  // A fresh container holds the wildcards of what it may hold; a fresh union
  // may be any of its members, so it points to their wildcards.
  void addHeldWildcards(Element* e, const AliasTypes& types) {
    if (types.size() > 1) {
      for (const TypePtr& t : types) {
        if (Element* w = getOrCreateWildcard(t)) dag.makePointerTo(e, w);
      }
      return;
    }
    for (const TypePtr& held : heldTypes(*types[0])) {
      if (Element* w = getOrCreateWildcard(held)) dag.addToContainedElements(w, e);
    }
  }

  void giveFreshAlias(const Value* v, bool hold_wildcards = true) {
    const AliasTypes& types = aliasTypes(v->type());
    if (types.empty() || elements.count(v)) return;
    Element* e = dag.makeFreshElement(v);
    elements.emplace(v, e);
    if (hold_wildcards) addHeldWildcards(e, types);
  }

  Element* getOrCreateElement(const Value* v) {
    giveFreshAlias(v);
    return elements.at(v);
  }

  // `v` may be anything of its type: its element points to the wildcard
  // once the analysis is done. Returns the wildcard (null if `v` is immutable).
  Element* setWildcard(const Value* v) {
    Element* w = getOrCreateWildcard(v->type());
    if (!w) return nullptr;
    getOrCreateElement(v);
    if (wildcard_value_set.insert(v).second) wildcard_values.push_back(v);
    return w;
  }

  void makePointerTo(const Value* from, const Value* to) {
    if (nonAliasing(from) || nonAliasing(to)) {
      giveFreshAlias(from);
      giveFreshAlias(to);
      return;
    }
    // Optional, tuple, future and union values may hold either kind; Any
    // may hold an immutable value after refinement.
    if (isMutable(from) != isMutable(to) || !isMutable(from) || from == to) return;
    dag.makePointerTo(getOrCreateElement(from), getOrCreateElement(to));
  }

  void mapAliases(ArrayRef<Value*> from, ArrayRef<Value*> to) {
    for (size_t i = 0; i < from.size() && i < to.size(); ++i) makePointerTo(from[i], to[i]);
  }

  void addToContainedElements(const Value* inner, const Value* container) {
    if (!isMutable(inner)) return;
    dag.addToContainedElements(getOrCreateElement(inner), getOrCreateElement(container));
  }

  void registerWrite(const Value* v, const Node* n, bool to_contained = false) {
    if (!isMutable(v)) return;
    (to_contained ? contained_writes : writes).emplace_back(n, v);
  }

  // --- the analysis ------------------------------------------------------------------

  void analyze() {
    for (const Value* input : graph.inputs()) setWildcard(input);
    analyze(graph.block());
    finish();
  }

  void analyze(Block* block) {
    for (Node* n : block->nodes()) analyze(n);
  }

  void analyze(Node* n) {
    const Rule rule = ruleFor(n);
    // Blocks the rule does not look into (a closure's body, a with's) are
    // analyzed all the same, so every value has an element.
    if (rule != Rule::If && rule != Rule::Loop) {
      for (Block* b : n->blocks()) analyze(b);
    }
    switch (rule) {
      case Rule::If: analyzeIf(n); break;
      case Rule::Loop: analyzeLoop(n); break;
      case Rule::Subgraph: analyzeSubgraph(n); break;
      case Rule::Fork:
        for (const Value* in : n->inputs()) setWildcard(in);
        for (const Value* out : n->outputs()) giveFreshAlias(out);
        break;
      case Rule::Wait:
        for (const Value* out : n->outputs()) setWildcard(out);
        writes_to_all_wildcards.push_back(n);
        break;
      case Rule::Creator:
        for (const Value* out : n->outputs()) giveFreshAlias(out);
        break;
      case Rule::Container: analyzeContainerConstruct(n); break;
      case Rule::Extractor:
        for (const Value* out : n->outputs()) setWildcard(out);
        break;
      case Rule::Forward: mapAliases(n->outputs(), n->inputs()); break;
      case Rule::BailOut: makePointerTo(n->output(), n->input(1)); break;
      case Rule::Chunk:
        for (const Value* out : n->outputs()) makePointerTo(out, n->input(0));
        break;
      case Rule::BroadcastingChunk: {
        size_t chunks = static_cast<size_t>(n->i(attr::chunks));
        for (size_t i = 0; i < n->outputs().size(); ++i) makePointerTo(n->output(i), n->input(i / chunks));
        break;
      }
      case Rule::SetAttr:
        registerWrite(n->input(0), n);
        setWildcard(n->input(1));
        break;
      case Rule::Norm:
        for (const Value* out : n->outputs()) giveFreshAlias(out);
        if (updatesRunningStats(n)) {
          registerWrite(n->namedInput("running_mean"), n);
          registerWrite(n->namedInput("running_var"), n);
        }
        break;
      case Rule::Ignore: break;
      case Rule::Conservative: analyzeConservative(n); break;
      case Rule::Schema: analyzeFromSchema(n); break;
    }
    // Every mutable value has an element, whatever the rule did.
    for (const Value* out : n->outputs()) giveFreshAlias(out);
  }

  void analyzeIf(Node* n) {
    for (Block* b : n->blocks()) analyze(b);
    for (Block* b : n->blocks()) mapAliases(n->outputs(), b->outputs());
  }

  // 1.13 points the body's inputs at the loop's inputs only, and the loop's
  // outputs at the body's outputs only; both miss a flow (the previous
  // iteration's values; the initial values when the loop runs zero times).
  void analyzeLoop(Node* n) {
    Block* body = n->blocks()[0];
    ArrayRef<Value*> carried_inputs = n->inputs().slice(2);
    ArrayRef<Value*> body_inputs = body->inputs().slice(1);
    ArrayRef<Value*> body_outputs = body->outputs().slice(1);
    mapAliases(body_inputs, carried_inputs);
    for (const Value* in : body->inputs()) giveFreshAlias(in);
    analyze(body);
    mapAliases(body_inputs, body_outputs);
    mapAliases(n->outputs(), body_outputs);
    mapAliases(n->outputs(), carried_inputs);
  }

  void analyzeSubgraph(Node* n) {
    Block* sub = n->g(attr::Subgraph)->block();
    mapAliases(sub->inputs(), n->inputs());
    for (const Value* in : sub->inputs()) giveFreshAlias(in);
    analyze(sub);
    mapAliases(n->outputs(), sub->outputs());
  }

  // The values put into a container can be reached through anything taken
  // out of one of the same type: they become wildcards, which the container
  // holds. A list whose one use is an op that only reads it holds them as
  // they are (1.13's functionalNonEscapingListUse, whose ops this is).
  void analyzeContainerConstruct(Node* n) {
    const Value* container = n->output();
    if (!isMutable(container)) return;
    static const std::unordered_set<Symbol> reads_list_only = {aten::cat,
                                                               aten::stack,
                                                               Symbol::aten("broadcast_tensors"),
                                                               Symbol::aten("vstack"),
                                                               Symbol::aten("hstack"),
                                                               Symbol::aten("dstack")};
    if (n->kind() == prim::ListConstruct && container->uses().size() == 1 &&
        reads_list_only.count(container->uses()[0].user->kind())) {
      giveFreshAlias(container, /*hold_wildcards=*/false);
      for (const Value* in : n->inputs()) addToContainedElements(in, container);
      return;
    }
    giveFreshAlias(container);
    Element* container_element = elements.at(container);
    for (const Value* in : n->inputs()) {
      if (Element* w = setWildcard(in)) dag.addToContainedElements(w, container_element);
    }
  }

  void analyzeConservative(Node* n) {
    for (const Value* in : n->inputs()) {
      if (!isMutable(in)) continue;
      registerWrite(in, n, /*to_contained=*/true);
      setWildcard(in);
    }
    for (const Value* out : n->outputs()) setWildcard(out);
  }

  // Binds each alias set named on an input to that input; outputs in a set
  // point to its input, outputs in no set are fresh, `*` makes wildcards,
  // `!` records a write.
  void analyzeFromSchema(Node* n) {
    const FunctionSchema& schema = *n->maybeSchema();
    std::unordered_map<std::string, const Value*> bound;
    for (size_t i = 0; i < schema.arguments().size() && i < n->inputs().size(); ++i) {
      const std::optional<AliasInfo>& formal = schema.arguments()[i].alias_info;
      const Value* actual = n->input(i);
      if (!formal || !isMutable(actual)) continue;
      for (const std::string& set : formal->before_sets) {
        if (set == "*") setWildcard(actual);
        bound.emplace(set, actual);
      }
      if (formal->is_write) registerWrite(actual, n);
      if (std::count(formal->after_sets.begin(), formal->after_sets.end(), "*")) setWildcard(actual);
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const Value* actual = n->output(i);
      const AliasInfo* formal =
          i < schema.returns().size() && schema.returns()[i].alias_info ? &*schema.returns()[i].alias_info : nullptr;
      if (!formal) {
        giveFreshAlias(actual);
        continue;
      }
      if (!isMutable(actual)) continue;
      for (const std::string& set : formal->before_sets) {
        if (set == "*") {
          setWildcard(actual);
        } else if (auto it = bound.find(set); it != bound.end()) {
          makePointerTo(actual, it->second);
        } else if (formal->before_sets.size() == 1) {
          giveFreshAlias(actual);  // `foo(Tensor(a) self) -> Tensor(b)`: a set of its own
        }
        // Else `Tensor(a|fresh)`-like: the bound sets are enough.
      }
      if (formal->is_write) registerWrite(actual, n);
    }
  }

  void finish() {
    // A wildcard value's memory may be anything of its type: its locations
    // point to the wildcard. (Never from one wildcard to another: a union's
    // wildcard already points to its members'.)
    std::vector<std::pair<Element*, MemoryLocations>> edges;
    for (const Value* v : wildcard_values) {
      edges.emplace_back(findWildcard(v->type()), dag.getMemoryLocations(elements.at(v)));
    }
    for (const auto& [wildcard, locations] : edges) {
      locations.forEach([&, w = wildcard](unsigned i) {
        if (!wildcard_locations.test(i)) dag.makePointerTo(dag.fromIndex(i), w);
      });
    }
    for (const auto& [n, v] : writes) write_index[n] |= dag.getMemoryLocations(elements.at(v));
    for (const auto& [n, v] : contained_writes) write_index[n] |= dag.getAllContainedMemoryLocations(elements.at(v));
    for (const Node* n : writes_to_all_wildcards) write_index[n] |= wildcard_locations;
    for (const auto& [n, locations] : write_index) written |= locations;
    writes.clear();
    contained_writes.clear();
    writes_to_all_wildcards.clear();
  }

  // --- queries -----------------------------------------------------------------------

  void collectWrites(const Node* n, MemoryLocations& out) const {
    walkNodes(n, WalkOrder::PreOrder, [&](const Node* m) {
      if (auto it = write_index.find(m); it != write_index.end()) out |= it->second;
    });
  }
  MemoryLocations getWrites(const Node* n) const {
    MemoryLocations out;
    collectWrites(n, out);
    return out;
  }

  // Reading a value reads all it may hold.
  void collectReads(const Node* n, MemoryLocations& out) const {
    walkNodes(n, WalkOrder::PreOrder, [&](const Node* m) {
      for (const Value* in : m->inputs()) {
        if (const Element* e = elementOf(in)) out |= dag.getAllContainedMemoryLocations(e);
      }
    });
  }
  MemoryLocations getReads(const Node* n) const {
    MemoryLocations out;
    collectReads(n, out);
    return out;
  }

  // Elements of the mutable values among `values`; nullopt when one is unknown.
  std::optional<std::vector<const Element*>> elementsOf(ArrayRef<const Value*> values) const {
    std::vector<const Element*> out;
    for (const Value* v : values) {
      if (!isMutable(v)) continue;
      const Element* e = elementOf(v);
      if (!e) return std::nullopt;
      out.push_back(e);
    }
    return out;
  }

  // --- moving nodes ------------------------------------------------------------------

  enum class MoveSide { Before, After };
  bool tryMove(Node* to_move, Node* move_point, MoveSide side, bool dry_run);

  // --- printing ----------------------------------------------------------------------

  std::string elementName(const Element* e) const {
    if (e->values.empty()) {
      for (const auto& [name, w] : wildcards) {
        if (w == e) return "WILDCARD for type " + name;
      }
      return "WILDCARD";
    }
    std::string out = e->values.size() == 1 ? "" : "(";
    for (size_t i = 0; i < e->values.size(); ++i) out += (i ? ", %" : "%") + e->values[i]->debugName();
    return e->values.size() == 1 ? out : out + ")";
  }

  std::string namesOf(const MemoryLocations& locations) const {
    std::string out;
    locations.forEach([&](unsigned i) { out += (out.empty() ? "" : ", ") + elementName(dag.fromIndex(i)); });
    return out;
  }

  void printWrites(const Block* block, std::ostream& out) const {
    walkNodes(block, WalkOrder::PreOrder, [&](const Node* n) {
      auto it = write_index.find(n);
      if (it == write_index.end()) return;
      out << "  ";
      for (size_t i = 0; i < n->outputs().size(); ++i) out << (i ? ", %" : "%") << n->output(i)->debugName();
      out << (n->outputs().empty() ? "" : " = ") << n->kind().toQualString() << " writes to " << namesOf(it->second)
          << "\n";
    });
  }

  std::string toString() const {
    std::ostringstream out;
    out << "\n===1. GRAPH===\n" << graph.toString(false) << "\n===2. ALIAS DB===\n";
    for (size_t i = 0; i < dag.size(); ++i) {
      const Element* e = dag.fromIndex(static_cast<unsigned>(i));
      if (!e->points_to.empty()) out << elementName(e) << " points to: " << namesOf(e->points_to) << "\n";
      if (!e->contained_elements.empty())
        out << elementName(e) << " contains: " << namesOf(e->contained_elements) << "\n";
    }
    out << "\n===3. WRITES===\n";
    printWrites(graph.block(), out);
    return out.str();
  }
};

// --- moving nodes (1.13's WorkingSet) ------------------------------------------------

namespace {

// The node of `block` that is or encloses `n`; null when `n` is outside it.
Node* ancestorIn(Node* n, const Block* block) {
  while (n->owningBlock() != block) {
    n = n->owningBlock()->owningNode();
    if (!n) return nullptr;
  }
  return n;
}

// The nodes that must keep their order relative to a node being moved: the
// mover, and the nodes it drags along because they depend on it (or it on
// them, moving backwards).
class WorkingSet {
 public:
  WorkingSet(Node* mover, const AliasDbState& db) : db_(db), mover_(mover) {
    mover_users_ = usersSameBlock(mover);
    mover_writes_ = db.getWrites(mover);
    mover_reads_ = db.getReads(mover);
  }

  void add(Node* n) {
    nodes_.push_back(n);
    node_set_.insert(n);
    for (Node* user : usersSameBlock(n)) users_.insert(user);
    writes_ |= db_.getWrites(n);
    reads_ |= db_.getReads(n);
  }

  // The mover stays on its side of the move point; only the rest goes.
  void eraseMover() {
    mover_ = nullptr;
    mover_writes_.clear();
    mover_reads_.clear();
    mover_users_.clear();
  }

  const std::vector<Node*>& dependentNodes() const { return nodes_; }

  bool dependsOn(Node* n) const {
    if (!mover_ && nodes_.empty()) return false;
    return hasDataDependency(n) || hasMutabilityDependency(n);
  }

 private:
  bool hasDataDependency(Node* n) const {
    const Node* pivot = mover_ ? mover_ : nodes_.front();
    return n->isAfter(pivot) ? producesFor(n) : consumesFrom(n);
  }

  // Read-after-write, write-after-read and write-after-write on memory that may alias.
  bool hasMutabilityDependency(Node* n) const {
    MemoryLocations n_writes = db_.getWrites(n);
    if (reads_.intersects(n_writes) || (mover_ && mover_reads_.intersects(n_writes))) return true;
    if (writes_.intersects(n_writes) || (mover_ && mover_writes_.intersects(n_writes))) return true;
    MemoryLocations n_reads = db_.getReads(n);
    return writes_.intersects(n_reads) || (mover_ && mover_writes_.intersects(n_reads));
  }

  bool producesFor(Node* n) const { return (mover_ && mover_users_.count(n)) || users_.count(n); }

  bool consumesFrom(Node* n) const {
    for (Node* user : usersSameBlock(n)) {
      if (user == mover_ || node_set_.count(user)) return true;
    }
    return false;
  }

  // Users of `n`'s outputs, as the nodes of `n`'s block that hold them.
  static std::unordered_set<Node*> usersSameBlock(Node* n) {
    std::unordered_set<Node*> users;
    for (Value* out : n->outputs()) {
      for (const Use& use : out->uses()) {
        if (Node* user = ancestorIn(use.user, n->owningBlock())) users.insert(user);
      }
    }
    return users;
  }

  const AliasDbState& db_;
  std::vector<Node*> nodes_;
  std::unordered_set<Node*> node_set_;
  std::unordered_set<Node*> users_;
  MemoryLocations writes_;
  MemoryLocations reads_;
  Node* mover_;
  std::unordered_set<Node*> mover_users_;
  MemoryLocations mover_writes_;
  MemoryLocations mover_reads_;
};

}  // namespace

// Walks from `to_move` toward `move_point`, gathering into the working set
// every node that cannot be crossed; then moves the set past `move_point` if
// `move_point` itself does not depend on it.
bool AliasDbState::tryMove(Node* to_move, Node* move_point, MoveSide side, bool dry_run) {
  if (to_move->owningBlock() != move_point->owningBlock()) return false;
  if (to_move == move_point) return true;
  const bool forward = !to_move->isAfter(move_point);
  auto step = [forward](Node* n) { return forward ? n->next() : n->prev(); };
  Node* cur = step(to_move);
  // `to_move` already on the requested side of `move_point`: the nodes in
  // between stay where they are and `to_move` ends up adjacent to it.
  const bool split = (side == MoveSide::Before && to_move->isBefore(move_point)) ||
                     (side == MoveSide::After && to_move->isAfter(move_point));
  if (split && cur == move_point) return true;
  if (anySideEffects(to_move) || (!split && anySideEffects(move_point))) return false;

  WorkingSet working_set(to_move, *this);
  for (; cur != move_point; cur = step(cur)) {
    if (anySideEffects(cur)) return false;
    if (working_set.dependsOn(cur)) working_set.add(cur);
  }
  if (split) working_set.eraseMover();
  if (working_set.dependsOn(move_point)) return false;
  if (dry_run) return true;

  auto place = [](Node* n, Node* point, MoveSide s) {
    s == MoveSide::Before ? n->moveBefore(point) : n->moveAfter(point);
  };
  if (split) {
    // `to_move` goes next to `move_point`; what depended on it goes to the other side.
    place(to_move, move_point, side);
    const MoveSide other = side == MoveSide::Before ? MoveSide::After : MoveSide::Before;
    for (Node* n : working_set.dependentNodes()) {
      place(n, cur, other);
      cur = n;
    }
  } else {
    place(to_move, cur, side);
    cur = to_move;
    for (Node* n : working_set.dependentNodes()) {
      place(n, cur, side);
      cur = n;
    }
  }
  return true;
}

// --- AliasDb ---------------------------------------------------------------------------

AliasDb::AliasDb(std::shared_ptr<Graph> graph)
    : graph_(std::move(graph)), state_(std::make_unique<AliasDbState>(*graph_)) {
  state_->analyze();
  GRAPH_DEBUG(state_->toString());
}

AliasDb::~AliasDb() = default;

bool AliasDb::isMutableType(const Value* v) { return kiln::isMutableType(v); }

bool AliasDb::mayWrite(const Node* n) {
  switch (ruleFor(n)) {
    case Rule::Wait:
    case Rule::SetAttr:
    case Rule::Norm: return true;
    case Rule::Conservative:
      return std::any_of(n->inputs().begin(), n->inputs().end(), [](const Value* v) { return isMutableType(v); });
    case Rule::Schema: {
      const FunctionSchema& schema = *n->maybeSchema();
      auto writes = [](const Argument& a) { return a.isOutOrInPlace(); };
      return std::any_of(schema.arguments().begin(), schema.arguments().end(), writes) ||
             std::any_of(schema.returns().begin(), schema.returns().end(), writes);
    }
    default: return false;
  }
}

// Values the database does not know (created after it was built) may alias
// anything of a mutable type.
bool AliasDb::anyMutable(ArrayRef<const Value*> values) const {
  return std::any_of(values.begin(), values.end(), [&](const Value* v) { return state_->isMutable(v); });
}

bool AliasDb::mayAlias(const Value* a, const Value* b) const {
  return mayAlias(ArrayRef<const Value*>(a), ArrayRef<const Value*>(b));
}

bool AliasDb::mayAlias(ArrayRef<const Value*> a, ArrayRef<const Value*> b) const {
  auto ea = state_->elementsOf(a);
  auto eb = state_->elementsOf(b);
  if (!ea || !eb) return anyMutable(a) && anyMutable(b);
  if (ea->empty() || eb->empty()) return false;
  MemoryLocations locations;
  for (const Element* e : *ea) locations |= state_->dag.getMemoryLocations(e);
  return std::any_of(eb->begin(), eb->end(),
                     [&](const Element* e) { return locations.intersects(state_->dag.getMemoryLocations(e)); });
}

bool AliasDb::mayContainAlias(const Value* a, const Value* b) const {
  return mayContainAlias(ArrayRef<const Value*>(a), ArrayRef<const Value*>(b));
}

bool AliasDb::mayContainAlias(ArrayRef<const Value*> a, ArrayRef<const Value*> b) const {
  auto ea = state_->elementsOf(a);
  auto eb = state_->elementsOf(b);
  if (!ea || !eb) return anyMutable(a) && anyMutable(b);
  return state_->dag.mayContainAlias(*ea, *eb);
}

bool AliasDb::writesToAlias(const Node* n, const ValueSet& values) const {
  MemoryLocations writes = state_->getWrites(n);
  if (writes.empty()) return false;
  return std::any_of(values.begin(), values.end(), [&](const Value* v) {
    if (!state_->isMutable(v)) return false;
    const Element* e = state_->elementOf(v);
    return !e || writes.intersects(state_->dag.getMemoryLocations(e));
  });
}

bool AliasDb::hasWriters(const Value* v) const {
  if (nonAliasing(v) || !state_->isMutable(v)) return false;
  const Element* e = state_->elementOf(v);
  return e && state_->written.intersects(state_->dag.getAllContainedMemoryLocations(e));
}

bool AliasDb::hasInputWriters(const Node* n) const {
  return std::any_of(n->inputs().begin(), n->inputs().end(), [&](const Value* v) { return hasWriters(v); });
}
bool AliasDb::hasOutputWriters(const Node* n) const {
  return std::any_of(n->outputs().begin(), n->outputs().end(), [&](const Value* v) { return hasWriters(v); });
}
bool AliasDb::hasWriters(const Node* n) const { return hasInputWriters(n) || hasOutputWriters(n); }

bool AliasDb::isMutable(const Node* n) const { return !state_->getWrites(n).empty(); }

bool AliasDb::writesToWildcard(const Node* n) const {
  return state_->getWrites(n).intersects(state_->wildcard_locations);
}

bool AliasDb::mayAliasWildcard(const Value* v) const {
  if (!state_->isMutable(v)) return false;
  const Element* e = state_->elementOf(v);
  if (!e) return true;
  const Element* w = state_->findWildcard(v->type());
  return w && state_->dag.mayAlias(e, w);
}

bool AliasDb::safeToChangeAliasingRelationship(ArrayRef<const Value*> a, ArrayRef<const Value*> b) const {
  auto written = [&](ArrayRef<const Value*> vs) {
    return std::any_of(vs.begin(), vs.end(), [&](const Value* v) { return hasWriters(v); });
  };
  if (written(a) || written(b)) return false;
  const Graph& g = *graph_;
  auto escapes = [&](ArrayRef<const Value*> vs) {
    return mayContainAlias(g.inputs(), vs) || mayContainAlias(g.outputs(), vs) ||
           std::any_of(vs.begin(), vs.end(), [&](const Value* v) { return mayAliasWildcard(v); });
  };
  return !(escapes(a) && escapes(b));
}

bool AliasDb::moveAfterTopologicallyValid(Node* n, Node* move_point) {
  return state_->tryMove(n, move_point, AliasDbState::MoveSide::After, /*dry_run=*/false);
}
bool AliasDb::moveBeforeTopologicallyValid(Node* n, Node* move_point) {
  return state_->tryMove(n, move_point, AliasDbState::MoveSide::Before, /*dry_run=*/false);
}
bool AliasDb::couldMoveAfterTopologically(Node* n, Node* move_point) {
  return state_->tryMove(n, move_point, AliasDbState::MoveSide::After, /*dry_run=*/true);
}
bool AliasDb::couldMoveBeforeTopologically(Node* n, Node* move_point) {
  return state_->tryMove(n, move_point, AliasDbState::MoveSide::Before, /*dry_run=*/true);
}

void AliasDb::createValue(const Value* v) {
  const AliasTypes& types = state_->aliasTypes(v->type());
  if (types.empty()) return;
  // Nothing reaches the new element yet, so setting what it holds directly
  // leaves every cached answer right. Wildcards made after the analysis
  // would be missing from its writes, so only existing ones are held.
  Element* e = state_->dag.makeFreshElement(v);
  for (const TypePtr& held : types.size() > 1 ? types : heldTypes(*types[0])) {
    if (Element* w = state_->findWildcard(held)) {
      (types.size() > 1 ? e->points_to : e->contained_elements).set(w->index);
    }
  }
  state_->elements[v] = e;
}

void AliasDb::copyValueAliasing(const Value* from, const Value* to) {
  if (!state_->isMutable(to)) return;
  auto it = state_->elements.find(from);
  if (it == state_->elements.end()) return;
  it->second->values.push_back(to);
  state_->elements[to] = it->second;
}

void AliasDb::replaceWithNewValue(const Value* existing, const Value* new_value) {
  auto it = state_->elements.find(existing);
  if (it == state_->elements.end()) return;
  Element* e = it->second;
  state_->elements.erase(it);
  std::replace(e->values.begin(), e->values.end(), existing, new_value);
  state_->elements[new_value] = e;
}

std::string AliasDb::toString() const { return state_->toString(); }

}  // namespace kiln
