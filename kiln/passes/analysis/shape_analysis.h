#pragma once
// Shape and type propagation (the executor propagates the specialized
// input ranks, dtypes, devices and requires_grad information to the rest of
// the graph), PyTorch 1.13's legacy shape analysis made sound.
//
// Starting from the graph inputs' types (which the executor specializes:
// `Float(*, *, requires_grad=0, device=cpu)`, or complete types with sizes
// and strides), it refines the TensorType of every tensor value in the graph:
//   - a node whose tensor inputs all have complete types and whose other
//     inputs are known runs on zero-filled stand-ins of those types (then
//     on ones, if zeros make it raise), and its outputs take the complete
//     types of the results; not when the op is random, has effects, depends
//     on tensor values (nonzero, masked_select, boolean indexing, ...) or
//     would be expensive (matrix products, big inputs). An op that raises
//     on both leaves its outputs unrefined: the program raises there too.
//   - otherwise per-operator formulas (keyed by schema) derive dtype (type
//     promotion as the kernels do it), rank and the sizes they can
//     (broadcasting, reductions, views, matrix products, joins and splits,
//     factories with known sizes, conversions), and contiguous strides for
//     fresh results of contiguous inputs.
//   - prim::If outputs merge both branches (a branch that always raises does
//     not count); loop-carried types are merged with the body's outputs until
//     stable; tuples carry their elements' types; lists of tensors and of
//     ints that nothing writes to are followed through prim::ListConstruct,
//     ListUnpack, __getitem__, cat, stack, view sizes, ...; int values that
//     follow from types (x.size(0), x.dim()) are used where ops need them.
//     Calls keep their declared output types.
//   - requires_grad: an output requires grad when a tensor input does and its
//     dtype is floating point (factories, detach and integral or bool results
//     never do; x.to(y) and x.view_as(y) only look at x); device is cpu.
// Types are flow-insensitive, so mutation limits them: values that may alias
// a tensor an op resizes (out= forms, squeeze_, transpose_, ... and calls of
// functions that do) keep only dtype and device; values that may alias a
// tensor an in-place op writes something requiring grad into lose
// requires_grad. Graph inputs are never wrapped numbers (the executor gets
// them from Python or from a caller, and does not specialize on it).
//
// Differs from 1.13 where 1.13 is wrong or weaker: it never inserts
// aten::expand nodes; integral inputs of true division and of float-only ops
// give float results; integral results never require grad; ops that raise
// on their input types are not refined; and many ops 1.13 leaves as `Tensor`
// (reductions over dims, conversions, views with sizes, indexing, factories)
// are refined.
//
// Assumes an SSA graph. Changes only value types: a type it sets is always a
// refinement of the declared one and true of every value the program can
// produce there.
#include <memory>

namespace kiln {

class Graph;

void propagateShapes(const std::shared_ptr<Graph>& graph);

}  // namespace kiln
