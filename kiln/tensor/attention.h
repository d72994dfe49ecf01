#pragma once
// Multi-head attention and the transformer encoder layer as torch 1.13's
// inference fast path computes them (_native_multi_head_attention,
// _transformer_encoder_layer_fwd), masked softmax, and the minimal nested
// tensor that path passes between layers.
//
// A nested tensor here is a dense, contiguous [B, L, E] buffer whose batch
// entry b holds lengths[b] valid rows (the rest are padding), tagged through
// its storage: kiln tensors carry no layout of their own. Views of the buffer
// are ordinary tensors.
#include <optional>
#include <tuple>
#include <vector>

#include "kiln/tensor/tensor.h"

namespace kiln {

// softmax along `dim` with the elements where `mask` is true left out; a line
// that is masked throughout is NaN, as in torch.
Tensor maskedSoftmax(const Tensor& self, const Tensor& mask, std::optional<int64_t> dim,
                     std::optional<int64_t> mask_type);

std::tuple<Tensor, Tensor> nativeMultiHeadAttention(const Tensor& query, const Tensor& key, const Tensor& value,
                                                    int64_t embed_dim, int64_t num_head, const Tensor& qkv_weight,
                                                    const Tensor& qkv_bias, const Tensor& proj_weight,
                                                    const Tensor& proj_bias, const std::optional<Tensor>& mask,
                                                    bool need_weights, bool average_attn_weights,
                                                    std::optional<int64_t> mask_type);

// qkv ([B, T, 3D]) plus its bias, split into q, k and v of [B, H, T, D/H],
// q scaled by 1/sqrt(D/H).
std::tuple<Tensor, Tensor, Tensor> transformBiasRescaleQkv(const Tensor& qkv, const Tensor& qkv_bias,
                                                           int64_t num_heads);

// softmax(q k^T / sqrt(E) + mask) v and the attention weights; a bool mask
// keeps where true, a float mask is added; is_causal keeps the lower triangle.
std::tuple<Tensor, Tensor> scaledDotProductAttention(const Tensor& query, const Tensor& key, const Tensor& value,
                                                     const std::optional<Tensor>& attn_mask, double dropout_p,
                                                     bool is_causal);

struct EncoderLayerWeights {
  Tensor qkv_weight, qkv_bias, proj_weight, proj_bias;
  Tensor norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2;
  Tensor ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2;
};

Tensor transformerEncoderLayerFwd(const Tensor& src, int64_t embed_dim, int64_t num_heads, const EncoderLayerWeights& w,
                                  bool use_gelu, bool norm_first, double eps, const std::optional<Tensor>& mask,
                                  std::optional<int64_t> mask_type);

// The valid rows of each batch entry of `t` ([B, L, E]), where `mask` ([B, L],
// bool, true = valid) is true.
Tensor nestedTensorFromMask(const Tensor& t, const Tensor& mask, bool mask_check);
// Whether every row of `mask` is a run of trues followed by falses.
bool nestedTensorFromMaskLeftAligned(const Tensor& t, const Tensor& mask);
Tensor toPaddedTensor(const Tensor& self, double padding, const std::optional<DimVector>& output_size);

// The lengths of a nested tensor's entries; nullopt for an ordinary tensor.
std::optional<std::vector<int64_t>> nestedLengths(const Tensor& t);

}  // namespace kiln
