#include "kiln/passes/analysis/shape_analysis.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "kiln/core/function.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/analysis/node_effects.h"
#include "kiln/tensor/factory.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

using namespace shapes;

// Running a node on stand-ins costs about as much as running it: beyond
// these many input elements the formulas do the work instead.
constexpr int64_t kMaxRunElements = 1 << 20;
constexpr int64_t kMaxExpensiveRunElements = 1 << 12;
// Loop bodies are propagated until the carried types are stable; types only
// lose facts from one round to the next, so this bound is never reached in
// practice.
constexpr int kMaxLoopRounds = 32;

const TensorType* tensorType(const Value* v) { return v->type()->cast<TensorType>(); }

bool isTensorList(const Type& t) {
  auto list = t.cast<ListType>();
  if (!list) return false;
  const Type* elem = list->elementType().get();
  if (auto opt = elem->cast<OptionalType>()) elem = opt->elementType().get();
  return elem->kind() == TypeKind::Tensor;
}

bool isIntList(const Type& t) {
  auto list = t.cast<ListType>();
  return list && list->elementType()->kind() == TypeKind::Int;
}

bool returnsTensors(const FunctionSchema& schema) {
  return std::any_of(schema.returns().begin(), schema.returns().end(),
                     [](const Argument& r) { return r.type->kind() == TypeKind::Tensor || isTensorList(*r.type); });
}

// Strides exactly those of a contiguous tensor of these sizes.
bool isContiguousType(const TensorType& t) {
  auto sizes = t.sizes().concrete();
  auto strides = t.strides().concrete();
  if (!sizes || !strides || sizes->size() != strides->size()) return false;
  DimVector expected = contiguousStrides(*sizes);
  return std::equal(expected.begin(), expected.end(), strides->begin());
}

// A tensor of this type could be a wrapped number (0-dim int64, float64 or bool).
bool couldBeWrapped(const Type& type) {
  auto t = type.cast<TensorType>();
  if (!t) return false;
  if (t->dim() && *t->dim() != 0) return false;
  auto d = t->scalarType();
  return !d || *d == ScalarType::Long || *d == ScalarType::Double || *d == ScalarType::Bool;
}

// Ops that change the sizes of a tensor they write to.
bool resizesInput(const Node* n, const FunctionSchema& schema) {
  static const std::unordered_set<Symbol> kinds = [] {
    std::unordered_set<Symbol> s;
    for (const char* name : {"resize_", "resize_as_", "set_", "squeeze_", "unsqueeze_", "t_", "transpose_", "swapaxes_",
                             "swapdims_", "as_strided_"}) {
      s.insert(Symbol::aten(name));
    }
    return s;
  }();
  if (kinds.count(n->kind())) return true;
  // out= arguments are resized to the result.
  return std::any_of(schema.arguments().begin(), schema.arguments().end(),
                     [](const Argument& a) { return a.kwarg_only && a.isOutOrInPlace(); });
}

// Calls and forks may do anything to their arguments.
bool isOpaqueCall(const Node* n) {
  return n->kind() == prim::CallFunction || n->kind() == prim::CallMethod || n->kind() == prim::fork ||
         n->kind() == prim::PythonOp;
}

// Whether the block raises on every path through it (its outputs never flow).
bool alwaysRaises(const Block* b) {
  for (const Node* n : b->nodes()) {
    if (n->kind() == prim::RaiseException) return true;
  }
  return false;
}

// `type` with `fn` applied to every tensor type in it (tuple elements too).
template <typename Fn>
TypePtr mapTensorTypes(const TypePtr& type, const Fn& fn) {
  if (auto t = type->cast<TensorType>()) return fn(*t);
  std::vector<TypePtr> contained = type->containedTypes();
  if (contained.empty()) return type;
  for (TypePtr& c : contained) c = mapTensorTypes(c, fn);
  return type->withContained(std::move(contained));
}

// Strips what a resize may change: sizes, strides and rank.
TypePtr withoutShape(const TypePtr& type) {
  return mapTensorTypes(type, [](const TensorType& t) {
    return TensorType::create(t.scalarType(), t.device(), VaryingShape(), VaryingShape(), t.requiresGrad(),
                              t.undefined());
  });
}

TypePtr withoutRequiresGrad(const TypePtr& type) {
  return mapTensorTypes(type, [](const TensorType& t) { return t.withRequiresGrad(std::nullopt); });
}

TypePtr mergeTypes(const TypePtr& a, const TypePtr& b) {
  if (auto ta = a->cast<TensorType>()) {
    if (auto tb = b->cast<TensorType>()) return ta->merge(*tb);
  }
  if (auto unified = unifyTypes(a, b)) return *unified;
  return unshapedType(a);
}

class ShapePropagator {
 public:
  explicit ShapePropagator(std::shared_ptr<Graph> graph) : graph_(std::move(graph)) {}

  void run() {
    collectHazards(graph_->block());
    if (!resize_roots_.empty()) shape_unstable_ = aliasesOf(resize_roots_);
    if (!grad_roots_.empty()) grad_unstable_ = aliasesOf(grad_roots_);
    for (;;) {
      weakenInputs();
      propagateBlock(graph_->block());
      if (!collectGradHazards(graph_->block())) break;
      grad_unstable_ = aliasesOf(grad_roots_);
    }
  }

 private:
  // --- mutation hazards ------------------------------------------------------------------

  void collectHazards(Block* block) {
    walkNodes(block, WalkOrder::PostOrder, [this](Node* n) {
      if (n->kind() == prim::NumToTensor || isOpaqueCall(n) || n->kind() == aten::wait ||
          (n->kind() == prim::Constant && n->output()->type()->kind() == TypeKind::Tensor &&
           n->kindOf(attr::value) == AttributeKind::t && n->t(attr::value).defined() &&
           n->t(attr::value).isWrappedNumber())) {
        wrapped_sources_ = true;
      }
      if (isOpaqueCall(n)) {
        CalleeEffects effects = calleeEffects(n);
        for (Value* input : n->inputs()) {
          if (!isMutableType(input)) continue;
          if (effects.resizes) resize_roots_.push_back(input);
          if (effects.writes) grad_roots_.push_back(input);
        }
        return;
      }
      const FunctionSchema* schema = n->maybeSchema();
      if (!schema || !schema->isMutable() || !resizesInput(n, *schema)) return;
      for (size_t i = 0; i < schema->arguments().size() && i < n->inputs().size(); ++i) {
        if (schema->arguments()[i].isOutOrInPlace()) resize_roots_.push_back(n->input(i));
      }
    });
  }

  // What a call may do to its arguments: resize them, or write to them
  // (which may make them require grad). Unknown callees may do both.
  struct CalleeEffects {
    bool resizes = true;
    bool writes = true;
  };

  CalleeEffects calleeEffects(const Node* call) {
    std::shared_ptr<Graph> callee;
    if (call->kind() == prim::CallFunction && !call->inputs().empty()) {
      if (auto f = call->input(0)->type()->cast<FunctionType>(); f && f->function()) {
        callee = f->function()->inlinableGraph();
      }
    } else if (call->kind() == prim::CallMethod && !call->inputs().empty() && call->hasAttribute(attr::name)) {
      if (auto cls = call->input(0)->type()->cast<ClassType>()) {
        if (Function* method = cls->findMethod(call->s(attr::name))) callee = method->inlinableGraph();
      }
    }
    if (!callee) return {};
    auto [it, inserted] = callee_effects_.try_emplace(callee.get(), CalleeEffects{});
    if (!inserted) return it->second;  // known, or being scanned (a recursive call: assume the worst)
    CalleeEffects effects{false, false};
    walkNodes(*callee, WalkOrder::PostOrder, [&](const Node* n) {
      if (isOpaqueCall(n)) {
        CalleeEffects inner = calleeEffects(n);
        effects.resizes |= inner.resizes;
        effects.writes |= inner.writes;
      } else if (const FunctionSchema* schema = n->maybeSchema(); schema && schema->isMutable()) {
        effects.writes = true;
        effects.resizes |= resizesInput(n, *schema);
      }
    });
    callee_effects_[callee.get()] = effects;
    callees_.push_back(std::move(callee));
    return effects;
  }

  // In-place writes that can make a tensor require grad (a source that may
  // require grad, or detach_ taking it away); true when new ones were found.
  bool collectGradHazards(Block* block) {
    bool added = false;
    walkNodes(block, WalkOrder::PostOrder, [&](Node* n) {
      const FunctionSchema* schema = n->maybeSchema();
      if (!schema || !schema->isMutable()) return;
      bool source_may_require_grad = n->kind() == Symbol::aten("detach_");
      for (size_t i = 0; i < schema->arguments().size() && i < n->inputs().size(); ++i) {
        if (schema->arguments()[i].isOutOrInPlace()) continue;
        auto rg = inputRequiresGrad(n->input(i));
        if (rg != false) source_may_require_grad = true;
      }
      if (!source_may_require_grad) return;
      for (size_t i = 0; i < schema->arguments().size() && i < n->inputs().size(); ++i) {
        Value* written = n->input(i);
        if (!schema->arguments()[i].isOutOrInPlace() || !tensorType(written)) continue;
        auto dtype = tensorType(written)->scalarType();
        if (dtype && !isFloatingType(*dtype)) continue;
        if (std::find(grad_roots_.begin(), grad_roots_.end(), written) != grad_roots_.end()) continue;
        GRAPH_DEBUG("in-place write may make ", written->debugName(), " require grad: ", *n);
        grad_roots_.push_back(written);
        added = true;
      }
    });
    return added;
  }

  std::unordered_set<const Value*> aliasesOf(const std::vector<Value*>& roots) {
    if (!alias_db_) alias_db_ = std::make_unique<AliasDb>(graph_);
    std::unordered_set<const Value*> out;
    auto visit = [&](const Value* v) {
      if (!isMutableType(v)) return;
      for (const Value* r : roots) {
        if (v == r || alias_db_->mayContainAlias(v, r)) {
          out.insert(v);
          return;
        }
      }
    };
    walkBlocks(*graph_, WalkOrder::PreOrder, [&](Block* b) {
      for (Value* v : b->inputs()) visit(v);
      for (Node* n : b->nodes()) {
        for (Value* v : n->outputs()) visit(v);
      }
    });
    return out;
  }

  // Graph inputs keep their (specialized) types, less what mutation may change.
  void weakenInputs() {
    for (Value* input : graph_->inputs()) {
      TypePtr t = input->type();
      if (shape_unstable_.count(input)) t = withoutShape(t);
      if (grad_unstable_.count(input)) t = withoutRequiresGrad(t);
      if (t != input->type()) input->setType(t);
    }
  }

  // A value that may hold a wrapped number: only when the graph makes some
  // (graph inputs never are: the executor receives them from Python or
  // from a caller's arguments, and ArgumentSpec does not tell).
  void maybeWrapped(const Value* v) {
    if (wrapped_sources_ && couldBeWrapped(*v->type())) facts_.setWrapped(v, Wrapped::Maybe);
  }

  // --- setting types ---------------------------------------------------------------------

  // Sets `v`'s type to `t` (null: unrefined) when `t` has the declared
  // structure (tensors refined, nothing else changed), less what mutation
  // hazards forbid; otherwise to the unrefined type.
  void refine(Value* v, TypePtr t) {
    const TypePtr& old = v->type();
    if (!t ||
        !(old->kind() == TypeKind::Tensor ? t->kind() == TypeKind::Tensor : *unshapedType(old) == *unshapedType(t))) {
      t = unshapedType(old);
    }
    if (shape_unstable_.count(v)) t = withoutShape(t);
    if (grad_unstable_.count(v)) t = withoutRequiresGrad(t);
    if (*old == *t) return;
    GRAPH_UPDATE("%", v->debugName(), " : ", *old, " -> ", *t);
    // Refined tensor types never change which overload a user matches, but
    // Value::setType makes users resolve theirs again: keep what they had.
    std::vector<std::pair<Node*, OperatorPtr>> resolved;
    resolved.reserve(v->uses().size());
    for (const Use& use : v->uses()) resolved.emplace_back(use.user, use.user->maybeOperator());
    v->setType(std::move(t));
    for (auto& [user, op] : resolved) {
      if (op) user->setOperator(std::move(op));
    }
  }

  void setUnshaped(Node* n) {
    for (Value* out : n->outputs()) refine(out, nullptr);
  }

  // --- requires_grad -------------------------------------------------------------------------

  std::optional<bool> inputRequiresGrad(const Value* v) const {
    if (auto t = tensorType(v)) return t->requiresGrad();
    if (v->type()->kind() == TypeKind::None) return false;
    if (isTensorList(*v->type())) {
      const ListFacts* list = facts_.tensorList(v);
      if (!list) return std::nullopt;
      if (!list->elements) {
        auto each = list->each ? list->each->cast<TensorType>() : nullptr;
        return each ? each->requiresGrad() : std::nullopt;
      }
      bool any_unknown = false;
      for (const TypePtr& e : *list->elements) {
        auto t = e->cast<TensorType>();
        if (!t) continue;  // None
        if (t->requiresGrad() == true) return true;
        if (!t->requiresGrad()) any_unknown = true;
      }
      return any_unknown ? std::nullopt : std::optional<bool>(false);
    }
    if (auto opt = v->type()->cast<OptionalType>(); opt && opt->elementType()->kind() == TypeKind::Tensor) {
      return std::nullopt;
    }
    return false;  // numbers, strings, ...
  }

  // An output of `n` with this dtype requires grad when a tensor input does
  // and the result is floating point.
  std::optional<bool> outputRequiresGrad(const Node* n, const FunctionSchema* schema,
                                         std::optional<ScalarType> dtype) const {
    if (dtype && !isFloatingType(*dtype)) return false;
    if (neverRequiresGrad(n)) return false;
    if (schema) {
      if (auto i = schema->argumentIndex("requires_grad");
          i && *i < n->inputs().size() && schema->arguments()[*i].type->kind() == TypeKind::Bool) {
        auto v = facts_.known(n->input(*i));
        return v && v->isBool() ? std::optional<bool>(v->toBool()) : std::nullopt;
      }
    }
    bool any_true = false, any_unknown = false;
    for (const Value* input : n->inputs()) {
      if (onlySelfRequiresGrad(n) && input != n->input(0)) continue;
      auto rg = inputRequiresGrad(input);
      if (rg == true) any_true = true;
      if (!rg) any_unknown = true;
    }
    if (any_true) return dtype ? std::optional<bool>(true) : std::nullopt;
    if (any_unknown) return std::nullopt;
    return false;
  }

  bool inputsContiguous(const Node* n) const {
    for (const Value* input : n->inputs()) {
      if (auto t = tensorType(input)) {
        if (!isContiguousType(*t)) return false;
      } else if (isTensorList(*input->type())) {
        const ListFacts* list = facts_.tensorList(input);
        if (!list || !list->elements) return false;
        for (const TypePtr& e : *list->elements) {
          auto t = e->cast<TensorType>();
          if (t && !isContiguousType(*t)) return false;
        }
      }
    }
    return true;
  }

  TypePtr tensorTypeFor(const Node* n, const FunctionSchema* schema, const TensorFacts& f) const {
    VaryingShape strides;
    auto sizes = f.sizes.concrete();
    if (f.strides.isComplete() && f.strides.size() == f.sizes.size()) {
      strides = f.strides;
    } else if (sizes && (f.contiguous || (f.contiguous_like_inputs && inputsContiguous(n)))) {
      DimVector contiguous = contiguousStrides(*sizes);
      strides = VaryingShape::complete(std::vector<int64_t>(contiguous.begin(), contiguous.end()));
    } else if (f.sizes.size()) {
      strides = VaryingShape(*f.sizes.size());
    }
    return TensorType::create(f.dtype, Device(DeviceType::CPU), f.sizes, strides,
                              outputRequiresGrad(n, schema, f.dtype));
  }

  // --- blocks and control flow ---------------------------------------------------------------

  void propagateBlock(Block* block) {
    for (Node* n : block->nodes()) propagateNode(n);
  }

  void processIf(Node* n) {
    Block* then_block = n->blocks()[0];
    Block* else_block = n->blocks()[1];
    propagateBlock(then_block);
    propagateBlock(else_block);
    bool then_raises = alwaysRaises(then_block), else_raises = alwaysRaises(else_block);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Value* a = then_block->outputs()[i];
      Value* b = else_block->outputs()[i];
      bool skip_a = then_raises || a->node()->kind() == prim::Uninitialized;
      bool skip_b = else_raises || b->node()->kind() == prim::Uninitialized;
      Value* out = n->output(i);
      if (skip_a && skip_b) {
        refine(out, nullptr);
        continue;
      }
      TypePtr t = skip_a ? b->type() : skip_b ? a->type() : mergeTypes(a->type(), b->type());
      refine(out, t);
      Wrapped wa = skip_a ? Wrapped::No : facts_.wrapped(a), wb = skip_b ? Wrapped::No : facts_.wrapped(b);
      if (wa != Wrapped::No || wb != Wrapped::No) maybeWrapped(out);
    }
  }

  void processLoop(Node* n) {
    Block* body = n->blocks()[0];
    size_t carried = n->outputs().size();
    // A carried value that starts uninitialized is never read before the
    // body assigns it: it constrains nothing.
    std::vector<bool> bottom(carried);
    for (size_t i = 0; i < carried; ++i) {
      Value* init = n->input(i + 2);
      Value* param = body->inputs()[i + 1];
      bottom[i] = init->node()->kind() == prim::Uninitialized;
      refine(param, bottom[i] ? nullptr : init->type());
      if (facts_.wrapped(init) != Wrapped::No) maybeWrapped(param);
    }
    int rounds = 0;
    for (;; ++rounds) {
      propagateBlock(body);
      bool changed = false;
      for (size_t i = 0; i < carried; ++i) {
        Value* param = body->inputs()[i + 1];
        Value* next = body->outputs()[i + 1];
        if (next->node()->kind() == prim::Uninitialized) continue;
        TypePtr merged = bottom[i] ? next->type() : mergeTypes(param->type(), next->type());
        bottom[i] = false;
        if (facts_.wrapped(next) != Wrapped::No && facts_.wrapped(param) == Wrapped::No) {
          maybeWrapped(param);
          changed = true;
        }
        if (*merged == *param->type()) continue;
        TypePtr before = param->type();
        refine(param, merged);
        changed |= *before != *param->type();
      }
      if (!changed) break;
      if (rounds == kMaxLoopRounds) {
        for (size_t i = 0; i < carried; ++i) refine(body->inputs()[i + 1], nullptr);
        propagateBlock(body);
        break;
      }
    }
    GRAPH_DEBUG("loop types stable after ", rounds + 1, " rounds: ", *n);
    for (size_t i = 0; i < carried; ++i) {
      Value* param = body->inputs()[i + 1];
      refine(n->output(i), param->type());
      if (facts_.wrapped(param) != Wrapped::No) maybeWrapped(n->output(i));
    }
  }

  // --- lists -------------------------------------------------------------------------------------

  // Whether nothing can write to the list `v` (so what it held when built,
  // it holds at every use).
  static bool isStableList(const Value* v) {
    for (const Use& use : v->uses()) {
      const Node* user = use.user;
      if (user->kind() == prim::ListUnpack) continue;
      const FunctionSchema* schema = user->maybeSchema();
      if (!schema || schema->isVararg() || use.offset >= schema->arguments().size()) return false;
      const Argument& arg = schema->arguments()[use.offset];
      if (!arg.alias_info) continue;
      if (arg.alias_info->is_write) return false;
      // An op handing the list itself back lets its result be written.
      for (const Argument& ret : schema->returns()) {
        if (ret.alias_info && ret.alias_info->before_sets == arg.alias_info->before_sets) return false;
      }
    }
    return true;
  }

  void processListConstruct(Node* n) {
    Value* list = n->output();
    if (!isStableList(list)) return;
    if (isTensorList(*list->type())) {
      ListFacts facts;
      facts.elements.emplace();
      for (const Value* input : n->inputs()) facts.elements->push_back(input->type());
      recordTensorList(list, std::move(facts));
    } else if (isIntList(*list->type())) {
      DimList dims;
      bool all_known = true;
      for (const Value* input : n->inputs()) {
        auto k = facts_.known(input);
        dims.push_back(k && k->isInt() ? std::optional<int64_t>(k->toInt()) : std::nullopt);
        all_known &= dims.back().has_value();
      }
      if (all_known) {
        std::vector<int64_t> values;
        for (const auto& d : dims) values.push_back(*d);
        facts_.setKnown(list, IValue(values));
      } else {
        facts_.setIntList(list, std::move(dims));
      }
    }
  }

  // What a list's elements are, less what mutation of them may change. What
  // all elements share is what an element at an unknown index has.
  void recordTensorList(const Value* list, ListFacts facts) {
    if (!facts.each && facts.elements && !facts.elements->empty()) {
      facts.each = (*facts.elements)[0];
      for (const TypePtr& e : *facts.elements) facts.each = mergeTypes(facts.each, e);
    }
    auto weaken = [&](TypePtr& t) {
      if (!t) return;
      if (shape_unstable_.count(list)) t = withoutShape(t);
      if (grad_unstable_.count(list)) t = withoutRequiresGrad(t);
    };
    weaken(facts.each);
    if (facts.elements) std::for_each(facts.elements->begin(), facts.elements->end(), weaken);
    facts_.setTensorList(list, std::move(facts));
  }

  // The type of element `i` of a tensor list (negative from the end), or of
  // any element when `i` is unknown.
  TypePtr listElement(const Value* list, std::optional<int64_t> i) const {
    const ListFacts* facts = facts_.tensorList(list);
    if (!facts) return nullptr;
    if (facts->elements && i) {
      auto n = static_cast<int64_t>(facts->elements->size());
      int64_t k = *i < 0 ? *i + n : *i;
      if (k >= 0 && k < n) return (*facts->elements)[static_cast<size_t>(k)];
    }
    return facts->each;
  }

  void processListUnpack(Node* n) {
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Value* out = n->output(i);
      refine(out, listElement(n->input(), static_cast<int64_t>(i)));
      maybeWrapped(out);
    }
  }

  // --- tuples and casts ------------------------------------------------------------------------

  void processTupleConstruct(Node* n) {
    std::vector<TypePtr> elements;
    for (const Value* input : n->inputs()) elements.push_back(input->type());
    refine(n->output(), n->output()->type()->withContained(std::move(elements)));
  }

  void setElementTypes(Node* n, const TypePtr& tuple, std::optional<int64_t> index) {
    auto t = tuple->cast<TupleType>();
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Value* out = n->output(i);
      size_t k = index ? static_cast<size_t>(*index) : i;
      refine(out, t && k < t->elements().size() ? t->elements()[k] : nullptr);
      maybeWrapped(out);
    }
  }

  // prim::unchecked_cast and unwrapping optionals: the input's refinement
  // when it fits the output.
  void processCast(Node* n) {
    Value* out = n->output();
    TypePtr t = n->input(0)->type();
    if (auto opt = t->cast<OptionalType>()) t = opt->elementType();
    refine(out, t);
    if (facts_.wrapped(n->input(0)) != Wrapped::No) maybeWrapped(out);
    if (auto k = facts_.known(n->input(0))) facts_.setKnown(out, *k);
  }

  // --- prim nodes -----------------------------------------------------------------------------------

  void processConstant(Node* n) {
    Value* out = n->output();
    if (out->type()->kind() != TypeKind::Tensor || !n->hasAttribute(attr::value)) return;
    if (n->kindOf(attr::value) != AttributeKind::t) return;
    const Tensor& t = n->t(attr::value);
    if (!t.defined()) return;
    refine(out, TensorType::fromTensor(t));
    if (t.isWrappedNumber()) facts_.setWrapped(out, Wrapped::Yes);
  }

  void processNumToTensor(Node* n) {
    std::optional<ScalarType> dtype;
    switch (n->input()->type()->kind()) {
      case TypeKind::Int: dtype = ScalarType::Long; break;
      case TypeKind::Float: dtype = ScalarType::Double; break;
      case TypeKind::Bool: dtype = ScalarType::Bool; break;
      default: break;
    }
    if (auto k = facts_.known(n->input())) {
      if (k->isInt()) dtype = ScalarType::Long;
      if (k->isDouble()) dtype = ScalarType::Double;
      if (k->isBool()) dtype = ScalarType::Bool;
    }
    TensorFacts f;
    f.dtype = dtype;
    f.sizes = VaryingShape(0);
    f.contiguous = true;
    refine(n->output(), tensorTypeFor(n, nullptr, f));
    facts_.setWrapped(n->output(), Wrapped::Yes);
  }

  void processConstantChunk(Node* n) {
    auto t = tensorType(n->input());
    if (!t || !t->dim() || *t->dim() == 0 || !n->hasAttribute(attr::chunks) || !n->hasAttribute(attr::dim)) {
      setUnshaped(n);
      return;
    }
    auto dims = *t->sizes().dims();
    int64_t chunks = n->i(attr::chunks), dim = n->i(attr::dim);
    int64_t rank = static_cast<int64_t>(dims.size());
    if (dim < -rank || dim >= rank || chunks <= 0) {
      setUnshaped(n);
      return;
    }
    size_t d = static_cast<size_t>(dim < 0 ? dim + rank : dim);
    std::vector<std::optional<int64_t>> piece(n->outputs().size());
    size_t pieces = piece.size();
    if (auto size = dims[d]; size && *size > 0) {
      int64_t split = (*size + chunks - 1) / chunks;
      pieces = static_cast<size_t>((*size + split - 1) / split);
      for (size_t i = 0; i < piece.size(); ++i) {
        piece[i] = std::min(split, *size - static_cast<int64_t>(i) * split);
      }
    }
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      if (i >= pieces) {  // a short dim gives fewer pieces: the rest must go unused
        refine(n->output(i), nullptr);
        continue;
      }
      DimList out_dims = dims;
      out_dims[d] = piece[i];
      // Chunks are narrowed views: the input's strides.
      VaryingShape strides = t->strides().size() == out_dims.size() ? t->strides() : VaryingShape(out_dims.size());
      refine(n->output(i), TensorType::create(t->scalarType(), t->device(), VaryingShape(out_dims), strides,
                                              outputRequiresGrad(n, nullptr, t->scalarType())));
    }
  }

  // aten::size, dim, numel, ... answered from the input's type.
  bool processQuery(Node* n) {
    static const Symbol dtype_kind = Symbol::prim("dtype"), is_floating = Symbol::aten("is_floating_point");
    const auto* t = n->inputs().empty() ? nullptr : tensorType(n->input(0));
    if (!t || n->outputs().size() != 1) return false;
    Value* out = n->output();
    Symbol k = n->kind();
    if (k == aten::size && n->inputs().size() == 1) {
      if (!t->sizes().dims() || !isStableList(out)) return true;
      if (auto concrete = t->sizes().concrete()) {
        facts_.setKnown(out, IValue(*concrete));
      } else {
        facts_.setIntList(out, *t->sizes().dims());
      }
      return true;
    }
    if (k == aten::size && n->inputs().size() == 2) {
      auto dim = facts_.known(n->input(1));
      if (t->dim() && dim && dim->isInt()) {
        int64_t r = static_cast<int64_t>(*t->dim()), d = dim->toInt();
        if (d >= -r && d < r && t->sizes()[static_cast<size_t>(d < 0 ? d + r : d)]) {
          facts_.setKnown(out, *t->sizes()[static_cast<size_t>(d < 0 ? d + r : d)]);
        }
      }
      return true;
    }
    if (k == aten::dim) {
      if (t->dim()) facts_.setKnown(out, static_cast<int64_t>(*t->dim()));
      return true;
    }
    if (k == aten::numel) {
      if (auto sizes = t->sizes().concrete()) {
        int64_t p = 1;
        for (int64_t s : *sizes) p *= s;
        facts_.setKnown(out, p);
      }
      return true;
    }
    if (k == dtype_kind) {
      if (t->scalarType()) facts_.setKnown(out, static_cast<int64_t>(*t->scalarType()));
      return true;
    }
    if (k == is_floating) {
      if (t->scalarType()) facts_.setKnown(out, isFloatingType(*t->scalarType()));
      return true;
    }
    return false;
  }

  // --- operators ---------------------------------------------------------------------------------

  // Outputs of in-place and out= forms are the tensors they write.
  void processMutating(Node* n, const FunctionSchema& schema) {
    bool resizes = resizesInput(n, schema);
    for (size_t r = 0; r < schema.returns().size() && r < n->outputs().size(); ++r) {
      Value* out = n->output(r);
      const Argument& ret = schema.returns()[r];
      TypePtr t;
      for (size_t i = 0; ret.alias_info && tensorType(out) && i < schema.arguments().size() && i < n->inputs().size();
           ++i) {
        const Argument& arg = schema.arguments()[i];
        if (!arg.alias_info || arg.alias_info->before_sets != ret.alias_info->before_sets) continue;
        if (auto written = tensorType(n->input(i))) {
          t = written->withRequiresGrad(outputRequiresGrad(n, &schema, written->scalarType()));
          if (resizes) t = withoutShape(t);
          if (facts_.wrapped(n->input(i)) != Wrapped::No) maybeWrapped(out);
        }
        break;
      }
      refine(out, t);
    }
  }

  // A tensor of a complete type filled with zeros (or ones).
  static std::optional<Tensor> standIn(const TensorType& t, bool ones, int64_t& budget) {
    auto sizes = t.sizes().concrete();
    auto strides = t.strides().concrete();
    if (!sizes || !strides || !t.scalarType() || sizes->size() != strides->size()) return std::nullopt;
    int64_t extent = 1;
    for (size_t i = 0; i < sizes->size(); ++i) {
      if ((*sizes)[i] == 0) {
        extent = 0;
        break;
      }
      if ((*strides)[i] < 0) return std::nullopt;
      extent += ((*sizes)[i] - 1) * (*strides)[i];
    }
    budget -= extent;
    if (budget < 0) return std::nullopt;
    Tensor r = emptyStrided(*sizes, *strides, *t.scalarType());
    std::memset(r.storage()->data(), 0, r.storage()->nbytes());
    if (ones) fill_(r, Scalar(int64_t{1}));
    return r;
  }

  // The node's inputs: known values, and stand-ins for tensors (also in
  // lists) of complete types. Nullopt when an input has neither.
  std::optional<Stack> inputsForRun(Node* n, bool ones, bool& stand_ins) const {
    int64_t budget = expensiveToRun(n) ? kMaxExpensiveRunElements : kMaxRunElements;
    Stack stack;
    for (Value* input : n->inputs()) {
      if (auto k = facts_.known(input)) {
        if (k->isTensor() && k->toTensor().defined()) budget -= k->toTensor().numel();
        stack.push_back(std::move(*k));
        continue;
      }
      if (auto t = tensorType(input)) {
        Wrapped w = facts_.wrapped(input);
        auto r = w == Wrapped::Maybe ? std::nullopt : standIn(*t, ones, budget);
        if (!r) return std::nullopt;
        if (w == Wrapped::Yes) r->impl()->setWrappedNumber(true);
        stack.push_back(std::move(*r));
        stand_ins = true;
        continue;
      }
      if (!isTensorList(*input->type())) return std::nullopt;
      const ListFacts* list = facts_.tensorList(input);
      if (!list || !list->elements) return std::nullopt;
      std::vector<IValue> elements;
      for (const TypePtr& e : *list->elements) {
        if (e->kind() == TypeKind::None) {
          elements.emplace_back();
          continue;
        }
        auto t = e->cast<TensorType>();
        auto r = t ? standIn(*t, ones, budget) : std::nullopt;
        if (!r) return std::nullopt;
        elements.emplace_back(std::move(*r));
      }
      stack.push_back(IValue::list(input->type()->cast<ListType>()->elementType(), std::move(elements)));
      stand_ins = true;
    }
    return stack;
  }

  static bool runs(const Node* n, const Operation& op, Stack& stack) {
    try {
      op(stack);
      return true;
    } catch (const std::exception& e) {
      GRAPH_DEBUG("running on stand-ins raised (", e.what(), "): ", *n);
      return false;
    }
  }

  // (a): runs `n` on stand-ins of its complete input types and takes the
  // complete types of the results.
  bool tryRun(Node* n, const FunctionSchema& schema) {
    if (schema.isVararg() || isFactory(n) || hasSideEffects(n) || isNondeterministic(n)) return false;
    bool stand_ins = false;
    auto stack = inputsForRun(n, /*ones=*/false, stand_ins);
    if (!stack || (stand_ins && valueDependent(n, facts_))) return false;
    Operation op = findOperation(*n);
    if (!op) return false;
    // Zeros can make an op raise where the program's values do not (integer
    // division by zero): ones get a second chance. An op that raises on both
    // raises in the program too, on a shape: nothing to refine.
    if (!runs(n, op, *stack)) {
      if (!stand_ins || !(stack = inputsForRun(n, /*ones=*/true, stand_ins)) || !runs(n, op, *stack)) {
        setUnshaped(n);
        return true;
      }
    }
    if (stack->size() != n->outputs().size()) return false;
    for (size_t i = 0; i < stack->size(); ++i) {
      Value* out = n->output(i);
      const IValue& result = (*stack)[i];
      bool tensor = result.isTensor() && result.toTensor().defined() && tensorType(out);
      refine(out, tensor ? completeType(n, schema, result.toTensor()) : nullptr);
      if (!tensor && result.isTensorList() && isTensorList(*out->type()) && isStableList(out)) {
        ListFacts facts;
        facts.elements.emplace();
        for (const Tensor& t : result.toTensorVector()) facts.elements->push_back(completeType(n, schema, t));
        recordTensorList(out, std::move(facts));
      }
    }
    markAliasOutputsWrapped(n, schema);
    return true;
  }

  TypePtr completeType(const Node* n, const FunctionSchema& schema, const Tensor& t) const {
    TypePtr type = TensorType::fromTensor(t);
    return type->cast<TensorType>()->withRequiresGrad(outputRequiresGrad(n, &schema, t.dtype()));
  }

  // Outputs that may be an input itself (`to` to the same dtype, contiguous
  // of a contiguous tensor) may be a wrapped number when it is.
  void markAliasOutputsWrapped(Node* n, const FunctionSchema& schema) {
    for (size_t r = 0; r < schema.returns().size() && r < n->outputs().size(); ++r) {
      if (!schema.returns()[r].alias_info) continue;
      for (const Value* input : n->inputs()) {
        if (facts_.wrapped(input) != Wrapped::No && couldBeWrapped(*n->output(r)->type())) {
          maybeWrapped(n->output(r));
        }
      }
    }
  }

  // (b): the operator's formula.
  bool applyFormula(Node* n, const FunctionSchema& schema) {
    Formula formula = findFormula(n, schema);
    if (!formula) return false;
    std::vector<OutputFacts> results = formula(Args(n, schema, facts_));
    if (results.size() != n->outputs().size()) return false;
    for (size_t i = 0; i < results.size(); ++i) {
      Value* out = n->output(i);
      const OutputFacts& r = results[i];
      bool tensor = r.kind == OutputFacts::Kind::Tensor && tensorType(out);
      refine(out, tensor ? tensorTypeFor(n, &schema, r.tensor) : nullptr);
      if (!tensor && r.kind == OutputFacts::Kind::TensorList && isTensorList(*out->type()) && isStableList(out)) {
        ListFacts facts;
        facts.each = tensorTypeFor(n, &schema, r.tensor);
        if (r.elements) {
          facts.elements.emplace();
          for (const TensorFacts& e : *r.elements) facts.elements->push_back(tensorTypeFor(n, &schema, e));
        }
        recordTensorList(out, std::move(facts));
      }
    }
    markAliasOutputsWrapped(n, schema);
    return true;
  }

  // Scalar ops whose inputs are all known: their results are known too.
  void evaluateKnown(Node* n, const FunctionSchema& schema) {
    if (schema.isMutable() || hasSideEffects(n) || isNondeterministic(n) || !n->blocks().empty()) return;
    for (const Value* out : n->outputs()) {
      TypeKind k = out->type()->kind();
      if (k != TypeKind::Int && k != TypeKind::Float && k != TypeKind::Bool) return;
    }
    Stack stack;
    for (const Value* input : n->inputs()) {
      if (tensorType(input)) return;
      auto k = facts_.known(input);
      if (!k) return;
      stack.push_back(std::move(*k));
    }
    Operation op = findOperation(*n);
    if (!op) return;
    try {
      op(stack);
    } catch (const std::exception&) {
      return;
    }
    if (stack.size() != n->outputs().size()) return;
    for (size_t i = 0; i < stack.size(); ++i) facts_.setKnown(n->output(i), stack[i]);
  }

  void processOperator(Node* n) {
    const FunctionSchema* schema = n->maybeSchema();
    if (!schema) {
      setUnshaped(n);
      return;
    }
    if (schema->isMutable()) {
      processMutating(n, *schema);
      return;
    }
    if (n->kind() == aten::__getitem__ && tensorType(n->output()) && isTensorList(*n->input(0)->type())) {
      auto index = facts_.known(n->input(1));
      refine(n->output(),
             listElement(n->input(0), index && index->isInt() ? std::optional(index->toInt()) : std::nullopt));
      maybeWrapped(n->output());
      return;
    }
    if (!returnsTensors(*schema)) {
      if (!processQuery(n)) evaluateKnown(n, *schema);
      return;
    }
    if (tryRun(n, *schema) || applyFormula(n, *schema)) return;
    setUnshaped(n);
  }

  void propagateNode(Node* n) {
    for (const Value* out : n->outputs()) facts_.forget(out);
    switch (n->kind()) {
      case prim::If: return processIf(n);
      case prim::Loop: return processLoop(n);
      case prim::Constant: return processConstant(n);
      case prim::TupleConstruct: return processTupleConstruct(n);
      case prim::TupleUnpack: return setElementTypes(n, n->input()->type(), std::nullopt);
      case prim::TupleIndex: {
        auto index = facts_.known(n->input(1));
        if (index && index->isInt() && index->toInt() >= 0) {
          setElementTypes(n, n->input(0)->type(), index->toInt());
        } else {
          setUnshaped(n);
        }
        return;
      }
      case prim::ListConstruct: return processListConstruct(n);
      case prim::ListUnpack: return processListUnpack(n);
      case prim::ConstantChunk: return processConstantChunk(n);
      case prim::NumToTensor: return processNumToTensor(n);
      case prim::unchecked_cast:
      case prim::unchecked_unwrap_optional: return processCast(n);
      case prim::CallFunction:
      case prim::CallMethod:
      case prim::Uninitialized:
      case prim::GetAttr: return;  // declared types
      default: break;
    }
    static const Symbol unwrap_optional = Symbol::aten("_unwrap_optional");
    if (n->kind() == unwrap_optional) return processCast(n);
    for (Block* b : n->blocks()) propagateBlock(b);
    if (n->kind().isAten() || n->kind().isPrim()) processOperator(n);
  }

  std::shared_ptr<Graph> graph_;
  ValueFacts facts_;
  std::unique_ptr<AliasDb> alias_db_;
  bool wrapped_sources_ = false;
  std::unordered_map<const Graph*, CalleeEffects> callee_effects_;
  std::vector<std::shared_ptr<Graph>> callees_;  // keeps the scanned graphs (and their addresses) alive
  std::vector<Value*> resize_roots_;
  std::vector<Value*> grad_roots_;
  std::unordered_set<const Value*> shape_unstable_;
  std::unordered_set<const Value*> grad_unstable_;
};

}  // namespace

void propagateShapes(const std::shared_ptr<Graph>& graph) {
  GRAPH_DUMP("before shape propagation:\n", *graph);
  ShapePropagator(graph).run();
  GRAPH_DUMP("after shape propagation:\n", *graph);
}

}  // namespace kiln
