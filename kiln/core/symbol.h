#pragma once
// Interned `namespace::name` strings. Comparing two symbols compares two
// integers; the text lives once in a global table.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace kiln {

class Symbol {
 public:
  constexpr Symbol() = default;
  // "aten::add" -> Symbol; the text must contain "::".
  static Symbol fromQualString(std::string_view qual);
  static Symbol fromNamespaceAndName(std::string_view ns, std::string_view name);
  static Symbol aten(std::string_view name) { return fromNamespaceAndName("aten", name); }
  static Symbol prim(std::string_view name) { return fromNamespaceAndName("prim", name); }
  static Symbol attr(std::string_view name) { return fromNamespaceAndName("attr", name); }

  const std::string& toQualString() const;
  std::string_view ns() const;
  std::string_view name() const;  // the part after "::"
  uint32_t id() const { return id_; }
  bool isValid() const { return id_ != 0; }

  friend bool operator==(Symbol a, Symbol b) { return a.id_ == b.id_; }
  friend bool operator!=(Symbol a, Symbol b) { return a.id_ != b.id_; }
  friend bool operator<(Symbol a, Symbol b) { return a.id_ < b.id_; }

 private:
  explicit constexpr Symbol(uint32_t id) : id_(id) {}
  uint32_t id_ = 0;
};

std::ostream& operator<<(std::ostream& out, Symbol s);

}  // namespace kiln

template <>
struct std::hash<kiln::Symbol> {
  size_t operator()(kiln::Symbol s) const { return std::hash<uint32_t>()(s.id()); }
};
