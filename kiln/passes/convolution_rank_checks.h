#pragma once
// Lets frozen convolutions fold with the batch norm after them: a
// scripted BatchNorm checks `input.dim()` before normalizing, which gives
// the convolution's result a second use and stops the fold (1.13's frozen
// graphs do not have the check). A convolution's result has its input's
// rank (batched or not), so `aten::dim(conv(x))` becomes `aten::dim(x)`:
// the same value whenever the convolution runs, computed from its input.
// Run before the frozen-graph folds (frozen_graph_optimizations.h).
#include <memory>

namespace kiln {

class Graph;

// Whether any check moved.
bool checkRankBeforeConvolution(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
