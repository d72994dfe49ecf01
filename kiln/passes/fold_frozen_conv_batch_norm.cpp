#include "kiln/passes/fold_frozen_conv_batch_norm.h"

#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/frozen_folding_detail.h"

namespace kiln {

bool foldFrozenConvBatchNorm(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> candidates;
  walkNodes(*graph, WalkOrder::PreOrder, [&](Node* n) {
    if (detail::isBatchNorm(n) && detail::isFoldableConvolution(n->input(0)->node())) candidates.push_back(n);
  });
  bool changed = false;
  for (Node* bn : candidates) {
    Node* conv = bn->input(0)->node();
    if (conv->output()->uses().size() != 1 || !detail::operandsAreConstant(conv)) continue;
    auto weight = detail::constantTensor(conv->input(1));
    if (!weight || weight->dim() < 3) continue;
    auto folded = detail::foldBatchNorm(bn, *weight, conv->input(2));
    if (!folded) continue;
    conv->replaceInput(1, detail::insertFoldedConstant(folded->weight, conv, conv->input(1), "_fused_bn"));
    conv->replaceInput(2, detail::insertFoldedConstant(folded->bias, conv, conv->input(2), "_fused_bn"));
    bn->output()->replaceAllUsesWith(conv->output());
    bn->destroy();
    changed = true;
  }
  if (changed) eliminateDeadCode(graph);
  return changed;
}

}  // namespace kiln
