#pragma once
// AliasDb (seed 001, "Handling Mutability"): which values of a graph may
// share memory, and which nodes write to it, so that passes can delete,
// merge, fold and reorder nodes without changing what a program computes.
//
// It is built once per graph, flow-insensitively, over a memory DAG (see
// memory_dag.h) whose edges are "may point to":
//   - a value produced by an op without alias annotations on its outputs is
//     a fresh location (a leaf);
//   - `Tensor(a)` outputs point to the inputs annotated `(a)`; `(*)` and any
//     value whose type is mutable but whose producer is unknown point to the
//     wildcard of its type, which stands for "memory this graph cannot see";
//   - graph inputs point to the wildcard of their type (the caller may pass
//     one tensor twice, or keep a reference);
//   - containers (lists, dicts, tuples, optionals of mutable types) have
//     contained elements: `prim::ListConstruct(%a, %b)` contains %a and %b,
//     `aten::__getitem__` of a list points to its contained elements, and
//     writes to a contained element are writes to the container's memory;
//   - prim::If and prim::Loop outputs point to every block output (and loop
//     input) that may flow into them;
//   - prim::CallFunction, prim::CallMethod, fork, and ops the analysis does
//     not understand put all their mutable inputs and outputs in the wildcard
//     set and are treated as writing to it.
// Two values may alias when the sets of leaves they reach intersect.
//
// The database is only valid for the graph as it was built. Passes that
// edit the graph either rebuild it or keep it current through the mutators
// at the bottom.
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln {

class MemoryDAG;
struct AliasDbState;

using ValueSet = std::unordered_set<const Value*>;

class AliasDb {
 public:
  explicit AliasDb(std::shared_ptr<Graph> graph);
  ~AliasDb();
  AliasDb(const AliasDb&) = delete;
  AliasDb& operator=(const AliasDb&) = delete;

  // Whether the memory of `a` and of `b` may overlap. Values of immutable
  // types (int, str, tuples of those...) never alias anything.
  bool mayAlias(const Value* a, const Value* b) const;
  bool mayAlias(ArrayRef<const Value*> a, ArrayRef<const Value*> b) const;
  // As mayAlias, but also through contained elements: a list of tensors
  // contains-aliases each tensor put into it.
  bool mayContainAlias(const Value* a, const Value* b) const;
  bool mayContainAlias(ArrayRef<const Value*> a, ArrayRef<const Value*> b) const;

  // Whether `n` (or a node in its blocks) writes to memory that a value in
  // `values` may point to.
  bool writesToAlias(const Node* n, const ValueSet& values) const;
  // Whether any node of the graph writes to memory `v` may point to.
  bool hasWriters(const Value* v) const;
  // Whether any node writes to memory an input or output of `n` may point to.
  bool hasWriters(const Node* n) const;
  bool hasInputWriters(const Node* n) const;
  bool hasOutputWriters(const Node* n) const;
  // Whether `n` (or a node in its blocks) writes to anything.
  bool isMutable(const Node* n) const;
  // Whether `n` writes to memory the graph cannot see (the wildcard set),
  // so its effect is visible outside and it can never be removed.
  bool writesToWildcard(const Node* n) const;
  // Whether `v` may point to memory the graph cannot see.
  bool mayAliasWildcard(const Value* v) const;
  // Whether `v`'s type can hold mutable memory (tensors, lists, dicts,
  // objects, futures, and tuples/optionals/unions of those).
  static bool isMutableType(const Value* v);

  // Moves `n` right after (before) `move_point` if that keeps every data
  // dependency and every read-write and write-write order on memory that
  // may alias; nodes that depend on `n` move along when they have to and
  // can. Returns whether it moved. Both nodes must be in the same block.
  bool moveAfterTopologicallyValid(Node* n, Node* move_point);
  bool moveBeforeTopologicallyValid(Node* n, Node* move_point);
  // The same question without moving anything.
  bool couldMoveAfterTopologically(Node* n, Node* move_point);
  bool couldMoveBeforeTopologically(Node* n, Node* move_point);

  // Keeping the database current while a pass edits the graph:
  // `v` was just created by a node without alias annotations: a fresh location.
  void createValue(const Value* v);
  // `to` may point to whatever `from` may point to (a copy or a view).
  void copyValueAliasing(const Value* from, const Value* to);
  // `new_value` takes `existing`'s place in the graph (after
  // replaceAllUsesWith); its aliasing becomes `existing`'s.
  void replaceWithNewValue(const Value* existing, const Value* new_value);

  // The points-to sets and writers, one line per value, for debugging and
  // the `>alias_analysis` JIT log.
  std::string toString() const;

 private:
  std::shared_ptr<Graph> graph_;
  std::unique_ptr<AliasDbState> state_;
};

}  // namespace kiln
