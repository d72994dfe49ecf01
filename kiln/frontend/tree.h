#pragma once
// The script AST: s-expression-like trees. A leaf (atom, TK_ATOM) holds a
// string; a compound tree has a kind (a token kind from lexer.h, or a tree
// kind such as TK_APPLY) and subtrees. Every tree has the source range it
// came from. Trees are immutable and shared.
#include <cstdint>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "kiln/frontend/lexer.h"
#include "kiln/ir/source_range.h"

namespace kiln {

class Tree;

// A counted handle to an immutable tree. A compile builds and reads its trees
// on one thread, so the count is a plain integer: the emitter copies tree
// views (and with them handles) constantly, and atomic counting cost a tenth
// of a compile.
class TreeRef {
 public:
  TreeRef() = default;
  TreeRef(std::nullptr_t) {}
  TreeRef(const TreeRef& other) : tree_(other.tree_) { retain(); }
  TreeRef(TreeRef&& other) noexcept : tree_(other.tree_) { other.tree_ = nullptr; }
  TreeRef& operator=(TreeRef other) noexcept {
    std::swap(tree_, other.tree_);
    return *this;
  }
  ~TreeRef() { release(); }

  const Tree* get() const { return tree_; }
  const Tree* operator->() const { return tree_; }
  const Tree& operator*() const { return *tree_; }
  explicit operator bool() const { return tree_ != nullptr; }
  friend bool operator==(const TreeRef& a, const TreeRef& b) { return a.tree_ == b.tree_; }
  friend bool operator!=(const TreeRef& a, const TreeRef& b) { return a.tree_ != b.tree_; }
  friend bool operator==(const TreeRef& a, std::nullptr_t) { return a.tree_ == nullptr; }
  friend bool operator!=(const TreeRef& a, std::nullptr_t) { return a.tree_ != nullptr; }

 private:
  friend class Tree;
  explicit TreeRef(const Tree* tree);  // takes the first reference
  void retain() const;
  void release();

  const Tree* tree_ = nullptr;
};
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
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

 private:
  void print(std::string& out) const;

  friend class TreeRef;
  mutable uint32_t refcount_ = 0;
  int kind_;
  SourceRange range_;
  std::string value_;
  TreeList trees_;
  size_t depth_;
};

inline TreeRef::TreeRef(const Tree* tree) : tree_(tree) { retain(); }
inline void TreeRef::retain() const {
  if (tree_) ++tree_->refcount_;
}
inline void TreeRef::release() {
  if (tree_ && --tree_->refcount_ == 0) delete tree_;
  tree_ = nullptr;
}

}  // namespace kiln
