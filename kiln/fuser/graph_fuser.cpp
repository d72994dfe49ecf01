#include "kiln/fuser/graph_fuser.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "kiln/fuser/codegen.h"
#include "kiln/fuser/fuser.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/subgraph_utils.h"
#include "kiln/ir/walk.h"
#include "kiln/ops/pointwise_spec.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/common_subexpression_elimination.h"
#include "kiln/passes/constant_pooling.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/pass_registry.h"
#include "kiln/util/jit_log.h"

namespace kiln {
namespace {

const Symbol kBroadcastingChunk = Symbol::prim("BroadcastingChunk");
const Symbol kBroadcastTensors = Symbol::aten("broadcast_tensors");

bool isTensor(const Value* v) { return v->type()->kind() == TypeKind::Tensor; }

// Whether what the type of tensor `v` says allows a kernel. Unknown facts
// do: the fused-group operator falls back to the subgraph when a dtype
// turns out unsupported at run time.
bool tensorTypeAllowsFusion(const Value* v) {
  const auto* type = v->type()->cast<TensorType>();
  if (!type) return false;
  if (type->requiresGrad().value_or(false)) return false;
  if (type->device() && !type->device()->isCpu()) return false;
  return !type->scalarType() || pointwise::isKernelDtype(*type->scalarType());
}

// An input a group can take: a tensor, a constant (copied into the
// subgraph), or an int, float or bool value (a kernel argument).
bool isKernelOperand(const Value* v) {
  if (isTensor(v)) return tensorTypeAllowsFusion(v);
  if (v->node()->kind() == prim::Constant) return true;
  switch (v->type()->kind()) {
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Bool: return true;
    default: return false;
  }
}

// Whether a schema return may be one of the inputs (`Tensor(a)`): fusing
// the node makes its output a fresh tensor.
bool mayReturnInput(const Node* n) {
  const FunctionSchema* schema = n->maybeSchema();
  if (!schema) return true;
  return std::any_of(schema->returns().begin(), schema->returns().end(),
                     [](const Argument& r) { return r.alias_info.has_value(); });
}

// Nodes a group holds besides constants.
size_t countWorkNodes(Graph& subgraph) {
  return static_cast<size_t>(std::count_if(subgraph.nodes().begin(), subgraph.nodes().end(),
                                           [](const Node* n) { return n->kind() != prim::Constant; }));
}

// The type of chunk pieces of `input` when `piece` is the type of the
// corresponding piece of the chunked result: the same shape, input's dtype.
TypePtr pieceTypeFor(const Value* input, const TypePtr& piece) {
  const auto* piece_type = piece->cast<TensorType>();
  const auto* input_type = input->type()->cast<TensorType>();
  if (!piece_type || !input_type) return TensorType::get();
  return piece_type->withScalarType(input_type->scalarType());
}

// The type of `input` broadcast with all of `inputs`: its dtype and device,
// the broadcast sizes where known.
TypePtr broadcastTypeFor(const Value* input, ArrayRef<Value*> inputs) {
  const auto* input_type = input->type()->cast<TensorType>();
  if (!input_type) return TensorType::get();
  std::optional<size_t> rank = 0;
  for (const Value* v : inputs) {
    const auto* t = v->type()->cast<TensorType>();
    std::optional<size_t> r = t ? t->sizes().size() : std::nullopt;
    rank = rank && r ? std::optional<size_t>(std::max(*rank, *r)) : std::nullopt;
  }
  if (!rank) return input_type->withSizes(VaryingShape());
  std::vector<std::optional<int64_t>> sizes(*rank, int64_t{1});
  for (const Value* v : inputs) {
    const VaryingShape& shape = v->type()->cast<TensorType>()->sizes();
    size_t offset = *rank - *shape.size();
    // A valid program broadcasts a size other than 1 to itself, so an
    // unknown size only leaves the result unknown against a 1.
    for (size_t d = 0; d < *shape.size(); ++d) {
      std::optional<int64_t>& out = sizes[offset + d];
      if (shape[d] != int64_t{1} && (!out || *out == 1)) out = shape[d];
    }
  }
  return input_type->withSizes(VaryingShape(std::move(sizes)));
}

// Whether the tensors are known to have one shape already.
bool haveSameKnownShape(ArrayRef<Value*> values) {
  std::optional<std::vector<int64_t>> first;
  for (const Value* v : values) {
    const auto* t = v->type()->cast<TensorType>();
    auto sizes = t ? t->sizes().concrete() : std::nullopt;
    if (!sizes || (first && *first != *sizes)) return false;
    first = sizes;
  }
  return true;
}

// 1.13's GraphFuser, for one block (not the blocks nested in it): groups
// form from the end of the block backwards, each fusible node pulling in the
// fusible producers of its inputs (moved next to it when AliasDb says that
// is valid).
class GraphFuser {
 public:
  GraphFuser(AliasDb& db, Block* block)
      : db_(db), block_(block), replaced_([&db](Value* from, Value* to) { db.replaceWithNewValue(from, to); }) {}

  void run() {
    // Until nothing changes: a producer with a use before its consumer's
    // group can join only once that use has joined a group itself.
    bool any_changed = true;
    while (any_changed) {
      any_changed = false;
      for (auto it = reverseFrom(block_->nodes().back()); it != block_->nodes().reverse().end();) {
        bool changed = false;
        std::tie(it, changed) = scanNode(*it);
        any_changed |= changed;
      }
    }
    fuseConcats();
    tidyGroups();
    replaceIntermediateBroadcastingChunks();
    for (auto it = reverseFrom(block_->nodes().back()); it != block_->nodes().reverse().end();) {
      it = scanNodeForChunks(*it);
    }
  }

 private:
  static NodeIterator reverseFrom(Node* n) { return NodeIterator(n, /*reverse=*/true); }

  // A pointwise node (or a group) of this block that may join a group.
  bool isFusable(Node* n) const {
    if (n->owningBlock() != block_) return false;
    if (n->kind() == prim::FusionGroup) return true;
    if (n->kind() == prim::Constant || !fuser::isFusibleNode(n)) return false;
    if (n->outputs().size() != 1 || !isTensor(n->output()) || !tensorTypeAllowsFusion(n->output())) return false;
    if (AliasDb::mayWrite(n)) return false;
    if (!std::all_of(n->inputs().begin(), n->inputs().end(), isKernelOperand)) return false;
    // A view or copy-free cast becomes a fresh tensor in a kernel: only
    // where no write could tell the difference.
    return !mayReturnInput(n) || db_.safeToChangeAliasingRelationship(n->inputs(), n->outputs());
  }

  // The inputs of `n` produced in this block, latest first, each once: in
  // f(a, a + b), a + b joins before a, so a is seen as used once.
  std::vector<Value*> sortReverseTopological(ArrayRef<Value*> inputs) const {
    std::vector<Value*> result;
    for (Value* v : inputs) {
      Node* p = v->node();
      if (p->owningBlock() == block_ && p->kind() != prim::Param &&
          std::find(result.begin(), result.end(), v) == result.end()) {
        result.push_back(v);
      }
    }
    std::sort(result.begin(), result.end(), [](Value* a, Value* b) { return a->node()->isAfter(b->node()); });
    return result;
  }

  // Where to continue scanning, and whether anything was fused.
  std::pair<NodeIterator, bool> scanNode(Node* consumer) {
    if (isFusable(consumer)) {
      for (Value* producer : sortReverseTopological(consumer->inputs())) {
        // The chunk moved above its producer: scan the consumer again to fuse the pieces.
        if (tryToMoveChunk(consumer, producer)) return {reverseFrom(consumer), true};
        if (Node* group = tryFuse(consumer, producer)) return {reverseFrom(group), true};
      }
    }
    return {++reverseFrom(consumer), false};
  }

  static bool isFusedConcatOutput(const Value* v) {
    Node* group = const_cast<Node*>(v->node());
    return group->kind() == prim::FusionGroup &&
           getSubgraph(group).outputs()[v->offset()]->node()->kind() == prim::FusedConcat;
  }

  // Merges the producer of `producer` into `consumer`'s group (made from
  // `consumer` if it is not one yet) when it can move right before it.
  Node* tryFuse(Node* consumer, Value* producer) {
    Node* p = producer->node();
    // A concatenation is only ever a group's output; a chunk in a group
    // reads a group input.
    if (!isFusable(p) || isFusedConcatOutput(producer) || chunkedInGroup(consumer, producer)) return nullptr;
    if (!db_.moveBeforeTopologicallyValid(p, consumer)) return nullptr;
    GRAPH_UPDATE("fusing ", *p, "into ", *consumer);
    Node* group = consumer;
    if (group->kind() != prim::FusionGroup) group = createSingletonSubgraph(consumer, prim::FusionGroup, replaced_);
    if (p->kind() == prim::FusionGroup) {
      mergeSubgraphs(group, p, replaced_);
    } else {
      mergeNodeIntoSubgraph(p, group, replaced_);
    }
    return group;
  }

  // `a, b = chunk(op(x, y))` feeding `consumer` only, with `op` pointwise
  // and used by the chunk only, becomes
  //   x0, x1, y0, y1 = prim::BroadcastingChunk(x, y)
  //   a = op(x0, y0)
  //   b = op(x1, y1)
  // so that the ops can join the consumer's group; the chunk may move up
  // further the same way. (BroadcastingChunk broadcasts its inputs to one
  // shape and chunks each; replaceIntermediateBroadcastingChunks lowers it.)
  bool tryToMoveChunk(Node* consumer, Value* producer) {
    Node* chunk = producer->node();
    if ((chunk->kind() != prim::ConstantChunk && chunk->kind() != kBroadcastingChunk) ||
        chunk->owningBlock() != block_) {
      return false;
    }
    for (Value* piece : chunk->outputs()) {
      for (const Use& use : piece->uses()) {
        if (use.user != consumer) return false;
      }
    }
    size_t op_index = 0;
    while (op_index < chunk->inputs().size() && !bringNextToChunk(chunk->input(op_index), chunk)) ++op_index;
    if (op_index == chunk->inputs().size()) return false;
    Node* op = chunk->input(op_index)->node();
    GRAPH_UPDATE("moving ", *chunk, "above ", *op);

    Node* bchunk = chunk->kind() == prim::ConstantChunk ? promoteToBroadcastingChunk(chunk) : chunk;
    const size_t nchunks = static_cast<size_t>(bchunk->i(attr::chunks));
    std::vector<Value*> results(bchunk->outputs().begin() + static_cast<std::ptrdiff_t>(nchunks * op_index),
                                bchunk->outputs().begin() + static_cast<std::ptrdiff_t>(nchunks * (op_index + 1)));

    // pieces[k]: the chunks of op's k-th tensor input.
    std::vector<std::vector<Value*>> pieces;
    for (Value* input : op->inputs()) {
      if (!isTensor(input)) continue;
      auto known = std::find(bchunk->inputs().begin(), bchunk->inputs().end(), input);
      std::vector<Value*> chunks;
      if (known != bchunk->inputs().end()) {
        size_t j = static_cast<size_t>(known - bchunk->inputs().begin());
        chunks.assign(bchunk->outputs().begin() + static_cast<std::ptrdiff_t>(nchunks * j),
                      bchunk->outputs().begin() + static_cast<std::ptrdiff_t>(nchunks * (j + 1)));
      } else {
        bchunk->addInput(input);
        for (Value* result : results) {
          Value* chunk_of_input = bchunk->addOutput()->setType(pieceTypeFor(input, result->type()));
          db_.copyValueAliasing(input, chunk_of_input);
          chunks.push_back(chunk_of_input);
        }
      }
      pieces.push_back(std::move(chunks));
    }

    Graph* graph = block_->owningGraph();
    WithInsertPoint guard(bchunk->next());
    for (size_t c = 0; c < nchunks; ++c) {
      Node* op_on_piece = graph->create(op->kind(), 0);
      op_on_piece->copyAttributes(*op);
      op_on_piece->copyMetadata(op);
      size_t k = 0;
      for (Value* input : op->inputs()) op_on_piece->addInput(isTensor(input) ? pieces[k++][c] : input);
      Value* out = op_on_piece->addOutput()->setType(results[c]->type());
      graph->insertNode(op_on_piece);
      db_.createValue(out);
      db_.replaceWithNewValue(results[c], out);
      results[c]->replaceAllUsesWith(out);
    }
    bchunk->removeInput(op_index);
    for (size_t c = 0; c < nchunks; ++c) bchunk->eraseOutput(nchunks * op_index);
    op->destroy();
    return true;
  }

  // A conversion to another tensor's dtype (type_as, to.other): its output
  // has its first input's shape, not the broadcast of its inputs'.
  static bool takesDtypeOfAnotherTensor(const Node* n) {
    const PointwiseSpec* spec = pointwiseSpecOf(n);
    if (!spec || spec->rule != pointwise::TypeRule::Cast) return false;
    for (const Argument& arg : n->maybeSchema()->arguments()) {
      if (pointwise::argRole(arg, *spec) == pointwise::ArgRole::DtypeSource) return true;
    }
    return false;
  }

  // Whether the chunk may move above the pointwise op computing `chunked`
  // (which then moves right before it, where the pieces will read its
  // inputs).
  bool bringNextToChunk(Value* chunked, Node* chunk) {
    Node* op = chunked->node();
    if (op->kind() == prim::FusionGroup || takesDtypeOfAnotherTensor(op) || !isFusable(op)) return false;
    for (const Use& use : chunked->uses()) {
      if (use.user != chunk) return false;
    }
    return chunkingKeepsDtype(op) && db_.moveBeforeTopologicallyValid(op, chunk);
  }

  // Chunks of a broadcast 0-dim tensor have dimensions, which changes its
  // rank in type promotion (a 0-dim double loses to a float tensor; a
  // dimensioned one wins): only ops whose tensor inputs all have dimensions,
  // or all have one dtype, are chunked.
  static bool chunkingKeepsDtype(Node* op) {
    std::optional<ScalarType> common;
    bool one_dtype = true;
    bool all_dimensioned = true;
    for (const Value* v : op->inputs()) {
      const auto* type = v->type()->cast<TensorType>();
      if (!type) continue;
      auto rank = type->sizes().size();
      all_dimensioned = all_dimensioned && rank && *rank > 0;
      auto dtype = type->scalarType();
      one_dtype = one_dtype && dtype && (!common || *common == *dtype);
      common = dtype;
    }
    return all_dimensioned || one_dtype;
  }

  Node* promoteToBroadcastingChunk(Node* chunk) {
    Node* bchunk = block_->owningGraph()->create(kBroadcastingChunk, {chunk->input()}, chunk->outputs().size());
    bchunk->copyAttributes(*chunk);
    bchunk->copyMetadata(chunk);
    bchunk->insertAfter(chunk);
    for (size_t i = 0; i < chunk->outputs().size(); ++i) replaceOutput(chunk->output(i), bchunk->output(i));
    chunk->destroy();
    return bchunk;
  }

  // `to` takes the place, type and name of `from`, which loses its uses.
  void replaceOutput(Value* from, Value* to) {
    takeMetadata(to, from);
    db_.replaceWithNewValue(from, to);
    from->replaceAllUsesWith(to);
  }

  // Each prim::BroadcastingChunk becomes aten::broadcast_tensors (unless its
  // inputs are known to have one shape) and one prim::ConstantChunk per input.
  void replaceIntermediateBroadcastingChunks() {
    Graph* graph = block_->owningGraph();
    for (auto it = reverseFrom(block_->nodes().back()); it != block_->nodes().reverse().end();) {
      Node* bchunk = *it++;
      if (bchunk->kind() != kBroadcastingChunk) continue;
      WithInsertPoint before(bchunk);
      if (bchunk->inputs().size() > 1 && !haveSameKnownShape(bchunk->inputs())) {
        std::vector<Value*> inputs(bchunk->inputs().begin(), bchunk->inputs().end());
        Node* list = graph->insertNode(graph->createList(TensorType::get(), inputs));
        db_.createValue(list->output());
        Value* broadcast = graph->insert(kBroadcastTensors, {list->output()});
        db_.createValue(broadcast);
        Node* unpack = graph->insertNode(graph->createListUnpack(broadcast, inputs.size()));
        for (size_t i = 0; i < inputs.size(); ++i) {
          unpack->output(i)->setType(broadcastTypeFor(inputs[i], inputs));
          db_.copyValueAliasing(inputs[i], unpack->output(i));
          bchunk->replaceInput(i, unpack->output(i));
        }
      }
      const size_t nchunks = static_cast<size_t>(bchunk->i(attr::chunks));
      WithInsertPoint after(bchunk->next());
      for (size_t i = 0; i < bchunk->inputs().size(); ++i) {
        Node* chunk = graph->insertNode(graph->create(prim::ConstantChunk, {bchunk->input(i)}, nchunks));
        chunk->copyAttributes(*bchunk);
        chunk->copyMetadata(bchunk);
        for (size_t c = 0; c < nchunks; ++c) replaceOutput(bchunk->output(i * nchunks + c), chunk->output(c));
      }
      bchunk->destroy();
    }
  }

  // A group input chunked inside the group is read by that one chunk only
  // (the fused-group operator passes the pieces to the kernel instead).
  std::optional<Node*> chunkInGroup(Node* group, Value* input) {
    auto it = std::find(group->inputs().begin(), group->inputs().end(), input);
    if (it == group->inputs().end()) return std::nullopt;
    Value* inner = getSubgraph(group).inputs()[static_cast<size_t>(it - group->inputs().begin())];
    if (inner->uses().size() == 1 && inner->uses()[0].user->kind() == prim::ConstantChunk) {
      return inner->uses()[0].user;
    }
    return nullptr;
  }

  bool chunkedInGroup(Node* consumer, Value* v) {
    if (consumer->kind() != prim::FusionGroup) return false;
    auto chunk = chunkInGroup(consumer, v);
    return chunk && *chunk;
  }

  bool canFuseChunk(Node* group, Value* producer) {
    Node* chunk = producer->node();
    if (chunk->kind() != prim::ConstantChunk || chunk->owningBlock() != block_ || chunk->i(attr::chunks) == 1) {
      return false;
    }
    for (Value* piece : chunk->outputs()) {
      for (const Use& use : piece->uses()) {
        if (use.user != group) return false;
      }
    }
    auto existing = chunkInGroup(group, chunk->input());
    if (!existing) return true;
    return *existing && (*existing)->i(attr::chunks) == chunk->i(attr::chunks) &&
           (*existing)->i(attr::dim) == chunk->i(attr::dim);
  }

  // Pulls prim::ConstantChunk nodes whose pieces only `group` reads into it.
  NodeIterator scanNodeForChunks(Node* group) {
    if (group->kind() == prim::FusionGroup) {
      for (Value* producer : sortReverseTopological(group->inputs())) {
        if (!canFuseChunk(group, producer)) continue;
        Node* chunk = producer->node();
        GRAPH_UPDATE("fusing ", *chunk, "into ", *group);
        if (auto existing = chunkInGroup(group, chunk->input())) {
          reuseChunk(group, chunk, *existing);
        } else {
          mergeNodeIntoSubgraph(chunk, group, replaced_);
        }
        return reverseFrom(group);
      }
    }
    return ++reverseFrom(group);
  }

  // `chunk` computes what `existing` in the group does: the group reads
  // existing's pieces instead of chunk's.
  static void reuseChunk(Node* group, Node* chunk, Node* existing) {
    Graph& subgraph = getSubgraph(group);
    for (size_t c = 0; c < chunk->outputs().size(); ++c) {
      auto it = std::find(group->inputs().begin(), group->inputs().end(), chunk->output(c));
      if (it == group->inputs().end()) continue;
      size_t i = static_cast<size_t>(it - group->inputs().begin());
      subgraph.inputs()[i]->replaceAllUsesWith(existing->output(c));
      group->removeInput(i);
      subgraph.eraseInput(i);
    }
    chunk->destroy();
  }

  // aten::cat(prim::ListConstruct(...), dim) with the list used by it only.
  bool isFusableCat(Node* n) const {
    if (n->kind() != aten::cat || n->owningBlock() != block_ ||
        !n->matches("aten::cat(Tensor[] tensors, int dim=0) -> Tensor") || !n->get<int64_t>(attr::dim)) {
      return false;
    }
    Node* list = n->input(0)->node();
    if (list->kind() != prim::ListConstruct || list->owningBlock() != block_ || list->output()->uses().size() != 1 ||
        !tensorTypeAllowsFusion(n->output())) {
      return false;
    }
    // Kernels write the pieces into the result: cat's type promotion must
    // have nothing to convert (where the dtypes are known).
    auto dtype = n->output()->type()->cast<TensorType>()->scalarType();
    return std::all_of(list->inputs().begin(), list->inputs().end(), [&](const Value* v) {
      const auto* type = v->type()->cast<TensorType>();
      return !dtype || !type || !type->scalarType() || *type->scalarType() == *dtype;
    });
  }

  bool canFuseWithConcat(Value* producer, Node* group) {
    Node* p = producer->node();
    return isFusable(p) && !isFusedConcatOutput(producer) && db_.couldMoveBeforeTopologically(p, group);
  }

  // A concatenation of values that groups compute becomes a
  // prim::FusedConcat output of one group holding all of them, which the
  // fused-group operator lets the kernel write in place.
  void fuseConcats() {
    for (auto it = reverseFrom(block_->nodes().back()); it != block_->nodes().reverse().end(); ++it) {
      Node* cat = *it;
      if (!isFusableCat(cat)) continue;
      Node* list = cat->input(0)->node();
      Graph* graph = block_->owningGraph();
      Node* concat = graph->create(prim::FusedConcat, list->inputs(), 1);
      concat->i_(attr::dim, *cat->get<int64_t>(attr::dim));
      concat->copyMetadata(cat);
      concat->output()->setType(cat->output()->type());
      concat->insertBefore(list);
      db_.createValue(concat->output());
      Node* group = createSingletonSubgraph(concat, prim::FusionGroup, replaced_);

      bool any_fused = false;
      for (bool fused = true; fused;) {
        fused = false;
        for (Value* input : sortReverseTopological(group->inputs())) {
          if (!canFuseWithConcat(input, group)) continue;
          tryFuse(group, input);
          any_fused = fused = true;
          break;
        }
      }
      if (!any_fused) {
        group->destroy();
        continue;
      }
      // Every piece computed in the group, or the concatenation stays (and
      // the group, without it, computes the pieces).
      Graph& subgraph = getSubgraph(group);
      Node* inner_concat = subgraph.outputs()[0]->node();
      bool complete = std::none_of(inner_concat->inputs().begin(), inner_concat->inputs().end(),
                                   [](const Value* v) { return v->node()->kind() == prim::Param; });
      if (!complete) continue;
      GRAPH_UPDATE("concatenating in ", *group);
      replaceOutput(cat->output(), group->output(0));
      it.destroyCurrent();
      if (!list->output()->hasUses()) list->destroy();
    }
  }

  // Outputs nobody uses leave each group (a concatenation that stayed
  // outside), its subgraph loses dead code and duplicates, and inputs that
  // only the dead code read go too.
  void tidyGroups() {
    for (auto it = block_->nodes().begin(); it != block_->nodes().end(); ++it) {
      Node* group = *it;
      if (group->kind() != prim::FusionGroup) continue;
      std::shared_ptr<Graph> subgraph = group->g(attr::Subgraph);
      for (size_t i = group->outputs().size(); i-- > 0;) {
        if (group->output(i)->hasUses()) continue;
        group->eraseOutput(i);
        subgraph->eraseOutput(i);
      }
      if (group->outputs().empty()) {
        it.destroyCurrent();
        continue;
      }
      eliminateDeadCode(subgraph);
      eliminateCommonSubexpression(subgraph);
      constantPooling(subgraph);
      for (size_t i = group->inputs().size(); i-- > 0;) {
        if (subgraph->inputs()[i]->hasUses()) continue;
        group->removeInput(i);
        subgraph->eraseInput(i);
      }
    }
  }

  AliasDb& db_;
  Block* block_;
  ValueReplaced replaced_;
};

// A group of fewer than two nodes besides constants saves no memory
// traffic: its node goes back into the graph.
void unmergeSmallGroups(Graph& graph) {
  walkNodes(graph, WalkOrder::PostOrder, [](Node* n) {
    if (n->kind() != prim::FusionGroup || countWorkNodes(getSubgraph(n)) >= 2) return;
    GRAPH_UPDATE("too small to fuse: ", *n);
    unmergeSubgraph(n);
  });
}

// `kiln opt -p fuse`: the registry in passes/ cannot include the fuser,
// which sits below it, so the fuser adds itself.
const bool fuse_pass_registered = (registerPass("fuse", fuseGraph), true);

bool anyInputRequiresGrad(const Graph& graph) {
  return std::any_of(graph.inputs().begin(), graph.inputs().end(), [](const Value* v) {
    const auto* type = v->type()->cast<TensorType>();
    return type && type->requiresGrad().value_or(false);
  });
}

}  // namespace

void fuseGraph(const std::shared_ptr<Graph>& graph) {
  if (!fuser::fusionEnabled() || anyInputRequiresGrad(*graph)) return;
  GRAPH_DUMP("before fusion:\n", *graph);
  {
    AliasDb db(graph);
    // A block before the blocks nested in it, as 1.13 fuses.
    walkBlocks(*graph, WalkOrder::PreOrder, [&db](Block* b) { GraphFuser(db, b).run(); });
  }
  unmergeSmallGroups(*graph);
  // Unmerged groups leave copies of their constants behind.
  eliminateCommonSubexpression(graph);
  eliminateDeadCode(graph);
  GRAPH_DUMP("after fusion:\n", *graph);
}

}  // namespace kiln
