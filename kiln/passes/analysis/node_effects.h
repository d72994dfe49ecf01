#pragma once
// What the cleanup passes need to know about a node or value before they may
// delete, fold or merge it: whether a type can be mutated in place, whether
// a node has effects beyond its outputs, whether it is random, and which
// mutable values may share memory (a conservative stand-in for PyTorch's
// AliasDb: values are merged into alias classes, never split).
#include <unordered_map>
#include <unordered_set>

#include "kiln/ir/graph.h"

namespace kiln {

// Tensors, lists, dicts, objects, futures, Any, and tuples/optionals/unions
// holding one of those (PyTorch's AliasDb::isMutableType).
bool isMutableType(const Type& type);
bool isMutableType(const Value* v);

// Prints, raises, warns, calls, attribute writes, fork/wait, with-blocks:
// nodes that must run even when nothing uses their outputs.
bool hasSideEffects(const Node* n);

// Random ops: two runs may differ, so they are never folded or merged.
bool isNondeterministic(const Node* n);

// Whether two prim::Constant values hold the same value of the same type
// (floats compared with their sign, so -0.0 and 0.0 stay apart).
bool sameConstant(const Value* a, const Value* b);

// May-alias classes of the mutable values of a graph, built once. A class is
// a wildcard when it may hold memory shared with the caller (graph inputs
// and outputs, `(*)`-annotated values, calls' arguments and results), so
// writes to it are visible outside.
class AliasClasses {
 public:
  explicit AliasClasses(Graph& graph);

  // Values of immutable types are their own singleton class.
  const Value* classOf(const Value* v) const;
  bool isWildcard(const Value* v) const;
  // The inputs `n` writes to, per its schema's `!` annotations.
  std::vector<const Value*> writtenInputs(const Node* n) const;
  // Whether any node of the graph writes to the class of `v`.
  bool hasWriters(const Value* v) const;

 private:
  void analyze(Block* block);
  void analyzeNode(Node* n);
  void unite(const Value* a, const Value* b);
  void markWildcard(const Value* v);

  mutable std::unordered_map<const Value*, const Value*> parent_;
  std::unordered_set<const Value*> wildcard_roots_;
  std::unordered_set<const Value*> written_roots_;
  const Value* wildcard_anchor_ = nullptr;
};

}  // namespace kiln
