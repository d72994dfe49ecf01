// aten:: registrations of the loss functions, with PyTorch 1.13's schemas.
// `reduction` is torch's enum: 0 none, 1 mean, 2 sum.
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/loss.h"
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

KILN_REGISTER_OPS(
    op("aten::mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
       [](const Tensor& self, const Tensor& target, int64_t reduction) { return mseLoss(self, target, reduction); })
        .shape(pointwiseLossRule),
    op("aten::mse_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& target, int64_t reduction, Tensor out) {
         return writeOut(out, mseLoss(self, target, reduction), "mse_loss");
       })
        .shape(pointwiseLossRule),
    op("aten::l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
       [](const Tensor& self, const Tensor& target, int64_t reduction) { return l1Loss(self, target, reduction); })
        .shape(pointwiseLossRule),
    op("aten::smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.) -> Tensor",
       [](const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
         return smoothL1Loss(self, target, reduction, beta);
       })
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
        .shape(selfDtypeLossRule),
    op("aten::nll_loss2d(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
       "int ignore_index=-100) -> Tensor",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction, int64_t ignore_index) {
         return std::get<0>(nllLoss2dForward(self, target, weight, reduction, ignore_index));
       })
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
        .shape(selfDtypeLossRule),
    op("aten::binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor",
       [](const Tensor& self, const Tensor& target, const Opt& weight, int64_t reduction) {
         return binaryCrossEntropy(self, target, weight, reduction);
       })
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
        .shape(pointwiseLossRule), );

}  // namespace
}  // namespace kiln
