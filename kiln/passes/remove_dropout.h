#pragma once
// Dropout removal, as PyTorch 1.13's removeDropout (run on frozen graphs): a
// dropout whose `train` argument is the constant false is the identity, so
// its uses read its input instead and the node goes. Covers aten::dropout,
// aten::feature_dropout and (beyond 1.13, which leaves them) aten::alpha_dropout
// and aten::feature_alpha_dropout, and their in-place forms: in eval mode
// those return their input unchanged too. Dropouts whose `train` is true or
// not a constant stay. Nested blocks are visited.
// Assumes an SSA graph; keeps its results. Returns whether it removed any.
#include <memory>

namespace kiln {

class Graph;

bool removeDropout(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
