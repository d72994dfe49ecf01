#include "kiln/passes/pipeline.h"

#include "kiln/ir/graph.h"
#include "kiln/passes/constant_pooling.h"
#include "kiln/passes/constant_propagation.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/inliner.h"
#include "kiln/passes/loop_unrolling.h"
#include "kiln/passes/lower_tuples.h"
#include "kiln/util/jit_log.h"

namespace kiln {

void runRequiredPasses(const std::shared_ptr<Graph>& graph) { eliminateDeadCode(graph); }

void runOptimizationPasses(const std::shared_ptr<Graph>& graph) {
  GRAPH_DUMP("before optimization:\n", *graph);
  // 0. Calls are inlined first: everything after sees one graph.
  inlineCalls(graph);
  lowerSimpleTuples(graph);
  constantPooling(graph);

  // 1. Inference. Shape propagation reads constants (sizes, dims), so
  //    constants come first.
  constantPropagation(graph);

  // 2. Rewrites that keep the graph differentiable.
  eliminateDeadCode(graph);
  constantPropagation(graph);
  constantPooling(graph);
  if (unrollLoops(graph)) {
    constantPropagation(graph);
  }

  // 3. The rest.
  lowerSimpleTuples(graph);
  eliminateDeadCode(graph);
  GRAPH_DUMP("after optimization:\n", *graph);
}

}  // namespace kiln
