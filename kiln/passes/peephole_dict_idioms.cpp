// The peephole stage on dicts (PyTorch 1.13's PeepholeOptimizeDictIdioms):
// `len(d)` and `d[k]` with a constant k, where d is a prim::DictConstruct
// with distinct constant int, float or str keys that nothing writes to.
// Keys are compared as the runtime compares them.
#include <unordered_map>

#include "kiln/ir/graph.h"
#include "kiln/ir/walk.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/peephole_detail.h"
#include "kiln/util/jit_log.h"

namespace kiln::detail {

namespace {

using Entries = std::unordered_map<IValue, Value*, DictKeyHash, DictKeyEqual>;

bool isCandidate(const Node* n) {
  return (n->kind() == aten::len || n->kind() == aten::__getitem__) && !n->inputs().empty() &&
         n->input(0)->type()->kind() == TypeKind::Dict && n->input(0)->node()->kind() == prim::DictConstruct;
}

// The entries of a prim::DictConstruct, when its keys are distinct constants
// of a type whose equality the pass trusts.
std::optional<Entries> constantEntries(Node* construct) {
  switch (construct->output()->type()->cast<DictType>()->keyType()->kind()) {
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::String: break;
    default: return std::nullopt;
  }
  Entries entries;
  for (size_t i = 0; i + 1 < construct->inputs().size(); i += 2) {
    auto key = toIValue(construct->input(i));
    if (!key || !entries.emplace(*key, construct->input(i + 1)).second) return std::nullopt;
  }
  return entries;
}

class DictIdiomOptimizer {
 public:
  explicit DictIdiomOptimizer(std::shared_ptr<Graph> graph) : graph_(std::move(graph)), db_(graph_) {}

  bool optimize(Block* block) {
    bool changed = false;
    walkNodes(block, WalkOrder::PostOrder, [&](Node* n) {
      if (isCandidate(n) && !db_.hasWriters(n->input(0))) changed |= optimize(n);
    });
    return changed;
  }

 private:
  const std::optional<Entries>& entriesOf(Node* construct) {
    auto it = entries_.find(construct);
    if (it == entries_.end()) it = entries_.emplace(construct, constantEntries(construct)).first;
    return it->second;
  }

  bool optimize(Node* n) {
    const auto& entries = entriesOf(n->input(0)->node());
    if (!entries) return false;
    if (n->kind() == aten::len) {
      WithInsertPoint guard(n);
      GRAPH_UPDATE("replacing ", *n, "with the length ", entries->size());
      n->output()->replaceAllUsesWith(graph_->insertConstant(static_cast<int64_t>(entries->size())));
      return true;
    }
    if (n->inputs().size() != 2) return false;
    auto key = toIValue(n->input(1));
    if (!key) return false;
    auto entry = entries->find(*key);
    // A missing key stays, to raise when run.
    if (entry == entries->end()) return false;
    GRAPH_UPDATE("replacing ", *n, "with %", entry->second->debugName());
    n->output()->replaceAllUsesWith(entry->second);
    return true;
  }

  std::shared_ptr<Graph> graph_;
  AliasDb db_;
  std::unordered_map<const Node*, std::optional<Entries>> entries_;
};

}  // namespace

bool peepholeOptimizeDictIdioms(const std::shared_ptr<Graph>& graph) {
  if (!anyNodeIn(graph->block(), isCandidate)) return false;
  return DictIdiomOptimizer(graph).optimize(graph->block());
}

}  // namespace kiln::detail
