#pragma once
// The script AST: s-expression-like trees. A leaf (atom, TK_ATOM) holds a
// string; a compound tree has a kind (a token kind from lexer.h, or a tree
// kind such as TK_APPLY) and subtrees. Every tree has the source range it
// came from. Trees are immutable and shared.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <utility>
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
// The subtrees of a tree. Nearly every tree has at most three, kept inline:
// a compile makes hundreds of trees, and a heap block for each list of
// subtrees was the parser's largest cost.
class TreeList {
 public:
  using value_type = TreeRef;
  using iterator = TreeRef*;
  using const_iterator = const TreeRef*;

  TreeList() = default;
  TreeList(std::initializer_list<TreeRef> items) {
    reserve(items.size());
    for (const TreeRef& t : items) push_back(t);
  }
  TreeList(const TreeList& other) {
    reserve(other.size_);
    for (const TreeRef& t : other) push_back(t);
  }
  TreeList(TreeList&& other) noexcept { take(other); }
  TreeList& operator=(TreeList other) noexcept {
    destroy();
    take(other);
    return *this;
  }
  ~TreeList() { destroy(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  TreeRef* begin() { return data_; }
  TreeRef* end() { return data_ + size_; }
  const TreeRef* begin() const { return data_; }
  const TreeRef* end() const { return data_ + size_; }
  TreeRef& operator[](size_t i) { return data_[i]; }
  const TreeRef& operator[](size_t i) const { return data_[i]; }
  TreeRef& front() { return data_[0]; }
  const TreeRef& front() const { return data_[0]; }
  TreeRef& back() { return data_[size_ - 1]; }
  const TreeRef& back() const { return data_[size_ - 1]; }

  void push_back(TreeRef t) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    new (data_ + size_) TreeRef(std::move(t));
    ++size_;
  }
  void pop_back() { data_[--size_].~TreeRef(); }
  void reserve(size_t capacity) {
    if (capacity <= capacity_) return;
    auto* fresh = static_cast<TreeRef*>(::operator new(capacity * sizeof(TreeRef)));
    for (size_t i = 0; i < size_; ++i) {
      new (fresh + i) TreeRef(std::move(data_[i]));
      data_[i].~TreeRef();
    }
    if (data_ != inlineData()) ::operator delete(data_);
    data_ = fresh;
    capacity_ = capacity;
  }

 private:
  static constexpr size_t kInline = 3;
  TreeRef* inlineData() { return reinterpret_cast<TreeRef*>(inline_); }
  void destroy() {
    for (size_t i = 0; i < size_; ++i) data_[i].~TreeRef();
    if (data_ != inlineData()) ::operator delete(data_);
    data_ = inlineData();
    capacity_ = kInline;
    size_ = 0;
  }
  // Takes other's elements; this list must be empty and inline.
  void take(TreeList& other) {
    if (other.data_ == other.inlineData()) {
      for (size_t i = 0; i < other.size_; ++i) {
        new (data_ + i) TreeRef(std::move(other.data_[i]));
        other.data_[i].~TreeRef();
      }
    } else {
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = other.inlineData();
      other.capacity_ = kInline;
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  alignas(TreeRef) unsigned char inline_[kInline * sizeof(TreeRef)];
  TreeRef* data_ = reinterpret_cast<TreeRef*>(inline_);
  size_t size_ = 0;
  size_t capacity_ = kInline;
};

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
