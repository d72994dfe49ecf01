#include "kiln/passes/normalize_ops.h"

#include <unordered_map>

#include "kiln/core/op_description.h"
#include "kiln/core/operator.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/rewrite.h"

namespace kiln {

namespace {

bool normalize(Node* n) {
  if (!n->maybeSchema()) return false;
  const OpDescription& description = n->maybeOperator()->description();
  if (description.alias_of.isValid()) return replaceWithCall(n, description.alias_of, n->inputs().vec());
  return description.normalize && description.normalize(n);
}

void normalizeOps(Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* n = *it;
    ++it;  // n may be replaced
    for (Block* b : n->blocks()) normalizeOps(b);
    normalize(n);
  }
}

}  // namespace

void normalizeOps(const std::shared_ptr<Graph>& graph) { normalizeOps(graph->block()); }

}  // namespace kiln
