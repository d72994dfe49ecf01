#include "kiln/passes/remove_mutation.h"

#include "kiln/core/op_description.h"
#include "kiln/core/operator.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/analysis/node_effects.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

// Whether the op returns a view of its first argument (`t(Tensor(a) self)
// -> Tensor(a)`): its in-place form only changes which part of x's memory x
// views, so the pure op gives exactly what x becomes, whatever the types.
bool returnsViewOfSelf(const Operator& op) {
  const FunctionSchema& schema = op.schema();
  if (schema.arguments().empty() || schema.returns().size() != 1) return false;
  const auto& self = schema.arguments()[0].alias_info;
  const auto& result = schema.returns()[0].alias_info;
  return self && result && !self->is_write && !result->is_write && !self->before_sets.empty() &&
         result->before_sets == self->before_sets;
}

// Type promotion's kinds: bool < integral < floating < anything else.
int promotionKind(ScalarType t) { return t == ScalarType::Bool ? 0 : isFloatingType(t) ? 2 : 1; }
int promotionKind(TypeKind k) {
  switch (k) {
    case TypeKind::Bool: return 0;
    case TypeKind::Int: return 1;
    case TypeKind::Float: return 2;
    default: return 3;  // Scalar or complex
  }
}

// Whether broadcasting `other` against x cannot make the result bigger than x.
bool broadcastsInto(const TensorType& x, const TensorType& other) {
  auto other_rank = other.dim();
  if (other_rank == 0u) return true;
  auto x_rank = x.dim();
  if (!x_rank || !other_rank || *other_rank > *x_rank) return false;
  for (size_t i = 0; i < *other_rank; ++i) {
    const auto& o = other.sizes()[*other_rank - 1 - i];
    const auto& s = x.sizes()[*x_rank - 1 - i];
    if (!(o == 1 || (o && s && *o == *s))) return false;
  }
  return true;
}

// Whether operand `v` of the pure op leaves the result with x's dtype and shape.
bool keepsTypeOf(const TensorType& x, ScalarType dtype, const Value* v) {
  const TypePtr& type = v->type();
  if (auto t = type->cast<TensorType>()) {
    auto other = t->scalarType();
    if (!other || !t->dim()) return false;
    bool dtype_kept =
        *t->dim() == 0 ? promotionKind(*other) <= promotionKind(dtype) : promoteTypes(dtype, *other) == dtype;
    return dtype_kept && broadcastsInto(x, *t);
  }
  TypeKind kind = type->kind();
  if (auto optional = type->cast<OptionalType>()) kind = optional->elementType()->kind();
  switch (kind) {
    case TypeKind::Bool:
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Number:
    case TypeKind::Complex: return promotionKind(kind) <= promotionKind(dtype);
    default: return true;  // flags, dims given as lists, strings, None: not operands
  }
}

class MutationRemover {
 public:
  explicit MutationRemover(std::shared_ptr<Graph> graph) : graph_(std::move(graph)) {}

  bool removeListMutation(Block* block) {
    return forEachNode(block, [this](Node* n) { return removeListMutation(n); });
  }

  bool removeTensorMutation(Block* block) {
    return forEachNode(block, [this](Node* n) { return removeTensorMutation(n); });
  }

 private:
  // Applies `rewrite` to every node of `block` and its nested blocks, inner
  // blocks first; `rewrite` may destroy the node it is given.
  template <typename Rewrite>
  static bool forEachNode(Block* block, const Rewrite& rewrite) {
    bool changed = false;
    walkNodes(block, WalkOrder::PostOrder, [&](Node* n) { changed |= rewrite(n); });
    return changed;
  }

  AliasDb& db() {
    if (!db_) db_ = std::make_unique<AliasDb>(graph_);
    return *db_;
  }
  // The graph changed in a way the database's mutators cannot express (a
  // writer is gone): the next question rebuilds it.
  void invalidate() { db_.reset(); }

  // Whether `v` may share memory with something else or be seen elsewhere:
  // a graph or block input, the output of a node with blocks, subgraphs or
  // side effects, or of a node whose inputs it may alias.
  bool hasSideEffectOrAlias(const Value* v) {
    const Node* n = v->node();
    if (n->kind() == prim::Param || !n->blocks().empty() || n->hasAttribute(attr::Subgraph) || hasSideEffects(n)) {
      return true;
    }
    return db().mayContainAlias(n->inputs(), v);
  }

  // Whether nothing but `mutation` uses `v` before `mutation` runs, so that
  // no reader or alias of v can tell whether v was mutated.
  static bool unusedBefore(const Value* v, const Node* mutation) {
    for (const Use& use : v->uses()) {
      if (use.user != mutation && !use.user->isAfter(mutation)) return false;
    }
    return true;
  }

  // `v`, a fresh value made in `mutation`'s block (not once for many or
  // no runs of a loop or branch) that nothing uses before `mutation`: its
  // creation and the mutation may be seen as one step.
  bool isFreshUntil(const Value* v, const Node* mutation) {
    return v->node()->owningBlock() == mutation->owningBlock() && !hasSideEffectOrAlias(v) && unusedBefore(v, mutation);
  }

  // `v` an output of an if whose branches each make it fresh and use it for
  // nothing else, and that nothing uses before `mutation`.
  bool isFreshIfOutputUntil(const Value* v, const Node* mutation) {
    const Node* if_node = v->node();
    if (if_node->kind() != prim::If || if_node->owningBlock() != mutation->owningBlock() ||
        !unusedBefore(v, mutation)) {
      return false;
    }
    for (const Block* b : if_node->blocks()) {
      const Value* branch_value = b->outputs()[v->offset()];
      if (branch_value->uses().size() > 1 || hasSideEffectOrAlias(branch_value)) return false;
    }
    return true;
  }

  // Moves the node making the mutated value next to the mutation, as 1.13
  // does, where the database allows it. Returns whether they are adjacent.
  bool moveNextTo(Node* creation, Node* mutation) {
    return creation->next() == mutation || db().moveBeforeTopologicallyValid(creation, mutation);
  }

  bool removeListMutation(Node* n) {
    bool append = n->kind() == aten::append && n->inputs().size() == 2;
    bool insert =
        n->kind() == Symbol::aten("insert") && n->inputs().size() == 3 && n->input(1)->node()->kind() == prim::Constant;
    if (!(append || insert) || n->input(0)->node()->kind() != prim::ListConstruct) return false;
    Value* list = n->input(0);
    Node* construct = list->node();
    Value* element = n->inputs().back();
    if (!isFreshUntil(list, n)) return false;
    // The construct takes the element: it must be defined there.
    if (!moveNextTo(construct, n) && !construct->isDominatedBy(element->node())) return false;
    GRAPH_UPDATE("folding ", *n, "into ", *construct);
    if (append) {
      construct->addInput(element);
    } else {
      auto size = static_cast<int64_t>(construct->inputs().size());
      int64_t pos = toIValue(n->input(1))->toInt();
      // Python's insert clamps the position to the list.
      pos = pos < 0 ? std::max<int64_t>(pos + size, 0) : std::min(pos, size);
      construct->insertInput(static_cast<size_t>(pos), element);
    }
    if (!n->outputs().empty()) n->output()->replaceAllUsesWith(list);
    n->destroy();
    invalidate();
    return true;
  }

  static bool isSpecialMappedOp(const Node* n) {
    static const Symbol zero_ = Symbol::aten("zero_");
    static const Symbol fill_ = Symbol::aten("fill_");
    if (n->kind() == zero_) return n->inputs().size() == 1;
    return n->kind() == fill_ && n->inputs().size() == 2 && promotionKind(n->input(1)->type()->kind()) < 3;
  }

  // The pure op of an in-place op (aten::add for aten::add_), when `n` is an
  // aten op that writes its first input alone and returns it.
  std::optional<Symbol> pureVariant(Node* n) {
    if (!n->kind().isAten() || n->outputs().size() != 1 || n->inputs().empty()) return std::nullopt;
    const FunctionSchema* schema = n->maybeSchema();
    if (!schema || schema->name().empty() || schema->name().back() != '_') return std::nullopt;
    Symbol pure = Symbol::fromQualString(schema->name().substr(0, schema->name().size() - 1));
    if (getAllOperatorsFor(pure).empty() && !isSpecialMappedOp(n)) return std::nullopt;
    ValueSet first = {n->input(0)};
    ValueSet others(n->inputs().begin() + 1, n->inputs().end());
    if (!db().writesToAlias(n, first) || db().writesToAlias(n, others)) return std::nullopt;
    return pure;
  }

  // The overload of the pure op that takes `n`'s inputs, and the dtype its
  // shape rule gives for them (when it has one and says).
  struct PureForm {
    std::shared_ptr<const Operator> op;
    std::optional<ScalarType> dtype;
  };
  PureForm pureForm(Node* n, Symbol pure) {
    Node* probe = graph_->create(pure, n->inputs());
    PureForm form{probe->maybeOperator(), std::nullopt};
    if (form.op && form.op->description().shape) {
      shapes::ValueFacts facts;  // the inputs' types and constants say all
      auto results = form.op->description().shape(shapes::Args(probe, form.op->schema(), facts));
      if (results.size() == 1 && results[0].kind == shapes::OutputFacts::Kind::Tensor) {
        form.dtype = results[0].tensor.dtype;
      }
    }
    probe->destroy();
    return form;
  }

  // Whether the pure op gives what the in-place op leaves in x (see the
  // header): a view of x, or a result of x's dtype (as the op's shape rule
  // says) and of x's sizes.
  static bool sameResult(const Node* n, const PureForm& pure) {
    auto x = n->input(0)->type()->cast<TensorType>();
    if (!x || isSpecialMappedOp(n) || returnsViewOfSelf(*pure.op)) return true;
    auto dtype = x->scalarType();
    if (!dtype || pure.dtype != dtype) return false;
    for (size_t i = 1; i < n->inputs().size(); ++i) {
      if (!keepsTypeOf(*x, *dtype, n->input(i))) return false;
    }
    return true;
  }

  // The pure node standing for `n`, inserted before it.
  Node* createPureNode(Node* n, Symbol pure, const PureForm& form) {
    WithInsertPoint guard(n);
    Node* pure_node;
    if (isSpecialMappedOp(n) && n->inputs().size() == 1) {
      pure_node = graph_->insert(aten::zeros_like, {n->input(0)})->node();
    } else if (isSpecialMappedOp(n)) {
      // As 1.13: the fill value does not decide the dtype.
      Value* dtype = graph_->insert(prim::dtype, {n->input(0)});
      pure_node = graph_->insert(Symbol::aten("full_like"), {n->input(0), n->input(1)}, {{"dtype", dtype}})->node();
    } else {
      pure_node = graph_->insertNode(graph_->create(pure, n->inputs()));
    }
    pure_node->copyMetadata(n);
    pure_node->output()->setType(resultType(n, form));
    return pure_node;
  }

  // The in-place op's declared type; or, when that says nothing, x's dtype
  // and sizes, which sameResult proved the pure op keeps (not x's strides).
  static TypePtr resultType(const Node* n, const PureForm& pure) {
    const TypePtr& declared = n->output()->type();
    auto x = n->input(0)->type()->cast<TensorType>();
    auto out = declared->cast<TensorType>();
    if (!x || !out || out->isRefined() || (pure.op && returnsViewOfSelf(*pure.op))) return declared;
    return x->withSizes(x->sizes());
  }

  bool removeTensorMutation(Node* n) {
    auto pure = pureVariant(n);
    if (!pure) return false;
    PureForm form = pureForm(n, *pure);
    if (!form.op && !isSpecialMappedOp(n)) return false;
    if (!sameResult(n, form)) return false;
    Value* mutated = n->input(0);
    if (!isFreshUntil(mutated, n) && !isFreshIfOutputUntil(mutated, n)) return false;
    moveNextTo(mutated->node(), n);
    Node* pure_node = createPureNode(n, *pure, form);
    GRAPH_UPDATE("replacing ", *n, "with ", *pure_node);
    mutated->replaceAllUsesAfterNodeWith(n, pure_node->output());
    n->output()->replaceAllUsesWith(pure_node->output());
    n->destroy();
    invalidate();
    return true;
  }

  std::shared_ptr<Graph> graph_;
  std::unique_ptr<AliasDb> db_;
};

}  // namespace

bool removeMutation(const std::shared_ptr<Graph>& graph) {
  GRAPH_DUMP("before removing mutation:\n", *graph);
  MutationRemover remover(graph);
  bool changed = remover.removeListMutation(graph->block());
  changed |= remover.removeTensorMutation(graph->block());
  if (changed) GRAPH_DUMP("after removing mutation:\n", *graph);
  return changed;
}

}  // namespace kiln
