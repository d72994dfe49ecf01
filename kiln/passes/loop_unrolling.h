#pragma once
// Loop unrolling, as PyTorch 1.13's UnrollLoops. It looks at for-loops: a
// prim::Loop whose start condition and body condition are both the
// constant true (what `for i in range(n)` becomes), whose body is small
// (at most 31 nodes that run, counted through nested blocks; constants do
// not count). Inner loops are unrolled before the loops around them.
//
// When the body reads the iteration counter, the counter becomes a
// loop-carried int starting at 0 that the body increments (`aten::add(i,
// 1)`), so that copies of the body can chain it. Then:
//   - a constant trip count below 64 replaces the loop by that many copies
//     of its body, in order (none when the count is 0 or negative);
//   - any other trip count n keeps the loop with its body repeated 8 times,
//     running `aten::__round_to_zero_floordiv(n, 8)` times, followed by an
//     epilogue loop (the original body) running `n - that * 8` times, which
//     continues from the first loop's carried values.
// Side effects keep their order; while-loops (a condition that is not
// constant) and large bodies are left alone. Dead code is eliminated
// afterwards when anything changed.
//
// Where kiln differs from 1.13: 1.13 tries to make a negative constant
// number of copies (it never finishes); kiln makes none, as the loop would
// run none.
//
// Which loops of a non-constant trip count are unrolled by 8 is a policy:
// all (1.13's UnrollLoops, the legacy executor's), none (1.13's
// UnrollConstantLoops, the profiling executor's), or only those whose body
// computes on tensors (the executor's choice: for a body of scalar work the
// counter arithmetic the copies need costs the interpreter more than the
// loop it saves, about 1.5x on `s += (i * i) % 7`; tensor bodies gain
// common subexpressions and, later, fusion across iterations).
//
// Assumes an SSA graph; keeps its results. Returns whether a loop changed.
#include <memory>

namespace kiln {

class Graph;

enum class UnrollPolicy {
  AllLoops,
  ConstantTripCounts,
  ConstantTripCountsOrTensorBodies,
};

bool unrollLoops(const std::shared_ptr<Graph>& graph, UnrollPolicy policy = UnrollPolicy::AllLoops);

}  // namespace kiln
