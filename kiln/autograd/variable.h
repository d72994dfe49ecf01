#pragma once
// Autograd's record of a tensor (AutogradMeta, hung on TensorImpl through
// the tensor layer's AutogradMetaInterface) and the accessors the engine,
// the recording and the Python bindings use. A leaf is a tensor without a
// grad_fn; one that requires grad accumulates its gradient into `.grad`
// through an AccumulateGrad node that the graph's edges point to.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/tensor/tensor.h"

namespace kiln::autograd {

class Node;

// Where a gradient goes: input `input_nr` of `function`. Invalid (null
// function) for an input that does not require grad.
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool valid() const { return function != nullptr; }
};

// A hook on a tensor's gradient: returns a replacement, or an undefined
// tensor to keep the gradient as it is.
using TensorHook = std::function<Tensor(const Tensor&)>;

class AutogradMeta final : public AutogradMetaInterface {
 public:
  bool requiresGrad() const override { return requires_grad_ || grad_fn_ != nullptr; }
  // Turning it off detaches (what detach_ and freezing mean by it); the
  // Python setter refuses that on non-leaves first, as torch does.
  void setRequiresGrad(bool value) override {
    requires_grad_ = value;
    if (!value) {
      grad_fn_.reset();
      output_nr_ = 0;
    }
  }

  bool requires_grad_ = false;
  // The gradient accumulated by backward (leaves) or kept by retain_grad
  // (non-leaves); shared with the hook that writes it, so that the graph
  // never owns the tensor.
  std::shared_ptr<Tensor> grad_ = std::make_shared<Tensor>();
  std::shared_ptr<Node> grad_fn_;
  // A leaf's AccumulateGrad, while some graph holds it.
  std::weak_ptr<Node> grad_accumulator_;
  uint32_t output_nr_ = 0;
  bool retains_grad_ = false;
  // A leaf's hooks (AccumulateGrad runs them); a non-leaf's are on its grad_fn.
  std::vector<TensorHook> hooks_;
  // A view made by a recorded view op: the base it shares memory with (the
  // root of a chain of views), for in-place writes through the view
  // (torch's CopySlices); and, for a view among several results (unbind,
  // split, chunk), which output of which node it is, for torch's error.
  Tensor view_base_;
  bool multi_output_view_ = false;
  std::string view_creator_;
  uint32_t view_output_nr_ = 0;
};

// The tensor's record, or null.
AutogradMeta* autogradMeta(const Tensor& t);
// The tensor's record, made when missing.
AutogradMeta& materializeAutogradMeta(const Tensor& t);

inline bool requiresGrad(const Tensor& t) { return t.defined() && t.requiresGrad(); }
std::shared_ptr<Node> gradFn(const Tensor& t);
bool isLeaf(const Tensor& t);
uint32_t outputNr(const Tensor& t);
// The accumulated (or retained) gradient; undefined when none.
Tensor grad(const Tensor& t);
void setGrad(const Tensor& t, Tensor grad);
// Makes `t` the output `output_nr` of `grad_fn` (a null grad_fn makes it a leaf).
void setGradFn(const Tensor& t, std::shared_ptr<Node> grad_fn, uint32_t output_nr);
// A leaf's AccumulateGrad (made on first use); null when `t` does not require grad.
std::shared_ptr<Node> gradAccumulator(const Tensor& t);
// Where `t`'s gradient goes: its grad_fn's input, or its accumulator.
Edge gradientEdge(const Tensor& t);
// The same data, without history (shares storage and version counter).
Tensor detach(const Tensor& t);
// Makes `t` a leaf that does not require grad (detach_); errors on views of
// tensors that require grad are torch's business and not modelled.
void detachInPlace(const Tensor& t);
// torch's requires_grad_ / `.requires_grad =`: leaves only.
void setRequiresGrad(const Tensor& t, bool value);
void retainGrad(const Tensor& t);
bool retainsGrad(const Tensor& t);
// Registers a hook run on `t`'s gradient before it is used.
void registerHook(const Tensor& t, TensorHook hook);

// torch's name of a tensor's type in messages: "torch.FloatTensor".
std::string torchTypeName(const Tensor& t);

}  // namespace kiln::autograd
