// PLACEHOLDER: a conservative AliasDb over the coarse AliasClasses, so that
// passes can be written against alias_analysis.h while the memory-DAG
// version is built. It never claims two values are apart when they may not
// be, and never moves a node. To be replaced by the memory DAG.
#include "kiln/passes/analysis/alias_analysis.h"

#include <algorithm>
#include <sstream>

#include "kiln/passes/analysis/node_effects.h"

namespace kiln {

struct AliasDbState {
  explicit AliasDbState(Graph& graph) : classes(graph) {}
  AliasClasses classes;
};

AliasDb::AliasDb(std::shared_ptr<Graph> graph)
    : graph_(std::move(graph)), state_(std::make_unique<AliasDbState>(*graph_)) {}
AliasDb::~AliasDb() = default;

bool AliasDb::isMutableType(const Value* v) { return kiln::isMutableType(v); }

bool AliasDb::mayAlias(const Value* a, const Value* b) const {
  if (!isMutableType(a) || !isMutableType(b)) return false;
  const AliasClasses& c = state_->classes;
  return c.classOf(a) == c.classOf(b) || (c.isWildcard(a) && c.isWildcard(b));
}

bool AliasDb::mayAlias(ArrayRef<const Value*> a, ArrayRef<const Value*> b) const {
  for (const Value* x : a) {
    for (const Value* y : b) {
      if (mayAlias(x, y)) return true;
    }
  }
  return false;
}

bool AliasDb::mayContainAlias(const Value* a, const Value* b) const { return mayAlias(a, b); }
bool AliasDb::mayContainAlias(ArrayRef<const Value*> a, ArrayRef<const Value*> b) const { return mayAlias(a, b); }

namespace {

template <typename Fn>
bool anyNode(const Node* n, const Fn& fn) {
  if (fn(n)) return true;
  for (const Block* b : n->blocks()) {
    for (const Node* inner : b->nodes()) {
      if (anyNode(inner, fn)) return true;
    }
  }
  return false;
}

}  // namespace

bool AliasDb::writesToAlias(const Node* n, const ValueSet& values) const {
  return anyNode(n, [&](const Node* m) {
    if (hasSideEffects(m)) return true;
    for (const Value* w : state_->classes.writtenInputs(m)) {
      for (const Value* v : values) {
        if (mayAlias(w, v)) return true;
      }
    }
    return false;
  });
}

bool AliasDb::hasWriters(const Value* v) const {
  return isMutableType(v) && (state_->classes.hasWriters(v) || state_->classes.isWildcard(v));
}

bool AliasDb::hasInputWriters(const Node* n) const {
  return std::any_of(n->inputs().begin(), n->inputs().end(), [&](const Value* v) { return hasWriters(v); });
}
bool AliasDb::hasOutputWriters(const Node* n) const {
  return std::any_of(n->outputs().begin(), n->outputs().end(), [&](const Value* v) { return hasWriters(v); });
}
bool AliasDb::hasWriters(const Node* n) const { return hasInputWriters(n) || hasOutputWriters(n); }

bool AliasDb::isMutable(const Node* n) const {
  return anyNode(n, [&](const Node* m) { return !state_->classes.writtenInputs(m).empty() || hasSideEffects(m); });
}

bool AliasDb::writesToWildcard(const Node* n) const {
  return anyNode(n, [&](const Node* m) {
    if (hasSideEffects(m)) return true;
    auto written = state_->classes.writtenInputs(m);
    return std::any_of(written.begin(), written.end(), [&](const Value* v) { return state_->classes.isWildcard(v); });
  });
}

bool AliasDb::mayAliasWildcard(const Value* v) const { return state_->classes.isWildcard(v); }

bool AliasDb::moveAfterTopologicallyValid(Node*, Node*) { return false; }
bool AliasDb::moveBeforeTopologicallyValid(Node*, Node*) { return false; }
bool AliasDb::couldMoveAfterTopologically(Node*, Node*) { return false; }
bool AliasDb::couldMoveBeforeTopologically(Node*, Node*) { return false; }

void AliasDb::createValue(const Value*) {}
void AliasDb::copyValueAliasing(const Value*, const Value*) {}
void AliasDb::replaceWithNewValue(const Value*, const Value*) {}

std::string AliasDb::toString() const { return "AliasDb (placeholder)\n"; }

}  // namespace kiln
