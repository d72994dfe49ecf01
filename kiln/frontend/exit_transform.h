#pragma once
// The exit transform (break, continue, return become structured control flow), internal to convertToSSA.
//
// Assumes an SSA graph in which `prim::LoopContinuation(%cond, %carried...)`
// ends a loop iteration early (its inputs are the body's outputs) and
// `prim::ReturnStmt(%v...)` returns from the graph (its inputs are the
// graph's outputs), and with-statements are `prim::Enter`/`prim::Exit` pairs
// in one block.
// Guarantees: neither exit node remains; the nodes after an exit that must
// run are gone, those that may run are guarded by a prim::If on a did-exit
// bool carried out of ifs and loops; values on paths that exit are
// prim::Uninitialized; blocks that always raise count as exiting; an if that
// sets the did-exit flag to a constant in both branches absorbs the if that
// tests it (1.13's inlineConsecutiveIfs).
#include <memory>

namespace kiln {

class Graph;

void transformExits(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
