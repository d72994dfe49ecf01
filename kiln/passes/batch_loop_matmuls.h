#pragma once
// Batching of a loop's input matrix multiplies across its iterations (the
// "premultiplied" LSTM, one of PyTorch's classic JIT optimizations): the product of
// each time step's input row with a weight that does not change becomes one
// large product before the loop, of which each iteration reads its row.
//
//   %T = aten::size(%X, 0)                   %XW = aten::matmul(%X, %W)
//   prim::Loop(%T, true, ...)          =>    prim::Loop(%T, true, ...)
//     block0(%i, ...):                         block0(%i, ...):
//       %xt = aten::select(%X, 0, %i)            %xtw = aten::select(%XW, 0, %i)
//       %xtw = aten::mm(%xt, %W)                 ...
//
// A 3-d by 2-d aten::matmul folds the steps into the rows of one GEMM
// ([T * B, K] x [K, N]), so a T-step loop does one large product instead of
// T small ones.
//
// The rewrite applies to a for-loop (its conditions are the constant true)
// and an `aten::mm` (or 2-d `aten::matmul`) directly in its body whose left
// operand is `aten::select(%X, 0, %i)`, %i the loop's counter, and:
//   - %X is defined outside the loop, and the trip count is `aten::size(%X,
//     0)`, `aten::len(%X)`, or a constant equal to %X's known first size, so
//     every row the product computes is used (no wasted work);
//   - %W is defined outside the loop, or is `aten::t` of such a value (of
//     rank at most 2, so the transpose cannot raise), which is cloned before
//     the loop;
//   - the refined types prove that the product cannot raise, however many
//     times the loop runs (zero included, where the per-step products would
//     not have run at all): %X is Float or Double of rank 3, %W of the same
//     dtype and rank 2, and %X's last size and %W's first are known and
//     equal. The executor's shape plans give these types; a rank-level plan
//     (sizes unknown) is left alone;
//   - neither %X nor %W requires grad (by its type): the backward of a row
//     selected from the batched product is as large as the product, so
//     T steps would cost T^2;
//   - by AliasDb, nothing in the loop writes to memory %X or %W may share,
//     and nothing writes to the product's result (each iteration's result
//     becomes a row of one tensor instead of a fresh tensor).
//
// Guarantees: the same results up to floating-point summation order (the
// large product may block its sums differently), the same errors (the new
// product cannot raise, and the loop still selects only rows that exist),
// and the same side effects. The old select, product and transpose are
// removed when nothing else uses them.
//
// Assumes an SSA graph with refined types (after propagateShapes); to find
// the pattern it must run before loops are unrolled. Returns whether the
// graph changed.
#include <memory>

namespace kiln {

class Graph;

bool batchLoopMatmuls(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
