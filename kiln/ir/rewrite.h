#pragma once
// Small rewrites that passes and operator descriptions' normalize rules share.
#include <vector>

#include "kiln/core/symbol.h"

namespace kiln {

class Node;
class Value;

// Puts a call of `kind` on `inputs` in place of `n` (its source range,
// output types and names) and destroys `n`; leaves `n` alone and returns
// false when kiln has no overload of `kind` for those inputs.
bool replaceWithCall(Node* n, Symbol kind, std::vector<Value*> inputs);

}  // namespace kiln
