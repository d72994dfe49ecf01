#pragma once
// Op normalization, as PyTorch 1.13's NormalizeOps: calls of an alias are
// replaced by calls of the operator their declaration names
// (OpDescription::alias_of: aten::absolute -> aten::abs, aten::true_divide ->
// aten::div, aten::det -> aten::linalg_det, the aten::special_* aliases, ...),
// and an operator with a normalize rule in its description is rewritten by it
// (`aten::rsub(Tensor, Tensor)` becomes aten::sub with its operands swapped;
// `is` / `is not` between two bools become aten::eq / aten::ne). The new
// node takes the old one's place, source range, output types and names.
// An alias whose target kiln does not implement for these inputs stays.
#include <memory>

namespace kiln {

class Graph;

void normalizeOps(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
