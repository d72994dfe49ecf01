#pragma once
// CreateAutodiffSubgraphs (1.13's pass of that name): groups differentiable
// nodes into prim::DifferentiableGraph nodes, whose `Subgraph` attribute
// holds them, so that graph autodiff (kiln/autograd/graph_autodiff.h) can
// derive one backward graph per group and the optimizations that break
// differentiability (fusion) can run inside it.
//
// A node is differentiable when its operator declares a derivative formula
// for each tensor argument (op_description.h), it writes no memory, it has
// exactly one result and that result is a tensor, and no argument is a
// Tensor[]; prim::ConstantChunk is differentiable too (its gradient is the
// concatenation of its results' gradients), and so is a pure op whose
// tensor result has a dtype that carries no gradient (a comparison). Constants join the group of
// their users. Groups are maximal runs of adjacent differentiable nodes in
// a block (loop and if bodies included), reaching across nodes that only
// read (a list index between two products) when no result of a member is
// used before the group; a group with fewer than
// `min_size` non-constant nodes is put back (1.13's threshold is 2).
// Guarantees: what the graph computes is unchanged. Returns the groups.
#include <memory>
#include <vector>

namespace kiln {

class Graph;
class Node;

// Whether `n` can be in a DifferentiableGraph.
bool isDifferentiableNode(const Node* n);

std::vector<Node*> createAutodiffSubgraphs(const std::shared_ptr<Graph>& graph, size_t min_size = 2);

}  // namespace kiln
