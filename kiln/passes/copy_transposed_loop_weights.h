#pragma once
// Copies of a loop's transposed weights, for the products left in a loop's
// body with a weight from outside it (the hidden-to-hidden product of an
// LSTM, after batch_loop_matmuls.h took the input one): where the right
// operand of an `aten::mm` or `aten::matmul` is `aten::t(%W)` of a 2-d Float
// or Double %W defined outside the loop (the transpose inside the loop or
// before it), the product reads `aten::contiguous(aten::t(%W))` made once
// before the loop.
// BLAS packs a transposed operand more slowly: a 64 x 512 by 512 x 2048
// product takes about 10% less time on the copy, which costs one pass over
// the weight.
//
//   prim::Loop(%T, %c, %h0)                  %Wc = aten::contiguous(aten::t(%W))
//     block0(%i, %h):                 =>     prim::Loop(%T, %c, %h0)
//       %hw = aten::mm(%h, aten::t(%W))        block0(%i, %h):
//                                                %hw = aten::mm(%h, %Wc)
//
// Applies to every loop that may run more than once (not to a constant trip
// count of 0 or 1), when by AliasDb nothing in the loop writes to memory %W
// may share. One copy serves all the loop's products with the same %W.
// Guarantees: the same results (a BLAS product sums in the same order
// whatever the operands' layout), errors and side effects; the copy cannot
// raise. Assumes refined types (after propagateShapes). Returns whether the
// graph changed.
#include <memory>

namespace kiln {

class Graph;

bool copyTransposedLoopWeights(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
