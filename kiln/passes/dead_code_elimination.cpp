#include "kiln/passes/dead_code_elimination.h"

#include "kiln/ir/graph.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/analysis/node_effects.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

// Inverse mark and sweep: mark what the return nodes and side effects need,
// then delete the rest. The alias database is built the first time a node
// that may write is met: most graphs have none.
class DeadCodeEliminator {
 public:
  explicit DeadCodeEliminator(std::shared_ptr<Graph> graph) : graph_(std::move(graph)) {}

  void run(Block* block) {
    mark(block->returnNode());
    mark(block);
    sweep(block);
  }

 private:
  void addLive(const Value* v) { live_values_.insert(v); }

  // Marks `n` and every node enclosing it, and makes its inputs live.
  bool mark(Node* n) {
    if (!marked_.insert(n).second) return false;
    if (Block* b = n->owningBlock()) {
      if (Node* outer = b->owningNode()) mark(outer);
    }
    for (const Value* input : n->inputs()) addLive(input);
    return true;
  }

  // A nested block's return node only makes live the values whose outer
  // counterparts are live (the if's output, the loop's output or the
  // body's own use of the carried value).
  bool markReturnNode(Node* ret) {
    if (marked_.count(ret)) return false;
    Node* outer = ret->owningBlock()->owningNode();
    if (!outer) return mark(ret);
    if (outer->kind() == prim::Loop) {
      Block* body = outer->blocks()[0];
      for (size_t i = 0; i < outer->outputs().size(); ++i) {
        if (live_values_.count(outer->output(i)) || body->inputs()[i + 1]->hasUses()) {
          addLive(body->outputs()[i + 1]);
        }
      }
      addLive(body->outputs()[0]);  // the continue condition
    } else {
      for (size_t i = 0; i < outer->outputs().size(); ++i) {
        if (live_values_.count(outer->output(i))) addLive(ret->input(i));
      }
    }
    marked_.insert(ret);
    return true;
  }

  bool mark(Block* block) {
    bool any = false;
    for (Node* n : block->nodes()) {
      if (hasEffects(n)) any |= mark(n);
    }
    any |= markReturnNode(block->returnNode());
    for (Node* n : block->nodes().reverse()) {
      if (n->kind() == prim::Loop) {
        // A write in one iteration may feed the next: repeat to a fixed point.
        while (mark(n->blocks()[0])) any = true;
      } else {
        for (Block* b : n->blocks()) any |= mark(b);
      }
      any |= markIfLive(n);
    }
    return any;
  }

  bool markIfLive(Node* n) {
    for (const Value* out : n->outputs()) {
      if (live_values_.count(out)) return mark(n);
    }
    // Writes to memory a live value may refer to. (A node with blocks is
    // marked through its blocks' nodes.)
    if (AliasDb::mayWrite(n) && aliasDb().writesToAlias(n, live_values_)) return mark(n);
    return false;
  }

  bool hasEffects(Node* n) {
    if (auto it = memo_.find(n); it != memo_.end()) return it->second;
    // Writes to memory outside the graph's view are effects too.
    bool effects = hasSideEffects(n) || (AliasDb::mayWrite(n) && aliasDb().writesToWildcard(n));
    for (Block* b : n->blocks()) {
      for (Node* inner : b->nodes()) effects |= hasEffects(inner);
    }
    memo_.emplace(n, effects);
    return effects;
  }

  void sweep(Block* block) {
    for (auto it = block->nodes().reverse().begin(); it != block->nodes().reverse().end(); ++it) {
      Node* n = *it;
      removeDeadIfOutputs(n);
      removeDeadLoopOutputs(n);
      for (Block* b : n->blocks()) sweep(b);
      if (!marked_.count(n) && !n->hasUses()) {
        GRAPH_UPDATE("removing dead node ", *n);
        it.destroyCurrent();
      }
    }
  }

  static void removeDeadIfOutputs(Node* n) {
    if (n->kind() != prim::If) return;
    for (size_t i = n->outputs().size(); i-- > 0;) {
      if (n->output(i)->hasUses()) continue;
      n->eraseOutput(i);
      for (Block* b : n->blocks()) b->eraseOutput(i);
    }
  }

  static void removeDeadLoopOutputs(Node* n) {
    if (n->kind() != prim::Loop) return;
    Block* body = n->blocks()[0];
    for (size_t i = n->outputs().size(); i-- > 0;) {
      if (n->output(i)->hasUses() || body->inputs()[i + 1]->hasUses()) continue;
      n->eraseOutput(i);
      n->removeInput(i + 2);
      body->eraseInput(i + 1);
      body->eraseOutput(i + 1);
    }
  }

  AliasDb& aliasDb() {
    if (!alias_db_) alias_db_ = std::make_unique<AliasDb>(graph_);
    return *alias_db_;
  }

  std::shared_ptr<Graph> graph_;
  std::unique_ptr<AliasDb> alias_db_;
  std::unordered_map<Node*, bool> memo_;
  std::unordered_set<Node*> marked_;
  ValueSet live_values_;
};

}  // namespace

void eliminateDeadCode(const std::shared_ptr<Graph>& graph) {
  DeadCodeEliminator(graph).run(graph->block());
  GRAPH_DUMP("after dead code elimination:\n", *graph);
}

}  // namespace kiln
