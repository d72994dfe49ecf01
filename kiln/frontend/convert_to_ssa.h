#pragma once
// Conversion to SSA (variables become values carried through blocks) and the
// exit transform (exits become structured control flow), as TorchScript 1.13 does them.
//
// Assumes the IR emitter's form:
//  - variables are `prim::Store[name="x"](%v)` (no outputs) and
//    `%x : T = prim::Load[name="x"]()`, T the variable's type at that point;
//  - `prim::If(%cond)` has two blocks and no outputs;
//  - `prim::Loop(%max_trip_count)` has no outputs and two blocks: block0 is
//    the body, with one input (the trip count, int) and no outputs; block1
//    computes the continue condition (no inputs, one bool output), evaluated
//    before the first iteration and after each one;
//  - `prim::BreakStmt()`, `prim::ContinueStmt()` (in loop bodies) and
//    `prim::ReturnStmt(%v)` exit; `prim::RaiseException` always throws;
//  - the graph's single output is a placeholder `prim::Uninitialized` of the
//    return type, appended last.
// Guarantees: no Store/Load/Break/Continue/ReturnStmt/LoopContinuation
// remain; loops carry their variables as block inputs/outputs; ifs have
// outputs for variables assigned in both branches (or one branch when the
// other exits, with prim::Uninitialized in the exiting one); the graph
// returns the returned value; loops with both a trip count and a condition
// that can change (a `for` with `break`) are canonicalized as 1.13 does
// (trip count INT64_MAX, counter carried explicitly).
#include <memory>
#include <string>

namespace kiln {

class Graph;

// Whether a variable name is worth giving the values stored to it as a debug
// name: not the compiler's own (`$tmp_assign_0`) nor `_` followed by digits.
bool meaningfulName(const std::string& name);

void convertToSSA(std::shared_ptr<Graph>& graph);

}  // namespace kiln
