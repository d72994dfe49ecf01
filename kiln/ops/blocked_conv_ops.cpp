// kiln:: operators that kiln.optimize_for_inference writes into frozen
// graphs (kiln/passes/fuse_dnnl_convolution.h, dnnl_blocked_layout.h): the
// oneDNN convolution with fused post-ops and a prepacked weight, max pooling
// of channel-blocked activations, and the conversions between the plain
// NCHW layout and the blocked one (kiln/tensor/blocked_conv.h), with their
// shape rules; and the guard of the graph executor's fusion of
// convolutions with their post-ops over live weights
// (kiln/passes/fuse_conv_post_ops.h). They are script-only: no Python tensor API exposes them.
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/blocked_conv.h"

namespace kiln {
namespace {

using shapes::Args;
using shapes::DimList;
using shapes::OutputFacts;
using Out = std::vector<OutputFacts>;

Out floatTensor(VaryingShape sizes) {
  OutputFacts o;
  o.kind = OutputFacts::Kind::Tensor;
  o.tensor.dtype = ScalarType::Float;
  o.tensor.sizes = std::move(sizes);
  o.tensor.contiguous = true;
  return {o};
}

std::optional<DimList> dimsOf(const TensorType* t) {
  if (!t || !t->sizes().dims()) return std::nullopt;
  return *t->sizes().dims();
}

std::optional<int64_t> ceilDiv(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b || *b <= 0) return std::nullopt;
  return (*a + *b - 1) / *b;
}

std::optional<int64_t> listParam(const std::optional<DimList>& list, size_t i) {
  if (!list || list->empty()) return std::nullopt;
  return list->size() == 1 ? (*list)[0] : list->size() == 2 ? (*list)[i] : std::nullopt;
}

// (N, C, H, W) -> (N, C/b, H, W, b).
Out toBlockedShape(const Args& a) {
  auto x = dimsOf(a.tensor("self"));
  auto block = a.knownInt("block");
  if (!x || x->size() != 4) return floatTensor(VaryingShape(5));
  return floatTensor(VaryingShape(DimList{(*x)[0], ceilDiv((*x)[1], block), (*x)[2], (*x)[3], block}));
}

Out fromBlockedShape(const Args& a) {
  auto x = dimsOf(a.tensor("self"));
  if (!x || x->size() != 5) return floatTensor(VaryingShape(4));
  return floatTensor(VaryingShape(DimList{(*x)[0], a.knownInt("channels"), (*x)[2], (*x)[3]}));
}

// The output of a 2-d window over sizes (N, C..., H, W[, b]) of `x`.
Out windowShape(const std::optional<DimList>& x, size_t rank, std::optional<int64_t> channels,
                std::optional<int64_t> out_block, const std::optional<DimList>& kernel,
                const std::optional<DimList>& stride, const std::optional<DimList>& padding,
                const std::optional<DimList>& dilation, bool ceil_mode) {
  if (!x || x->size() != rank) return floatTensor(VaryingShape(out_block && *out_block ? 5 : 4));
  DimList out{(*x)[0], out_block && *out_block ? ceilDiv(channels, out_block) : channels};
  for (size_t i = 0; i < 2; ++i) {
    auto in = (*x)[2 + i], k = listParam(kernel, i), s = listParam(stride, i), p = listParam(padding, i),
         d = listParam(dilation, i);
    if (!in || !k || !s || !p || !d || *s <= 0) {
      out.push_back(std::nullopt);
      continue;
    }
    int64_t num = *in + 2 * *p - *d * (*k - 1) - 1 + (ceil_mode ? *s - 1 : 0);
    int64_t o = num >= 0 ? num / *s + 1 : 0;
    if (ceil_mode && (o - 1) * *s >= *in + *p) --o;
    out.push_back(o);
  }
  if (out_block && *out_block) out.push_back(out_block);
  return floatTensor(VaryingShape(out));
}

Out conv2dFusedShape(const Args& a) {
  auto in_block = a.knownInt("in_block"), out_block = a.knownInt("out_block");
  auto weight_size = a.intList("weight_size");
  auto channels = weight_size && weight_size->size() == 4 ? (*weight_size)[0] : std::nullopt;
  std::optional<DimList> kernel;
  if (weight_size && weight_size->size() == 4) kernel = DimList{(*weight_size)[2], (*weight_size)[3]};
  if (!in_block || !out_block) return floatTensor(VaryingShape());
  return windowShape(dimsOf(a.tensor("input")), *in_block ? 5 : 4, channels, out_block, kernel, a.intList("stride"),
                     a.intList("padding"), a.intList("dilation"), false);
}

Out blockedMaxPoolShape(const Args& a) {
  auto x = dimsOf(a.tensor("self"));
  auto ceil_mode = a.knownBool("ceil_mode");
  auto stride = a.intList("stride");
  if (stride && stride->empty()) stride = a.intList("kernel_size");
  std::optional<int64_t> block = x && x->size() == 5 ? (*x)[4] : std::nullopt;
  if (!ceil_mode || !block) return floatTensor(VaryingShape(5));
  return windowShape(x, 5, a.knownInt("channels"), block, a.intList("kernel_size"), stride, a.intList("padding"),
                     a.intList("dilation"), *ceil_mode);
}

FusedConv2dParams fusedParams(IntArrayRef weight_size, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                              int64_t groups, int64_t in_block, int64_t out_block, const std::string& activation,
                              double alpha, double beta, bool has_bias, bool has_residual) {
  FusedConv2dParams p;
  p.weight_size = DimVector(weight_size.begin(), weight_size.end());
  p.stride = DimVector(stride.begin(), stride.end());
  p.padding = DimVector(padding.begin(), padding.end());
  p.dilation = DimVector(dilation.begin(), dilation.end());
  p.groups = groups;
  p.in_block = in_block;
  p.out_block = out_block;
  p.activation = activation;
  KILN_CHECK(isFusableActivation(activation), "conv2d_fused: unknown activation '", activation, "'");
  p.alpha = alpha;
  p.beta = beta;
  p.has_bias = has_bias;
  p.has_residual = has_residual;
  return p;
}

}  // namespace

// The blocked-layout ops exist only in graphs the optimizing executor
// rewrote for inference (no input requires grad): torch has no such ops.
#define KILN_INFERENCE_ONLY "kiln: inference-only blocked layout of the optimizing executor (no torch op)"

KILN_REGISTER_SCRIPT_OPS(
    op("kiln::to_blocked(Tensor self, int block) -> Tensor",
       [](const Tensor& self, int64_t block) { return toBlocked(self, block); })
        .shape(toBlockedShape)
        .notDifferentiable(KILN_INFERENCE_ONLY),
    op("kiln::from_blocked(Tensor self, int channels) -> Tensor",
       [](const Tensor& self, int64_t channels) { return fromBlocked(self, channels); })
        .shape(fromBlockedShape)
        .notDifferentiable(KILN_INFERENCE_ONLY),
    op("kiln::conv2d_fused(Tensor input, Tensor weight, Tensor? bias, Tensor? residual, int[2] weight_size, "
       "int[2] stride, int[2] padding, int[2] dilation, int groups, int in_block, int out_block, "
       "str activation=\"none\", float alpha=0., float beta=0.) -> Tensor",
       [](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
          const std::optional<Tensor>& residual, IntArrayRef weight_size, IntArrayRef stride, IntArrayRef padding,
          IntArrayRef dilation, int64_t groups, int64_t in_block, int64_t out_block, const std::string& activation,
          double alpha, double beta) {
         auto p = fusedParams(weight_size, stride, padding, dilation, groups, in_block, out_block, activation, alpha,
                              beta, bias.has_value(), residual.has_value());
         return fusedConv2d(input, weight, bias, residual, p);
       })
        .shape(conv2dFusedShape)
        .notDifferentiable(KILN_INFERENCE_ONLY),
    // The guard of the executor's post-op fusion (kiln/passes/fuse_conv_post_ops.h).
    op("kiln::conv2d_fusable(Tensor input, Tensor weight, Tensor? bias, Tensor? residual, int[2] stride, "
       "int[2] padding, int[2] dilation, int groups, str activation=\"none\") -> bool",
       [](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
          const std::optional<Tensor>& residual, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
          int64_t groups, const std::string& activation) {
         if (weight.dim() != 4) return false;
         FusedConv2dParams p;
         p.weight_size = DimVector(weight.sizes().begin(), weight.sizes().end());
         p.stride = DimVector(stride.begin(), stride.end());
         p.padding = DimVector(padding.begin(), padding.end());
         p.dilation = DimVector(dilation.begin(), dilation.end());
         p.groups = groups;
         p.activation = activation;
         p.has_bias = bias.has_value();
         p.has_residual = residual.has_value();
         return canRunFusedConv2d(input, weight, bias, residual, p);
       }),
    op("kiln::blocked_max_pool2d(Tensor self, int channels, int[2] kernel_size, int[2] stride, int[2] padding, "
       "int[2] dilation, bool ceil_mode) -> Tensor",
       [](const Tensor& self, int64_t channels, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
          IntArrayRef dilation, bool ceil_mode) {
         return blockedMaxPool2d(self, channels, kernel_size, stride, padding, dilation, ceil_mode);
       })
        .shape(blockedMaxPoolShape)
        .notDifferentiable(KILN_INFERENCE_ONLY), );

#undef KILN_INFERENCE_ONLY

}  // namespace kiln
