// Loss functions. The pointwise ones compute torch 1.13's element formula
// over the broadcast inputs in one pass, then reduce with kiln's sum/mean;
// nll_loss walks (N, C, S) views with the target; cross entropy is
// log_softmax and nll_loss composed as in torch (label smoothing and
// class-probability targets included).
#include "kiln/tensor/loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/index.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

enum Reduction : int64_t { kNone = 0, kMean = 1, kSum = 2 };

Tensor applyReduction(const Tensor& loss, int64_t reduction) {
  if (reduction == kMean) return mean(loss);
  if (reduction == kSum) return sum(loss);
  return loss;
}

Tensor wrapped(double v) { return scalarToTensor(Scalar(v)); }

bool present(const std::optional<Tensor>& t) { return t && t->defined(); }

// out[i] = f(a[i], b[i], c[i]) over the broadcast of up to three operands
// (c optional), in `dtype`.
template <typename F>
Tensor elementwise3(const char* op, ScalarType dtype, const Tensor& a, const Tensor& b, const Tensor* c, const F& f) {
  KILN_CHECK(dtype == ScalarType::Float || dtype == ScalarType::Double, "\"", op, "\" not implemented for '",
             scalarTypeShortName(dtype), "'");
  DimVector shape = broadcastShapes(a.sizes(), b.sizes(), op);
  if (c) shape = broadcastShapes(shape, c->sizes(), op);
  auto dense = [&](const Tensor& t) { return contiguous(expand(to(t, dtype), shape)); };
  const Tensor da = dense(a), db = dense(b);
  const Tensor dc = c ? dense(*c) : Tensor();
  Tensor out = empty(shape, dtype);
  KILN_DISPATCH_FLOATING_TYPES(dtype, op, [&] {
    using T = scalar_t;
    const T* pa = da.data<T>();
    const T* pb = db.data<T>();
    const T* pc = c ? dc.data<T>() : nullptr;
    T* po = out.data<T>();
    parallelFor(0, out.numel(), kGrainSize, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) po[i] = f(pa[i], pb[i], pc ? pc[i] : T(0));
    });
  });
  return out;
}

template <typename F>
Tensor pointwiseLoss(const char* op, const Tensor& self, const Tensor& target, int64_t reduction, const F& f) {
  const ScalarType dtype = promoteTypes(self.dtype(), target.dtype());
  return applyReduction(elementwise3(op, dtype, self, target, nullptr, f), reduction);
}

// nll over a contiguous (N, C, S) input and (N * S) targets: per-element
// losses (reduction none) or the reduced value, and the total weight.
std::tuple<Tensor, Tensor> nllCore(const Tensor& input, int64_t n, int64_t c, int64_t s, const Tensor& target,
                                   const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                                   IntArrayRef none_shape) {
  KILN_CHECK(input.dtype() == ScalarType::Float || input.dtype() == ScalarType::Double,
             "\"nll_loss_out_frame\" not implemented for '", scalarTypeShortName(input.dtype()), "'");
  KILN_CHECK(target.dtype() == ScalarType::Long || target.dtype() == ScalarType::Byte,
             "expected scalar type Long but found ", scalarTypeShortName(target.dtype()));
  const Tensor x = contiguous(input);
  const Tensor t = contiguous(to(target, ScalarType::Long));
  const Tensor w = present(weight) ? contiguous(to(*weight, input.dtype())) : Tensor();
  const int64_t* tp = t.data<int64_t>();
  const int64_t count = n * s;
  for (int64_t i = 0; i < count; ++i) {
    KILN_CHECK_INDEX(tp[i] == ignore_index || (tp[i] >= 0 && tp[i] < c), "Target ", tp[i], " is out of bounds.");
  }
  Tensor total_weight = empty({}, input.dtype());
  Tensor out = reduction == kNone ? empty(none_shape, input.dtype()) : empty({}, input.dtype());
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), "nll_loss", [&] {
    using T = scalar_t;
    const T* xp = x.data<T>();
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    auto element = [&](int64_t i, T& loss, T& wt) {
      const int64_t cls = tp[i];
      if (cls == ignore_index) {
        loss = 0;
        wt = 0;
        return;
      }
      const int64_t b = i / s, k = i % s;
      wt = wp ? wp[cls] : T(1);
      loss = -xp[(b * c + cls) * s + k] * wt;
    };
    if (reduction == kNone) {
      T* op = out.data<T>();
      T total = 0;
      for (int64_t i = 0; i < count; ++i) {
        T wt;
        element(i, op[i], wt);
        total += wt;
      }
      *total_weight.data<T>() = total;
      return;
    }
    double loss_sum = 0, weight_sum = 0;
    for (int64_t i = 0; i < count; ++i) {
      T loss, wt;
      element(i, loss, wt);
      loss_sum += static_cast<double>(loss);
      weight_sum += static_cast<double>(wt);
    }
    const T total = static_cast<T>(weight_sum);
    T value = static_cast<T>(loss_sum);
    if (count == 0) {
      value = reduction == kMean ? std::numeric_limits<T>::quiet_NaN() : T(0);
    } else if (reduction == kMean) {
      value = static_cast<T>(loss_sum / static_cast<double>(total));
    }
    *out.data<T>() = value;
    *total_weight.data<T>() = total;
  });
  return {out, total_weight};
}

void checkNllWeight(const std::optional<Tensor>& weight, int64_t classes) {
  KILN_CHECK(!present(weight) || (weight->dim() == 1 && weight->numel() == classes),
             "weight tensor should be defined either for all ", classes,
             " classes or no classes but got weight tensor of shape: ", shapeString(weight->sizes()));
}

// weight viewed to broadcast along the class dim of an input of `rank` dims.
Tensor classWeight(const Tensor& weight, int64_t rank, int64_t class_dim) {
  if (rank <= 1) return weight;
  DimVector shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(class_dim)] = weight.size(0);
  return view(weight, shape);
}

}  // namespace

Tensor mseLoss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return pointwiseLoss("mse_cpu", self, target, reduction, [](auto a, auto b, auto) {
    const auto d = a - b;
    return d * d;
  });
}

Tensor l1Loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  // Composite in torch (abs of the difference, any dtype the ops take).
  return applyReduction(abs(sub(self, target)), reduction);
}

Tensor smoothL1Loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  KILN_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  if (beta == 0) return l1Loss(self, target, reduction);
  return pointwiseLoss("smooth_l1_cpu", self, target, reduction, [beta](auto a, auto b, auto) {
    using T = decltype(a);
    const T bv = static_cast<T>(beta);
    const T z = std::abs(a - b);
    return z < bv ? T(0.5) * z * z / bv : z - T(0.5) * bv;
  });
}

Tensor huberLoss(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  KILN_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  // Unlike the other pointwise losses, torch's huber_loss keeps self's dtype.
  const ScalarType dtype = isFloatingType(self.dtype()) ? self.dtype() : promoteTypes(self.dtype(), target.dtype());
  Tensor loss = elementwise3("huber_cpu", dtype, self, target, nullptr, [delta](auto a, auto b, auto) {
    using T = decltype(a);
    const T dv = static_cast<T>(delta);
    const T z = std::abs(a - b);
    return z < dv ? T(0.5) * z * z : dv * (z - T(0.5) * dv);
  });
  return applyReduction(loss, reduction);
}

std::tuple<Tensor, Tensor> nllLossForward(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                          int64_t reduction, int64_t ignore_index) {
  KILN_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  KILN_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch_dim = self.dim() == 1 && target.dim() == 0;
  KILN_CHECK(no_batch_dim || self.size(0) == target.size(0), "size mismatch (got input: ", shapeString(self.sizes()),
             ", target: ", shapeString(target.sizes()), ")");
  const int64_t classes = self.size(-1);
  checkNllWeight(weight, classes);
  const int64_t n = self.dim() == 1 ? 1 : self.size(0);
  const DimVector none_shape = self.dim() == 2 ? DimVector{n} : DimVector{};
  // A 1-d input with reduction none gives a 0-dim result, as in torch.
  return nllCore(self, n, classes, 1, target, weight, reduction, ignore_index, none_shape);
}

std::tuple<Tensor, Tensor> nllLoss2dForward(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t ignore_index) {
  KILN_CHECK(target.dim() == 3,
             "only batches of spatial targets supported (3D tensors) but got targets of dimension: ", target.dim());
  KILN_CHECK(self.dim() == 4,
             "only batches of spatial inputs supported (4D tensors), but got input of dimension: ", self.dim());
  KILN_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) && self.size(3) == target.size(2),
             "size mismatch (got input: ", shapeString(self.sizes()), " , target: ", shapeString(target.sizes()));
  const int64_t classes = self.size(1);
  checkNllWeight(weight, classes);
  return nllCore(self, self.size(0), classes, self.size(2) * self.size(3), target, weight, reduction, ignore_index,
                 target.sizes());
}

Tensor nllLossNd(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, int64_t reduction,
                 int64_t ignore_index) {
  KILN_CHECK(self.dim() >= 1, "Expected 1 or more dimensions (got ", self.dim(), ")");
  KILN_CHECK(self.dim() == 1 || (target.dim() >= 1 && self.size(0) == target.size(0)), "Expected input batch_size (",
             self.size(0), ") to match target batch_size (", target.dim() >= 1 ? target.size(0) : 0, ").");
  if (self.dim() <= 2) return std::get<0>(nllLossForward(self, target, weight, reduction, ignore_index));
  if (self.dim() == 4) return std::get<0>(nllLoss2dForward(self, target, weight, reduction, ignore_index));
  // 3 or more than 4 dims: (N, C, 1, rest) and (N, 1, rest).
  const int64_t n = self.size(0), c = self.size(1);
  DimVector out_size{n};
  for (int64_t d = 2; d < self.dim(); ++d) out_size.push_back(self.size(d));
  bool match = target.dim() == self.dim() - 1;
  for (int64_t d = 1; match && d < target.dim(); ++d) match = target.size(d) == self.size(d + 1);
  KILN_CHECK(match, "Expected target size ", shapeString(out_size), ", got ", shapeString(target.sizes()));
  const Tensor in = self.numel() > 0 ? reshape(contiguous(self), {n, c, 1, -1}) : reshape(self, {n, c, 0, 0});
  const Tensor tg = target.numel() > 0 ? reshape(contiguous(target), {n, 1, -1}) : reshape(target, {n, 0, 0});
  Tensor out = std::get<0>(nllLoss2dForward(in, tg, weight, reduction, ignore_index));
  return reduction == kNone ? view(out, out_size) : out;
}

Tensor crossEntropyLoss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                        int64_t reduction, int64_t ignore_index, double label_smoothing) {
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const bool same_shape = self.sizes().size() == target.sizes().size() &&
                          std::equal(self.sizes().begin(), self.sizes().end(), target.sizes().begin());
  if (same_shape) {
    // Class probabilities.
    KILN_CHECK(isFloatingType(target.dtype()), "Expected floating point type for target with class probabilities, got ",
               scalarTypeShortName(target.dtype()));
    KILN_CHECK(ignore_index < 0, "ignore_index is not supported for floating point target");
    const int64_t classes = self.size(class_dim);
    KILN_CHECK(!present(weight) || (weight->dim() == 1 && weight->numel() == classes),
               "cross_entropy: weight tensor should be defined either for all ", classes,
               " classes or no classes but got weight tensor of shape: ", shapeString(weight->sizes()));
    const Tensor input = logSoftmax(self, class_dim, self.dtype());
    Tensor t = target;
    if (label_smoothing > 0.0) {
      KILN_CHECK(label_smoothing <= 1.0, "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
      t = add(mul(target, wrapped(1 - label_smoothing)), wrapped(label_smoothing / static_cast<double>(classes)));
    }
    Tensor prod = mul(input, t);
    if (present(weight)) prod = mul(prod, classWeight(*weight, input.dim(), class_dim));
    if (reduction == kMean) {
      if (input.numel() == 0) {
        Tensor nan_result = neg(sum(prod));
        fill_(nan_result, Scalar(std::numeric_limits<double>::quiet_NaN()));
        return nan_result;
      }
      return div(neg(sum(prod)), wrapped(static_cast<double>(input.numel() / classes)));
    }
    if (reduction == kSum) return neg(sum(prod));
    const DimVector dims{class_dim};
    return neg(sum(prod, IntArrayRef(dims)));
  }
  if (label_smoothing > 0.0) {
    KILN_CHECK(label_smoothing <= 1.0, "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
    const Tensor input = logSoftmax(self, class_dim, self.dtype());
    const Tensor nll = nllLossNd(input, target, weight, reduction, ignore_index);
    const int64_t classes = input.size(class_dim);
    const DimVector dims{class_dim};
    Tensor smooth = present(weight)
                        ? neg(sum(mul(input, classWeight(*weight, input.dim(), class_dim)), IntArrayRef(dims)))
                        : neg(sum(input, IntArrayRef(dims)));
    const Tensor ignore_mask = eq(target, scalarToTensor(Scalar(ignore_index)));
    maskedFill_(smooth, ignore_mask, Scalar(0.0));
    Tensor ret;
    if (reduction == kMean) {
      if (present(weight)) {
        const Tensor kept = reshape(maskedSelect(target, logicalNot(ignore_mask)), {-1});
        ret = div(sum(smooth), sum(indexSelect(*weight, 0, kept)));
      } else {
        ret = div(sum(smooth), sum(logicalNot(ignore_mask)));
      }
    } else if (reduction == kSum) {
      ret = sum(smooth);
    } else {
      ret = smooth;
    }
    return add(mul(nll, wrapped(1 - label_smoothing)),
               mul(ret, wrapped(label_smoothing / static_cast<double>(classes))));
  }
  return nllLossNd(logSoftmax(self, class_dim, self.dtype()), target, weight, reduction, ignore_index);
}

Tensor binaryCrossEntropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                          int64_t reduction) {
  KILN_CHECK(self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double,
             "\"binary_cross_entropy\" not implemented for '", scalarTypeShortName(self.dtype()), "'");
  KILN_CHECK(target.dtype() == self.dtype(), "Found dtype ", scalarTypeShortName(target.dtype()), " but expected ",
             scalarTypeShortName(self.dtype()));
  Tensor loss = elementwise3("binary_cross_entropy", self.dtype(), self, target, nullptr, [](auto x, auto y, auto) {
    using T = decltype(x);
    KILN_CHECK(x >= T(0) && x <= T(1), "all elements of input should be between 0 and 1");
    const T log_x = std::max(std::log(x), T(-100));
    const T log_1mx = std::max(std::log1p(-x), T(-100));
    return (y - T(1)) * log_1mx - y * log_x;
  });
  if (present(weight)) loss = mul(loss, *weight);
  return applyReduction(loss, reduction);
}

Tensor binaryCrossEntropyWithLogits(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                    const std::optional<Tensor>& pos_weight, int64_t reduction) {
  const ScalarType dtype = promoteTypes(self.dtype(), target.dtype());
  Tensor loss;
  if (present(pos_weight)) {
    loss = elementwise3(
        "binary_cross_entropy_with_logits", dtype, self, target, &*pos_weight, [](auto x, auto y, auto pw) {
          using T = decltype(x);
          const T max_val = std::max(-x, T(0));
          const T log_weight = (pw - T(1)) * y + T(1);
          return (T(1) - y) * x + log_weight * (std::log(std::exp(-max_val) + std::exp(-x - max_val)) + max_val);
        });
  } else {
    loss = elementwise3("binary_cross_entropy_with_logits", dtype, self, target, nullptr, [](auto x, auto y, auto) {
      using T = decltype(x);
      const T max_val = std::max(-x, T(0));
      return (T(1) - y) * x + max_val + std::log(std::exp(-max_val) + std::exp(-x - max_val));
    });
  }
  if (present(weight)) loss = mul(loss, *weight);
  return applyReduction(loss, reduction);
}

Tensor klDiv(const Tensor& self, const Tensor& target, int64_t reduction, bool log_target) {
  KILN_CHECK(!isIntegralType(self.dtype(), true) && !isIntegralType(target.dtype(), true),
             "kl_div: Integral inputs not supported.");
  const ScalarType dtype = promoteTypes(self.dtype(), target.dtype());
  Tensor loss;
  if (log_target) {
    loss = elementwise3("kl_div", dtype, self, target, nullptr,
                        [](auto x, auto y, auto) { return std::exp(y) * (y - x); });
  } else {
    loss = elementwise3("kl_div", dtype, self, target, nullptr, [](auto x, auto y, auto) {
      using T = decltype(x);
      // xlogy(y, y) - y * x, with xlogy(0, y) = 0 unless y is NaN.
      const T xlogy = std::isnan(y) ? y : (y == T(0) ? T(0) : y * std::log(y));
      return xlogy - y * x;
    });
  }
  return applyReduction(loss, reduction);
}

}  // namespace kiln
