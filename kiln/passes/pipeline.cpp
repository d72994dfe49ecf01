#include "kiln/passes/pipeline.h"

#include "kiln/ir/graph.h"
#include "kiln/passes/constant_pooling.h"
#include "kiln/passes/constant_propagation.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/lower_tuples.h"
#include "kiln/util/jit_log.h"

namespace kiln {

void runRequiredPasses(const std::shared_ptr<Graph>& graph) { eliminateDeadCode(graph); }

void runOptimizationPasses(const std::shared_ptr<Graph>& graph) {
  GRAPH_DUMP("before optimization:\n", *graph);
  lowerSimpleTuples(graph);
  constantPooling(graph);

  constantPropagation(graph);

  eliminateDeadCode(graph);
  constantPropagation(graph);
  constantPooling(graph);

  lowerSimpleTuples(graph);
  eliminateDeadCode(graph);
  GRAPH_DUMP("after optimization:\n", *graph);
}

}  // namespace kiln
