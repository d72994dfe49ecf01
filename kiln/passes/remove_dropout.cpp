#include "kiln/passes/remove_dropout.h"

#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"

namespace kiln {

namespace {

bool isDropout(const Node* n) {
  static const Symbol kinds[] = {Symbol::aten("dropout"),
                                 Symbol::aten("dropout_"),
                                 Symbol::aten("feature_dropout"),
                                 Symbol::aten("feature_dropout_"),
                                 Symbol::aten("alpha_dropout"),
                                 Symbol::aten("alpha_dropout_"),
                                 Symbol::aten("feature_alpha_dropout"),
                                 Symbol::aten("feature_alpha_dropout_")};
  for (Symbol k : kinds) {
    if (n->kind() == k) return n->inputs().size() == 3 && n->outputs().size() == 1;
  }
  return false;
}

bool trainIsFalse(const Node* n) {
  auto train = toIValue(n->input(2));
  return train && train->isBool() && !train->toBool();
}

}  // namespace

bool removeDropout(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> removable;
  walkNodes(*graph, WalkOrder::PreOrder, [&](Node* n) {
    if (isDropout(n) && trainIsFalse(n)) removable.push_back(n);
  });
  for (Node* n : removable) {
    n->output()->replaceAllUsesWith(n->input(0));
    n->destroy();
  }
  return !removable.empty();
}

}  // namespace kiln
