#pragma once
// Subgraph utilities (1.13's SubgraphUtils): a *subgraph node*
// (prim::FusionGroup, prim::DifferentiableGraph, ...) holds a computation in
// its `Subgraph` graph attribute; input i of the node feeds input i of the
// subgraph, and output i of the subgraph is output i of the node. These
// functions move nodes into and out of such nodes without changing what the
// surrounding graph computes. Values keep their types and debug names: a
// value copied into a subgraph takes the name and type of the value it
// copies, and unmerging gives the values back the names and types the
// subgraph node's outputs had.
//
// Nodes with blocks cannot be merged (their free variables are not mapped).
#include <functional>
#include <vector>

#include "kiln/ir/graph.h"

namespace kiln {

// Told when a value of the surrounding graph is replaced by another (an
// output of a subgraph node, or of a node unmerged from one), before its
// uses move and it is destroyed, so that a pass can keep an analysis of the
// graph (AliasDb) current.
using ValueReplaced = std::function<void(Value* old_value, Value* new_value)>;

// The subgraph of a subgraph node.
Graph& getSubgraph(Node* n);

// `to` takes `from`'s type and debug name, which `from` gives up (where
// Value::copyMetadata would rename `from` to `name.1`): for a value about
// to take `from`'s place.
void takeMetadata(Value* to, Value* from);

// A new node of `kind` in n's place whose subgraph holds a copy of `n`;
// every output of `n` becomes an output of it. Destroys `n`.
Node* createSingletonSubgraph(Node* n, Symbol kind, const ValueReplaced& replaced = nullptr);

// Moves `to_merge` into the subgraph of `subgraph_node`, in front of the
// nodes already there. `to_merge` must be in the same block, its inputs
// defined before `subgraph_node`, and users of its outputs other than
// `subgraph_node` must come after `subgraph_node` (a producer moved right
// before it satisfies this). Its inputs become inputs of the subgraph node
// unless they already are one; constants are copied into the subgraph
// instead; new tensor inputs go after the tensor inputs already there,
// other new inputs at the end. Outputs of `to_merge` that fed
// `subgraph_node` are read inside the subgraph directly; those with other
// users become new outputs of the subgraph node. Destroys `to_merge` and
// returns its copy inside the subgraph.
Node* mergeNodeIntoSubgraph(Node* to_merge, Node* subgraph_node, const ValueReplaced& replaced = nullptr);

// Merges the subgraph node `producer` into `consumer` under the same
// conditions as mergeNodeIntoSubgraph. Destroys `producer`.
void mergeSubgraphs(Node* consumer, Node* producer, const ValueReplaced& replaced = nullptr);

// Puts copies of the subgraph's nodes in place of `subgraph_node`, which it
// destroys; returns the copies in order.
std::vector<Node*> unmergeSubgraph(Node* subgraph_node, const ValueReplaced& replaced = nullptr);

}  // namespace kiln
