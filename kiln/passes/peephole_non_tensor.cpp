// The peephole stage on ints, bools, None and optionals (PyTorch 1.13's
// PeepholeOptimizeNonTensor), without 1.13's rewrites that change a result:
// `i / 1` (a float, not the int i) and `f == f` on floats (false for NaN).
#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/peephole_detail.h"
#include "kiln/util/jit_log.h"

namespace kiln::detail {

namespace {

bool isInt(const Value* v) { return v->type()->kind() == TypeKind::Int; }

// The constant operand of a binary int op, moved to the second input when
// the op commutes; nullopt unless both operands are ints and one is constant.
std::optional<int64_t> constantOperand(Node* n) {
  if (n->inputs().size() != 2 || !isInt(n->input(0)) || !isInt(n->input(1))) return std::nullopt;
  if (n->kind() == aten::mul || n->kind() == aten::add) {
    if (auto c = constantInt(n->input(0))) {
      n->permuteInputs({1, 0});
      return c;
    }
  }
  return constantInt(n->input(1));
}

// `i * 1`, `1 * i`, `i // 1` -> i.
bool simplifyMulOrFloorDiv(Node* n) {
  auto c = constantOperand(n);
  if (!c || *c != 1) return false;
  GRAPH_UPDATE("replacing ", *n, "with %", n->input(0)->debugName());
  n->output()->replaceAllUsesWith(n->input(0));
  return true;
}

Symbol unwrapOptionalSymbol() {
  static const Symbol s = Symbol::aten("_unwrap_optional");
  return s;
}
Symbol ceilSymbol() {
  static const Symbol s = Symbol::aten("ceil");
  return s;
}

// `i + 0`, `i - 0` -> i; `(i + a) - b` -> `i + (a - b)` and the like.
bool simplifyAddOrSub(Node* n) {
  auto c = constantOperand(n);
  if (!c) return false;
  if (*c == 0) {
    GRAPH_UPDATE("replacing ", *n, "with %", n->input(0)->debugName());
    n->output()->replaceAllUsesWith(n->input(0));
    return true;
  }
  Node* dep = n->input(0)->node();
  if (dep->kind() != aten::add && dep->kind() != aten::sub) return false;
  auto d = constantOperand(dep);
  if (!d) return false;
  // Ints wrap when they overflow at run time; so does the folded constant.
  auto uc = static_cast<uint64_t>(*c);
  auto ud = static_cast<uint64_t>(*d);
  auto merged = static_cast<int64_t>(dep->kind() == n->kind() ? uc + ud : uc - ud);
  GRAPH_UPDATE("merging the constants of ", *dep, "into ", *n);
  if (merged == 0) {
    n->output()->replaceAllUsesWith(dep->input(0));
  } else {
    WithInsertPoint guard(n);
    n->replaceInput(0, dep->input(0));
    n->replaceInput(1, n->owningGraph()->insertConstant(merged));
  }
  return true;
}

// Types whose `==` never raises and is true for a value and itself.
bool reflexiveEquality(const Type& t) {
  switch (t.kind()) {
    case TypeKind::Bool:
    case TypeKind::Int:
    case TypeKind::None: return true;
    default: return false;
  }
}

bool alwaysEqualToItself(const TypePtr& t) {
  if (auto list = t->cast<ListType>()) return reflexiveEquality(*list->elementType());
  if (auto dict = t->cast<DictType>())
    return reflexiveEquality(*dict->keyType()) && reflexiveEquality(*dict->valueType());
  return reflexiveEquality(*t);
}

class NonTensorPeepholes {
 public:
  explicit NonTensorPeepholes(Graph& graph) : graph_(graph) {}

  bool optimize(Block* block) {
    bool changed = false;
    walkNodes(block, WalkOrder::PostOrder, [&](Node* n) {
      changed |= replaceNoneOutputs(n);
      changed |= optimize(n);
    });
    return changed;
  }

 private:
  void replaceWithConstant(Node* n, const IValue& value) {
    WithInsertPoint guard(n);
    Value* constant = graph_.insertConstant(value);
    GRAPH_UPDATE("replacing ", *n, "with %", constant->debugName());
    n->output()->replaceAllUsesWith(constant);
  }

  void replaceWithInput(Node* n) {
    GRAPH_UPDATE("replacing ", *n, "with its input %", n->input(0)->debugName());
    n->output()->replaceAllUsesWith(n->input(0));
  }

  // A used value of type NoneType can only ever be None.
  bool replaceNoneOutputs(Node* n) {
    if (n->kind() == prim::Constant) return false;
    bool changed = false;
    for (Value* output : n->outputs()) {
      if (output->type()->kind() != TypeKind::None || !output->hasUses()) continue;
      WithInsertPoint guard(n);
      output->replaceAllUsesWith(graph_.insertConstant(IValue()));
      changed = true;
    }
    return changed;
  }

  bool optimizeIf(Node* n) {
    bool changed = false;
    Block* then_block = n->blocks()[0];
    Block* else_block = n->blocks()[1];
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      Value* out = n->output(i);
      const Value* then_out = then_block->outputs()[i];
      const Value* else_out = else_block->outputs()[i];
      // `c and True`, `c or False`: the output is the condition.
      auto then_value = toIValue(then_out);
      auto else_value = toIValue(else_out);
      if (out->type()->kind() == TypeKind::Bool && then_value && then_value->isBool() && then_value->toBool() &&
          else_value && else_value->isBool() && !else_value->toBool()) {
        GRAPH_UPDATE("replacing %", out->debugName(), " with the condition %", n->input()->debugName());
        out->replaceAllUsesWith(n->input());
        changed = true;
      }
      // An optional output both of whose branches give a non-optional value.
      if (out->type()->kind() == TypeKind::Optional && then_out->type()->kind() != TypeKind::Optional &&
          else_out->type()->kind() != TypeKind::Optional) {
        auto unified = unifyTypes(then_out->type(), else_out->type());
        if (unified && **unified != *out->type()) {
          GRAPH_UPDATE("refining %", out->debugName(), " to ", **unified);
          out->setType(*unified);
          changed = true;
        }
      }
    }
    return changed;
  }

  bool optimizeIsNone(Node* n) {
    if (n->inputs().size() != 2) return false;
    bool is = n->kind() == aten::__is__;
    const Value* a = n->input(0);
    const Value* b = n->input(1);
    if (mustBeNone(a) && mustBeNone(b)) {
      replaceWithConstant(n, IValue(is));
      return true;
    }
    if ((mustBeNone(a) && mustNotBeNone(b)) || (mustNotBeNone(a) && mustBeNone(b))) {
      replaceWithConstant(n, IValue(!is));
      return true;
    }
    return false;
  }

  bool optimize(Node* n) {
    switch (n->kind()) {
      case prim::If: return optimizeIf(n);
      case aten::__is__:
      case aten::__isnot__: return optimizeIsNone(n);
      case prim::unchecked_unwrap_optional: return unwrap(n);
      case prim::unchecked_cast:
        if (!unshapedType(n->input()->type())->isSubtypeOf(*unshapedType(n->output()->type()))) return false;
        replaceWithInput(n);
        return true;
      case aten::Int:
      case aten::Float:
      case aten::Bool: return removeConversion(n);
      case aten::eq:
      case aten::ne:
        if (n->inputs().size() != 2 || n->input(0) != n->input(1) || !alwaysEqualToItself(n->input(0)->type())) {
          return false;
        }
        replaceWithConstant(n, IValue(n->kind() == aten::eq));
        return true;
      case aten::mul:
      case aten::floordiv: return simplifyMulOrFloorDiv(n);
      case aten::add:
      case aten::sub: return simplifyAddOrSub(n);
      default:
        if (n->kind() == unwrapOptionalSymbol()) return unwrap(n);
        if (n->kind() == ceilSymbol()) return removeConversion(n);
        return false;
    }
  }

  bool unwrap(Node* n) {
    if (n->inputs().size() != 1 || !mustNotBeNone(n->input())) return false;
    replaceWithInput(n);
    return true;
  }

  // `int(i)`, `ceil(i)`, `float(f)`, `bool(b)`: already the result.
  bool removeConversion(Node* n) {
    TypeKind result = n->kind() == aten::Float  ? TypeKind::Float
                      : n->kind() == aten::Bool ? TypeKind::Bool
                                                : TypeKind::Int;
    if (n->inputs().size() != 1 || n->input()->type()->kind() != result) return false;
    replaceWithInput(n);
    return true;
  }

  Graph& graph_;
};

}  // namespace

bool peepholeOptimizeNonTensor(const std::shared_ptr<Graph>& graph) {
  return NonTensorPeepholes(*graph).optimize(graph->block());
}

}  // namespace kiln::detail
