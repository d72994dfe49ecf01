#pragma once
// Batching of matrix multiplies, as PyTorch 1.13's BatchMM (the products an
// unrolled RNN leaves, forward and backward):
//   - tree reduce: a tree of at least 4 `aten::mm` (or `mm(...).t()`) leaves
//     joined by `aten::add`, each inner value used once, becomes one
//     `prim::MMTreeReduce(lhs..., rhs...)` (transposed leaves as
//     `mm(b.t(), a.t())`);
//   - batch side: at least 8 `aten::mm` in one block sharing their left (or
//     right) operand, none depending on another, become one
//     `prim::MMBatchSide[side=0|1](shared, others...)`; they are first moved
//     together (AliasDb::moveBeforeTopologicallyValid).
// Graphs with in-place or out= aten ops are left alone, as in 1.13. Then dead
// code is eliminated and peepholeOptimize (without shape peepholes) removes
// transposes the rewrite made redundant.
// Unlike 1.13, an add with alpha other than 1 does not join a tree, and the
// new operators compute exactly what the products and sums did when their
// operands' shapes or dtypes differ (see kiln/ops/mm_batch_ops.cpp).
// Assumes an SSA graph; keeps its results up to floating-point rounding.
#include <memory>

namespace kiln {

class Graph;

void batchMM(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
