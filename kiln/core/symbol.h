#pragma once
// Interned `namespace::name` strings. Comparing two symbols compares two
// integers; the text lives once in a global table. The symbols kiln names in
// C++ (builtin_symbols.h) have fixed ids and are constants usable in a
// `switch`: `case prim::If:`. Namespaces are open: any `ns::name` interns.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "kiln/core/builtin_symbols.h"

namespace kiln {

namespace detail {
enum class BuiltinSymbol : uint32_t {
  invalid = 0,
#define KILN_DEFINE_SYMBOL_ID(ns, s) ns##_##s,
  KILN_FORALL_BUILTIN_SYMBOLS(KILN_DEFINE_SYMBOL_ID)
#undef KILN_DEFINE_SYMBOL_ID
      count
};
}  // namespace detail

class Symbol {
 public:
  constexpr Symbol() = default;
  explicit constexpr Symbol(detail::BuiltinSymbol id) : id_(static_cast<uint32_t>(id)) {}
  // "aten::add" -> Symbol; the text must be `namespace::name`.
  static Symbol fromQualString(std::string_view qual);
  static Symbol fromNamespaceAndName(std::string_view ns, std::string_view name);
  static Symbol aten(std::string_view name) { return fromNamespaceAndName("aten", name); }
  static Symbol prim(std::string_view name) { return fromNamespaceAndName("prim", name); }
  static Symbol attr(std::string_view name) { return fromNamespaceAndName("attr", name); }
  static Symbol onnx(std::string_view name) { return fromNamespaceAndName("onnx", name); }
  static Symbol user(std::string_view name) { return fromNamespaceAndName("user", name); }

  const std::string& toQualString() const;
  std::string_view ns() const;
  std::string_view name() const;  // the part after "::"
  // The namespace as a symbol: `namespaces::aten` for `aten::add`.
  Symbol nsSymbol() const;
  bool isAten() const;
  bool isPrim() const;
  bool isAttr() const;
  bool isOnnx() const;
  bool isUser() const;

  constexpr uint32_t id() const { return id_; }
  constexpr bool isValid() const { return id_ != 0; }
  // Lets a Symbol be a `switch` operand against the builtin constants.
  constexpr operator uint32_t() const { return id_; }

  friend constexpr bool operator==(Symbol a, Symbol b) { return a.id_ == b.id_; }
  friend constexpr bool operator!=(Symbol a, Symbol b) { return a.id_ != b.id_; }
  friend constexpr bool operator<(Symbol a, Symbol b) { return a.id_ < b.id_; }

 private:
  struct FromId {};
  constexpr Symbol(FromId, uint32_t id) : id_(id) {}
  uint32_t id_ = 0;
};

std::ostream& operator<<(std::ostream& out, Symbol s);

#define KILN_DEFINE_SYMBOL(ns, s)                      \
  namespace ns {                                       \
  constexpr Symbol s(detail::BuiltinSymbol::ns##_##s); \
  }
KILN_FORALL_BUILTIN_SYMBOLS(KILN_DEFINE_SYMBOL)
#undef KILN_DEFINE_SYMBOL

}  // namespace kiln

template <>
struct std::hash<kiln::Symbol> {
  size_t operator()(kiln::Symbol s) const { return std::hash<uint32_t>()(s.id()); }
};
