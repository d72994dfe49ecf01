#pragma once
// kiln.optimize_for_inference's second step: keeps activations in oneDNN's
// channel-blocked layout (nChw16c with AVX-512, nChw8c with AVX2; see
// kiln/tensor/blocked_conv.h) from convolution to convolution. Every
// kiln::conv2d_fused of the graph's top block writes the blocked layout and
// reads it where its input (and residual) already is blocked, converting
// with kiln::to_blocked only where it is not (an input of 4 channels or
// fewer, an image, is read plain). aten::max_pool2d and aten::cat along
// channels (of whole blocks) of blocked values run blocked too. Any other
// use reads a kiln::from_blocked of the value, so conversions sit only at
// the region's boundaries. A convolution oneDNN cannot run blocked stays plain.
// Assumes fuse_dnnl_convolution.h ran; keeps results exactly.
#include <cstdint>
#include <memory>

namespace kiln {

class Graph;

// `block` 0 asks for the CPU's (dnnlChannelBlock()); with no blocked layout
// on this CPU nothing changes. Whether anything changed.
bool useDnnlBlockedLayout(const std::shared_ptr<Graph>& graph, int64_t block = 0);

}  // namespace kiln
