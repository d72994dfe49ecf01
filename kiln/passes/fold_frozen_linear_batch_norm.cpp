#include "kiln/passes/fold_frozen_linear_batch_norm.h"

#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/frozen_folding_detail.h"

namespace kiln {

namespace {

bool isLinear(const Node* n) {
  static const Symbol linear = Symbol::aten("linear");
  return n->kind() == linear && n->inputs().size() == 3 && n->outputs().size() == 1;
}

bool knownToBe2d(const Value* v) {
  auto t = v->type()->cast<TensorType>();
  return t && t->dim() == size_t{2};
}

}  // namespace

bool foldFrozenLinearBatchNorm(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> candidates;
  walkNodes(*graph, WalkOrder::PreOrder, [&](Node* n) {
    if (detail::isBatchNorm(n) && isLinear(n->input(0)->node())) candidates.push_back(n);
  });
  bool changed = false;
  for (Node* bn : candidates) {
    Node* linear = bn->input(0)->node();
    if (!detail::soleValueUse(linear->output(), bn) || !detail::operandsAreConstant(linear)) continue;
    auto weight = detail::constantTensor(linear->input(1));
    if (!weight || weight->dim() != 2) continue;
    auto folded = detail::foldBatchNorm(bn, *weight, linear->input(2));
    if (!folded) continue;
    Value* x = linear->input(0);
    Value* new_weight = detail::insertFoldedConstant(folded->weight, linear, linear->input(1), "_fused_bn");
    Value* new_bias = detail::insertFoldedConstant(folded->bias, linear, linear->input(2), "_fused_bn");
    if (knownToBe2d(x)) {
      linear->replaceInput(1, new_weight);
      linear->replaceInput(2, new_bias);
      bn->output()->replaceAllUsesWith(linear->output());
      bn->destroy();
      changed = true;
      continue;
    }
    // y = linear(x, w', b') if x.dim() == 2 else linear(x, w, b), at the
    // linear (its shape checks read y), then
    // z = y if x.dim() == 2 else batch_norm(y, ...), at the batch norm.
    Value* is_2d = nullptr;
    Node* pick_linear = nullptr;
    {
      WithInsertPoint guard(linear);
      Value* rank = graph->insert(Symbol::aten("dim"), {x});
      is_2d = graph->insert(Symbol::aten("eq"), {rank, graph->insertConstant(IValue(int64_t{2}))});
      pick_linear = graph->insertNode(graph->create(prim::If, {is_2d}, 1));
    }
    pick_linear->output()->setType(linear->output()->type());
    linear->output()->replaceAllUsesWith(pick_linear->output());
    Block* fused_block = pick_linear->addBlock();
    Block* plain_block = pick_linear->addBlock();
    Node* fused = graph->create(linear->kind(), {x, new_weight, new_bias}, 1);
    fused->output()->setType(linear->output()->type());
    fused->copyMetadata(linear);
    fused_block->appendNode(fused);
    fused_block->registerOutput(fused->output());
    linear->moveBefore(plain_block->returnNode());
    plain_block->registerOutput(linear->output());

    Node* pick_norm = nullptr;
    {
      WithInsertPoint guard(bn);
      pick_norm = graph->insertNode(graph->create(prim::If, {is_2d}, 1));
    }
    pick_norm->output()->setType(bn->output()->type());
    bn->output()->replaceAllUsesWith(pick_norm->output());
    pick_norm->addBlock()->registerOutput(pick_linear->output());
    Block* norm_block = pick_norm->addBlock();
    bn->moveBefore(norm_block->returnNode());
    norm_block->registerOutput(bn->output());
    changed = true;
  }
  if (changed) eliminateDeadCode(graph);
  return changed;
}

}  // namespace kiln
