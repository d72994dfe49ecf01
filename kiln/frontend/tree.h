#pragma once
// The script AST: s-expression-like trees. A leaf (atom, TK_ATOM) holds a
// string; a compound tree has a kind (a token kind from lexer.h, or a tree
// kind such as TK_APPLY) and subtrees. Every tree has the source range it
// came from. Trees are immutable and shared.
#include <memory>
#include <string>
#include <vector>

#include "kiln/frontend/lexer.h"
#include "kiln/ir/source_range.h"

namespace kiln {

class Tree;
using TreeRef = std::shared_ptr<const Tree>;
using TreeList = std::vector<TreeRef>;

// Deeper trees are rejected when built, so that everything walking a tree
// recursively (printing, destruction, the emitter) has a bounded stack.
constexpr size_t kMaxTreeDepth = 1000;

class Tree {
 public:
  static TreeRef atom(std::string value, SourceRange range);
  // Raises kiln::Error (pointing at `range`) past kMaxTreeDepth.
  static TreeRef create(int kind, SourceRange range, TreeList trees);

  int kind() const { return kind_; }
  bool isAtom() const { return kind_ == TK_ATOM; }
  const SourceRange& range() const { return range_; }
  const TreeList& trees() const { return trees_; }
  const TreeRef& tree(size_t i) const;
  // The string of an atom.
  const std::string& stringValue() const;
  size_t depth() const { return depth_; }

  // `(kind sub ...)`, atoms bare, or quoted when they would be ambiguous.
  std::string toString() const;

  Tree(int kind, SourceRange range, std::string value, TreeList trees, size_t depth)
      : kind_(kind), range_(std::move(range)), value_(std::move(value)), trees_(std::move(trees)), depth_(depth) {}

 private:
  void print(std::string& out) const;

  int kind_;
  SourceRange range_;
  std::string value_;
  TreeList trees_;
  size_t depth_;
};

}  // namespace kiln
