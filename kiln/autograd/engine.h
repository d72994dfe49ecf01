#pragma once
// The backward pass: from the gradients of some outputs, runs the grad_fn
// nodes in dependency order (a node runs once every node that feeds it has
// run), summing the gradients that meet at one input, and either adds the
// results into the leaves' .grad (backward) or returns the gradients of
// given inputs (grad). Saved values are freed unless retain_graph.
#include <optional>
#include <vector>

#include "kiln/autograd/function.h"

namespace kiln::autograd {

// torch.autograd.backward: `grad_outputs` may hold undefined tensors for
// scalar outputs (a gradient of 1). `inputs`, when not empty, limits
// accumulation to those leaves.
void backward(const TensorList& outputs, const TensorList& grad_outputs, std::optional<bool> retain_graph,
              bool create_graph, const TensorList& inputs = {});

// torch.autograd.grad: the gradients of `outputs` with respect to `inputs`
// (undefined for an unused input when `allow_unused`).
TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                std::optional<bool> retain_graph, bool create_graph, bool allow_unused);

}  // namespace kiln::autograd
