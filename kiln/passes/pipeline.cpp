#include "kiln/passes/pipeline.h"

#include "kiln/ir/graph.h"
#include "kiln/passes/accumulate_products.h"
#include "kiln/passes/analysis/shape_analysis.h"
#include "kiln/passes/batch_loop_matmuls.h"
#include "kiln/passes/batch_mm.h"
#include "kiln/passes/common_subexpression_elimination.h"
#include "kiln/passes/constant_pooling.h"
#include "kiln/passes/constant_propagation.h"
#include "kiln/passes/copy_transposed_loop_weights.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/inliner.h"
#include "kiln/passes/loop_unrolling.h"
#include "kiln/passes/lower_tuples.h"
#include "kiln/passes/peephole.h"
#include "kiln/passes/remove_mutation.h"
#include "kiln/util/jit_log.h"

namespace kiln {

void runRequiredPasses(const std::shared_ptr<Graph>& graph) { eliminateDeadCode(graph); }

void runDerivativePreservingOptimization(const std::shared_ptr<Graph>& graph) {
  GRAPH_DUMP("before optimization:\n", *graph);
  // 0. Calls are inlined first: everything after sees one graph.
  inlineCalls(graph);
  lowerSimpleTuples(graph);
  constantPooling(graph);

  // 1. Inference. Shape propagation reads constants (sizes, dims), so
  //    constants come first.
  constantPropagation(graph);
  propagateShapes(graph);

  // 2. Rewrites that keep the graph differentiable.
  eliminateDeadCode(graph);
  eliminateCommonSubexpression(graph);
  peepholeOptimize(graph);
  constantPropagation(graph);
  constantPooling(graph);
  // Before unrolling: the per-step products are found on the rolled loop.
  batchLoopMatmuls(graph);
  copyTransposedLoopWeights(graph);
  if (unrollLoops(graph, UnrollPolicy::ConstantTripCountsOrTensorBodies)) {
    // The unrolled bodies expose appends to lists built just before and
    // sizes of constant lists.
    removeMutation(graph);
    peepholeOptimize(graph);
    constantPropagation(graph);
    // The copies' counter offsets are new constants inside loop bodies:
    // hoisted, the interpreter does not load them on every iteration.
    constantPooling(graph);
  }
  eliminateCommonSubexpression(graph);
  GRAPH_DUMP("after derivative-preserving optimization:\n", *graph);
}

void runNondiffOptimization(const std::shared_ptr<Graph>& graph) {
  // 3. The rest.
  lowerSimpleTuples(graph);
  batchMM(graph);
  // After batchMM, which leaves graphs with in-place ops alone.
  accumulateProducts(graph);
  eliminateDeadCode(graph);
  GRAPH_DUMP("after optimization:\n", *graph);
}

void runOptimizationPasses(const std::shared_ptr<Graph>& graph) {
  runDerivativePreservingOptimization(graph);
  runNondiffOptimization(graph);
}

}  // namespace kiln
