#include "kiln/passes/batch_mm.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/peephole.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

// 1.13's tuning: trees of fewer products, or fewer products sharing an
// operand (8 is the loop unrolling factor), are not worth batching.
constexpr uint64_t kMinTreeSize = 4;
constexpr size_t kMinSideBatch = 8;

enum class Side : int64_t { Lhs = 0, Rhs = 1 };

bool isTensor(const Value* v) { return v->type()->kind() == TypeKind::Tensor; }

bool isMatmul(const Node* n) {
  return n->kind() == aten::mm && n->inputs().size() == 2 && isTensor(n->input(0)) && isTensor(n->input(1));
}

bool isTranspose(const Node* n) { return n->kind() == aten::t && n->inputs().size() == 1 && isTensor(n->input(0)); }

// `a + b` of two tensors with alpha 1 (1.13 also takes `a + 2 * b`, wrongly).
bool isPlainAdd(const Node* n) {
  if (n->kind() != aten::add || n->inputs().size() != 3 || !isTensor(n->input(0)) || !isTensor(n->input(1))) {
    return false;
  }
  auto alpha = toIValue(n->input(2));
  return alpha && (alpha->isInt() || alpha->isDouble()) && alpha->toDouble() == 1;
}

bool hasMutableOperators(const Block* block) {
  return walkNodes(block, WalkOrder::PreOrder,
                   [](const Node* n) {
                     const FunctionSchema* schema = n->kind().isAten() ? n->maybeSchema() : nullptr;
                     return schema && schema->isMutable() ? WalkResult::interrupt() : WalkResult::advance();
                   })
      .wasInterrupted();
}

// A node's place in a tree of sums of products: the number of products
// under it, and whether it is still a root (not yet taken by a bigger tree).
struct TreeToken {
  uint64_t size = 0;
  bool is_root = false;
};

class TreeReducer {
 public:
  explicit TreeReducer(Graph& graph) : graph_(graph) {}

  // Inner blocks first, as when each block's scan recursed into the blocks
  // it met: a block's rewrites only add uses to the values of the blocks
  // around it, which were used already, so its scan sees the same counts.
  void run(Block* root) {
    walkBlocks(root, WalkOrder::PostOrder, [this](Block* b) { reduceTrees(b); });
  }

 private:
  void reduceTrees(Block* block) {
    std::unordered_map<const Node*, TreeToken> tokens;
    std::vector<Node*> labeled;  // in program order, so that rewrites are deterministic
    for (Node* n : block->nodes()) {
      if (isMatmul(n)) {
        tokens[n] = {1, true};
        labeled.push_back(n);
      } else if (isTranspose(n)) {
        auto input = tokens.find(n->input()->node());
        if (input == tokens.end() || !isMatmul(n->input()->node())) continue;
        input->second.is_root = false;
        tokens[n] = {1, true};
        labeled.push_back(n);
      } else if (isPlainAdd(n)) {
        const Node* lhs = n->input(0)->node();
        const Node* rhs = n->input(1)->node();
        auto l = tokens.find(lhs);
        auto r = tokens.find(rhs);
        // One use each: the subtrees are not shared, and neither operand
        // can depend on the other.
        if (l == tokens.end() || r == tokens.end() || lhs == rhs || !l->second.is_root || !r->second.is_root ||
            lhs->output()->uses().size() != 1 || rhs->output()->uses().size() != 1) {
          continue;
        }
        l->second.is_root = r->second.is_root = false;
        tokens[n] = {l->second.size + r->second.size, true};
        labeled.push_back(n);
      }
    }
    for (Node* root : labeled) {
      const TreeToken& token = tokens[root];
      if (token.is_root && token.size >= kMinTreeSize) reduce(root);
    }
  }

  // The products under `root`, in 1.13's order; `mm(a, b).t()` becomes
  // `mm(b.t(), a.t())`.
  std::vector<Node*> gatherMatmuls(Node* root) {
    std::vector<Node*> matmuls;
    std::vector<Node*> stack{root};
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      if (isMatmul(n)) {
        matmuls.push_back(n);
      } else if (isTranspose(n)) {
        Node* mm = n->input()->node();
        WithInsertPoint guard(mm);
        Value* at = graph_.insert(aten::t, {mm->input(0)});
        Value* bt = graph_.insert(aten::t, {mm->input(1)});
        Value* product = graph_.insert(aten::mm, {bt, at});
        product->setType(n->output()->type());
        n->output()->replaceAllUsesWith(product);
        matmuls.push_back(product->node());
      } else {
        stack.push_back(n->input(0)->node());
        stack.push_back(n->input(1)->node());
      }
    }
    return matmuls;
  }

  void reduce(Node* root) {
    std::vector<Node*> matmuls = gatherMatmuls(root);
    WithInsertPoint guard(root);
    Node* reduce = graph_.insertNode(graph_.create(prim::MMTreeReduce));
    for (Node* mm : matmuls) reduce->addInput(mm->input(0));
    for (Node* mm : matmuls) reduce->addInput(mm->input(1));
    reduce->output()->setType(root->output()->type());
    GRAPH_UPDATE("replacing the tree of ", matmuls.size(), " products under ", *root, "with ", *reduce);
    root->output()->replaceAllUsesWith(reduce->output());
  }

  Graph& graph_;
};

class SideBatcher {
 public:
  SideBatcher(Graph& graph, AliasDb& db) : graph_(graph), db_(db) {}

  void run(Block* block) {
    std::vector<Node*> matmuls;
    for (Node* n : block->nodes()) {
      if (isMatmul(n)) {
        matmuls.push_back(n);
      } else {
        for (Block* b : n->blocks()) run(b);
      }
    }
    for (Node* mm : matmuls) {
      for (Value* input : mm->inputs()) {
        if (!considered_.insert(input).second) continue;
        auto [lhs_uses, rhs_uses] = independentUses(input);
        if (lhs_uses.size() >= kMinSideBatch) batch(lhs_uses, Side::Lhs);
        if (rhs_uses.size() >= kMinSideBatch) batch(rhs_uses, Side::Rhs);
      }
    }
  }

 private:
  // The products in `v`'s block with `v` as their left (right) operand
  // only, in program order, keeping those that could all run at the first
  // one's place.
  std::pair<std::vector<Node*>, std::vector<Node*>> independentUses(Value* v) {
    const Block* block = v->node()->owningBlock();
    std::vector<Node*> lhs_uses, rhs_uses;
    for (const Use& use : v->uses()) {
      Node* user = use.user;
      if (user->owningBlock() != block || !isMatmul(user) || user->input(1 - use.offset) == v) continue;
      (use.offset == 0 ? lhs_uses : rhs_uses).push_back(user);
    }
    return {independent(std::move(lhs_uses)), independent(std::move(rhs_uses))};
  }

  std::vector<Node*> independent(std::vector<Node*> mms) {
    std::sort(mms.begin(), mms.end(), [](const Node* a, const Node* b) { return a->isBefore(b); });
    std::vector<Node*> kept;
    for (Node* mm : mms) {
      bool movable = std::all_of(kept.begin(), kept.end(),
                                 [&](Node* earlier) { return db_.couldMoveBeforeTopologically(mm, earlier); });
      if (movable) kept.push_back(mm);
    }
    return kept;
  }

  void batch(const std::vector<Node*>& mms, Side side) {
    // Gather the products next to the last one.
    for (size_t i = mms.size() - 1; i-- > 0;) {
      if (!db_.moveBeforeTopologicallyValid(mms[i], mms[i + 1])) return;
    }
    size_t shared = side == Side::Lhs ? 0 : 1;
    WithInsertPoint guard(mms[0]);
    Node* batch = graph_.insertNode(graph_.create(prim::MMBatchSide, mms.size()));
    batch->i_(Symbol::attr("side"), static_cast<int64_t>(side));
    batch->addInput(mms[0]->input(shared));
    for (size_t i = 0; i < mms.size(); ++i) {
      batch->addInput(mms[i]->input(1 - shared));
      batch->output(i)->setType(mms[i]->output()->type());
      mms[i]->output()->replaceAllUsesWith(batch->output(i));
    }
    GRAPH_UPDATE("batching ", mms.size(), " products sharing %", mms[0]->input(shared)->debugName(), " into ", *batch);
  }

  Graph& graph_;
  AliasDb& db_;
  std::unordered_set<const Value*> considered_;
};

}  // namespace

void batchMM(const std::shared_ptr<Graph>& graph) {
  if (hasMutableOperators(graph->block())) return;
  GRAPH_DUMP("before batching matrix multiplies:\n", *graph);
  TreeReducer(*graph).run(graph->block());
  {
    AliasDb db(graph);
    SideBatcher(*graph, db).run(graph->block());
  }
  eliminateDeadCode(graph);
  // The transposed products may leave `x.t().t()`. As in 1.13, without shape
  // peepholes.
  peepholeOptimize(graph, /*disable_shape_peepholes=*/true);
  GRAPH_DUMP("after batching matrix multiplies:\n", *graph);
}

}  // namespace kiln
