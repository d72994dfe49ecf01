#include "kiln/frontend/script_type_parser.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "kiln/frontend/error_report.h"
#include "kiln/frontend/parser.h"

namespace kiln {

TypePtr typeFromExpr(const Expr& e, const ClassLookup& lookup_class) {
  auto name_of = [](const Expr& x) -> std::optional<std::string> {
    if (x.kind() == TK_VAR) return Var(x.tree()).name().name();
    if (x.kind() == '.') {
      std::string text = x.range().text();
      text.erase(
          std::remove_if(text.begin(), text.end(), [](char c) { return isspace(static_cast<unsigned char>(c)); }),
          text.end());
      return text;
    }
    return std::nullopt;
  };
  auto strip_module = [](std::string name) {
    for (const char* prefix : {"typing.", "torch.", "kiln.", "t."}) {
      if (name.rfind(prefix, 0) == 0) name = name.substr(std::string(prefix).size());
    }
    return name;
  };
  switch (e.kind()) {
    case TK_NONE: return NoneType::get();
    case TK_STRINGLITERAL: {
      // A quoted annotation is the type it spells.
      TreeRef inner;
      try {
        inner = parseExpression(StringLiteral(e.tree()).text());
      } catch (const Error&) {
        throwSourceError(e.range(), "Unknown type name '" + StringLiteral(e.tree()).text() + "'");
      }
      try {
        return typeFromExpr(Expr(inner), lookup_class);
      } catch (const Error& err) {
        std::string what = err.what();
        throwSourceError(e.range(), what.substr(0, what.find(":\n")));
      }
    }
    case TK_VAR:
    case '.': {
      std::string full = *name_of(e);
      std::string name = strip_module(full);
      static const std::unordered_map<std::string, TypePtr> simple = {
          {"Tensor", TensorType::get()},    {"int", IntType::get()},          {"float", FloatType::get()},
          {"bool", BoolType::get()},        {"str", StringType::get()},       {"Any", AnyType::get()},
          {"device", DeviceObjType::get()}, {"Device", DeviceObjType::get()}, {"number", NumberType::get()},
          {"NoneType", NoneType::get()},    {"complex", ComplexType::get()},
      };
      if (auto it = simple.find(name); it != simple.end()) return it->second;
      for (const char* generic : {"List", "Dict", "Tuple", "Optional", "Union", "Future"}) {
        if (name == generic)
          throwSourceError(e.range(), std::string("Attempted to use ") + generic + " without a contained type");
      }
      if (name == "list" || name == "dict" || name == "tuple") {
        throwSourceError(e.range(), "Attempted to use " + name + " without a contained type");
      }
      if (lookup_class) {
        if (TypePtr cls = lookup_class(full, e.range())) return cls;
      }
      throwSourceError(e.range(), "Unknown type name '" + full + "'");
    }
    case TK_SUBSCRIPT: {
      Subscript sub(e.tree());
      auto constructor = name_of(sub.value());
      if (!constructor) throwSourceError(sub.value().range(), "Unknown type constructor " + sub.value().range().text());
      std::string name = strip_module(*constructor);
      std::vector<Expr> items;
      for (Expr item : sub.subscriptExprs()) items.push_back(item);
      auto exactly = [&](size_t n, const char* what) {
        if (items.size() != n) {
          throwSourceError(e.range(),
                           std::string("expected exactly ") + what + " but found " + std::to_string(items.size()));
        }
      };
      if (name == "List" || name == "list") {
        exactly(1, "one element type");
        return ListType::create(typeFromExpr(items[0], lookup_class));
      }
      if (name == "Optional") {
        exactly(1, "one element type");
        return OptionalType::create(typeFromExpr(items[0], lookup_class));
      }
      if (name == "Future") {
        exactly(1, "one element type");
        return FutureType::create(typeFromExpr(items[0], lookup_class));
      }
      if (name == "Dict" || name == "dict") {
        exactly(2, "2 element types");
        return DictType::create(typeFromExpr(items[0], lookup_class), typeFromExpr(items[1], lookup_class));
      }
      if (name == "Tuple" || name == "tuple") {
        // Tuple[()] is the empty tuple.
        if (items.size() == 1 && items[0].kind() == TK_TUPLE_LITERAL &&
            TupleLiteral(items[0].tree()).inputs().empty()) {
          return TupleType::create({});
        }
        std::vector<TypePtr> elements;
        for (const Expr& item : items) elements.push_back(typeFromExpr(item, lookup_class));
        return TupleType::create(std::move(elements));
      }
      if (name == "Union") {
        std::vector<TypePtr> members;
        for (const Expr& item : items) members.push_back(typeFromExpr(item, lookup_class));
        return UnionType::create(std::move(members));
      }
      throwSourceError(e.range(), "Unknown type constructor " + *constructor);
    }
    default:
      throwSourceError(e.range(),
                       "Expression of type " + kindToString(e.kind()) + " cannot be used in a type expression");
  }
}

}  // namespace kiln
