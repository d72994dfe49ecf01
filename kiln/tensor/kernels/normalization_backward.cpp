// Normalization backward (normalization_backward.h), composed of tensor
// operations. With x_hat = (x - mean) * invstd over each normalized set of
// n elements and g the gradient of x_hat (the output gradient times the
// weight): dx = invstd * (g - mean(g) - x_hat * mean(g * x_hat)); with fixed
// statistics (batch norm in eval mode) dx = g * invstd.
#include "kiln/tensor/normalization_backward.h"

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
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
