#include "kiln/passes/peephole_list_idioms.h"

#include <limits>
#include <unordered_set>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/ops/sequence_util.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/peephole_detail.h"
#include "kiln/util/jit_log.h"

namespace kiln {

namespace {

bool isList(const Value* v) { return v->type()->kind() == TypeKind::List; }

bool isListIdiom(const Node* n) {
  switch (n->kind()) {
    case aten::len:
    case aten::__getitem__:
    case prim::ListUnpack:
    case aten::add:
    case aten::slice: return true;
    default: return false;
  }
}

// A list op on a list built by prim::ListConstruct: what this pass rewrites.
bool isCandidate(const Node* n) {
  return isListIdiom(n) && !n->inputs().empty() && isList(n->input(0)) &&
         n->input(0)->node()->kind() == prim::ListConstruct;
}

class ListIdiomOptimizer {
 public:
  explicit ListIdiomOptimizer(std::shared_ptr<Graph> graph) : graph_(std::move(graph)) {}

  bool run() {
    if (!detail::anyNodeIn(graph_->block(), isCandidate)) return false;
    {
      AliasDb db(graph_);
      collectMutatedLists(db, graph_->block());
    }
    return optimize(graph_->block());
  }

 private:
  void collectMutatedLists(const AliasDb& db, Block* block) {
    auto check = [&](Value* v) {
      if (isList(v) && db.hasWriters(v)) mutated_.insert(v);
    };
    walkBlocks(block, WalkOrder::PreOrder, [&](Block* b) {
      for (Value* v : b->inputs()) check(v);
      for (Node* n : b->nodes()) {
        for (Value* v : n->outputs()) check(v);
      }
    });
  }

  // A new prim::ListConstruct of `elements` standing for `n`'s output.
  void replaceWithList(Node* n, const std::vector<Value*>& elements) {
    WithInsertPoint guard(n);
    Node* list = graph_->insertNode(graph_->create(prim::ListConstruct, elements));
    list->output()->setType(n->output()->type());
    GRAPH_UPDATE("replacing ", *n, "with ", *list);
    // The new list is written wherever the old one was.
    if (mutated_.count(n->output())) mutated_.insert(list->output());
    n->output()->replaceAllUsesWith(list->output());
  }

  bool optimizeSlice(Node* n, Node* construct) {
    auto start = toIValue(n->input(1));
    auto end = toIValue(n->input(2));
    auto step = detail::constantInt(n->input(3));
    if (!start || !end || !step) return false;
    // These raise when run.
    if (*step == 0 || *step == std::numeric_limits<int64_t>::min()) return false;
    auto bound = [](const IValue& v) { return v.isInt() ? std::optional<int64_t>(v.toInt()) : std::nullopt; };
    auto range =
        detail::sliceRange(static_cast<int64_t>(construct->inputs().size()), bound(*start), bound(*end), *step);
    std::vector<Value*> elements;
    for (int64_t i = 0, at = range.start; i < range.count; ++i, at += *step) {
      elements.push_back(construct->input(static_cast<size_t>(at)));
    }
    replaceWithList(n, elements);
    return true;
  }

  bool optimize(Node* n) {
    Value* list = n->input(0);
    Node* construct = list->node();
    size_t size = construct->inputs().size();
    switch (n->kind()) {
      case aten::len: {
        WithInsertPoint guard(n);
        GRAPH_UPDATE("replacing ", *n, "with the length ", size);
        n->output()->replaceAllUsesWith(graph_->insertConstant(static_cast<int64_t>(size)));
        return true;
      }
      case aten::__getitem__: {
        auto index = detail::constantInt(n->input(1));
        if (!index) return false;
        int64_t i = *index < 0 ? *index + static_cast<int64_t>(size) : *index;
        if (i < 0 || i >= static_cast<int64_t>(size)) return false;
        GRAPH_UPDATE("replacing ", *n, "with element ", i);
        n->output()->replaceAllUsesWith(construct->input(static_cast<size_t>(i)));
        return true;
      }
      case prim::ListUnpack: {
        if (n->outputs().size() != size) return false;
        GRAPH_UPDATE("replacing ", *n, "with the elements of ", *construct);
        for (size_t i = 0; i < size; ++i) n->output(i)->replaceAllUsesWith(construct->input(i));
        return true;
      }
      case aten::add: {
        if (n->inputs().size() != 2) return false;
        Value* other = n->input(1);
        if (mutated_.count(other) || other->node()->kind() != prim::ListConstruct) return false;
        std::vector<Value*> elements(construct->inputs().begin(), construct->inputs().end());
        elements.insert(elements.end(), other->node()->inputs().begin(), other->node()->inputs().end());
        replaceWithList(n, elements);
        return true;
      }
      case aten::slice: return n->inputs().size() == 4 && optimizeSlice(n, construct);
      default: return false;
    }
  }

  bool optimize(Block* block) {
    bool changed = false;
    walkNodes(block, WalkOrder::PostOrder, [&](Node* n) {
      if (isCandidate(n) && !mutated_.count(n->input(0))) changed |= optimize(n);
    });
    return changed;
  }

  std::shared_ptr<Graph> graph_;
  std::unordered_set<const Value*> mutated_;
};

}  // namespace

bool peepholeOptimizeListIdioms(const std::shared_ptr<Graph>& graph) {
  GRAPH_DUMP("before list idioms:\n", *graph);
  bool changed = ListIdiomOptimizer(graph).run();
  if (changed) GRAPH_DUMP("after list idioms:\n", *graph);
  return changed;
}

}  // namespace kiln
