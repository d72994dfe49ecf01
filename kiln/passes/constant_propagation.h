#pragma once
// Constant propagation, as PyTorch 1.13's: runs every node whose inputs are
// all constants and replaces its outputs with prim::Constant nodes, inlines
// the taken block of a prim::If with a constant condition, deletes loops
// that never run (constant trip count <= 0 or constant false condition),
// drops prim::If outputs that both blocks define alike and loop-carried
// values the body passes through unchanged, then eliminates dead code.
//
// Never folded: nodes with side effects or blocks, random ops, calls,
// prim::Constant/Uninitialized/profile nodes, vararg schemas, and any node
// that raises when run (it stays, to raise at run time). Results that
// cannot be constants (objects, futures, tensors that require grad) leave
// the node in place.
//
// Assumes an SSA graph; keeps its results.
#include <memory>

namespace kiln {

class Graph;

// Folds only nodes whose inputs and outputs are all of immutable types
// (None, bool, int, float, str, Device, tuples of those): what PyTorch runs
// on every freshly compiled function.
void constantPropagationImmutableTypes(const std::shared_ptr<Graph>& graph);

// Also folds nodes producing or taking tensors, lists and dicts, provided
// nothing in the graph writes to their inputs or outputs (AliasDb::hasWriters)
// and no output may leave the graph (alias a graph output or the wildcard
// set; 1.13 folds those too, handing every run the same object).
void constantPropagation(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
