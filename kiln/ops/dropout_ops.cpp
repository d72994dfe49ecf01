// aten:: registrations of layer norm and the dropout family, with PyTorch
// 1.13's schemas.
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/dropout.h"
#include "kiln/tensor/layer_norm.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using shapes::Args;
using shapes::OutputFacts;

OutputFacts facts(std::optional<ScalarType> dtype, VaryingShape sizes) {
  OutputFacts o;
  o.kind = OutputFacts::Kind::Tensor;
  o.tensor.dtype = dtype;
  o.tensor.sizes = std::move(sizes);
  o.tensor.contiguous = true;
  return o;
}

// native_layer_norm: the input's dtype and sizes, and statistics of the
// leading sizes followed by a 1 per normalized dim.
std::vector<OutputFacts> nativeLayerNormShape(const Args& a) {
  const TensorType* in = a.tensor("input");
  if (!in) return {};
  const std::optional<ScalarType> dtype = in->scalarType();
  VaryingShape stats;
  const std::optional<shapes::DimList> normalized = a.intList("normalized_shape");
  const auto& dims = in->sizes().dims();
  if (normalized && dims && normalized->size() <= dims->size()) {
    shapes::DimList s(dims->begin(), dims->end() - static_cast<std::ptrdiff_t>(normalized->size()));
    for (size_t i = 0; i < normalized->size(); ++i) s.push_back(1);
    stats = VaryingShape(s);
  }
  return {facts(dtype, in->sizes()), facts(dtype, stats), facts(dtype, stats)};
}

// native_dropout: the input's dtype and sizes, and a bool mask of those sizes.
std::vector<OutputFacts> nativeDropoutShape(const Args& a) {
  const TensorType* in = a.tensor("input");
  if (!in) return {};
  return {facts(in->scalarType(), in->sizes()), facts(ScalarType::Bool, in->sizes())};
}

#define KILN_DROPOUT_OPS(name, kind)                                                           \
  op("aten::" name "(Tensor input, float p, bool train) -> Tensor",                            \
     [](const Tensor& input, double p, bool train) { return dropout(input, p, train, kind); }) \
      .shape(shapes::sameDtype),                                                               \
      op("aten::" name "_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",                \
         [](Tensor self, double p, bool train) { return dropout_(self, p, train, kind); })

KILN_REGISTER_OPS(
    op("aten::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
       "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor",
       [](const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
          const std::optional<Tensor>& bias, double eps,
          bool /*cudnn_enable*/) { return layerNorm(input, normalized_shape, weight, bias, eps); })
        .shape(shapes::sameDtype),
    op("aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
       "-> (Tensor, Tensor, Tensor)",
       [](const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
          const std::optional<Tensor>& bias,
          double eps) { return nativeLayerNorm(input, normalized_shape, weight, bias, eps); })
        .shape(nativeLayerNormShape),
    op("aten::native_layer_norm.out(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
       "float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
       [](const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
          const std::optional<Tensor>& bias, double eps, Tensor out0, Tensor out1, Tensor out2) {
         auto [y, mean, rstd] = nativeLayerNorm(input, normalized_shape, weight, bias, eps);
         writeOut(out0, y, "native_layer_norm");
         writeOut(out1, mean, "native_layer_norm");
         writeOut(out2, rstd, "native_layer_norm");
         return std::make_tuple(out0, out1, out2);
       })
        .shape(nativeLayerNormShape),
    KILN_DROPOUT_OPS("dropout", DropoutKind::Plain), KILN_DROPOUT_OPS("feature_dropout", DropoutKind::Feature),
    KILN_DROPOUT_OPS("alpha_dropout", DropoutKind::Alpha),
    KILN_DROPOUT_OPS("feature_alpha_dropout", DropoutKind::FeatureAlpha),
    op("aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
       [](const Tensor& input, double p, std::optional<bool> train) { return nativeDropout(input, p, train); })
        .shape(nativeDropoutShape),
    op("aten::native_dropout.out(Tensor input, float p, bool? train, *, Tensor(a!) out0, Tensor(b!) out1) -> "
       "(Tensor(a!), Tensor(b!))",
       [](const Tensor& input, double p, std::optional<bool> train, Tensor out0, Tensor out1) {
         auto [y, mask] = nativeDropout(input, p, train);
         writeOut(out0, y, "native_dropout");
         writeOut(out1, mask, "native_dropout");
         return std::make_tuple(out0, out1);
       })
        .shape(nativeDropoutShape), );

}  // namespace
}  // namespace kiln
