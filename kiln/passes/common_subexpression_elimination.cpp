#include "kiln/passes/common_subexpression_elimination.h"

#include <bit>
#include <cmath>
#include <unordered_set>

#include "kiln/ir/graph.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/analysis/node_effects.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

size_t combine(size_t seed, size_t value) { return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); }

// Hashes what EqualNode compares (a constant's value only where cheap).
struct HashNode {
  size_t operator()(const Node* n) const {
    size_t h = std::hash<Symbol>()(n->kind());
    for (const Value* out : n->outputs()) h = combine(h, static_cast<size_t>(out->type()->kind()));
    for (const Value* in : n->inputs()) h = combine(h, std::hash<const Value*>()(in));
    if (n->kind() == prim::Constant) {
      if (auto v = toIValue(n->output())) {
        if (v->isInt() || v->isBool()) h = combine(h, std::hash<int64_t>()(v->isInt() ? v->toInt() : v->toBool()));
        if (v->isDouble()) h = combine(h, std::bit_cast<uint64_t>(v->toDouble()));
        if (v->isString()) h = combine(h, std::hash<std::string>()(v->toStringRef()));
      }
    }
    return h;
  }
};

// Attributes of non-constant nodes (chunk counts, attribute names, types).
// Tensors and IValues are equal only when they are the same object, graphs
// never (as 1.13 for graphs; it compares tensors by value).
bool sameAttributes(const Node* a, const Node* b) {
  if (a->numAttributes() != b->numAttributes()) return false;
  for (Symbol name : a->attributeNames()) {
    if (!b->hasAttribute(name) || a->kindOf(name) != b->kindOf(name)) return false;
    bool same = false;
    switch (a->kindOf(name)) {
      case AttributeKind::f:
        same = a->f(name) == b->f(name) && std::signbit(a->f(name)) == std::signbit(b->f(name));
        break;
      case AttributeKind::fs: same = a->fs(name) == b->fs(name); break;
      case AttributeKind::i: same = a->i(name) == b->i(name); break;
      case AttributeKind::is: same = a->is(name) == b->is(name); break;
      case AttributeKind::s: same = a->s(name) == b->s(name); break;
      case AttributeKind::ss: same = a->ss(name) == b->ss(name); break;
      case AttributeKind::t: same = a->t(name).isSame(b->t(name)); break;
      case AttributeKind::ts:
        same = std::equal(a->ts(name).begin(), a->ts(name).end(), b->ts(name).begin(), b->ts(name).end(),
                          [](const Tensor& x, const Tensor& y) { return x.isSame(y); });
        break;
      case AttributeKind::ty: same = *a->ty(name) == *b->ty(name); break;
      case AttributeKind::tys:
        same = std::equal(a->tys(name).begin(), a->tys(name).end(), b->tys(name).begin(), b->tys(name).end(),
                          [](const TypePtr& x, const TypePtr& y) { return *x == *y; });
        break;
      case AttributeKind::ival: same = a->ival(name).is(b->ival(name)); break;
      case AttributeKind::g:
      case AttributeKind::gs: same = false; break;
    }
    if (!same) return false;
  }
  return true;
}

struct EqualNode {
  bool operator()(const Node* a, const Node* b) const {
    if (a->kind() != b->kind()) return false;
    if (a->kind() == prim::Constant) return sameConstant(a->output(), b->output());
    if (a->outputs().size() != b->outputs().size() || a->inputs() != b->inputs()) return false;
    for (size_t i = 0; i < a->outputs().size(); ++i) {
      if (*a->output(i)->type() != *b->output(i)->type()) return false;
    }
    return sameAttributes(a, b);
  }
};

class CommonSubexpressionEliminator {
 public:
  explicit CommonSubexpressionEliminator(std::shared_ptr<Graph> graph) : graph_(std::move(graph)) {}

  bool run() { return run(graph_->block(), nullptr); }

 private:
  // The nodes seen so far in a block; a nested block also sees its
  // enclosing blocks' (those before the node holding it).
  struct Scope {
    std::unordered_set<Node*, HashNode, EqualNode> nodes;
    const Scope* parent;
  };

  static Node* findInEnclosing(const Scope* scope, Node* n) {
    for (; scope; scope = scope->parent) {
      if (auto it = scope->nodes.find(n); it != scope->nodes.end()) return *it;
    }
    return nullptr;
  }

  bool run(Block* block, const Scope* parent) {
    Scope scope{{}, parent};
    bool changed = false;
    for (auto it = block->nodes().begin(); it != block->nodes().end(); ++it) {
      Node* n = *it;
      if (n->kind() == prim::profile) {
        GRAPH_DEBUG("profiled nodes are deduplicated by their own pass: ", *n);
        continue;
      }
      if (hasSideEffects(n)) {
        GRAPH_DEBUG("skipped for its side effects: ", *n);
        continue;
      }
      if (isNondeterministic(n)) {
        GRAPH_DEBUG("skipped as nondeterministic: ", *n);
        continue;
      }
      if (!n->blocks().empty()) {
        for (Block* b : n->blocks()) changed |= run(b, &scope);
        continue;
      }
      if (aliasDb().hasWriters(n)) {
        GRAPH_DEBUG("skipped: something writes to its inputs or outputs: ", *n);
        continue;
      }
      if (Node* outer = findInEnclosing(parent, n)) {
        if (!aliasDb().safeToChangeAliasingRelationship(n->outputs(), outer->outputs())) {
          GRAPH_DEBUG("skipped: merging with an outer node would make escaping values alias: ", *n);
          continue;
        }
        replace(n, outer);
        it.destroyCurrent();
        changed = true;
        continue;
      }
      auto [existing, inserted] = scope.nodes.insert(n);
      if (inserted) continue;
      const Graph& g = *graph_;
      if (aliasDb().mayContainAlias(n->outputs(), g.outputs()) &&
          aliasDb().mayContainAlias((*existing)->outputs(), g.outputs())) {
        GRAPH_DEBUG("skipped: two graph outputs would share memory: ", *n);
        continue;
      }
      replace(n, *existing);
      it.destroyCurrent();
      changed = true;
    }
    return changed;
  }

  static void replace(Node* n, Node* existing) {
    GRAPH_UPDATE("replacing\n", *n, "with\n", *existing);
    n->replaceAllUsesWith(existing);
  }

  // Built when the first candidate is met.
  AliasDb& aliasDb() {
    if (!alias_db_) alias_db_ = std::make_unique<AliasDb>(graph_);
    return *alias_db_;
  }

  std::shared_ptr<Graph> graph_;
  std::unique_ptr<AliasDb> alias_db_;
};

}  // namespace

bool eliminateCommonSubexpression(const std::shared_ptr<Graph>& graph) {
  GRAPH_DUMP("before common subexpression elimination:\n", *graph);
  bool changed = CommonSubexpressionEliminator(graph).run();
  GRAPH_DUMP("after common subexpression elimination:\n", *graph);
  return changed;
}

}  // namespace kiln
