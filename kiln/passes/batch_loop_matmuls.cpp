#include "kiln/passes/batch_loop_matmuls.h"

#include <optional>
#include <unordered_map>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/tensor/tensor.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

std::optional<int64_t> constantInt(const Value* v) {
  std::optional<IValue> c = toIValue(v);
  if (!c || !c->isInt()) return std::nullopt;
  return c->toInt();
}

bool isTrueConstant(const Value* v) {
  std::optional<IValue> c = toIValue(v);
  return c && c->isBool() && c->toBool();
}

// A loop that runs exactly its trip count times: `for i in range(n)`.
bool isForLoop(const Node* n) {
  return n->kind() == prim::Loop && isTrueConstant(n->input(1)) && isTrueConstant(n->blocks()[0]->outputs()[0]);
}

const TensorType* tensorType(const Value* v) { return v->type()->cast<TensorType>(); }

// Whether `v` is computed before `loop` rather than in one of its blocks.
bool definedOutside(const Value* v, const Node* loop) {
  for (const Block* b = v->node()->owningBlock(); b != nullptr;) {
    const Node* owner = b->owningNode();
    if (owner == nullptr) return true;
    if (owner == loop) return false;
    b = owner->owningBlock();
  }
  return true;
}

// Whether the loop's trip count is the number of rows of `x`, so the
// batched product computes no row the loop does not read.
bool runsOncePerRow(const Node* loop, const Value* x) {
  const Value* count = loop->input(0);
  const Node* def = count->node();
  if (def->kind() == aten::size && def->inputs().size() == 2 && def->input(0) == x &&
      constantInt(def->input(1)) == 0) {
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

// A contiguous tensor of `sizes`, with `like`'s dtype and `device_of`'s device and requires_grad.
TypePtr contiguousType(const VaryingShape& sizes, const Value* like, const Value* device_of) {
  VaryingShape strides(sizes.size().value_or(0));
  if (std::optional<std::vector<int64_t>> known = sizes.concrete()) {
    DimVector contiguous = contiguousStrides(*known);
    strides = VaryingShape::complete(std::vector<int64_t>(contiguous.begin(), contiguous.end()));
  }
  const TensorType* d = tensorType(device_of);
  return TensorType::create(tensorType(like)->scalarType(), d ? d->device() : std::nullopt, sizes, strides,
                            d ? d->requiresGrad() : std::nullopt);
}

// The type of matmul(x, w) for a 3-d x: contiguous [T, B, N].
TypePtr batchedType(const Value* x, const Value* w, const Value* product) {
  const VaryingShape& xs = tensorType(x)->sizes();
  return contiguousType(VaryingShape(std::vector<std::optional<int64_t>>{xs[0], xs[1], tensorType(w)->sizes()[1]}),
                        x, product);
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

// A product in a loop's body whose right operand is `aten::t(%W)`, %W a 2-d
// Float or Double tensor from outside the loop (the hidden-to-hidden
// product of an LSTM), the transpose in the body or before the loop.
struct TransposedOperand {
  Node* product;
  Node* transpose;
  Value* weight;
};

std::optional<TransposedOperand> matchTransposedOperand(Node* n, Node* loop) {
  if ((n->kind() != aten::mm && n->kind() != aten::matmul) || n->inputs().size() != 2) return std::nullopt;
  Node* transpose = n->input(1)->node();
  if (transpose->kind() != aten::t || transpose->inputs().size() != 1) return std::nullopt;
  Value* weight = transpose->input(0);
  const bool in_body = transpose->owningBlock() == loop->blocks()[0];
  if (!definedOutside(weight, loop) || !(in_body || definedOutside(transpose->output(), loop))) return std::nullopt;
  const TensorType* type = tensorType(weight);
  if (!type || type->dim() != 2u) return std::nullopt;
  const std::optional<ScalarType> dtype = type->scalarType();
  if (dtype != ScalarType::Float && dtype != ScalarType::Double) return std::nullopt;
  return TransposedOperand{n, transpose, weight};
}

// Whether the loop may run more than once: the copy pays for itself from
// the second iteration on.
bool mayRepeat(const Node* loop) {
  const std::optional<int64_t> count = constantInt(loop->input(0));
  return !count || *count > 1;
}

// `contiguous(t(%W))` before the loop, made once for each weight.
Value* contiguousTranspose(Graph& graph, Node* loop, const TransposedOperand& use) {
  WithInsertPoint guard(loop);
  Value* transposed = use.transpose->output();
  if (!definedOutside(transposed, loop)) {
    transposed = graph.insertNode(graph.createClone(use.transpose, [&](const Value*) { return use.weight; }))->output();
  }
  Value* copy = graph.insert(aten::contiguous, {transposed});
  const VaryingShape& sizes = tensorType(use.weight)->sizes();
  copy->setType(contiguousType(VaryingShape(std::vector<std::optional<int64_t>>{sizes[1], sizes[0]}), use.weight,
                               use.weight));
  GRAPH_UPDATE("copied ", *use.transpose, "once before the loop into ", *copy->node());
  return copy;
}

// All loops (for-loops only when `for_only`), inner ones before the loops around them.
void collectLoops(Block* block, bool for_only, std::vector<Node*>& loops) {
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) collectLoops(b, for_only, loops);
    if (n->kind() == prim::Loop && (!for_only || isForLoop(n))) loops.push_back(n);
  }
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

bool copyTransposedLoopWeights(const std::shared_ptr<Graph>& graph) {
  std::vector<Node*> loops;
  collectLoops(graph->block(), /*for_only=*/false, loops);
  bool changed = false;
  for (Node* loop : loops) {
    if (!mayRepeat(loop)) continue;
    std::vector<TransposedOperand> uses;
    for (Node* n : loop->blocks()[0]->nodes()) {
      if (std::optional<TransposedOperand> use = matchTransposedOperand(n, loop)) uses.push_back(*use);
    }
    if (uses.empty()) continue;
    // Written in the loop, a weight would differ from its copy. (Asked for
    // every use before the graph changes.)
    {
      AliasDb alias_db(graph);
      std::erase_if(uses, [&](const TransposedOperand& use) { return alias_db.writesToAlias(loop, {use.weight}); });
    }
    std::unordered_map<Value*, Value*> copies;  // weight -> its contiguous transpose
    for (const TransposedOperand& use : uses) {
      Value*& copy = copies[use.weight];
      if (!copy) copy = contiguousTranspose(*graph, loop, use);
      use.product->replaceInput(1, copy);
      if (!use.transpose->hasUses()) use.transpose->destroy();
      changed = true;
    }
  }
  if (changed) GRAPH_DUMP("after copying transposed loop weights:\n", *graph);
  return changed;
}

}  // namespace kiln
