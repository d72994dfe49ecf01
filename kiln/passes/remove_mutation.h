#pragma once
// Mutation removal, as PyTorch 1.13's RemoveListMutation followed by
// RemoveTensorMutation: a write to a value that nothing else can observe
// becomes a pure computation.
//   - lists: `li.append(v)` and `li.insert(i, v)` (constant i) on a list made
//     by prim::ListConstruct become a bigger prim::ListConstruct;
//   - tensors (and lists): an aten in-place op `x.f_(args)` whose schema
//     writes only its first argument and returns it, for which `aten::f`
//     exists, becomes `y = aten::f(x, args)`, later uses of x reading y;
//     `x.fill_(v)` becomes `full_like(x, v)` and `x.zero_()` `zeros_like(x)`.
// The mutated value must be fresh: made by a node without blocks or side
// effects whose inputs it cannot alias (AliasDb::mayContainAlias), not a
// graph input, or an if output that is fresh in both branches; and nothing
// may use it before the mutation (1.13 refuses the same through
// AliasDb::moveBeforeTopologicallyValid, which also moves the value's node
// next to the mutation where it can).
// Beyond 1.13, a tensor op is only replaced when the pure op provably gives
// a tensor of x's dtype and shape (the in-place op casts into x, the pure op
// promotes and broadcasts): x's dtype must be known and equal to the dtype
// the pure op's shape rule gives (so `eq_` on a float x, whose pure form
// gives bool, stays), other tensors' dtypes and shapes known to fit, and
// scalars of no higher kind than x. Ops whose pure form returns a view of x
// (`t_`, `squeeze_`: its schema says `Tensor(a) self -> Tensor(a)`) and
// fill_/zero_ need no types.
// Assumes an SSA graph; keeps its results. Returns whether it changed anything.
#include <memory>

namespace kiln {

class Graph;

bool removeMutation(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
