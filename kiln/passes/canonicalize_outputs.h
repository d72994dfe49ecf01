#pragma once
// Output canonicalization, as PyTorch 1.13's CanonicalizeOutputs: the
// outputs of every prim::If and the loop-carried values of every prim::Loop
// are reordered by where each is first used (values without uses last, in
// their old order), so graphs do not depend on the order the compiler added
// them in. Block outputs, loop inputs and body inputs move along.
// Assumes an SSA graph; changes no node kinds and no results.
#include <memory>

namespace kiln {

class Graph;

void canonicalizeOutputs(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
