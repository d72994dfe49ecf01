#pragma once
// Dead code elimination, as PyTorch 1.13's EliminateDeadCode: a node stays
// when a graph output depends on it, when it has side effects (prints,
// raises, warnings, calls, attribute writes, fork/wait, with-blocks, writes
// to memory the graph does not own) or contains such a node, or when it
// writes to memory that a live value may alias. Unused prim::If outputs and
// unused loop-carried values (unused after the loop and inside the body)
// are removed with their block outputs.
// Aliasing and writes come from AliasDb (alias_analysis.h), built only when
// the graph has a node that may write.
// Assumes an SSA graph.
#include <memory>

namespace kiln {

class Graph;

void eliminateDeadCode(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
