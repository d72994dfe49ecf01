#pragma once
// Peephole optimization, as PyTorch 1.13's PeepholeOptimize: small local
// rewrites, then dead code elimination when anything changed.
//   - tensors: `x.t().t()` -> x; `x.expand(sizes of x)`, `x.type_as(y)` of
//     the same dtype and device -> x; `_grad_sum_to_size(x, None)` -> x;
//     `Int`/`Float`/`...Implicit` of `NumToTensor(n)` -> n when n already
//     has the result's type;
//   - shape peepholes, from refined TensorTypes: `x.dim()`, `x.dtype`,
//     `x.device`, `x.is_cuda`, `x.is_floating_point()`, `x.is_complex()`,
//     `x.size(i)`, `len(x.size())`, and `x.size()` (as a fresh
//     prim::ListConstruct of constants, so no run ever sees another's list);
//   - list idioms (peephole_list_idioms.h), dict idioms (`len` and
//     `__getitem__` of a prim::DictConstruct with constant keys, never
//     written), ints, bools and None (`i + 0`, `i * 1`, `(i + 2) - 1` ->
//     `i + 1`, `x is None` where x cannot be None, `a == a` on ints and bools,
//     `int(i)`, unwrapping or casting what already has the type, `if`
//     outputs equal to the condition), alias-sensitive rewrites (`x + 0`,
//     `x - 0`, `x * 1`, `x / 1` on tensors where the result is provably the
//     same tensor type, `dim(conv2d(...))`) and nested concatenations.
// Beyond 1.13, it turns `aten::chunk` whose list is only unpacked or indexed
// by constants into `prim::ConstantChunk` (1.13 does this when fusing), forwards
// tuple construct/unpack pairs (lower_tuples.h), and folds `None is None`.
// It leaves alone what 1.13 rewrites wrongly: `x + 0` on bool tensors or
// tensors of unknown dtype (a bool tensor plus 0 is int64), `t(t(x))` when x
// may have more than two dimensions (t raises), `i / 1` (a float), `f == f`
// on floats (NaN), `x is None` and unwrapping for `Any`,
// `Int(NumToTensor(2.5))`, `dim(conv2d(x))` of an unbatched x, and nested
// concatenations whose inner elements are written between the two.
//
// `disable_shape_peepholes` skips every rewrite that trusts tensor
// refinements (for graphs whose refinements may be stale).
// Assumes an SSA graph; keeps its results. Returns whether it changed anything.
#include <memory>

namespace kiln {

class Graph;

bool peepholeOptimize(const std::shared_ptr<Graph>& graph, bool disable_shape_peepholes = false);

}  // namespace kiln
