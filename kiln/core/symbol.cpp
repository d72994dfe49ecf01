#include "kiln/core/symbol.h"

#include <deque>
#include <mutex>
#include <ostream>
#include <unordered_map>

#include "kiln/util/error.h"

namespace kiln {

namespace {

struct SymbolTable {
  std::mutex mutex;
  std::unordered_map<std::string, uint32_t> ids;
  std::deque<std::string> names{""};  // id 0 is the invalid symbol; deque keeps references stable

  uint32_t intern(std::string_view qual) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = ids.find(std::string(qual));
    if (it != ids.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(names.size());
    names.emplace_back(qual);
    ids.emplace(std::string(qual), id);
    return id;
  }
  const std::string& text(uint32_t id) {
    std::lock_guard<std::mutex> lock(mutex);
    return names[id];
  }
};

SymbolTable& table() {
  static SymbolTable* t = new SymbolTable();  // never destroyed: symbols outlive static destructors
  return *t;
}

}  // namespace

Symbol Symbol::fromQualString(std::string_view qual) {
  size_t sep = qual.find("::");
  KILN_CHECK(sep != std::string_view::npos && sep > 0 && sep + 2 < qual.size(),
             "'", qual, "' is not a qualified name of the form namespace::name");
  return Symbol(table().intern(qual));
}

Symbol Symbol::fromNamespaceAndName(std::string_view ns, std::string_view name) {
  std::string qual;
  qual.reserve(ns.size() + 2 + name.size());
  qual.append(ns).append("::").append(name);
  return fromQualString(qual);
}

const std::string& Symbol::toQualString() const { return table().text(id_); }

std::string_view Symbol::ns() const {
  std::string_view q = toQualString();
  return q.substr(0, q.find("::"));
}

std::string_view Symbol::name() const {
  std::string_view q = toQualString();
  size_t sep = q.find("::");
  return sep == std::string_view::npos ? q : q.substr(sep + 2);
}

std::ostream& operator<<(std::ostream& out, Symbol s) { return out << s.toQualString(); }

}  // namespace kiln
