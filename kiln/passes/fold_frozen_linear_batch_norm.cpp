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
    if (linear->output()->uses().size() != 1 || !detail::operandsAreConstant(linear)) continue;
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
    // if x.dim() == 2: linear(x, w', b') else: batch_norm(linear(x, w, b), ...)
    Node* branch = nullptr;
    {
      WithInsertPoint guard(bn);
      Value* rank = graph->insert(Symbol::aten("dim"), {x});
      Value* is_2d = graph->insert(Symbol::aten("eq"), {rank, graph->insertConstant(IValue(int64_t{2}))});
      branch = graph->insertNode(graph->create(prim::If, {is_2d}, 1));
    }
    branch->output()->setType(bn->output()->type());
    bn->output()->replaceAllUsesWith(branch->output());
    Block* folded_block = branch->addBlock();
    Block* original_block = branch->addBlock();
    Node* fused = graph->create(linear->kind(), {x, new_weight, new_bias}, 1);
    fused->output()->setType(linear->output()->type());
    fused->copyMetadata(linear);
    folded_block->appendNode(fused);
    folded_block->registerOutput(fused->output());
    linear->moveBefore(original_block->returnNode());
    bn->moveBefore(original_block->returnNode());
    original_block->registerOutput(bn->output());
    changed = true;
  }
  if (changed) eliminateDeadCode(graph);
  return changed;
}

}  // namespace kiln
