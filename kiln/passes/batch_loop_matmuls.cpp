#include "kiln/passes/batch_loop_matmuls.h"

#include <optional>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/loop_helpers.h"
#include "kiln/tensor/tensor.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

std::optional<int64_t> constantInt(const Value* v) {
  std::optional<IValue> c = toIValue(v);
  if (!c || !c->isInt()) return std::nullopt;
  return c->toInt();
}

const TensorType* tensorType(const Value* v) { return v->type()->cast<TensorType>(); }

// Whether the loop's trip count is the number of rows of `x`, so the
// batched product computes no row the loop does not read.
bool runsOncePerRow(const Node* loop, const Value* x) {
  const Value* count = loop->input(0);
  const Node* def = count->node();
  if (def->kind() == aten::size && def->inputs().size() == 2 && def->input(0) == x && constantInt(def->input(1)) == 0) {
    return true;
  }
  if (def->kind() == aten::len && def->inputs().size() == 1 && def->input(0) == x) return true;
  std::optional<int64_t> constant = constantInt(count);
  const TensorType* type = tensorType(x);
  return constant && type && type->dim().value_or(0) >= 1 && type->sizes()[0] == constant;
}

// Whether `matmul(x, w)` cannot raise, whatever x's number of rows: a 3-d
// by 2-d product of one floating dtype with matching inner sizes.
bool batchedProductCannotRaise(const Value* x, const Value* w) {
  const TensorType* xt = tensorType(x);
  const TensorType* wt = tensorType(w);
  if (!xt || !wt || xt->dim() != 3u || wt->dim() != 2u) return false;
  // In a plan whose inputs require grad, each step's row of the batched
  // product would get a gradient as large as the whole product (select's
  // backward), summed T times: quadratic in the steps. The per-step
  // products' backward is linear, as 1.13's.
  if (xt->requiresGrad().value_or(false) || wt->requiresGrad().value_or(false)) return false;
  std::optional<ScalarType> dtype = xt->scalarType();
  if (!dtype || (*dtype != ScalarType::Float && *dtype != ScalarType::Double) || wt->scalarType() != dtype) {
    return false;
  }
  return xt->sizes()[2].has_value() && xt->sizes()[2] == wt->sizes()[0];
}

// One per-step product the rewrite can batch.
struct StepProduct {
  Node* product;    // aten::mm or aten::matmul in the loop body
  Node* select;     // its left operand: aten::select(x, 0, counter)
  Value* x;         // defined outside the loop
  Value* weight;    // defined outside the loop
  Node* transpose;  // when not null, the product's right operand is this aten::t(weight) in the body
};

std::optional<StepProduct> matchStepProduct(Node* n, Node* loop) {
  Block* body = loop->blocks()[0];
  if ((n->kind() != aten::mm && n->kind() != aten::matmul) || n->inputs().size() != 2) return std::nullopt;
  Node* select = n->input(0)->node();
  if (select->kind() != aten::select || select->inputs().size() != 3 || select->owningBlock() != body ||
      constantInt(select->input(1)) != 0 || select->input(2) != body->inputs()[0]) {
    return std::nullopt;
  }
  StepProduct step{n, select, select->input(0), n->input(1), nullptr};
  if (!definedOutside(step.x, loop) || !runsOncePerRow(loop, step.x)) return std::nullopt;
  if (!definedOutside(step.weight, loop)) {
    Node* transpose = step.weight->node();
    // aten::t raises on more than 2 dims: known not to, it may run before
    // a loop that would have run zero times.
    if (transpose->kind() != aten::t || transpose->inputs().size() != 1 || transpose->owningBlock() != body ||
        !definedOutside(transpose->input(0), loop)) {
      return std::nullopt;
    }
    const TensorType* source = tensorType(transpose->input(0));
    if (!source || !source->dim() || *source->dim() > 2) return std::nullopt;
    step.transpose = transpose;
    step.weight = transpose->input(0);
  }
  if (!batchedProductCannotRaise(step.x, n->input(1))) return std::nullopt;
  return step;
}

// The type of matmul(x, w) for a 3-d x: contiguous [T, B, N].
TypePtr batchedType(const Value* x, const Value* w, const Value* product) {
  const VaryingShape& xs = tensorType(x)->sizes();
  return contiguousTensorType(
      VaryingShape(std::vector<std::optional<int64_t>>{xs[0], xs[1], tensorType(w)->sizes()[1]}), x, product);
}

void rewrite(Graph& graph, Node* loop, const StepProduct& step) {
  Value* rhs = step.weight;
  Value* product_out = step.product->output();
  Value* batched = nullptr;
  {
    WithInsertPoint guard(loop);
    if (step.transpose) {
      rhs = graph.insertNode(graph.createClone(step.transpose, [&](const Value*) { return step.weight; }))->output();
    }
    batched = graph.insert(aten::matmul, {step.x, rhs});
    batched->setType(batchedType(step.x, step.product->input(1), product_out));
  }
  // A row of the contiguous [T, B, N] product is a contiguous [B, N]: the
  // per-step product's type.
  Node* row = graph.create(aten::select, {batched, step.select->input(1), step.select->input(2)});
  row->insertBefore(step.product);
  row->output()->setType(product_out->type());
  product_out->replaceAllUsesWith(row->output());
  GRAPH_UPDATE("batched ", *step.product, "into ", *batched->node());
  step.product->destroy();
  if (!step.select->hasUses()) step.select->destroy();
  if (step.transpose && !step.transpose->hasUses()) step.transpose->destroy();
}

}  // namespace

bool batchLoopMatmuls(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> loops;
  collectLoops(graph->block(), /*for_only=*/true, loops);
  std::unique_ptr<AliasDb> alias_db;  // built when first needed, rebuilt after each rewrite
  bool changed = false;
  for (Node* loop : loops) {
    std::vector<StepProduct> steps;
    for (Node* n : loop->blocks()[0]->nodes()) {
      if (std::optional<StepProduct> step = matchStepProduct(n, loop)) steps.push_back(*step);
    }
    for (const StepProduct& step : steps) {
      if (!alias_db) alias_db = std::make_unique<AliasDb>(graph);
      // Written in the loop, x or the weight would differ between the
      // batched product and a step's; written, a step's result would now
      // write into a row of a shared tensor.
      if (alias_db->writesToAlias(loop, {step.x, step.weight}) || alias_db->hasWriters(step.product->output())) {
        continue;
      }
      rewrite(*graph, loop, step);
      alias_db.reset();
      changed = true;
    }
  }
  if (changed) GRAPH_DUMP("after batching loop matmuls:\n", *graph);
  return changed;
}

}  // namespace kiln
