#include "kiln/passes/fold_frozen_conv_mul_div.h"

#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/passes/frozen_folding_detail.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/pointwise.h"

namespace kiln {

namespace {

// aten::mul.Tensor / mul.Scalar and div.Tensor / div.Scalar: (Tensor self, other).
bool isMulOrDiv(const Node* n) {
  static const Symbol mul = Symbol::aten("mul"), div = Symbol::aten("div");
  return (n->kind() == mul || n->kind() == div) && n->inputs().size() == 2 && n->outputs().size() == 1 &&
         n->input(0)->type()->kind() == TypeKind::Tensor;
}

Tensor apply(Symbol kind, const Tensor& a, const Tensor& b) {
  return kind == Symbol::aten("mul") ? mul(a, b) : div(a, b);
}

}  // namespace

bool foldFrozenConvMulOrDiv(const std::shared_ptr<Graph>& graph) {
  return detail::foldIntoConvolutions(graph, isMulOrDiv, [](Node* conv, const Node* op, const Tensor& weight) {
    if (!detail::operandsAreConstant(op) || !detail::isFloatingTensor(weight) || weight.dim() < 1) return false;
    const int64_t channels = weight.size(0);
    std::vector<int64_t> weight_shape(static_cast<size_t>(weight.dim()), 1);
    weight_shape[0] = channels;
    auto weight_operand = detail::channelOperand(op->input(1), weight, weight_shape);
    auto bias_operand = detail::channelOperand(op->input(1), weight, std::vector<int64_t>{channels});
    if (!weight_operand || !bias_operand) return false;
    std::optional<Tensor> bias;
    if (conv->input(2)->type()->kind() != TypeKind::None) {
      bias = detail::constantConvolutionBias(conv, weight);
      if (!bias) return false;
    }
    std::string suffix = std::string("_fused_") + std::string(op->kind().name());
    Tensor fused_weight = contiguous(to(apply(op->kind(), weight, *weight_operand), weight.dtype()));
    conv->replaceInput(1, detail::insertFoldedConstant(fused_weight, conv, conv->input(1), suffix.c_str()));
    if (bias) {
      Tensor fused_bias = contiguous(to(apply(op->kind(), *bias, *bias_operand), bias->dtype()));
      conv->replaceInput(2, detail::insertFoldedConstant(fused_bias, conv, conv->input(2), suffix.c_str()));
    }
    return true;
  });
}

}  // namespace kiln
