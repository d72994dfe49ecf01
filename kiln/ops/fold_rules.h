#pragma once
// Fold rules: the algebraic simplifications an operator declares with
// `.fold(rule)` (kiln/core/op_description.h), which the peephole passes
// apply. Each rule is exact: it folds only where the result is the same
// value, of the same type, whatever the inputs hold at run time (no
// `f + 0.0` on floats, which is not -0.0 for -0.0; no `i / 1`, a float).
#include "kiln/core/op_description.h"

namespace kiln::folds {

// Whether `n`'s operator declares a fold and `n` gives one value, a tensor
// or not as `tensor_result` says: the peephole stages take one kind each.
bool hasFold(const Node* n, bool tensor_result);
// What `n` folds to (empty where hasFold is false for both kinds).
FoldResult foldNode(Node* n);

// The rules.

// `i + 0`, `0 + i`, `i - 0` on ints, and `(i + a) - b` into `i + (a - b)`;
// `x + 0`, `x - 0` (alpha 1) on a tensor whose dtype a number keeps.
FoldResult addOrSubZero(Node* n);
// `i * 1`, `1 * i`; `x * 1` on a tensor whose dtype a number keeps.
FoldResult mulByOne(Node* n);
// `i // 1`.
FoldResult floorDivByOne(Node* n);
// `x / 1` on a floating tensor (true division makes integers float).
FoldResult divByOne(Node* n);
// `a == a` and `a != a` where equality is reflexive and never raises (ints,
// bools, None and lists of them; not floats, where NaN != NaN).
FoldResult equalToItself(Node* n);
// `int(i)`, `ceil(i)`, `float(f)`, `bool(b)`: the input is already the result.
FoldResult conversionToOwnType(Node* n);
// `x.type_as(y)` where x already has y's dtype and device: torch returns x.
FoldResult typeAsSameType(Node* n);

}  // namespace kiln::folds
