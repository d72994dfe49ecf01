#include "kiln/passes/constant_pooling.h"

#include <algorithm>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/analysis/node_effects.h"

namespace kiln {

namespace {

// Pooled constants by the IR spelling of their type.
using Pool = std::unordered_map<std::string, std::vector<Node*>>;

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
  std::vector<Node*>& same_type = pool[irStr(*n->output()->type())];
  auto same = std::find_if(same_type.begin(), same_type.end(),
                           [&](const Node* p) { return sameConstant(p->output(), n->output()) && sameFunction(p, n); });
  if (same != same_type.end()) {
    // Two equal but distinct mutable objects may be written separately.
    if (isMutableType(n->output()) && !toIValue(n->output())->is(*toIValue((*same)->output()))) return;
    n->output()->replaceAllUsesWith((*same)->output());
    n->destroy();
    return;
  }
  same_type.push_back(n);
  Node* front = n->owningGraph()->block()->nodes().front();
  if (n != front) n->moveBefore(front);
}

}  // namespace

void constantPooling(const std::shared_ptr<Graph>& graph) {
  Pool pool;
  walkNodes(*graph, WalkOrder::PostOrder, [&](Node* n) { poolConstant(n, pool); });
}

}  // namespace kiln
