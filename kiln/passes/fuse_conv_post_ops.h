#pragma once
// The graph executor's convolution fusion, safe without freezing: each
// aten::conv2d with constant stride, padding, dilation and groups whose
// result only feeds an add of another tensor (a residual) and/or one
// activation (relu, hardtanh/relu6, silu, sigmoid, tanh, gelu, elu) becomes
//
//   if kiln::conv2d_fusable(x, w, b, r, ...):   # float32, batched, shapes agree
//       kiln::conv2d_fused(x, w, b, r, w.size(), ..., activation)   # oneDNN post-ops
//   else:
//       the original conv2d, add and activation
//
// Weight and bias stay whatever values the graph reads (a module's
// parameters, read by prim::GetAttr on every call): nothing is baked in or
// cached by their address, so reassigning a parameter or changing it in
// place is seen by the next call. Other dtypes, unbatched inputs and the
// arguments torch rejects take the original ops (and their errors).
// Assumes an SSA graph; keeps results up to rounding.
#include <memory>

namespace kiln {

class Graph;

// Whether anything was fused.
bool fuseConvolutionPostOps(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
