// aten:: registrations of the loss functions, with PyTorch 1.13's schemas.
// `reduction` is torch's enum: 0 none, 1 mean, 2 sum.
//
// Derivatives: where torch 1.13 has a backward kernel (mse_loss_backward,
// nll_loss_backward, ...) kiln registers one under the same name and schema
// and the formula calls it; the losses torch composes from other ops
// (l1_loss, kl_div, cross_entropy_loss, nll_loss_nd, the logits form of
// binary cross entropy) have formulas written with the ops torch's
// composition differentiates through, so the gradients are torch's.
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/loss.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using shapes::Args;
using shapes::contiguousOut;
using shapes::OutputFacts;
using Out = std::vector<OutputFacts>;
using Opt = std::optional<Tensor>;

std::optional<ScalarType> dtypeOf(const Args& a, const char* name) {
  const TensorType* t = a.tensor(name);
  return t ? t->scalarType() : std::nullopt;
}

// self's dtype promoted with target's when both are known.
std::optional<ScalarType> promotedDtype(const Args& a) {
  std::optional<ScalarType> s = dtypeOf(a, "self"), t = dtypeOf(a, "target");
  if (!s || !t) return std::nullopt;
  return promoteTypes(*s, *t);
}

// Reduced: a 0-dim result; none: `unreduced` (unknown when not given).
VaryingShape reducedSizes(const Args& a, VaryingShape unreduced) {
  std::optional<int64_t> reduction = a.knownInt("reduction");
  if (reduction && (*reduction == 1 || *reduction == 2)) return VaryingShape(std::vector<std::optional<int64_t>>{});
  if (reduction && *reduction == 0) return unreduced;
  return VaryingShape();
}

// Pointwise losses: the broadcast of self and target when unreduced (here
// only when the two are known to agree).
Out pointwiseLossRule(const Args& a) {
  const TensorType* s = a.tensor("self");
  const TensorType* t = a.tensor("target");
  VaryingShape unreduced = s && t && s->sizes() == t->sizes() ? s->sizes() : VaryingShape();
  return {contiguousOut(promotedDtype(a), reducedSizes(a, unreduced))};
}

// huber_loss keeps self's dtype.
Out huberLossRule(const Args& a) {
  Out out = pointwiseLossRule(a);
  out[0].tensor.dtype = dtypeOf(a, "self");
  return out;
}

// Losses whose dtype is self's (nll, cross entropy, binary cross entropy).
Out selfDtypeLossRule(const Args& a) { return {contiguousOut(dtypeOf(a, "self"), reducedSizes(a, VaryingShape()))}; }

// nll_loss_forward / nll_loss2d_forward: (output, 0-dim total_weight).
Out nllForwardRule(const Args& a) {
  return {contiguousOut(dtypeOf(a, "self"), reducedSizes(a, VaryingShape())),
          contiguousOut(dtypeOf(a, "self"), VaryingShape(std::vector<std::optional<int64_t>>{}))};
}

std::tuple<Tensor, Tensor> writeTwo(const std::tuple<Tensor, Tensor>& r, Tensor a, Tensor b, const char* op) {
  writeOut(a, std::get<0>(r), op);
  writeOut(b, std::get<1>(r), op);
  return {a, b};
}

// --- backward kernels (torch 1.13's, same formulas and evaluation order) ---------------------

enum : int64_t { kNone = 0, kMean = 1, kSum = 2 };

Tensor wrapped(double v) { return scalarToTensor(Scalar(v)); }

// 1/numel for a mean, else 1: the factor each element's gradient carries. As
// in torch, numel is the first input's (the broadcast's only when that input
// is the larger one: torch.nn.functional broadcasts before calling the op).
double reductionNorm(int64_t reduction, int64_t numel) {
  return reduction == kMean ? 1.0 / static_cast<double>(numel) : 1.0;
}

Tensor mseLossBackward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction) {
  const double norm = 2.0 * reductionNorm(reduction, self.numel());
  return mul(mul(sub(self, target), wrapped(norm)), grad);
}

// x = self - target; -norm * grad below -beta, norm * grad above beta, norm * x * grad / beta between.
Tensor smoothL1LossBackward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction,
                            double beta) {
  const double norm = reductionNorm(reduction, self.numel());
  const Tensor x = sub(self, target);
  const Tensor g = mul(grad, wrapped(norm));
  const Tensor inner = beta == 0 ? mul(x, wrapped(0.0)) : div(mul(mul(x, wrapped(norm)), grad), wrapped(beta));
  return where(le(x, wrapped(-beta)), neg(g), where(ge(x, wrapped(beta)), g, inner));
}

Tensor huberLossBackward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction,
                         double delta) {
  const double norm = reductionNorm(reduction, self.numel());
  const Tensor x = sub(self, target);
  const Tensor g = mul(grad, wrapped(norm * delta));
  return where(le(x, wrapped(-delta)), neg(g), where(ge(x, wrapped(delta)), g, mul(mul(x, wrapped(norm)), grad)));
}

Tensor binaryCrossEntropyBackward(const Tensor& grad, const Tensor& self, const Tensor& target, const Opt& weight,
                                  int64_t reduction) {
  constexpr double kEpsilon = 1e-12;
  const Tensor denominator = clampMin(mul(rsub(self, wrapped(1.0)), self), Scalar(kEpsilon));
  Tensor grad_input = div(mul(grad, sub(self, target)), denominator);
  if (weight && weight->defined()) grad_input = mul(grad_input, *weight);
  if (reduction == kMean) grad_input = div(grad_input, wrapped(static_cast<double>(self.numel())));
  return grad_input;
}

// nll over an (N, C, S) input: grad_input[b, target, k] = -weight[target] * grad (/ total_weight for a mean).
Tensor nllBackwardCore(const Tensor& grad, const Tensor& self, int64_t n, int64_t c, int64_t s, const Tensor& target,
                       const Opt& weight, int64_t reduction, int64_t ignore_index, const Tensor& total_weight) {
  KILN_CHECK(self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double,
             "\"nll_loss_backward\" not implemented for '", scalarTypeShortName(self.dtype()), "'");
  KILN_CHECK(total_weight.numel() == 1,
             "expected total_weight to be a single element tensor, got: ", shapeString(total_weight.sizes()), " (",
             total_weight.numel(), " elements)");
  const int64_t count = n * s;
  KILN_CHECK(target.numel() == count, "size mismatch (got input: ", shapeString(self.sizes()),
             ", target: ", shapeString(target.sizes()), ")");
  if (reduction == kNone) {
    KILN_CHECK(grad.numel() == count, "Expected a tensor of dimension 1 and tensor.size[0] == ", count,
               " but got: dimension ", grad.dim(), " and tensor.size[0] == ", grad.dim() ? grad.size(0) : 1);
  } else {
    KILN_CHECK(grad.numel() == 1, "Expected a single element grad_output tensor, but got: ", shapeString(grad.sizes()));
  }
  const Tensor t = contiguous(to(target, ScalarType::Long));
  const Tensor w = weight && weight->defined() ? contiguous(to(*weight, self.dtype())) : Tensor();
  const Tensor g = contiguous(to(grad, self.dtype()));
  const Tensor tw = to(total_weight, self.dtype());
  Tensor grad_input = zeros(self.sizes(), self.dtype());
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "nll_loss_backward", [&] {
    using T = scalar_t;
    const int64_t* tp = t.data<int64_t>();
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    const T* gp = g.data<T>();
    T* out = grad_input.data<T>();
    const T scaled = reduction == kNone ? T(0) : -(reduction == kMean ? gp[0] / *tw.data<T>() : gp[0]);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t cls = tp[i];
      if (cls == ignore_index) continue;
      KILN_CHECK_INDEX(cls >= 0 && cls < c, "Target ", cls, " is out of bounds.");
      const int64_t b = i / s, k = i % s;
      const T wt = wp ? wp[cls] : T(1);
      out[(b * c + cls) * s + k] = reduction == kNone ? -wt * gp[i] : (wp ? wt * scaled : scaled);
    }
  });
  return grad_input;
}

Tensor nllLossBackward(const Tensor& grad, const Tensor& self, const Tensor& target, const Opt& weight,
                       int64_t reduction, int64_t ignore_index, const Tensor& total_weight) {
  KILN_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  KILN_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const int64_t n = self.dim() == 1 ? 1 : self.size(0);
  return nllBackwardCore(grad, self, n, self.size(-1), 1, target, weight, reduction, ignore_index, total_weight);
}

Tensor nllLoss2dBackward(const Tensor& grad, const Tensor& self, const Tensor& target, const Opt& weight,
                         int64_t reduction, int64_t ignore_index, const Tensor& total_weight) {
  KILN_CHECK(self.dim() == 4,
             "only batches of spatial inputs supported (4D tensors), but got input of dimension: ", self.dim());
  KILN_CHECK(target.dim() == 3,
             "only batches of spatial targets supported (3D tensors) but got targets of dimension: ", target.dim());
  return nllBackwardCore(grad, self, self.size(0), self.size(1), self.size(2) * self.size(3), target, weight, reduction,
                         ignore_index, total_weight);
}

KILN_REGISTER_OPS(
    op("aten::mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction) {
         return mseLossBackward(grad, self, target, reduction);
       })
        .derivative({"grad_output: (torch.mse_loss_backward(grad, self, target, 0) if reduction == 0 else "
                     "torch.mse_loss_backward(grad, self, target, reduction).sum())",
                     "self: 2. * grad * grad_output / (grad.numel() if reduction == 1 else 1)",
                     "target: -2. * grad * grad_output / (grad.numel() if reduction == 1 else 1)"}),
    op("aten::smooth_l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, float beta) -> "
       "Tensor",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
         return smoothL1LossBackward(grad, self, target, reduction, beta);
       })
        .derivative({"grad_output: (torch.smooth_l1_loss_backward(grad, self, target, 0, beta) if reduction == 0 else "
                     "(torch.smooth_l1_loss_backward(torch.ones_like(grad_output), self, target, reduction, beta) * "
                     "grad).sum())",
                     "self: grad * grad_output * ((self - target).abs() < beta) / beta / "
                     "(grad.numel() if reduction == 1 else 1)",
                     "target: -grad * grad_output * ((self - target).abs() < beta) / beta / "
                     "(grad.numel() if reduction == 1 else 1)"}),
    op("aten::huber_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, float delta) -> "
       "Tensor",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
         return huberLossBackward(grad, self, target, reduction, delta);
       })
        .derivative({"grad_output: (torch.huber_loss_backward(grad, self, target, 0, delta) if reduction == 0 else "
                     "(torch.huber_loss_backward(torch.ones_like(grad_output), self, target, reduction, delta) * "
                     "grad).sum())",
                     "self: grad * grad_output * ((self - target).abs() < delta) / "
                     "(grad.numel() if reduction == 1 else 1)",
                     "target: -grad * grad_output * ((self - target).abs() < delta) / "
                     "(grad.numel() if reduction == 1 else 1)"}),
    op("aten::binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, "
       "int reduction=1) -> Tensor",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction) {
         return binaryCrossEntropyBackward(grad, self, target, weight, reduction);
       })
        .derivative(
            {"grad_output: (torch.binary_cross_entropy_backward(grad, self, target, weight, 0) if reduction == 0 else "
             "(torch.binary_cross_entropy_backward(torch.ones_like(grad_output), self, target, weight, "
             "reduction) * grad).sum())",
             "self: [(g * weight if weight is not None else g) / (self.numel() if reduction == 1 else 1) "
             "for g in [(self * self - 2 * self * target + target) / ((self + 1e-12).pow(2) * "
             "(1 - self + 1e-12).pow(2)) * (grad * grad_output)]][0]",
             "target: [(g * weight if weight is not None else g) / (self.numel() if reduction == 1 else 1) "
             "for g in [-(grad * grad_output) / ((self + 1e-12) * (1 - self + 1e-12))]][0]"}),
    op("aten::nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, "
       "int ignore_index, Tensor total_weight) -> Tensor",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction,
          int64_t ignore_index, const Tensor& total_weight) {
         return nllLossBackward(grad, self, target, weight, reduction, ignore_index, total_weight);
       })
        .derivative({"grad_output: torch.nll_loss_forward(grad, target, weight, reduction, ignore_index)[0]",
                     "self: torch.zeros_like(grad)"}),
    op("aten::nll_loss2d_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, "
       "int ignore_index, Tensor total_weight) -> Tensor",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction,
          int64_t ignore_index, const Tensor& total_weight) {
         return nllLoss2dBackward(grad, self, target, weight, reduction, ignore_index, total_weight);
       })
        .derivative({"grad_output: torch.nll_loss2d_forward(grad, target, weight, reduction, ignore_index)[0]",
                     "self: torch.zeros_like(grad)"}),
    // The out= forms torch has for the backward kernels.
    op("aten::mse_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, int reduction, *, "
       "Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction, Tensor out) {
         return writeOut(out, mseLossBackward(grad, self, target, reduction), "mse_loss_backward");
       }),
    op("aten::smooth_l1_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, int reduction, "
       "float beta, *, Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction, double beta, Tensor out) {
         return writeOut(out, smoothL1LossBackward(grad, self, target, reduction, beta), "smooth_l1_loss_backward");
       }),
    op("aten::huber_loss_backward.out(Tensor grad_output, Tensor self, Tensor target, int reduction, float delta, *, "
       "Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction, double delta, Tensor out) {
         return writeOut(out, huberLossBackward(grad, self, target, reduction, delta), "huber_loss_backward");
       }),
    op("aten::binary_cross_entropy_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, "
       "Tensor? weight=None, int reduction=1, *, Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction,
          Tensor out) {
         return writeOut(out, binaryCrossEntropyBackward(grad, self, target, weight, reduction),
                         "binary_cross_entropy_backward");
       }),
    op("aten::nll_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, "
       "int reduction, int ignore_index, Tensor total_weight, *, Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction,
          int64_t ignore_index, const Tensor& total_weight, Tensor out) {
         return writeOut(out, nllLossBackward(grad, self, target, weight, reduction, ignore_index, total_weight),
                         "nll_loss_backward");
       }),
    op("aten::nll_loss2d_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, "
       "int reduction, int ignore_index, Tensor total_weight, *, Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction,
          int64_t ignore_index, const Tensor& total_weight, Tensor out) {
         return writeOut(out, nllLoss2dBackward(grad, self, target, weight, reduction, ignore_index, total_weight),
                         "nll_loss2d_backward");
       }), );

KILN_REGISTER_OPS(
    op("aten::mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
       [](const Tensor& self, const Tensor& target, int64_t reduction) { return mseLoss(self, target, reduction); })
        .derivative({"self: torch.mse_loss_backward(grad, self, target, reduction)",
                     "target: torch.mse_loss_backward(grad, target, self, reduction)"})
        .shape(pointwiseLossRule),
    op("aten::mse_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& target, int64_t reduction, Tensor out) {
         return writeOut(out, mseLoss(self, target, reduction), "mse_loss");
       })
        .shape(pointwiseLossRule),
    op("aten::l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
       [](const Tensor& self, const Tensor& target, int64_t reduction) { return l1Loss(self, target, reduction); })
        .derivative({"self: (grad / (self - target).numel() if reduction == 1 else grad) * (self - target).sign()",
                     "target: (grad / (self - target).numel() if reduction == 1 else grad) * (target - self).sign()"})
        .shape(pointwiseLossRule),
    op("aten::smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.) -> Tensor",
       [](const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
         return smoothL1Loss(self, target, reduction, beta);
       })
        .derivative({"self: torch.smooth_l1_loss_backward(grad, self, target, reduction, beta)",
                     "target: torch.smooth_l1_loss_backward(grad, target, self, reduction, beta)"})
        .shape(pointwiseLossRule),
    op("aten::smooth_l1_loss.out(Tensor self, Tensor target, int reduction=1, float beta=1., *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, const Tensor& target, int64_t reduction, double beta, Tensor out) {
         return writeOut(out, smoothL1Loss(self, target, reduction, beta), "smooth_l1_loss");
       })
        .shape(pointwiseLossRule),
    op("aten::huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor",
       [](const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
         return huberLoss(self, target, reduction, delta);
       })
        .derivative({"self: torch.huber_loss_backward(grad, self, target, reduction, delta)",
                     "target: torch.huber_loss_backward(grad, target, self, reduction, delta)"})
        .shape(huberLossRule),
    op("aten::huber_loss.out(Tensor self, Tensor target, int reduction=1, float delta=1., *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, const Tensor& target, int64_t reduction, double delta, Tensor out) {
         return writeOut(out, huberLoss(self, target, reduction, delta), "huber_loss");
       })
        .shape(huberLossRule),
    op("aten::nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> "
       "Tensor",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, int64_t ignore_index) {
         return std::get<0>(nllLossForward(self, target, weight, reduction, ignore_index));
       })
        .derivative({"self: torch.nll_loss_backward(grad, self, target, weight, reduction, ignore_index, "
                     "torch.nll_loss_forward(self, target, weight, reduction, ignore_index)[1])",
                     "grad_fn: NllLossBackward0"})
        .shape(selfDtypeLossRule),
    op("aten::nll_loss.out(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
       "int ignore_index=-100, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, int64_t ignore_index,
          Tensor out) {
         return writeOut(out, std::get<0>(nllLossForward(self, target, weight, reduction, ignore_index)), "nll_loss");
       })
        .shape(selfDtypeLossRule),
    op("aten::nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
       "int ignore_index=-100) -> Tensor",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, int64_t ignore_index) {
         return nllLossNd(self, target, weight, reduction, ignore_index);
       })
        .derivative({"self: _nll_loss_nd_backward(grad, self, target, weight, reduction, ignore_index)",
                     "grad_fn: NllLossBackward0"})
        .shape(selfDtypeLossRule),
    op("aten::nll_loss2d(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
       "int ignore_index=-100) -> Tensor",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, int64_t ignore_index) {
         return std::get<0>(nllLoss2dForward(self, target, weight, reduction, ignore_index));
       })
        .derivative({"self: torch.nll_loss2d_backward(grad, self, target, weight, reduction, ignore_index, "
                     "torch.nll_loss2d_forward(self, target, weight, reduction, ignore_index)[1])",
                     "grad_fn: NllLoss2DBackward0"})
        .shape(selfDtypeLossRule),
    op("aten::nll_loss2d.out(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
       "int ignore_index=-100, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, int64_t ignore_index,
          Tensor out) {
         return writeOut(out, std::get<0>(nllLoss2dForward(self, target, weight, reduction, ignore_index)),
                         "nll_loss2d");
       })
        .shape(selfDtypeLossRule),
    op("aten::nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, int ignore_index) -> "
       "(Tensor output, Tensor total_weight)",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, int64_t ignore_index) {
         return nllLossForward(self, target, weight, reduction, ignore_index);
       })
        .derivative({"self: torch.nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight)",
                     "non_differentiable: total_weight", "grad_fn: NllLossBackward0"})
        .shape(nllForwardRule),
    op("aten::nll_loss_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, int ignore_index, "
       "*, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, int64_t ignore_index,
          Tensor output, Tensor total_weight) {
         return writeTwo(nllLossForward(self, target, weight, reduction, ignore_index), output, total_weight,
                         "nll_loss_forward");
       })
        .shape(nllForwardRule),
    op("aten::nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int reduction, int ignore_index) -> "
       "(Tensor output, Tensor total_weight)",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, int64_t ignore_index) {
         return nllLoss2dForward(self, target, weight, reduction, ignore_index);
       })
        .derivative(
            {"self: torch.nll_loss2d_backward(grad, self, target, weight, reduction, ignore_index, total_weight)",
             "non_differentiable: total_weight", "grad_fn: NllLoss2DBackward0"})
        .shape(nllForwardRule),
    op("aten::nll_loss2d_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, "
       "int ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, int64_t ignore_index,
          Tensor output, Tensor total_weight) {
         return writeTwo(nllLoss2dForward(self, target, weight, reduction, ignore_index), output, total_weight,
                         "nll_loss2d_forward");
       })
        .shape(nllForwardRule),
    op("aten::cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
       "int ignore_index=-100, float label_smoothing=0.) -> Tensor",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, int64_t ignore_index,
          double label_smoothing) {
         return crossEntropyLoss(self, target, weight, reduction, ignore_index, label_smoothing);
       })
        .derivative(
            {"self: _cross_entropy_backward(grad, self, target, weight, reduction, ignore_index, label_smoothing)",
             "target: _cross_entropy_backward_target(grad, self, weight, reduction, label_smoothing)",
             "grad_fn: NllLossBackward0"})
        .shape(selfDtypeLossRule),
    op("aten::binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction) {
         return binaryCrossEntropy(self, target, weight, reduction);
       })
        .derivative({"self: torch.binary_cross_entropy_backward(grad, self, target, weight, reduction)",
                     "target: [(g * weight if weight is not None else g) / (target.numel() if reduction == 1 else 1) "
                     "for g in [((1 - self).log() - self.log()) * grad]][0]"})
        .shape(selfDtypeLossRule),
    op("aten::binary_cross_entropy.out(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, *, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, Tensor out) {
         return writeOut(out, binaryCrossEntropy(self, target, weight, reduction), "binary_cross_entropy");
       })
        .shape(selfDtypeLossRule),
    op("aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
       "Tensor? pos_weight=None, int reduction=1) -> Tensor",
       [](const Tensor& self, const Tensor& target, const Opt& weight, const Opt& pos_weight, int64_t reduction) {
         return binaryCrossEntropyWithLogits(self, target, weight, pos_weight, reduction);
       })
        .derivative({"self: [(g * weight if weight is not None else g) / (self.numel() if reduction == 1 else 1) for g "
                     "in [((pos_weight * target + 1 - target) * self.sigmoid() - pos_weight * target if pos_weight is "
                     "not None else self.sigmoid() - target) * grad]][0]",
                     "target: [(g * weight if weight is not None else g) / (target.numel() if reduction == 1 else 1) "
                     "for g in [(torch.log_sigmoid(-self) - torch.log_sigmoid(self) * pos_weight if pos_weight is not "
                     "None else -self) * grad]][0]"})
        .shape(pointwiseLossRule),
    op("aten::binary_cross_entropy_with_logits.out(Tensor self, Tensor target, Tensor? weight=None, "
       "Tensor? pos_weight=None, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& target, const Opt& weight, const Opt& pos_weight, int64_t reduction,
          Tensor out) {
         return writeOut(out, binaryCrossEntropyWithLogits(self, target, weight, pos_weight, reduction),
                         "binary_cross_entropy_with_logits");
       })
        .shape(pointwiseLossRule),
    op("aten::kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor",
       [](const Tensor& self, const Tensor& target, int64_t reduction, bool log_target) {
         return klDiv(self, target, reduction, log_target);
       })
        .derivative(
            {"self: -(target.exp() if log_target else target) * (grad / (self - target).numel() if reduction == 1 else "
             "grad)",
             "target: (target.exp() * (target - self + 1) if log_target else torch.where(target != 0, target.log(), "
             "0.) + target / target - self) * (grad / (self - target).numel() if reduction == 1 else grad)"})
        .shape(pointwiseLossRule), );

}  // namespace
}  // namespace kiln
