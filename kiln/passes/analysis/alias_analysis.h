#pragma once
// AliasDb (PyTorch's alias analysis): which values of a graph may
// share memory, and which nodes write to it, so that passes can delete,
// merge, fold and reorder nodes without changing what a program computes.
//
// It is built once per graph, flow-insensitively, as PyTorch 1.13's AliasDb,
// over a memory DAG (see memory_dag.h) whose edges are "may point to":
//   - every value of a mutable type has an element; a value produced by an
//     op without alias annotations on its outputs is a fresh location (a leaf);
//   - `Tensor(a)` outputs point to the inputs annotated `(a)`; `(*)` outputs,
//     `(a -> *)` inputs and values whose producer is unknown point to the
//     wildcard of their type (one wildcard per mutable type: Tensor,
//     int[], Tensor[], Dict(str, Tensor), each class...), which stands for
//     "memory this graph cannot see";
//   - graph inputs point to the wildcard of their type (the caller may pass
//     one tensor twice, or keep a reference); graph outputs do not (as in
//     1.13: a write to a returned value is live anyway), so passes that must
//     not make two outputs one object, or hand the caller a shared one, ask
//     mayContainAlias against the graph's outputs;
//   - containers (lists, dicts, tuples, futures, objects, and optionals and
//     unions of those) contain the wildcards of their element types: a value
//     put into a container (prim::ListConstruct, aten::append) becomes a
//     wildcard, and a value taken out (aten::__getitem__, prim::ListUnpack,
//     prim::TupleUnpack) is one; a list built only to be read by aten::cat
//     and its kin contains its elements themselves;
//   - prim::If outputs point to both blocks' outputs; prim::Loop outputs and
//     body inputs point to the loop's inputs and to the body's outputs (the
//     loop may run zero times, and each iteration sees the previous one's);
//   - prim::CallFunction, prim::CallMethod, prim::Enter/Exit and ops without
//     a schema write to everything their mutable inputs contain and make
//     inputs and outputs wildcards; aten::wait writes to every wildcard;
//     prim::fork makes its inputs wildcards.
// Writes come from `!` annotations (and prim::SetAttr, training batch_norm).
// Two values may alias when the sets of leaves they reach intersect.
//
// The database is only valid for the graph as it was built. Passes that
// edit the graph either rebuild it or keep it current through the mutators
// at the bottom. Values it does not know (created later and not introduced
// through a mutator) are treated as possibly aliasing anything, and as
// written by nothing.
//
// GRAPH_DEBUG (`KILN_JIT_LOG_LEVEL='>alias_analysis'`) logs toString() of
// every database built.
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
  // Whether any node of the graph writes to memory `v` may point to, or to
  // memory a container `v` may hold (kiln counts writes to a list's
  // elements as writers of the list; 1.13 does not, and so merges two
  // aten::cat of one list around a write to its element).
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
  // objects, and tuples/optionals/unions/futures of those).
  static bool isMutableType(const Value* v);
  // Whether building a database could record a write by `n` itself (not
  // its blocks): a `!` in its schema, a call, an attribute write, a wait, a
  // training batch_norm, an op without schema. When false, `n` writes
  // nothing, so a pass may skip building a database for it.
  static bool mayWrite(const Node* n);
  // Whether making values of `a` and of `b` alias (or stop aliasing) is
  // invisible: nothing writes to them, and not both are visible outside the
  // graph (through its inputs, outputs or the wildcard set).
  bool safeToChangeAliasingRelationship(ArrayRef<const Value*> a, ArrayRef<const Value*> b) const;

  // Moves `n` right after (before) `move_point` if that keeps every data
  // dependency and every read-write and write-write order on memory that
  // may alias; the nodes in between that depend on `n` (or that `n` depends
  // on, moving backwards) move along when they have to and can. Nodes with
  // side effects never move, and nothing moves across one. Returns whether
  // it moved; false when the nodes are in different blocks.
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

  // The graph, the points-to and contains edges, and each node's writes,
  // for debugging and the `>alias_analysis` JIT log.
  std::string toString() const;

 private:
  bool anyMutable(ArrayRef<const Value*> values) const;

  std::shared_ptr<Graph> graph_;
  std::unique_ptr<AliasDbState> state_;
};

}  // namespace kiln
