#pragma once
// List idioms, as PyTorch 1.13's PeepholeOptimizeListIdioms: on a list made
// by prim::ListConstruct that nothing writes to (AliasDb::hasWriters),
//   - `len(li)` becomes a constant;
//   - `li[i]` with a constant i in range becomes the element;
//   - `prim::ListUnpack(li)` with as many outputs as elements becomes them;
//   - `li + lj` (both constructed, neither written) and `li[a:b:c]` with
//     constant bounds become a new prim::ListConstruct.
// A mismatched unpack, an out-of-range index or a zero step stays, to raise
// when run. Dead code is left for the caller. (1.13's optional refinement of
// lengths through `len(li) == n` conditions is not done.)
// Assumes an SSA graph; keeps its results. Returns whether it changed anything.
#include <memory>

namespace kiln {

class Graph;

bool peepholeOptimizeListIdioms(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
