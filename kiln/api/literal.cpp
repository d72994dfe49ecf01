#include "kiln/api/literal.h"

#include "kiln/frontend/parser.h"
#include "kiln/frontend/tree_views.h"

namespace kiln {

namespace {

// A list's or dict's element type from its elements: their unified type,
// Any when they have none in common, Tensor (TorchScript's default) when empty.
TypePtr unifiedType(const std::vector<IValue>& values) {
  if (values.empty()) return TensorType::get();
  TypePtr unified = values[0].type();
  for (const IValue& v : values) {
    auto next = unifyTypes(unified, v.type());
    if (!next) return AnyType::get();
    unified = *next;
  }
  return unified;
}

// The literal with its own Python type.
IValue literalValue(const TreeRef& tree) {
  switch (tree->kind()) {
    case TK_CONST: {
      Const c(tree);
      return c.isFloatingPoint() ? IValue(c.asDouble()) : IValue(c.asInt());
    }
    case TK_UNARY_MINUS:
    case TK_UNARY_PLUS: {
      IValue v = literalValue(UnaryOp(tree).operand().tree());
      KILN_CHECK(v.isInt() || v.isDouble(), tree->range().errorMessage("a sign applies to numbers only"));
      if (tree->kind() == TK_UNARY_PLUS) return v;
      if (v.isDouble()) return IValue(-v.toDouble());
      KILN_CHECK(v.toInt() != INT64_MIN, tree->range().errorMessage("the integer is too large"));
      return IValue(-v.toInt());
    }
    case TK_STRINGLITERAL: return IValue(StringLiteral(tree).text());
    case TK_TRUE: return IValue(true);
    case TK_FALSE: return IValue(false);
    case TK_NONE: return IValue();
    case TK_TUPLE_LITERAL: {
      std::vector<IValue> elements;
      for (const Expr& e : TupleLiteral(tree).inputs()) elements.push_back(literalValue(e.tree()));
      return IValue::tuple(std::move(elements));
    }
    case TK_LIST_LITERAL: {
      std::vector<IValue> elements;
      for (const Expr& e : ListLiteral(tree).inputs()) elements.push_back(literalValue(e.tree()));
      TypePtr element_type = unifiedType(elements);
      return IValue::list(std::move(element_type), std::move(elements));
    }
    case TK_DICT_LITERAL: {
      DictLiteral dict(tree);
      std::vector<IValue> keys, values;
      for (const Expr& e : dict.keyInputs()) keys.push_back(literalValue(e.tree()));
      for (const Expr& e : dict.valueInputs()) values.push_back(literalValue(e.tree()));
      auto out = makeIntrusive<DictObj>(keys.empty() ? StringType::get() : unifiedType(keys), unifiedType(values));
      for (size_t i = 0; i < keys.size(); ++i) out->insertOrAssign(std::move(keys[i]), std::move(values[i]));
      return IValue(std::move(out));
    }
    default:
      KILN_ERROR(tree->range().errorMessage(
          "not a literal (expected a number, True, False, None, a quoted string, or a list, tuple or dict of these)"));
  }
}

// `value` as `type` takes it, or nullopt.
std::optional<IValue> coerce(const IValue& value, const TypePtr& type) {
  switch (type->kind()) {
    case TypeKind::Any:
    case TypeKind::Var: return value;
    case TypeKind::Optional:
      if (value.isNone()) return value;
      return coerce(value, type->cast<OptionalType>()->elementType());
    case TypeKind::Union:
      for (const TypePtr& member : type->cast<UnionType>()->members()) {
        if (auto v = coerce(value, member)) return v;
      }
      return std::nullopt;
    case TypeKind::Float:
      if (value.isInt()) return IValue(static_cast<double>(value.toInt()));
      if (value.isDouble()) return value;
      return std::nullopt;
    case TypeKind::Number:
      if (value.isInt() || value.isDouble()) return value;
      return std::nullopt;
    case TypeKind::Int: return value.isInt() ? std::optional(value) : std::nullopt;
    case TypeKind::Bool: return value.isBool() ? std::optional(value) : std::nullopt;
    case TypeKind::String: return value.isString() ? std::optional(value) : std::nullopt;
    case TypeKind::None: return value.isNone() ? std::optional(value) : std::nullopt;
    case TypeKind::List: {
      if (!value.isList()) return std::nullopt;
      const TypePtr& element_type = type->cast<ListType>()->elementType();
      std::vector<IValue> elements;
      for (const IValue& e : value.toListRef().elements) {
        auto v = coerce(e, element_type);
        if (!v) return std::nullopt;
        elements.push_back(std::move(*v));
      }
      return IValue::list(element_type, std::move(elements));
    }
    case TypeKind::Tuple: {
      const auto& element_types = type->cast<TupleType>()->elements();
      if (!value.isTuple() || value.toTupleRef().elements.size() != element_types.size()) return std::nullopt;
      std::vector<IValue> elements;
      for (size_t i = 0; i < element_types.size(); ++i) {
        auto v = coerce(value.toTupleRef().elements[i], element_types[i]);
        if (!v) return std::nullopt;
        elements.push_back(std::move(*v));
      }
      return IValue::tuple(std::move(elements));
    }
    case TypeKind::Dict: {
      if (!value.isDict()) return std::nullopt;
      const auto* dict_type = type->cast<DictType>();
      auto out = makeIntrusive<DictObj>(dict_type->keyType(), dict_type->valueType());
      for (const auto& [key, item] : value.toDictRef().items()) {
        auto k = coerce(key, dict_type->keyType());
        auto v = coerce(item, dict_type->valueType());
        if (!k || !v) return std::nullopt;
        out->insertOrAssign(std::move(*k), std::move(*v));
      }
      return IValue(std::move(out));
    }
    default: return std::nullopt;
  }
}

}  // namespace

IValue parseLiteral(const std::string& text, const TypePtr& type) {
  IValue value = literalValue(parseExpression(text));
  auto coerced = coerce(value, type);
  KILN_CHECK(coerced, "expected a value of type '", type->str(), "' but got the ", value.type()->str(), " ", text,
             type->kind() == TypeKind::Tensor ? " (tensors are given as .npy files)" : "");
  return std::move(*coerced);
}

}  // namespace kiln
