#pragma once
// An operator's derivative, as its declaration gives it (`.derivative(...)`
// in op_registration.h), in the spirit of PyTorch's derivatives.yaml: for
// each differentiable input, one TorchScript expression of its gradient.
// Names in a formula: the schema's arguments, `grad` (the gradient of the
// first result), `grads` (of a Tensor[] result), and the results (`result`
// for a single one, else the schema's return names or `result0`, `result1`,
// ...). kiln/autograd compiles the formulas with the frontend, once per
// operator; eager backward runs them, and graph autodiff inlines them. A
// gradient whose shape differs from its input's (broadcasting) is summed to
// the input's size by the autograd layer, so formulas leave that out.
#include <string>
#include <utility>
#include <vector>

namespace kiln {

struct DerivativeSpec {
  // (input name, gradient expression), in the order declared.
  std::vector<std::pair<std::string, std::string>> formulas;
  // Results that carry no gradient (the indices of max.dim): they never
  // require grad and get no grad_fn.
  std::vector<std::string> non_differentiable_outputs;
  // Set (to torch's reason) for an operator torch 1.13 cannot differentiate
  // either: it has no formulas, and backward through it raises torch's
  // "derivative for aten::name is not implemented".
  std::string not_differentiable;
};

}  // namespace kiln
