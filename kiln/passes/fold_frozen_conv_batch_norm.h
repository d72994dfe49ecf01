#pragma once
// Convolution + batch norm folding on frozen graphs, as PyTorch 1.13's
// FoldFrozenConvBatchnorm: `aten::batch_norm(conv(x, w, b, ...), bn_w, bn_b,
// mean, var, False, momentum, eps, cudnn)` whose operands are all
// constants becomes `conv(x, w', b', ...)` with
//   w' = w * (bn_w / sqrt(var + eps)) per output channel,
//   b' = (b - mean) / sqrt(var + eps) * bn_w + bn_b
// (None for b, bn_w, bn_b meaning zeros, ones, zeros), computed as 1.13
// computes them. Convolutions are conv1d/2d/3d and the non-transposed
// _convolution and convolution; the conv's result must have no other use.
// Beyond 1.13's checks, the batch norm must be in eval mode (training a
// constant false), every tensor must be a float or double tensor of the
// weight's dtype, and the per-channel tensors one-dimensional with one
// entry per output channel; anything else stays as it is (to raise at run
// time as before). Dead code goes afterwards.
// Assumes an SSA graph. Returns whether it folded anything.
#include <memory>

namespace kiln {

class Graph;

bool foldFrozenConvBatchNorm(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
