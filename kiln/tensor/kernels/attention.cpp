// Multi-head attention, the transformer encoder layer of torch 1.13's
// inference fast path, masked softmax and the minimal nested tensor.
#include "kiln/tensor/attention.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/dropout.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/index.h"
#include "kiln/tensor/layer_norm.h"
#include "kiln/tensor/linalg.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

// Nested buffers by data address. An entry lives exactly as long as its
// storage: the storage's release callback erases it.
struct NestedRegistry {
  std::mutex mutex;
  std::unordered_map<const void*, std::vector<int64_t>> lengths;
};

NestedRegistry& nestedRegistry() {
  static NestedRegistry* registry = new NestedRegistry();
  return *registry;
}

void releaseNested(void* context) {
  {
    NestedRegistry& r = nestedRegistry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.lengths.erase(context);
  }
  std::free(context);
}

// A zeroed [B, L, E] buffer tagged as nested with `lengths`.
Tensor makeNested(IntArrayRef sizes, ScalarType dtype, std::vector<int64_t> lengths) {
  const size_t nbytes = std::max<size_t>(64, static_cast<size_t>(shapeNumel(sizes)) * elementSize(dtype));
  void* data = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
  KILN_CHECK(data != nullptr, "out of memory allocating a nested tensor of ", nbytes, " bytes");
  std::memset(data, 0, nbytes);
  {
    NestedRegistry& r = nestedRegistry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.lengths[data] = std::move(lengths);
  }
  StoragePtr storage = makeIntrusive<Storage>(data, nbytes, releaseNested, data);
  return Tensor(makeIntrusive<TensorImpl>(std::move(storage), dtype, sizes, contiguousStrides(sizes), 0));
}

// `dense` ([B, L, E]) as a nested tensor of `lengths`.
Tensor asNested(const Tensor& dense, const std::vector<int64_t>& lengths) {
  Tensor out = makeNested(dense.sizes(), dense.dtype(), lengths);
  copy_(out, dense);
  return out;
}

// The [B, L] key padding mask (true = padding) of a nested tensor.
Tensor paddingMaskOf(const std::vector<int64_t>& lengths, int64_t length) {
  const int64_t b = static_cast<int64_t>(lengths.size());
  Tensor mask = empty({b, length}, ScalarType::Bool);
  bool* m = mask.data<bool>();
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < length; ++j) m[i * length + j] = j >= lengths[static_cast<size_t>(i)];
  }
  return mask;
}

Tensor scalarLike(double v, ScalarType dtype) { return scalarToTensor(v, dtype); }

// q, k and v in [B, H, T, dh], q scaled by 1/sqrt(dh) after its bias is added
// (torch's _transform_bias_rescale_qkv).
Tensor headsOf(const Tensor& projected, const Tensor& bias, int64_t num_head, double scale) {
  Tensor x = add(projected, bias);
  if (scale != 1.0) x = mul(x, scalarLike(scale, x.dtype()));
  const int64_t b = x.size(0), t = x.size(1), d = x.size(2);
  return contiguous(permute(view(contiguous(x), {b, t, num_head, d / num_head}), {0, 2, 1, 3}));
}

// Self-attention of a dense float32 batch without a mask, the common case of
// torch's fast path, without the general path's copies: q, k and v stay
// interleaved in the rows of the input projection ([B, T, 3D]), each head's
// two products read them in place (leading dimension 3D), and the heads'
// outputs land in the rows of [B, T, D] that the output projection reads.
// Same operations as the general path (and torch): q = (x Wq + bq) * scale,
// softmax(q k^T) v, then the output projection. Returns the output and the
// per-head attention weights [B, H, T, T].
std::tuple<Tensor, Tensor> denseSelfAttention(const Tensor& x, int64_t num_head, const Tensor& qkv_weight,
                                              const Tensor& qkv_bias, const Tensor& proj_weight,
                                              const Tensor& proj_bias, float scale) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2), dh = D / num_head, H = num_head;
  Tensor qkv = linear(x, qkv_weight, qkv_bias);  // [B, T, 3D]
  float* qkv_data = qkv.data<float>();
  const int64_t row = 3 * D;
  for (int64_t r = 0; r < B * T; ++r) {
    float* q = qkv_data + r * row;
    for (int64_t i = 0; i < D; ++i) q[i] = q[i] * scale;
  }
  Tensor scores = empty({B, H, T, T}, ScalarType::Float);
  float* s_data = scores.data<float>();
  // One head a task: each product is small (T x T x D/H) and runs on one thread.
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, T * T * dh));
  parallelFor(0, B * H, grain, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      const float* q = qkv_data + b * T * row + h * dh;
      const float* k = q + D;
      // scores = q (T x dh, rows 3D apart) @ k^T (dh x T: k's rows as columns).
      gemmFloat(T, T, dh, 1.0f, q, row, 1, k, 1, row, 0.0f, s_data + bh * T * T, T);
    }
  });
  Tensor attn = softmax(scores, -1);
  const float* a_data = attn.data<float>();
  Tensor ctx = empty({B, T, D}, ScalarType::Float);
  float* c_data = ctx.data<float>();
  parallelFor(0, B * H, grain, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      const float* v = qkv_data + b * T * row + 2 * D + h * dh;
      gemmFloat(T, dh, T, 1.0f, a_data + bh * T * T, T, 1, v, row, 1, 0.0f, c_data + b * T * D + h * dh, D);
    }
  });
  return {linear(ctx, proj_weight, proj_bias), attn};
}

}  // namespace

std::optional<std::vector<int64_t>> nestedLengths(const Tensor& t) {
  if (!t.defined() || t.dim() != 3 || t.storageOffset() != 0 || !t.isContiguous()) return std::nullopt;
  NestedRegistry& r = nestedRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.lengths.find(t.storage()->data());
  if (it == r.lengths.end() || static_cast<int64_t>(it->second.size()) != t.size(0)) return std::nullopt;
  if (t.numel() * static_cast<int64_t>(t.itemsize()) > static_cast<int64_t>(t.storage()->nbytes())) return std::nullopt;
  return it->second;
}

Tensor maskedSoftmax(const Tensor& self, const Tensor& mask, std::optional<int64_t> dim,
                     std::optional<int64_t> mask_type) {
  KILN_CHECK(self.sizes() == mask.sizes(), "Mask shape should match input shape");
  KILN_CHECK(mask.dtype() == ScalarType::Bool, "Mask should be a boolean tensor");
  KILN_CHECK(mask_type.has_value(), "Mask Type should be defined");
  KILN_CHECK(*mask_type == 0 || *mask_type == 1 || *mask_type == 2,
             "Mask Type should be 0 (src_mask), 1 (src_key_padding_mask), or 2 (default_mask)");
  KILN_CHECK(*mask_type != 0, "src_mask not currently supported on CPU");
  KILN_CHECK(isFloatingType(self.dtype()) && self.dtype() != ScalarType::Half,
             "\"masked_softmax\" not implemented for '", scalarTypeShortName(self.dtype()), "'");
  const int64_t d = dim ? *dim : self.dim() - 1;
  Tensor x = clone(self);
  maskedFill_(x, mask, -std::numeric_limits<double>::infinity());
  return softmax(x, d);
}

std::tuple<Tensor, Tensor> nativeMultiHeadAttention(const Tensor& query, const Tensor& key, const Tensor& value,
                                                    int64_t embed_dim, int64_t num_head, const Tensor& qkv_weight,
                                                    const Tensor& qkv_bias, const Tensor& proj_weight,
                                                    const Tensor& proj_bias, const std::optional<Tensor>& mask,
                                                    bool need_weights, bool average_attn_weights,
                                                    std::optional<int64_t> mask_type) {
  const std::optional<std::vector<int64_t>> nested = nestedLengths(query);
  KILN_CHECK(!mask || !nested, "NestedTensor with mask is not supported yet");
  const int64_t D = embed_dim;
  KILN_CHECK(query.dim() == 3, "expected 3-D `query`, got ", query.dim(), "-D tensor");
  KILN_CHECK(query.size(2) == embed_dim, "passed-in embed_dim ", embed_dim, " didn't match last dim of query ",
             query.size(2));
  KILN_CHECK(key.dim() == 3, "expected 3-D `key`, got ", key.dim(), "-D tensor");
  KILN_CHECK(value.dim() == 3, "expected 3-D `value`, got ", value.dim(), "-D tensor");
  KILN_CHECK(query.sizes() == key.sizes() && key.sizes() == value.sizes(),
             "expected `query`/`key`/`value` shapes to match");
  KILN_CHECK(qkv_weight.dim() == 2, "expected 2-D `qkv_weight`, got ", qkv_weight.dim(), "-D tensor");
  KILN_CHECK(D * 3 == qkv_weight.size(0), "expected `qkv_weight` first dim to be 3x embed_dim");
  KILN_CHECK(D == qkv_weight.size(1), "expected `qkv_weight` second dim to be embed_Dim");
  KILN_CHECK(qkv_bias.dim() == 1, "expected 2-D `qkv_bias`, got ", qkv_bias.dim(), "-D tensor");
  KILN_CHECK(qkv_bias.size(0) == 3 * D, "expected `qkv_bias` first dim and first dim of query to be equal");
  KILN_CHECK(num_head > 0 && D % num_head == 0, "`embed_dim` must divide evenly by `num_heads`");
  const int64_t B = query.size(0), T = query.size(1);
  const int64_t dh = D / num_head;
  // The scale in the element type, as torch computes it.
  const double scale = query.dtype() == ScalarType::Float
                           ? static_cast<double>(1.0f / std::sqrt(static_cast<float>(dh)))
                           : 1.0 / std::sqrt(static_cast<double>(dh));
  const auto isFloat = [](const Tensor& t) { return t.dtype() == ScalarType::Float; };
  if (!mask && !nested && query.isSame(key) && key.isSame(value) && isFloat(query) && query.isContiguous() &&
      isFloat(qkv_weight) && isFloat(qkv_bias) && isFloat(proj_weight) && isFloat(proj_bias) && B * T > 0) {
    auto [out, attn] =
        denseSelfAttention(query, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias, static_cast<float>(scale));
    if (!need_weights) return {out, Tensor()};
    if (average_attn_weights)
      attn = div(sum(attn, DimVector{1}), scalarLike(static_cast<double>(num_head), attn.dtype()));
    return {out, attn};
  }
  Tensor q, k, v;
  if (query.isSame(key) && key.isSame(value)) {
    const Tensor qkv = linear(query, qkv_weight, std::nullopt);
    q = headsOf(narrow(qkv, 2, 0, D), narrow(qkv_bias, 0, 0, D), num_head, scale);
    k = headsOf(narrow(qkv, 2, D, D), narrow(qkv_bias, 0, D, D), num_head, 1.0);
    v = headsOf(narrow(qkv, 2, 2 * D, D), narrow(qkv_bias, 0, 2 * D, D), num_head, 1.0);
  } else {
    q = headsOf(linear(query, narrow(qkv_weight, 0, 0, D), std::nullopt), narrow(qkv_bias, 0, 0, D), num_head, scale);
    k = headsOf(linear(key, narrow(qkv_weight, 0, D, D), std::nullopt), narrow(qkv_bias, 0, D, D), num_head, 1.0);
    v = headsOf(linear(value, narrow(qkv_weight, 0, 2 * D, D), std::nullopt), narrow(qkv_bias, 0, 2 * D, D), num_head,
                1.0);
  }
  Tensor scores = matmul(q, transpose(k, 2, 3));  // [B, H, T, T]
  std::optional<Tensor> m = mask;
  std::optional<int64_t> m_type = mask_type;
  if (nested) {
    m = paddingMaskOf(*nested, T);
    m_type = 1;
  }
  Tensor attn;
  if (m) {
    Tensor bool_mask = m->dtype() == ScalarType::Bool ? *m : to(*m, ScalarType::Bool);
    if (bool_mask.dim() == 2) {
      KILN_CHECK(bool_mask.size(0) == B,
                 "Expected attn_mask->sizes()[0] == batch_size to be true, but got false.  (Could this error "
                 "message be improved?  If so, please report an enhancement request to PyTorch.)");
      bool_mask = expand(view(contiguous(bool_mask), {B, 1, 1, bool_mask.size(1)}), scores.sizes());
    }
    attn = maskedSoftmax(scores, bool_mask, scores.dim() - 1, m_type);
  } else {
    attn = softmax(scores, -1);
  }
  const Tensor ctx = reshape(transpose(matmul(attn, v), 1, 2), {B, T, D});
  Tensor out = linear(ctx, proj_weight, proj_bias);
  if (nested) out = asNested(out, *nested);
  if (!need_weights) return {out, Tensor()};
  if (average_attn_weights)
    attn = div(sum(attn, DimVector{1}), scalarLike(static_cast<double>(num_head), attn.dtype()));
  return {out, attn};
}

std::tuple<Tensor, Tensor, Tensor> transformBiasRescaleQkv(const Tensor& qkv, const Tensor& qkv_bias,
                                                           int64_t num_heads) {
  KILN_CHECK(qkv.dim() == 3, "expected 3-D `qkv`, got ", qkv.dim(), "-D tensor");
  const int64_t D = qkv.size(2) / 3;
  KILN_CHECK(num_heads > 0 && D % num_heads == 0 && qkv.size(2) == 3 * D,
             "Expected D % num_head == 0 to be true, but got false.  (Could this error message be improved?  If so, "
             "please report an enhancement request to PyTorch.)");
  KILN_CHECK(qkv_bias.dim() == 1 && qkv_bias.size(0) == 3 * D, "expected `qkv_bias` to be 1-D of size ", 3 * D);
  const int64_t dh = D / num_heads;
  const double scale = qkv.dtype() == ScalarType::Float ? static_cast<double>(1.0f / std::sqrt(static_cast<float>(dh)))
                                                        : 1.0 / std::sqrt(static_cast<double>(dh));
  return {headsOf(narrow(qkv, 2, 0, D), narrow(qkv_bias, 0, 0, D), num_heads, scale),
          headsOf(narrow(qkv, 2, D, D), narrow(qkv_bias, 0, D, D), num_heads, 1.0),
          headsOf(narrow(qkv, 2, 2 * D, D), narrow(qkv_bias, 0, 2 * D, D), num_heads, 1.0)};
}

std::tuple<Tensor, Tensor> scaledDotProductAttention(const Tensor& query, const Tensor& key, const Tensor& value,
                                                     const std::optional<Tensor>& attn_mask, double dropout_p,
                                                     bool is_causal) {
  KILN_CHECK(!is_causal || !attn_mask,
             "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  const double scale = 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
  Tensor scores = matmul(mul(query, scalarLike(scale, query.dtype())), transpose(key, -2, -1));
  std::optional<Tensor> mask = attn_mask;
  if (is_causal) {
    const int64_t l = query.size(-2), s = key.size(-2);
    Tensor keep = empty({l, s}, ScalarType::Bool);
    bool* k = keep.data<bool>();
    for (int64_t i = 0; i < l; ++i) {
      for (int64_t j = 0; j < s; ++j) k[i * s + j] = j <= i;
    }
    mask = keep;
  }
  if (mask) {
    if (mask->dtype() == ScalarType::Bool) {
      scores = maskedFill(scores, logicalNot(*mask), -std::numeric_limits<double>::infinity());
    } else {
      scores = add(scores, *mask);
    }
  }
  Tensor attn = softmax(scores, -1);
  if (dropout_p > 0) attn = dropout(attn, dropout_p, true, DropoutKind::Plain);
  return {matmul(attn, value), attn};
}

Tensor transformerEncoderLayerFwd(const Tensor& src, int64_t embed_dim, int64_t num_heads, const EncoderLayerWeights& w,
                                  bool use_gelu, bool norm_first, double eps, const std::optional<Tensor>& mask,
                                  std::optional<int64_t> mask_type) {
  const std::optional<std::vector<int64_t>> nested = nestedLengths(src);
  if (src.numel() == 0) return nested ? asNested(src, *nested) : clone(src);
  const DimVector norm_shape{embed_dim};
  // Work on the dense buffer; the lengths travel separately and come back at the end.
  Tensor x = nested ? alias(src) : src;
  auto attend = [&](const Tensor& in) {
    const Tensor tagged = nested ? asNested(in, *nested) : in;
    Tensor out =
        std::get<0>(nativeMultiHeadAttention(tagged, tagged, tagged, embed_dim, num_heads, w.qkv_weight, w.qkv_bias,
                                             w.proj_weight, w.proj_bias, mask, false, true, mask_type));
    return nested ? alias(out) : out;
  };
  if (norm_first) x = layerNorm(x, norm_shape, w.norm_weight_1, w.norm_bias_1, eps);
  x = add(attend(x), src);
  if (!norm_first) x = layerNorm(x, norm_shape, w.norm_weight_1, w.norm_bias_1, eps);
  const Tensor pre_ffn = x;
  if (norm_first) x = layerNorm(x, norm_shape, w.norm_weight_2, w.norm_bias_2, eps);
  Tensor h = linear(x, w.ffn_weight_1, w.ffn_bias_1);
  h = use_gelu ? gelu(h) : relu(h);
  x = add(linear(h, w.ffn_weight_2, w.ffn_bias_2), pre_ffn);
  if (!norm_first) x = layerNorm(x, norm_shape, w.norm_weight_2, w.norm_bias_2, eps);
  return nested ? asNested(x, *nested) : x;
}

bool nestedTensorFromMaskLeftAligned(const Tensor& t, const Tensor& mask) {
  KILN_CHECK(mask.dtype() == ScalarType::Bool, "Expected mask to be of ScalarType Bool, but got ",
             scalarTypeShortName(mask.dtype()), " instead.");
  KILN_CHECK(mask.dim() == 2, "Padding mask should be 2D");
  KILN_CHECK(t.dim() == 3, "Input should be a 3D tensor, N * L * D");
  KILN_CHECK(mask.size(0) == t.size(0) && mask.size(1) == t.size(1), "Mask size should match input size");
  const Tensor m = contiguous(mask);
  const bool* md = m.data<bool>();
  const int64_t l = m.size(1);
  for (int64_t i = 0; i < m.size(0); ++i) {
    bool seen_false = false;
    for (int64_t j = 0; j < l; ++j) {
      if (!md[i * l + j]) {
        seen_false = true;
      } else if (seen_false) {
        return false;
      }
    }
  }
  return true;
}

Tensor nestedTensorFromMask(const Tensor& t, const Tensor& mask, bool mask_check) {
  KILN_CHECK(mask.dtype() == ScalarType::Bool, "Expected mask to be of ScalarType Bool, but got ",
             scalarTypeShortName(mask.dtype()), " instead.");
  KILN_CHECK(mask.dim() == 2, "Padding mask should be 2D");
  KILN_CHECK(t.dim() == 3, "Input should be a 3D tensor, N * L * D");
  KILN_CHECK(mask.size(0) == t.size(0) && mask.size(1) == t.size(1), "Mask size should match input size");
  if (mask_check) {
    KILN_CHECK(nestedTensorFromMaskLeftAligned(t, mask), "Mask must be left-aligned without gaps");
  }
  const Tensor m = contiguous(mask);
  const bool* md = m.data<bool>();
  const int64_t b = t.size(0), l = t.size(1), e = t.size(2);
  std::vector<int64_t> lengths(static_cast<size_t>(b), 0);
  int64_t longest = 0;
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < l; ++j) lengths[static_cast<size_t>(i)] += md[i * l + j] ? 1 : 0;
    longest = std::max(longest, lengths[static_cast<size_t>(i)]);
  }
  Tensor out = makeNested({b, longest, e}, t.dtype(), lengths);
  for (int64_t i = 0; i < b; ++i) {
    const int64_t n = lengths[static_cast<size_t>(i)];
    if (n == 0) continue;
    Tensor dst = narrow(select(out, 0, i), 0, 0, n);
    copy_(dst, narrow(select(t, 0, i), 0, 0, n));
  }
  return out;
}

Tensor toPaddedTensor(const Tensor& self, double padding, const std::optional<DimVector>& output_size) {
  const std::optional<std::vector<int64_t>> nested = nestedLengths(self);
  KILN_CHECK(nested.has_value(),
             "Could not run 'aten::to_padded_tensor' with arguments from the 'CPU' backend: it takes a nested "
             "tensor");
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  if (output_size) {
    KILN_CHECK(output_size->size() == sizes.size(),
               "Length of output_size does not match NestedTensor dims. Broadcasting is not supported.");
    for (size_t i = 0; i < sizes.size(); ++i) {
      KILN_CHECK((*output_size)[i] >= sizes[i],
                 "Value in output_size is less than NestedTensor padded size. Truncation is not supported.");
    }
    sizes = *output_size;
  }
  Tensor out = full(sizes, padding, self.dtype());
  for (int64_t i = 0; i < self.size(0); ++i) {
    const int64_t n = (*nested)[static_cast<size_t>(i)];
    if (n == 0) continue;
    Tensor dst = narrow(narrow(select(out, 0, i), 0, 0, n), 1, 0, self.size(2));
    copy_(dst, narrow(select(self, 0, i), 0, 0, n));
  }
  return out;
}

}  // namespace kiln
