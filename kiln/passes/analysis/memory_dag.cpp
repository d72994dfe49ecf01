#include "kiln/passes/analysis/memory_dag.h"

#include <algorithm>

#include "kiln/util/error.h"

namespace kiln {

void MemoryLocations::set(unsigned index) {
  unsigned word = index / 64;
  uint64_t bit = uint64_t{1} << (index % 64);
  auto it = std::lower_bound(words_.begin(), words_.end(), word,
                             [](const std::pair<unsigned, uint64_t>& w, unsigned i) { return w.first < i; });
  if (it != words_.end() && it->first == word) {
    it->second |= bit;
  } else {
    words_.insert(it, {word, bit});
  }
}

bool MemoryLocations::test(unsigned index) const {
  unsigned word = index / 64;
  auto it = std::lower_bound(words_.begin(), words_.end(), word,
                             [](const std::pair<unsigned, uint64_t>& w, unsigned i) { return w.first < i; });
  return it != words_.end() && it->first == word && (it->second >> (index % 64) & 1) != 0;
}

MemoryLocations& MemoryLocations::operator|=(const MemoryLocations& other) {
  if (other.words_.empty() || &other == this) return *this;
  if (words_.empty()) {
    words_ = other.words_;
    return *this;
  }
  std::vector<std::pair<unsigned, uint64_t>> merged;
  merged.reserve(words_.size() + other.words_.size());
  auto a = words_.begin();
  auto b = other.words_.begin();
  while (a != words_.end() || b != other.words_.end()) {
    if (b == other.words_.end() || (a != words_.end() && a->first < b->first)) {
      merged.push_back(*a++);
    } else if (a == words_.end() || b->first < a->first) {
      merged.push_back(*b++);
    } else {
      merged.emplace_back(a->first, a->second | b->second);
      ++a;
      ++b;
    }
  }
  words_ = std::move(merged);
  return *this;
}

bool MemoryLocations::intersects(const MemoryLocations& other) const {
  auto a = words_.begin();
  auto b = other.words_.begin();
  while (a != words_.end() && b != other.words_.end()) {
    if (a->first < b->first) {
      ++a;
    } else if (b->first < a->first) {
      ++b;
    } else {
      if ((a->second & b->second) != 0) return true;
      ++a;
      ++b;
    }
  }
  return false;
}

Element* MemoryDAG::makeFreshElement(const Value* value) {
  // A new element is reachable from no other, so existing caches stay right.
  elements_.push_back(std::make_unique<Element>(static_cast<unsigned>(elements_.size())));
  Element* e = elements_.back().get();
  if (value) e->values.push_back(value);
  return e;
}

void MemoryDAG::makePointerTo(Element* from, Element* to) {
  if (from == to || from->points_to.test(to->index)) return;
  dropCaches();
  from->points_to.set(to->index);
}

void MemoryDAG::addToContainedElements(Element* contained, Element* container) {
  if (contained == container || container->contained_elements.test(contained->index)) return;
  dropCaches();
  container->contained_elements.set(contained->index);
}

void MemoryDAG::dropCaches() {
  if (!has_caches_) return;
  for (const auto& e : elements_) {
    e->memory_locations_.reset();
    e->all_contained_.reset();
  }
  has_caches_ = false;
}

// Both queries walk the graph once, with a visited set so cycles end, and
// take the finished sets of elements met on the way from their caches.

const MemoryLocations& MemoryDAG::getMemoryLocations(const Element* e) const {
  if (e->memory_locations_) return *e->memory_locations_;
  MemoryLocations result;
  MemoryLocations visited;
  std::vector<const Element*> work{e};
  visited.set(e->index);
  while (!work.empty()) {
    const Element* el = work.back();
    work.pop_back();
    if (el != e && el->memory_locations_) {
      result |= *el->memory_locations_;
    } else if (el->points_to.empty()) {
      result.set(el->index);
    } else {
      el->points_to.forEach([&](unsigned i) {
        if (visited.test(i)) return;
        visited.set(i);
        work.push_back(fromIndex(i));
      });
    }
  }
  has_caches_ = true;
  e->memory_locations_ = std::move(result);
  return *e->memory_locations_;
}

const MemoryLocations& MemoryDAG::getAllContainedMemoryLocations(const Element* e) const {
  if (e->all_contained_) return *e->all_contained_;
  MemoryLocations result;
  std::vector<const Element*> work{e};
  result.set(e->index);
  auto visit = [&](unsigned i) {
    if (result.test(i)) return;
    result.set(i);
    work.push_back(fromIndex(i));
  };
  while (!work.empty()) {
    const Element* el = work.back();
    work.pop_back();
    if (el != e && el->all_contained_) {
      result |= *el->all_contained_;
      continue;
    }
    getMemoryLocations(el).forEach(visit);
    el->contained_elements.forEach(visit);
  }
  has_caches_ = true;
  e->all_contained_ = std::move(result);
  return *e->all_contained_;
}

bool MemoryDAG::mayAlias(const Element* a, const Element* b) const {
  return getMemoryLocations(a).intersects(getMemoryLocations(b));
}

bool MemoryDAG::mayContainAlias(const Element* a, const Element* b) const {
  return getAllContainedMemoryLocations(a).intersects(getAllContainedMemoryLocations(b));
}

bool MemoryDAG::mayContainAlias(ArrayRef<const Element*> a, ArrayRef<const Element*> b) const {
  if (a.empty() || b.empty()) return false;
  MemoryLocations all_a;
  for (const Element* e : a) all_a |= getAllContainedMemoryLocations(e);
  return std::any_of(b.begin(), b.end(),
                     [&](const Element* e) { return all_a.intersects(getAllContainedMemoryLocations(e)); });
}

}  // namespace kiln
