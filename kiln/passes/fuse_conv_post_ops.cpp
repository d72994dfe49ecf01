#include "kiln/passes/fuse_conv_post_ops.h"

#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/dnnl_conv_detail.h"

namespace kiln {

namespace {

using namespace detail;

Symbol fusableSymbol() {
  static const Symbol s = Symbol::fromQualString("kiln::conv2d_fusable");
  return s;
}

// aten::conv2d(input, weight, bias, int[] stride, int[] padding, int[]
// dilation, int groups) with constant parameters and padding not a string.
bool isConvolution(const Node* n) {
  if (n->kind() != Symbol::aten("conv2d") || n->inputs().size() != 7 || n->outputs().size() != 1) return false;
  if (n->input(4)->type()->kind() == TypeKind::String) return false;
  for (size_t i = 3; i < 6; ++i) {
    auto v = toIValue(n->input(i));
    if (!v || !v->isIntList()) return false;
  }
  auto groups = toIValue(n->input(6));
  return groups && groups->isInt();
}

// Already the fallback branch of a fused convolution.
bool inFallback(const Node* n) {
  const Node* owner = n->owningBlock()->owningNode();
  return owner && owner->kind() == Symbol::prim("If") && owner->input(0)->node()->kind() == fusableSymbol();
}

bool fuseOne(const std::shared_ptr<Graph>& graph_ptr, Node* conv) {
  Graph& graph = *graph_ptr;
  Value* result = conv->output();
  Node* last = conv;
  Value* residual = nullptr;
  std::vector<Node*> absorbed;
  if (Node* user = onlyUser(result)) {
    if (Value* other = addedOperand(user, result)) {
      residual = other;
      absorbed.push_back(user);
      last = user;
      result = user->output();
    }
  }
  Activation act{"none"};
  if (Node* user = onlyUser(result); user && user->input(0) == result) {
    if (auto a = activationOf(user)) {
      act = *a;
      absorbed.push_back(user);
      last = user;
      result = user->output();
    }
  }
  if (absorbed.empty()) return false;  // nothing to gain over aten::conv2d
  for (Node* n : absorbed)
    if (n->owningBlock() != conv->owningBlock()) return false;
  // The fused node runs where the last absorbed one ran: what the
  // convolution reads (the weight too: it is a live value) must be the same there.
  AliasDb db(graph_ptr);
  ValueSet read{conv->input(0), conv->input(1), conv->input(2)};
  if (residual) read.insert(residual);
  for (Node* n = conv->next(); n != last; n = n->next())
    if (db.writesToAlias(n, read)) return false;

  WithInsertPoint guard(last);
  auto constant = [&](const IValue& v) { return graph.insertConstant(v); };
  Value* none = graph.insertNode(graph.createNone())->output();
  Value* r = residual ? residual : none;
  Value* activation = constant(IValue(act.name));
  Node* check =
      graph.insertNode(graph.create(fusableSymbol(), {conv->input(0), conv->input(1), conv->input(2), r, conv->input(3),
                                                      conv->input(4), conv->input(5), conv->input(6), activation}));
  check->output()->setType(BoolType::get());
  Node* branch = graph.insertNode(graph.create(Symbol::prim("If"), {check->output()}));
  // The fused branch runs only for float32, whose result the original's type describes.
  branch->output()->setType(result->type());
  branch->setSourceRange(conv->sourceRange());
  Block* fused_block = branch->addBlock();
  Block* fallback = branch->addBlock();
  result->replaceAllUsesWith(branch->output());
  {
    WithInsertPoint inside(fused_block);
    Node* size = graph.insertNode(graph.create(Symbol::aten("size"), {conv->input(1)}));
    size->output()->setType(ListType::ofInts());
    std::vector<Value*> inputs(kFusedInputCount);
    inputs[kFusedInput] = conv->input(0);
    inputs[kFusedWeight] = conv->input(1);
    inputs[kFusedBias] = conv->input(2);
    inputs[kFusedResidual] = r;
    inputs[kFusedWeightSize] = size->output();
    inputs[kFusedStride] = conv->input(3);
    inputs[kFusedPadding] = conv->input(4);
    inputs[kFusedDilation] = conv->input(5);
    inputs[kFusedGroups] = conv->input(6);
    inputs[kFusedInBlock] = constant(IValue(int64_t{0}));
    inputs[kFusedOutBlock] = constant(IValue(int64_t{0}));
    inputs[kFusedActivation] = activation;
    inputs[kFusedAlpha] = constant(IValue(act.alpha));
    inputs[kFusedBeta] = constant(IValue(act.beta));
    Node* fused = graph.insertNode(graph.create(conv2dFusedSymbol(), inputs));
    fused->output()->setType(TensorType::get());
    fused->setSourceRange(conv->sourceRange());
    fused_block->registerOutput(fused->output());
  }
  conv->moveBefore(fallback->returnNode());
  for (Node* n : absorbed) n->moveBefore(fallback->returnNode());
  fallback->registerOutput(result);
  return true;
}

}  // namespace

bool fuseConvolutionPostOps(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> convs;
  walkNodes(*graph, WalkOrder::PreOrder, [&](Node* n) {
    if (isConvolution(n) && !inFallback(n)) convs.push_back(n);
  });
  bool changed = false;
  for (Node* conv : convs) changed |= fuseOne(graph, conv);
  return changed;
}

}  // namespace kiln
