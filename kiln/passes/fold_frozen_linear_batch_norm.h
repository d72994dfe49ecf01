#pragma once
// Linear + batch norm folding on frozen graphs (beyond PyTorch 1.13, which
// has no such pass; later PyTorch's FoldFrozenLinearBatchnorm):
// `aten::batch_norm(aten::linear(x, w, b), ...)` with constant operands
// becomes `aten::linear(x, w', b')`, w' and b' computed as for convolutions
// (fold_frozen_conv_batch_norm.h; the same conditions on the batch norm).
// The fold is exact only when the linear's result is 2-D: batch norm
// normalizes dim 1, linear's features are the last dim. When x's type says
// it is 2-D the linear is simply replaced; otherwise the graph branches on
// `x.dim() == 2` between the folded linear and the original pair, so 3-D
// inputs (BatchNorm1d over a sequence) and inputs batch norm rejects keep
// their results and errors. Dead code goes afterwards.
// Assumes an SSA graph. Returns whether it folded anything.
#include <memory>

namespace kiln {

class Graph;

bool foldFrozenLinearBatchNorm(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
