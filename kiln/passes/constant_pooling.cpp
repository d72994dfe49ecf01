#include "kiln/passes/constant_pooling.h"

#include <algorithm>

#include "kiln/ir/graph.h"
#include "kiln/passes/analysis/node_effects.h"

namespace kiln {

namespace {

// Pooled constants by the IR spelling of their type.
using Pool = std::unordered_map<std::string, std::vector<Node*>>;

void poolConstants(Block* block, Pool& pool) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* n = *it;
    ++it;  // n may move or die
    if (!n->blocks().empty()) {
      for (Block* b : n->blocks()) poolConstants(b, pool);
      continue;
    }
    if (n->kind() != prim::Constant) continue;
    std::vector<Node*>& same_type = pool[irStr(*n->output()->type())];
    auto same = std::find_if(same_type.begin(), same_type.end(),
                             [&](const Node* p) { return sameConstant(p->output(), n->output()); });
    if (same != same_type.end()) {
      // Two equal but distinct mutable objects may be written separately.
      if (isMutableType(n->output()) && !toIValue(n->output())->is(*toIValue((*same)->output()))) continue;
      n->output()->replaceAllUsesWith((*same)->output());
      n->destroy();
      continue;
    }
    same_type.push_back(n);
    Node* front = n->owningGraph()->block()->nodes().front();
    if (n != front) n->moveBefore(front);
  }
}

}  // namespace

void constantPooling(const std::shared_ptr<Graph>& graph) {
  Pool pool;
  poolConstants(graph->block(), pool);
}

}  // namespace kiln
