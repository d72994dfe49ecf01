#include "kiln/passes/constant_pooling.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/analysis/node_effects.h"

namespace kiln {

namespace {

// A pooled constant, with the IR spelling of its type once it was needed.
struct Pooled {
  Node* node;
  std::optional<std::string> spelling;
};

// Pooled constants by the kind of their type. Within a kind, constants pool
// when their types spell the same in IR; the same type object spells the
// same, so only distinct type objects (tensor types, say) are printed, each
// at most once.
using Pool = std::unordered_map<TypeKind, std::vector<Pooled>>;

const std::string& spelling(Pooled& p) {
  if (!p.spelling) p.spelling = irStr(*p.node->output()->type());
  return *p.spelling;
}

bool sameTypeSpelling(Pooled& a, Pooled& b) {
  return a.node->output()->type() == b.node->output()->type() || spelling(a) == spelling(b);
}

// Function constants of different functions stay apart: the overloads of a
// function (torch.jit._overload) share its name.
bool sameFunction(const Node* a, const Node* b) {
  auto fa = a->output()->type()->cast<FunctionType>();
  auto fb = b->output()->type()->cast<FunctionType>();
  return !fa || !fb || fa->function() == fb->function();
}

// Post-order: the visitor moves or erases the constant it visits.
void poolConstant(Node* n, Pool& pool) {
  if (n->kind() != prim::Constant) return;
  Pooled candidate{n, std::nullopt};
  std::vector<Pooled>& same_kind = pool[n->output()->type()->kind()];
  auto same = std::find_if(same_kind.begin(), same_kind.end(), [&](Pooled& p) {
    return sameTypeSpelling(p, candidate) && sameConstant(p.node->output(), n->output()) && sameFunction(p.node, n);
  });
  if (same != same_kind.end()) {
    // Two equal but distinct mutable objects may be written separately.
    if (isMutableType(n->output()) && !toIValue(n->output())->is(*toIValue(same->node->output()))) return;
    n->output()->replaceAllUsesWith(same->node->output());
    n->destroy();
    return;
  }
  same_kind.push_back(std::move(candidate));
  Node* front = n->owningGraph()->block()->nodes().front();
  if (n != front) n->moveBefore(front);
}

}  // namespace

void constantPooling(const std::shared_ptr<Graph>& graph) {
  Pool pool;
  walkNodes(*graph, WalkOrder::PostOrder, [&](Node* n) { poolConstant(n, pool); });
}

}  // namespace kiln
