#pragma once
// The graph part of kiln.optimize_for_inference (kiln/api/
// optimize_for_inference.h), on a frozen graph: convolutions fused with
// their bias, residual add and activation into oneDNN post-ops
// (fuse_dnnl_convolution.h), activations kept in oneDNN's blocked layout
// between convolutions (dnnl_blocked_layout.h), and weights reordered once
// into oneDNN's preferred layout (prepack_dnnl_weights.h). Assumes what
// those passes assume; results change only by rounding.
#include <memory>

namespace kiln {

class Graph;

void optimizeFrozenGraphForInference(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
