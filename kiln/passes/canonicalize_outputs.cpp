#include "kiln/passes/canonicalize_outputs.h"

#include <algorithm>
#include <numeric>

#include "kiln/ir/graph.h"

namespace kiln {

namespace {

size_t depth(const Node* n) {
  size_t d = 0;
  for (const Block* b = n->owningBlock(); b && b->owningNode(); b = b->owningNode()->owningBlock()) ++d;
  return d;
}

size_t blockIndex(const Block* b) {
  auto blocks = b->owningNode()->blocks();
  return static_cast<size_t>(std::find(blocks.begin(), blocks.end(), b) - blocks.begin());
}

// Program order of two distinct nodes, where a node nested in another
// counts as after it and blocks of one node are ordered by index.
bool runsBefore(const Node* a, const Node* b) {
  size_t da = depth(a);
  size_t db = depth(b);
  for (; da > db; --da) {
    a = a->owningBlock()->owningNode();
    if (a == b) return false;
  }
  for (; db > da; --db) {
    b = b->owningBlock()->owningNode();
    if (b == a) return true;
  }
  while (a->owningBlock() != b->owningBlock()) {
    const Node* outer_a = a->owningBlock()->owningNode();
    const Node* outer_b = b->owningBlock()->owningNode();
    if (outer_a == outer_b) return blockIndex(a->owningBlock()) < blockIndex(b->owningBlock());
    a = outer_a;
    b = outer_b;
  }
  return a->isBefore(b);
}

bool useBefore(const Use& a, const Use& b) {
  if (a.user == b.user) return a.offset < b.offset;
  return runsBefore(a.user, b.user);
}

std::optional<Use> firstUse(const Value* v) {
  if (v->uses().empty()) return std::nullopt;
  Use first = v->uses()[0];
  for (const Use& u : v->uses()) {
    if (useBefore(u, first)) first = u;
  }
  return first;
}

// The new order of `values`: by first use, unused ones last in old order.
std::vector<size_t> orderByFirstUse(ArrayRef<Value*> values) {
  std::vector<std::optional<Use>> first;
  for (const Value* v : values) first.push_back(firstUse(v));
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) {
    if (!first[i] || !first[j]) return first[i].has_value() && !first[j].has_value();
    return useBefore(*first[i], *first[j]);
  });
  return order;
}

// `permutation` applied to the entries from `offset` on, the rest in place.
std::vector<size_t> shifted(const std::vector<size_t>& permutation, size_t offset) {
  std::vector<size_t> out(offset);
  std::iota(out.begin(), out.end(), 0);
  for (size_t p : permutation) out.push_back(p + offset);
  return out;
}

// Reorders the outputs of `n`: new output i takes the place (uses, type,
// name) of old output order[i].
void permuteOutputs(Node* n, const std::vector<size_t>& order) {
  size_t count = n->outputs().size();
  for (size_t p : order) {
    Value* old = n->output(p);
    Value* moved = n->addOutput()->setType(old->type());
    old->replaceAllUsesWith(moved);
    if (old->hasDebugName()) {
      std::string name = old->debugName();
      old->setDebugName("");
      moved->setDebugName(name);
    }
  }
  for (size_t i = count; i-- > 0;) n->eraseOutput(i);
}

bool isIdentity(const std::vector<size_t>& order) {
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] != i) return false;
  }
  return true;
}

void canonicalize(Block* block) {
  // Backwards: a node's output order depends on the uses after it.
  for (Node* n : block->nodes().reverse()) {
    if (n->kind() == prim::If || n->kind() == prim::Loop) {
      auto order = orderByFirstUse(n->outputs());
      if (!isIdentity(order)) {
        permuteOutputs(n, order);
        if (n->kind() == prim::If) {
          for (Block* b : n->blocks()) b->permuteOutputs(order);
        } else {
          Block* body = n->blocks()[0];
          n->permuteInputs(shifted(order, 2));
          permuteOutputs(body->paramNode(), shifted(order, 1));
          body->permuteOutputs(shifted(order, 1));
        }
      }
    }
    for (Block* b : n->blocks()) canonicalize(b);
  }
}

}  // namespace

void canonicalizeOutputs(const std::shared_ptr<Graph>& graph) { canonicalize(graph->block()); }

}  // namespace kiln
