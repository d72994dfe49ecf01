// The peephole stage on nested concatenations (PyTorch 1.13's
// CombineConcats): a `cat` along a constant dim whose only use is one
// element of a list that only another `cat` along the same dim reads is
// inlined into that list:
//   %l1 = prim::ListConstruct(%a, %b);  %c1 = aten::cat(%l1, %d)
//   %l2 = prim::ListConstruct(%x, %c1); %c2 = aten::cat(%l2, %d)
// becomes `aten::cat(prim::ListConstruct(%x, %a, %b), %d)`.
// The inner list must not be written before its `cat` reads it, and (beyond
// 1.13, which misses it) its elements must not be written between the two
// `cat`s, since the combined `cat` reads them later.
#include <deque>
#include <unordered_map>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/peephole_detail.h"
#include "kiln/util/jit_log.h"

namespace kiln::detail {

namespace {

bool isCatOfList(const Node* n) {
  return n->kind() == aten::cat && n->inputs().size() == 2 && n->input(0)->node()->kind() == prim::ListConstruct;
}

// The cat reading the list that is the only use of `cat`'s result, and the
// position of that result in the list.
std::optional<std::pair<Node*, size_t>> outerCat(const Node* cat) {
  const auto& uses = cat->output()->uses();
  if (uses.size() != 1 || uses[0].user->kind() != prim::ListConstruct) return std::nullopt;
  Node* list = uses[0].user;
  if (list->output()->uses().size() != 1) return std::nullopt;
  Node* outer = list->output()->uses()[0].user;
  if (!isCatOfList(outer) || outer->input(0) != list->output()) return std::nullopt;
  return std::make_pair(outer, uses[0].offset);
}

class ConcatCombiner {
 public:
  explicit ConcatCombiner(std::shared_ptr<Graph> graph) : graph_(std::move(graph)), db_(graph_) {}

  bool run() {
    collect(graph_->block());
    if (pairs_.empty()) return false;
    auto combined = combinedElements();
    for (const Pair& p : pairs_) {
      auto it = combined.find(p.outer);
      if (it == combined.end()) continue;  // an inner cat of a later pair, or done
      Node* cat = p.outer;
      std::vector<Value*> elements(it->second.begin(), it->second.end());
      combined.erase(it);
      WithInsertPoint guard(cat);
      Node* list = graph_->insertNode(graph_->create(prim::ListConstruct, elements));
      list->output()->setType(cat->input(0)->type());
      GRAPH_UPDATE("combining the concatenations into ", *cat, "as ", *list);
      cat->replaceInput(0, list->output());
    }
    return true;
  }

 private:
  // An inner cat, the outer cat that reads it, and where in the outer list.
  struct Pair {
    Node* inner;
    Node* outer;
    size_t index;
  };

  void collect(Block* block) {
    walkNodes(block, WalkOrder::PreOrder, [this](Node* n) {
      if (isCatOfList(n)) consider(n);
    });
  }

  void consider(Node* cat) {
    auto dim = constantInt(cat->input(1));
    if (!dim) return;
    auto outer = outerCat(cat);
    if (!outer || constantInt(outer->first->input(1)) != dim) return;
    if (outer->first->owningBlock() != cat->owningBlock()) return;
    if (!db_.couldMoveBeforeTopologically(cat->input(0)->node(), cat)) return;
    ValueSet elements(cat->input(0)->node()->inputs().begin(), cat->input(0)->node()->inputs().end());
    for (const Node* n = cat->next(); n != outer->first; n = n->next()) {
      if (db_.writesToAlias(n, elements)) return;
    }
    pairs_.push_back({cat, outer->first, outer->second});
  }

  static std::vector<Value*> listElements(Node* cat) {
    auto inputs = cat->input(0)->node()->inputs();
    return {inputs.begin(), inputs.end()};
  }

  // The elements of each outermost cat's new list, nested cats inlined.
  // Pairs come in program order, so an inner cat's elements are complete
  // before they are spliced into its outer cat.
  std::unordered_map<const Node*, std::deque<Value*>> combinedElements() const {
    std::unordered_map<const Node*, std::deque<Value*>> combined;
    for (const Pair& p : pairs_) {
      std::deque<Value*> elements;
      if (auto it = combined.find(p.inner); it != combined.end()) {
        elements = std::move(it->second);
        combined.erase(it);
      } else {
        auto inner = listElements(p.inner);
        elements.assign(inner.begin(), inner.end());
      }
      auto outer = listElements(p.outer);
      auto at = outer.begin() + static_cast<ptrdiff_t>(p.index);
      elements.insert(elements.begin(), outer.begin(), at);
      elements.insert(elements.end(), at + 1, outer.end());
      combined[p.outer] = std::move(elements);
    }
    return combined;
  }

  std::shared_ptr<Graph> graph_;
  AliasDb db_;
  std::vector<Pair> pairs_;
};

}  // namespace

bool combineConcats(const std::shared_ptr<Graph>& graph) {
  auto candidate = [](const Node* n) { return isCatOfList(n) && outerCat(n); };
  if (!anyNodeIn(graph->block(), candidate)) return false;
  return ConcatCombiner(graph).run();
}

}  // namespace kiln::detail
