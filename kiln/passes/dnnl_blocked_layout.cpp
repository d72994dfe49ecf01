#include "kiln/passes/dnnl_blocked_layout.h"

#include <unordered_map>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/dnnl_conv_detail.h"
#include "kiln/passes/frozen_folding_detail.h"

namespace kiln {

namespace {

using namespace detail;

struct Blocked {
  Value* value;      // the blocked tensor
  int64_t channels;  // its logical channel count
};

class BlockedLayout {
 public:
  BlockedLayout(const std::shared_ptr<Graph>& graph, int64_t block) : graph_(*graph), block_(block), db_(graph) {}

  bool run() {
    std::vector<Node*> nodes;
    for (Node* n : graph_.block()->nodes()) nodes.push_back(n);
    for (Node* n : nodes) {
      if (isConv2dFused(n)) {
        convolution(n);
      } else if (n->kind() == Symbol::aten("max_pool2d")) {
        maxPool(n);
      } else if (n->kind() == Symbol::aten("cat")) {
        cat(n);
      }
    }
    return changed_;
  }

 private:
  Value* constant(const IValue& v, Node* before) {
    WithInsertPoint guard(before);
    return graph_.insertConstant(v);
  }

  // `v` blocked, converting before `user` when no blocked form exists yet.
  Value* blockedOf(Value* v, Node* user, int64_t channels) {
    auto it = blocked_.find(v);
    if (it != blocked_.end() && it->second.channels == channels) return it->second.value;
    Node* to = graph_.create(Symbol::fromQualString("kiln::to_blocked"), {v, constant(IValue(block_), user)});
    to->insertBefore(user);
    to->output()->setType(TensorType::get());
    blocked_[v] = {to->output(), channels};
    return to->output();
  }

  // `n` now writes its output blocked: the other uses read a conversion.
  void publishBlocked(Node* n, int64_t channels) {
    Value* out = n->output();
    Node* from = graph_.create(Symbol::fromQualString("kiln::from_blocked"), {out, constant(IValue(channels), n)});
    from->insertAfter(n);
    from->output()->setType(TensorType::get());
    out->replaceAllUsesWith(from->output());
    from->replaceInput(0, out);
    // Rank checks (a scripted BatchNorm's `input.dim()`) need no conversion:
    // the plain form is always 4-d.
    std::vector<Node*> rank_checks;
    for (const Use& use : from->output()->uses())
      if (use.user->kind() == Symbol::aten("dim") && use.user->inputs().size() == 1) rank_checks.push_back(use.user);
    for (Node* check : rank_checks) {
      check->output()->replaceAllUsesWith(constant(IValue(int64_t{4}), check));
      check->destroy();
    }
    blocked_[from->output()] = {out, channels};
    changed_ = true;
  }

  void convolution(Node* n) {
    auto p = fusedConvParams(n);
    if (!p || p->in_block != 0 || p->out_block != 0) return;
    const int64_t in_channels = p->weight_size[1] * p->groups, out_channels = p->weight_size[0];
    auto weight = constantTensor(n->input(kFusedWeight));
    if (!weight || weight->dim() != 4) return;
    if (db_.hasWriters(n->output())) return;
    auto it = blocked_.find(n->input(kFusedInput));
    bool read_blocked = (it != blocked_.end() && it->second.channels == in_channels) ||
                        (in_channels > 4 && !db_.hasWriters(n->input(kFusedInput)));
    if (residualUnsafe(n, *p, out_channels)) return;
    FusedConv2dParams q = *p;
    q.in_block = read_blocked ? block_ : 0;
    q.out_block = block_;
    if (!prepackConv2dWeight(*weight, q)) return;  // no blocked implementation: stay plain
    if (read_blocked) n->replaceInput(kFusedInput, blockedOf(n->input(kFusedInput), n, in_channels));
    if (q.has_residual) n->replaceInput(kFusedResidual, blockedOf(n->input(kFusedResidual), n, out_channels));
    setConstantInput(n, kFusedInBlock, IValue(q.in_block));
    setConstantInput(n, kFusedOutBlock, IValue(q.out_block));
    publishBlocked(n, out_channels);
  }

  // A plain residual that something writes to cannot be converted once.
  bool residualUnsafe(Node* n, const FusedConv2dParams& p, int64_t channels) {
    if (!p.has_residual) return false;
    auto it = blocked_.find(n->input(kFusedResidual));
    if (it != blocked_.end() && it->second.channels == channels) return false;
    return db_.hasWriters(n->input(kFusedResidual));
  }

  // max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode) of a blocked value.
  void maxPool(Node* n) {
    if (n->inputs().size() != 6 || n->outputs().size() != 1) return;
    auto it = blocked_.find(n->input(0));
    if (it == blocked_.end() || db_.hasWriters(n->output())) return;
    for (size_t i = 1; i < 6; ++i)
      if (!toIValue(n->input(i))) return;
    auto kernel = toIValue(n->input(1))->toDimVector(), padding = toIValue(n->input(3))->toDimVector();
    auto stride = toIValue(n->input(2))->toDimVector(), dilation = toIValue(n->input(4))->toDimVector();
    if ((kernel.size() != 1 && kernel.size() != 2) || stride.size() > 2 ||
        (padding.size() != 1 && padding.size() != 2) || (dilation.size() != 1 && dilation.size() != 2))
      return;
    for (size_t i = 0; i < 2; ++i) {
      auto at = [&](const DimVector& v) { return v.size() == 1 ? v[0] : v[i]; };
      // Arguments torch rejects keep torch's operator and its message.
      if (at(kernel) <= 0 || at(padding) < 0 || at(padding) > at(kernel) / 2 || at(dilation) <= 0 ||
          (!stride.empty() && at(stride) <= 0))
        return;
    }
    const int64_t channels = it->second.channels;
    std::vector<Value*> inputs{it->second.value, constant(IValue(channels), n)};
    for (size_t i = 1; i < 6; ++i) inputs.push_back(n->input(i));
    Node* pool = graph_.create(Symbol::fromQualString("kiln::blocked_max_pool2d"), inputs);
    pool->insertBefore(n);
    pool->output()->setType(TensorType::get());
    n->output()->replaceAllUsesWith(pool->output());
    n->destroy();
    publishBlocked(pool, channels);
  }

  // cat(ListConstruct(blocked...), 1) of whole blocks: the same cat of the blocked tensors.
  void cat(Node* n) {
    if (n->inputs().size() != 2 || n->outputs().size() != 1) return;
    auto dim = toIValue(n->input(1));
    Node* list = n->input(0)->node();
    if (!dim || !dim->isInt() || dim->toInt() != 1 || list->kind() != Symbol::prim("ListConstruct") ||
        list->inputs().empty() || db_.hasWriters(n->output()))
      return;
    std::vector<Value*> parts;
    int64_t channels = 0;
    for (Value* v : list->inputs()) {
      auto it = blocked_.find(v);
      if (it == blocked_.end() || it->second.channels % block_ != 0) return;
      parts.push_back(it->second.value);
      channels += it->second.channels;
    }
    Node* blocked_list = graph_.createList(TensorType::get(), parts);
    blocked_list->insertBefore(n);
    Node* blocked_cat = graph_.create(Symbol::aten("cat"), {blocked_list->output(), n->input(1)});
    blocked_cat->insertBefore(n);
    blocked_cat->output()->setType(TensorType::get());
    n->output()->replaceAllUsesWith(blocked_cat->output());
    n->destroy();
    publishBlocked(blocked_cat, channels);
  }

  Graph& graph_;
  int64_t block_;
  // Of the graph as it was: a value something writes to cannot have a
  // blocked copy (the copy would miss the write).
  AliasDb db_;
  std::unordered_map<const Value*, Blocked> blocked_;
  bool changed_ = false;
};

}  // namespace

bool useDnnlBlockedLayout(const std::shared_ptr<Graph>& graph, int64_t block) {
  if (block == 0) block = dnnlChannelBlock();
  if (block != 8 && block != 16) return false;
  bool changed = BlockedLayout(graph, block).run();
  if (changed) eliminateDeadCode(graph);
  return changed;
}

}  // namespace kiln
