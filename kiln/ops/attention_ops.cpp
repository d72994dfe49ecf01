// aten:: registrations of what nn.MultiheadAttention and
// nn.TransformerEncoder(Layer) compile to in PyTorch 1.13 (the inference fast
// path and its nested tensors), with 1.13's schemas.
#include <cmath>
#include <limits>

#include "kiln/core/op_registration.h"
#include "kiln/ops/composite.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/attention.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using shapes::Args;
using shapes::OutputFacts;

// _native_multi_head_attention: the output as the query; the weights' shape
// depends on need_weights and average_attn_weights.
std::vector<OutputFacts> multiHeadAttentionShape(const Args& a) {
  const TensorType* q = a.tensor("query");
  if (!q) return {};
  return {shapes::contiguousOut(q->scalarType(), q->sizes()), OutputFacts{}};
}

std::tuple<Tensor, IValue> multiHeadAttention(const Tensor& query, const Tensor& key, const Tensor& value,
                                              int64_t embed_dim, int64_t num_head, const Tensor& qkv_weight,
                                              const Tensor& qkv_bias, const Tensor& proj_weight,
                                              const Tensor& proj_bias, const std::optional<Tensor>& mask,
                                              bool need_weights, bool average_attn_weights,
                                              std::optional<int64_t> mask_type) {
  auto [out, weights] =
      nativeMultiHeadAttention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias,
                               mask, need_weights, average_attn_weights, mask_type);
  // Without need_weights torch returns an undefined tensor: None.
  return {out, weights.defined() ? IValue(weights) : IValue()};
}

Tensor encoderLayer(const Tensor& src, int64_t embed_dim, int64_t num_heads, const Tensor& qkv_weight,
                    const Tensor& qkv_bias, const Tensor& proj_weight, const Tensor& proj_bias, bool use_gelu,
                    bool norm_first, double eps, const Tensor& norm_weight_1, const Tensor& norm_bias_1,
                    const Tensor& norm_weight_2, const Tensor& norm_bias_2, const Tensor& ffn_weight_1,
                    const Tensor& ffn_bias_1, const Tensor& ffn_weight_2, const Tensor& ffn_bias_2,
                    const std::optional<Tensor>& mask, std::optional<int64_t> mask_type) {
  const EncoderLayerWeights w{qkv_weight,    qkv_bias,    proj_weight,  proj_bias,  norm_weight_1, norm_bias_1,
                              norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2,  ffn_bias_2};
  return transformerEncoderLayerFwd(src, embed_dim, num_heads, w, use_gelu, norm_first, eps, mask, mask_type);
}

// _scaled_dot_product_attention as torch 1.13 composes it
// (_scaled_dot_product_attention_math) when an input requires grad
// (composite.h): each step an operator autograd records.
std::tuple<Tensor, Tensor> scaledDotProductAttentionOp(const Tensor& query, const Tensor& key, const Tensor& value,
                                                       const std::optional<Tensor>& attn_mask, double dropout_p,
                                                       bool is_causal) {
  if (!composite::recording({query, key, value, attn_mask.value_or(Tensor())})) {
    return scaledDotProductAttention(query, key, value, attn_mask, dropout_p, is_causal);
  }
  using composite::callTensor;
  KILN_CHECK(!is_causal || !attn_mask,
             "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  const double scale = 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
  Tensor q = callTensor("aten::mul", "Scalar", {query, scale});
  Tensor scores = callTensor("aten::matmul", "", {q, callTensor("aten::transpose", "int", {key, -2, -1})});
  // Undefined when there is none. (A std::optional<Tensor> copy here made
  // GCC 12 warn of a maybe-uninitialized member under -O2.)
  Tensor mask = attn_mask ? *attn_mask : Tensor();
  if (is_causal) {
    const int64_t l = query.size(-2), s = key.size(-2);
    Tensor keep = empty({l, s}, ScalarType::Bool);
    bool* k = keep.data<bool>();
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t j = 0; j < s; ++j) k[i * s + j] = j <= i;
    }
    mask = keep;
  }
  if (mask.defined()) {
    if (mask.dtype() == ScalarType::Bool) {
      // torch's masked_fill of the dropped positions, as a where (the same gradient).
      scores = callTensor("aten::where", "ScalarOther", {mask, scores, -std::numeric_limits<double>::infinity()});
    } else {
      scores = callTensor("aten::add", "Tensor", {scores, mask, 1});
    }
  }
  Tensor attn = callTensor("aten::softmax", "int", {scores, -1, IValue()});
  if (dropout_p > 0) attn = callTensor("aten::dropout", "", {attn, dropout_p, true});
  return {callTensor("aten::matmul", "", {attn, value}), attn};
}

#define KILN_MHA_ARGS                                                                                                 \
  "Tensor query, Tensor key, Tensor value, int embed_dim, int num_head, Tensor qkv_weight, Tensor qkv_bias, "         \
  "Tensor proj_weight, Tensor proj_bias, Tensor? mask=None, bool need_weights=True, bool average_attn_weights=True, " \
  "int? mask_type=None"
#define KILN_ENCODER_ARGS                                                                                   \
  "Tensor src, int embed_dim, int num_heads, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, "      \
  "Tensor proj_bias, bool use_gelu, bool norm_first, float eps, Tensor norm_weight_1, Tensor norm_bias_1, " \
  "Tensor norm_weight_2, Tensor norm_bias_2, Tensor ffn_weight_1, Tensor ffn_bias_1, Tensor ffn_weight_2, " \
  "Tensor ffn_bias_2, Tensor? mask=None, int? mask_type=None"

KILN_REGISTER_OPS(
    op("aten::_masked_softmax(Tensor self, Tensor mask, int? dim=None, int? mask_type=None) -> Tensor",
       [](const Tensor& self, const Tensor& mask, std::optional<int64_t> dim, std::optional<int64_t> mask_type) {
         return maskedSoftmax(self, mask, dim, mask_type);
       })
        .derivative({"self: (grad - (grad * result).sum(-1 if dim is None else dim, keepdim=True)) * result",
                     "grad_fn: MaskedSoftmaxBackward0"})
        .shape(shapes::sameDtype),
    op("aten::_masked_softmax.out(Tensor self, Tensor mask, int? dim=None, int? mask_type=None, *, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& mask, std::optional<int64_t> dim, std::optional<int64_t> mask_type,
          Tensor out) { return writeOut(out, maskedSoftmax(self, mask, dim, mask_type), "_masked_softmax"); }),
    op("aten::_native_multi_head_attention(" KILN_MHA_ARGS ") -> (Tensor, Tensor)", multiHeadAttention)
        .shape(multiHeadAttentionShape)
        .traits(OpTrait::Expensive)
        .notDifferentiable("torch 1.13: inference-only fast path (derivative not implemented)"),
    op("aten::_native_multi_head_attention.out(" KILN_MHA_ARGS
       ", *, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& query, const Tensor& key, const Tensor& value, int64_t embed_dim, int64_t num_head,
          const Tensor& qkv_weight, const Tensor& qkv_bias, const Tensor& proj_weight, const Tensor& proj_bias,
          const std::optional<Tensor>& mask, bool need_weights, bool average_attn_weights,
          std::optional<int64_t> mask_type, Tensor out0, Tensor out1) {
         auto [out, weights] =
             nativeMultiHeadAttention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight,
                                      proj_bias, mask, need_weights, average_attn_weights, mask_type);
         writeOut(out0, out, "_native_multi_head_attention");
         if (weights.defined()) writeOut(out1, weights, "_native_multi_head_attention");
         return std::make_tuple(out0, out1);
       })
        .traits(OpTrait::Expensive),
    op("aten::_transformer_encoder_layer_fwd(" KILN_ENCODER_ARGS ") -> Tensor", encoderLayer)
        .shape(shapes::sameDtype)
        .traits(OpTrait::Expensive)
        .notDifferentiable("torch 1.13: inference-only fast path (derivative not implemented)"),
    op("aten::_transformer_encoder_layer_fwd.out(" KILN_ENCODER_ARGS ", *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& src, int64_t embed_dim, int64_t num_heads, const Tensor& qkv_weight, const Tensor& qkv_bias,
          const Tensor& proj_weight, const Tensor& proj_bias, bool use_gelu, bool norm_first, double eps,
          const Tensor& norm_weight_1, const Tensor& norm_bias_1, const Tensor& norm_weight_2,
          const Tensor& norm_bias_2, const Tensor& ffn_weight_1, const Tensor& ffn_bias_1, const Tensor& ffn_weight_2,
          const Tensor& ffn_bias_2, const std::optional<Tensor>& mask, std::optional<int64_t> mask_type, Tensor out) {
         return writeOut(out,
                         encoderLayer(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu,
                                      norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
                                      ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask, mask_type),
                         "_transformer_encoder_layer_fwd");
       })
        .traits(OpTrait::Expensive),
    op("aten::_nested_tensor_from_mask(Tensor t, Tensor mask, bool mask_check=True) -> Tensor",
       [](const Tensor& t, const Tensor& mask, bool mask_check) { return nestedTensorFromMask(t, mask, mask_check); })
        // kiln's nested tensor is padded: t's gradient is the nested one's, zero where the mask is.
        .derivative({"t: torch.constant_pad_nd(grad, [0, 0, 0, t.size(1) - grad.size(1)], 0).masked_fill("
                     "mask.logical_not().unsqueeze(-1), 0.0)",
                     "grad_fn: NestedTensorFromMaskBackward0"}),
    op("aten::_nested_tensor_from_mask.out(Tensor t, Tensor mask, bool mask_check=True, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& t, const Tensor& mask, bool mask_check, Tensor out) {
         // An out= tensor cannot become nested: it receives the padded values.
         return writeOut(out, toPaddedTensor(nestedTensorFromMask(t, mask, mask_check), 0.0, std::nullopt),
                         "_nested_tensor_from_mask");
       }),
    op("aten::_nested_tensor_from_mask_left_aligned(Tensor t, Tensor mask) -> bool",
       [](const Tensor& t, const Tensor& mask) { return nestedTensorFromMaskLeftAligned(t, mask); }),
    op("aten::to_padded_tensor(Tensor self, float padding, int[]? output_size=None) -> Tensor",
       [](const Tensor& self, double padding, std::optional<DimVector> output_size) {
         return toPaddedTensor(self, padding, output_size);
       })
        .derivative({"self: grad.narrow(1, 0, self.size(1)).narrow(2, 0, self.size(2))"}),
    op("aten::to_padded_tensor.out(Tensor self, float padding, int[]? output_size=None, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, double padding, std::optional<DimVector> output_size, Tensor out) {
         return writeOut(out, toPaddedTensor(self, padding, output_size), "to_padded_tensor");
       }),
    op("aten::_transform_bias_rescale_qkv(Tensor qkv, Tensor qkv_bias, int num_heads) -> (Tensor, Tensor, Tensor)",
       [](const Tensor& qkv, const Tensor& qkv_bias, int64_t num_heads) {
         return transformBiasRescaleQkv(qkv, qkv_bias, num_heads);
       })
        .notDifferentiable("torch 1.13: inference-only fast path (derivative not implemented)"),
    op("aten::_transform_bias_rescale_qkv.out(Tensor qkv, Tensor qkv_bias, int num_heads, *, Tensor(a!) out0, "
       "Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
       [](const Tensor& qkv, const Tensor& qkv_bias, int64_t num_heads, Tensor out0, Tensor out1, Tensor out2) {
         auto [q, k, v] = transformBiasRescaleQkv(qkv, qkv_bias, num_heads);
         writeOut(out0, q, "_transform_bias_rescale_qkv");
         writeOut(out1, k, "_transform_bias_rescale_qkv");
         writeOut(out2, v, "_transform_bias_rescale_qkv");
         return std::make_tuple(out0, out1, out2);
       }),
    op("aten::_scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
       "float dropout_p=0., bool need_attn_weights=False, bool is_causal=False) -> (Tensor, Tensor)",
       [](const Tensor& query, const Tensor& key, const Tensor& value, const std::optional<Tensor>& attn_mask,
          double dropout_p, bool /*need_attn_weights: the weights are returned either way, as in 1.13*/,
          bool is_causal) { return scaledDotProductAttentionOp(query, key, value, attn_mask, dropout_p, is_causal); })
        .traits(OpTrait::Expensive),
    op("aten::_scaled_dot_product_attention_math(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
       "float dropout_p=0., bool need_attn_weights=False, bool is_causal=False) -> (Tensor, Tensor)",
       [](const Tensor& query, const Tensor& key, const Tensor& value, const std::optional<Tensor>& attn_mask,
          double dropout_p, bool /*need_attn_weights*/,
          bool is_causal) { return scaledDotProductAttentionOp(query, key, value, attn_mask, dropout_p, is_causal); })
        .traits(OpTrait::Expensive),
    // kiln has no autocast.
    op("aten::is_autocast_enabled() -> bool", []() { return false; }), );

}  // namespace
}  // namespace kiln
