#include "kiln/passes/optimize_for_inference.h"

#include "kiln/passes/constant_pooling.h"
#include "kiln/passes/constant_propagation.h"
#include "kiln/passes/dnnl_blocked_layout.h"
#include "kiln/passes/fuse_dnnl_convolution.h"
#include "kiln/passes/prepack_dnnl_weights.h"

namespace kiln {

void optimizeFrozenGraphForInference(const std::shared_ptr<Graph>& graph) {
  fuseDnnlConvolutions(graph);
  useDnnlBlockedLayout(graph);
  prepackDnnlWeights(graph);
  // Folds the rank checks the layout pass answered.
  constantPropagation(graph);
  constantPooling(graph);
}

}  // namespace kiln
