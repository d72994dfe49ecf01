#include "kiln/passes/fuse_dnnl_convolution.h"

#include <unordered_set>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/dnnl_conv_detail.h"
#include "kiln/passes/frozen_folding_detail.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/shape.h"

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
  static const Symbol conv1d = Symbol::aten("conv1d"), conv2d = Symbol::aten("conv2d"),
                      convolution = Symbol::aten("_convolution");
  if (n->outputs().size() != 1) return std::nullopt;
  if ((n->kind() == conv2d || n->kind() == conv1d) && n->inputs().size() == 7 &&
      n->input(4)->type()->kind() != TypeKind::String)
    return ConvOperands{3, 4, 5, 6};
  if (n->kind() == convolution && (n->inputs().size() == 13 || n->inputs().size() == 12)) {
    auto transposed = toIValue(n->input(6));
    if (transposed && transposed->isBool() && !transposed->toBool()) return ConvOperands{3, 4, 5, 8};
  }
  return std::nullopt;
}

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

// The residual of `add`, when it is known to have the convolution's shape.
Value* residualOperand(Node* add, const Value* v) {
  Value* other = addedOperand(add, v);
  return other && hasConvolutionShape(other) ? other : nullptr;
}

// A 1-d convolution runs as a 2-d one of height 1: (N, C, L) is viewed as
// (N, C, 1, L), the weight (OC, C/g, k) as (OC, C/g, 1, k), and the
// parameters get a leading 1 (stride, dilation) or 0 (padding).
DimVector asHeightOne(const DimVector& v, int64_t lead) {
  if (v.size() != 1) return {};
  return {lead, v[0]};
}

// The views this pass made around 1-d convolutions: their (N, C, 1, L)
// values, the unsqueezes that only a fused convolution reads, the squeezes.
struct HeightOneViews {
  std::unordered_set<const Value*> values;
  std::unordered_set<const Node*> unsqueezes, squeezes;
};

Value* insertUnsqueezeOrSqueeze(Graph& graph, const char* op, Value* v, HeightOneViews& views) {
  Node* n = graph.insertNode(graph.create(Symbol::aten(op), {v, graph.insertConstant(IValue(int64_t{-2}))}));
  n->output()->setType(TensorType::get());
  if (op[0] == 'u') {
    views.unsqueezes.insert(n);
  } else {
    views.squeezes.insert(n);
    views.values.insert(v);
  }
  return n->output();
}

// max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode) with
// constant arguments torch accepts: the same pool as a 2-d one of height 1.
Value* maxPoolOfHeightOne(Graph& graph, Node* pool, Value* input) {
  for (size_t i = 1; i < 6; ++i)
    if (!toIValue(pool->input(i))) return nullptr;
  auto kernel = toIValue(pool->input(1))->toDimVector(), stride = toIValue(pool->input(2))->toDimVector(),
       padding = toIValue(pool->input(3))->toDimVector(), dilation = toIValue(pool->input(4))->toDimVector();
  if (kernel.size() != 1 || stride.size() > 1 || padding.size() != 1 || dilation.size() != 1) return nullptr;
  if (kernel[0] <= 0 || (!stride.empty() && stride[0] <= 0) || padding[0] < 0 || padding[0] > kernel[0] / 2 ||
      dilation[0] <= 0)
    return nullptr;
  WithInsertPoint guard(pool);
  auto list = [&](const DimVector& v, int64_t lead) {
    return graph.insertConstant(v.empty() ? IValue(IntArrayRef(v)) : IValue(IntArrayRef(DimVector{lead, v[0]})));
  };
  Node* pool2d =
      graph.insertNode(graph.create(Symbol::aten("max_pool2d"), {input, list(kernel, 1), list(stride, 1),
                                                                 list(padding, 0), list(dilation, 1), pool->input(5)}));
  pool2d->output()->setType(TensorType::get());
  pool2d->setSourceRange(pool->sourceRange());
  return pool2d->output();
}

// Between two 1-d convolutions the views cancel: unsqueeze(squeeze(z)) is z,
// and a max_pool1d between them pools z as a 2-d pool, so that the blocked
// layout pass sees convolution -> pool -> convolution.
void collapseHeightOneViews(Graph& graph, HeightOneViews& views) {
  static const Symbol max_pool1d = Symbol::aten("max_pool1d");
  std::vector<Node*> nodes;
  walkNodes(graph, WalkOrder::PreOrder, [&](Node* n) { nodes.push_back(n); });
  for (Node* n : nodes) {
    Node* producer = n->inputs().empty() ? nullptr : n->input(0)->node();
    if (!producer || !views.squeezes.count(producer)) continue;
    Value* z = producer->input(0);
    if (n->kind() == max_pool1d && n->inputs().size() == 6 && n->outputs().size() == 1) {
      if (Value* pooled = maxPoolOfHeightOne(graph, n, z)) {
        WithInsertPoint guard(n);
        n->output()->replaceAllUsesWith(insertUnsqueezeOrSqueeze(graph, "squeeze", pooled, views));
        n->destroy();
      }
    } else if (views.unsqueezes.count(n)) {
      n->output()->replaceAllUsesWith(z);
      n->destroy();
    } else if (n->kind() == Symbol::aten("dim") && n->inputs().size() == 1) {
      // A scripted BatchNorm1d's rank check: z is 4-d, its squeeze 3-d (and
      // asking would keep the plain copy of a blocked z alive).
      WithInsertPoint guard(n);
      n->output()->replaceAllUsesWith(graph.insertConstant(IValue(int64_t{3})));
      n->destroy();
    }
  }
}

bool fuseOne(const std::shared_ptr<Graph>& graph_ptr, Node* conv, HeightOneViews& views) {
  Graph& graph = *graph_ptr;
  if (!operandsAreConstant(conv)) return false;
  auto weight = constantTensor(conv->input(1));
  if (!weight || weight->dtype() != ScalarType::Float || weight->numel() == 0) return false;
  const bool one_d = weight->dim() == 3;
  if (weight->dim() != 4 && !one_d) return false;
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
  Tensor weight4 = *weight;
  if (one_d) {
    p.weight_size = {weight->size(0), weight->size(1), 1, weight->size(2)};
    p.stride = asHeightOne(p.stride, 1);
    p.padding = asHeightOne(p.padding, 0);
    p.dilation = asHeightOne(p.dilation, 1);
    weight4 = view(contiguous(*weight), IntArrayRef(p.weight_size));
  }
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
  // (A 1-d convolution's residual would need a view of its own: not fused.)
  if (Node* user = one_d ? nullptr : onlyUser(result)) {
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
  if (!prepackConv2dWeight(weight4, p)) return false;  // oneDNN cannot run it

  WithInsertPoint guard(last);
  auto constant = [&](const IValue& v) { return graph.insertConstant(v); };
  std::vector<Value*> inputs(kFusedInputCount);
  inputs[kFusedInput] = one_d ? insertUnsqueezeOrSqueeze(graph, "unsqueeze", conv->input(0), views) : conv->input(0);
  inputs[kFusedWeight] = one_d ? constant(IValue(weight4)) : conv->input(1);
  inputs[kFusedBias] = conv->input(2);
  inputs[kFusedResidual] = residual ? residual : graph.insertNode(graph.createNone())->output();
  inputs[kFusedWeightSize] = constant(IValue(IntArrayRef(p.weight_size)));
  inputs[kFusedStride] = one_d ? constant(IValue(IntArrayRef(p.stride))) : conv->input(at.stride);
  inputs[kFusedPadding] = one_d ? constant(IValue(IntArrayRef(p.padding))) : conv->input(at.padding);
  inputs[kFusedDilation] = one_d ? constant(IValue(IntArrayRef(p.dilation))) : conv->input(at.dilation);
  inputs[kFusedGroups] = conv->input(at.groups);
  inputs[kFusedInBlock] = constant(IValue(int64_t{0}));
  inputs[kFusedOutBlock] = constant(IValue(int64_t{0}));
  inputs[kFusedActivation] = constant(IValue(p.activation));
  inputs[kFusedAlpha] = constant(IValue(p.alpha));
  inputs[kFusedBeta] = constant(IValue(p.beta));
  Node* fused = graph.insertNode(graph.create(conv2dFusedSymbol(), inputs));
  fused->output()->setType(TensorType::get());
  fused->setSourceRange(conv->sourceRange());
  result->replaceAllUsesWith(one_d ? insertUnsqueezeOrSqueeze(graph, "squeeze", fused->output(), views)
                                   : fused->output());
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
  HeightOneViews views;
  for (Node* conv : convs) changed |= fuseOne(graph, conv, views);
  if (!views.squeezes.empty()) collapseHeightOneViews(*graph, views);
  if (changed) eliminateDeadCode(graph);
  return changed;
}

}  // namespace kiln
