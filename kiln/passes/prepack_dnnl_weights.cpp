#include "kiln/passes/prepack_dnnl_weights.h"

#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/dnnl_conv_detail.h"
#include "kiln/passes/frozen_folding_detail.h"

namespace kiln {

bool prepackDnnlWeights(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> convs;
  walkNodes(*graph, WalkOrder::PreOrder, [&](Node* n) {
    if (detail::isConv2dFused(n)) convs.push_back(n);
  });
  bool changed = false;
  for (Node* n : convs) {
    auto p = detail::fusedConvParams(n);
    auto weight = detail::constantTensor(n->input(detail::kFusedWeight));
    if (!p || !weight || weight->dim() != 4) continue;
    auto packed = prepackConv2dWeight(*weight, *p);
    if (!packed) continue;
    detail::setConstantInput(n, detail::kFusedWeight, IValue(*packed));
    changed = true;
  }
  if (changed) eliminateDeadCode(graph);
  return changed;
}

}  // namespace kiln
