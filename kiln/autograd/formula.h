#pragma once
// An operator's derivative formulas (its description's DerivativeSpec)
// compiled with kiln's own frontend into one graph per set of needed input
// gradients: inputs are the output gradient(s) and the arguments and
// results the formulas name, outputs the needed gradients. What the graph
// reads is exactly what the forward must save. Eager backward runs the
// graph's Code; graph autodiff will inline the same graph.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/core/operator.h"

namespace kiln {
class Code;
class Graph;
struct DerivativeSpec;
}  // namespace kiln

namespace kiln::autograd {

// What the backward graph of one needed-gradient set takes, in this order.
struct FormulaInput {
  enum class Kind { Grad, Grads, Argument, Result } kind;
  size_t index = 0;  // the argument's or result's position
};

struct CompiledFormula {
  std::shared_ptr<Graph> graph;
  std::shared_ptr<const Code> code;
  // The same graph with every tensor operator called through runOperator,
  // so that it records under grad mode: backward with create_graph runs it.
  std::shared_ptr<const Code> recording_code;
  std::vector<FormulaInput> inputs;
  // Per input: the graph reads only its geometry (sizes, dim, numel, dtype),
  // so the forward keeps a stand-in of that shape instead of the tensor.
  std::vector<bool> geometry_only;
  // The formulas (indexes into OpDerivative::formulas) it returns, in order.
  std::vector<size_t> outputs;
};

class OpDerivative {
 public:
  // (argument index, is a Tensor[]) of each formula, in declaration order.
  // One expression may give several inputs' gradients at once, as in
  // derivatives.yaml's "input, weight, bias: native_batch_norm_backward(...,
  // grad_input_mask)": its inputs' formulas share `group` and the expression,
  // which returns a tuple (element `element` is this input's gradient) and
  // may read `grad_input_mask`, the List[bool] of which of them are needed.
  struct Formula {
    static constexpr size_t kNoGroup = static_cast<size_t>(-1);
    size_t argument;
    bool is_list;
    std::string expression;
    size_t group = kNoGroup;
    size_t element = 0;
  };
  OpDerivative(const Operator& op, const DerivativeSpec& spec, const Operator& formula_owner);

  const std::vector<Formula>& formulas() const { return formulas_; }
  // torch's grad_fn class name: MulBackward0.
  const std::string& nodeName() const { return node_name_; }
  // Whether result `i` carries gradients (floating results not marked non-differentiable).
  bool resultDifferentiable(size_t i) const { return i < differentiable_results_.size() && differentiable_results_[i]; }
  // The graph computing the formulas whose bit is set in `needed`.
  const CompiledFormula& compiled(uint64_t needed) const;

 private:
  std::shared_ptr<CompiledFormula> compile(uint64_t needed) const;

  const Operator& op_;
  // The operator that declares the formulas: `op_` itself, or for an alias
  // or an in-place form the operator it reuses them from. Formulas name
  // its arguments, which have the same positions as op_'s.
  const Operator& formula_owner_;
  std::vector<Formula> formulas_;
  std::vector<bool> differentiable_results_;
  std::string node_name_;
  mutable std::mutex mutex_;
  mutable std::vector<std::pair<uint64_t, std::shared_ptr<CompiledFormula>>> cache_;
};

// The derivative of `op` (its own formulas, or for an in-place `name_` those
// of `name` with the same overload), or null when it has none.
const OpDerivative* derivativeFor(const Operator& op);
// Why torch 1.13 cannot differentiate `op` either (its declaration's
// notDifferentiable), or empty.
std::string notDifferentiableReason(const Operator& op);

}  // namespace kiln::autograd
