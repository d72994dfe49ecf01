#pragma once
// Private to the peephole pass (peephole.cpp and the peephole_*.cpp files
// beside it): the stages peepholeOptimize runs after its per-node rewrites,
// as PyTorch 1.13 splits them, and the small questions they all ask about
// values. Each stage returns whether it changed the graph and leaves dead
// code for the caller's final dead code elimination.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "kiln/ir/graph.h"

namespace kiln {

class AliasDb;

namespace detail {

// Rewrites on ints, bools, None and optionals (1.13's peephole_non_tensor).
bool peepholeOptimizeNonTensor(const std::shared_ptr<Graph>& graph);
// `len` and `__getitem__` of dicts built in the graph and never written.
bool peepholeOptimizeDictIdioms(const std::shared_ptr<Graph>& graph);
// Rewrites that make one value stand for another, judged by AliasDb: `x + 0`,
// `x * 1`, `dim(conv(x))`.
bool peepholeOptimizeAliasSensitive(const std::shared_ptr<Graph>& graph, bool shape_peepholes);
// `cat([a, cat([b, c], d)], d)` -> `cat([a, b, c], d)` (1.13's CombineConcats).
bool combineConcats(const std::shared_ptr<Graph>& graph);

// Whether a node of `block`, or of a block nested in it, satisfies `pred`:
// stages look for work before building an AliasDb.
bool anyNodeIn(const Block* block, const std::function<bool(const Node*)>& pred);
// The value of an int constant.
std::optional<int64_t> constantInt(const Value* v);
// Whether `v` is None whenever the graph runs (1.13's Value::mustBeNone).
bool mustBeNone(const Value* v);
// Whether `v` can never be None. Unlike 1.13, an `Any` may be None.
bool mustNotBeNone(const Value* v);

}  // namespace detail
}  // namespace kiln
