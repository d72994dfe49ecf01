#pragma once
// Shape and type propagation (seed 001, "Graph Executor": "it propagates the
// input ranks, dtypes, devices, and requires_grad information to the rest of
// the graph"), PyTorch 1.13's legacy shape analysis made sound.
//
// Starting from the graph inputs' types (which the executor specializes:
// `Float(*, *, requires_grad=0, device=cpu)`, or complete types with sizes
// and strides), it refines the TensorType of every tensor value in the graph:
//   - a node whose tensor inputs all have complete types and whose other
//     inputs are known runs on zero-filled stand-ins of those types, and its
//     outputs take the complete types of the results (unless the op is
//     random, has effects, depends on tensor values, or would be expensive);
//   - otherwise per-operator formulas (keyed by schema) derive dtype, rank
//     and the sizes they can (broadcasting, reductions, views, matrix
//     products, factories with constant sizes, conversions, ...), and
//     contiguous strides for fresh outputs of contiguous inputs;
//   - prim::If outputs merge both branches (a branch that always raises does
//     not count), loop-carried values are merged with the body's outputs
//     until they are stable; tuples carry their elements' types; lists of
//     tensors that are never written are followed through
//     prim::ListConstruct / ListUnpack / __getitem__ / cat; calls keep their
//     declared types.
//   - requires_grad: an output requires grad when a tensor input does and its
//     dtype is floating point (factories, detach and integral or bool results
//     never do); device is cpu.
// Values that may alias a tensor an op resizes (out= forms, squeeze_,
// transpose_, ...) keep only dtype and device; values that may alias a
// tensor an in-place op makes require grad lose requires_grad.
//
// Differs from 1.13 where 1.13 is wrong or weaker: it never inserts
// aten::expand nodes, integral inputs of true division and of float-only
// ops give float results, integral results never require grad, mm of
// mismatched shapes is not refined, and many ops 1.13 leaves as `Tensor`
// (reductions over dims, views with sizes, indexing, factories) are refined.
//
// Assumes an SSA graph. Changes only value types: a type it sets is always
// a subtype of the declared one and true of every value the program can
// produce there.
#include <memory>

namespace kiln {

class Graph;

void propagateShapes(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
