#include "kiln/ir/rewrite.h"

#include "kiln/ir/graph.h"

namespace kiln {

bool replaceWithCall(Node* n, Symbol kind, std::vector<Value*> inputs) {
  Graph* graph = n->owningGraph();
  Node* call = graph->create(kind, inputs, 0);
  call->insertBefore(n);
  if (!call->maybeOperator()) {
    call->destroy();
    return false;
  }
  for (Value* old : n->outputs()) {
    Value* replacement = call->addOutput()->copyMetadata(old);
    old->replaceAllUsesWith(replacement);
  }
  call->copyMetadata(n);
  n->destroy();
  return true;
}

}  // namespace kiln
