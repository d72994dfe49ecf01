#include "kiln/autograd/variable.h"

#include "kiln/autograd/function.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/util/error.h"

namespace kiln::autograd {

AutogradMeta* autogradMeta(const Tensor& t) {
  if (!t.defined()) return nullptr;
  // Every record is an AutogradMeta once kiln/autograd is loaded (dispatch.cpp installs the factory).
  return static_cast<AutogradMeta*>(t.impl()->autogradMeta());
}

AutogradMeta& materializeAutogradMeta(const Tensor& t) {
  KILN_INTERNAL_ASSERT(t.defined(), "autograd record of an undefined tensor");
  if (!t.impl()->autogradMeta()) t.impl()->setAutogradMeta(std::make_unique<AutogradMeta>());
  return *autogradMeta(t);
}

std::shared_ptr<Node> gradFn(const Tensor& t) {
  AutogradMeta* meta = autogradMeta(t);
  return meta ? meta->grad_fn_ : nullptr;
}

bool isLeaf(const Tensor& t) {
  AutogradMeta* meta = autogradMeta(t);
  return !meta || !meta->grad_fn_;
}

uint32_t outputNr(const Tensor& t) {
  AutogradMeta* meta = autogradMeta(t);
  return meta ? meta->output_nr_ : 0;
}

Tensor grad(const Tensor& t) {
  AutogradMeta* meta = autogradMeta(t);
  return meta ? *meta->grad_ : Tensor();
}

void setGrad(const Tensor& t, Tensor grad) {
  if (!grad.defined() && !autogradMeta(t)) return;
  if (grad.defined()) {
    KILN_CHECK(grad.dtype() == t.dtype(), "assigned grad has data of a different type");
    KILN_CHECK(grad.sizes() == t.sizes(), "assigned grad has data of a different size");
  }
  *materializeAutogradMeta(t).grad_ = std::move(grad);
}

void setGradFn(const Tensor& t, std::shared_ptr<Node> grad_fn, uint32_t output_nr) {
  AutogradMeta& meta = materializeAutogradMeta(t);
  meta.grad_fn_ = std::move(grad_fn);
  meta.output_nr_ = output_nr;
  if (meta.grad_fn_) {
    meta.requires_grad_ = false;
    meta.grad_accumulator_.reset();
  }
}

std::shared_ptr<Node> gradAccumulator(const Tensor& t) {
  AutogradMeta* meta = autogradMeta(t);
  if (!meta || meta->grad_fn_ || !meta->requires_grad_) return nullptr;
  if (auto existing = meta->grad_accumulator_.lock()) return existing;
  auto made = std::make_shared<AccumulateGrad>(t);
  meta->grad_accumulator_ = made;
  return made;
}

Edge gradientEdge(const Tensor& t) {
  AutogradMeta* meta = autogradMeta(t);
  if (!meta) return {};
  if (meta->grad_fn_) return {meta->grad_fn_, meta->output_nr_};
  return {gradAccumulator(t), 0};
}

Tensor detach(const Tensor& t) {
  // A view of the same memory: shares the storage, hence the version counter, as torch's.
  return makeView(t, t.sizes(), t.strides(), t.storageOffset());
}

void detachInPlace(const Tensor& t) {
  AutogradMeta* meta = autogradMeta(t);
  if (!meta) return;
  meta->grad_fn_.reset();
  meta->requires_grad_ = false;
  meta->output_nr_ = 0;
  meta->grad_accumulator_.reset();
}

void setRequiresGrad(const Tensor& t, bool value) {
  if (!isLeaf(t)) {
    KILN_CHECK(value,
               "you can only change requires_grad flags of leaf variables. If you want to use a computed "
               "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    return;
  }
  KILN_CHECK(!value || isFloatingType(t.dtype()) || isComplexType(t.dtype()),
             "only Tensors of floating point and complex dtype can require gradients");
  if (!value && !autogradMeta(t)) return;
  materializeAutogradMeta(t).requires_grad_ = value;
}

void retainGrad(const Tensor& t) {
  KILN_CHECK(requiresGrad(t), "can't retain_grad on Tensor that has requires_grad=False");
  if (isLeaf(t)) return;  // leaves keep their gradient anyway
  AutogradMeta& meta = materializeAutogradMeta(t);
  if (meta.retains_grad_) return;
  meta.retains_grad_ = true;
  // The hook shares the gradient slot, not the tensor: the graph must not own the tensor.
  std::shared_ptr<Tensor> slot = meta.grad_;
  meta.grad_fn_->preHooks().emplace_back(meta.output_nr_, [slot](const Tensor& g) {
    if (!g.defined()) return Tensor();
    if (!slot->defined()) {
      *slot = clone(g);
    } else {
      *slot = add(*slot, g);
    }
    return Tensor();
  });
}

bool retainsGrad(const Tensor& t) {
  AutogradMeta* meta = autogradMeta(t);
  return meta && meta->retains_grad_ && meta->grad_fn_;
}

void registerHook(const Tensor& t, TensorHook hook) {
  KILN_CHECK(requiresGrad(t), "cannot register a hook on a tensor that doesn't require gradient");
  AutogradMeta& meta = materializeAutogradMeta(t);
  if (meta.grad_fn_) {
    meta.grad_fn_->preHooks().emplace_back(meta.output_nr_, std::move(hook));
  } else {
    meta.hooks_.push_back(std::move(hook));
  }
}

std::string torchTypeName(const Tensor& t) {
  switch (t.dtype()) {
    case ScalarType::Float: return "torch.FloatTensor";
    case ScalarType::Double: return "torch.DoubleTensor";
    case ScalarType::Half: return "torch.HalfTensor";
    case ScalarType::BFloat16: return "torch.BFloat16Tensor";
    case ScalarType::ComplexFloat: return "torch.ComplexFloatTensor";
    case ScalarType::ComplexDouble: return "torch.ComplexDoubleTensor";
    case ScalarType::Long: return "torch.LongTensor";
    case ScalarType::Int: return "torch.IntTensor";
    case ScalarType::Bool: return "torch.BoolTensor";
    default: return "torch.Tensor";
  }
}

}  // namespace kiln::autograd
