#pragma once
// Walks over the nodes, or the blocks, of a graph, a block or a node and
// everything nested in them (MLIR's `walk`), so that passes need not each
// write the recursion into `node->blocks()` themselves.
//
// Order. Nodes are visited in program order, a node's blocks in index order.
// WalkOrder::PreOrder visits a node before the nodes in its blocks (a block
// before the blocks nested in it); WalkOrder::PostOrder visits it after them.
//
// Results. A visitor returns void, or a WalkResult: advance() goes on,
// interrupt() ends the whole walk (the walk then returns interrupt()), and
// skip(), in pre-order, goes on without entering the visited node's blocks
// (or the visited block's nested blocks). In post-order skip() is advance().
//
// Changing the IR during a walk. When the walk reaches a node it remembers
// the node after it in its block, and steps there once it is done with the
// node. So a node visitor may:
//   - erase or move the visited node: in post-order always; in pre-order only
//     when it then returns skip() or interrupt(), since on advance() the walk
//     goes on into the visited node's blocks;
//   - insert nodes anywhere; nodes put before the visited node, or between it
//     and the node that followed it, are not visited; nodes put further on
//     (in a block the walk has yet to reach) are;
//   - erase or move any other node, except the ones the walk has remembered:
//     the node that followed the visited node, and the node that followed each
//     node enclosing it; nor may it erase a node (or block) enclosing it.
// A node moved to a place the walk has yet to reach is visited again.
// A block visitor may change its block's node list at will (in pre-order
// the walk reads that list after the visitor returns), under the same rule
// for the nodes enclosing the block and the nodes after them.
#include <type_traits>

#include "kiln/ir/graph.h"

namespace kiln {

enum class WalkOrder { PreOrder, PostOrder };

class WalkResult {
 public:
  static constexpr WalkResult advance() { return WalkResult(Kind::Advance); }
  static constexpr WalkResult interrupt() { return WalkResult(Kind::Interrupt); }
  static constexpr WalkResult skip() { return WalkResult(Kind::Skip); }

  constexpr bool wasInterrupted() const { return kind_ == Kind::Interrupt; }
  constexpr bool wasSkipped() const { return kind_ == Kind::Skip; }
  friend constexpr bool operator==(WalkResult a, WalkResult b) { return a.kind_ == b.kind_; }

 private:
  enum class Kind { Advance, Interrupt, Skip };
  constexpr explicit WalkResult(Kind kind) : kind_(kind) {}
  Kind kind_;
};

namespace detail {

// Calls a visitor that returns void or a WalkResult.
template <typename Visit, typename T>
WalkResult visitWith(Visit& visit, T* item) {
  if constexpr (std::is_void_v<std::invoke_result_t<Visit&, T*>>) {
    visit(item);
    return WalkResult::advance();
  } else {
    static_assert(std::is_same_v<std::invoke_result_t<Visit&, T*>, WalkResult>,
                  "a walk visitor returns void or WalkResult");
    return visit(item);
  }
}

// NodeT and BlockT are Node and Block, or both const.
template <typename NodeT, typename BlockT, typename Visit>
WalkResult walkNodesIn(BlockT* block, WalkOrder order, Visit& visit);

template <typename NodeT, typename Visit>
WalkResult walkNodesFrom(NodeT* node, WalkOrder order, Visit& visit) {
  if (order == WalkOrder::PreOrder) {
    WalkResult result = visitWith(visit, node);
    if (result.wasInterrupted()) return result;
    if (result.wasSkipped()) return WalkResult::advance();
  }
  // By index: a visitor may add blocks to an enclosing node.
  for (size_t i = 0; i < node->blocks().size(); ++i) {
    if (walkNodesIn<NodeT>(node->blocks()[i], order, visit).wasInterrupted()) return WalkResult::interrupt();
  }
  if (order == WalkOrder::PostOrder && visitWith(visit, node).wasInterrupted()) return WalkResult::interrupt();
  return WalkResult::advance();
}

template <typename NodeT, typename BlockT, typename Visit>
WalkResult walkNodesIn(BlockT* block, WalkOrder order, Visit& visit) {
  NodeT* end = block->returnNode();
  for (NodeT* n = *block->nodes().begin(); n != end;) {
    NodeT* next = n->next();  // read first: the visitor may erase or move n
    if (walkNodesFrom(n, order, visit).wasInterrupted()) return WalkResult::interrupt();
    n = next;
  }
  return WalkResult::advance();
}

template <typename NodeT, typename BlockT, typename Visit>
WalkResult walkBlocksIn(BlockT* block, WalkOrder order, Visit& visit) {
  if (order == WalkOrder::PreOrder) {
    WalkResult result = visitWith(visit, block);
    if (result.wasInterrupted()) return result;
    if (result.wasSkipped()) return WalkResult::advance();
  }
  NodeT* end = block->returnNode();
  for (NodeT* n = *block->nodes().begin(); n != end;) {
    NodeT* next = n->next();
    for (size_t i = 0; i < n->blocks().size(); ++i) {
      if (walkBlocksIn<NodeT>(n->blocks()[i], order, visit).wasInterrupted()) return WalkResult::interrupt();
    }
    n = next;
  }
  if (order == WalkOrder::PostOrder && visitWith(visit, block).wasInterrupted()) return WalkResult::interrupt();
  return WalkResult::advance();
}

}  // namespace detail

// Visits every node nested in `root` (at any depth), or `root` itself and
// every node nested in it when `root` is a node. Returns interrupt() when a
// visitor did, advance() otherwise.
template <typename Visit>
WalkResult walkNodes(Block* root, WalkOrder order, Visit&& visit) {
  return detail::walkNodesIn<Node>(root, order, visit);
}
template <typename Visit>
WalkResult walkNodes(const Block* root, WalkOrder order, Visit&& visit) {
  return detail::walkNodesIn<const Node>(root, order, visit);
}
template <typename Visit>
WalkResult walkNodes(Graph& root, WalkOrder order, Visit&& visit) {
  return detail::walkNodesIn<Node>(root.block(), order, visit);
}
template <typename Visit>
WalkResult walkNodes(const Graph& root, WalkOrder order, Visit&& visit) {
  return detail::walkNodesIn<const Node>(root.block(), order, visit);
}
template <typename Visit>
WalkResult walkNodes(Node* root, WalkOrder order, Visit&& visit) {
  return detail::walkNodesFrom(root, order, visit);
}
template <typename Visit>
WalkResult walkNodes(const Node* root, WalkOrder order, Visit&& visit) {
  return detail::walkNodesFrom(root, order, visit);
}

// Visits `root` and every block nested in it (a graph's root is its top
// block). Returns interrupt() when a visitor did, advance() otherwise.
template <typename Visit>
WalkResult walkBlocks(Block* root, WalkOrder order, Visit&& visit) {
  return detail::walkBlocksIn<Node>(root, order, visit);
}
template <typename Visit>
WalkResult walkBlocks(const Block* root, WalkOrder order, Visit&& visit) {
  return detail::walkBlocksIn<const Node>(root, order, visit);
}
template <typename Visit>
WalkResult walkBlocks(Graph& root, WalkOrder order, Visit&& visit) {
  return detail::walkBlocksIn<Node>(root.block(), order, visit);
}
template <typename Visit>
WalkResult walkBlocks(const Graph& root, WalkOrder order, Visit&& visit) {
  return detail::walkBlocksIn<const Node>(root.block(), order, visit);
}

}  // namespace kiln
