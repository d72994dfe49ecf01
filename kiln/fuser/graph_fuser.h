#pragma once
// The fusion pass (seed 001, "Post-derivative optimization"; seed 003):
// groups adjacent pointwise nodes into prim::FusionGroup nodes whose
// `Subgraph` attribute holds the fused computation. The fused-group operator
// (fusion_group_op.cpp) runs a group as one generated kernel.
//
// What it does, greedily from the end of each block backwards (1.13's
// GraphFuser): a fusible node (codegen.h, isFusibleNode) with tensor outputs
// starts a group; producers of its inputs that are fusible are merged in,
// moved next to the group with AliasDb when that is topologically valid and
// does not reorder writes; constants and scalar inputs are copied in;
// prim::ConstantChunk of a group input is pulled into the group; aten::cat of
// group outputs (a ListConstruct used only by it) becomes prim::FusedConcat
// inside the group. Groups are formed in every block (loop and if bodies).
//
// Assumes: the executor's optimization passes have run (shapes propagated,
// chunk + ListUnpack already prim::ConstantChunk). Does nothing when any
// graph input requires grad (its type says requires_grad=1; unknown counts
// as not), or when fusion is off (fuser.h).
// Guarantees: results are unchanged; no node that writes memory, aliases its
// inputs or is not pointwise is in a group; a group has at least two
// non-constant nodes (a single op is not worth a kernel).
#include <memory>

namespace kiln {
class Graph;

void fuseGraph(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
