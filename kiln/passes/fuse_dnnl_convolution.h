#pragma once
// kiln.optimize_for_inference's first step on a frozen graph: each float32
// aten::conv2d (or aten::_convolution, as traces record it, not transposed)
// whose weight, bias and parameters are constants becomes one
// kiln::conv2d_fused (oneDNN, kiln/tensor/blocked_conv.h), which also takes
// over what follows it when the convolution's result has no other use: an
// add of another tensor (the residual, `out += identity`: a oneDNN sum
// post-op) and then one activation (relu, hardtanh/relu6, silu, sigmoid,
// tanh, gelu, elu: an eltwise post-op). A float32 aten::conv1d runs as a
// 2-d convolution of height 1 between an unsqueeze and a squeeze (no
// residual fused); between two such convolutions the views cancel, a
// max_pool1d becomes a max_pool2d of height 1 and a rank check of the
// squeezed value folds to 3, so the blocked layout reaches 1-d networks too.
// Layouts stay plain NCHW (in_block
// and out_block 0) and the weight keeps torch's layout until
// dnnl_blocked_layout.h and prepack_dnnl_weights.h run.
// Assumes a frozen SSA graph whose convolutions see batched (N, C, H, W)
// float32 inputs, as torch.jit.optimize_for_inference does; a residual must
// have the convolution's output shape (no broadcasting). Results are the
// same up to rounding.
#include <memory>

namespace kiln {

class Graph;

// Whether anything was fused.
bool fuseDnnlConvolutions(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
