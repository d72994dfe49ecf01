#pragma once
// Convolution + mul/div folding on frozen graphs, as PyTorch 1.13's
// FoldFrozenConvMulOrDiv: `aten::mul(conv(x, w, b, ...), c)` (and
// aten::div without rounding mode), c a constant number or a constant
// tensor that only varies along the channel dim, becomes
// `conv(x, w * c, b * c, ...)` with c applied per output channel (a None b
// stays None). Conditions as fold_frozen_conv_add_sub.h's. Dead code goes
// afterwards.
// Assumes an SSA graph. Returns whether it folded anything.
#include <memory>

namespace kiln {

class Graph;

bool foldFrozenConvMulOrDiv(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
