// multi_margin_loss, multilabel_margin_loss and max_unpool (margin_loss.h),
// sample by sample as torch 1.13's CPU kernels: per-sample sums in the
// input's dtype, the batch total in double (torch's accumulate type on the
// CPU), so that the results agree with torch's to the last bit where the
// order of additions matters.
#include "kiln/tensor/margin_loss.h"

#include <algorithm>
#include <string>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

enum : int64_t { kNone = 0, kMean = 1 };

void checkFloating(const Tensor& self, const char* kernel) {
  KILN_CHECK(self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double, "\"", kernel,
             "\" not implemented for '", scalarTypeShortName(self.dtype()), "'");
}

void checkLongTarget(const Tensor& target) {
  KILN_CHECK(target.dtype() == ScalarType::Long, "expected scalar type Long but found ",
             scalarTypeShortName(target.dtype()));
}

// (samples, classes) of a margin loss's input: a 0-dim input is one sample
// of one class, a vector one sample.
std::pair<int64_t, int64_t> marginLossDims(const Tensor& self) {
  const int64_t ndims = self.dim();
  KILN_CHECK(
      (ndims == 2 && self.size(1) != 0) || (ndims == 1 && self.size(0) != 0) || ndims == 0,
      "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ", shapeString(self.sizes()));
  return {ndims <= 1 ? 1 : self.size(0), ndims == 0 ? 1 : self.size(ndims - 1)};
}

// Scales each sample's gradient by grad_output: one value when the loss was
// reduced (or is a single 0-dim loss), else one per sample.
template <typename T>
void scaleByGradOutput(T* grad_input, const Tensor& grad_output, int64_t reduction, int64_t nframe, int64_t dim) {
  const Tensor g = contiguous(to(grad_output, grad_output.dtype()));
  const T* gp = g.data<T>();
  const bool single = reduction != kNone || grad_output.dim() == 0;
  KILN_CHECK(single ? g.numel() == 1 : g.numel() == nframe, "grad_output has ", g.numel(), " elements, expected ",
             single ? 1 : nframe);
  for (int64_t t = 0; t < nframe; ++t) {
    const T scale = single ? gp[0] : gp[t];
    for (int64_t d = 0; d < dim; ++d) grad_input[t * dim + d] *= scale;
  }
}

struct MultiMargin {
  int64_t nframe, dim, p;
  Tensor input, target, weight;
};

MultiMargin prepareMultiMargin(const Tensor& self, const Tensor& target, const Scalar& p,
                               const std::optional<Tensor>& weight) {
  checkFloating(self, "multi_margin_loss_cpu_kernel");
  checkLongTarget(target);
  const int64_t power = p.toLong();
  KILN_CHECK(power == 1 || power == 2, "only p == 1 and p == 2 supported");
  const auto [nframe, dim] = marginLossDims(self);
  KILN_CHECK(target.dim() <= 1 && target.numel() == nframe,
             "inconsistent target size, got: ", shapeString(target.sizes()));
  const bool weighted = weight && weight->defined();
  KILN_CHECK(!weighted || weight->numel() == dim, "inconsistent weight size, expected ", dim, " but got ",
             shapeString(weight->sizes()));
  const Tensor t = contiguous(target);
  const int64_t* tp = t.data<int64_t>();
  for (int64_t i = 0; i < nframe; ++i) KILN_CHECK(tp[i] >= 0 && tp[i] < dim, "target out of range");
  return {nframe, dim, power, contiguous(self), t, weighted ? contiguous(to(*weight, self.dtype())) : Tensor()};
}

}  // namespace

Tensor multiMarginLoss(const Tensor& self, const Tensor& target, const Scalar& p, const Scalar& margin,
                       const std::optional<Tensor>& weight, int64_t reduction) {
  const MultiMargin m = prepareMultiMargin(self, target, p, weight);
  const bool per_sample = reduction == kNone && target.dim() > 0;
  Tensor output = per_sample ? empty({m.nframe}, self.dtype()) : empty({}, self.dtype());
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "multi_margin_loss", [&] {
    using T = scalar_t;
    const T* in = m.input.data<T>();
    const int64_t* tp = m.target.data<int64_t>();
    const T* wp = m.weight.defined() ? m.weight.data<T>() : nullptr;
    const T mg = margin.to<T>();
    T* out = output.data<T>();
    double total = 0;
    for (int64_t t = 0; t < m.nframe; ++t) {
      const T* row = in + t * m.dim;
      const int64_t target_idx = tp[t];
      T sum = 0;
      for (int64_t d = 0; d < m.dim; ++d) {
        if (d == target_idx) continue;
        const T z = mg - row[target_idx] + row[d];
        if (z > 0) {
          T h = m.p == 1 ? z : z * z;
          if (wp) h *= wp[target_idx];
          sum += h;
        }
      }
      sum /= static_cast<T>(m.dim);
      if (per_sample) {
        out[t] = sum;
      } else {
        total += sum;
      }
    }
    if (!per_sample) out[0] = static_cast<T>(reduction == kMean ? total / static_cast<double>(m.nframe) : total);
  });
  return output;
}

Tensor multiMarginLossBackward(const Tensor& grad_output, const Tensor& self, const Tensor& target, const Scalar& p,
                               const Scalar& margin, const std::optional<Tensor>& weight, int64_t reduction) {
  const MultiMargin m = prepareMultiMargin(self, target, p, weight);
  Tensor grad_input = zeros(self.sizes(), self.dtype());
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "multi_margin_loss_backward", [&] {
    using T = scalar_t;
    const T* in = m.input.data<T>();
    const int64_t* tp = m.target.data<int64_t>();
    const T* wp = m.weight.defined() ? m.weight.data<T>() : nullptr;
    const T mg = margin.to<T>();
    const T g = static_cast<T>(reduction == kMean ? 1. / static_cast<double>(m.nframe * m.dim)
                                                  : 1. / static_cast<double>(m.dim));
    T* gi = grad_input.data<T>();
    for (int64_t t = 0; t < m.nframe; ++t) {
      const T* row = in + t * m.dim;
      T* grad_row = gi + t * m.dim;
      const int64_t target_idx = tp[t];
      T grad_target = 0;
      for (int64_t d = 0; d < m.dim; ++d) {
        if (d == target_idx) continue;
        const T z = mg - row[target_idx] + row[d];
        if (z > 0) {
          T h = m.p == 1 ? g : 2 * g * z;
          if (wp) h *= wp[target_idx];
          grad_target -= h;
          grad_row[d] = h;
        }
      }
      grad_row[target_idx] = grad_target;
    }
    scaleByGradOutput(gi, to(grad_output, self.dtype()), reduction, m.nframe, m.dim);
  });
  return grad_input;
}

namespace {

struct MultiLabel {
  int64_t nframe, dim;
  Tensor input, target;
};

MultiLabel prepareMultiLabel(const Tensor& self, const Tensor& target) {
  checkFloating(self, "multilabel_margin_loss_forward_out_frame");
  checkLongTarget(target);
  const auto [nframe, dim] = marginLossDims(self);
  const bool consistent = self.dim() <= 1 ? target.dim() <= 1 && target.numel() == dim
                                          : target.dim() == 2 && target.size(0) == nframe && target.size(1) == dim;
  KILN_CHECK(consistent, "inconsistent size ", shapeString(target.sizes()), " for argument #2 'target'");
  const Tensor t = contiguous(target);
  const int64_t* tp = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    KILN_CHECK(tp[i] >= -1 && tp[i] < dim, "argument #2 'target' is out of range");
  }
  return {nframe, dim, contiguous(self), t};
}

// Calls f(target_class, other_class) for each pair of a sample's target
// class (in the target's order, up to the first -1) and a class that is
// not one of its targets.
template <typename Mask, typename F>
void forEachMarginPair(const int64_t* target, const Mask& is_target, int64_t dim, const F& f) {
  for (int64_t dt = 0; dt < dim && target[dt] >= 0; ++dt) {
    for (int64_t d = 0; d < dim; ++d) {
      if (!is_target[d]) f(target[dt], d);
    }
  }
}

}  // namespace

std::tuple<Tensor, Tensor> multilabelMarginLossForward(const Tensor& self, const Tensor& target, int64_t reduction) {
  const MultiLabel m = prepareMultiLabel(self, target);
  const bool per_sample = reduction == kNone && target.dim() > 1;
  Tensor output = per_sample ? empty({m.nframe}, self.dtype()) : empty({}, self.dtype());
  Tensor is_target = zeros(target.sizes(), self.dtype());
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "multilabel_margin_loss", [&] {
    using T = scalar_t;
    const T* in = m.input.data<T>();
    const int64_t* tp = m.target.data<int64_t>();
    T* out = output.data<T>();
    T* mask_out = is_target.data<T>();
    double total = 0;
    for (int64_t t = 0; t < m.nframe; ++t) {
      const T* row = in + t * m.dim;
      const int64_t* targets = tp + t * m.dim;
      // torch marks the targets in is_target first, then reads the marks.
      T* mask = mask_out + t * m.dim;
      for (int64_t dt = 0; dt < m.dim && targets[dt] >= 0; ++dt) mask[targets[dt]] = T(1);
      double sum = 0;
      forEachMarginPair(targets, mask, m.dim, [&](int64_t target_class, int64_t d) {
        const T z = 1 - row[target_class] + row[d];
        if (z > 0) sum += z;
      });
      if (per_sample) {
        out[t] = static_cast<T>(static_cast<T>(sum) / static_cast<T>(m.dim));
      } else {
        total += sum;
      }
    }
    if (!per_sample) {
      total /= static_cast<double>(m.dim);
      if (reduction == kMean) total /= static_cast<double>(m.nframe);
      out[0] = static_cast<T>(total);
    }
  });
  return {output, is_target};
}

Tensor multilabelMarginLossBackward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                    int64_t reduction, const Tensor& is_target) {
  const MultiLabel m = prepareMultiLabel(self, target);
  KILN_CHECK(is_target.sizes() == target.sizes(), "inconsistent is_target size: ", shapeString(is_target.sizes()),
             " for target of size: ", shapeString(target.sizes()));
  Tensor grad_input = zeros(self.sizes(), self.dtype());
  const Tensor mask = contiguous(to(is_target, self.dtype()));
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "multilabel_margin_loss_backward", [&] {
    using T = scalar_t;
    const T* in = m.input.data<T>();
    const int64_t* tp = m.target.data<int64_t>();
    const T* mp = mask.data<T>();
    const T g = static_cast<T>(reduction == kMean ? 1. / static_cast<double>(m.nframe * m.dim)
                                                  : 1. / static_cast<double>(m.dim));
    T* gi = grad_input.data<T>();
    for (int64_t t = 0; t < m.nframe; ++t) {
      const T* row = in + t * m.dim;
      T* grad_row = gi + t * m.dim;
      forEachMarginPair(tp + t * m.dim, mp + t * m.dim, m.dim, [&](int64_t target_class, int64_t d) {
        const T z = 1 - row[target_class] + row[d];
        if (z > 0) {
          grad_row[target_class] -= g;
          grad_row[d] += g;
        }
      });
    }
    scaleByGradOutput(gi, to(grad_output, self.dtype()), reduction, m.nframe, m.dim);
  });
  return grad_input;
}

Tensor maxUnpool(const Tensor& self, const Tensor& indices, IntArrayRef output_size) {
  const int64_t spatial = static_cast<int64_t>(output_size.size());
  const char* name = spatial == 2 ? "max_unpooling2d_forward_out_cpu()" : "max_unpooling3d_forward_out_cpu()";
  KILN_CHECK(self.sizes() == indices.sizes(), "Expected shape of indices to be same as that of the input tensor (",
             shapeString(self.sizes()), ") but got indices tensor with shape: ", shapeString(indices.sizes()));
  for (int64_t i = 1; i < self.dim(); ++i) {
    KILN_CHECK(self.size(i) > 0, name, ": Expected input to have non-zero size for non-batch dimensions, but got ",
               shapeString(self.sizes()), " with dimension ", i, " being empty.");
  }
  // (planes, elements per input plane) -> (planes, elements per output plane)
  const int64_t batch_dims = self.dim() - spatial;
  int64_t out_plane = 1;
  for (int64_t s : output_size) out_plane *= s;
  int64_t in_plane = 1;
  for (int64_t d = batch_dims; d < self.dim(); ++d) in_plane *= self.size(d);
  const int64_t planes = in_plane == 0 ? 0 : self.numel() / in_plane;
  DimVector out_sizes;
  for (int64_t d = 0; d < batch_dims; ++d) out_sizes.push_back(self.size(d));
  for (int64_t s : output_size) out_sizes.push_back(s);

  Tensor output = zeros(out_sizes, self.dtype());
  const Tensor input = contiguous(self);
  const Tensor index = contiguous(indices);
  const int64_t* ip = index.data<int64_t>();
  // torch reports the last invalid index it meets.
  for (int64_t i = index.numel() - 1; i >= 0; --i) {
    if (ip[i] >= 0 && ip[i] < out_plane) continue;
    std::string volume;
    for (size_t k = 0; k < output_size.size(); ++k) {
      if (k) volume.push_back('x');
      volume.append(std::to_string(output_size[k]));
    }
    KILN_CHECK(false, "Found an invalid max index: ", ip[i], " (output volumes are of size ", volume);
  }
  KILN_DISPATCH_ALL_TYPES(self.dtype(), "max_unpool", [&] {
    const scalar_t* in = input.data<scalar_t>();
    scalar_t* out = output.data<scalar_t>();
    for (int64_t plane = 0; plane < planes; ++plane) {
      for (int64_t i = 0; i < in_plane; ++i) {
        out[plane * out_plane + ip[plane * in_plane + i]] = in[plane * in_plane + i];
      }
    }
  });
  return output;
}

}  // namespace kiln
