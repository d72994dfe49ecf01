#include "kiln/passes/dnnl_conv_detail.h"

namespace kiln::detail {

Symbol conv2dFusedSymbol() {
  static const Symbol s = Symbol::fromQualString("kiln::conv2d_fused");
  return s;
}

bool isConv2dFused(const Node* n) { return n->kind() == conv2dFusedSymbol() && n->inputs().size() == kFusedInputCount; }

std::optional<FusedConv2dParams> fusedConvParams(const Node* n) {
  if (!isConv2dFused(n)) return std::nullopt;
  auto weight_size = toIValue(n->input(kFusedWeightSize)), stride = toIValue(n->input(kFusedStride)),
       padding = toIValue(n->input(kFusedPadding)), dilation = toIValue(n->input(kFusedDilation)),
       groups = toIValue(n->input(kFusedGroups)), in_block = toIValue(n->input(kFusedInBlock)),
       out_block = toIValue(n->input(kFusedOutBlock)), activation = toIValue(n->input(kFusedActivation)),
       alpha = toIValue(n->input(kFusedAlpha)), beta = toIValue(n->input(kFusedBeta));
  if (!weight_size || !stride || !padding || !dilation || !groups || !in_block || !out_block || !activation || !alpha ||
      !beta)
    return std::nullopt;
  FusedConv2dParams p;
  p.weight_size = weight_size->toDimVector();
  p.stride = stride->toDimVector();
  p.padding = padding->toDimVector();
  p.dilation = dilation->toDimVector();
  p.groups = groups->toInt();
  p.in_block = in_block->toInt();
  p.out_block = out_block->toInt();
  p.activation = activation->toStringRef();
  p.alpha = alpha->toDouble();
  p.beta = beta->toDouble();
  p.has_bias = n->input(kFusedBias)->type()->kind() != TypeKind::None;
  p.has_residual = n->input(kFusedResidual)->type()->kind() != TypeKind::None;
  return p;
}

void setConstantInput(Node* n, size_t i, const IValue& value) {
  WithInsertPoint guard(n);
  n->replaceInput(i, n->owningGraph()->insertConstant(value));
}

}  // namespace kiln::detail
