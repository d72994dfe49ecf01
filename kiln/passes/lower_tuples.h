#pragma once
// Lowers simple tuples, as PyTorch 1.13's LowerSimpleTuples: a
// prim::TupleUnpack, prim::TupleIndex (constant index in range) or
// prim::TupleSlice whose tuple comes straight from a prim::TupleConstruct
// is replaced by the construct's inputs (a slice by a new, smaller
// construct), then dead code is eliminated. Tuples built elsewhere (graph
// inputs, calls, control flow) are left alone.
// Assumes an SSA graph; keeps its results.
#include <memory>

namespace kiln {

class Graph;

void lowerSimpleTuples(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
