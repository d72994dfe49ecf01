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

template <typename Successors, typename Own>
const MemoryLocations& MemoryDAG::closure(const Element* root, std::optional<MemoryLocations> Element::*cache,
                                          Element::Visit Element::*visit, const Successors& successors,
                                          const Own& own) const {
  if (root->*cache) return *(root->*cache);
  has_caches_ = true;
  const uint64_t walk = ++walks_;
  unsigned order = 0;
  // The DAG owns its elements: a query may fill their caches.
  auto at = [this](unsigned index) { return elements_[index].get(); };
  struct Frame {
    Element* element;
    std::vector<unsigned> successors;
    size_t next = 0;
  };
  std::vector<Frame> frames;
  std::vector<Element*> component;  // Tarjan's stack
  auto enter = [&](Element* e) {
    e->*visit = {walk, order, order, true};
    ++order;
    component.push_back(e);
    frames.push_back({e, successors(e)});
  };
  enter(at(root->index));
  while (!frames.empty()) {
    Frame& frame = frames.back();
    Element* e = frame.element;
    if (frame.next < frame.successors.size()) {
      Element* s = at(frame.successors[frame.next++]);
      if (s->*cache) continue;  // in a finished component
      if ((s->*visit).walk != walk) {
        enter(s);  // invalidates `frame`
      } else if ((s->*visit).on_stack) {
        (e->*visit).low = std::min((e->*visit).low, (s->*visit).order);
      }
      continue;
    }
    std::vector<unsigned> done = std::move(frame.successors);
    frames.pop_back();
    if (!frames.empty()) {
      Element::Visit& parent = frames.back().element->*visit;
      parent.low = std::min(parent.low, (e->*visit).low);
    }
    if ((e->*visit).low != (e->*visit).order) continue;
    // `e` roots a component: its members share one answer, made of what
    // each adds and the answers of the components they reach.
    size_t first = component.size() - 1;
    while (component[first] != e) --first;
    MemoryLocations result;
    for (size_t i = first; i < component.size(); ++i) {
      Element* member = component[i];
      (member->*visit).on_stack = false;
      own(member, result);
      for (unsigned next : member == e ? done : successors(member)) {
        if (const auto& answer = at(next)->*cache) result |= *answer;
      }
    }
    for (size_t i = first; i < component.size(); ++i) component[i]->*cache = result;
    component.resize(first);
  }
  return *(root->*cache);
}

const MemoryLocations& MemoryDAG::getMemoryLocations(const Element* e) const {
  return closure(
      e, &Element::memory_locations_, &Element::locations_visit_,
      [](const Element* el) {
        std::vector<unsigned> out;
        el->points_to.forEach([&](unsigned i) { out.push_back(i); });
        return out;
      },
      [](const Element* el, MemoryLocations& result) {
        if (el->points_to.empty()) result.set(el->index);
      });
}

const MemoryLocations& MemoryDAG::getAllContainedMemoryLocations(const Element* e) const {
  return closure(
      e, &Element::all_contained_, &Element::contained_visit_,
      [this](const Element* el) {
        std::vector<unsigned> out;
        auto add = [&](unsigned i) { out.push_back(i); };
        getMemoryLocations(el).forEach(add);
        el->contained_elements.forEach(add);
        return out;
      },
      [](const Element* el, MemoryLocations& result) { result.set(el->index); });
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
