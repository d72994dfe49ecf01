// aten:: registrations of convolution and pooling, with PyTorch 1.13's
// schemas, and their shape rules (output sizes from the known sizes and
// parameters).
#include "kiln/core/op_registration.h"
#include "kiln/ops/composite.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/conv.h"
#include "kiln/tensor/conv_backward.h"
#include "kiln/tensor/pooling.h"
#include "kiln/tensor/pooling_backward.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using shapes::Args;
using shapes::contiguousOut;
using shapes::DimList;
using shapes::OutputFacts;
using Bias = std::optional<Tensor>;
using Out = std::vector<OutputFacts>;

std::optional<DimList> dimsOf(const TensorType* t) {
  if (!t || !t->sizes().dims()) return std::nullopt;
  return *t->sizes().dims();
}

std::optional<ScalarType> dtypeOf(const TensorType* t) { return t ? t->scalarType() : std::nullopt; }

// The i-th of a parameter list broadcast to `n` dims (one value stands for all).
std::optional<int64_t> param(const std::optional<DimList>& list, size_t i, size_t n) {
  if (!list || list->empty()) return std::nullopt;
  if (list->size() == 1) return (*list)[0];
  if (list->size() != n) return std::nullopt;
  return (*list)[i];
}

// Convolutions of every form: conv1d/2d/3d (maybe unbatched, maybe a
// padding string), conv_transpose*, convolution, _convolution*.
Out convShape(const Args& a) {
  auto input = a.tensor("input");
  auto x = dimsOf(input), w = dimsOf(a.tensor("weight"));
  auto dtype = dtypeOf(input);
  if (!x || !w || w->size() < 3) return {contiguousOut(dtype, VaryingShape())};
  std::optional<bool> transposed =
      a.has("transposed") ? a.knownBool("transposed") : std::optional<bool>(a.has("output_padding"));
  const size_t spatial = w->size() - 2;
  const bool batched = x->size() == w->size();
  if (!transposed || (!batched && x->size() + 1 != w->size())) return {contiguousOut(dtype, VaryingShape())};
  DimList out;
  if (batched) out.push_back((*x)[0]);
  std::optional<int64_t> groups = a.has("groups") ? a.knownInt("groups") : std::nullopt;
  if (*transposed) {
    out.push_back((*w)[1] && groups ? std::optional<int64_t>(*(*w)[1] * *groups) : std::nullopt);
  } else {
    out.push_back((*w)[0]);
  }
  auto stride = a.intList("stride"), dilation = a.intList("dilation");
  auto output_padding = a.has("output_padding") ? a.intList("output_padding") : std::optional<DimList>(DimList{0});
  std::optional<DimList> padding;
  std::optional<std::string> mode;
  if (auto p = a.known("padding"); p && p->isString()) {
    mode = p->toStringRef();
  } else {
    padding = a.intList("padding");
  }
  const size_t first = x->size() - spatial;
  for (size_t i = 0; i < spatial; ++i) {
    auto in = (*x)[first + i], k = (*w)[2 + i];
    if (mode && *mode == "same") {
      out.push_back(in);
      continue;
    }
    auto s = param(stride, i, spatial), d = param(dilation, i, spatial);
    auto p = mode ? std::optional<int64_t>(0) : param(padding, i, spatial);
    auto op = *transposed ? param(output_padding, i, spatial) : std::optional<int64_t>(0);
    if (!in || !k || !s || !d || !p || !op || *s <= 0) {
      out.push_back(std::nullopt);
    } else if (*transposed) {
      out.push_back((*in - 1) * *s - 2 * *p + *d * (*k - 1) + *op + 1);
    } else {
      out.push_back((*in + 2 * *p - *d * (*k - 1) - 1) / *s + 1);
    }
  }
  return {contiguousOut(dtype, VaryingShape(out))};
}

// Pooling with a window: the batch dims of self, then each spatial size.
template <int64_t Spatial, bool WithIndices>
Out poolShape(const Args& a) {
  auto self = a.tensor("self");
  auto x = dimsOf(self);
  auto dtype = dtypeOf(self);
  auto result = [&](VaryingShape sizes) {
    Out out{contiguousOut(dtype, sizes)};
    if (WithIndices) out.push_back(contiguousOut(ScalarType::Long, sizes));
    return out;
  };
  const auto n = static_cast<size_t>(Spatial);
  if (!x || x->size() < n + 1 || x->size() > n + 2) return result(VaryingShape());
  auto kernel = a.intList("kernel_size"), stride = a.intList("stride"), padding = a.intList("padding");
  auto dilation = a.has("dilation") ? a.intList("dilation") : std::optional<DimList>(DimList{1});
  auto ceil = a.knownBool("ceil_mode");
  DimList out(x->begin(), x->end() - Spatial);
  for (size_t i = 0; i < n; ++i) {
    auto in = (*x)[x->size() - n + i];
    auto k = param(kernel, i, n), p = param(padding, i, n), d = param(dilation, i, n);
    auto s = stride && stride->empty() ? k : param(stride, i, n);
    if (!in || !k || !s || !p || !d || !ceil || *s <= 0) {
      out.push_back(std::nullopt);
    } else {
      out.push_back(poolingOutputSize(*in, *k, *p, *s, *d, *ceil));
    }
  }
  return result(VaryingShape(out));
}

template <int64_t Spatial, bool WithIndices>
Out adaptiveShape(const Args& a) {
  auto self = a.tensor("self");
  auto x = dimsOf(self);
  auto dtype = dtypeOf(self);
  auto result = [&](VaryingShape sizes) {
    Out out{contiguousOut(dtype, sizes)};
    if (WithIndices) out.push_back(contiguousOut(ScalarType::Long, sizes));
    return out;
  };
  const auto n = static_cast<size_t>(Spatial);
  auto size = a.intList("output_size");
  if (!x || x->size() < n + 1 || x->size() > n + 2 || !size || size->size() != n) return result(VaryingShape());
  DimList out(x->begin(), x->end() - Spatial);
  out.insert(out.end(), size->begin(), size->end());
  return result(VaryingShape(out));
}

std::tuple<Tensor, Tensor> writePair(Tensor out, Tensor indices, const std::tuple<Tensor, Tensor>& result,
                                     const char* name) {
  writeOut(out, std::get<0>(result), name);
  writeOut(indices, std::get<1>(result), name);
  return {out, indices};
}

Tensor convolutionOp(const Tensor& input, const Tensor& weight, const Bias& bias, IntArrayRef stride,
                     IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                     int64_t groups) {
  return convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
}

// The derivative of a convolution whose parameters are the schema's
// arguments but for `transposed` and `output_padding` (given as TorchScript
// expressions): one aten::convolution_backward for the gradients needed, as
// derivatives.yaml's convolution formula.
OpDeclaration convDerivative(OpDeclaration declaration, const std::string& transposed,
                             const std::string& output_padding) {
  std::string call = "torch.convolution_backward(grad, input, weight, None, stride, padding, dilation, " + transposed +
                     ", " + output_padding + ", groups, grad_input_mask)";
  std::string formula = "input, weight, bias: " + call;
  return std::move(declaration).derivative({formula.c_str(), "grad_fn: ConvolutionBackward0"});
}

// The derivatives of max pooling's backward (2d, 3d and adaptive, `dims`
// spatial dims): the incoming gradient read at the indices of the maxima,
// as torch's max_pool_double_backward; `self` only gave the geometry.
OpDeclaration maxPoolDoubleBackward(OpDeclaration declaration, int dims) {
  const std::string flat = "flatten(-" + std::to_string(dims) + ")";
  const std::string grad_output =
      "grad_output: grad." + flat + ".gather(-1, indices." + flat + ").view(indices.size())";
  return std::move(declaration).derivative({grad_output.c_str(), "self: torch.zeros_like(self)"});
}

// The derivatives of convolution_backward, as torch's
// _convolution_double_backward: with ggI, ggW, ggb the gradients of its
// three results (grads), each result linear in the other arguments:
//   grad_output: conv(ggI, W) + conv(I, ggW) + ggb (broadcast over channels)
//   input:       the input gradient of conv(I, ggW) at grad_output
//   weight:      the weight gradient of conv(ggI, W) at grad_output
// A result output_mask did not ask for is undefined and contributes nothing.
OpDeclaration convolutionDoubleBackward(OpDeclaration declaration) {
  const std::string args = "stride, padding, dilation, transposed, output_padding, groups";
  auto unless = [](const std::string& term, int result, const std::string& like) {
    return "(" + term + " if output_mask[" + std::to_string(result) + "] else torch.zeros_like(" + like + "))";
  };
  const std::string grad_output =
      "grad_output: " + unless("torch.convolution(grads[0], weight, None, " + args + ")", 0, "grad_output") + " + " +
      unless("torch.convolution(input, grads[1], None, " + args + ")", 1, "grad_output") + " + " +
      unless("grads[2].reshape([-1] + [1] * (grad_output.dim() - 2))", 2, "grad_output");
  const std::string input = "input: " + unless("torch.convolution_backward(grad_output, input, grads[1], None, " +
                                                   args + ", [True, False, False])[0]",
                                               1, "input");
  const std::string weight = "weight: " + unless("torch.convolution_backward(grad_output, grads[0], weight, None, " +
                                                     args + ", [False, True, False])[1]",
                                                 0, "weight");
  return std::move(declaration).derivative({grad_output.c_str(), input.c_str(), weight.c_str()});
}

std::tuple<Tensor, Tensor, Tensor> convolutionBackwardOp(const Tensor& grad_output, const Tensor& input,
                                                         const Tensor& weight, const IValue& /*bias_sizes*/,
                                                         IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                         bool transposed, IntArrayRef output_padding, int64_t groups,
                                                         const IValue& output_mask) {
  std::array<bool, 3> mask{true, true, true};
  const auto& elements = output_mask.toListRef().elements;
  KILN_CHECK(elements.size() == 3, "convolution_backward: output_mask must hold 3 bools");
  for (size_t i = 0; i < 3; ++i) mask[i] = elements[i].toBool();
  return convolutionBackward(grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                             mask);
}

// aten::conv{1,2,3}d, their .padding overloads (a padding string) and
// aten::conv_transpose{1,2,3}d: one kernel per form, the spatial rank given;
// the schemas differ only in that rank and its defaults.
OpDeclaration convNdOp(int64_t spatial, const char* schema) {
  return convDerivative(op(schema,
                           [spatial](const Tensor& input, const Tensor& weight, const Bias& bias, IntArrayRef stride,
                                     IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
                             return convNd(spatial, input, weight, bias, stride, padding, dilation, groups);
                           })
                            .shape(convShape)
                            .traits(OpTrait::Expensive),
                        "False", "[0]");
}

// A convolution with a padding string as torch 1.13 composes it
// (_convolution_mode) when an input requires grad (composite.h): "valid" is
// no padding; "same" pads d * (k - 1) in all, the odd element on the right
// by constant_pad_nd, the rest by the convolution.
Tensor recordedConvolutionMode(const Tensor& input, const Tensor& weight, const Bias& bias, IntArrayRef stride,
                               const std::string& padding, IntArrayRef dilation, int64_t groups) {
  using composite::callTensor;
  KILN_CHECK(padding == "valid" || padding == "same", "Invalid padding string: '", padding, "'");
  const int64_t spatial = weight.dim() - 2;
  KILN_CHECK(spatial >= 1, "weight should have at least three dimensions");
  const bool unbatched = input.dim() == weight.dim() - 1;
  Tensor x = unbatched ? callTensor("aten::unsqueeze", "", {input, 0}) : input;
  std::vector<int64_t> pad(static_cast<size_t>(spatial), 0);
  if (padding == "same") {
    for (int64_t s : stride) KILN_CHECK(s == 1, "padding='same' is not supported for strided convolutions");
    std::vector<int64_t> extra;  // constant_pad_nd's list: last dim first
    bool asymmetric = false;
    for (int64_t i = spatial - 1; i >= 0; --i) {
      const int64_t d = dilation.size() == 1 ? dilation[0] : dilation[static_cast<size_t>(i)];
      const int64_t total = d * (weight.size(i + 2) - 1);
      pad[static_cast<size_t>(i)] = total / 2;
      extra.push_back(0);
      extra.push_back(total % 2);
      asymmetric |= total % 2 != 0;
    }
    if (asymmetric) x = callTensor("aten::constant_pad_nd", "", {x, IValue(extra), 0});
  }
  Tensor out = callTensor("aten::convolution", "",
                          {x, weight, bias ? IValue(*bias) : IValue(), stride, IValue(pad), dilation, false,
                           IValue(std::vector<int64_t>{0}), groups});
  return unbatched ? callTensor("aten::squeeze", "dim", {out, 0}) : out;
}

OpDeclaration convNdModeOp(int64_t spatial, const char* schema) {
  return op(schema,
            [spatial](const Tensor& input, const Tensor& weight, const Bias& bias, IntArrayRef stride,
                      const std::string& padding, IntArrayRef dilation, int64_t groups) {
              if (composite::recording({input, weight, bias.value_or(Tensor())})) {
                return recordedConvolutionMode(input, weight, bias, stride, padding, dilation, groups);
              }
              return convNdMode(spatial, input, weight, bias, stride, padding, dilation, groups);
            })
      .shape(convShape)
      .traits(OpTrait::Expensive);
}

OpDeclaration convTransposeNdOp(int64_t spatial, const char* schema) {
  return convDerivative(
      op(schema,
         [spatial](const Tensor& input, const Tensor& weight, const Bias& bias, IntArrayRef stride, IntArrayRef padding,
                   IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
           return convTransposeNd(spatial, input, weight, bias, stride, padding, output_padding, groups, dilation);
         })
          .shape(convShape)
          .traits(OpTrait::Expensive),
      "True", "output_padding");
}

KILN_REGISTER_OPS(
    // convolution
    convNdOp(1,
             "aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], "
             "int[1] padding=[0], int[1] dilation=[1], int groups=1) -> Tensor"),
    convNdModeOp(1,
                 "aten::conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], "
                 "str padding=\"valid\", int[1] dilation=[1], int groups=1) -> Tensor"),
    convNdOp(2,
             "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, "
             "int[2] dilation=1, int groups=1) -> Tensor"),
    convNdModeOp(2,
                 "aten::conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
                 "str padding=\"valid\", int[2] dilation=1, int groups=1) -> Tensor"),
    convNdOp(3,
             "aten::conv3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, int[3] padding=0, "
             "int[3] dilation=1, int groups=1) -> Tensor"),
    convNdModeOp(3,
                 "aten::conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, "
                 "str padding=\"valid\", int[3] dilation=1, int groups=1) -> Tensor"),
    convTransposeNdOp(1,
                      "aten::conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], "
                      "int[1] padding=[0], int[1] output_padding=[0], int groups=1, int[1] dilation=[1]) -> Tensor"),
    convTransposeNdOp(2,
                      "aten::conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, "
                      "int[2] stride=1, int[2] padding=0, int[2] output_padding=0, int groups=1, "
                      "int[2] dilation=1) -> Tensor"),
    convTransposeNdOp(3,
                      "aten::conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, "
                      "int[3] stride=1, int[3] padding=0, int[3] output_padding=0, int groups=1, "
                      "int[3] dilation=1) -> Tensor"),
    convDerivative(op("aten::convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
                      "int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor",
                      convolutionOp)
                       .shape(convShape)
                       .traits(OpTrait::Expensive),
                   "transposed", "output_padding"),
    convolutionDoubleBackward(
        op("aten::convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, "
           "int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, "
           "bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
           convolutionBackwardOp)
            .traits(OpTrait::Expensive)),
    op("aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
       "int[] dilation, bool transposed, int[] output_padding, int groups, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& input, const Tensor& weight, const Bias& bias, IntArrayRef stride, IntArrayRef padding,
          IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups, Tensor out) {
         return writeOut(
             out, convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups),
             "convolution");
       })
        .shape(convShape)
        .traits(OpTrait::Expensive),
    convDerivative(
        op("aten::_convolution.deprecated(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
           "int[] dilation, bool transposed, int[] output_padding, int groups, bool benchmark, bool deterministic, "
           "bool cudnn_enabled) -> Tensor",
           [](const Tensor& input, const Tensor& weight, const Bias& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups, bool, bool, bool) {
             return convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
           })
            .shape(convShape)
            .traits(OpTrait::Expensive),
        "transposed", "output_padding"),
    convDerivative(
        op("aten::_convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
           "bool transposed, int[] output_padding, int groups, bool benchmark, bool deterministic, bool cudnn_enabled, "
           "bool allow_tf32) -> Tensor",
           [](const Tensor& input, const Tensor& weight, const Bias& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups, bool, bool, bool,
              bool) {
             return convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
           })
            .shape(convShape)
            .traits(OpTrait::Expensive),
        "transposed", "output_padding"),
    op("aten::_convolution.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
       "int[] dilation, bool transposed, int[] output_padding, int groups, bool benchmark, bool deterministic, "
       "bool cudnn_enabled, bool allow_tf32, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& input, const Tensor& weight, const Bias& bias, IntArrayRef stride, IntArrayRef padding,
          IntArrayRef dilation, bool transposed, IntArrayRef output_padding, int64_t groups, bool, bool, bool, bool,
          Tensor out) {
         return writeOut(
             out, convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups),
             "_convolution");
       })
        .shape(convShape)
        .traits(OpTrait::Expensive),
    op("aten::_convolution_mode(Tensor input, Tensor weight, Tensor? bias, int[] stride, str padding, "
       "int[] dilation, int groups) -> Tensor",
       [](const Tensor& input, const Tensor& weight, const Bias& bias, IntArrayRef stride, const std::string& padding,
          IntArrayRef dilation, int64_t groups) {
         if (composite::recording({input, weight, bias.value_or(Tensor())})) {
           return recordedConvolutionMode(input, weight, bias, stride, padding, dilation, groups);
         }
         return convolutionMode(input, weight, bias, stride, padding, dilation, groups);
       })
        .shape(convShape)
        .traits(OpTrait::Expensive),

    // max pooling
    op("aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
       "int[1] dilation=[1], bool ceil_mode=False) -> Tensor",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil) {
         return maxPool(1, self, k, s, p, d, ceil, "max_pool1d");
       })
        .shape(poolShape<1, false>)
        .derivative({"self: torch.max_pool2d_with_indices_backward(grad.unsqueeze(-2), self.unsqueeze(-2), [1, 1], [1, "
                     "1], [0, 0], [1, 1], ceil_mode, torch.max_pool1d_with_indices(self, kernel_size, stride, padding, "
                     "dilation, ceil_mode)[1].unsqueeze(-2)).squeeze(-2)",
                     "grad_fn: MaxPool1DBackward0"}),
    op("aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
       "bool ceil_mode=False) -> Tensor",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil) {
         return maxPool(2, self, k, s, p, d, ceil, "max_pool2d");
       })
        .shape(poolShape<2, false>)
        .derivative(
            {"self: torch.max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, "
             "ceil_mode, torch.max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[1])",
             "grad_fn: MaxPool2DWithIndicesBackward0"}),
    op("aten::max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, "
       "bool ceil_mode=False) -> Tensor",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil) {
         return maxPool(3, self, k, s, p, d, ceil, "max_pool3d");
       })
        .shape(poolShape<3, false>)
        .derivative(
            {"self: torch.max_pool3d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, "
             "ceil_mode, torch.max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[1])",
             "grad_fn: MaxPool3DWithIndicesBackward0"}),
    op("aten::max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
       "int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil) {
         return maxPoolWithIndices(1, self, k, s, p, d, ceil, "max_pool1d_with_indices");
       })
        .shape(poolShape<1, true>)
        .derivative({"self: torch.max_pool2d_with_indices_backward(grad.unsqueeze(-2), self.unsqueeze(-2), [1, 1], [1, "
                     "1], [0, 0], [1, 1], ceil_mode, result1.unsqueeze(-2)).squeeze(-2)",
                     "non_differentiable: result1", "grad_fn: MaxPool1DWithIndicesBackward0"}),
    op("aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
       "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil) {
         return maxPoolWithIndices(2, self, k, s, p, d, ceil, "max_pool2d");
       })
        .shape(poolShape<2, true>)
        .derivative({"self: torch.max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, "
                     "ceil_mode, result1)",
                     "non_differentiable: result1", "grad_fn: MaxPool2DWithIndicesBackward0"}),
    op("aten::max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
       "int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil, Tensor out,
          Tensor indices) {
         return writePair(out, indices, maxPoolWithIndices(2, self, k, s, p, d, ceil, "max_pool2d"),
                          "max_pool2d_with_indices");
       })
        .shape(poolShape<2, true>),
    op("aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
       "int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil) {
         return maxPoolWithIndices(3, self, k, s, p, d, ceil, "max_pool3d");
       })
        .shape(poolShape<3, true>)
        .derivative({"self: torch.max_pool3d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, "
                     "ceil_mode, result1)",
                     "non_differentiable: result1", "grad_fn: MaxPool3DWithIndicesBackward0"}),
    op("aten::max_pool3d_with_indices.out(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
       "int[3] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d, bool ceil, Tensor out,
          Tensor indices) {
         return writePair(out, indices, maxPoolWithIndices(3, self, k, s, p, d, ceil, "max_pool3d"),
                          "max_pool3d_with_indices");
       })
        .shape(poolShape<3, true>),

    // average pooling
    op("aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
       "bool ceil_mode=False, bool count_include_pad=True) -> Tensor",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil, bool include_pad) {
         return avgPool(1, self, k, s, p, ceil, include_pad, std::nullopt, "avg_pool1d");
       })
        .shape(poolShape<1, false>)
        .derivative(
            {"self: torch.avg_pool2d_backward(grad.unsqueeze(-2), self.unsqueeze(-2), [1] + kernel_size, [1] + (stride "
             "if len(stride) > 0 else kernel_size), [0] + padding, ceil_mode, count_include_pad, None).squeeze(-2)",
             "grad_fn: AvgPool1DBackward0"}),
    op("aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
       "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil, bool include_pad,
          std::optional<int64_t> divisor) {
         return avgPool(2, self, k, s, p, ceil, include_pad, divisor, "avg_pool2d");
       })
        .shape(poolShape<2, false>)
        .derivative({"self: torch.avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode, "
                     "count_include_pad, divisor_override)",
                     "grad_fn: AvgPool2DBackward0"}),
    op("aten::avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
       "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil, bool include_pad,
          std::optional<int64_t> divisor, Tensor out) {
         return writeOut(out, avgPool(2, self, k, s, p, ceil, include_pad, divisor, "avg_pool2d"), "avg_pool2d");
       })
        .shape(poolShape<2, false>),
    op("aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
       "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil, bool include_pad,
          std::optional<int64_t> divisor) {
         return avgPool(3, self, k, s, p, ceil, include_pad, divisor, "avg_pool3d");
       })
        .shape(poolShape<3, false>)
        .derivative({"self: torch.avg_pool3d_backward(grad, self, kernel_size, stride, padding, ceil_mode, "
                     "count_include_pad, divisor_override)",
                     "grad_fn: AvgPool3DBackward0"}),
    op("aten::avg_pool3d.out(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
       "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil, bool include_pad,
          std::optional<int64_t> divisor, Tensor out) {
         return writeOut(out, avgPool(3, self, k, s, p, ceil, include_pad, divisor, "avg_pool3d"), "avg_pool3d");
       })
        .shape(poolShape<3, false>),

    // adaptive pooling
    op("aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
       [](const Tensor& self, IntArrayRef size) { return adaptiveAvgPool(1, self, size, "adaptive_avg_pool1d"); })
        .shape(adaptiveShape<1, false>)
        .derivative({"self: torch._adaptive_avg_pool2d_backward(grad.unsqueeze(-2), self.unsqueeze(-2)).squeeze(-2)",
                     "grad_fn: AdaptiveAvgPool1DBackward0"}),
    op("aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
       [](const Tensor& self, IntArrayRef size) { return adaptiveAvgPool(2, self, size, "adaptive_avg_pool2d"); })
        .shape(adaptiveShape<2, false>)
        .derivative({"self: torch._adaptive_avg_pool2d_backward(grad, self)", "grad_fn: AdaptiveAvgPool2DBackward0"}),
    op("aten::adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef size, Tensor out) {
         return writeOut(out, adaptiveAvgPool(2, self, size, "adaptive_avg_pool2d"), "adaptive_avg_pool2d");
       })
        .shape(adaptiveShape<2, false>),
    op("aten::_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
       [](const Tensor& self, IntArrayRef size) { return adaptiveAvgPool(2, self, size, "adaptive_avg_pool2d"); })
        .shape(adaptiveShape<2, false>)
        .derivative({"self: torch._adaptive_avg_pool2d_backward(grad, self)", "grad_fn: AdaptiveAvgPool2DBackward0"}),
    op("aten::_adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef size, Tensor out) {
         return writeOut(out, adaptiveAvgPool(2, self, size, "adaptive_avg_pool2d"), "_adaptive_avg_pool2d");
       })
        .shape(adaptiveShape<2, false>),
    op("aten::adaptive_avg_pool3d(Tensor self, int[3] output_size) -> Tensor",
       [](const Tensor& self, IntArrayRef size) { return adaptiveAvgPool(3, self, size, "adaptive_avg_pool3d"); })
        .shape(adaptiveShape<3, false>)
        .derivative({"self: torch._adaptive_avg_pool3d_backward(grad, self)", "grad_fn: AdaptiveAvgPool3DBackward0"}),
    op("aten::adaptive_avg_pool3d.out(Tensor self, int[3] output_size, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef size, Tensor out) {
         return writeOut(out, adaptiveAvgPool(3, self, size, "adaptive_avg_pool3d"), "adaptive_avg_pool3d");
       })
        .shape(adaptiveShape<3, false>),
    op("aten::_adaptive_avg_pool3d(Tensor self, int[3] output_size) -> Tensor",
       [](const Tensor& self, IntArrayRef size) { return adaptiveAvgPool(3, self, size, "adaptive_avg_pool3d"); })
        .shape(adaptiveShape<3, false>)
        .derivative({"self: torch._adaptive_avg_pool3d_backward(grad, self)", "grad_fn: AdaptiveAvgPool3DBackward0"}),
    op("aten::_adaptive_avg_pool3d.out(Tensor self, int[3] output_size, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef size, Tensor out) {
         return writeOut(out, adaptiveAvgPool(3, self, size, "adaptive_avg_pool3d"), "_adaptive_avg_pool3d");
       })
        .shape(adaptiveShape<3, false>),
    op("aten::adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)",
       [](const Tensor& self, IntArrayRef size) { return adaptiveMaxPool(1, self, size, "adaptive_max_pool1d"); })
        .shape(adaptiveShape<1, true>)
        .derivative({"self: torch.adaptive_max_pool2d_backward(grad.unsqueeze(-2), self.unsqueeze(-2), "
                     "result1.unsqueeze(-2)).squeeze(-2)",
                     "non_differentiable: result1", "grad_fn: AdaptiveMaxPool1DBackward0"}),
    op("aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
       [](const Tensor& self, IntArrayRef size) { return adaptiveMaxPool(2, self, size, "adaptive_max_pool2d"); })
        .shape(adaptiveShape<2, true>)
        .derivative({"self: torch.adaptive_max_pool2d_backward(grad, self, result1)", "non_differentiable: result1",
                     "grad_fn: AdaptiveMaxPool2DBackward0"}),
    op("aten::adaptive_max_pool2d.out(Tensor self, int[2] output_size, *, Tensor(a!) out, Tensor(b!) indices) -> "
       "(Tensor(a!), Tensor(b!))",
       [](const Tensor& self, IntArrayRef size, Tensor out, Tensor indices) {
         return writePair(out, indices, adaptiveMaxPool(2, self, size, "adaptive_max_pool2d"), "adaptive_max_pool2d");
       })
        .shape(adaptiveShape<2, true>),
    op("aten::adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)",
       [](const Tensor& self, IntArrayRef size) { return adaptiveMaxPool(3, self, size, "adaptive_max_pool3d"); })
        .shape(adaptiveShape<3, true>)
        .derivative({"self: torch.adaptive_max_pool3d_backward(grad, self, result1)", "non_differentiable: result1",
                     "grad_fn: AdaptiveMaxPool3DBackward0"}),
    op("aten::adaptive_max_pool3d.out(Tensor self, int[3] output_size, *, Tensor(a!) out, Tensor(b!) indices) -> "
       "(Tensor(a!), Tensor(b!))",
       [](const Tensor& self, IntArrayRef size, Tensor out, Tensor indices) {
         return writePair(out, indices, adaptiveMaxPool(3, self, size, "adaptive_max_pool3d"), "adaptive_max_pool3d");
       })
        .shape(adaptiveShape<3, true>),

    // pooling backward (derivatives.yaml's kernels)
    maxPoolDoubleBackward(
        op("aten::max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
           "int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor",
           [](const Tensor& grad, const Tensor& self, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool,
              const Tensor& indices) { return maxPoolBackward(2, grad, self, indices); }),
        2),
    op("aten::max_pool2d_with_indices_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, "
       "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices, *, Tensor(a!) grad_input) -> "
       "Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool,
          const Tensor& indices, Tensor out) {
         return writeOut(out, maxPoolBackward(2, grad, self, indices), "max_pool2d_with_indices_backward");
       }),
    op("aten::max_pool3d_with_indices_backward.grad_input(Tensor grad_output, Tensor self, int[3] kernel_size, "
       "int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices, *, Tensor(a!) grad_input) -> "
       "Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool,
          const Tensor& indices, Tensor out) {
         return writeOut(out, maxPoolBackward(3, grad, self, indices), "max_pool3d_with_indices_backward");
       }),
    op("aten::avg_pool2d_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
       "int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override, *, Tensor(a!) grad_input) -> "
       "Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool, bool include_pad,
          std::optional<int64_t> divisor, Tensor out) {
         return writeOut(out, avgPoolBackward(2, grad, self, k, s, p, include_pad, divisor), "avg_pool2d_backward");
       }),
    op("aten::avg_pool3d_backward.grad_input(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, "
       "int[3] padding, bool ceil_mode, bool count_include_pad, int? divisor_override, *, Tensor(a!) grad_input) -> "
       "Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool, bool include_pad,
          std::optional<int64_t> divisor, Tensor out) {
         return writeOut(out, avgPoolBackward(3, grad, self, k, s, p, include_pad, divisor), "avg_pool3d_backward");
       }),
    op("aten::_adaptive_avg_pool2d_backward.out(Tensor grad_output, Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, Tensor out) {
         return writeOut(out, adaptiveAvgPoolBackward(2, grad, self), "_adaptive_avg_pool2d_backward");
       }),
    op("aten::_adaptive_avg_pool3d_backward.out(Tensor grad_output, Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, Tensor out) {
         return writeOut(out, adaptiveAvgPoolBackward(3, grad, self), "_adaptive_avg_pool3d_backward");
       }),
    op("aten::adaptive_max_pool2d_backward.grad_input(Tensor grad_output, Tensor self, Tensor indices, *, "
       "Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& indices, Tensor out) {
         return writeOut(out, maxPoolBackward(2, grad, self, indices), "adaptive_max_pool2d_backward");
       }),
    op("aten::adaptive_max_pool3d_backward.grad_input(Tensor grad_output, Tensor self, Tensor indices, *, "
       "Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Tensor& indices, Tensor out) {
         return writeOut(out, maxPoolBackward(3, grad, self, indices), "adaptive_max_pool3d_backward");
       }),
    op("aten::convolution_backward.out(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, "
       "int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, "
       "bool[3] output_mask, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> "
       "(Tensor(a!), Tensor(b!), Tensor(c!))",
       [](const Tensor& grad_output, const Tensor& input, const Tensor& weight, const IValue& bias_sizes,
          IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
          int64_t groups, const IValue& output_mask, Tensor out0, Tensor out1, Tensor out2) {
         auto [a, b, c] = convolutionBackwardOp(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                                                transposed, output_padding, groups, output_mask);
         if (a.defined()) writeOut(out0, a, "convolution_backward");
         if (b.defined()) writeOut(out1, b, "convolution_backward");
         if (c.defined()) writeOut(out2, c, "convolution_backward");
         return std::make_tuple(out0, out1, out2);
       }),
    maxPoolDoubleBackward(
        op("aten::max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, "
           "int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices) -> Tensor",
           [](const Tensor& grad, const Tensor& self, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool,
              const Tensor& indices) { return maxPoolBackward(3, grad, self, indices); }),
        3),
    op("aten::avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
       "int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",
       [](const Tensor& grad, const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool, bool include_pad,
          std::optional<int64_t> divisor) { return avgPoolBackward(2, grad, self, k, s, p, include_pad, divisor); })
        .derivative({"grad_output: torch.avg_pool2d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, "
                     "divisor_override)",
                     "self: torch.zeros_like(self)"}),
    op("aten::avg_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, "
       "int[3] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",
       [](const Tensor& grad, const Tensor& self, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool, bool include_pad,
          std::optional<int64_t> divisor) { return avgPoolBackward(3, grad, self, k, s, p, include_pad, divisor); })
        .derivative({"grad_output: torch.avg_pool3d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, "
                     "divisor_override)",
                     "self: torch.zeros_like(self)"}),
    op("aten::_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor",
       [](const Tensor& grad, const Tensor& self) { return adaptiveAvgPoolBackward(2, grad, self); })
        .derivative({"grad_output: torch._adaptive_avg_pool2d(grad, grad_output.size()[-2:])",
                     "self: torch.zeros_like(self)"}),
    op("aten::_adaptive_avg_pool3d_backward(Tensor grad_output, Tensor self) -> Tensor",
       [](const Tensor& grad, const Tensor& self) { return adaptiveAvgPoolBackward(3, grad, self); })
        .derivative({"grad_output: torch._adaptive_avg_pool3d(grad, grad_output.size()[-3:])",
                     "self: torch.zeros_like(self)"}),
    maxPoolDoubleBackward(
        op("aten::adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor",
           [](const Tensor& grad, const Tensor& self, const Tensor& indices) {
             return maxPoolBackward(2, grad, self, indices);
           }),
        2),
    maxPoolDoubleBackward(
        op("aten::adaptive_max_pool3d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor",
           [](const Tensor& grad, const Tensor& self, const Tensor& indices) {
             return maxPoolBackward(3, grad, self, indices);
           }),
        3), );

}  // namespace
}  // namespace kiln
