#include "kiln/frontend/canonicalize_modified_loops.h"

#include <limits>

#include "kiln/ir/graph.h"

namespace kiln {
namespace {

// 1.13's LoopView::loopType() == ModifiedLoop: the condition is not the
// constant true both before and after each iteration, and the trip count is
// in use (not the constant INT64_MAX, or the counter is read).
bool isModifiedLoop(Node* loop) {
  Block* body = loop->blocks()[0];
  auto trip_count = toIValue(loop->input(0));
  auto initial_cond = toIValue(loop->input(1));
  auto next_cond = toIValue(body->outputs()[0]);
  bool always_true = initial_cond && initial_cond->toBool() && next_cond && next_cond->toBool();
  bool trip_count_used =
      !trip_count || trip_count->toInt() != std::numeric_limits<int64_t>::max() || body->inputs()[0]->hasUses();
  return !always_true && trip_count_used;
}

void canonicalizeModifiedLoop(Node* loop) {
  if (!isModifiedLoop(loop)) return;
  Graph* g = loop->owningGraph();
  Block* body = loop->blocks()[0];
  WithInsertPoint before_loop(loop);
  Value* zero = g->insertConstant(int64_t{0});
  Value* one = g->insertConstant(int64_t{1});
  Value* max_trip_count = loop->input(0);
  Value* cond = g->insert(aten::gt, {max_trip_count, zero});
  loop->replaceInput(0, g->insertConstant(std::numeric_limits<int64_t>::max()));
  auto initial_cond = toIValue(loop->input(1));
  if (!initial_cond || !initial_cond->toBool()) cond = g->insert(aten::__and__, {cond, loop->input(1)});
  loop->replaceInput(1, cond);

  loop->addOutput()->setType(IntType::get());
  WithInsertPoint in_body(body);
  loop->addInput(zero);
  Value* counter = body->addInput()->setType(IntType::get());
  // The new counter carries no name, so the old one loses its own.
  body->inputs()[0]->setDebugName("")->replaceAllUsesWith(counter);
  Value* next_counter = g->insert(aten::add, {counter, one});
  body->registerOutput(next_counter);
  Value* below_max = g->insert(aten::lt, {next_counter, max_trip_count});
  Value* next_cond = g->insert(aten::__and__, {below_max, body->outputs()[0]});
  body->eraseOutput(0);
  body->insertOutput(0, next_cond);
}

void canonicalizeModifiedLoops(Block* block) {
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) canonicalizeModifiedLoops(b);
    if (n->kind() == prim::Loop) canonicalizeModifiedLoop(n);
  }
}

}  // namespace

void canonicalizeModifiedLoops(const std::shared_ptr<Graph>& graph) { canonicalizeModifiedLoops(graph->block()); }

}  // namespace kiln
