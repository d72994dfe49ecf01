// The peephole stage that makes one tensor stand for another (PyTorch
// 1.13's PeepholeOptimizeAliasSensitive). `x + 0` is a new tensor; replacing
// it by x (the operator's fold, kiln/ops/fold_rules.h, which also checks that
// the result type is x's) is only right when nobody can tell the two apart:
// neither is written and they do not both reach outside the graph. 1.13 also drops `x + 0` on bool tensors and tensors
// of unknown dtype (whose result is int64) and `dim(conv2d(x))` for unbatched x; kiln does not.
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/ops/fold_rules.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/peephole_detail.h"
#include "kiln/util/jit_log.h"

namespace kiln::detail {

namespace {

Symbol conv1d() {
  static const Symbol s = Symbol::aten("conv1d");
  return s;
}
Symbol conv3d() {
  static const Symbol s = Symbol::aten("conv3d");
  return s;
}

// The rank of a batched conv's input and output.
std::optional<size_t> batchedConvRank(Symbol kind) {
  if (kind == conv1d()) return 3;
  if (kind == aten::conv2d) return 4;
  if (kind == conv3d()) return 5;
  return std::nullopt;
}

bool hasTensorFold(const Node* n) { return folds::hasFold(n, /*tensor_result=*/true); }

class AliasSensitivePeepholes {
 public:
  AliasSensitivePeepholes(std::shared_ptr<Graph> graph, bool shape_peepholes)
      : graph_(std::move(graph)), db_(graph_), shape_peepholes_(shape_peepholes) {}

  bool optimize(Block* block) {
    bool changed = false;
    walkNodes(block, WalkOrder::PostOrder, [&](Node* n) {
      if (batchedConvRank(n->kind())) {
        changed |= foldConvDims(n);
      } else if (Value* value = foldedToInput(n)) {
        changed |= replaceOutputWith(n, value);
      }
    });
    return changed;
  }

 private:
  // `x.dim()` of a conv's output: the rank of its input, when that is the
  // batched rank and nothing may resize the output.
  bool foldConvDims(Node* n) {
    size_t rank = *batchedConvRank(n->kind());
    auto input = n->inputs().empty() ? nullptr : n->input(0)->type()->cast<TensorType>();
    if (!shape_peepholes_ || !input || input->dim() != rank || db_.hasWriters(n->output())) return false;
    bool changed = false;
    for (const Use& use : std::vector<Use>(n->output()->uses())) {
      if (use.user->kind() != aten::dim) continue;
      WithInsertPoint guard(use.user);
      GRAPH_UPDATE("replacing ", *use.user, "with the rank ", rank);
      use.user->output()->replaceAllUsesWith(graph_->insertConstant(static_cast<int64_t>(rank)));
      changed = true;
    }
    return changed;
  }

  // The input that a tensor op's fold (`x + 0`, `x * 1`; OpDescription::fold)
  // says its new output equals. Folds read refined dtypes: only with shape
  // peepholes.
  Value* foldedToInput(Node* n) const {
    if (!shape_peepholes_ || !hasTensorFold(n)) return nullptr;
    FoldResult folded = folds::foldNode(n);
    if (!folded.value || folded.same_tensor || folded.value->node() == n) return nullptr;
    return folded.value;
  }

  // Once a value replaces another, the database no longer knows what the
  // two alias: values that may alias either are left alone from then on
  // (1.13 does the same rather than rebuild the database each time).
  bool replaceOutputWith(Node* n, Value* input) {
    Value* output = n->output();
    if (!db_.safeToChangeAliasingRelationship(input, output)) return false;
    std::vector<const Value*> stale(stale_.begin(), stale_.end());
    if (db_.mayAlias(std::vector<const Value*>{input, output}, stale)) return false;
    GRAPH_UPDATE("replacing ", *n, "with %", input->debugName());
    output->replaceAllUsesWith(input);
    stale_.insert(input);
    stale_.insert(output);
    return true;
  }

  std::shared_ptr<Graph> graph_;
  AliasDb db_;
  bool shape_peepholes_;
  ValueSet stale_;
};

}  // namespace

bool peepholeOptimizeAliasSensitive(const std::shared_ptr<Graph>& graph, bool shape_peepholes) {
  auto candidate = [&](const Node* n) { return batchedConvRank(n->kind()) || (shape_peepholes && hasTensorFold(n)); };
  if (!anyNodeIn(graph->block(), candidate)) return false;
  return AliasSensitivePeepholes(graph, shape_peepholes).optimize(graph->block());
}

}  // namespace kiln::detail
