#pragma once
// Composite kernels: operators that torch 1.13 implements as compositions
// of other operators (dropout in training, lstm, gru, rnn_tanh, the cells)
// have fused kernels of their own in kiln, and no derivative formula.
// When grad mode is on and an argument requires grad, such a kernel runs its
// decomposition instead, each inner operator called through runOperator,
// so that autograd records it: the results carry the grad_fns of the inner
// operators (kiln/autograd/record.cpp keeps them), as torch's do. Without
// gradients the fused kernel runs.
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "kiln/core/dispatch_hook.h"
#include "kiln/ops/prim_ops.h"

namespace kiln::composite {

// Whether a composite kernel must run its recorded decomposition.
inline bool recording(std::initializer_list<Tensor> tensors) {
  if (!isGradEnabled()) return false;
  for (const Tensor& t : tensors) {
    if (t.defined() && t.requiresGrad()) return true;
  }
  return false;
}

inline bool recording(const std::vector<Tensor>& tensors) {
  if (!isGradEnabled()) return false;
  for (const Tensor& t : tensors) {
    if (t.defined() && t.requiresGrad()) return true;
  }
  return false;
}

// Calls the operator `name.overload` (qualified: "aten::mul", "Tensor")
// through runOperator; its results, in order.
inline Stack call(std::string_view name, std::string_view overload, Stack args) {
  OperatorPtr op = findOperator(Symbol::fromQualString(std::string(name)), overload);
  KILN_INTERNAL_ASSERT(op, "composite kernel: no operator ", name, ".", overload);
  runOperator(*op, args);
  return args;
}

inline Tensor callTensor(std::string_view name, std::string_view overload, Stack args) {
  Stack out = call(name, overload, std::move(args));
  return out.at(0).toTensor();
}

}  // namespace kiln::composite
