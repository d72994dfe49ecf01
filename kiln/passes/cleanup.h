#pragma once
// The passes TorchScript 1.13 runs on every freshly compiled function
// (`runCleanupPasses`), so that `fn.graph` matches 1.13's node for node:
// normalize op aliases, lower simple tuples, constant propagation on
// immutable types (with dead code elimination), constant pooling.
// Assumes an SSA graph (after convertToSSA); keeps its semantics.
#include <memory>

namespace kiln {

class Graph;

void runCleanupPasses(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
