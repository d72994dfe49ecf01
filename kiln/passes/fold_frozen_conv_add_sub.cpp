#include "kiln/passes/fold_frozen_conv_add_sub.h"

#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/frozen_folding_detail.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/pointwise.h"

namespace kiln {

namespace {

// aten::add.Tensor / add.Scalar and the sub ones: (Tensor self, other, alpha).
bool isAddOrSub(const Node* n) {
  static const Symbol add = Symbol::aten("add"), sub = Symbol::aten("sub");
  return (n->kind() == add || n->kind() == sub) && n->inputs().size() == 3 && n->outputs().size() == 1 &&
         n->input(0)->type()->kind() == TypeKind::Tensor;
}

}  // namespace

bool foldFrozenConvAddOrSub(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> candidates;
  walkNodes(*graph, WalkOrder::PreOrder, [&](Node* n) {
    if (isAddOrSub(n) && detail::isFoldableConvolution(n->input(0)->node())) candidates.push_back(n);
  });
  bool changed = false;
  for (Node* op : candidates) {
    Node* conv = op->input(0)->node();
    if (conv->output()->uses().size() != 1 || !detail::operandsAreConstant(conv) || !detail::operandsAreConstant(op))
      continue;
    auto weight = detail::constantTensor(conv->input(1));
    auto alpha = toIValue(op->input(2));
    if (!weight || !detail::isFloatingTensor(*weight) || weight->dim() < 1 || !alpha ||
        !(alpha->isInt() || alpha->isDouble()))
      continue;
    const int64_t channels = weight->size(0);
    auto operand = detail::channelOperand(op->input(1), *weight, std::vector<int64_t>{channels});
    if (!operand) continue;
    Tensor bias;
    if (conv->input(2)->type()->kind() == TypeKind::None) {
      bias = zeros({channels}, weight->dtype());
    } else {
      auto b = detail::constantTensor(conv->input(2));
      if (!b || b->dtype() != weight->dtype() || b->dim() != 1 || b->size(0) != channels) continue;
      bias = *b;
    }
    Scalar a = alpha->isInt() ? Scalar(alpha->toInt()) : Scalar(alpha->toDouble());
    Tensor fused = op->kind() == Symbol::aten("add") ? add(bias, *operand, a) : sub(bias, *operand, a);
    std::string suffix = std::string("_fused_") + std::string(op->kind().name());
    conv->replaceInput(
        2, detail::insertFoldedConstant(contiguous(to(fused, bias.dtype())), conv, conv->input(2), suffix.c_str()));
    op->output()->replaceAllUsesWith(conv->output());
    op->destroy();
    changed = true;
  }
  if (changed) eliminateDeadCode(graph);
  return changed;
}

}  // namespace kiln
