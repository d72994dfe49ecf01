#include "kiln/passes/convolution_rank_checks.h"

#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/frozen_folding_detail.h"

namespace kiln {

bool checkRankBeforeConvolution(const std::shared_ptr<Graph>& graph) {
  static const Symbol dim = Symbol::aten("dim");
  std::vector<Node*> checks;
  walkNodes(*graph, WalkOrder::PreOrder, [&](Node* n) {
    if (n->kind() == dim && n->inputs().size() == 1 && detail::isFoldableConvolution(n->input(0)->node()))
      checks.push_back(n);
  });
  for (Node* n : checks) n->replaceInput(0, n->input(0)->node()->input(0));
  return !checks.empty();
}

}  // namespace kiln
