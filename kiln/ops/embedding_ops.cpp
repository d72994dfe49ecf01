// aten:: registrations of embedding, embedding_bag and embedding_renorm,
// with PyTorch 1.13's schemas.
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/embedding.h"
#include "kiln/tensor/embedding_backward.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using shapes::Args;
using shapes::contiguousOut;
using shapes::OutputFacts;
using Out = std::vector<OutputFacts>;
using Opt = std::optional<Tensor>;
using BagResult = std::tuple<Tensor, Tensor, Tensor, Tensor>;

// The indices' sizes and the row length: (*indices, D), weight's dtype.
Out embeddingRule(const Args& a) {
  const TensorType* weight = a.tensor("weight");
  const TensorType* indices = a.tensor("indices");
  std::optional<ScalarType> dtype = weight ? weight->scalarType() : std::nullopt;
  VaryingShape sizes;
  if (indices && indices->sizes().dims() && weight && weight->sizes().size() == 2u) {
    std::vector<std::optional<int64_t>> dims = *indices->sizes().dims();
    dims.push_back(weight->sizes()[1]);
    sizes = VaryingShape(std::move(dims));
  }
  return {contiguousOut(dtype, std::move(sizes))};
}

// (output of the weight's dtype, three int64 tensors).
Out embeddingBagRule(const Args& a) {
  const TensorType* weight = a.tensor("weight");
  std::optional<ScalarType> dtype = weight ? weight->scalarType() : std::nullopt;
  return {contiguousOut(dtype, VaryingShape(2)), contiguousOut(ScalarType::Long, VaryingShape(1)),
          contiguousOut(ScalarType::Long, VaryingShape(1)), contiguousOut(ScalarType::Long, VaryingShape())};
}

Out renormRule(const Args& a) {
  const TensorType* self = a.tensor("self");
  return {contiguousOut(self ? self->scalarType() : std::nullopt, self ? self->sizes() : VaryingShape())};
}

BagResult bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, int64_t mode, const Opt& psw,
              bool include_last_offset, std::optional<int64_t> padding_idx) {
  return embeddingBag(weight, indices, offsets, mode, psw, include_last_offset, padding_idx.value_or(-1));
}

BagResult writeBag(const BagResult& r, Tensor o0, Tensor o1, Tensor o2, Tensor o3) {
  writeOut(o0, std::get<0>(r), "_embedding_bag");
  writeOut(o1, std::get<1>(r), "_embedding_bag");
  writeOut(o2, std::get<2>(r), "_embedding_bag");
  writeOut(o3, std::get<3>(r), "_embedding_bag");
  return {o0, o1, o2, o3};
}

#define KILN_BAG_ARGS                                                                                           \
  const Tensor &weight, const Tensor &indices, const Tensor &offsets, bool, int64_t mode, bool, const Opt &psw, \
      bool include_last_offset, int64_t padding_idx

KILN_REGISTER_OPS(
    op("aten::embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, "
       "bool sparse=False) -> Tensor",
       [](const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool, bool) {
         return embedding(weight, indices, padding_idx);
       })
        .shape(embeddingRule)
        .derivative({"weight: torch.embedding_dense_backward(grad, indices, weight.size(0), padding_idx, "
                     "scale_grad_by_freq)"}),
    op("aten::embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, int padding_idx, "
       "bool scale_grad_by_freq) -> Tensor",
       [](const Tensor& grad, const Tensor& indices, int64_t num_weights, int64_t padding_idx, bool scale) {
         return embeddingDenseBackward(grad, indices, num_weights, padding_idx, scale);
       })
        // torch's embedding_dense_double_backward: the rows of grad the
        // indices picked (padding_idx's left zero; scale_grad_by_freq ignored as torch).
        .derivative({"grad_output: torch.index_select(grad, 0, indices.reshape(-1)).masked_fill((indices == "
                     "padding_idx).reshape([-1, 1]), 0.0).view(indices.size() + [-1])"}),
    op("aten::embedding.out(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, "
       "bool sparse=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool, bool, Tensor out) {
         return writeOut(out, embedding(weight, indices, padding_idx), "embedding");
       })
        .shape(embeddingRule),
    op("aten::embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) -> Tensor(a!)",
       [](Tensor self, const Tensor& indices, double max_norm, double norm_type) {
         return embeddingRenorm_(self, indices, max_norm, norm_type);
       })
        .shape(renormRule)
        .notDifferentiable("torch 1.13: the derivative for 'embedding_renorm' is not implemented"),
    op("aten::embedding_renorm(Tensor self, Tensor indices, float max_norm, float norm_type) -> Tensor",
       [](const Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
         Tensor result = clone(self);
         return embeddingRenorm_(result, indices, max_norm, norm_type);
       })
        .shape(renormRule)
        .notDifferentiable("torch 1.13: the derivative for 'embedding_renorm' is not implemented"),
    op("aten::embedding_renorm.out(Tensor self, Tensor indices, float max_norm, float norm_type, *, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& indices, double max_norm, double norm_type, Tensor out) {
         Tensor result = clone(self);
         return writeOut(out, embeddingRenorm_(result, indices, max_norm, norm_type), "embedding_renorm");
       })
        .shape(renormRule),
    op("aten::embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "
       "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False) -> "
       "(Tensor, Tensor, Tensor, Tensor)",
       [](const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool, int64_t mode, bool, const Opt& psw,
          bool include_last_offset) {
         return bag(weight, indices, offsets, mode, psw, include_last_offset, std::nullopt);
       })
        .shape(embeddingBagRule)
        .derivative({"weight: torch._embedding_bag_backward(grad, indices, offsets, result1, result2, result3, "
                     "weight.size(0), scale_grad_by_freq, mode, sparse, per_sample_weights, -1)",
                     "per_sample_weights: torch._embedding_bag_per_sample_weights_backward(grad, weight, indices, "
                     "offsets, result1, mode, -1)",
                     "non_differentiable: result1", "non_differentiable: result2", "non_differentiable: result3",
                     "grad_fn: EmbeddingBagBackward0"}),
    op("aten::embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, "
       "int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> "
       "(Tensor, Tensor, Tensor, Tensor)",
       [](const Tensor& weight, const Tensor& indices, const Tensor& offsets, bool, int64_t mode, bool, const Opt& psw,
          bool include_last_offset, std::optional<int64_t> padding_idx) {
         return bag(weight, indices, offsets, mode, psw, include_last_offset, padding_idx);
       })
        .shape(embeddingBagRule)
        .derivative({"weight: torch._embedding_bag_backward(grad, indices, offsets, result1, result2, result3, "
                     "weight.size(0), scale_grad_by_freq, mode, sparse, per_sample_weights, -1 if padding_idx is None "
                     "else padding_idx)",
                     "per_sample_weights: torch._embedding_bag_per_sample_weights_backward(grad, weight, indices, "
                     "offsets, result1, mode, -1 if padding_idx is None else padding_idx)",
                     "non_differentiable: result1", "non_differentiable: result2", "non_differentiable: result3",
                     "grad_fn: EmbeddingBagBackward0"}),
    op("aten::_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "
       "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, "
       "int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)",
       [](KILN_BAG_ARGS) { return bag(weight, indices, offsets, mode, psw, include_last_offset, padding_idx); })
        .shape(embeddingBagRule)
        .derivative({"weight: torch._embedding_bag_backward(grad, indices, offsets, result1, result2, result3, "
                     "weight.size(0), scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx)",
                     "per_sample_weights: torch._embedding_bag_per_sample_weights_backward(grad, weight, indices, "
                     "offsets, result1, mode, padding_idx)",
                     "non_differentiable: result1", "non_differentiable: result2", "non_differentiable: result3",
                     "grad_fn: EmbeddingBagBackward0"}),
    op("aten::embedding_dense_backward.out(Tensor grad_output, Tensor indices, SymInt num_weights, "
       "int padding_idx, bool scale_grad_by_freq, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& indices, int64_t num_weights, int64_t padding_idx, bool scale, Tensor out) {
         return writeOut(out, embeddingDenseBackward(grad, indices, num_weights, padding_idx, scale),
                         "embedding_dense_backward");
       }),
    op("aten::_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor offset2bag, "
       "Tensor bag_size, Tensor maximum_indices, int num_weights, bool scale_grad_by_freq, int mode, bool sparse, "
       "Tensor? per_sample_weights, int padding_idx=-1) -> Tensor",
       [](const Tensor& grad, const Tensor& indices, const Tensor& offsets, const Tensor&, const Tensor& bag_size,
          const Tensor& max_indices, int64_t num_weights, bool scale_grad_by_freq, int64_t mode, bool, const Opt& psw,
          int64_t padding_idx) {
         return embeddingBagBackward(grad, indices, offsets, bag_size, max_indices, num_weights, scale_grad_by_freq,
                                     mode, psw, padding_idx);
       })
        .notDifferentiable("torch 1.13: _embedding_bag_dense_backward's derivative is not_implemented"),
    op("aten::_embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices, "
       "Tensor offsets, Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor",
       [](const Tensor& grad, const Tensor& weight, const Tensor& indices, const Tensor& offsets, const Tensor&,
          int64_t mode, int64_t padding_idx) {
         return embeddingBagPerSampleWeightsBackward(grad, weight, indices, offsets, mode, padding_idx);
       })
        .notDifferentiable("torch 1.13: its derivative is not_implemented in derivatives.yaml"),
    op("aten::_embedding_bag_per_sample_weights_backward.out(Tensor grad, Tensor weight, Tensor indices, "
       "Tensor offsets, Tensor offset2bag, int mode, int padding_idx=-1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& weight, const Tensor& indices, const Tensor& offsets, const Tensor&,
          int64_t mode, int64_t padding_idx, Tensor out) {
         return writeOut(out, embeddingBagPerSampleWeightsBackward(grad, weight, indices, offsets, mode, padding_idx),
                         "_embedding_bag_per_sample_weights_backward");
       }),
    op("aten::_embedding_bag.out(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "
       "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, "
       "int padding_idx=-1, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2, Tensor(d!) out3) -> "
       "(Tensor(a!), Tensor(b!), Tensor(c!), Tensor(d!))",
       [](KILN_BAG_ARGS, Tensor o0, Tensor o1, Tensor o2, Tensor o3) {
         return writeBag(bag(weight, indices, offsets, mode, psw, include_last_offset, padding_idx), o0, o1, o2, o3);
       })
        .shape(embeddingBagRule),
    op("aten::_embedding_bag_forward_only(Tensor weight, Tensor indices, Tensor offsets, "
       "bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, "
       "bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)",
       [](KILN_BAG_ARGS) { return bag(weight, indices, offsets, mode, psw, include_last_offset, padding_idx); })
        .shape(embeddingBagRule)
        .notDifferentiable("torch 1.13: forward only, no derivative (its autograd fallback fails)"),
    op("aten::_embedding_bag_forward_only.out(Tensor weight, Tensor indices, Tensor offsets, "
       "bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, "
       "bool include_last_offset=False, int padding_idx=-1, *, Tensor(a!) out0, Tensor(b!) out1, "
       "Tensor(c!) out2, Tensor(d!) out3) -> (Tensor(a!), Tensor(b!), Tensor(c!), Tensor(d!))",
       [](KILN_BAG_ARGS, Tensor o0, Tensor o1, Tensor o2, Tensor o3) {
         return writeBag(bag(weight, indices, offsets, mode, psw, include_last_offset, padding_idx), o0, o1, o2, o3);
       })
        .shape(embeddingBagRule), );

#undef KILN_BAG_ARGS

}  // namespace
}  // namespace kiln
