#include "kiln/passes/constant_propagation.h"

#include <algorithm>

#include "kiln/ir/graph.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/analysis/node_effects.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

// Whether `v` can be held by a prim::Constant.
bool insertable(const IValue& v) {
  auto all = [](const std::vector<IValue>& values) { return std::all_of(values.begin(), values.end(), insertable); };
  switch (v.tag()) {
    case IValue::Tag::Tensor: return !v.toTensor().defined() || !v.toTensor().requiresGrad();
    case IValue::Tag::List: return all(v.toListRef().elements);
    case IValue::Tag::Tuple: return all(v.toTupleRef().elements);
    case IValue::Tag::Dict:
      return std::all_of(v.toDictRef().items().begin(), v.toDictRef().items().end(),
                         [](const auto& item) { return insertable(item.first) && insertable(item.second); });
    case IValue::Tag::Object:
    case IValue::Tag::Future: return false;
    default: return true;
  }
}

// The node's results when all its inputs are constants and it runs without
// raising.
std::optional<Stack> runWithConstantInputs(const Node* n) {
  Stack stack;
  for (const Value* input : n->inputs()) {
    auto value = toIValue(input);
    if (!value) return std::nullopt;
    stack.push_back(std::move(*value));
  }
  if (const FunctionSchema* schema = n->maybeSchema(); schema && schema->isVararg()) return std::nullopt;
  try {
    Operation op = findOperation(*n);
    if (!op) return std::nullopt;
    op(stack);
  } catch (...) {
    return std::nullopt;  // it raises again when the graph runs
  }
  if (stack.size() != n->outputs().size()) return std::nullopt;
  return stack;
}

class ConstantPropagator {
 public:
  ConstantPropagator(std::shared_ptr<Graph> graph, bool immutable_types_only)
      : graph_(std::move(graph)), immutable_types_only_(immutable_types_only) {}

  bool run() {
    propagate(graph_->block());
    return made_change_;
  }

 private:
  void propagate(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* n = *it;
      ++it;  // n may be destroyed
      propagate(n);
    }
  }

  void propagateBlocks(Node* n) {
    for (Block* b : n->blocks()) propagate(b);
  }

  void propagate(Node* n) {
    bool constant_inputs = std::all_of(n->inputs().begin(), n->inputs().end(),
                                       [](const Value* v) { return v->node()->kind() == prim::Constant; });
    if (n->kind() == prim::If) {
      if (constant_inputs) {
        inlineIf(n);
      } else {
        propagateBlocks(n);
        removeExtraIfOutputs(n);
      }
    } else if (n->kind() == prim::Loop) {
      if (loopWillNotRun(n)) {
        removeLoop(n);
      } else {
        propagateBlocks(n);
        removeExtraLoopOutputs(n);
      }
    } else if (constant_inputs && foldable(n)) {
      fold(n);
    } else {
      propagateBlocks(n);
    }
  }

  bool foldable(const Node* n) {
    static const std::unordered_set<Symbol> never = {
        prim::If,
        prim::Loop,
        prim::Closure,
        prim::Constant,
        prim::AutogradZero,
        prim::Uninitialized,
        prim::Guard,
        prim::profile,
        prim::profile_ivalue,
        prim::unchecked_unwrap_optional,
        Symbol::aten("dequantize"),
    };
    if (never.count(n->kind()) || n->kind().isOnnx() || !n->blocks().empty()) return false;
    if (hasSideEffects(n) || isNondeterministic(n)) return false;
    auto mutable_value = [](const Value* v) { return isMutableType(v); };
    if (immutable_types_only_) {
      return std::none_of(n->inputs().begin(), n->inputs().end(), mutable_value) &&
             std::none_of(n->outputs().begin(), n->outputs().end(), mutable_value);
    }
    // A folded list or tensor is one object shared by every run, so it must
    // never be written nor handed to the caller.
    AliasDb& db = aliasDb();
    if (db.hasWriters(n)) return false;
    const Graph& g = *graph_;
    return std::none_of(n->outputs().begin(), n->outputs().end(), [&](const Value* v) {
      return db.mayAliasWildcard(v) || db.mayContainAlias(ArrayRef<const Value*>(v), g.outputs());
    });
  }

  AliasDb& aliasDb() {
    if (!alias_db_) alias_db_ = std::make_unique<AliasDb>(graph_);
    return *alias_db_;
  }

  // A constant at the insertion point, known to the alias database as fresh
  // memory (it may sit where a destroyed value was, so it must not inherit
  // that value's entry).
  Value* insertConstant(const IValue& value) {
    Value* constant = graph_->insertConstant(value);
    if (alias_db_) alias_db_->createValue(constant);
    return constant;
  }

  void fold(Node* n) {
    auto results = runWithConstantInputs(n);
    if (!results) {
      GRAPH_DEBUG("not folding (inputs not all constant, or it raises) ", *n);
      return;
    }
    GRAPH_UPDATE("folding ", *n);
    WithInsertPoint guard(n);
    for (size_t i = 0; i < results->size(); ++i) {
      const IValue& result = (*results)[i];
      // A result that cannot be a constant keeps its node; DCE removes the
      // node once nothing uses it.
      if (!insertable(result)) continue;
      Value* constant = insertConstant(result);
      if (result.isNone()) constant->setType(n->output(i)->type());
      n->output(i)->replaceAllUsesWith(constant);
      made_change_ = true;
    }
  }

  void inlineIf(Node* n) {
    bool condition = toIValue(n->input())->toBool();
    GRAPH_UPDATE("keeping only the ", condition ? "true" : "false", " branch of ", *n);
    Block* taken = n->blocks()[condition ? 0 : 1];
    propagate(taken);
    for (auto it = taken->nodes().begin(); it != taken->nodes().end();) {
      Node* inner = *it;
      ++it;  // moving inner relinks it
      inner->moveBefore(n);
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) n->output(i)->replaceAllUsesWith(taken->outputs()[i]);
    n->destroy();
    made_change_ = true;
  }

  void removeIfOutput(Node* n, size_t i, Value* replacement) {
    n->output(i)->replaceAllUsesWith(replacement);
    n->eraseOutput(i);
    for (Block* b : n->blocks()) b->eraseOutput(i);
  }

  // Outputs both blocks define alike: the same value, or equal constants.
  void removeExtraIfOutputs(Node* n) {
    Block* then_block = n->blocks()[0];
    Block* else_block = n->blocks()[1];
    WithInsertPoint guard(n);
    for (size_t i = 0; i < n->outputs().size();) {
      Value* then_out = then_block->outputs()[i];
      Value* else_out = else_block->outputs()[i];
      if (then_out == else_out) {
        removeIfOutput(n, i, then_out);
        made_change_ = true;
      } else if (sameConstant(then_out, else_out)) {
        removeIfOutput(n, i, insertConstant(*toIValue(then_out)));
        made_change_ = true;
      } else {
        ++i;
      }
    }
  }

  static bool loopWillNotRun(const Node* n) {
    auto trip_count = toIValue(n->input(0));
    auto condition = toIValue(n->input(1));
    int64_t trips = trip_count && trip_count->isInt() ? trip_count->toInt() : 1;
    bool runs = condition && condition->isBool() ? condition->toBool() : true;
    return !(runs && trips > 0);
  }

  void removeLoop(Node* n) {
    for (size_t i = 0; i < n->outputs().size(); ++i) n->output(i)->replaceAllUsesWith(n->input(i + 2));
    n->destroy();
    made_change_ = true;
  }

  // Loop-carried values the body passes through unchanged.
  void removeExtraLoopOutputs(Node* n) {
    Block* body = n->blocks()[0];
    for (size_t i = n->outputs().size(); i-- > 0;) {
      if (body->inputs()[i + 1] != body->outputs()[i + 1]) continue;
      Value* initial = n->input(i + 2);
      n->output(i)->replaceAllUsesWith(initial);
      body->inputs()[i + 1]->replaceAllUsesWith(initial);
      n->eraseOutput(i);
      n->removeInput(i + 2);
      body->eraseInput(i + 1);
      body->eraseOutput(i + 1);
      made_change_ = true;
    }
  }

  std::shared_ptr<Graph> graph_;
  bool immutable_types_only_;
  std::unique_ptr<AliasDb> alias_db_;
  bool made_change_ = false;
};

void propagateConstants(const std::shared_ptr<Graph>& graph, bool immutable_types_only) {
  if (ConstantPropagator(graph, immutable_types_only).run()) eliminateDeadCode(graph);
}

}  // namespace

void constantPropagationImmutableTypes(const std::shared_ptr<Graph>& graph) { propagateConstants(graph, true); }

void constantPropagation(const std::shared_ptr<Graph>& graph) { propagateConstants(graph, false); }

}  // namespace kiln
