#pragma once
// Canonicalization of modified loops, internal to convertToSSA (1.13's
// CanonicalizeModifiedLoops): a prim::Loop with both a trip count in use and
// a continue condition that is not always true (a `for` with `break`, or one
// whose condition changes) becomes a while-style loop: trip count INT64_MAX,
// the counter carried as the last loop-carried value, and the continue
// condition `counter + 1 < trip_count and cond` (the initial one
// `trip_count > 0`, and-ed with the initial condition unless it is the
// constant true).
// Assumes an SSA graph; keeps its semantics.
#include <memory>

namespace kiln {

class Graph;

void canonicalizeModifiedLoops(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
