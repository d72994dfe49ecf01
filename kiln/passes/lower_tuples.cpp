#include "kiln/passes/lower_tuples.h"

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/dead_code_elimination.h"

namespace kiln {

namespace {

void forwardTupleElements(Node* n) {
  if (n->kind() != prim::TupleUnpack && n->kind() != prim::TupleIndex && n->kind() != prim::TupleSlice) return;
  Node* construct = n->input(0)->node();
  if (construct->kind() != prim::TupleConstruct) return;
  if (n->kind() == prim::TupleUnpack) {
    for (size_t i = 0; i < n->outputs().size() && i < construct->inputs().size(); ++i) {
      n->output(i)->replaceAllUsesWith(construct->input(i));
    }
  } else if (n->kind() == prim::TupleIndex) {
    auto index = toIValue(n->input(1));
    if (!index || !index->isInt()) return;
    auto size = static_cast<int64_t>(construct->inputs().size());
    int64_t i = index->toInt() < 0 ? index->toInt() + size : index->toInt();
    // Out of range: the node stays and raises when run.
    if (i >= 0 && i < size) n->output()->replaceAllUsesWith(construct->input(static_cast<size_t>(i)));
  } else {
    int64_t begin = n->i(attr::beg);
    int64_t end = n->i(attr::end);
    if (begin < 0 || begin > end || end > static_cast<int64_t>(construct->inputs().size())) return;
    std::vector<Value*> elements(construct->inputs().begin() + begin, construct->inputs().begin() + end);
    Graph* graph = n->owningGraph();
    WithInsertPoint guard(n);
    Node* slice = graph->insertNode(graph->createTuple(elements));
    n->output()->replaceAllUsesWith(slice->output());
  }
}

}  // namespace

void lowerSimpleTuples(const std::shared_ptr<Graph>& graph) {
  walkNodes(*graph, WalkOrder::PreOrder, forwardTupleElements);
  eliminateDeadCode(graph);
}

}  // namespace kiln
