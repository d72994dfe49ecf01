#include "kiln/passes/loop_helpers.h"

#include <optional>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/tensor/tensor.h"

namespace kiln {

namespace {

bool isTrueConstant(const Value* v) {
  std::optional<IValue> c = toIValue(v);
  return c && c->isBool() && c->toBool();
}

}  // namespace

bool isForLoop(const Node* n) {
  return n->kind() == prim::Loop && isTrueConstant(n->input(1)) && isTrueConstant(n->blocks()[0]->outputs()[0]);
}

bool definedOutside(const Value* v, const Node* loop) {
  for (const Block* b = v->node()->owningBlock(); b != nullptr;) {
    const Node* owner = b->owningNode();
    if (owner == nullptr) return true;
    if (owner == loop) return false;
    b = owner->owningBlock();
  }
  return true;
}

void collectLoops(Block* block, bool for_only, std::vector<Node*>& loops) {
  walkNodes(block, WalkOrder::PostOrder, [&](Node* n) {
    if (n->kind() == prim::Loop && (!for_only || isForLoop(n))) loops.push_back(n);
  });
}

std::shared_ptr<const Type> contiguousTensorType(const VaryingShape& sizes, const Value* dtype_of,
                                                 const Value* device_of) {
  VaryingShape strides(sizes.size().value_or(0));
  if (std::optional<std::vector<int64_t>> known = sizes.concrete()) {
    DimVector contiguous = contiguousStrides(*known);
    strides = VaryingShape::complete(std::vector<int64_t>(contiguous.begin(), contiguous.end()));
  }
  const TensorType* d = device_of->type()->cast<TensorType>();
  const TensorType* t = dtype_of->type()->cast<TensorType>();
  return TensorType::create(t ? t->scalarType() : std::nullopt, d ? d->device() : std::nullopt, sizes, strides,
                            d ? d->requiresGrad() : std::nullopt);
}

}  // namespace kiln
