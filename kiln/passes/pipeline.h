#pragma once
// The graph executor's pass pipeline (PyTorch 1.13's
// legacy GraphExecutorImpl::compileSpec), run on a copy of a function's
// graph whose input types the executor has specialized to the arguments.
//
// Required passes bring any graph to a form the interpreter runs; they also
// run with optimization off. The optimization passes, in 1.13's order:
//   0. inline every call, lower simple tuples, pool constants;
//   1. inference: propagate constants, then shapes and types from the
//      specialized inputs through every op;
//   2. derivative-preserving rewrites: dead code, common subexpressions,
//      peephole (answers shape queries from the refined types), constants
//      again, constant pooling, batching of a loop's input products and
//      copies of its transposed weights, loop unrolling (and when it
//      unrolled, list mutation removal, peephole and constants once more),
//      common subexpressions again;
//   3. runNondiffOptimization, the rest (what has no derivative, run on
//      plans that need no gradient and inside DifferentiableGraphs): lower
//      tuples, batch matrix multiplies, sums of products accumulated in
//      place, dead code.
// Each pass keeps the graph's results; together they leave no calls, no dead
// code, no duplicate subexpressions and no branches on constants.
#include <memory>

namespace kiln {

class Graph;

void runRequiredPasses(const std::shared_ptr<Graph>& graph);
// Steps 0 to 3.
void runOptimizationPasses(const std::shared_ptr<Graph>& graph);
// Steps 0 to 2 (what the executor runs before differentiation).
void runDerivativePreservingOptimization(const std::shared_ptr<Graph>& graph);
// Step 3.
void runNondiffOptimization(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
