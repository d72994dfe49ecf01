#include "kiln/passes/copy_transposed_loop_weights.h"

#include <optional>
#include <unordered_map>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/loop_helpers.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

const TensorType* tensorType(const Value* v) { return v->type()->cast<TensorType>(); }

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
  const std::optional<IValue> count = toIValue(loop->input(0));
  return !count || !count->isInt() || count->toInt() > 1;
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
  copy->setType(contiguousTensorType(VaryingShape(std::vector<std::optional<int64_t>>{sizes[1], sizes[0]}), use.weight,
                                     use.weight));
  GRAPH_UPDATE("copied ", *use.transpose, "once before the loop into ", *copy->node());
  return copy;
}

}  // namespace

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
