#pragma once
// Convolution + add/sub folding on frozen graphs, as PyTorch 1.13's
// FoldFrozenConvAddOrSub: `aten::add(conv(x, w, b, ...), c, alpha)` (and
// aten::sub), c a constant number or a constant tensor that only varies
// along the channel dim (shape [1, C, 1, ...] or one element), becomes
// `conv(x, w, b + alpha * c, ...)` (None for b meaning zeros). The conv
// (as in fold_frozen_conv_batch_norm.h) must have constant operands, a
// floating-point weight and no other use of its result. Beyond 1.13, a
// tensor c of a wider floating dtype than the weight (which would promote
// the result) is left alone. Dead code goes afterwards.
// Assumes an SSA graph. Returns whether it folded anything.
#include <memory>

namespace kiln {

class Graph;

bool foldFrozenConvAddOrSub(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
