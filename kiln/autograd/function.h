#pragma once
// The nodes of the backward graph. Each op recorded with inputs that require
// grad makes one Node (its grad_fn) whose edges lead to the grad_fns (or the
// AccumulateGrads) of those inputs; the engine (engine.h) runs them in
// dependency order.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/autograd/variable.h"
#include "kiln/core/ivalue.h"

namespace kiln::autograd {

using TensorList = std::vector<Tensor>;

// What a gradient must look like: a missing one is zeros of this.
struct TensorGeometry {
  DimVector sizes;
  ScalarType dtype = ScalarType::Float;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  explicit Node(uint32_t num_inputs);
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // torch's class name: MulBackward0, AccumulateGrad, ...
  virtual std::string name() const = 0;
  // Gradients of the forward outputs (undefined: none flowed) in, gradients
  // of the forward inputs (one per next edge) out.
  virtual TensorList apply(TensorList&& grads) = 0;
  // Drops what was saved for backward (backward without retain_graph).
  virtual void releaseVariables() {}
  // Whether apply must run on the thread that called backward (it may run
  // Python, and that thread holds the GIL) rather than on the thread pool.
  virtual bool runsOnCallingThread() const { return false; }

  uint32_t numInputs() const { return num_inputs_; }
  // The recording knows the count only after the op ran.
  void setNumInputs(uint32_t n) { num_inputs_ = n; }
  const std::vector<Edge>& nextEdges() const { return next_edges_; }
  std::vector<Edge>& nextEdges() { return next_edges_; }
  // Later nodes run first when several are ready (torch's sequence numbers).
  uint64_t sequenceNr() const { return sequence_nr_; }
  // Hooks of the tensors this node made (their output_nr is the input here).
  std::vector<std::pair<uint32_t, TensorHook>>& preHooks() { return pre_hooks_; }
  std::vector<TensorGeometry>& inputGeometry() { return input_geometry_; }

 private:
  uint32_t num_inputs_;
  uint64_t sequence_nr_;
  std::vector<Edge> next_edges_;
  std::vector<std::pair<uint32_t, TensorHook>> pre_hooks_;
  std::vector<TensorGeometry> input_geometry_;
};

// A leaf's sink: runs the leaf's hooks and adds the gradient into `.grad`.
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
  TensorList apply(TensorList&& grads) override;
  bool runsOnCallingThread() const override { return true; }  // tensor hooks may be Python
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

// A tensor kept for backward with the version it had then: using it after
// an in-place change raises torch's error.
class SavedVariable {
 public:
  SavedVariable() = default;
  // `is_output`: the tensor is a result of the node that saves it; it is
  // kept without its history so that the node does not own itself.
  SavedVariable(const Tensor& t, bool is_output, uint32_t output_nr = 0);
  // The tensor; `saved_for` names the node in the error messages.
  Tensor unpack(const Node& saved_for) const;
  void reset();
  bool defined() const { return defined_; }

 private:
  Tensor data_;
  bool defined_ = false;
  bool was_output_ = false;
  bool released_ = false;
  uint32_t output_nr_ = 0;
  uint32_t version_ = 0;
};

// Runs an operator through dispatch, so that it records when grad mode is
// on: what backward itself computes with create_graph (record.cpp).
Tensor callRecorded(const char* name, const char* overload, Stack stack);

// `grad` summed over the dims it was broadcast along, to `sizes` (the
// input's sizes): eager backward's reduction of a broadcast input's
// gradient and aten::_grad_sum_to_size's kernel. With create_graph (grad
// mode on in backward) through the recorded operators.
Tensor sumToSize(const Tensor& grad, IntArrayRef sizes);

// Raised when a graph is used after its saved values were freed.
[[noreturn]] void throwFreedGraph();

}  // namespace kiln::autograd
