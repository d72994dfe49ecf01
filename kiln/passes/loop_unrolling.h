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
// Assumes an SSA graph; keeps its results. Returns whether a loop changed.
#include <memory>

namespace kiln {

class Graph;

bool unrollLoops(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
