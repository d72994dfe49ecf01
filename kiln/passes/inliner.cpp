#include "kiln/passes/inliner.h"

#include <unordered_map>
#include <unordered_set>

#include "kiln/core/function.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

class Inliner {
 public:
  // Post-order: a call is replaced (the callee's nodes put before it need
  // no visit: they were inlined already) and erased.
  void inlineBlock(Block* block) {
    walkNodes(block, WalkOrder::PostOrder, [this](Node* n) {
      if (n->kind() == prim::CallFunction) {
        if (Function* callee = functionCalledBy(n)) inlineCall(n, *callee, 1);
      } else if (n->kind() == prim::CallMethod) {
        if (Function* callee = methodCalledBy(n)) inlineCall(n, *callee, 0);
      }
    });
  }

 private:
  static Function* functionCalledBy(Node* call) {
    if (call->inputs().empty()) return nullptr;
    Node* constant = call->input(0)->node();
    if (constant->kind() != prim::Constant) return nullptr;
    auto type = constant->output()->type()->cast<FunctionType>();
    return type ? type->function().get() : nullptr;
  }

  static Function* methodCalledBy(Node* call) {
    if (call->inputs().empty() || !call->hasAttribute(attr::name)) return nullptr;
    auto cls = call->input(0)->type()->cast<ClassType>();
    return cls ? cls->findMethod(call->s(attr::name)) : nullptr;
  }

  // The callee's graph with its own calls inlined, made once per function;
  // null when it has no graph or is being inlined already (recursion).
  const Graph* inlinedGraphOf(Function& f) {
    if (in_progress_.count(&f)) return nullptr;
    if (auto it = inlined_.find(&f); it != inlined_.end()) return it->second.get();
    std::shared_ptr<Graph> body = f.inlinableGraph();
    if (body) {
      body = body->copy();
      in_progress_.insert(&f);
      inlineBlock(body->block());
      in_progress_.erase(&f);
    }
    return inlined_.emplace(&f, std::move(body)).first->second.get();
  }

  // Replaces `call` (its arguments from input `first_argument` on) by a copy
  // of the callee's graph.
  void inlineCall(Node* call, Function& callee, size_t first_argument) {
    const Graph* body = inlinedGraphOf(callee);
    if (!body || call->inputs().size() - first_argument != body->inputs().size() ||
        call->outputs().size() != body->outputs().size()) {
      return;
    }
    GRAPH_UPDATE("Inlining ", call->kind() == prim::CallMethod ? "method '" : "function '", callee.name(), "' to ",
                 *call);
    GRAPH_UPDATE("Function body: ", *body);
    if (first_argument == 1) call->removeInput(0);
    Graph* graph = call->owningGraph();
    WithInsertPoint guard(call);
    std::vector<Value*> results = graph->insertGraph(*body, call->inputs());
    for (size_t i = 0; i < results.size(); ++i) {
      Value* old_result = call->output(i);
      if (old_result->hasDebugName()) results[i]->setDebugName(old_result->debugName());
      old_result->replaceAllUsesWith(results[i]);
    }
    call->destroy();
  }

  std::unordered_map<const Function*, std::shared_ptr<Graph>> inlined_;
  std::unordered_set<const Function*> in_progress_;
};

}  // namespace

void inlineCalls(const std::shared_ptr<Graph>& graph) {
  GRAPH_DUMP("Before inlining:\n", *graph);
  Inliner().inlineBlock(graph->block());
  GRAPH_DUMP("After inlining:\n", *graph);
}

}  // namespace kiln
