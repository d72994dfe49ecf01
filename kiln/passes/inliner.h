#pragma once
// Inlining, as PyTorch 1.13's Inline: every prim::CallFunction (whose first
// input is a prim::Constant of FunctionType) and prim::CallMethod (the
// method found through the class type of its first input) in the graph and
// its nested blocks is replaced by a copy of the callee's graph
// (Function::inlinableGraph), with the callee's own calls inlined first, so
// no call to a function made of a graph remains. The copied nodes keep the
// callee's source ranges, scopes (as in 1.13: a callee's node without a
// scope of its own gets none from the call) and value names (a name already
// taken in the caller moves the old holder to a numbered variant, as 1.13
// does); each call output's debug name passes to the value replacing it.
// kiln's IR has no inlined call stack, so none is recorded. The function
// constants stay for dead code elimination to remove.
//
// Left in place: calls whose callee has no graph (builtins, functions
// parsed from IR text that only name their callee), calls of a method the
// class does not have, calls whose argument count does not fit the callee's
// graph, and calls back into a function being inlined (recursion); they
// raise, or run, at run time as before. prim::fork subgraphs are not entered.
//
// Where kiln differs from 1.13: 1.13 inlines the callee's "optimized graph"
// (its graph after inlining, peephole, constant propagation of immutable
// types and constant pooling); kiln inlines the callee's graph as compiled,
// and leaves those clean-ups to the passes that run after inlining.
//
// Assumes an SSA graph; keeps its results.
#include <memory>

namespace kiln {

class Graph;

void inlineCalls(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
