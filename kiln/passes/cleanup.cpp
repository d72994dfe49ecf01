#include "kiln/passes/cleanup.h"

#include <atomic>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/canonicalize_outputs.h"
#include "kiln/passes/constant_pooling.h"
#include "kiln/passes/constant_propagation.h"
#include "kiln/passes/lower_tuples.h"
#include "kiln/passes/normalize_ops.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

// Numbers every aten::warn in program order with a process-wide id, so
// the runtime can warn once per call site as Python does.
void annotateWarns(Block* block) {
  static std::atomic<int64_t> next_id{0};
  walkNodes(block, WalkOrder::PreOrder, [](Node* n) {
    if (n->kind() == aten::warn) n->i_(Symbol::attr("warn_id"), next_id++);
  });
}

}  // namespace

void runCleanupPasses(const std::shared_ptr<Graph>& graph) {
  GRAPH_DUMP("before the cleanup passes:\n", *graph);
  normalizeOps(graph);
  lowerSimpleTuples(graph);
  // Only immutable types: folding lists or tensors would need the full
  // alias picture, and folding them later could change the graph again.
  constantPropagationImmutableTypes(graph);
  constantPooling(graph);
  canonicalizeOutputs(graph);
  annotateWarns(graph->block());
  GRAPH_DUMP("after the cleanup passes:\n", *graph);
}

}  // namespace kiln
