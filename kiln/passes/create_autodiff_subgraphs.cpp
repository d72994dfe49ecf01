#include "kiln/passes/create_autodiff_subgraphs.h"

#include <unordered_set>

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
  if (!op || op->isNodeDependent() || op->schema().isVararg()) return false;
  const FunctionSchema& schema = op->schema();
  for (const Argument& arg : schema.arguments()) {
    if (arg.isOutOrInPlace()) return false;
  }
  // A result that cannot carry a gradient (a comparison's bool tensor) needs no formula.
  auto result = n->output()->type()->cast<TensorType>();
  if (result && result->scalarType() && !isFloatingType(*result->scalarType()) &&
      !isComplexType(*result->scalarType())) {
    return true;
  }
  const auto& derivative = op->description().derivative;
  if (!derivative || derivative->formulas.empty()) return false;
  for (const Argument& arg : schema.arguments()) {
    if (arg.type->kind() == TypeKind::List && n->inputs().size() > 0) {
      auto list = arg.type->cast<ListType>();
      if (list && list->elementType()->kind() == TypeKind::Tensor) return false;
    }
  }
  // Every tensor argument that can carry a gradient needs a formula: an
  // input without one would get no gradient. Bool and integer tensors (a
  // where's condition, a masked_fill's mask) never carry one.
  const auto& args = schema.arguments();
  for (size_t i = 0; i < args.size() && i < n->inputs().size(); ++i) {
    auto tensor = n->input(i)->type()->cast<TensorType>();
    if (!tensor) continue;
    if (tensor->scalarType() && !isFloatingType(*tensor->scalarType()) && !isComplexType(*tensor->scalarType()))
      continue;
    bool has = false;
    for (const auto& [name, expr] : derivative->formulas) has |= name == args[i].name;
    if (!has) return false;
  }
  return true;
}

namespace {

// A node a group may move across (its members are pure): one that reads
// only, has results and no blocks, so computing a member after it instead
// of before changes nothing.
bool canMoveAcross(const Node* n) {
  if (!n->blocks().empty() || n->outputs().empty()) return false;
  switch (n->kind()) {
    case prim::ListConstruct:
    case prim::TupleConstruct:
    case prim::ListUnpack:
    case prim::TupleUnpack:
    case prim::TupleIndex: return true;
    default: break;
  }
  auto op = n->maybeOperator();
  if (!op || op->schema().isVararg()) return false;
  for (const Argument& arg : op->schema().arguments()) {
    if (arg.isOutOrInPlace()) return false;
  }
  return true;
}

// Whether `n` can join `group` (which comes after it): every other user of
// its results comes after the group.
bool canMergeInto(const Node* n, const Node* group) {
  for (const Value* out : n->outputs()) {
    for (const Use& use : out->uses()) {
      if (use.user != group && !group->isBefore(use.user)) return false;
    }
  }
  return true;
}

class Grouper {
 public:
  Grouper(size_t min_size, std::vector<Node*>& groups, std::unordered_set<const Node*> written)
      : min_size_(min_size), groups_(groups), written_(std::move(written)) {}

  void groupBlock(Block* block) {
    for (Node* n : block->nodes()) {
      for (Block* b : n->blocks()) groupBlock(b);
    }
    // From the end backwards: a group stands where its last member was;
    // earlier members join it while the nodes between can be moved across.
    Node* end = block->returnNode();
    for (Node *n = end->prev(), *prev = nullptr; n != end && n != block->paramNode(); n = prev) {
      prev = n->prev();
      if (n->kind() == prim::Constant) continue;
      if (!isDifferentiableNode(n) || written_.count(n)) {
        if (!canMoveAcross(n)) finish();
        continue;
      }
      if (group_ && canMergeInto(n, group_)) {
        mergeNodeIntoSubgraph(n, group_);
        continue;
      }
      finish();
      group_ = createSingletonSubgraph(n, prim::DifferentiableGraph);
    }
    finish();
  }

 private:
  void finish() {
    if (!group_) return;
    size_t count = 0;
    for (Node* n : getSubgraph(group_).block()->nodes()) count += n->kind() != prim::Constant;
    if (count < min_size_) {
      unmergeSubgraph(group_);
    } else {
      groups_.push_back(group_);
    }
    group_ = nullptr;
  }

  size_t min_size_;
  std::vector<Node*>& groups_;
  std::unordered_set<const Node*> written_;
  Node* group_ = nullptr;
};

}  // namespace

std::vector<Node*> createAutodiffSubgraphs(const std::shared_ptr<Graph>& graph, size_t min_size) {
  std::vector<Node*> groups;
  // A node whose result an in-place op writes (a view written through,
  // `row = x[1]; row.fill_(1)`) stays out, as in 1.13: the write must reach
  // autograd's view of the base, which a group's detached results are not.
  std::unordered_set<const Node*> written;
  std::vector<Block*> blocks{graph->block()};
  while (!blocks.empty()) {
    Block* b = blocks.back();
    blocks.pop_back();
    for (Node* n : b->nodes()) {
      for (Block* inner : n->blocks()) blocks.push_back(inner);
      for (const Value* out : n->outputs()) {
        for (const Use& use : out->uses()) {
          const FunctionSchema* schema = use.user->maybeSchema();
          if (!schema || use.offset >= schema->arguments().size()) continue;
          const auto& alias = schema->arguments()[use.offset].alias_info;
          if (alias && alias->is_write) written.insert(n);
        }
      }
    }
  }
  Grouper(min_size, groups, std::move(written)).groupBlock(graph->block());
  return groups;
}

}  // namespace kiln
