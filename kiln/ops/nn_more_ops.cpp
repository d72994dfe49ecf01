// aten:: registrations of the rest of torch.nn.functional's operators, with
// PyTorch 1.13's schemas: the similarity and distance functions, bilinear,
// rrelu, max unpooling, fractional max pooling and the margin, ranking,
// embedding, Poisson and CTC losses.
//
// torch 1.13 composes most of them of other operators
// (CompositeImplicitAutograd): cosine_similarity, pairwise_distance,
// bilinear, rrelu(_), the margin ranking, hinge embedding, cosine embedding,
// triplet margin and Poisson NLL losses, and multilabel_margin_loss (over
// its _forward). kiln composes them the same way, each inner operator called
// through runOperator (kiln/ops/composite.h), so autograd records the inner
// operators and the gradients are theirs (tests/python/
// test_autograd_coverage.py lists them as COMPOSITE). The others have
// kernels (kiln/tensor/kernels/margin_loss.cpp, ctc_loss.cpp,
// fractional_pool.cpp) and torch's backward operators, which their formulas
// call.
#include <algorithm>
#include <limits>
#include <numbers>
#include <optional>
#include <tuple>
#include <vector>

#include "kiln/core/op_registration.h"
#include "kiln/ops/composite.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/ctc_loss.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/fractional_pool.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/margin_loss.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/random.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using Opt = std::optional<Tensor>;
using Dims = std::vector<int64_t>;

enum : int64_t { kNone = 0, kMean = 1, kSum = 2 };

Tensor wrapped(double v) { return scalarToTensor(Scalar(v)); }

// --- recorded decompositions ------------------------------------------------------------------

namespace rec {

using composite::callTensor;

Tensor add(const Tensor& a, const Tensor& b) { return callTensor("aten::add", "Tensor", {a, b, 1}); }
Tensor add(const Tensor& a, double b) { return callTensor("aten::add", "Scalar", {a, b, 1}); }
Tensor sub(const Tensor& a, const Tensor& b) { return callTensor("aten::sub", "Tensor", {a, b, 1}); }
Tensor sub(const Tensor& a, double b) { return callTensor("aten::sub", "Scalar", {a, b, 1}); }
// b - a
Tensor rsub(const Tensor& a, double b) { return callTensor("aten::rsub", "Scalar", {a, b, 1}); }
Tensor mul(const Tensor& a, const Tensor& b) { return callTensor("aten::mul", "Tensor", {a, b}); }
Tensor mul(const Tensor& a, double b) { return callTensor("aten::mul", "Scalar", {a, b}); }
Tensor div(const Tensor& a, const Tensor& b) { return callTensor("aten::div", "Tensor", {a, b}); }
Tensor unary(const char* name, const Tensor& a) { return callTensor(name, "", {a}); }
Tensor clampMin(const Tensor& a, double min) { return callTensor("aten::clamp_min", "", {a, min}); }
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  return callTensor("aten::where", "self", {condition, a, b});
}
Tensor sumDim(const Tensor& a, int64_t dim, bool keepdim = false) {
  return callTensor("aten::sum", "dim_IntList", {a, IValue(Dims{dim}), keepdim, IValue()});
}
Tensor norm(const Tensor& a, double p, int64_t dim, bool keepdim) {
  return callTensor("aten::norm", "ScalarOpt_dim", {a, p, IValue(Dims{dim}), keepdim});
}
Tensor reshape(const Tensor& a, Dims shape) { return callTensor("aten::reshape", "", {a, IValue(shape)}); }
// `a` in `dtype`, expanded to `size` (no operator where nothing changes).
Tensor toExpanded(const Tensor& a, ScalarType dtype, IntArrayRef size) {
  Tensor t = a.dtype() == dtype
                 ? a
                 : callTensor("aten::to", "dtype", {a, static_cast<int64_t>(dtype), false, false, IValue()});
  return t.sizes() == size ? t : callTensor("aten::expand", "", {t, IValue(size), false});
}

// torch's apply_loss_reduction.
Tensor reduce(const Tensor& loss, int64_t reduction) {
  if (reduction == kMean) return callTensor("aten::mean", "", {loss, IValue()});
  if (reduction == kSum) return callTensor("aten::sum", "", {loss, IValue()});
  return loss;
}

}  // namespace rec

Tensor cosineSimilarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  const ScalarType common = resultType(x1, x2);
  KILN_CHECK(isFloatingType(common), "expected common dtype to be floating point, yet common dtype is ",
             scalarTypeShortName(common));
  const DimVector size = broadcastShapes(x1.sizes(), x2.sizes());
  const Tensor a = rec::toExpanded(x1, common, size);
  const Tensor b = rec::toExpanded(x2, common, size);
  // Each input is divided by its norm first, which keeps the result within
  // [-1, 1]. torch clamps the squared norms to eps^2 in place without
  // recording it (sum keeps nothing for its backward), so the gradient is
  // the unclamped one's; so does kiln.
  auto clampedNorm = [&](const Tensor& x) {
    Tensor squared = rec::sumDim(composite::callTensor("aten::pow", "Tensor_Scalar", {x, 2}), dim, true);
    clampMin_(squared, Scalar(eps * eps));
    return rec::unary("aten::sqrt", squared);
  };
  return rec::sumDim(rec::mul(rec::div(a, clampedNorm(a)), rec::div(b, clampedNorm(b))), dim);
}

Tensor pairwiseDistance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  // Over the last dim of the broadcast (either input may be the one broadcast).
  const int64_t last = std::max(x1.dim(), x2.dim()) - 1;
  return rec::norm(rec::add(rec::sub(x1, x2), eps), p, last, keepdim);
}

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight, const Opt& bias_opt) {
  const Tensor bias = bias_opt ? *bias_opt : Tensor();
  KILN_CHECK(input1.dtype() == input2.dtype() && input1.dtype() == weight.dtype() &&
                 (!bias.defined() || input1.dtype() == bias.dtype()),
             "All tensors must have the same dtype, got input1: ", scalarTypeName(input1.dtype()),
             ", input2: ", scalarTypeName(input2.dtype()), ", weight: ", scalarTypeName(weight.dtype()),
             bias.defined() ? ", bias: " : "", bias.defined() ? scalarTypeName(bias.dtype()) : "");
  KILN_CHECK(input1.dim() == input2.dim(), "bilinear(): input dimensions do not match: got ", input1.dim(), " and ",
             input2.dim());
  KILN_CHECK(input1.dim() >= 1, "bilinear(): expected inputs of at least one dimension");
  KILN_CHECK(weight.dim() == 3, "bilinear(): expected a 3-D weight, got ", weight.dim(), " dimensions");
  for (int64_t i = 0; i + 1 < input1.dim(); ++i) {
    KILN_CHECK(input1.size(i) == input2.size(i), "bilinear(): input batch dimensions do not match at dim ", i, ": got ",
               input1.size(i), " and ", input2.size(i));
  }
  const int64_t in1 = input1.size(-1), in2 = input2.size(-1), out = weight.size(0);
  KILN_CHECK(in1 == weight.size(1), "bilinear(): input1 size does not match weight size: got ", in1, " but expected ",
             weight.size(1));
  KILN_CHECK(in2 == weight.size(2), "bilinear(): input2 size does not match weight size: got ", in2, " but expected ",
             weight.size(2));
  KILN_CHECK(!bias.defined() || (bias.dim() >= 1 && bias.size(0) == out),
             "bilinear(): bias size does not match weight size: got ", bias.defined() && bias.dim() ? bias.size(0) : 0,
             " but expected ", out);
  Dims output_size(input1.sizes().begin(), input1.sizes().end() - 1);
  output_size.push_back(out);
  // y[b, o] = sum_ij x1[b, i] w[o, i, j] x2[b, j]: one matrix product with
  // the weight as (i, o * j), then the sum over j.
  const Tensor x1 = rec::reshape(input1, {-1, in1});
  const Tensor x2 = rec::reshape(input2, {-1, in2});
  const Tensor w =
      rec::reshape(composite::callTensor("aten::permute", "", {weight, IValue(Dims{1, 0, 2})}), {in1, out * in2});
  const Tensor left = rec::reshape(composite::callTensor("aten::mm", "", {x1, w}), {-1, out, in2});
  const Tensor right = composite::callTensor("aten::unsqueeze", "", {x2, 1});
  Tensor result = rec::reshape(rec::sumDim(rec::mul(left, right), 2), output_size);
  return bias.defined() ? rec::add(result, bias) : result;
}

Tensor marginRankingLoss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                         int64_t reduction) {
  const Tensor loss =
      rec::clampMin(rec::add(rec::mul(rec::unary("aten::neg", target), rec::sub(input1, input2)), margin), 0.0);
  return rec::reduce(loss, reduction);
}

Tensor hingeEmbeddingLoss(const Tensor& self, const Tensor& target, double margin, int64_t reduction) {
  const Tensor zero = zeros(self.sizes(), self.dtype());
  const Tensor margin_clamp = rec::clampMin(rec::rsub(self, margin), 0.0);
  const Tensor output_margin = rec::where(ne(target, wrapped(1.0)), margin_clamp, zero);
  const Tensor output_self = rec::where(ne(target, wrapped(-1.0)), self, zero);
  return rec::reduce(rec::add(output_margin, output_self), reduction);
}

Tensor cosineEmbeddingLoss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           int64_t reduction) {
  const int64_t target_dim = target.dim();
  KILN_CHECK(target_dim == 1 || target_dim == 0, "0D or 1D target tensor expected, multi-target not supported");
  if (target_dim == 1) {
    KILN_CHECK(input1.dim() == 2 && input2.dim() == 2,
               "1D target tensor expects 2D input tensors, but found inputs "
               "with sizes ",
               shapeString(input1.sizes()), " and ", shapeString(input2.sizes()), ".");
  } else {
    KILN_CHECK(input1.dim() == 1 && input2.dim() == 1,
               "0D target tensor expects 1D input tensors, but found inputs "
               "with sizes ",
               shapeString(input1.sizes()), " and ", shapeString(input2.sizes()), ".");
  }
  // torch's EPSILON keeps a zero vector's cosine finite.
  constexpr double kEpsilon = 1e-12;
  const Tensor prod_sum = rec::sumDim(rec::mul(input1, input2), target_dim);
  const Tensor mag_square1 = rec::add(rec::sumDim(rec::mul(input1, input1), target_dim), kEpsilon);
  const Tensor mag_square2 = rec::add(rec::sumDim(rec::mul(input2, input2), target_dim), kEpsilon);
  const Tensor cos = rec::div(prod_sum, rec::unary("aten::sqrt", rec::mul(mag_square1, mag_square2)));
  const Tensor zero = zeros(cos.sizes(), cos.dtype());
  const Tensor output_pos = rec::where(eq(target, wrapped(1.0)), rec::rsub(cos, 1.0), zero);
  const Tensor output_neg = rec::where(eq(target, wrapped(-1.0)), rec::clampMin(rec::sub(cos, margin), 0.0), zero);
  return rec::reduce(rec::add(output_pos, output_neg), reduction);
}

Tensor poissonNllLoss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                      int64_t reduction) {
  Tensor loss = log_input ? rec::sub(rec::unary("aten::exp", input), rec::mul(target, input))
                          : rec::sub(input, rec::mul(target, rec::unary("aten::log", rec::add(input, eps))));
  if (full) {
    // Stirling's approximation of log(target!), counted for targets above 1.
    const Tensor stirling = rec::add(rec::sub(rec::mul(target, rec::unary("aten::log", target)), target),
                                     rec::mul(rec::unary("aten::log", rec::mul(target, 2 * std::numbers::pi)), 0.5));
    const Tensor counted =
        composite::callTensor("aten::masked_fill", "Scalar", {stirling, le(target, wrapped(1.0)), 0});
    loss = rec::add(loss, counted);
  }
  return rec::reduce(loss, reduction);
}

Tensor tripletMarginLoss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin, double p,
                         double eps, bool swap, int64_t reduction) {
  KILN_CHECK(anchor.dim() == positive.dim() && positive.dim() == negative.dim(),
             "All inputs should have same dimension but got ", anchor.dim(), "D, ", positive.dim(), "D and ",
             negative.dim(), "D inputs.");
  auto distance = [&](const Tensor& a, const Tensor& b) {
    return composite::callTensor("aten::pairwise_distance", "", {a, b, p, eps, false});
  };
  const Tensor dist_pos = distance(anchor, positive);
  Tensor dist_neg = distance(anchor, negative);
  if (swap) dist_neg = composite::callTensor("aten::min", "other", {dist_neg, distance(positive, negative)});
  return rec::reduce(rec::clampMin(rec::sub(rec::add(dist_pos, margin), dist_neg), 0.0), reduction);
}

// --- rrelu -----------------------------------------------------------------------------------

void checkNoGenerator(const IValue& generator) {
  KILN_CHECK(generator.isNone(), "rrelu: kiln has no Generator objects; seed the default one with kiln.manual_seed");
}

void checkBounds(const Scalar& lower, const Scalar& upper) {
  KILN_CHECK(lower.toDouble() <= upper.toDouble(), "Lower bound should be less than or equal to the upper bound");
}

// Evaluation mode's fixed slope for negative inputs.
double meanSlope(const Scalar& lower, const Scalar& upper) { return (lower.toDouble() + upper.toDouble()) / 2; }

Tensor leakyRelu(const Tensor& self, double slope) {
  return where(gt(self, wrapped(0.0)), self, mul(self, wrapped(slope)));
}

// Training mode draws each negative input's slope uniformly from [lower,
// upper] and writes the slopes (1 for the others) to `noise`, which the
// backward multiplies the gradient with.
Tensor rreluWithNoise(const Tensor& self, Tensor noise, const Scalar& lower, const Scalar& upper, bool training,
                      const IValue& generator) {
  checkNoGenerator(generator);
  KILN_CHECK(isFloatingType(self.dtype()), "\"rrelu_with_noise_out_cpu\" not implemented for '",
             scalarTypeShortName(self.dtype()), "'");
  if (!training) return leakyRelu(self, meanSlope(lower, upper));
  KILN_CHECK(noise.numel() == self.numel(), "rrelu_with_noise: noise has ", noise.numel(),
             " elements, expected as many as the input (", self.numel(), ")");
  Tensor slopes = empty(self.sizes(), ScalarType::Double);
  uniform_(slopes, lower.toDouble(), upper.toDouble());
  const Tensor factor = where(le(self, wrapped(0.0)), to(slopes, self.dtype()), ones({}, self.dtype()));
  copy_(noise, reshape(factor, noise.sizes()));
  return mul(self, factor);
}

Tensor rreluWithNoiseBackward(const Tensor& grad, const Tensor& self, const Tensor& noise, const Scalar& lower,
                              const Scalar& upper, bool training) {
  if (training && static_cast<float>(upper.toDouble() - lower.toDouble()) > 1e-6f) return mul(grad, noise);
  return where(gt(self, wrapped(0.0)), grad, mul(grad, wrapped(meanSlope(lower, upper))));
}

Tensor rrelu(const Tensor& self, const Scalar& lower, const Scalar& upper, bool training, const IValue& generator,
             bool inplace) {
  checkBounds(lower, upper);
  const Tensor noise = empty(self.sizes(), self.dtype());
  return composite::callTensor(inplace ? "aten::rrelu_with_noise_" : "aten::rrelu_with_noise", "",
                               {self, noise, lower, upper, training, generator});
}

// --- losses with kernels -----------------------------------------------------------------------

Tensor reduced(const Tensor& loss, int64_t reduction) {
  if (reduction == kMean) return mean(loss);
  if (reduction == kSum) return sum(loss);
  return loss;
}

// log(1 + exp(-self * target)), evaluated in torch's order.
Tensor softMarginLoss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return reduced(log(add(exp(mul(neg(self), target)), wrapped(1.0))), reduction);
}

Tensor softMarginLossBackward(const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction) {
  const double norm = reduction == kMean ? 1.0 / static_cast<double>(self.numel()) : 1.0;
  const Tensor z = exp(mul(neg(target), self));
  return mul(div(mul(mul(target, z), wrapped(-norm)), add(z, wrapped(1.0))), grad);
}

// --- max unpooling -----------------------------------------------------------------------------

void checkUnpoolIndices(const Tensor& indices) {
  KILN_CHECK(indices.dtype() == ScalarType::Long,
             "elements in indices should be type int64 but got: ", scalarTypeShortName(indices.dtype()));
}

Tensor maxUnpool2d(const Tensor& self, const Tensor& indices, IntArrayRef output_size) {
  checkUnpoolIndices(indices);
  KILN_CHECK(output_size.size() == 2, "There should be exactly two elements (height, width) in output_size, but got ",
             output_size.size(), " elements.");
  KILN_CHECK(self.dim() == 3 || self.dim() == 4,
             "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with ", self.dim(),
             " dimensions.");
  return maxUnpool(self, indices, output_size);
}

Tensor maxUnpool3d(const Tensor& self, const Tensor& indices, IntArrayRef output_size, IntArrayRef stride,
                   IntArrayRef padding) {
  checkUnpoolIndices(indices);
  KILN_CHECK(self.dim() == 4 || self.dim() == 5,
             "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with ", self.dim(),
             " dimensions.");
  KILN_CHECK(output_size.size() == 3,
             "There should be exactly three elements (depth, height, width) in "
             "output_size, but got ",
             output_size.size(), " elements.");
  KILN_CHECK(stride.size() == 3,
             "There should be exactly three elements (depth, height, width) in stride, but got: ", stride.size(),
             " elements.");
  KILN_CHECK(padding.size() == 3,
             "There should be exactly three elements (depth, height, width) in padding, but "
             "got: ",
             padding.size(), " elements.");
  KILN_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0,
             "strides should be greater than zero, but got stride: ", shapeString(stride));
  return maxUnpool(self, indices, output_size);
}

// --- CTC loss --------------------------------------------------------------------------------

// Lengths given as a tensor: its integers (torch's convenience overloads).
DimVector lengthsOf(const Tensor& lengths, const char* name) {
  KILN_CHECK(isIntegralType(lengths.dtype(), false), name, " must be integral");
  const Tensor l = contiguous(to(lengths, ScalarType::Long));
  return DimVector(IntArrayRef(l.data<int64_t>(), static_cast<size_t>(l.numel())));
}

// torch's ctc_loss: _ctc_loss over int64 targets (an unbatched (T, C) input
// as a batch of one), infinite losses zeroed on request, then the mean of
// the losses divided by the target lengths, or their sum.
Tensor ctcLossReduced(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                      IntArrayRef target_lengths, int64_t blank, int64_t reduction, bool zero_infinity) {
  using composite::callTensor;
  const bool batched = log_probs.dim() == 3;
  const Tensor lp = batched ? log_probs : callTensor("aten::unsqueeze", "", {log_probs, 1});
  Tensor res = callTensor(
      "aten::_ctc_loss", "",
      {lp, to(targets, ScalarType::Long), IValue(input_lengths), IValue(target_lengths), blank, zero_infinity});
  if (zero_infinity) {
    res = rec::where(eq(res, wrapped(std::numeric_limits<double>::infinity())), zeros({}, res.dtype()), res);
  }
  if (reduction == kMean) {
    DimVector lengths(target_lengths);
    for (int64_t& l : lengths) l = std::max<int64_t>(l, 1);
    Tensor divisor = empty({static_cast<int64_t>(lengths.size())}, ScalarType::Long);
    std::copy(lengths.begin(), lengths.end(), divisor.data<int64_t>());
    return callTensor("aten::mean", "", {rec::div(res, divisor), IValue()});
  }
  if (reduction == kSum) return rec::reduce(res, kSum);
  return batched ? res : callTensor("aten::squeeze", "dim", {res, 0});
}

std::tuple<Tensor, Tensor> writeTwo(const std::tuple<Tensor, Tensor>& r, Tensor a, Tensor b, const char* op) {
  writeOut(a, std::get<0>(r), op);
  writeOut(b, std::get<1>(r), op);
  return {a, b};
}

}  // namespace

KILN_REGISTER_OPS(
    op("aten::cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor",
       [](const Tensor& x1, const Tensor& x2, int64_t dim, double eps) { return cosineSimilarity(x1, x2, dim, eps); }),
    op("aten::pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07, "
       "bool keepdim=False) -> Tensor",
       [](const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
         return pairwiseDistance(x1, x2, p, eps, keepdim);
       }),
    op("aten::bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor",
       [](const Tensor& input1, const Tensor& input2, const Tensor& weight, const Opt& bias) {
         return bilinear(input1, input2, weight, bias);
       }),

    op("aten::margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., "
       "int reduction=1) -> Tensor",
       [](const Tensor& input1, const Tensor& input2, const Tensor& target, double margin, int64_t reduction) {
         return marginRankingLoss(input1, input2, target, margin, reduction);
       }),
    op("aten::hinge_embedding_loss(Tensor self, Tensor target, float margin=1., int reduction=1) -> Tensor",
       [](const Tensor& self, const Tensor& target, double margin, int64_t reduction) {
         return hingeEmbeddingLoss(self, target, margin, reduction);
       }),
    op("aten::cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., "
       "int reduction=1) -> Tensor",
       [](const Tensor& input1, const Tensor& input2, const Tensor& target, double margin, int64_t reduction) {
         return cosineEmbeddingLoss(input1, input2, target, margin, reduction);
       }),
    op("aten::poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction) -> "
       "Tensor",
       [](const Tensor& input, const Tensor& target, bool log_input, bool full, double eps, int64_t reduction) {
         return poissonNllLoss(input, target, log_input, full, eps, reduction);
       }),
    op("aten::triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1., float p=2., "
       "float eps=9.9999999999999995e-07, bool swap=False, int reduction=1) -> Tensor",
       [](const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin, double p, double eps,
          bool swap, int64_t reduction) {
         return tripletMarginLoss(anchor, positive, negative, margin, p, eps, swap, reduction);
       }),

    op("aten::rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, "
       "Generator? generator=None) -> Tensor",
       [](const Tensor& self, const Scalar& lower, const Scalar& upper, bool training, const IValue& generator) {
         return rrelu(self, lower, upper, training, generator, false);
       })
        .shape(shapes::sameDtype),
    op("aten::rrelu_(Tensor(a!) self, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, "
       "Generator? generator=None) -> Tensor(a!)",
       [](Tensor self, const Scalar& lower, const Scalar& upper, bool training, const IValue& generator) {
         return rrelu(self, lower, upper, training, generator, true);
       }),
    op("aten::rrelu_with_noise(Tensor self, Tensor noise, Scalar lower=0.125, Scalar upper=0.33333333333333331, "
       "bool training=False, Generator? generator=None) -> Tensor",
       [](const Tensor& self, Tensor noise, const Scalar& lower, const Scalar& upper, bool training,
          const IValue& generator) { return rreluWithNoise(self, noise, lower, upper, training, generator); })
        .shape(shapes::sameDtype)
        .derivative({"self: torch.rrelu_with_noise_backward(grad, self, noise, lower, upper, training, False)"}),
    op("aten::rrelu_with_noise_(Tensor(a!) self, Tensor noise, Scalar lower=0.125, "
       "Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor(a!)",
       [](Tensor self, Tensor noise, const Scalar& lower, const Scalar& upper, bool training, const IValue& generator) {
         return copy_(self, rreluWithNoise(self, noise, lower, upper, training, generator));
       }),
    op("aten::rrelu_with_noise.out(Tensor self, Tensor noise, Scalar lower=0.125, "
       "Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, Tensor noise, const Scalar& lower, const Scalar& upper, bool training,
          const IValue& generator, Tensor out) {
         return writeOut(out, rreluWithNoise(self, noise, lower, upper, training, generator), "rrelu_with_noise");
       }),
    op("aten::rrelu_with_noise_backward(Tensor grad_output, Tensor self, Tensor noise, Scalar lower, Scalar upper, "
       "bool training, bool self_is_result) -> Tensor",
       [](const Tensor& grad, const Tensor& self, const Tensor& noise, const Scalar& lower, const Scalar& upper,
          bool training,
          bool /*self_is_result*/) { return rreluWithNoiseBackward(grad, self, noise, lower, upper, training); })
        .derivative({"grad_output: torch.rrelu_with_noise_backward(grad, self, noise, lower, upper, training, False)",
                     "self: torch.zeros_like(grad)"}),
    op("aten::rrelu_with_noise_backward.out(Tensor grad_output, Tensor self, Tensor noise, Scalar lower, "
       "Scalar upper, bool training, bool self_is_result, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& noise, const Scalar& lower, const Scalar& upper,
          bool training, bool /*self_is_result*/, Tensor out) {
         return writeOut(out, rreluWithNoiseBackward(grad, self, noise, lower, upper, training),
                         "rrelu_with_noise_backward");
       }),

    op("aten::soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
       [](const Tensor& self, const Tensor& target, int64_t reduction) {
         return softMarginLoss(self, target, reduction);
       })
        .derivative({"self: torch.soft_margin_loss_backward(grad, self, target, reduction)"}),
    op("aten::soft_margin_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& target, int64_t reduction, Tensor out) {
         return writeOut(out, softMarginLoss(self, target, reduction), "soft_margin_loss");
       }),
    op("aten::soft_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction) {
         return softMarginLossBackward(grad, self, target, reduction);
       })
        .derivative({"grad_output: (torch.soft_margin_loss_backward(grad, self, target, 0) if reduction == 0 else "
                     "(torch.soft_margin_loss_backward(torch.ones_like(grad_output), self, target, reduction) * "
                     "grad).sum())",
                     "self: grad * grad_output * target * target * (-target * self).exp() / "
                     "((-target * self).exp() + 1).pow(2) / (self.numel() if reduction == 1 else 1)"}),
    op("aten::soft_margin_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, int reduction, "
       "*, Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction, Tensor out) {
         return writeOut(out, softMarginLossBackward(grad, self, target, reduction), "soft_margin_loss_backward");
       }),

    op("aten::multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, "
       "int reduction=1) -> Tensor",
       [](const Tensor& self, const Tensor& target, const Scalar& p, const Scalar& margin, const Opt& weight,
          int64_t reduction) { return multiMarginLoss(self, target, p, margin, weight, reduction); })
        .derivative({"self: torch.multi_margin_loss_backward(grad, self, target, p, margin, weight, reduction)"}),
    op("aten::multi_margin_loss.out(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, "
       "int reduction=1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& target, const Scalar& p, const Scalar& margin, const Opt& weight,
          int64_t reduction, Tensor out) {
         return writeOut(out, multiMarginLoss(self, target, p, margin, weight, reduction), "multi_margin_loss");
       }),
    op("aten::multi_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, Scalar p, Scalar margin, "
       "Tensor? weight=None, int reduction=1) -> Tensor",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, const Scalar& p, const Scalar& margin,
          const Opt& weight,
          int64_t reduction) { return multiMarginLossBackward(grad, self, target, p, margin, weight, reduction); })
        .notDifferentiable("torch 1.13 has no derivative for multi_margin_loss_backward"),
    op("aten::multi_margin_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Scalar p, "
       "Scalar margin, Tensor? weight=None, int reduction=1, *, Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, const Scalar& p, const Scalar& margin,
          const Opt& weight, int64_t reduction, Tensor out) {
         return writeOut(out, multiMarginLossBackward(grad, self, target, p, margin, weight, reduction),
                         "multi_margin_loss_backward");
       }),

    op("aten::multilabel_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
       [](const Tensor& self, const Tensor& target, int64_t reduction) {
         return composite::callTensor("aten::multilabel_margin_loss_forward", "", {self, target, reduction});
       }),
    op("aten::multilabel_margin_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, const Tensor& target, int64_t reduction, Tensor out) {
         return writeOut(out, std::get<0>(multilabelMarginLossForward(self, target, reduction)),
                         "multilabel_margin_loss");
       }),
    op("aten::multilabel_margin_loss_forward(Tensor self, Tensor target, int reduction) -> "
       "(Tensor output, Tensor is_target)",
       [](const Tensor& self, const Tensor& target, int64_t reduction) {
         return multilabelMarginLossForward(self, target, reduction);
       })
        .derivative({"self: torch.multilabel_margin_loss_backward(grad, self, target, reduction, is_target)",
                     "non_differentiable: is_target"}),
    op("aten::multilabel_margin_loss_forward.output(Tensor self, Tensor target, int reduction, *, "
       "Tensor(a!) output, Tensor(b!) is_target) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& self, const Tensor& target, int64_t reduction, Tensor output, Tensor is_target) {
         return writeTwo(multilabelMarginLossForward(self, target, reduction), output, is_target,
                         "multilabel_margin_loss_forward");
       }),
    op("aten::multilabel_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, "
       "Tensor is_target) -> Tensor",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction, const Tensor& is_target) {
         return multilabelMarginLossBackward(grad, self, target, reduction, is_target);
       })
        .notDifferentiable("torch 1.13 has no derivative for multilabel_margin_loss_backward"),
    op("aten::multilabel_margin_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, "
       "int reduction, Tensor is_target, *, Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& target, int64_t reduction, const Tensor& is_target,
          Tensor out) {
         return writeOut(out, multilabelMarginLossBackward(grad, self, target, reduction, is_target),
                         "multilabel_margin_loss_backward");
       }),

    op("aten::ctc_loss.IntList(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, "
       "int blank=0, int reduction=1, bool zero_infinity=False) -> Tensor",
       [](const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
          int64_t blank, int64_t reduction, bool zero_infinity) {
         return ctcLossReduced(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity);
       }),
    op("aten::ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
       "int blank=0, int reduction=1, bool zero_infinity=False) -> Tensor",
       [](const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths, const Tensor& target_lengths,
          int64_t blank, int64_t reduction, bool zero_infinity) {
         return ctcLossReduced(log_probs, targets, lengthsOf(input_lengths, "input_lengths"),
                               lengthsOf(target_lengths, "target_lengths"), blank, reduction, zero_infinity);
       }),
    op("aten::_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, "
       "bool zero_infinity=False) -> (Tensor, Tensor)",
       [](const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
          int64_t blank, bool /*zero_infinity: applied by the backward and ctc_loss*/) {
         return ctcLoss(log_probs, targets, input_lengths, target_lengths, blank);
       })
        .derivative({"log_probs: torch._ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, "
                     "result0, result1, blank, zero_infinity)",
                     "non_differentiable: result1"}),
    op("aten::_ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "
       "int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)",
       [](const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths, const Tensor& target_lengths,
          int64_t blank, bool /*zero_infinity*/) {
         return ctcLoss(log_probs, targets, lengthsOf(input_lengths, "input_lengths"),
                        lengthsOf(target_lengths, "target_lengths"), blank);
       })
        .derivative({"log_probs: torch._ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, "
                     "result0, result1, blank, zero_infinity)",
                     "non_differentiable: result1"}),
    op("aten::_ctc_loss.out(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, "
       "int blank=0, bool zero_infinity=False, *, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths, IntArrayRef target_lengths,
          int64_t blank, bool /*zero_infinity*/, Tensor out0, Tensor out1) {
         return writeTwo(ctcLoss(log_probs, targets, input_lengths, target_lengths, blank), out0, out1, "_ctc_loss");
       }),
    op("aten::_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, "
       "int[] target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False) -> "
       "Tensor",
       [](const Tensor& grad, const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
          IntArrayRef target_lengths, const Tensor& nll, const Tensor& log_alpha, int64_t blank, bool zero_infinity) {
         return ctcLossBackward(grad, log_probs, targets, input_lengths, target_lengths, nll, log_alpha, blank,
                                zero_infinity);
       })
        .notDifferentiable("torch 1.13 has no derivative for _ctc_loss_backward"),
    op("aten::_ctc_loss_backward.Tensor(Tensor grad, Tensor log_probs, Tensor targets, Tensor input_lengths, "
       "Tensor target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False) -> "
       "Tensor",
       [](const Tensor& grad, const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
          const Tensor& target_lengths, const Tensor& nll, const Tensor& log_alpha, int64_t blank, bool zero_infinity) {
         return ctcLossBackward(grad, log_probs, targets, lengthsOf(input_lengths, "input_lengths"),
                                lengthsOf(target_lengths, "target_lengths"), nll, log_alpha, blank, zero_infinity);
       })
        .notDifferentiable("torch 1.13 has no derivative for _ctc_loss_backward"),
    op("aten::_ctc_loss_backward.out(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, "
       "int[] target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False, *, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
          IntArrayRef target_lengths, const Tensor& nll, const Tensor& log_alpha, int64_t blank, bool zero_infinity,
          Tensor out) {
         return writeOut(out,
                         ctcLossBackward(grad, log_probs, targets, input_lengths, target_lengths, nll, log_alpha, blank,
                                         zero_infinity),
                         "_ctc_loss_backward");
       }),

    op("aten::fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, Tensor random_samples) -> "
       "(Tensor, Tensor)",
       [](const Tensor& self, IntArrayRef kernel_size, IntArrayRef output_size, const Tensor& random_samples) {
         return fractionalMaxPool(self, kernel_size, output_size, random_samples);
       })
        .derivative({"self: torch.fractional_max_pool2d_backward(grad, self, kernel_size, output_size, result1)",
                     "non_differentiable: result1"}),
    op("aten::fractional_max_pool2d.output(Tensor self, int[2] kernel_size, int[2] output_size, "
       "Tensor random_samples, *, Tensor(a!) output, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& self, IntArrayRef kernel_size, IntArrayRef output_size, const Tensor& random_samples,
          Tensor output, Tensor indices) {
         return writeTwo(fractionalMaxPool(self, kernel_size, output_size, random_samples), output, indices,
                         "fractional_max_pool2d");
       }),
    op("aten::fractional_max_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
       "int[2] output_size, Tensor indices) -> Tensor",
       [](const Tensor& grad, const Tensor& self, IntArrayRef /*kernel_size*/, IntArrayRef output_size,
          const Tensor& indices) { return fractionalMaxPoolBackward(grad, self, output_size, indices); })
        .derivative({"grad_output: grad.flatten(-2).gather(-1, indices.flatten(-2)).view(indices.size())",
                     "self: torch.zeros_like(self)"}),
    op("aten::fractional_max_pool2d_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, "
       "int[2] output_size, Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, IntArrayRef /*kernel_size*/, IntArrayRef output_size,
          const Tensor& indices, Tensor out) {
         return writeOut(out, fractionalMaxPoolBackward(grad, self, output_size, indices),
                         "fractional_max_pool2d_backward");
       }),
    op("aten::fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, Tensor random_samples) -> "
       "(Tensor, Tensor)",
       [](const Tensor& self, IntArrayRef kernel_size, IntArrayRef output_size, const Tensor& random_samples) {
         return fractionalMaxPool(self, kernel_size, output_size, random_samples);
       })
        .derivative({"self: torch.fractional_max_pool3d_backward(grad, self, kernel_size, output_size, result1)",
                     "non_differentiable: result1"}),
    op("aten::fractional_max_pool3d.output(Tensor self, int[3] kernel_size, int[3] output_size, "
       "Tensor random_samples, *, Tensor(a!) output, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& self, IntArrayRef kernel_size, IntArrayRef output_size, const Tensor& random_samples,
          Tensor output, Tensor indices) {
         return writeTwo(fractionalMaxPool(self, kernel_size, output_size, random_samples), output, indices,
                         "fractional_max_pool3d");
       }),
    op("aten::fractional_max_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, "
       "int[3] output_size, Tensor indices) -> Tensor",
       [](const Tensor& grad, const Tensor& self, IntArrayRef /*kernel_size*/, IntArrayRef output_size,
          const Tensor& indices) { return fractionalMaxPoolBackward(grad, self, output_size, indices); })
        .derivative({"grad_output: grad.flatten(-3).gather(-1, indices.flatten(-3)).view(indices.size())",
                     "self: torch.zeros_like(self)"}),
    op("aten::fractional_max_pool3d_backward.grad_input(Tensor grad_output, Tensor self, int[3] kernel_size, "
       "int[3] output_size, Tensor indices, *, Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, IntArrayRef /*kernel_size*/, IntArrayRef output_size,
          const Tensor& indices, Tensor out) {
         return writeOut(out, fractionalMaxPoolBackward(grad, self, output_size, indices),
                         "fractional_max_pool3d_backward");
       }),

    // The gradient gathers grad at the pooling indices (torch's max_pool_double_backward).
    op("aten::max_unpool2d(Tensor self, Tensor indices, int[2] output_size) -> Tensor",
       [](const Tensor& self, const Tensor& indices, IntArrayRef output_size) {
         return maxUnpool2d(self, indices, output_size);
       })
        .derivative({"self: grad.flatten(-2).gather(-1, indices.flatten(-2)).view(indices.size())"}),
    op("aten::max_unpool2d.out(Tensor self, Tensor indices, int[2] output_size, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& indices, IntArrayRef output_size, Tensor out) {
         return writeOut(out, maxUnpool2d(self, indices, output_size), "max_unpool2d");
       }),
    op("aten::max_unpool3d(Tensor self, Tensor indices, int[3] output_size, int[3] stride, int[3] padding) -> Tensor",
       [](const Tensor& self, const Tensor& indices, IntArrayRef output_size, IntArrayRef stride, IntArrayRef padding) {
         return maxUnpool3d(self, indices, output_size, stride, padding);
       })
        .derivative({"self: grad.flatten(-3).gather(-1, indices.flatten(-3)).view(indices.size())"}),
    op("aten::max_unpool3d.out(Tensor self, Tensor indices, int[3] output_size, int[3] stride, int[3] padding, *, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& indices, IntArrayRef output_size, IntArrayRef stride, IntArrayRef padding,
          Tensor out) {
         return writeOut(out, maxUnpool3d(self, indices, output_size, stride, padding), "max_unpool3d");
       }), );

}  // namespace kiln
