#pragma once
// The fusion pass (1.13 fuses only on GPUs; this is its CPU counterpart, docs/fuser.md):
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
// A chunk of a pointwise result whose pieces one group reads moves above
// that op (each operand chunked; operands of possibly different shapes go
// through aten::broadcast_tensors first, outside the group), so that the op
// joins the group too (an LSTM cell's gates are one group). Group inputs
// are tensors first, then scalars. The pass is registered as `fuse` for
// `kiln opt -p` and kiln._C._jit_pass.
//
// Assumes: the executor's optimization passes have run (shapes propagated,
// chunk + ListUnpack already prim::ConstantChunk). Does nothing when any
// graph input requires grad (its type says requires_grad=1; unknown counts
// as not), or when fusion is off (fuser.h). Values whose type says they
// require grad, or that are tensors of a dtype kernels do not compute in
// (Half, BFloat16), are not fused either.
// Guarantees: results are unchanged; no node that writes memory, aliases its
// inputs (unless AliasDb shows no write could tell) or is not pointwise is
// in a group; a group has at least two non-constant nodes (a single op is
// not worth a kernel); a prim::ConstantChunk in a group reads a group input
// that nothing else in the group reads; a prim::FusedConcat is an output
// of its group that no node of the group reads, and its pieces are all
// computed in the group.
#include <memory>

namespace kiln {
class Graph;

void fuseGraph(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
