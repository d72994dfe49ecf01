#include "kiln/passes/create_autodiff_subgraphs.h"

#include "kiln/core/derivative_spec.h"
#include "kiln/core/op_description.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/subgraph_utils.h"

namespace kiln {

bool isDifferentiableNode(const Node* n) {
  if (n->kind() == prim::ConstantChunk) return n->inputs().size() == 1;
  if (!n->blocks().empty() || n->outputs().size() != 1) return false;
  if (n->output()->type()->kind() != TypeKind::Tensor) return false;
  auto op = n->maybeOperator();
  if (!op || op->isNodeDependent()) return false;
  const auto& derivative = op->description().derivative;
  if (!derivative || derivative->formulas.empty()) return false;
  const FunctionSchema& schema = op->schema();
  if (schema.isVararg()) return false;
  for (const Argument& arg : schema.arguments()) {
    if (arg.isOutOrInPlace()) return false;
    if (arg.type->kind() == TypeKind::List && n->inputs().size() > 0) {
      auto list = arg.type->cast<ListType>();
      if (list && list->elementType()->kind() == TypeKind::Tensor) return false;
    }
  }
  // Every tensor argument needs a formula: an input without one would get no gradient.
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size() && i < n->inputs().size(); ++i) {
    TypeKind kind = n->input(i)->type()->kind();
    if (kind != TypeKind::Tensor) continue;
    bool has = false;
    for (const auto& [name, expr] : derivative->formulas) has |= name == args[i].name;
    if (!has) return false;
  }
  return true;
}

namespace {

size_t countNodes(Graph& subgraph) {
  size_t count = 0;
  for (Node* n : subgraph.block()->nodes()) count += n->kind() != prim::Constant;
  return count;
}

void groupBlock(Block* block, size_t min_size, std::vector<Node*>& groups) {
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) groupBlock(b, min_size, groups);
  }
  // From the end backwards: the group node stands where the run's last node
  // was, so the users of earlier members' results outside it come after it.
  Node* group = nullptr;
  Node* end = block->returnNode();
  for (Node *n = end->prev(), *prev = nullptr; n != end && n != block->paramNode(); n = prev) {
    prev = n->prev();
    if (n->kind() == prim::Constant) continue;
    if (!isDifferentiableNode(n)) {
      if (group) {
        if (countNodes(getSubgraph(group)) < min_size) {
          unmergeSubgraph(group);
        } else {
          groups.push_back(group);
        }
      }
      group = nullptr;
      continue;
    }
    if (!group) {
      group = createSingletonSubgraph(n, prim::DifferentiableGraph);
    } else {
      mergeNodeIntoSubgraph(n, group);
    }
  }
  if (group) {
    if (countNodes(getSubgraph(group)) < min_size) {
      unmergeSubgraph(group);
    } else {
      groups.push_back(group);
    }
  }
}

}  // namespace

std::vector<Node*> createAutodiffSubgraphs(const std::shared_ptr<Graph>& graph, size_t min_size) {
  std::vector<Node*> groups;
  groupBlock(graph->block(), min_size, groups);
  return groups;
}

}  // namespace kiln
