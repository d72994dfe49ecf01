// Selection and statistics operators of PyTorch 1.13: median, nanmedian,
// kthvalue, mode, quantile, nanquantile, aminmax, cummax, cummin,
// logcumsumexp, dist, diff, cov, corrcoef, cdist, pdist, renorm, and the
// internal operators torch composes them of (_cdist_forward,
// _euclidean_dist, _pdist_forward, ...). The line-wise selections
// (kiln/tensor/kernels/order_stats.cpp) and the row distances of cdist and
// pdist (kernels/distance.cpp) are kernels; the rest are composed of kiln's
// tensor functions as torch composes them, so that results agree.
// (The named-dim overloads are left out: kiln has no named tensors.)
#include <string>
#include <vector>

#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/distance.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/index.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/linalg.h"
#include "kiln/tensor/order_stats.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"
#include "kiln/tensor/sort.h"

namespace kiln {
namespace {

using OptionalTensor = std::optional<Tensor>;
using ValuesIndices = std::tuple<Tensor, Tensor>;

Tensor scalarLike(double value, const Tensor& like) { return scalarToTensor(Scalar(value), like.dtype()); }

// (values, indices) written to out= tensors, which must have the result dtypes.
ValuesIndices writePair(Tensor values, Tensor indices, const ValuesIndices& result, const char* op) {
  writeOut(values, std::get<0>(result), op);
  writeOut(indices, std::get<1>(result), op);
  return {values, indices};
}

// ---- quantile ----

enum class Interpolation { Linear, Lower, Higher, Midpoint, Nearest };

Interpolation parseInterpolation(const std::string& name) {
  if (name == "linear") return Interpolation::Linear;
  if (name == "lower") return Interpolation::Lower;
  if (name == "higher") return Interpolation::Higher;
  if (name == "midpoint") return Interpolation::Midpoint;
  KILN_CHECK(name == "nearest",
             "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got ", name);
  return Interpolation::Nearest;
}

// torch's quantile: sort the reduced elements last, turn q into fractional
// ranks among them (NaN lines rank last: quantile gives NaN; nanquantile
// ranks among the non-NaN ones), round the ranks as `interpolation` says,
// gather, and lerp between the neighbours for linear and midpoint. The
// result is q's dim (when q is 1-D) followed by the reduced shape.
Tensor quantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                const std::string& interpolation_name, bool ignore_nan) {
  KILN_CHECK(self.numel() > 0, "quantile() input tensor must be non-empty");
  KILN_CHECK(q.dim() <= 1, "quantile() q must be a scalar or 1D tensor");
  KILN_CHECK(self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double,
             "quantile() input tensor must be either float or double dtype");
  KILN_CHECK(self.dtype() == q.dtype(), "quantile() q tensor must be same dtype as the input tensor");
  const Interpolation interpolation = parseInterpolation(interpolation_name);
  KILN_CHECK(all(logicalAnd(ge(q, scalarLike(0, q)), le(q, scalarLike(1, q)))).item().toBool(),
             "quantile() q values must be in the range [0, 1]");

  const int64_t d = wrapDim(dim.value_or(0), self.dim());
  DimVector out_shape;
  if (dim && self.dim() > 0) {
    out_shape = self.sizes();
    if (keepdim) {
      out_shape[d] = 1;
    } else {
      out_shape.erase(out_shape.begin() + d);
    }
  } else if (keepdim) {
    out_shape.assign(static_cast<size_t>(self.dim()), 1);
  }

  // The reduced elements sorted along a last dim, the others in out_shape's order.
  const Tensor line = dim ? movedim(self.dim() == 0 ? reshape(self, DimVector{1}) : self, DimVector{d}, DimVector{-1})
                          : reshape(self, DimVector{self.numel()});
  DimVector sorted_shape = out_shape;
  sorted_shape.push_back(line.sizes().back());
  const Tensor sorted = reshape(std::get<0>(sort(line, -1)), sorted_shape);

  const Tensor q_line = reshape(q, DimVector{q.numel()});
  Tensor ranks;
  if (ignore_nan) {
    const Tensor count = sum(logicalNot(isnan(sorted)), DimVector{-1}, true);
    ranks = mul(q_line, sub(count, scalarToTensor(Scalar(int64_t{1}))));
    ranks = maskedFill(ranks, lt(ranks, scalarLike(0, ranks)), Scalar(0.0));
  } else {
    const auto last = static_cast<double>(sorted.sizes().back() - 1);
    ranks = where(any(isnan(sorted), -1, true), scalarLike(last, q), mul(q_line, scalarLike(last, q)));
  }
  if (interpolation == Interpolation::Lower) ranks = floor(ranks);
  if (interpolation == Interpolation::Higher) ranks = ceil(ranks);
  if (interpolation == Interpolation::Nearest) ranks = round(ranks);

  const Tensor below = to(ranks, ScalarType::Long);
  Tensor values = gather(sorted, -1, below);
  if (interpolation == Interpolation::Linear || interpolation == Interpolation::Midpoint) {
    const Tensor weights = interpolation == Interpolation::Midpoint ? scalarLike(0.5, ranks) : sub(ranks, below);
    values = lerp(values, gather(sorted, -1, to(ceil(ranks), ScalarType::Long)), weights);
  }
  // q's dim, last so far, goes first (or away for a 0-dim q).
  const Tensor result = q.dim() == 0 ? squeeze(values, -1) : movedim(values, DimVector{-1}, DimVector{0});
  return contiguous(result);
}

Tensor quantileScalar(const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim,
                      const std::string& interpolation, bool ignore_nan) {
  KILN_CHECK(q >= 0 && q <= 1, "quantile() q must be in the range [0, 1] but got ", q);
  return quantile(self, scalarToTensor(Scalar(q), self.dtype()), dim, keepdim, interpolation, ignore_nan);
}

// ---- aminmax ----

std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) {
    KILN_CHECK(self.numel() > 0,
               "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
    Tensor lo = amin(self), hi = amax(self);
    if (keepdim) {
      const DimVector ones(static_cast<size_t>(self.dim()), 1);
      return {reshape(lo, ones), reshape(hi, ones)};
    }
    return {lo, hi};
  }
  const int64_t d = wrapDim(*dim, self.dim());
  KILN_CHECK_INDEX(self.dim() == 0 || self.sizes()[d] != 0, "aminmax: Expected reduction dim ", d,
                   " to have non-zero size.");
  if (self.dim() == 0 && keepdim) {
    // torch 1.13 reduces a 0-dim tensor as a 1-element vector here: the kept dim has size 1.
    const DimVector one{1};
    return {reshape(self, one), reshape(self, one)};
  }
  const DimVector dims{d};
  return {amin(self, dims, keepdim), amax(self, dims, keepdim)};
}

// ---- cummax, cummin ----

// _cummax_helper / _cummin_helper write into tensors of self's shape.
void writeCumulative(const ValuesIndices& result, Tensor values, Tensor indices, const char* op) {
  KILN_CHECK(values.sizes() == std::get<0>(result).sizes() && indices.sizes() == std::get<1>(result).sizes(), op,
             ": values and indices must have the input's shape");
  copy_(values, std::get<0>(result));
  copy_(indices, std::get<1>(result));
}

ValuesIndices cumulativeOut(const char* op, const ValuesIndices& result, const Tensor& self, Tensor values,
                            Tensor indices) {
  KILN_CHECK(values.dtype() == self.dtype(), "expected scalar_type ", scalarTypeShortName(self.dtype()), " but found ",
             scalarTypeShortName(values.dtype()));
  KILN_CHECK(indices.dtype() == ScalarType::Long, "expected scalar_type Long but found ",
             scalarTypeShortName(indices.dtype()));
  return writePair(values, indices, result, op);
}

Tensor logcumsumexpOut(const Tensor& self, int64_t dim, Tensor out) {
  KILN_CHECK(out.dtype() == self.dtype(), "expected scalar_type ", scalarTypeShortName(self.dtype()), " but found ",
             scalarTypeShortName(out.dtype()));
  return writeOut(out, logcumsumexp(self, dim), "logcumsumexp");
}

// The gradient of a reduction that picked `indices` along dim, as a tensor of `sizes`.
Tensor valueSelectingReductionBackward(const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes,
                                       bool keepdim) {
  Tensor result = zeros(sizes, grad.dtype());
  if (!keepdim && !sizes.empty()) return scatter_(result, dim, unsqueeze(indices, dim), unsqueeze(grad, dim));
  return scatter_(result, dim, indices, grad);
}

Tensor cummaxminBackward(const Tensor& grad, const Tensor& input, const Tensor& indices, int64_t dim) {
  if (input.numel() == 0) return clone(input);
  Tensor result = zeros(input.sizes(), input.dtype());
  return scatterAdd_(result, dim, indices, grad);
}

// ---- diff ----

void checkDiffOperand(const Tensor& self, const OptionalTensor& other, int64_t d) {
  if (!other) return;
  KILN_CHECK(other->dim() == self.dim(), "diff expects prepend or append to be the same dimension as input");
  for (int64_t i = 0; i < other->dim(); ++i) {
    KILN_CHECK(other->sizes()[i] == self.sizes()[i] || i == d,
               "diff expects the shape of tensor to prepend or append to match that of input except along the "
               "differencing dimension; input.size(",
               i, ") = ", self.sizes()[i], ", but got tensor.size(", i, ") = ", other->sizes()[i]);
  }
}

// n-th forward differences along dim of [prepend, self, append] (bool: xor).
Tensor diff(const Tensor& self, int64_t n, int64_t dim, const OptionalTensor& prepend, const OptionalTensor& append) {
  KILN_CHECK(self.dim() >= 1, "diff expects input to be at least one-dimensional");
  const int64_t d = wrapDim(dim, self.dim());
  checkDiffOperand(self, prepend, d);
  checkDiffOperand(self, append, d);
  if (n == 0) return clone(self);
  Tensor result = self;
  if (prepend || append) {
    std::vector<Tensor> parts;
    if (prepend) parts.push_back(*prepend);
    parts.push_back(self);
    if (append) parts.push_back(*append);
    result = cat(parts, d);
  }
  // A negative n, as in torch 1.13, takes no differences.
  const int64_t steps = std::min(n, result.sizes()[d]);
  if (steps <= 0) return clone(result);
  for (int64_t length = result.sizes()[d] - 1, i = 0; i < steps; ++i, --length) {
    const Tensor later = narrow(result, d, 1, length), earlier = narrow(result, d, 0, length);
    result = result.dtype() == ScalarType::Bool ? logicalXor(later, earlier) : sub(later, earlier);
  }
  return result;
}

// ---- cov, corrcoef ----

Tensor cov(const Tensor& self, int64_t correction, const OptionalTensor& fweights, const OptionalTensor& aweights) {
  KILN_CHECK(self.dim() <= 2, "cov(): expected input to have two or fewer dimensions but got an input with ",
             self.dim(), " dimensions");
  KILN_CHECK(self.dtype() != ScalarType::Bool, "cov(): bool dtype is not supported for input");
  // Variables by rows, observations by columns.
  const Tensor in = self.dim() < 2 ? reshape(self, DimVector{1, -1}) : self;
  const int64_t observations = in.sizes()[1];
  // torch's checks, in its order: dims, dtype, count, sign.
  const auto checkWeights = [&](const Tensor& w, const char* name, bool dtype_ok, const char* dtype_kind) {
    KILN_CHECK(w.dim() <= 1, "cov(): expected ", name, " to have one or fewer dimensions but got ", name, " with ",
               w.dim(), " dimensions");
    KILN_CHECK(dtype_ok, "cov(): expected ", name, " to have ", dtype_kind, " dtype but got ", name, " with ",
               scalarTypeShortName(w.dtype()), " dtype");
    KILN_CHECK(w.numel() == observations, "cov(): expected ", name,
               " to have the same numel as there are observations in the input but got ", w.numel(),
               " != ", observations);
    KILN_CHECK(observations == 0 || !lt(amin(w), scalarLike(0, w)).item().toBool(), "cov(): ", name,
               " cannot be negative");
  };
  Tensor w;  // the product of the frequencies and the weights, if any
  if (fweights) {
    checkWeights(*fweights, "fweights", isIntegralType(fweights->dtype(), false), "integral");
    w = *fweights;
  }
  if (aweights) {
    checkWeights(*aweights, "aweights", isFloatingType(aweights->dtype()), "floating point");
    w = w.defined() ? mul(w, *aweights) : *aweights;
  }
  const Tensor w_sum = w.defined() ? sum(w) : scalarToTensor(Scalar(observations), ScalarType::Long);
  KILN_CHECK(!w.defined() || ne(w_sum, scalarLike(0, w_sum)).item().toBool(),
             "cov(): weights sum to zero, can't be normalized");
  const Tensor weighted = w.defined() ? mul(in, w) : in;
  const Tensor avg = div(sum(weighted, DimVector{1}), w_sum);
  Tensor norm_factor;
  if (w.defined() && aweights && correction != 0) {
    norm_factor = sub(w_sum, div(mul(sum(mul(w, *aweights)), scalarToTensor(Scalar(correction))), w_sum));
  } else {
    norm_factor = sub(w_sum, scalarToTensor(Scalar(correction)));
  }
  // Degrees of freedom <= 0: divide by zero (inf and nan), as torch does after warning.
  if (le(norm_factor, scalarLike(0, norm_factor)).item().toBool())
    norm_factor = mul(norm_factor, scalarLike(0, norm_factor));
  const Tensor centered = sub(in, unsqueeze(avg, 1));
  const Tensor c = mm(centered, t(w.defined() ? mul(centered, w) : centered));
  return squeeze(div(c, norm_factor));
}

Tensor corrcoef(const Tensor& self) {
  KILN_CHECK(self.dim() <= 2, "corrcoef(): expected input to have two or fewer dimensions but got an input with ",
             self.dim(), " dimensions");
  Tensor c = cov(self, 1, std::nullopt, std::nullopt);
  // One variable: nan for a covariance of 0, inf or nan, else 1.
  if (c.dim() == 0) return div(c, c);
  const Tensor stddev = sqrt(diagonal(c));
  c = div(c, reshape(stddev, DimVector{-1, 1}));
  c = div(c, reshape(stddev, DimVector{1, -1}));
  return clamp(c, Scalar(-1.0), Scalar(1.0));
}

// ---- dist, cdist, pdist ----

Tensor dist(const Tensor& self, const Tensor& other, const Scalar& p) { return norm(sub(self, other), p); }

// x1 and x2 ([..., r, c]) with their batch dims broadcast together.
std::pair<Tensor, Tensor> expandBatch(const Tensor& x1, const Tensor& x2) {
  const IntArrayRef b1(x1.sizes().data(), static_cast<size_t>(x1.dim() - 2));
  const IntArrayRef b2(x2.sizes().data(), static_cast<size_t>(x2.dim() - 2));
  DimVector s1 = broadcastShapes(b1, b2), s2 = s1;
  s1.push_back(x1.sizes()[x1.dim() - 2]);
  s1.push_back(x1.sizes().back());
  s2.push_back(x2.sizes()[x2.dim() - 2]);
  s2.push_back(x2.sizes().back());
  return {expand(x1, s1), expand(x2, s2)};
}

// cdist's matrix-product path: |a|^2 - 2 a.b + |b|^2 as one product of
// augmented rows, as torch's _euclidean_dist computes it.
Tensor euclideanDist(const Tensor& x1, const Tensor& x2) {
  const Tensor n1 = sum(pow(x1, Scalar(2.0)), DimVector{-1}, true);
  const Tensor n2 = sum(pow(x2, Scalar(2.0)), DimVector{-1}, true);
  const Tensor a = cat(std::vector<Tensor>{mul(x1, scalarLike(-2, x1)), n1, ones(n1.sizes(), n1.dtype())}, -1);
  const Tensor b = cat(std::vector<Tensor>{x2, ones(n2.sizes(), n2.dtype()), n2}, -1);
  return sqrt(clampMin(matmul(a, matrixT(b)), Scalar(1e-30)));
}

// torch takes the product path for p = 2 when asked (mode 1) or, by
// default, when either side has more than 25 rows.
bool cdistUsesMatmul(double p, int64_t mode, int64_t r1, int64_t r2) {
  return p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)));
}

Tensor cdistForward(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  KILN_CHECK(isFloatingType(x1.dtype()),
             "cdist only supports floating-point dtypes, X1 got: ", scalarTypeShortName(x1.dtype()));
  KILN_CHECK(isFloatingType(x2.dtype()),
             "cdist only supports floating-point dtypes, X2 got: ", scalarTypeShortName(x2.dtype()));
  KILN_CHECK(p >= 0, "cdist only supports non-negative p values");
  const int64_t mode = compute_mode.value_or(0);
  KILN_CHECK(mode >= 0 && mode <= 2, "possible modes: 0, 1, 2, but was: ", mode);
  KILN_CHECK(x1.dtype() == x2.dtype(), "expected scalar type ", scalarTypeShortName(x1.dtype()), " but found ",
             scalarTypeShortName(x2.dtype()));
  auto [a, b] = expandBatch(x1, x2);
  const int64_t r1 = a.sizes()[a.dim() - 2], r2 = b.sizes()[b.dim() - 2], c = a.sizes().back();
  DimVector out_shape(a.sizes().begin(), a.sizes().end() - 1);
  out_shape.push_back(r2);
  if (a.numel() == 0 || b.numel() == 0)
    return c == 0 && r1 > 0 && r2 > 0 ? zeros(out_shape, x1.dtype()) : empty(out_shape, x1.dtype());
  if (cdistUsesMatmul(p, mode, r1, r2)) return euclideanDist(a, b);
  const DimVector batched1{-1, r1, c}, batched2{-1, r2, c};
  return reshape(rowDistances(reshape(a, batched1), reshape(b, batched2), p), out_shape);
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  KILN_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  KILN_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  KILN_CHECK(x1.sizes().back() == x2.sizes().back(),
             "X1 and X2 must have the same number of columns. X1: ", x1.sizes().back(), " X2: ", x2.sizes().back());
  return cdistForward(x1, x2, p, compute_mode);
}

// d cdist / d x1 (of x1's batch-broadcast shape; autograd sums it to x1's).
Tensor cdistBackward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p, const Tensor& cdist) {
  auto [a, b] = expandBatch(x1, x2);
  if (p == 0 || a.numel() == 0 || b.numel() == 0) return zeros(a.sizes(), x1.dtype());
  const int64_t r1 = a.sizes()[a.dim() - 2], r2 = b.sizes()[b.dim() - 2], c = a.sizes().back();
  // grad and cdist are [..., r1, r2] in the broadcast batch (the kernel checks their sizes).
  const Tensor result =
      rowDistancesBackward(grad, reshape(a, DimVector{-1, r1, c}), reshape(b, DimVector{-1, r2, c}), p, cdist);
  return reshape(result, a.sizes());
}

void checkPdist(const Tensor& self, double p) {
  KILN_CHECK(self.dim() == 2, "pdist only supports 2D tensors, got: ", self.dim(), "D");
  KILN_CHECK(isFloatingType(self.dtype()), "pdist only supports floating-point dtypes");
  KILN_CHECK(p >= 0, "pdist only supports non-negative p values");
}

Tensor pdistForward(const Tensor& self, double p) {
  checkPdist(self, p);
  const int64_t n = self.sizes()[0], c = self.sizes()[1];
  if (n <= 1) return empty({0}, self.dtype());
  if (c == 0) return zeros({n * (n - 1) / 2}, self.dtype());
  return rowPairDistances(self, p);
}

Tensor pdistBackward(const Tensor& grad, const Tensor& self, double p, const Tensor& pdist) {
  checkPdist(self, p);
  if (p == 0 || self.sizes()[0] <= 1 || self.sizes()[1] == 0) return zeros(self.sizes(), self.dtype());
  return rowPairDistancesBackward(grad, self, p, pdist);
}

// ---- renorm ----

// Each slice along dim whose p-norm exceeds maxnorm scaled to maxnorm.
Tensor renorm(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm) {
  KILN_CHECK(!p.isComplex(), "renorm: p must be real-valued");
  KILN_CHECK(p.toDouble() > 0.0, "renorm: non-positive-norm not supported");
  KILN_CHECK(!maxnorm.isComplex(), "renorm: maxnorm must be real-valued");
  KILN_CHECK(maxnorm.toDouble() >= 0.0, "renorm: expected maxnorm to be >= 0 but got ", maxnorm.toDouble());
  KILN_CHECK(self.dim() > 1, "renorm: input needs at least 2 dimensions, got ", self.dim(), " dimensions");
  KILN_CHECK(isFloatingType(self.dtype()),
             "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
             scalarTypeShortName(self.dtype()));
  const int64_t d = wrapDim(dim, self.dim());
  DimVector others;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i != d) others.push_back(i);
  }
  const Tensor norms = norm(self, Scalar(p.toDouble()), others, true);
  const Tensor limit = scalarLike(maxnorm.toDouble(), norms);
  const Tensor factor = where(gt(norms, limit), div(limit, add(norms, scalarLike(1e-7, norms))), scalarLike(1, norms));
  return mul(self, factor);
}

}  // namespace

KILN_REGISTER_OPS(
    // median, nanmedian: the lower median.
    op("aten::median(Tensor self) -> Tensor", [](const Tensor& self) { return median(self, false); })
        .derivative({"self: _evenly_distribute_nan(grad, self, result)", "grad_fn: MedianBackward0"})
        .shape(shapes::reduceSame),
    op("aten::median.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return writeOut(out, median(self, false), "median"); })
        .shape(shapes::reduceSame),
    op("aten::median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
       [](const Tensor& self, int64_t dim, bool keepdim) { return median(self, dim, keepdim, false); })
        .derivative({"self: _select_backward(grad, self, dim, keepdim, indices)", "non_differentiable: indices",
                     "grad_fn: MedianBackward1"})
        .shape(shapes::reduceWithIndices),
    op("aten::median.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) "
       "-> (Tensor(a!) values, Tensor(b!) indices)",
       [](const Tensor& self, int64_t dim, bool keepdim, Tensor values, Tensor indices) {
         return writePair(values, indices, median(self, dim, keepdim, false), "median");
       })
        .shape(shapes::reduceWithIndices),
    op("aten::nanmedian(Tensor self) -> Tensor", [](const Tensor& self) { return median(self, true); })
        .derivative({"self: _evenly_distribute_nan(grad, self, result)"})
        .shape(shapes::reduceSame),
    op("aten::nanmedian.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return writeOut(out, median(self, true), "nanmedian"); })
        .shape(shapes::reduceSame),
    op("aten::nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
       [](const Tensor& self, int64_t dim, bool keepdim) { return median(self, dim, keepdim, true); })
        .derivative({"self: _select_backward(grad, self, dim, keepdim, indices)", "non_differentiable: indices",
                     "grad_fn: NanmedianBackward1"})
        .shape(shapes::reduceWithIndices),
    op("aten::nanmedian.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, "
       "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
       [](const Tensor& self, int64_t dim, bool keepdim, Tensor values, Tensor indices) {
         return writePair(values, indices, median(self, dim, keepdim, true), "nanmedian");
       })
        .shape(shapes::reduceWithIndices),

    // kthvalue, mode
    op("aten::kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
       [](const Tensor& self, int64_t k, int64_t dim, bool keepdim) { return kthvalue(self, k, dim, keepdim); })
        .derivative({"self: _select_backward(grad, self, dim, keepdim, indices)", "non_differentiable: indices"})
        .shape(shapes::reduceWithIndices),
    op("aten::kthvalue.values(Tensor self, int k, int dim=-1, bool keepdim=False, *, Tensor(a!) values, "
       "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
       [](const Tensor& self, int64_t k, int64_t dim, bool keepdim, Tensor values, Tensor indices) {
         return writePair(values, indices, kthvalue(self, k, dim, keepdim), "kthvalue");
       })
        .shape(shapes::reduceWithIndices),
    op("aten::mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
       [](const Tensor& self, int64_t dim, bool keepdim) { return mode(self, dim, keepdim); })
        .derivative({"self: _select_backward(grad, self, dim, keepdim, indices)", "non_differentiable: indices"})
        .shape(shapes::reduceWithIndices),
    op("aten::mode.values(Tensor self, int dim=-1, bool keepdim=False, *, Tensor(a!) values, Tensor(b!) indices) "
       "-> (Tensor(a!) values, Tensor(b!) indices)",
       [](const Tensor& self, int64_t dim, bool keepdim, Tensor values, Tensor indices) {
         return writePair(values, indices, mode(self, dim, keepdim), "mode");
       })
        .shape(shapes::reduceWithIndices),
    op("aten::value_selecting_reduction_backward(Tensor grad, int dim, Tensor indices, int[] sizes, bool keepdim) "
       "-> Tensor",
       [](const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes, bool keepdim) {
         return valueSelectingReductionBackward(grad, dim, indices, sizes, keepdim);
       })
        // Linear in grad: its adjoint gathers the picked elements back.
        .derivative({"grad: _value_selecting_reduction_double_backward(grad, dim, indices, sizes, keepdim)"}),

    // quantile, nanquantile
    op("aten::quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\") "
       "-> Tensor",
       [](const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
          const std::string& interpolation) { return quantile(self, q, dim, keepdim, interpolation, false); })
        .derivative({"self: _quantile_backward(grad, self, q, dim, keepdim, interpolation, False)",
                     "q: _quantile_q_backward(grad, self, q, dim, interpolation, False)"}),
    op("aten::quantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, "
       "str interpolation=\"linear\") -> Tensor",
       [](const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim, const std::string& interpolation) {
         return quantileScalar(self, q, dim, keepdim, interpolation, false);
       })
        .derivative({"self: _quantile_backward(grad, self, torch.scalar_tensor(q, dtype=self.dtype), dim, keepdim, "
                     "interpolation, False)"}),
    op("aten::quantile.out(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, "
       "str interpolation=\"linear\", Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
          const std::string& interpolation,
          Tensor out) { return writeOut(out, quantile(self, q, dim, keepdim, interpolation, false), "quantile"); }),
    op("aten::quantile.scalar_out(Tensor self, float q, int? dim=None, bool keepdim=False, *, "
       "str interpolation=\"linear\", Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim, const std::string& interpolation,
          Tensor out) {
         return writeOut(out, quantileScalar(self, q, dim, keepdim, interpolation, false), "quantile");
       }),
    op("aten::nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, "
       "str interpolation=\"linear\") -> Tensor",
       [](const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
          const std::string& interpolation) { return quantile(self, q, dim, keepdim, interpolation, true); })
        .derivative({"self: _quantile_backward(grad, self, q, dim, keepdim, interpolation, True)",
                     "q: _quantile_q_backward(grad, self, q, dim, interpolation, True)"}),
    op("aten::nanquantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, "
       "str interpolation=\"linear\") -> Tensor",
       [](const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim, const std::string& interpolation) {
         return quantileScalar(self, q, dim, keepdim, interpolation, true);
       })
        .derivative({"self: _quantile_backward(grad, self, torch.scalar_tensor(q, dtype=self.dtype), dim, keepdim, "
                     "interpolation, True)"}),
    op("aten::nanquantile.out(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, "
       "str interpolation=\"linear\", Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
          const std::string& interpolation,
          Tensor out) { return writeOut(out, quantile(self, q, dim, keepdim, interpolation, true), "nanquantile"); }),
    op("aten::nanquantile.scalar_out(Tensor self, float q, int? dim=None, bool keepdim=False, *, "
       "str interpolation=\"linear\", Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, double q, std::optional<int64_t> dim, bool keepdim, const std::string& interpolation,
          Tensor out) {
         return writeOut(out, quantileScalar(self, q, dim, keepdim, interpolation, true), "nanquantile");
       }),

    // aminmax and its deprecated spelling _aminmax
    op("aten::aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
       [](const Tensor& self, std::optional<int64_t> dim, bool keepdim) { return aminmax(self, dim, keepdim); })
        .notDifferentiable("torch 1.13 has no derivative for aminmax")
        .shape(shapes::reducePair),
    op("aten::aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, Tensor(b!) max) -> "
       "(Tensor(a!) min, Tensor(b!) max)",
       [](const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor min, Tensor max) {
         return writePair(min, max, aminmax(self, dim, keepdim), "aminmax");
       })
        .shape(shapes::reducePair),
    op("aten::_aminmax(Tensor self) -> (Tensor, Tensor)",
       [](const Tensor& self) { return aminmax(self, std::nullopt, false); })
        .notDifferentiable("torch 1.13 has no derivative for _aminmax")
        .shape(shapes::reducePair),
    op("aten::_aminmax.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor, Tensor)",
       [](const Tensor& self, int64_t dim, bool keepdim) { return aminmax(self, dim, keepdim); })
        .notDifferentiable("torch 1.13 has no derivative for _aminmax")
        .shape(shapes::reducePair),
    op("aten::_aminmax.out(Tensor self, *, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& self, Tensor out0, Tensor out1) {
         return writePair(out0, out1, aminmax(self, std::nullopt, false), "_aminmax");
       })
        .shape(shapes::reducePair),
    op("aten::_aminmax.dim_out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out0, Tensor(b!) out1) -> "
       "(Tensor(a!), Tensor(b!))",
       [](const Tensor& self, int64_t dim, bool keepdim, Tensor out0, Tensor out1) {
         return writePair(out0, out1, aminmax(self, dim, keepdim), "_aminmax");
       })
        .shape(shapes::reducePair),

    // cummax, cummin, logcumsumexp
    op("aten::cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)",
       [](const Tensor& self, int64_t dim) { return cummax(self, dim); })
        .derivative({"self: torch.cummaxmin_backward(grad, self, indices, dim)", "non_differentiable: indices"})
        .shape(shapes::sortOp),
    op("aten::cummax.out(Tensor self, int dim, *, Tensor(a!) values, Tensor(b!) indices) -> "
       "(Tensor(a!) values, Tensor(b!) indices)",
       [](const Tensor& self, int64_t dim, Tensor values, Tensor indices) {
         return cumulativeOut("cummax", cummax(self, dim), self, values, indices);
       })
        .shape(shapes::sortOp),
    op("aten::cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)",
       [](const Tensor& self, int64_t dim) { return cummin(self, dim); })
        .derivative({"self: torch.cummaxmin_backward(grad, self, indices, dim)", "non_differentiable: indices"})
        .shape(shapes::sortOp),
    op("aten::cummin.out(Tensor self, int dim, *, Tensor(a!) values, Tensor(b!) indices) -> "
       "(Tensor(a!) values, Tensor(b!) indices)",
       [](const Tensor& self, int64_t dim, Tensor values, Tensor indices) {
         return cumulativeOut("cummin", cummin(self, dim), self, values, indices);
       })
        .shape(shapes::sortOp),
    op("aten::_cummax_helper(Tensor self, Tensor(a!) values, Tensor(b!) indices, int dim) -> ()",
       [](const Tensor& self, Tensor values, Tensor indices, int64_t dim) {
         writeCumulative(cummax(self, dim), values, indices, "_cummax_helper");
       }),
    op("aten::_cummin_helper(Tensor self, Tensor(a!) values, Tensor(b!) indices, int dim) -> ()",
       [](const Tensor& self, Tensor values, Tensor indices, int64_t dim) {
         writeCumulative(cummin(self, dim), values, indices, "_cummin_helper");
       }),
    op("aten::cummaxmin_backward(Tensor grad, Tensor input, Tensor indices, int dim) -> Tensor",
       [](const Tensor& grad, const Tensor& input, const Tensor& indices, int64_t dim) {
         return cummaxminBackward(grad, input, indices, dim);
       })
        // Linear in grad: its adjoint gathers at the indices.
        .derivative({"grad: grad.gather(dim, indices)", "input: torch.zeros_like(input)"}),
    op("aten::logcumsumexp(Tensor self, int dim) -> Tensor",
       [](const Tensor& self, int64_t dim) { return logcumsumexp(self, dim); })
        .derivative({"self: _logcumsumexp_backward(grad, self, result, dim)"})
        .shape(shapes::sameDtype),
    op("aten::logcumsumexp.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, Tensor out) { return logcumsumexpOut(self, dim, out); })
        .shape(shapes::sameDtype),
    op("aten::_logcumsumexp(Tensor self, int dim) -> Tensor",
       [](const Tensor& self, int64_t dim) { return logcumsumexp(self, dim); })
        .notDifferentiable("torch 1.13 differentiates logcumsumexp, not _logcumsumexp")
        .shape(shapes::sameDtype),
    op("aten::_logcumsumexp.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, Tensor out) { return logcumsumexpOut(self, dim, out); })
        .shape(shapes::sameDtype),

    // dist, diff
    op("aten::dist(Tensor self, Tensor other, Scalar p=2) -> Tensor",
       [](const Tensor& self, const Tensor& other, const Scalar& p) { return dist(self, other, p); })
        .derivative({"self: _norm_backward(grad, self - other, result, float(p), None, False)",
                     "other: -_norm_backward(grad, self - other, result, float(p), None, False)"}),
    op("aten::dist.out(Tensor self, Tensor other, Scalar p=2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, const Scalar& p, Tensor out) {
         return writeOut(out, dist(self, other, p), "dist");
       }),
    op("aten::diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor",
       [](const Tensor& self, int64_t n, int64_t dim, const OptionalTensor& prepend, const OptionalTensor& append) {
         return diff(self, n, dim, prepend, append);
       })
        .derivative({"self: _diff_backward(grad, self, n, dim, prepend, append, 1)",
                     "prepend: _diff_backward(grad, self, n, dim, prepend, append, 0)",
                     "append: _diff_backward(grad, self, n, dim, prepend, append, 2)"}),
    op("aten::diff.out(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None, *, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t n, int64_t dim, const OptionalTensor& prepend, const OptionalTensor& append,
          Tensor out) { return writeOut(out, diff(self, n, dim, prepend, append), "diff"); }),

    // cov, corrcoef
    op("aten::cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor",
       [](const Tensor& self, int64_t correction, const OptionalTensor& fweights, const OptionalTensor& aweights) {
         return cov(self, correction, fweights, aweights);
       })
        .derivative({"self: _cov_backward(grad, self, correction, fweights, aweights)",
                     "aweights: _cov_aweights_backward(grad, self, correction, fweights, aweights)"}),
    op("aten::corrcoef(Tensor self) -> Tensor", [](const Tensor& self) { return corrcoef(self); })
        .derivative({"self: _corrcoef_backward(grad, self, result)"}),

    // cdist, pdist and the operators torch composes them of
    op("aten::cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor",
       [](const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
         return cdist(x1, x2, p, compute_mode);
       })
        .derivative({"x1: _cdist_grad_x1(grad, x1, x2, p, compute_mode, result)",
                     "x2: _cdist_grad_x1(grad.mT, x2, x1, p, compute_mode, result.mT)"}),
    op("aten::_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor",
       [](const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
         return cdist(x1, x2, p, compute_mode);
       })
        .derivative({"x1: torch._cdist_backward(grad.contiguous(), x1, x2, p, result)",
                     "x2: torch._cdist_backward(grad.mT.contiguous(), x2, x1, p, result.mT.contiguous())"}),
    op("aten::_cdist_forward.out(Tensor x1, Tensor x2, float p, int? compute_mode, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode, Tensor out) {
         return writeOut(out, cdist(x1, x2, p, compute_mode), "_cdist_forward");
       }),
    op("aten::_cdist_backward(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist) -> Tensor",
       [](const Tensor& grad, const Tensor& x1, const Tensor& x2, double p, const Tensor& cdist) {
         return cdistBackward(grad, x1, x2, p, cdist);
       })
        .notDifferentiable("torch 1.13 has no derivative for _cdist_backward"),
    op("aten::_cdist_backward.out(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& grad, const Tensor& x1, const Tensor& x2, double p, const Tensor& cdist, Tensor out) {
         return writeOut(out, cdistBackward(grad, x1, x2, p, cdist), "_cdist_backward");
       }),
    op("aten::_euclidean_dist(Tensor x1, Tensor x2) -> Tensor",
       [](const Tensor& x1, const Tensor& x2) { return euclideanDist(x1, x2); })
        .derivative({"x1: _euclidean_dist_grad_x1(grad, x1, x2, result)",
                     "x2: _euclidean_dist_grad_x1(grad.mT, x2, x1, result.mT)"}),
    op("aten::_euclidean_dist.out(Tensor x1, Tensor x2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& x1, const Tensor& x2, Tensor out) {
         return writeOut(out, euclideanDist(x1, x2), "_euclidean_dist");
       }),
    op("aten::pdist(Tensor self, float p=2.) -> Tensor",
       [](const Tensor& self, double p) { return pdistForward(contiguous(self), p); })
        .derivative({"self: torch._pdist_backward(grad, self, p, result)"}),
    op("aten::_pdist_forward(Tensor self, float p=2.) -> Tensor",
       [](const Tensor& self, double p) { return pdistForward(self, p); })
        .derivative({"self: torch._pdist_backward(grad, self, p, result)"}),
    op("aten::_pdist_forward.out(Tensor self, float p=2., *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, double p, Tensor out) { return writeOut(out, pdistForward(self, p), "_pdist_forward"); }),
    op("aten::_pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor",
       [](const Tensor& grad, const Tensor& self, double p, const Tensor& pdist) {
         return pdistBackward(grad, self, p, pdist);
       })
        .notDifferentiable("torch 1.13 has no derivative for _pdist_backward"),
    op("aten::_pdist_backward.out(Tensor grad, Tensor self, float p, Tensor pdist, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, double p, const Tensor& pdist, Tensor out) {
         return writeOut(out, pdistBackward(grad, self, p, pdist), "_pdist_backward");
       }),

    // renorm
    op("aten::renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor",
       [](const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm) {
         return renorm(self, p, dim, maxnorm);
       })
        .derivative({"self: _renorm_backward(grad, self, float(p), dim, float(maxnorm))"})
        .shape(shapes::sameDtype),
    op("aten::renorm.out(Tensor self, Scalar p, int dim, Scalar maxnorm, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm, Tensor out) {
         return writeOut(out, renorm(self, p, dim, maxnorm), "renorm");
       })
        .shape(shapes::sameDtype),
    op("aten::renorm_(Tensor(a!) self, Scalar p, int dim, Scalar maxnorm) -> Tensor(a!)", [](Tensor self,
                                                                                             const Scalar& p,
                                                                                             int64_t dim,
                                                                                             const Scalar& maxnorm) {
      return copy_(self, renorm(self, p, dim, maxnorm));
    }).shape(shapes::sameDtype), );

}  // namespace kiln
