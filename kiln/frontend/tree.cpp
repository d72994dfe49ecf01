#include "kiln/frontend/tree.h"

#include "kiln/frontend/error_report.h"
#include "kiln/util/error.h"

namespace kiln {

TreeRef Tree::atom(std::string value, SourceRange range) {
  return TreeRef(new Tree(TK_ATOM, std::move(range), std::move(value), TreeList{}, 1));
}

TreeRef Tree::create(int kind, SourceRange range, TreeList trees) {
  size_t depth = 0;
  for (const TreeRef& t : trees) {
    KILN_INTERNAL_ASSERT(t != nullptr, "null subtree in a ", kindToString(kind), " tree");
    depth = std::max(depth, t->depth());
  }
  if (depth + 1 > kMaxTreeDepth) throwSourceError(range, "expression or statement is nested too deeply");
  return TreeRef(new Tree(kind, std::move(range), std::string(), std::move(trees), depth + 1));
}

const TreeRef& Tree::tree(size_t i) const {
  KILN_INTERNAL_ASSERT(i < trees_.size(), kindToString(kind_), " tree has no subtree ", i);
  return trees_[i];
}

const std::string& Tree::stringValue() const {
  KILN_INTERNAL_ASSERT(isAtom(), "stringValue() of a ", kindToString(kind_), " tree");
  return value_;
}

namespace {

bool needsQuotes(const std::string& s) {
  if (s.empty()) return true;
  for (char c : s) {
    if (c <= ' ' || c == '(' || c == ')' || c == '"' || c == '\\' || c == 0x7f) return true;
  }
  return false;
}

void printQuoted(std::string& out, const std::string& s) {
  static const char* hex = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace

void Tree::print(std::string& out) const {
  if (isAtom()) {
    if (needsQuotes(value_)) {
      printQuoted(out, value_);
    } else {
      out += value_;
    }
    return;
  }
  out += '(';
  out += kindToString(kind_);
  for (const TreeRef& t : trees_) {
    out += ' ';
    t->print(out);
  }
  out += ')';
}

std::string Tree::toString() const {
  std::string out;
  print(out);
  return out;
}

}  // namespace kiln
