#include "kiln/passes/frozen_folding_detail.h"

#include <algorithm>
#include <string>
#include <vector>

#include "kiln/core/builtin_symbols.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/shape.h"

namespace kiln::detail {

namespace {

std::optional<bool> constantBool(const Value* v) {
  auto value = toIValue(v);
  if (!value || !value->isBool()) return std::nullopt;
  return value->toBool();
}

}  // namespace

bool isFoldableConvolution(const Node* n) {
  static const Symbol conv1d = Symbol::aten("conv1d"), conv2d = Symbol::aten("conv2d"), conv3d = Symbol::aten("conv3d"),
                      convolution = Symbol::aten("convolution"), underscore_convolution = Symbol::aten("_convolution");
  const Symbol kind = n->kind();
  if (kind == conv1d || kind == conv2d || kind == conv3d) return n->inputs().size() == 7;
  // (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...)
  if (kind == convolution && n->inputs().size() == 9) return constantBool(n->input(6)) == false;
  if (kind == underscore_convolution && (n->inputs().size() == 12 || n->inputs().size() == 13))
    return constantBool(n->input(6)) == false;
  return false;
}

bool soleValueUse(const Value* v, const Node* user) {
  static const Symbol metadata[] = {Symbol::aten("dim"),   Symbol::aten("size"),  Symbol::aten("numel"),
                                    Symbol::prim("shape"), Symbol::prim("dtype"), Symbol::prim("device")};
  size_t user_uses = 0;
  for (const Use& use : v->uses()) {
    if (use.user == user) {
      ++user_uses;
      continue;
    }
    if (std::find(std::begin(metadata), std::end(metadata), use.user->kind()) == std::end(metadata)) return false;
  }
  return user_uses == 1;
}

bool operandsAreConstant(const Node* n) {
  for (size_t i = 1; i < n->inputs().size(); ++i) {
    if (n->input(i)->node()->kind() != prim::Constant) return false;
  }
  return true;
}

std::optional<Tensor> constantTensor(const Value* v) {
  auto value = toIValue(v);
  if (!value || !value->isTensor() || !value->toTensor().defined()) return std::nullopt;
  return value->toTensor();
}

bool isFloatingTensor(const Tensor& t) {
  ScalarType s = t.dtype();
  return s == ScalarType::Float || s == ScalarType::Double;
}

bool isBatchNorm(const Node* n) {
  static const Symbol batch_norm = Symbol::aten("batch_norm");
  return n->kind() == batch_norm && n->inputs().size() == 9 && n->outputs().size() == 1;
}

std::optional<FoldedWeightAndBias> foldBatchNorm(const Node* bn, const Tensor& weight, const Value* bias) {
  if (!isBatchNorm(bn) || !operandsAreConstant(bn) || !isFloatingTensor(weight) || weight.dim() < 1)
    return std::nullopt;
  if (constantBool(bn->input(5)) != false) return std::nullopt;
  auto eps = toIValue(bn->input(7));
  if (!eps || !eps->isDouble()) return std::nullopt;
  const int64_t channels = weight.size(0);
  const ScalarType dtype = weight.dtype();
  // A per-channel tensor operand: the constant (when it fits) or `fill` when None.
  auto perChannel = [&](const Value* v, std::optional<double> fill) -> std::optional<Tensor> {
    if (fill && v->type()->kind() == TypeKind::None) return full({channels}, Scalar(*fill), dtype);
    auto t = constantTensor(v);
    if (!t || t->dtype() != dtype || t->dim() != 1 || t->size(0) != channels) return std::nullopt;
    return t;
  };
  auto conv_b = perChannel(bias, 0.0);
  auto bn_w = perChannel(bn->input(1), 1.0);
  auto bn_b = perChannel(bn->input(2), 0.0);
  auto mean = perChannel(bn->input(3), std::nullopt);
  auto var = perChannel(bn->input(4), std::nullopt);
  if (!conv_b || !bn_w || !bn_b || !mean || !var) return std::nullopt;
  // fold_conv_bn.cpp's computeUpdatedConvWeightAndBias, op for op.
  Tensor var_rsqrt = rsqrt(add(*var, scalarToTensor(Scalar(eps->toDouble()))));
  std::vector<int64_t> sizes(static_cast<size_t>(weight.dim()), 1);
  sizes[0] = -1;
  Tensor new_weight = mul(weight, reshape(mul(*bn_w, var_rsqrt), sizes));
  Tensor new_bias = add(mul(mul(sub(*conv_b, *mean), var_rsqrt), *bn_w), *bn_b);
  return FoldedWeightAndBias{contiguous(to(new_weight, dtype)), contiguous(to(new_bias, dtype))};
}

std::optional<Tensor> channelOperand(const Value* operand, const Tensor& weight, IntArrayRef shape) {
  auto value = toIValue(operand);
  if (!value) return std::nullopt;
  const ScalarType dtype = weight.dtype();
  if (value->isInt() || value->isDouble()) {
    Scalar s = value->isInt() ? Scalar(value->toInt()) : Scalar(value->toDouble());
    return full(shape, s, dtype);
  }
  if (!value->isTensor() || !value->toTensor().defined()) return std::nullopt;
  const Tensor& t = value->toTensor();
  if (t.dim() > weight.dim()) return std::nullopt;
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (t.size(i) != 1 && !(i == 1 && t.size(i) == weight.size(0))) return std::nullopt;
  }
  // A zero-dim tensor promotes by category only (a float conv stays float);
  // others must not be of a wider floating type than the weight.
  ScalarType other = t.dtype();
  bool integral = isIntegralType(other, /*include_bool=*/false);
  if (!(integral || other == dtype || (t.dim() == 0 && isFloatingType(other)))) return std::nullopt;
  Tensor converted = contiguous(to(t, dtype));
  return t.numel() == 1 ? contiguous(expand(reshape(converted, std::vector<int64_t>{1}), shape))
                        : reshape(converted, shape);
}

Value* insertFoldedConstant(const Tensor& t, Node* before, const Value* base, const char* suffix) {
  Graph& graph = *before->owningGraph();
  Node* saved = graph.insertPoint();
  graph.setInsertPoint(before);
  Value* v = graph.insertConstant(IValue(t));
  graph.setInsertPoint(saved);
  if (base->hasDebugName()) {
    std::string name = base->debugName() + suffix;
    if (Value::isValidName(name)) v->setDebugName(name);
  }
  return v;
}

bool foldIntoConvolutions(const std::shared_ptr<Graph>& graph, const std::function<bool(const Node*)>& matches,
                          const std::function<bool(Node* conv, const Node* op, const Tensor& weight)>& fold) {
  std::vector<Node*> candidates;
  walkNodes(*graph, WalkOrder::PreOrder, [&](Node* n) {
    if (matches(n) && isFoldableConvolution(n->input(0)->node())) candidates.push_back(n);
  });
  bool changed = false;
  for (Node* op : candidates) {
    Node* conv = op->input(0)->node();
    if (!soleValueUse(conv->output(), op) || !operandsAreConstant(conv)) continue;
    auto weight = constantTensor(conv->input(1));
    if (!weight || !fold(conv, op, *weight)) continue;
    op->output()->replaceAllUsesWith(conv->output());
    op->destroy();
    changed = true;
  }
  if (changed) eliminateDeadCode(graph);
  return changed;
}

std::optional<Tensor> constantConvolutionBias(const Node* conv, const Tensor& weight) {
  const int64_t channels = weight.size(0);
  if (conv->input(2)->type()->kind() == TypeKind::None) return zeros({channels}, weight.dtype());
  auto bias = constantTensor(conv->input(2));
  if (!bias || bias->dtype() != weight.dtype() || bias->dim() != 1 || bias->size(0) != channels) return std::nullopt;
  return bias;
}

}  // namespace kiln::detail
