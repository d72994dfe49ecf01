#include "kiln/passes/fold_frozen_conv_batch_norm.h"

#include "kiln/ir/graph.h"
#include "kiln/passes/frozen_folding_detail.h"

namespace kiln {

bool foldFrozenConvBatchNorm(const std::shared_ptr<Graph>& graph) {
  return detail::foldIntoConvolutions(graph, detail::isBatchNorm, [](Node* conv, const Node* bn, const Tensor& weight) {
    if (weight.dim() < 3) return false;
    auto folded = detail::foldBatchNorm(bn, weight, conv->input(2));
    if (!folded) return false;
    conv->replaceInput(1, detail::insertFoldedConstant(folded->weight, conv, conv->input(1), "_fused_bn"));
    conv->replaceInput(2, detail::insertFoldedConstant(folded->bias, conv, conv->input(2), "_fused_bn"));
    return true;
  });
}

}  // namespace kiln
