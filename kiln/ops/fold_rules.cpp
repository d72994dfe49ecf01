#include "kiln/ops/fold_rules.h"

#include <cstdint>
#include <optional>

#include "kiln/core/operator.h"
#include "kiln/ir/graph.h"

namespace kiln::folds {

namespace {

bool isInt(const Value* v) { return v->type()->kind() == TypeKind::Int; }

std::optional<int64_t> constantInt(const Value* v) {
  auto value = toIValue(v);
  if (!value || !value->isInt()) return std::nullopt;
  return value->toInt();
}

std::optional<double> constantNumber(const Value* v) {
  auto value = toIValue(v);
  if (!value || !(value->isInt() || value->isDouble())) return std::nullopt;
  return value->toDouble();
}

FoldResult same(Value* v) { return {v, false}; }

// The constant operand of a binary int op, moved to the second input when
// the op commutes (a canonical form, kept even when nothing folds); nullopt
// unless both operands are ints and one is constant.
std::optional<int64_t> constantIntOperand(Node* n, bool commutes) {
  if (n->inputs().size() != 2 || !isInt(n->input(0)) || !isInt(n->input(1))) return std::nullopt;
  if (commutes) {
    if (auto c = constantInt(n->input(0))) {
      n->permuteInputs({1, 0});
      return c;
    }
  }
  return constantInt(n->input(1));
}

bool isAdd(const Node* n) { return n->kind() == aten::add; }

// The tensor operand of `x op c` (with `alpha` when the op takes one), when
// the result has x's dtype: a floating x with int or float numbers, an
// integral (not bool) x with int numbers.
const Value* tensorWithNumbers(const Node* n, size_t operands) {
  if (n->inputs().size() != operands || n->outputs().size() != 1) return nullptr;
  auto x = n->input(0)->type()->cast<TensorType>();
  if (!x || !x->scalarType()) return nullptr;
  for (size_t i = 1; i < operands; ++i) {
    if (!constantNumber(n->input(i))) return nullptr;
  }
  ScalarType dtype = *x->scalarType();
  if (isFloatingType(dtype)) return n->input(0);
  if (dtype == ScalarType::Bool) return nullptr;
  for (size_t i = 1; i < operands; ++i) {
    if (!isInt(n->input(i))) return nullptr;
  }
  return n->input(0);
}

// `x + c * alpha` or `x - c * alpha` with c 0 and alpha 1: x.
FoldResult tensorAddOrSubZero(Node* n) {
  if (!tensorWithNumbers(n, 3)) return {};
  if (*constantNumber(n->input(1)) != 0 || *constantNumber(n->input(2)) != 1) return {};
  return same(n->input(0));
}

}  // namespace

bool hasFold(const Node* n, bool tensor_result) {
  auto op = n->maybeOperator();
  return op && op->description().fold && n->outputs().size() == 1 &&
         (n->output()->type()->kind() == TypeKind::Tensor) == tensor_result;
}

FoldResult foldNode(Node* n) {
  if (!hasFold(n, true) && !hasFold(n, false)) return {};
  return n->maybeOperator()->description().fold(n);
}

FoldResult addOrSubZero(Node* n) {
  if (n->inputs().size() == 3) return tensorAddOrSubZero(n);
  auto c = constantIntOperand(n, isAdd(n));
  if (!c) return {};
  if (*c == 0) return same(n->input(0));
  Node* dep = n->input(0)->node();
  if (dep->kind() != aten::add && dep->kind() != aten::sub) return {};
  auto d = constantIntOperand(dep, isAdd(dep));
  if (!d) return {};
  // Ints wrap when they overflow at run time; so does the merged constant.
  auto uc = static_cast<uint64_t>(*c);
  auto ud = static_cast<uint64_t>(*d);
  auto merged = static_cast<int64_t>(dep->kind() == n->kind() ? uc + ud : uc - ud);
  if (merged == 0) return same(dep->input(0));
  WithInsertPoint guard(n);
  n->replaceInput(0, dep->input(0));
  n->replaceInput(1, n->owningGraph()->insertConstant(merged));
  return same(n->output());
}

FoldResult mulByOne(Node* n) {
  if (tensorWithNumbers(n, 2)) return *constantNumber(n->input(1)) == 1 ? same(n->input(0)) : FoldResult{};
  auto c = constantIntOperand(n, /*commutes=*/true);
  return c && *c == 1 ? same(n->input(0)) : FoldResult{};
}

FoldResult floorDivByOne(Node* n) {
  auto c = constantIntOperand(n, /*commutes=*/false);
  return c && *c == 1 ? same(n->input(0)) : FoldResult{};
}

FoldResult divByOne(Node* n) {
  const Value* x = tensorWithNumbers(n, 2);
  if (!x || !isFloatingType(*x->type()->cast<TensorType>()->scalarType())) return {};
  return *constantNumber(n->input(1)) == 1 ? same(n->input(0)) : FoldResult{};
}

namespace {

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

}  // namespace

FoldResult equalToItself(Node* n) {
  if (n->inputs().size() != 2 || n->input(0) != n->input(1) || !alwaysEqualToItself(n->input(0)->type())) return {};
  WithInsertPoint guard(n);
  return same(n->owningGraph()->insertConstant(IValue(n->kind() == aten::eq)));
}

FoldResult conversionToOwnType(Node* n) {
  if (n->inputs().size() != 1 || n->outputs().size() != 1) return {};
  TypeKind result = n->output()->type()->kind();
  if (n->input()->type()->kind() != result) return {};
  switch (result) {
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Bool: return same(n->input());
    default: return {};
  }
}

FoldResult typeAsSameType(Node* n) {
  if (n->inputs().size() != 2) return {};
  auto self = n->input(0)->type()->cast<TensorType>();
  auto other = n->input(1)->type()->cast<TensorType>();
  if (!self || !other) return {};
  if (!self->scalarType() || self->scalarType() != other->scalarType()) return {};
  if (!self->device() || self->device() != other->device()) return {};
  return {n->input(0), /*same_tensor=*/true};
}

}  // namespace kiln::folds
