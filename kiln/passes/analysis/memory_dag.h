#pragma once
// The memory DAG under AliasDb: a
// graph whose vertices (Elements) stand for values and for memory that is
// not a value of its own (a wildcard, the contents of a container), and
// whose edges say "may point to". An element that points to nothing is a
// memory location of its own; the memory an element may refer to is the set
// of such leaves it reaches. Containers also record the elements they hold.
//
// Edges may form cycles (a loop-carried value points to the value of the
// previous iteration). A query walks the graph once (Tarjan's strongly
// connected components: the elements of a cycle share one answer) and
// caches the answer of every element it passes, so queries cost linear time
// in all; adding an edge after a query drops the caches.
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "kiln/util/array_ref.h"

namespace kiln {

class Value;

// A set of element indices, stored as sorted 64-bit words (most sets hold a
// few elements of a large graph).
class MemoryLocations {
 public:
  void set(unsigned index);
  bool test(unsigned index) const;
  bool empty() const { return words_.empty(); }
  void clear() { words_.clear(); }
  MemoryLocations& operator|=(const MemoryLocations& other);
  bool intersects(const MemoryLocations& other) const;
  // Calls fn(index) for every index, in increasing order.
  template <typename Fn>
  void forEach(const Fn& fn) const {
    for (const auto& [word_index, bits] : words_) {
      for (uint64_t rest = bits; rest != 0; rest &= rest - 1) {
        fn(word_index * 64 + static_cast<unsigned>(__builtin_ctzll(rest)));
      }
    }
  }

 private:
  std::vector<std::pair<unsigned, uint64_t>> words_;  // (index / 64, bits), no zero words
};

struct Element {
  explicit Element(unsigned index) : index(index) {}
  unsigned index;
  MemoryLocations points_to;
  // What a container holds (a list's elements, a tuple's members).
  MemoryLocations contained_elements;
  // The values this element stands for; empty for wildcards and the like.
  std::vector<const Value*> values;

 private:
  friend class MemoryDAG;
  // Where a walk for one kind of query is at this element.
  struct Visit {
    uint64_t walk = 0;  // the walk that last reached this element
    unsigned order = 0;
    unsigned low = 0;
    bool on_stack = false;
  };
  std::optional<MemoryLocations> memory_locations_;
  std::optional<MemoryLocations> all_contained_;
  Visit locations_visit_;
  Visit contained_visit_;
};

class MemoryDAG {
 public:
  // A new leaf (fresh memory), standing for `value` when not null.
  Element* makeFreshElement(const Value* value);
  void makePointerTo(Element* from, Element* to);
  void addToContainedElements(Element* contained, Element* container);

  Element* fromIndex(unsigned index) { return elements_[index].get(); }
  const Element* fromIndex(unsigned index) const { return elements_[index].get(); }
  size_t size() const { return elements_.size(); }

  // The leaves `e` reaches: the memory it may refer to.
  const MemoryLocations& getMemoryLocations(const Element* e) const;
  // `e`, its memory locations, and, transitively, everything they contain.
  const MemoryLocations& getAllContainedMemoryLocations(const Element* e) const;

  bool mayAlias(const Element* a, const Element* b) const;
  // Whether any memory reachable from `a` (through points-to and contained
  // elements) is reachable from `b`.
  bool mayContainAlias(const Element* a, const Element* b) const;
  bool mayContainAlias(ArrayRef<const Element*> a, ArrayRef<const Element*> b) const;

 private:
  void dropCaches();
  // The closure of `root` under `successors`, each element adding `own` of
  // itself: cached in `cache` of every element on the way.
  template <typename Successors, typename Own>
  const MemoryLocations& closure(const Element* root, std::optional<MemoryLocations> Element::*cache,
                                 Element::Visit Element::*visit, const Successors& successors, const Own& own) const;

  std::vector<std::unique_ptr<Element>> elements_;
  mutable bool has_caches_ = false;
  mutable uint64_t walks_ = 0;
};

}  // namespace kiln
