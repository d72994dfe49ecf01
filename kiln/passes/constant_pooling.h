#pragma once
// Constant pooling, as PyTorch 1.13's ConstantPooling: visits the graph in
// order (nested blocks included); a prim::Constant equal to one seen before
// (same type and value) is replaced by it and destroyed, any other moves to
// the front of the graph, so the survivors end up at the top, the last
// first. Constants of mutable types (tensors, lists) merge only when they
// hold the very same object.
// Assumes an SSA graph; keeps its results.
#include <memory>

namespace kiln {

class Graph;

void constantPooling(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
