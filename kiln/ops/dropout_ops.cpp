// aten:: registrations of layer norm and the dropout family, with PyTorch
// 1.13's schemas.
#include "kiln/core/op_registration.h"
#include "kiln/ops/composite.h"
#include "kiln/ops/norm_double_backward.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/dropout.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/layer_norm.h"
#include "kiln/tensor/normalization_backward.h"
#include "kiln/tensor/pointwise.h"
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

// derivatives.yaml's layer norm formula: one native_layer_norm_backward for
// the gradients needed, with the statistics `stats`.
OpDeclaration layerNormDerivative(OpDeclaration declaration, const std::string& stats) {
  std::string call =
      "torch.native_layer_norm_backward(grad, input, normalized_shape, " + stats + ", weight, bias, grad_input_mask)";
  std::string formula = "input, weight, bias: " + call;
  return std::move(declaration).derivative({formula.c_str(), "grad_fn: NativeLayerNormBackward0"});
}

// The derivatives of native_layer_norm_backward (norm_double_backward.h):
// normalized over the trailing normalized_shape dims; mean and rstd, saved
// results of the forward, get none (torch: not_implemented, never reached).
OpDeclaration layerNormDoubleBackward(OpDeclaration declaration) {
  namespace ndb = norm_double_backward;
  ndb::Form form;
  auto same = [](const std::string& e) { return e; };
  form.view = same;
  form.back = same;
  form.mean = [](const std::string& v) {
    return v + ".mean([d for d in range(input.dim() - len(normalized_shape), input.dim())], True)";
  };
  form.to_weight = [](const std::string& v) { return "(" + v + ").reshape([-1] + normalized_shape).sum(0)"; };
  form.from_weight = same;
  form.center = "mean";
  form.rstd = "rstd";
  form.grad_out = "grad_out";
  form.weight = "weight";
  ndb::Formulas f = ndb::formulas(form);
  std::string grad_out = "grad_out: " + f.grad_out;
  std::string input = "input: " + f.input;
  std::string weight = "weight: " + f.weight;
  return std::move(declaration)
      .derivative({grad_out.c_str(), input.c_str(), weight.c_str(), "mean: torch.zeros_like(mean)",
                   "rstd: torch.zeros_like(rstd)", "bias: torch.zeros(normalized_shape, dtype=input.dtype)"});
}

// Training-mode dropout of an input that requires grad, as torch 1.13
// composes it (composite.h): native_dropout for the plain kind, else a
// recorded multiplication by the drawn noise (and addition of the shift).
// Evaluation mode and p == 0 return the input: the derivative formula
// ("input: grad") covers only that case.
Tensor recordedDropout(const Tensor& input, double p, DropoutKind kind) {
  if (p == 1) return composite::callTensor("aten::mul", "Tensor", {input, zeros({}, input.dtype())});
  if (kind == DropoutKind::Plain) {
    return composite::call("aten::native_dropout", "", {input, p, true}).at(0).toTensor();
  }
  auto [scale, shift] = dropoutNoise(input, p, kind);
  Tensor out = composite::callTensor("aten::mul", "Tensor", {input, scale});
  if (shift.defined()) out = composite::callTensor("aten::add", "Tensor", {out, shift, 1});
  return out;
}

Tensor dropoutOp(const Tensor& input, double p, bool train, DropoutKind kind) {
  if (train && p > 0 && input.numel() > 0 && composite::recording({input})) {
    KILN_CHECK(p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
    return recordedDropout(input, p, kind);
  }
  return dropout(input, p, train, kind);
}

Tensor dropoutInPlaceOp(Tensor self, double p, bool train, DropoutKind kind) {
  if (train && p > 0 && self.numel() > 0 && composite::recording({self})) {
    KILN_CHECK(p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
    if (p == 1) return composite::callTensor("aten::mul_", "Tensor", {self, zeros({}, self.dtype())});
    auto [scale, shift] = dropoutNoise(self, p, kind);
    composite::call("aten::mul_", "Tensor", {self, scale});
    if (shift.defined()) composite::call("aten::add_", "Tensor", {self, shift, 1});
    return self;
  }
  return dropout_(self, p, train, kind);
}

#define KILN_DROPOUT_OPS(name, kind)                                                             \
  op("aten::" name "(Tensor input, float p, bool train) -> Tensor",                              \
     [](const Tensor& input, double p, bool train) { return dropoutOp(input, p, train, kind); }) \
      .shape(shapes::sameDtype)                                                                  \
      .derivative({"input: grad"}),                                                              \
      op("aten::" name "_(Tensor(a!) self, float p, bool train) -> Tensor(a!)",                  \
         [](Tensor self, double p, bool train) { return dropoutInPlaceOp(self, p, train, kind); })

KILN_REGISTER_OPS(
    layerNormDerivative(
        op("aten::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
           "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor",
           [](const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
              const std::optional<Tensor>& bias, double eps,
              bool /*cudnn_enable*/) { return layerNorm(input, normalized_shape, weight, bias, eps); })
            .shape(shapes::sameDtype),
        "torch.native_layer_norm(input, normalized_shape, None, None, eps)[1], "
        "torch.native_layer_norm(input, normalized_shape, None, None, eps)[2]"),
    layerNormDerivative(
        op("aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
           "-> (Tensor, Tensor, Tensor)",
           [](const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
              const std::optional<Tensor>& bias,
              double eps) { return nativeLayerNorm(input, normalized_shape, weight, bias, eps); })
            .shape(nativeLayerNormShape),
        "result1, result2"),
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
    layerNormDoubleBackward(
        op("aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, "
           "Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
           [](const Tensor& grad, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean,
              const Tensor& rstd, const std::optional<Tensor>& weight, const std::optional<Tensor>&,
              const IValue& output_mask) {
             const auto& m = output_mask.toListRef().elements;
             KILN_CHECK(m.size() == 3, "output_mask must hold 3 bools");
             return layerNormBackward(grad, input, normalized_shape, mean, rstd, weight, 1e-5,
                                      {m[0].toBool(), m[1].toBool(), m[2].toBool()});
           })),
    op("aten::native_layer_norm_backward.out(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
       "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask, *, Tensor(a!) out0, "
       "Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
       [](const Tensor& grad, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
          const std::optional<Tensor>& weight, const std::optional<Tensor>&, const IValue& output_mask, Tensor out0,
          Tensor out1, Tensor out2) {
         const auto& m = output_mask.toListRef().elements;
         KILN_CHECK(m.size() == 3, "output_mask must hold 3 bools");
         auto [a, b, c] = layerNormBackward(grad, input, normalized_shape, mean, rstd, weight, 1e-5,
                                            {m[0].toBool(), m[1].toBool(), m[2].toBool()});
         if (a.defined()) writeOut(out0, a, "native_layer_norm_backward");
         if (b.defined()) writeOut(out1, b, "native_layer_norm_backward");
         if (c.defined()) writeOut(out2, c, "native_layer_norm_backward");
         return std::make_tuple(out0, out1, out2);
       }),
    op("aten::native_dropout_backward.out(Tensor grad_output, Tensor mask, float scale, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& grad, const Tensor& mask, double scale, Tensor out) {
         return writeOut(out, mul(mul(grad, to(mask, grad.dtype())), full({}, scale, grad.dtype())),
                         "native_dropout_backward");
       }),
    KILN_DROPOUT_OPS("dropout", DropoutKind::Plain), KILN_DROPOUT_OPS("feature_dropout", DropoutKind::Feature),
    KILN_DROPOUT_OPS("alpha_dropout", DropoutKind::Alpha),
    KILN_DROPOUT_OPS("feature_alpha_dropout", DropoutKind::FeatureAlpha),
    op("aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
       [](const Tensor& input, double p, std::optional<bool> train) { return nativeDropout(input, p, train); })
        .shape(nativeDropoutShape)
        .derivative({"input: torch.native_dropout_backward(grad, result1, (1.0 / (1.0 - p) if p < 1.0 else 0.0) "
                     "if train is None or train else 1.0)",
                     "non_differentiable: result1"}),
    op("aten::native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor",
       [](const Tensor& grad, const Tensor& mask, double scale) {
         return mul(mul(grad, to(mask, grad.dtype())), full({}, scale, grad.dtype()));
       })
        // Linear in grad_output (torch's native_dropout_double_backward).
        .derivative({"grad_output: torch.native_dropout_backward(grad, mask, scale)"}),
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
