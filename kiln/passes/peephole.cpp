#include "kiln/passes/peephole.h"

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/ops/fold_rules.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/lower_tuples.h"
#include "kiln/passes/peephole_detail.h"
#include "kiln/passes/peephole_list_idioms.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace detail {

bool anyNodeIn(const Block* block, const std::function<bool(const Node*)>& pred) {
  return walkNodes(block, WalkOrder::PreOrder,
                   [&](const Node* n) { return pred(n) ? WalkResult::interrupt() : WalkResult::advance(); })
      .wasInterrupted();
}

std::optional<int64_t> constantInt(const Value* v) {
  auto value = toIValue(v);
  if (!value || !value->isInt()) return std::nullopt;
  return value->toInt();
}

bool mustBeNone(const Value* v) {
  const Node* n = v->node();
  return v->type()->kind() == TypeKind::None || n->kind() == prim::AutogradZero ||
         (n->kind() == prim::Constant && !n->hasAttributes() && v->type()->kind() == TypeKind::Optional);
}

bool mustNotBeNone(const Value* v) {
  if (v->node()->kind() == prim::AutogradAdd) return false;
  const Type& t = *v->type();
  switch (t.kind()) {
    case TypeKind::None:
    case TypeKind::Optional:
    case TypeKind::Any: return false;
    case TypeKind::Union: return !t.cast<UnionType>()->canHoldType(*NoneType::get());
    default: return true;
  }
}

}  // namespace detail

namespace {

Symbol isFloatingPointSymbol() {
  static const Symbol s = Symbol::aten("is_floating_point");
  return s;
}
Symbol isComplexSymbol() {
  static const Symbol s = Symbol::aten("is_complex");
  return s;
}

const TensorType* tensorType(const Value* v) { return v->type()->cast<TensorType>(); }

bool isTensorOp(const Node* n, size_t num_inputs) {
  return n->inputs().size() == num_inputs && tensorType(n->input(0));
}

// The outputs of an `aten::chunk` list, when every use of the list is a
// prim::ListUnpack into `chunks` values or a constant index in [0, chunks):
// pairs of (value, chunk number). Negative indices are left alone: they
// count from the end of a list that may be shorter than `chunks`.
std::optional<std::vector<std::pair<Value*, size_t>>> chunkOutputs(Node* chunk, int64_t chunks) {
  std::vector<std::pair<Value*, size_t>> outputs;
  for (const Use& use : chunk->output()->uses()) {
    Node* user = use.user;
    if (user->kind() == prim::ListUnpack && static_cast<int64_t>(user->outputs().size()) == chunks) {
      for (size_t i = 0; i < user->outputs().size(); ++i) outputs.emplace_back(user->output(i), i);
    } else if (user->kind() == aten::__getitem__ && use.offset == 0 && user->inputs().size() == 2) {
      auto index = detail::constantInt(user->input(1));
      if (!index || *index < 0 || *index >= chunks) return std::nullopt;
      outputs.emplace_back(user->output(), static_cast<size_t>(*index));
    } else {
      return std::nullopt;
    }
  }
  return outputs;
}

class PeepholeOptimizer {
 public:
  PeepholeOptimizer(std::shared_ptr<Graph> graph, bool shape_peepholes)
      : graph_(std::move(graph)), shape_peepholes_(shape_peepholes) {}

  bool optimize(Block* block) {
    bool changed = false;
    walkNodes(block, WalkOrder::PostOrder, [&](Node* n) { changed |= optimize(n); });
    return changed;
  }

 private:
  bool replace(Node* n, Value* by, const char* why) {
    GRAPH_UPDATE("replacing ", *n, "with %", by->debugName(), " (", why, ")");
    n->output()->replaceAllUsesWith(by);
    return true;
  }

  bool replaceWithConstant(Node* n, const IValue& value, const char* why) {
    WithInsertPoint guard(n);
    return replace(n, graph_->insertConstant(value), why);
  }

  // A tensor type whose refinements the pass may use.
  const TensorType* refined(const Value* v) const { return shape_peepholes_ ? tensorType(v) : nullptr; }

  bool optimize(Node* n) {
    switch (n->kind()) {
      case aten::_grad_sum_to_size: return optimizeGradSumToSize(n);
      case aten::expand: return optimizeExpand(n);
      case aten::t: return optimizeDoubleTranspose(n);
      case aten::Float:
      case aten::Int:
      case aten::FloatImplicit:
      case aten::IntImplicit:
      case aten::ScalarImplicit: return optimizeNumToTensor(n);
      case aten::size: return optimizeSize(n);
      case aten::len: return optimizeLenOfSize(n);
      case aten::chunk: return optimizeChunk(n);
      case aten::dim:
      case prim::dtype:
      case prim::device:
      case prim::is_cuda: return optimizeTensorProperty(n);
      default:
        if (n->kind() == isFloatingPointSymbol() || n->kind() == isComplexSymbol()) return optimizeTensorProperty(n);
        return foldToSameTensor(n);
    }
  }

  // `_grad_sum_to_size(x, None)` is x; `x._grad_sum_to_size(a)._grad_sum_to_size(b)`
  // is `x._grad_sum_to_size(b)`.
  bool optimizeGradSumToSize(Node* n) {
    if (!isTensorOp(n, 2)) return false;
    if (detail::mustBeNone(n->input(1))) return replace(n, n->input(0), "summing to no size");
    bool changed = false;
    for (const Use& use : std::vector<Use>(n->output()->uses())) {
      Node* user = use.user;
      if (user->kind() == aten::_grad_sum_to_size && use.offset == 0 && user->inputs().size() == 2 &&
          user->input(1)->type()->isSubtypeOf(*ListType::ofInts())) {
        GRAPH_UPDATE("summing ", *user, "from %", n->input(0)->debugName());
        user->replaceInput(0, n->input(0));
        changed = true;
      }
    }
    return changed;
  }

  // `x.expand(x.size())` is x.
  bool optimizeExpand(Node* n) {
    if (!isTensorOp(n, 3)) return false;
    const TensorType* type = refined(n->input(0));
    auto size = constantSizes(n->input(1));
    auto sizes = type ? type->sizes().concrete() : std::nullopt;
    if (!size || !sizes || *size != *sizes) return false;
    return replace(n, n->input(0), "expanding to its own size");
  }

  // An int list constant, or a prim::ListConstruct of int constants (as
  // optimizeSizes makes them) used only once, which nothing can have changed.
  static std::optional<std::vector<int64_t>> constantSizes(const Value* list) {
    if (auto value = toIValue(list)) {
      if (value->isList()) return value->toIntVector();
      return std::nullopt;
    }
    if (list->node()->kind() != prim::ListConstruct || list->uses().size() != 1) return std::nullopt;
    std::vector<int64_t> sizes;
    for (const Value* element : list->node()->inputs()) {
      auto size = detail::constantInt(element);
      if (!size) return std::nullopt;
      sizes.push_back(*size);
    }
    return sizes;
  }

  // `x.t().t()` is x, when x has at most two dimensions (else t raises).
  bool optimizeDoubleTranspose(Node* n) {
    if (!isTensorOp(n, 1)) return false;
    Node* inner = n->input()->node();
    if (inner->kind() != aten::t || !isTensorOp(inner, 1)) return false;
    Value* x = inner->input();
    Symbol producer = x->node()->kind();
    auto rank = tensorType(x)->dim();
    if (!(rank && *rank <= 2) && producer != aten::mm && producer != aten::t) return false;
    return replace(n, x, "transposing twice");
  }

  // `x.type_as(y)` is x when both have the same dtype and device.
  // A tensor op that returns one of its inputs itself (`x.type_as(y)` of
  // an x already of y's type; OpDescription::fold). Folds read refined
  // dtypes: only with shape peepholes.
  bool foldToSameTensor(Node* n) {
    if (!shape_peepholes_ || !folds::hasFold(n, /*tensor_result=*/true)) return false;
    FoldResult folded = folds::foldNode(n);
    if (!folded.value || !folded.same_tensor) return false;
    return replace(n, folded.value, "the very tensor it returns");
  }

  // `int(NumToTensor(i))` is i, when i already has the result's type
  // (1.13 also turns `int(NumToTensor(2.5))` into 2.5).
  bool optimizeNumToTensor(Node* n) {
    if (n->inputs().size() != 1 || n->input()->node()->kind() != prim::NumToTensor) return false;
    Value* number = n->input()->node()->input(0);
    if (!number->type()->isSubtypeOf(*n->output()->type())) return false;
    return replace(n, number, "converting a number to a tensor and back");
  }

  bool optimizeSize(Node* n) {
    if (n->inputs().size() == 1) return optimizeSizes(n);
    if (!isTensorOp(n, 2)) return false;
    const TensorType* type = refined(n->input(0));
    auto dim = detail::constantInt(n->input(1));
    if (!type || !type->dim() || !dim) return false;
    auto rank = static_cast<int64_t>(*type->dim());
    int64_t d = *dim < 0 ? *dim + rank : *dim;
    if (d < 0 || d >= rank || !type->sizes()[static_cast<size_t>(d)]) return false;
    return replaceWithConstant(n, IValue(*type->sizes()[static_cast<size_t>(d)]), "a known size");
  }

  // `x.size()` of known sizes becomes a list of constants, built afresh on
  // each run: a list constant would be one object shared by every run.
  bool optimizeSizes(Node* n) {
    const TensorType* type = refined(n->input(0));
    auto sizes = type ? type->sizes().concrete() : std::nullopt;
    if (!sizes) return false;
    WithInsertPoint guard(n);
    std::vector<Value*> elements;
    for (int64_t s : *sizes) elements.push_back(graph_->insertConstant(IValue(s)));
    Node* list = graph_->insertNode(graph_->createList(IntType::get(), elements));
    return replace(n, list->output(), "known sizes");
  }

  // `len(x.size())` is the rank; only for a size list with no other use,
  // which nothing else can have changed.
  bool optimizeLenOfSize(Node* n) {
    if (n->inputs().size() != 1) return false;
    Node* size = n->input()->node();
    if (size->kind() != aten::size || !isTensorOp(size, 1) || n->input()->uses().size() != 1) return false;
    const TensorType* type = refined(size->input(0));
    if (!type || !type->dim()) return false;
    return replaceWithConstant(n, IValue(static_cast<int64_t>(*type->dim())), "a known rank");
  }

  bool optimizeTensorProperty(Node* n) {
    if (!isTensorOp(n, 1)) return false;
    const TensorType* type = refined(n->input(0));
    if (!type) return false;
    auto dtype = type->scalarType();
    auto device = type->device();
    switch (n->kind()) {
      case aten::dim:
        if (!type->dim()) return false;
        return replaceWithConstant(n, IValue(static_cast<int64_t>(*type->dim())), "a known rank");
      case prim::dtype:
        if (!dtype) return false;
        return replaceWithConstant(n, IValue(static_cast<int64_t>(*dtype)), "a known dtype");
      case prim::device:
        if (!device) return false;
        return replaceWithConstant(n, IValue(*device), "a known device");
      case prim::is_cuda:
        if (!device) return false;
        return replaceWithConstant(n, IValue(device->type == DeviceType::CUDA), "a known device");
      default:
        if (!dtype) return false;
        bool answer = n->kind() == isFloatingPointSymbol() ? isFloatingType(*dtype) : isComplexType(*dtype);
        return replaceWithConstant(n, IValue(answer), "a known dtype");
    }
  }

  // `a, b = x.chunk(2, d)` -> `a, b = prim::ConstantChunk[chunks=2, dim=d](x)`:
  // one node and no list.
  bool optimizeChunk(Node* n) {
    if (!isTensorOp(n, 3)) return false;
    auto chunks = detail::constantInt(n->input(1));
    auto dim = detail::constantInt(n->input(2));
    if (!chunks || !dim || *chunks <= 0) return false;
    auto outputs = chunkOutputs(n, *chunks);
    if (!outputs) return false;
    WithInsertPoint guard(n);
    Node* constant_chunk =
        graph_->insertNode(graph_->create(prim::ConstantChunk, {n->input(0)}, static_cast<size_t>(*chunks)));
    constant_chunk->i_(attr::chunks, *chunks)->i_(attr::dim, *dim)->copyMetadata(n);
    for (auto& [value, index] : *outputs) {
      constant_chunk->output(index)->setType(value->type());
      value->replaceAllUsesWith(constant_chunk->output(index));
    }
    GRAPH_UPDATE("replacing ", *n, "with ", *constant_chunk);
    return true;
  }

  std::shared_ptr<Graph> graph_;
  bool shape_peepholes_;
};

bool isTupleIdiom(const Node* n) {
  return (n->kind() == prim::TupleUnpack || n->kind() == prim::TupleIndex || n->kind() == prim::TupleSlice) &&
         !n->inputs().empty() && n->input(0)->node()->kind() == prim::TupleConstruct;
}

}  // namespace

bool peepholeOptimize(const std::shared_ptr<Graph>& graph, bool disable_shape_peepholes) {
  GRAPH_DUMP("before peephole optimization:\n", *graph);
  bool shape_peepholes = !disable_shape_peepholes;
  bool changed = PeepholeOptimizer(graph, shape_peepholes).optimize(graph->block());
  changed |= peepholeOptimizeListIdioms(graph);
  changed |= detail::peepholeOptimizeDictIdioms(graph);
  changed |= detail::peepholeOptimizeAliasSensitive(graph, shape_peepholes);
  changed |= detail::peepholeOptimizeNonTensor(graph);
  changed |= detail::combineConcats(graph);
  if (detail::anyNodeIn(graph->block(), isTupleIdiom)) {
    lowerSimpleTuples(graph);
    changed = true;
  }
  if (changed) {
    eliminateDeadCode(graph);
    GRAPH_DUMP("after peephole optimization:\n", *graph);
  }
  return changed;
}

}  // namespace kiln
