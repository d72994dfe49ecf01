#include "kiln/passes/frozen_graph_optimizations.h"

#include "kiln/passes/fold_frozen_conv_add_sub.h"
#include "kiln/passes/fold_frozen_conv_batch_norm.h"
#include "kiln/passes/fold_frozen_conv_mul_div.h"
#include "kiln/passes/fold_frozen_linear_batch_norm.h"
#include "kiln/passes/remove_dropout.h"

namespace kiln {

void optimizeFrozenGraph(const std::shared_ptr<Graph>& graph, bool optimize_numerics) {
  removeDropout(graph);
  if (!optimize_numerics) return;
  bool changed = true;
  while (changed) {
    changed = false;
    changed |= foldFrozenConvBatchNorm(graph);
    changed |= foldFrozenConvAddOrSub(graph);
    changed |= foldFrozenConvMulOrDiv(graph);
    changed |= foldFrozenLinearBatchNorm(graph);
  }
}

}  // namespace kiln
