// The peephole stage on ints, bools, None and optionals (PyTorch 1.13's
// PeepholeOptimizeNonTensor). The arithmetic and conversions (`i * 1`,
// `int(i)`) are the operators' own folds (kiln/ops/fold_rules.h), which
// leave out 1.13's rewrites that change a result: `i / 1` (a float, not the
// int i) and `f == f` on floats (false for NaN).
#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/ops/fold_rules.h"
#include "kiln/passes/peephole_detail.h"
#include "kiln/util/jit_log.h"

namespace kiln::detail {

namespace {

Symbol unwrapOptionalSymbol() {
  static const Symbol s = Symbol::aten("_unwrap_optional");
  return s;
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
      default:
        if (n->kind() == unwrapOptionalSymbol()) return unwrap(n);
        return fold(n);
    }
  }

  // The operator's own simplification (`i * 1`, `int(i)`, `a == a` on ints;
  // OpDescription::fold) of a node with one non-tensor output.
  bool fold(Node* n) {
    if (!folds::hasFold(n, /*tensor_result=*/false)) return false;
    Value* value = folds::foldNode(n).value;
    if (!value) return false;
    if (value != n->output()) {
      GRAPH_UPDATE("replacing ", *n, "with %", value->debugName());
      n->output()->replaceAllUsesWith(value);
    }
    return true;
  }

  bool unwrap(Node* n) {
    if (n->inputs().size() != 1 || !mustNotBeNone(n->input())) return false;
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
