#pragma once
// The optimizations for frozen graphs (kiln::freeze), as PyTorch 1.13's
// OptimizeFrozenGraph (torch.jit.run_frozen_optimizations): dropout removal
// (remove_dropout.h), then, when `optimize_numerics` allows results to
// change by rounding, convolution + batch norm, + add/sub and + mul/div
// folding and (beyond 1.13) linear + batch norm folding, repeated until
// none applies, so conv -> mul -> add chains fold completely. (1.13 also
// tries to concatenate linears that share an input, which needs complete
// tensor types a frozen graph does not have; kiln leaves that out.)
// Assumes an SSA graph whose weights are constants; keeps its results (up
// to rounding with `optimize_numerics`).
#include <memory>

namespace kiln {

class Graph;

void optimizeFrozenGraph(const std::shared_ptr<Graph>& graph, bool optimize_numerics = true);

}  // namespace kiln
