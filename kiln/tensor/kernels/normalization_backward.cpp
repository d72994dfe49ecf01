// Normalization backward (normalization_backward.h), composed of tensor
// operations. With x_hat = (x - mean) * invstd over each normalized set of
// n elements and g the gradient of x_hat (the output gradient times the
// weight): dx = invstd * (g - mean(g) - x_hat * mean(g * x_hat)); with fixed
// statistics (batch norm in eval mode) dx = g * invstd.
#include "kiln/tensor/normalization_backward.h"

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/kernels/vec.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

bool present(const std::optional<Tensor>& t) { return t && t->defined() && t->numel() > 0; }

// dx for statistics computed from x over `dims`.
Tensor normalizedInputGrad(const Tensor& g, const Tensor& x_hat, const Tensor& invstd, IntArrayRef dims) {
  Tensor centered = sub(g, mean(g, dims, true));
  Tensor projection = mul(x_hat, mean(mul(g, x_hat), dims, true));
  return mul(sub(centered, projection), invstd);
}

// Batch norm backward over a contiguous [n, c, inner] input, two passes per
// channel: the sums of grad and grad * (x - mean), then dx. As torch's CPU
// kernel: dweight = sum(grad * (x - mean)) * invstd, dbias = sum(grad), and
// in training dx = (grad - sum(grad) / m - (x - mean) * k) * invstd * weight
// with k = sum(grad * (x - mean)) * invstd^2 / m; with fixed statistics
// dx = grad * invstd * weight. Null outputs are not computed.
template <typename T>
void batchNormBackwardChannels(const T* grad, const T* x, const T* mean, const T* invstd, const T* weight, int64_t n,
                               int64_t c, int64_t inner, bool train, T* dx, T* dweight, T* dbias) {
  using V = kernels::Vec<T>;
  constexpr int64_t kSize = V::kSize;
  const double m = static_cast<double>(n * inner);
  for (int64_t ch = 0; ch < c; ++ch) {
    const T mu = mean[ch], is = invstd[ch], w = weight ? weight[ch] : T(1);
    double sum_g = 0, sum_gx = 0;
    if (dweight || dbias || (dx && train)) {
      const V vmu = V::broadcast(mu);
      for (int64_t b = 0; b < n; ++b) {
        const T* g = grad + (b * c + ch) * inner;
        const T* xs = x + (b * c + ch) * inner;
        V acc_g = V::broadcast(T(0)), acc_gx = V::broadcast(T(0));
        int64_t i = 0;
        for (; i + kSize <= inner; i += kSize) {
          const V gv = V::load(g + i);
          acc_g = acc_g + gv;
          acc_gx = acc_gx + gv * (V::load(xs + i) - vmu);
        }
        if (i < inner) {
          const V gv = V::loadPartial(g + i, inner - i, T(0));
          acc_g = acc_g + gv;
          acc_gx = acc_gx + gv * (V::loadPartial(xs + i, inner - i, mu) - vmu);
        }
        sum_g += static_cast<double>(acc_g.sum());
        sum_gx += static_cast<double>(acc_gx.sum());
      }
    }
    if (dbias) dbias[ch] = static_cast<T>(sum_g);
    if (dweight) dweight[ch] = static_cast<T>(sum_gx * static_cast<double>(is));
    if (!dx) continue;
    const T scale = is * w;
    const T grad_mean = train ? static_cast<T>(sum_g / m) : T(0);
    const T k = train ? static_cast<T>(sum_gx / m * static_cast<double>(is) * static_cast<double>(is)) : T(0);
    const V vmu = V::broadcast(mu), vscale = V::broadcast(scale), vgm = V::broadcast(grad_mean), vk = V::broadcast(k);
    for (int64_t b = 0; b < n; ++b) {
      const T* g = grad + (b * c + ch) * inner;
      const T* xs = x + (b * c + ch) * inner;
      T* out = dx + (b * c + ch) * inner;
      int64_t i = 0;
      if (train) {
        for (; i + kSize <= inner; i += kSize) {
          ((V::load(g + i) - vgm - (V::load(xs + i) - vmu) * vk) * vscale).store(out + i);
        }
        if (i < inner) {
          const int64_t rest = inner - i;
          ((V::loadPartial(g + i, rest, T(0)) - vgm - (V::loadPartial(xs + i, rest, mu) - vmu) * vk) * vscale)
              .storePartial(out + i, rest);
        }
      } else {
        for (; i + kSize <= inner; i += kSize) (V::load(g + i) * vscale).store(out + i);
        if (i < inner) (V::loadPartial(g + i, inner - i, T(0)) * vscale).storePartial(out + i, inner - i);
      }
    }
  }
}

// The fused kernel where its layout fits: float or double, input and grad
// contiguous, every tensor of one dtype.
bool fusedBatchNormBackward(const Tensor& grad, const Tensor& input, const std::optional<Tensor>& weight,
                            const Tensor& mean_c, const Tensor& invstd_c, bool train, std::array<bool, 3> mask,
                            NormGrads& out) {
  const ScalarType dtype = input.dtype();
  if (dtype != ScalarType::Float && dtype != ScalarType::Double) return false;
  if (grad.dtype() != dtype || mean_c.dtype() != dtype || invstd_c.dtype() != dtype) return false;
  if (!input.isContiguous() || !grad.isContiguous() || grad.sizes() != input.sizes()) return false;
  const bool has_weight = present(weight);
  if (has_weight && weight->dtype() != dtype) return false;
  const int64_t n = input.size(0), c = input.size(1);
  const int64_t inner = c == 0 || n == 0 ? 0 : input.numel() / (n * c);
  if (input.numel() == 0) return false;
  Tensor mean_v = contiguous(mean_c), invstd_v = contiguous(invstd_c);
  Tensor weight_v = has_weight ? contiguous(*weight) : Tensor();
  Tensor dx = mask[0] ? empty(input.sizes(), dtype) : Tensor();
  Tensor dweight = mask[1] ? empty({c}, dtype) : Tensor();
  Tensor dbias = mask[2] ? empty({c}, dtype) : Tensor();
  auto run = [&]<typename T>() {
    batchNormBackwardChannels<T>(grad.data<T>(), input.data<T>(), mean_v.data<T>(), invstd_v.data<T>(),
                                 has_weight ? weight_v.data<T>() : nullptr, n, c, inner, train,
                                 mask[0] ? dx.data<T>() : nullptr, mask[1] ? dweight.data<T>() : nullptr,
                                 mask[2] ? dbias.data<T>() : nullptr);
  };
  if (dtype == ScalarType::Float) {
    run.template operator()<float>();
  } else {
    run.template operator()<double>();
  }
  out = {dx, dweight, dbias};
  return true;
}

// Every dim of a rank-`rank` tensor but `keep`.
DimVector allBut(int64_t rank, int64_t keep) {
  DimVector dims;
  for (int64_t d = 0; d < rank; ++d)
    if (d != keep) dims.push_back(d);
  return dims;
}

}  // namespace

NormGrads batchNormBackward(const Tensor& grad, const Tensor& input, const std::optional<Tensor>& weight,
                            const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                            const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd,
                            bool train, double eps, std::array<bool, 3> mask) {
  KILN_CHECK(input.dim() >= 2, "batch_norm backward: expected an input of 2 or more dims");
  const int64_t c = input.size(1);
  DimVector channel_shape(static_cast<size_t>(input.dim()), 1);
  channel_shape[1] = c;
  const DimVector dims = allBut(input.dim(), 1);
  auto perChannel = [&](const Tensor& t) { return reshape(t, IntArrayRef(channel_shape)); };
  Tensor mean_c, invstd_c;
  if (train) {
    if (present(save_mean) && present(save_invstd)) {
      mean_c = perChannel(*save_mean);
      invstd_c = perChannel(*save_invstd);
    } else {
      mean_c = mean(input, IntArrayRef(dims), true);
      Tensor v = var(input, IntArrayRef(dims), 0, true);
      invstd_c = rsqrt(add(v, full({}, eps, v.dtype())));
    }
  } else {
    mean_c = present(running_mean) ? perChannel(*running_mean) : zeros(IntArrayRef(channel_shape), input.dtype());
    Tensor v = present(running_var) ? perChannel(*running_var) : ones(IntArrayRef(channel_shape), input.dtype());
    invstd_c = rsqrt(add(v, full({}, eps, v.dtype())));
  }
  NormGrads fused;
  if (fusedBatchNormBackward(grad, input, weight, mean_c, invstd_c, train, mask, fused)) return fused;
  Tensor x_hat = mul(sub(input, mean_c), invstd_c);
  Tensor grad_input, grad_weight, grad_bias;
  if (mask[0]) {
    Tensor g = present(weight) ? mul(grad, perChannel(*weight)) : grad;
    grad_input = train ? normalizedInputGrad(g, x_hat, invstd_c, IntArrayRef(dims)) : mul(g, invstd_c);
  }
  if (mask[1]) grad_weight = sum(mul(grad, x_hat), IntArrayRef(dims));
  if (mask[2]) grad_bias = sum(grad, IntArrayRef(dims));
  return {grad_input, grad_weight, grad_bias};
}

NormGrads layerNormBackward(const Tensor& grad, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean_,
                            const Tensor& rstd, const std::optional<Tensor>& weight, double eps,
                            std::array<bool, 3> mask) {
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  KILN_CHECK(axis >= 0, "layer_norm backward: normalized_shape has more dims than the input");
  DimVector inner, outer;
  for (int64_t d = 0; d < input.dim(); ++d) (d < axis ? outer : inner).push_back(d);
  Tensor m, r;
  if (mean_.defined() && mean_.numel() > 0 && rstd.defined() && rstd.numel() > 0) {
    DimVector stat_shape(input.sizes().begin(), input.sizes().begin() + axis);
    stat_shape.resize(static_cast<size_t>(input.dim()), 1);
    m = reshape(mean_, IntArrayRef(stat_shape));
    r = reshape(rstd, IntArrayRef(stat_shape));
  } else {
    m = mean(input, IntArrayRef(inner), true);
    Tensor v = var(input, IntArrayRef(inner), 0, true);
    r = rsqrt(add(v, full({}, eps, v.dtype())));
  }
  Tensor x_hat = mul(sub(input, m), r);
  Tensor grad_input, grad_weight, grad_bias;
  if (mask[0]) {
    Tensor g = present(weight) ? mul(grad, *weight) : grad;
    grad_input = normalizedInputGrad(g, x_hat, r, IntArrayRef(inner));
  }
  if (mask[1]) grad_weight = outer.empty() ? mul(grad, x_hat) : sum(mul(grad, x_hat), IntArrayRef(outer));
  if (mask[2]) grad_bias = outer.empty() ? clone(grad) : sum(grad, IntArrayRef(outer));
  return {grad_input, grad_weight, grad_bias};
}

NormGrads groupNormBackward(const Tensor& grad, const Tensor& input, const Tensor& mean_, const Tensor& rstd,
                            const std::optional<Tensor>& weight, int64_t group, double eps, std::array<bool, 3> mask) {
  KILN_CHECK(input.dim() >= 2 && group > 0 && input.size(1) % group == 0,
             "group_norm backward: the channels must split into the groups");
  const int64_t n = input.size(0), c = input.size(1);
  DimVector channel_shape(static_cast<size_t>(input.dim()), 1);
  channel_shape[1] = c;
  const DimVector grouped{n, group, -1};
  const DimVector group_dims{2};
  Tensor xg = reshape(input, IntArrayRef(grouped));
  Tensor m, r;
  if (mean_.defined() && mean_.numel() > 0 && rstd.defined() && rstd.numel() > 0) {
    m = reshape(mean_, {n, group, 1});
    r = reshape(rstd, {n, group, 1});
  } else {
    m = mean(xg, IntArrayRef(group_dims), true);
    Tensor v = var(xg, IntArrayRef(group_dims), 0, true);
    r = rsqrt(add(v, full({}, eps, v.dtype())));
  }
  Tensor x_hat_g = mul(sub(xg, m), r);
  Tensor grad_input, grad_weight, grad_bias;
  if (mask[0]) {
    Tensor g = present(weight) ? mul(grad, reshape(*weight, IntArrayRef(channel_shape))) : grad;
    Tensor gi = normalizedInputGrad(reshape(g, IntArrayRef(grouped)), x_hat_g, r, IntArrayRef(group_dims));
    grad_input = reshape(gi, input.sizes());
  }
  const DimVector dims = allBut(input.dim(), 1);
  if (mask[1]) grad_weight = sum(mul(grad, reshape(x_hat_g, input.sizes())), IntArrayRef(dims));
  if (mask[2]) grad_bias = sum(grad, IntArrayRef(dims));
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace kiln
