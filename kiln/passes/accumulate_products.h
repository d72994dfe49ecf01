#pragma once
// Sums of matrix products accumulate in place: where `aten::add(%p, %q, 1)`
// adds the result %q of `aten::mm(%c, %d)` to %p, the result of another
// `aten::mm` (or of an earlier rewrite), and nothing else reads %p or %q,
//
//   %p = aten::mm(%a, %b)                 %p = aten::mm(%a, %b)
//   %q = aten::mm(%c, %d)         =>      %s = aten::addmm_(%p, %c, %d)
//   %s = aten::add(%p, %q, 1)
//
// The second product is added into the first's memory by the GEMM itself
// (beta 1), instead of filling a new tensor that the sum then reads: an LSTM
// cell's `mm(x, w_ih.t()) + mm(hx, w_hh.t())`. Longer sums chain.
//
// Applies when the refined types show two 2-d Float or Double tensors of
// the same dtype and known, equal sizes for %p and %q, with %c and %d of
// known sizes that fit (so no product can raise), the add's alpha the
// constant 1, and both products in the add's block (one from outside a loop
// would be added to on every iteration). %p is a product's fresh
// (contiguous) result that only the add reads, so writing it changes nothing
// else.
// Guarantees: the same results up to floating-point summation order (the
// GEMM adds its partial sums to %p's values), the same errors (none) and
// side effects. Runs after batchMM, which leaves graphs with in-place ops
// alone. Returns whether the graph changed.
#include <memory>

namespace kiln {

class Graph;

bool accumulateProducts(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
