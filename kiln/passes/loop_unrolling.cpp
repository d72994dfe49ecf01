#include "kiln/passes/loop_unrolling.h"

#include <algorithm>
#include <unordered_map>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/analysis/node_effects.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/loop_helpers.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

constexpr int64_t kUnrollFactor = 8;
constexpr int64_t kMaxBodySize = 32;
constexpr int64_t kMaxBodyRepeats = 64;

bool notExecuted(const Node* n) {
  return n->kind() == prim::Constant || n->kind() == prim::profile || n->kind() == prim::profile_ivalue;
}

// The number of nodes that run in `block` (nested blocks included, each
// with its return node, as 1.13 counts), or `limit` once it gets there.
int64_t limitedBlockSize(const Block* block, int64_t limit) {
  int64_t size = 0;
  for (auto it = block->nodes().begin(); size < limit; ++it) {
    for (const Block* b : it->blocks()) size += limitedBlockSize(b, limit - size);
    if (!notExecuted(*it)) ++size;
    if (*it == block->returnNode()) return size;
  }
  return limit;
}

bool isSmallBlock(const Block* body) { return limitedBlockSize(body, kMaxBodySize + 1) <= kMaxBodySize; }

// Whether deleting `n` (when unused) cannot change what the program does.
bool isPure(const Node* n) {
  auto impure = [](const Node* m) {
    if (hasSideEffects(m)) return true;
    if (const FunctionSchema* schema = m->maybeSchema()) {
      for (const Argument& a : schema->arguments()) {
        if (a.isOutOrInPlace()) return true;
      }
    }
    return false;
  };
  return !walkNodes(n, WalkOrder::PreOrder, [&](const Node* m) {
            return impure(m) ? WalkResult::interrupt() : WalkResult::advance();
          }).wasInterrupted();
}

// Drops the unused pure nodes of `block` (not of blocks nested in it), such
// as the copies of the `true` condition, so they do not count against the
// size of a loop around this one. The graph-wide clean-up at the end
// removes what this leaves.
void removeDeadNodes(Block* block) {
  for (auto it = block->nodes().reverse().begin(); it != block->nodes().reverse().end(); ++it) {
    if (!it->hasUses() && isPure(*it)) it.destroyCurrent();
  }
}

// Inserts a copy of `body`'s nodes at the insertion point, with `inputs` for
// its inputs; returns the values of its outputs.
std::vector<Value*> insertBlockCopy(Graph& graph, const Block* body, const std::vector<Value*>& inputs) {
  std::unordered_map<const Value*, Value*> value_map;
  auto get_value = [&](const Value* v) {
    auto it = value_map.find(v);
    return it != value_map.end() ? it->second : const_cast<Value*>(v);
  };
  for (size_t i = 0; i < inputs.size(); ++i) value_map[body->inputs()[i]] = inputs[i];
  for (const Node* n : body->nodes()) {
    Node* copy = graph.insertNode(graph.createClone(n, get_value));
    for (size_t i = 0; i < n->outputs().size(); ++i) value_map[n->outputs()[i]] = copy->output(i);
  }
  std::vector<Value*> outputs;
  for (const Value* v : body->outputs()) outputs.push_back(get_value(v));
  return outputs;
}

// Fills the empty block `dest` with `times` copies of `body`, each taking
// the carried values the previous one produced. The loop counter must be
// unused.
void repeatBody(Block* body, int64_t times, Block* dest) {
  Graph& graph = *body->owningGraph();
  WithInsertPoint guard(dest);
  for (Value* input : body->inputs()) dest->addInput()->copyMetadata(input);
  std::vector<Value*> io(dest->inputs().begin(), dest->inputs().end());
  for (int64_t i = 0; i < times; ++i) {
    io[0] = body->inputs()[0];
    io = insertBlockCopy(graph, body, io);
  }
  for (Value* output : io) dest->registerOutput(output);
  removeDeadNodes(dest);
}

// Replaces a loop that runs exactly once by its body.
void inlineBody(Node* loop) {
  Graph& graph = *loop->owningGraph();
  Block* body = loop->blocks()[0];
  WithInsertPoint guard(loop);
  // The counter input is unused by now (see replaceLoopCounter).
  std::vector<Value*> inputs = {body->inputs()[0]};
  for (size_t i = 2; i < loop->inputs().size(); ++i) inputs.push_back(loop->input(i));
  std::vector<Value*> outputs = insertBlockCopy(graph, body, inputs);
  for (size_t i = 0; i < loop->outputs().size(); ++i) loop->output(i)->replaceAllUsesWith(outputs[i + 1]);
  // Destroyed here, not left to dead code elimination: a loop with side
  // effects would stay, and run them again.
  loop->destroy();
}

// Makes the iteration counter a loop-carried value counted up in the body,
// so that the unrolled loop and its epilogue can share it.
void replaceLoopCounter(Node* loop) {
  Graph& graph = *loop->owningGraph();
  Block* body = loop->blocks()[0];
  WithInsertPoint guard(loop);
  Value* initial = graph.insertConstant(int64_t{0});
  loop->insertInput(2, initial);
  loop->insertOutput(0)->setType(IntType::get());
  Value* counter = body->insertInput(1)->setType(initial->type());
  body->inputs()[0]->replaceAllUsesWith(counter);
  WithInsertPoint at_end(body->returnNode());
  body->insertOutput(1, graph.insert(aten::add, {counter, 1}));
}

void unroll(Node* loop) {
  Graph& graph = *loop->owningGraph();
  Block* body = loop->blocks()[0];
  GRAPH_UPDATE("Unrolling ", *loop);
  if (body->inputs()[0]->hasUses()) replaceLoopCounter(loop);

  std::optional<IValue> trip_count = toIValue(loop->input(0));
  if (trip_count && trip_count->isInt() && trip_count->toInt() < kMaxBodyRepeats) {
    Block* dest = loop->addBlock();
    repeatBody(body, std::max<int64_t>(trip_count->toInt(), 0), dest);
    loop->eraseBlock(0);
    inlineBody(loop);
    return;
  }

  WithInsertPoint guard(loop);
  // A clone of the loop, before unrolling, is the epilogue: it takes over
  // the loop's results and starts from them.
  Node* epilogue = graph.createClone(loop, [](const Value* v) { return const_cast<Value*>(v); })->insertAfter(loop);
  for (size_t i = 0; i < loop->outputs().size(); ++i) {
    loop->output(i)->replaceAllUsesWith(epilogue->output(i));
    epilogue->replaceInput(i + 2, loop->output(i));
  }
  Block* dest = loop->addBlock();
  repeatBody(body, kUnrollFactor, dest);
  loop->eraseBlock(0);

  Value* iterations = loop->input(0);
  static const Symbol round_to_zero_floordiv = Symbol::fromQualString("aten::__round_to_zero_floordiv");
  Value* unrolled_iterations = graph.insert(round_to_zero_floordiv, {iterations, kUnrollFactor});
  loop->replaceInput(0, unrolled_iterations);
  Value* done = graph.insert(aten::mul, {unrolled_iterations, kUnrollFactor});
  epilogue->replaceInput(0, graph.insert(aten::sub, {iterations, done}));
}

bool computesOnTensors(const Block* body) {
  return walkNodes(body, WalkOrder::PreOrder,
                   [](const Node* n) {
                     for (const Value* v : n->outputs()) {
                       if (v->type()->kind() == TypeKind::Tensor) return WalkResult::interrupt();
                     }
                     return WalkResult::advance();
                   })
      .wasInterrupted();
}

bool policyAllows(const Node* loop, UnrollPolicy policy) {
  // Copied out in full: always worth it.
  std::optional<IValue> trip_count = toIValue(loop->input(0));
  if (trip_count && trip_count->isInt() && trip_count->toInt() < kMaxBodyRepeats) return true;
  switch (policy) {
    case UnrollPolicy::AllLoops: return true;
    case UnrollPolicy::ConstantTripCounts: return false;
    case UnrollPolicy::ConstantTripCountsOrTensorBodies: return computesOnTensors(loop->blocks()[0]);
  }
  return false;
}

}  // namespace

bool unrollLoops(const std::shared_ptr<Graph>& graph, UnrollPolicy policy) {
  GRAPH_DUMP("Before unrolling loops:\n", *graph);
  bool changed = false;
  // Post-order: inner loops are unrolled first (so they count at their
  // unrolled size), and unrolling may erase the loop.
  walkNodes(*graph, WalkOrder::PostOrder, [&](Node* n) {
    if (isForLoop(n) && isSmallBlock(n->blocks()[0]) && policyAllows(n, policy)) {
      unroll(n);
      changed = true;
    }
  });
  if (changed) eliminateDeadCode(graph);
  GRAPH_DUMP("After unrolling loops:\n", *graph);
  return changed;
}

}  // namespace kiln
