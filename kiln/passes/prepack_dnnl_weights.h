#pragma once
// kiln.optimize_for_inference's last step: the constant torch-layout (4-d)
// weight of each kiln::conv2d_fused is reordered once, now, into the
// layout oneDNN prefers for that convolution (a 1-d constant), so running
// the graph never converts weights. Run after dnnl_blocked_layout.h (the
// preferred layout depends on the activations' layouts).
#include <memory>

namespace kiln {

class Graph;

// Whether any weight was prepacked.
bool prepackDnnlWeights(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
