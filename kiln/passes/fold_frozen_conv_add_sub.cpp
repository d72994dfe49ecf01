#include "kiln/passes/fold_frozen_conv_add_sub.h"

#include <string>
#include <vector>

#include "kiln/ir/graph.h"
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
  return detail::foldIntoConvolutions(graph, isAddOrSub, [](Node* conv, const Node* op, const Tensor& weight) {
    if (!detail::operandsAreConstant(op)) return false;
    auto alpha = toIValue(op->input(2));
    if (!detail::isFloatingTensor(weight) || weight.dim() < 1 || !alpha || !(alpha->isInt() || alpha->isDouble()))
      return false;
    auto operand = detail::channelOperand(op->input(1), weight, std::vector<int64_t>{weight.size(0)});
    auto bias = detail::constantConvolutionBias(conv, weight);
    if (!operand || !bias) return false;
    Scalar a = alpha->isInt() ? Scalar(alpha->toInt()) : Scalar(alpha->toDouble());
    Tensor fused = op->kind() == Symbol::aten("add") ? add(*bias, *operand, a) : sub(*bias, *operand, a);
    std::string suffix = std::string("_fused_") + std::string(op->kind().name());
    conv->replaceInput(
        2, detail::insertFoldedConstant(contiguous(to(fused, bias->dtype())), conv, conv->input(2), suffix.c_str()));
    return true;
  });
}

}  // namespace kiln
