#include "kiln/core/symbol.h"

#include <deque>
#include <mutex>
#include <ostream>
#include <unordered_map>

#include "kiln/util/error.h"

namespace kiln {

namespace {

struct SymbolTable {
  struct Entry {
    std::string qual;
    uint32_t ns;  // id of `namespaces::<ns>`
    size_t separator;
  };

  std::mutex mutex;
  std::unordered_map<std::string, uint32_t> ids;
  std::deque<Entry> entries;  // deque keeps references stable while it grows

  SymbolTable() {
    entries.push_back({"", 0, 0});  // id 0 is the invalid symbol
#define KILN_INTERN_BUILTIN(ns, s) internLocked(#ns "::" #s);
    KILN_FORALL_BUILTIN_SYMBOLS(KILN_INTERN_BUILTIN)
#undef KILN_INTERN_BUILTIN
    KILN_INTERNAL_ASSERT(entries.size() == static_cast<size_t>(detail::BuiltinSymbol::count));
  }

  uint32_t intern(std::string_view qual) {
    std::lock_guard<std::mutex> lock(mutex);
    return internLocked(qual);
  }

  uint32_t internLocked(std::string_view qual) {
    auto it = ids.find(std::string(qual));
    if (it != ids.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(entries.size());
    size_t separator = qual.find("::");
    entries.push_back({std::string(qual), 0, separator});
    ids.emplace(std::string(qual), id);
    // Interning the namespace may append entries: find it after this one is in.
    std::string ns_qual = "namespaces::" + std::string(qual.substr(0, separator));
    uint32_t ns = ns_qual == qual ? id : internLocked(ns_qual);
    entries[id].ns = ns;
    return id;
  }

  const Entry& entry(uint32_t id) {
    std::lock_guard<std::mutex> lock(mutex);
    return entries[id];
  }
};

SymbolTable& table() {
  static SymbolTable* t = new SymbolTable();  // never destroyed: symbols outlive static destructors
  return *t;
}

bool isIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

Symbol Symbol::fromQualString(std::string_view qual) {
  size_t sep = qual.find("::");
  KILN_CHECK(sep != std::string_view::npos && sep > 0 && sep + 2 < qual.size(), "'", qual,
             "' is not a qualified name of the form namespace::name");
  for (size_t i = 0; i < sep; ++i) {
    KILN_CHECK(isIdentifierChar(qual[i]), "'", qual, "' has an invalid namespace");
  }
  return Symbol(FromId{}, table().intern(qual));
}

Symbol Symbol::fromNamespaceAndName(std::string_view ns, std::string_view name) {
  std::string qual;
  qual.reserve(ns.size() + 2 + name.size());
  qual.append(ns).append("::").append(name);
  return fromQualString(qual);
}

const std::string& Symbol::toQualString() const { return table().entry(id_).qual; }

std::string_view Symbol::ns() const {
  const auto& e = table().entry(id_);
  return std::string_view(e.qual).substr(0, e.separator);
}

std::string_view Symbol::name() const {
  const auto& e = table().entry(id_);
  if (e.separator == std::string::npos) return e.qual;
  return std::string_view(e.qual).substr(e.separator + 2);
}

Symbol Symbol::nsSymbol() const { return Symbol(FromId{}, table().entry(id_).ns); }
bool Symbol::isAten() const { return nsSymbol() == namespaces::aten; }
bool Symbol::isPrim() const { return nsSymbol() == namespaces::prim; }
bool Symbol::isAttr() const { return nsSymbol() == namespaces::attr; }
bool Symbol::isOnnx() const { return nsSymbol() == namespaces::onnx; }
bool Symbol::isUser() const { return nsSymbol() == namespaces::user; }

std::ostream& operator<<(std::ostream& out, Symbol s) { return out << s.toQualString(); }

}  // namespace kiln
