#pragma once
// Common subexpression elimination, as PyTorch 1.13's
// EliminateCommonSubexpression: a node that computes what an earlier node
// already computes (same kind, same inputs, equal attributes, same output
// types; constants by value, see sameConstant) is replaced by that node,
// which may sit in the same block or in one enclosing it. One walk in
// program order.
//
// Never merged: nodes with side effects, random ops, prim::profile, nodes
// with blocks (their blocks are searched), and nodes whose inputs or
// outputs anything writes to (AliasDb::hasWriters, which covers in-place
// ops, and writes to a list's elements for its readers). A merge never makes
// two graph outputs share memory they did not share, nor a node of an inner
// block share memory with an outer one when both are visible outside the
// graph (1.13's safeToChangeAliasingRelationship).
//
// Assumes an SSA graph; keeps its results. Returns whether it changed the graph.
#include <memory>

namespace kiln {

class Graph;

bool eliminateCommonSubexpression(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
