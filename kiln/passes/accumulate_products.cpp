#include "kiln/passes/accumulate_products.h"

#include <optional>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

Symbol addmmInPlace() {
  static const Symbol s = Symbol::aten("addmm_");
  return s;
}

// Known sizes of a 2-d Float or Double tensor value.
std::optional<std::vector<int64_t>> matrixSizes(const Value* v, ScalarType* dtype = nullptr) {
  const TensorType* t = v->type()->cast<TensorType>();
  if (!t || t->dim() != 2u) return std::nullopt;
  const std::optional<ScalarType> s = t->scalarType();
  if (s != ScalarType::Float && s != ScalarType::Double) return std::nullopt;
  if (dtype) *dtype = *s;
  return t->sizes().concrete();
}

// `mm(%c, %d)` that cannot raise: 2-d operands of one dtype whose inner sizes agree.
bool isSafeProduct(const Node* n, ScalarType dtype) {
  if (n->kind() != aten::mm || n->inputs().size() != 2) return false;
  ScalarType c_dtype{}, d_dtype{};
  const auto c = matrixSizes(n->input(0), &c_dtype);
  const auto d = matrixSizes(n->input(1), &d_dtype);
  return c && d && c_dtype == dtype && d_dtype == dtype && (*c)[1] == (*d)[0];
}

// A product's result, or an addmm_ into one that nothing else reads (an
// earlier rewrite's): fresh memory nothing aliases.
bool isFreshProduct(const Value* v) {
  const Node* n = v->node();
  if (n->kind() == aten::mm) return true;
  return n->kind() == addmmInPlace() && n->inputs().size() == 5 && n->input(0)->uses().size() == 1 &&
         isFreshProduct(n->input(0));
}

bool isAlphaOne(const Value* alpha) {
  const std::optional<IValue> c = toIValue(alpha);
  return c && (c->isInt() || c->isDouble()) && c->toDouble() == 1;
}

// The accumulator and the product a sum can be rewritten with, if any.
std::optional<std::pair<Value*, Node*>> matchSum(Node* add) {
  if (add->kind() != aten::add || add->inputs().size() != 3 || !isAlphaOne(add->input(2))) return std::nullopt;
  for (size_t side = 0; side < 2; ++side) {
    Value* acc = add->input(side);
    Value* other = add->input(1 - side);
    if (acc == other || !isFreshProduct(acc) || acc->uses().size() != 1 || other->uses().size() != 1) continue;
    // In the add's block: a product from outside a loop would be added to
    // on every iteration, and one moved into a loop would run on each.
    if (acc->node()->owningBlock() != add->owningBlock() || other->node()->owningBlock() != add->owningBlock()) {
      continue;
    }
    ScalarType acc_dtype{}, other_dtype{};
    const auto acc_sizes = matrixSizes(acc, &acc_dtype);
    const auto other_sizes = matrixSizes(other, &other_dtype);
    if (!acc_sizes || acc_sizes != other_sizes || acc_dtype != other_dtype) continue;
    if (!isSafeProduct(other->node(), acc_dtype)) continue;
    return std::make_pair(acc, other->node());
  }
  return std::nullopt;
}

// Post-order: the add and the product before it are erased.
bool rewriteBlock(Graph& graph, Block* block) {
  bool changed = false;
  walkNodes(block, WalkOrder::PostOrder, [&](Node* n) {
    const std::optional<std::pair<Value*, Node*>> match = matchSum(n);
    if (!match) return;
    auto [acc, product] = *match;
    WithInsertPoint guard(n);
    // beta and alpha are the add's alpha, the constant 1: no new constants.
    Value* one = n->input(2);
    Value* sum =
        graph.insert(addmmInPlace(), {acc, product->input(0), product->input(1)}, {{"beta", one}, {"alpha", one}});
    sum->node()->setSourceRange(n->sourceRange());
    sum->setType(acc->type());
    GRAPH_UPDATE("accumulated ", *product, "into ", *sum->node());
    n->output()->replaceAllUsesWith(sum);
    n->destroy();
    product->destroy();
    changed = true;
  });
  return changed;
}

}  // namespace

bool accumulateProducts(const std::shared_ptr<Graph>& graph) {
  const bool changed = rewriteBlock(*graph, graph->block());
  if (changed) GRAPH_DUMP("after accumulating products:\n", *graph);
  return changed;
}

}  // namespace kiln
