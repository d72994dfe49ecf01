#include "kiln/autograd/function.h"

#include <atomic>

#include "kiln/ops/prim_ops.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"
#include "kiln/util/error.h"

namespace kiln::autograd {

namespace {
std::atomic<uint64_t> next_sequence_nr{0};
}  // namespace

Node::Node(uint32_t num_inputs)
    : num_inputs_(num_inputs), sequence_nr_(next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

AccumulateGrad::AccumulateGrad(Tensor variable) : Node(1), variable_(std::move(variable)) {}

TensorList AccumulateGrad::apply(TensorList&& grads) {
  Tensor g = std::move(grads.at(0));
  AutogradMeta* meta = autogradMeta(variable_);
  if (!g.defined() || !meta) return {};
  for (const TensorHook& hook : meta->hooks_) {
    Tensor replaced = hook(g);
    if (replaced.defined()) g = std::move(replaced);
  }
  Tensor& slot = *meta->grad_;
  if (!slot.defined()) {
    // The engine's buffer owns a fresh sum: keep it; anything shared is
    // copied, so that later in-place accumulation touches no one else.
    if (g.useCount() == 1 && g.isContiguous() && !isGradEnabled()) {
      slot = std::move(g);
    } else if (isGradEnabled() && requiresGrad(g)) {
      // create_graph: .grad keeps its history (a recorded clone).
      slot = callRecorded("aten::clone", "", {IValue(g), IValue(std::nullopt)});
    } else {
      slot = clone(g);
      if (!slot.isContiguous()) slot = contiguous(slot);
    }
  } else if (!isGradEnabled()) {
    add_(slot, g);
  } else {
    slot = callRecorded("aten::add", "Tensor", {IValue(slot), IValue(g), IValue(Scalar(1))});
  }
  return {};
}

SavedVariable::SavedVariable(const Tensor& t, bool is_output, uint32_t output_nr)
    : defined_(t.defined()), was_output_(is_output), output_nr_(output_nr) {
  if (!defined_) return;
  version_ = t.storage()->version();
  // A result keeps only its data: its grad_fn is the node saving it.
  data_ = is_output ? detach(t) : t;
}

void SavedVariable::reset() {
  data_ = Tensor();
  released_ = true;
}

void throwFreedGraph() {
  KILN_ERROR(
      "Trying to backward through the graph a second time (or directly access saved tensors after they have "
      "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
      "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
      "you need to access saved tensors after calling backward.");
}

Tensor SavedVariable::unpack(const Node& saved_for) const {
  if (!defined_) return Tensor();
  if (released_) throwFreedGraph();
  uint32_t current = data_.storage()->version();
  if (current != version_) {
    std::string message =
        "one of the variables needed for gradient computation has been modified by an inplace operation: [" +
        torchTypeName(data_) + " " + shapeString(data_.sizes()) + "]";
    if (was_output_) {
      message += ", which is output " + std::to_string(output_nr_) + " of " + saved_for.name() + ",";
    } else if (std::shared_ptr<Node> fn = gradFn(data_)) {
      message += ", which is output " + std::to_string(outputNr(data_)) + " of " + fn->name() + ",";
    }
    message += " is at version " + std::to_string(current) + "; expected version " + std::to_string(version_) +
               " instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
               "with torch.autograd.set_detect_anomaly(True).";
    KILN_ERROR(message);
  }
  // With create_graph the formulas record: a result gets back its history
  // (the node saving it) so that second derivatives flow through it.
  if (was_output_ && isGradEnabled() && (isFloatingType(data_.dtype()) || isComplexType(data_.dtype()))) {
    Tensor with_history = detach(data_);
    setGradFn(with_history, const_cast<Node&>(saved_for).shared_from_this(), output_nr_);
    return with_history;
  }
  return data_;
}

// `grad` summed over the dims it was broadcast along, to `sizes`. With
// create_graph (grad mode on in backward) through the recorded operators.
Tensor sumToSize(const Tensor& grad, IntArrayRef sizes) {
  if (grad.sizes() == sizes) return grad;
  int64_t lead = grad.dim() - static_cast<int64_t>(sizes.size());
  KILN_CHECK(lead >= 0, "_grad_sum_to_size: size has more dimensions than the gradient");
  DimVector dims;
  for (int64_t d = 0; d < grad.dim(); ++d) {
    if (d < lead || (sizes[d - lead] == 1 && grad.size(d) != 1)) dims.push_back(d);
  }
  if (isGradEnabled() && requiresGrad(grad)) {
    Tensor reduced = grad;
    if (!dims.empty()) {
      reduced = callRecorded("aten::sum", "dim_IntList",
                             {IValue(grad), IValue(IntArrayRef(dims)), IValue(true), IValue(std::nullopt)});
    }
    return callRecorded("aten::reshape", "", {IValue(reduced), IValue(sizes)});
  }
  Tensor reduced = dims.empty() ? grad : sum(grad, IntArrayRef(dims), /*keepdim=*/true);
  return reshape(reduced, sizes);
}

}  // namespace kiln::autograd
