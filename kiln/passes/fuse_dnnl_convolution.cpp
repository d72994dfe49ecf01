#include "kiln/passes/fuse_dnnl_convolution.h"

#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/dnnl_conv_detail.h"
#include "kiln/passes/frozen_folding_detail.h"

namespace kiln {

namespace {

using namespace detail;

// Where a 2-d convolution keeps its operands after input, weight and bias.
struct ConvOperands {
  size_t stride, padding, dilation, groups;
};

// aten::conv2d(input, weight, bias, int[] stride, int[] padding, int[]
// dilation, int groups), and aten::_convolution (what traces record) with a
// constant false `transposed`; the weight's rank says 2-d.
std::optional<ConvOperands> convolutionOperands(const Node* n) {
  static const Symbol conv2d = Symbol::aten("conv2d"), convolution = Symbol::aten("_convolution");
  if (n->outputs().size() != 1) return std::nullopt;
  if (n->kind() == conv2d && n->inputs().size() == 7 && n->input(4)->type()->kind() != TypeKind::String)
    return ConvOperands{3, 4, 5, 6};
  if (n->kind() == convolution && (n->inputs().size() == 13 || n->inputs().size() == 12)) {
    auto transposed = toIValue(n->input(6));
    if (transposed && transposed->isBool() && !transposed->toBool()) return ConvOperands{3, 4, 5, 8};
  }
  return std::nullopt;
}

// The single node using `v`, if there is one use.
Node* onlyUser(const Value* v) { return v->uses().size() == 1 ? v->uses()[0].user : nullptr; }

// Whether `v` comes from an op whose result is an (N, C, H, W) activation
// like a convolution's: the sum post-op does not broadcast, so a residual
// must have the output's shape. (A convolution of another shape still
// raises an error at run time, never a wrong result.)
bool hasConvolutionShape(const Value* v) {
  static const Symbol kinds[] = {conv2dFusedSymbol(), Symbol::aten("conv2d"), Symbol::aten("_convolution"),
                                 Symbol::aten("max_pool2d")};
  for (Symbol k : kinds)
    if (v->node()->kind() == k) return true;
  return false;
}

// `add(v, other, 1)` or `add(other, v, 1)` (and `v.add_(other)`): the other tensor.
Value* residualOperand(Node* add, const Value* v) {
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
  return other && hasConvolutionShape(other) ? other : nullptr;
}

struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

// `n` as an eltwise post-op on its first input.
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

bool fuseOne(const std::shared_ptr<Graph>& graph_ptr, Node* conv) {
  Graph& graph = *graph_ptr;
  if (!operandsAreConstant(conv)) return false;
  auto weight = constantTensor(conv->input(1));
  if (!weight || weight->dtype() != ScalarType::Float || weight->dim() != 4 || weight->numel() == 0) return false;
  bool has_bias = conv->input(2)->type()->kind() != TypeKind::None;
  if (has_bias) {
    auto bias = constantTensor(conv->input(2));
    if (!bias || bias->dtype() != ScalarType::Float || bias->dim() != 1 || bias->size(0) != weight->size(0))
      return false;
  }
  const ConvOperands at = *convolutionOperands(conv);
  auto stride = toIValue(conv->input(at.stride)), padding = toIValue(conv->input(at.padding)),
       dilation = toIValue(conv->input(at.dilation)), groups = toIValue(conv->input(at.groups));
  if (!stride || !padding || !dilation || !groups || !groups->isInt()) return false;
  FusedConv2dParams p;
  p.weight_size = DimVector(weight->sizes().begin(), weight->sizes().end());
  p.stride = stride->toDimVector();
  p.padding = padding->toDimVector();
  p.dilation = dilation->toDimVector();
  p.groups = groups->toInt();
  for (const DimVector* v : {&p.stride, &p.padding, &p.dilation})
    if (v->size() != 1 && v->size() != 2) return false;
  for (size_t i = 0; i < 2; ++i) {
    auto at = [&](const DimVector& v) { return v.size() == 1 ? v[0] : v[i]; };
    if (at(p.stride) <= 0 || at(p.padding) < 0 || at(p.dilation) <= 0) return false;
  }
  if (p.groups <= 0 || p.weight_size[0] % p.groups != 0) return false;
  p.has_bias = has_bias;

  // What the convolution's result flows into, when nothing else sees it.
  Value* result = conv->output();
  Node* last = conv;
  Value* residual = nullptr;
  if (Node* user = onlyUser(result)) {
    if (Value* other = residualOperand(user, result)) {
      residual = other;
      last = user;
      result = user->output();
    }
  }
  Activation act{"none"};
  std::vector<Node*> absorbed;
  if (last != conv) absorbed.push_back(last);
  if (Node* user = onlyUser(result); user && user->input(0) == result) {
    if (auto a = activationOf(user)) {
      act = *a;
      absorbed.push_back(user);
      last = user;
      result = user->output();
    }
  }
  if (!absorbed.empty()) {
    // The fused node runs where the last absorbed one ran: what the
    // convolution reads must be the same there.
    for (Node* n : absorbed)
      if (n->owningBlock() != conv->owningBlock()) return false;
    AliasDb db(graph_ptr);
    ValueSet read{conv->input(0)};
    if (residual) read.insert(residual);
    for (Node* n = conv->next(); n != last; n = n->next())
      if (db.writesToAlias(n, read)) return false;
  }
  p.has_residual = residual != nullptr;
  p.activation = act.name;
  p.alpha = act.alpha;
  p.beta = act.beta;
  if (!prepackConv2dWeight(*weight, p)) return false;  // oneDNN cannot run it

  WithInsertPoint guard(last);
  auto constant = [&](const IValue& v) { return graph.insertConstant(v); };
  std::vector<Value*> inputs(kFusedInputCount);
  inputs[kFusedInput] = conv->input(0);
  inputs[kFusedWeight] = conv->input(1);
  inputs[kFusedBias] = conv->input(2);
  inputs[kFusedResidual] = residual ? residual : graph.insertNode(graph.createNone())->output();
  inputs[kFusedWeightSize] = constant(IValue(IntArrayRef(p.weight_size)));
  inputs[kFusedStride] = conv->input(at.stride);
  inputs[kFusedPadding] = conv->input(at.padding);
  inputs[kFusedDilation] = conv->input(at.dilation);
  inputs[kFusedGroups] = conv->input(at.groups);
  inputs[kFusedInBlock] = constant(IValue(int64_t{0}));
  inputs[kFusedOutBlock] = constant(IValue(int64_t{0}));
  inputs[kFusedActivation] = constant(IValue(p.activation));
  inputs[kFusedAlpha] = constant(IValue(p.alpha));
  inputs[kFusedBeta] = constant(IValue(p.beta));
  Node* fused = graph.insertNode(graph.create(conv2dFusedSymbol(), inputs));
  fused->output()->setType(TensorType::get());
  fused->setSourceRange(conv->sourceRange());
  result->replaceAllUsesWith(fused->output());
  for (auto it = absorbed.rbegin(); it != absorbed.rend(); ++it) (*it)->destroy();
  conv->destroy();
  return true;
}

}  // namespace

bool fuseDnnlConvolutions(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> convs;
  walkNodes(*graph, WalkOrder::PreOrder, [&](Node* n) {
    if (convolutionOperands(n)) convs.push_back(n);
  });
  bool changed = false;
  for (Node* conv : convs) changed |= fuseOne(graph, conv);
  if (changed) eliminateDeadCode(graph);
  return changed;
}

}  // namespace kiln
