#pragma once
// Graph autodiff (1.13's autodiff.cpp and DifferentiableGraphOp): the
// symbolic differentiation of a prim::DifferentiableGraph's subgraph into a
// forward graph `f` and a backward graph `df`, and the executor pass that
// forms those groups in plans whose inputs require grad.
//
// differentiate(): `f` is the subgraph with extra outputs, the values `df`
// reads (intermediates and sizes of broadcast inputs); `df` takes the
// gradients of f's real outputs that require grad, then the captured f
// inputs, then the captured f outputs, and returns the gradients of f's
// inputs that require grad. Each node's gradient is its operator's
// derivative formula graph (formula.h, the one eager backward runs)
// inlined; gradients of inputs the op broadcast are summed back with
// aten::_grad_sum_to_size, and gradients meeting at one value are added.
//
// The DifferentiableGraphOp (registered for prim::DifferentiableGraph) runs
// `f` on detached inputs and makes one autograd node of `df` whose edges are
// the inputs' gradient edges. Backward with create_graph (grad mode on in
// the engine) runs df_with_temporaries, unfused and recorded, as torch runs
// df: fused kernels have no derivatives, their decomposition has.
#include <cstdint>
#include <memory>
#include <vector>

namespace kiln {
class Graph;
class Node;
}  // namespace kiln

namespace kiln::autograd {

struct Gradient {
  std::shared_ptr<Graph> f;
  std::shared_ptr<Graph> df;
  size_t f_real_outputs = 0;
  std::vector<int64_t> df_input_vjps;              // f outputs whose gradients df takes, in order
  std::vector<int64_t> df_input_captured_inputs;   // f inputs df reads, in order after the vjps
  std::vector<int64_t> df_input_captured_outputs;  // f outputs df reads, after those
  std::vector<int64_t> df_output_vjps;             // f inputs whose gradients df returns
  // df as backward with create_graph runs it (unoptimized, recorded): it
  // takes, after the vjps, the gradients of the f outputs listed here (the
  // temporaries df reads, which then carry history back into the op), then
  // the same captured values. What torch's df is.
  std::shared_ptr<Graph> df_with_temporaries;
  std::vector<int64_t> df_input_temporary_vjps;
};

// Differentiates `graph` (straight-line code of differentiable nodes, as
// createAutodiffSubgraphs makes). Does not change `graph`.
Gradient differentiate(const std::shared_ptr<Graph>& graph);

// Stores `gradient` on a prim::DifferentiableGraph node (Subgraph = f,
// ReverseSubgraph = df and the index attributes).
void packGradient(const Gradient& gradient, kiln::Node* node);

// The executor's Differentiation stage: groups the plan's differentiable
// nodes, differentiates each group, and runs `optimize_inside` (the
// non-differentiable optimizations and fusion) on each f and df.
void createAndDifferentiateSubgraphs(const std::shared_ptr<Graph>& graph,
                                     void (*optimize_inside)(const std::shared_ptr<Graph>&));

}  // namespace kiln::autograd
