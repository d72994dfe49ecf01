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

Node* onlyUser(const Value* v) { return v->uses().size() == 1 ? v->uses()[0].user : nullptr; }

Value* addedOperand(Node* add, const Value* v) {
  static const Symbol add_out = Symbol::aten("add"), add_in = Symbol::aten("add_");
  if ((add->kind() != add_out && add->kind() != add_in) || add->inputs().size() != 3 || add->outputs().size() != 1)
    return nullptr;
  if (add->input(0)->type()->kind() != TypeKind::Tensor || add->input(1)->type()->kind() != TypeKind::Tensor)
    return nullptr;
  auto alpha = toIValue(add->input(2));
  if (!alpha || !((alpha->isInt() && alpha->toInt() == 1) || (alpha->isDouble() && alpha->toDouble() == 1.0)))
    return nullptr;
  Value* other = nullptr;
  if (add->input(0) == v && add->input(1) != v) other = add->input(1);
  if (add->kind() == add_out && add->input(1) == v && add->input(0) != v) other = add->input(0);
  return other;
}

std::optional<Activation> activationOf(const Node* n) {
  std::string_view kind = n->kind().name();
  if (!n->kind().isAten() || n->outputs().size() != 1) return std::nullopt;
  if (!kind.empty() && kind.back() == '_') kind.remove_suffix(1);
  auto number = [&](size_t i) -> std::optional<double> {
    auto v = toIValue(n->input(i));
    if (v && v->isDouble()) return v->toDouble();
    if (v && v->isInt()) return static_cast<double>(v->toInt());
    return std::nullopt;
  };
  size_t arity = n->inputs().size();
  if ((kind == "relu" || kind == "silu" || kind == "sigmoid" || kind == "tanh") && arity == 1)
    return Activation{std::string(kind)};
  if (kind == "relu6" && arity == 1) return Activation{"hardtanh", 0, 6};
  if (kind == "hardtanh" && arity == 3) {
    auto lo = number(1), hi = number(2);
    if (lo && hi && *lo <= *hi) return Activation{"hardtanh", *lo, *hi};
  }
  if (kind == "gelu" && arity == 2) {
    auto approximate = toIValue(n->input(1));
    if (approximate && approximate->isString()) {
      if (approximate->toStringRef() == "none") return Activation{"gelu"};
      if (approximate->toStringRef() == "tanh") return Activation{"gelu_tanh"};
    }
  }
  if (kind == "elu" && arity == 4) {
    auto alpha = number(1), scale = number(2), input_scale = number(3);
    if (alpha && scale && input_scale && *scale == 1 && *input_scale == 1) return Activation{"elu", *alpha};
  }
  return std::nullopt;
}

}  // namespace kiln::detail
