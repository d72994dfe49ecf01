// Activation functions declared by their element expression
// (elementwise_ops.h): each line is the whole operator, eager, scripted,
// shape-propagated and fusible, with PyTorch 1.13's schemas and formulas.
// prelu and glu, which are not one element's function of one tensor, have
// their own kernels below.
#include "kiln/ops/elementwise_ops.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using kernels::ParamDtypes;

// The functional and in-place forms of an op without parameters or out=
// (relu6, selu: composites in PyTorch, whose errors name the op they call).
#define KILN_NOPARAM_OPS(name, kname, dtypes, formula, ...)                                                        \
  op("aten::" name "(Tensor self) -> Tensor",                                                                      \
     [](const Tensor& self) {                                                                                      \
       return kernels::paramElementwise<dtypes>(                                                                   \
           kname, self, Tensor(), [&]<typename T>() { return [](T self) -> T { return __VA_ARGS__; }; });          \
     })                                                                                                            \
      .shape(shapes::sameDtype)                                                                                    \
      .pointwise(                                                                                                  \
          elementwiseFromCpp(pointwise::TypeRule::Promote, pointwise::DtypeSet::Floating, #__VA_ARGS__, {"self"})) \
      .derivative(KILN_PP_UNPAREN formula),                                                                        \
      op("aten::" name "_(Tensor(a!) self) -> Tensor(a!)", [](Tensor self) {                                       \
        kernels::paramElementwise<dtypes>(kname, self, self,                                                       \
                                          [&]<typename T>() { return [](T self) -> T { return __VA_ARGS__; }; });  \
        return self;                                                                                               \
      })

// KILN_PARAM_OPS with the functional form's derivative formula.
#define KILN_PARAM_OPS_DIFF(name, sig, kname, dtypes, params, formula, ...)                                    \
  KILN_PARAM_FUNCTIONAL_OP(name, sig, kname, dtypes, params, __VA_ARGS__).derivative(KILN_PP_UNPAREN formula), \
      KILN_PARAM_INPLACE_OP(name, sig, kname, dtypes, params, __VA_ARGS__),                                    \
      KILN_PARAM_OUT_OP(name, sig, kname, dtypes, params, __VA_ARGS__)

// celu: elu with input_scale 1 / alpha, which must not be 0.
#define KILN_CELU_ELEMENT self <= (T)0 ? (m_exp(self * ((T)1 / alpha)) - (T)1) * alpha : self
#define KILN_CELU_OP(schema, self_decl, out_expr, ...)                                                       \
  op("aten::" schema, [](self_decl, const Scalar& alpha_param __VA_OPT__(, ) __VA_ARGS__) {                  \
    KILN_CHECK(alpha_param.toDouble() != 0, "ZeroDivisionError: alpha cannot be 0 for CELU");                \
    return kernels::paramElementwise<ParamDtypes::Floating>("elu", self, out_expr,                           \
                                                            KILN_PARAM_ELEMENT((alpha), KILN_CELU_ELEMENT)); \
  })
#define KILN_LOG_SIGMOID_ELEMENT k_at_most(self, (T)0) - m_log1p(m_exp(-k_abs(self)))
#define KILN_LOG_SIGMOID_OP(schema, out_expr, ...)                                                             \
  op("aten::" schema, [](const Tensor& self __VA_OPT__(, ) __VA_ARGS__) {                                      \
    return kernels::paramElementwise<ParamDtypes::Floating>("log_sigmoid", self, out_expr, [&]<typename T>() { \
      return [](T self) -> T { return KILN_LOG_SIGMOID_ELEMENT; };                                             \
    });                                                                                                        \
  })
#define KILN_STRINGIFY_(...) #__VA_ARGS__
#define KILN_STRINGIFY(...) KILN_STRINGIFY_(__VA_ARGS__)

KILN_REGISTER_OPS(
    // x * sigmoid(x), computed as PyTorch does: x / (1 + e^-x).
    KILN_FLOAT_UNARY_OPS("silu",
                         ({"self: grad * torch.sigmoid(self) * (1 + self * (1 - torch.sigmoid(self)))",
                           "grad_fn: SiluBackward0"}),
                         self / ((T)1 + m_exp(-self))),
    // x * tanh(softplus(x)).
    KILN_FLOAT_UNARY_OPS("mish",
                         ({"self: grad * (torch.tanh(torch.nn.functional.softplus(self)) + self * "
                           "torch.sigmoid(self) * (1 - torch.tanh(torch.nn.functional.softplus(self)) ** 2))",
                           "grad_fn: MishBackward0"}),
                         self* k_tanh(m_log1p(m_exp(self)))),
    // clamp(x, min_val, max_val); integers too, with float bounds truncated.
    KILN_PARAM_OPS_DIFF("hardtanh", ", Scalar min_val=-1, Scalar max_val=1", "hardtanh", ParamDtypes::Clamp,
                        (min_val, max_val), ({"self: grad * ((self > min_val) & (self < max_val))"}),
                        k_clamp(self, min_val, max_val)),
    KILN_NOPARAM_OPS("relu6", "hardtanh", ParamDtypes::Clamp,
                     ({"self: grad * ((self > 0) & (self < 6))", "grad_fn: HardtanhBackward0"}),
                     k_clamp(self, (T)0, (T)6)),
    // x * relu6(x + 3) / 6 and relu6(x + 3) / 6, NaN kept as std::min/max keep it.
    KILN_FLOAT_UNARY_OPS(
        "hardswish",
        ({"self: torch.where(self < -3, grad * 0, torch.where(self <= 3, grad * (self / 3 + 0.5), grad))"}),
        self* k_at_most(k_at_least(self + (T)3, (T)0), (T)6) / (T)6),
    KILN_FLOAT_UNARY_OPS("hardsigmoid", ({"self: grad * ((self > -3) & (self < 3)) / 6"}),
                         k_at_most(k_at_least(self + (T)3, (T)0), (T)6) / (T)6),
    // scale * x for x > 0, else scale * alpha * (e^(input_scale * x) - 1), with exp - 1 as PyTorch computes it (not
    // expm1).
    KILN_PARAM_OPS_DIFF("elu", ", Scalar alpha=1, Scalar scale=1, Scalar input_scale=1", "elu", ParamDtypes::Floating,
                        (alpha, scale, input_scale),
                        ({"self: torch.where(self > 0, grad * scale, grad * (alpha * scale * input_scale) * "
                          "torch.exp(self * input_scale))"}),
                        self <= (T)0 ? (m_exp(self * input_scale) - (T)1) * (alpha * scale) : self * scale),
    // elu with PyTorch's SELU constants.
    KILN_NOPARAM_OPS("selu", "elu", ParamDtypes::Floating,
                     ({"self: torch.where(self > 0, grad * 1.0507009873554805, grad * (1.6732632423543772 * "
                       "1.0507009873554805) * torch.exp(self))",
                       "grad_fn: EluBackward0"}),
                     self <= (T)0 ? (m_exp(self) - (T)1) * ((T)1.6732632423543772 * (T)1.0507009873554805)
                                  : self * (T)1.0507009873554805),
    KILN_CELU_OP("celu(Tensor self, Scalar alpha=1.) -> Tensor", const Tensor& self, Tensor())
        .shape(shapes::sameDtype)
        .derivative({"self: torch.where(self > 0, grad, grad * torch.exp(self / alpha))", "grad_fn: EluBackward0"})
        .pointwise(elementwiseFromCpp(pointwise::TypeRule::Promote, pointwise::DtypeSet::Floating,
                                      KILN_STRINGIFY(KILN_CELU_ELEMENT), "(alpha)")),
    KILN_CELU_OP("celu_(Tensor(a!) self, Scalar alpha=1.) -> Tensor(a!)", Tensor self, self),
    KILN_CELU_OP("celu.out(Tensor self, Scalar alpha=1., *, Tensor(a!) out) -> Tensor(a!)", const Tensor& self, out,
                 Tensor out)
        .shape(shapes::sameDtype),
    KILN_PARAM_OPS_DIFF("leaky_relu", ", Scalar negative_slope=0.01", "leaky_relu", ParamDtypes::Floating,
                        (negative_slope), ({"self: torch.where(self > 0, grad, grad * negative_slope)"}),
                        self > (T)0 ? self : self * negative_slope),
    // Linear above the threshold (on beta * x), where e^(beta x) would overflow.
    KILN_PARAM_FUNCTIONAL_OP("softplus", ", Scalar beta=1, Scalar threshold=20", "softplus", ParamDtypes::Floating,
                             (beta, threshold), self* beta > threshold ? self : m_log1p(m_exp(self * beta)) / beta)
        .derivative({"self: torch.where(self * beta > threshold, grad, grad * torch.sigmoid(self * beta))"}),
    KILN_PARAM_OUT_OP("softplus", ", Scalar beta=1, Scalar threshold=20", "softplus", ParamDtypes::Floating,
                      (beta, threshold), self* beta > threshold ? self : m_log1p(m_exp(self * beta)) / beta),
    KILN_PARAM_FUNCTIONAL_OP("softshrink", ", Scalar lambd=0.5", "softshrink", ParamDtypes::Floating, (lambd),
                             self > lambd ? self - lambd : (self < -lambd ? self + lambd : (T)0))
        .derivative({"self: grad * ((self > lambd) | (self < -lambd))"}),
    KILN_PARAM_OUT_OP("softshrink", ", Scalar lambd=0.5", "softshrink", ParamDtypes::Floating, (lambd),
                      self > lambd ? self - lambd : (self < -lambd ? self + lambd : (T)0)),
    KILN_PARAM_FUNCTIONAL_OP("hardshrink", ", Scalar lambd=0.5", "hardshrink", ParamDtypes::Floating, (lambd),
                             self >= -lambd && self <= lambd ? (T)0 : self)
        .derivative({"self: grad * ((self > lambd) | (self < -lambd))"}),
    KILN_PARAM_OUT_OP("hardshrink", ", Scalar lambd=0.5", "hardshrink", ParamDtypes::Floating, (lambd),
                      self >= -lambd && self <= lambd ? (T)0 : self),
    KILN_PARAM_OPS_DIFF("threshold", ", Scalar threshold, Scalar value", "threshold", ParamDtypes::NoBool,
                        (threshold, value), ({"self: torch.threshold_backward(grad, self, threshold)"}),
                        self <= threshold ? value : self),
    // min(x, 0) - log1p(e^-|x|): no overflow on either side.
    // min(x, 0) - log1p(e^-|x|): no overflow on either side. No in-place form.
    KILN_LOG_SIGMOID_OP("log_sigmoid(Tensor self) -> Tensor", Tensor())
        .shape(shapes::sameDtype)
        .derivative({"self: grad * torch.sigmoid(-self)", "grad_fn: LogSigmoidBackward0"})
        .pointwise(elementwiseFromCpp(pointwise::TypeRule::Promote, pointwise::DtypeSet::Floating,
                                      KILN_STRINGIFY(KILN_LOG_SIGMOID_ELEMENT), {"self"})),
    KILN_LOG_SIGMOID_OP("log_sigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", out, Tensor out)
        .shape(shapes::sameDtype), );

#undef KILN_NOPARAM_OPS
#undef KILN_PARAM_OPS_DIFF
#undef KILN_CELU_OP
#undef KILN_CELU_ELEMENT
#undef KILN_LOG_SIGMOID_OP

// log_sigmoid_forward's buffer: e^-|x|, which its backward reads.
std::tuple<Tensor, Tensor> logSigmoidForward(const Tensor& self, Tensor output, Tensor buffer) {
  output = kernels::paramElementwise<ParamDtypes::Floating>("log_sigmoid", self, output, [&]<typename T>() {
    return [](T x) -> T { return k_at_most(x, (T)0) - m_log1p(m_exp(-k_abs(x))); };
  });
  buffer = kernels::paramElementwise<ParamDtypes::Floating>(
      "log_sigmoid", self, buffer, [&]<typename T>() { return [](T x) -> T { return m_exp(-k_abs(x)); }; });
  return {output, buffer};
}

// x where x > 0, else weight * x, with one weight or one per channel (dim 1).
Tensor prelu(const Tensor& self, const Tensor& weight, Tensor out) {
  KILN_CHECK(weight.dim() <= 1, "prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = ", weight.dim());
  const int64_t channels = self.dim() >= 2 ? self.size(1) : 1;
  const int64_t n = weight.numel();
  KILN_CHECK(n == 1 || n == channels,
             "Mismatch of parameter numbers and input channel size. Found parameter numbers = ", n,
             " and channel size = ", channels, ".");
  KILN_CHECK(weight.dtype() == self.dtype(), "Found dtype ", weight.dtype(), " but expected ", self.dtype());
  KILN_CHECK(isFloatingType(self.dtype()), "\"prelu_cpu\" not implemented for '", scalarTypeShortName(self.dtype()),
             "'");
  kernels::checkExactOutDtype(out, self.dtype(), "prelu");
  // The weight as a tensor that broadcasts along dim 1 only.
  DimVector shape(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), 1);
  if (self.dim() >= 2) shape[1] = n;
  Tensor w = reshape(weight, self.dim() == 0 ? DimVector{} : shape);
  if (self.dim() == 0) w = reshape(weight, DimVector{});
  TensorIter iter("prelu");
  iter.addOutput(out).addInput(self).addInput(w).build();
  KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), "prelu", [&] {
    kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(
        iter, [](scalar_t x, scalar_t a) -> scalar_t { return x > (scalar_t)0 ? x : a * x; });
  });
  return iter.output();
}

// The derivative of threshold and relu (torch's threshold_backward): the
// gradient where self > threshold, else 0, in one pass; a NaN self lets the
// gradient through, as in torch.
Tensor thresholdBackward(const Tensor& grad, const Tensor& self, const Scalar& threshold, const Tensor& out) {
  KILN_CHECK(grad.defined() && self.defined(), "threshold_backward: expected defined tensors");
  TensorIter iter("threshold_backward");
  iter.addOutput(out).addInput(grad).addInput(self).build();
  KILN_DISPATCH_ALL_TYPES(iter.computeDtype(), "threshold_backward", [&] {
    const scalar_t t = kernels::checkedScalarTo<scalar_t>(threshold, "threshold_backward");
    kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(
        iter, [t](scalar_t g, scalar_t x) { return kernels::select(x <= t, scalar_t(0), g); });
  });
  return iter.output();
}

// The first half along `dim` times the sigmoid of the second.
Tensor glu(const Tensor& self, int64_t dim) {
  KILN_CHECK(self.dim() > 0, "glu does not support scalars because halving size must be even");
  const int64_t d = wrapDim(dim, self.dim());
  const int64_t n = self.size(d);
  KILN_CHECK(n % 2 == 0, "Halving dimension must be even, but dimension ", d, " is size ", n);
  KILN_CHECK(isFloatingType(self.dtype()), "\"glu_cpu\" not implemented for '", scalarTypeShortName(self.dtype()), "'");
  return mul(narrow(self, d, 0, n / 2), sigmoid(narrow(self, d, n / 2, n / 2)));
}

// glu: self's sizes with `dim` halved.
std::vector<shapes::OutputFacts> gluShape(const shapes::Args& a) {
  const TensorType* self = a.tensor("self");
  if (!self) return {};
  shapes::OutputFacts out;
  out.kind = shapes::OutputFacts::Kind::Tensor;
  out.tensor.dtype = self->scalarType();
  out.tensor.contiguous = true;
  const auto& dims = self->sizes().dims();
  const auto dim = a.knownInt("dim");
  if (dims && !dims->empty()) {
    std::vector<std::optional<int64_t>> sizes = *dims;
    const auto rank = static_cast<int64_t>(sizes.size());
    if (dim && *dim >= -rank && *dim < rank) {
      auto& d = sizes[static_cast<size_t>(*dim < 0 ? *dim + rank : *dim)];
      if (d) d = *d / 2;
    } else {
      sizes.assign(sizes.size(), std::nullopt);
    }
    out.tensor.sizes = VaryingShape(std::move(sizes));
  }
  return {out};
}

KILN_REGISTER_OPS(
    op("aten::log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)",
       [](const Tensor& self) { return logSigmoidForward(self, Tensor(), Tensor()); })
        .derivative({"self: grad * torch.sigmoid(-self)", "non_differentiable: buffer",
                     "grad_fn: LogSigmoidBackward0"}),
    op("aten::log_sigmoid_forward.output(Tensor self, *, Tensor(a!) output, Tensor(b!) buffer) -> "
       "(Tensor(a!), Tensor(b!))",
       [](const Tensor& self, Tensor output, Tensor buffer) { return logSigmoidForward(self, output, buffer); }),
    op("aten::threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
       [](const Tensor& grad, const Tensor& self, const Scalar& threshold) {
         return thresholdBackward(grad, self, threshold, Tensor());
       })
        .shape(shapes::thresholdBackwardOp)
        // The eager kernel's select, so that a fused relu backward gives the same bits.
        .pointwise(elementwise(pointwise::TypeRule::Promote, pointwise::DtypeSet::Floating,
                               "$self <= ($T)$threshold ? ($T)0 : $grad_output"))
        .derivative({"grad_output: torch.threshold_backward(grad, self, threshold)", "self: torch.zeros_like(grad)"}),
    op("aten::threshold_backward.grad_input(Tensor grad_output, Tensor self, Scalar threshold, *, "
       "Tensor(a!) grad_input) -> Tensor(a!)",
       [](const Tensor& grad, const Tensor& self, const Scalar& threshold, Tensor grad_input) {
         thresholdBackward(grad, self, threshold, grad_input);
         return grad_input;
       }),
    op("aten::prelu(Tensor self, Tensor weight) -> Tensor",
       [](const Tensor& self, const Tensor& weight) { return prelu(self, weight, Tensor()); })
        .shape(shapes::sameDtype)
        .derivative({"self: torch.where(self > 0, grad, grad * (weight if weight.numel() == 1 or self.dim() < 2 else "
                     "weight.reshape([weight.numel()] + [1] * (self.dim() - 2))))",
                     "weight: (grad * self * (self <= 0)).sum().reshape(weight.size()) if weight.numel() == 1 or "
                     "self.dim() < 2 else (grad * self * (self <= 0)).transpose(0, 1).reshape([weight.numel(), -1])"
                     ".sum(1)",
                     "grad_fn: PreluBackward0"}),
    op("aten::prelu.out(Tensor self, Tensor weight, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& weight, Tensor out) {
         prelu(self, weight, out);
         return out;
       })
        .shape(shapes::sameDtype),
    op("aten::glu(Tensor self, int dim=-1) -> Tensor", [](const Tensor& self, int64_t dim) { return glu(self, dim); })
        .shape(gluShape)
        .derivative({"self: torch.cat([grad * torch.sigmoid(self.chunk(2, dim)[1]), grad * self.chunk(2, dim)[0] * "
                     "torch.sigmoid(self.chunk(2, dim)[1]) * (1 - torch.sigmoid(self.chunk(2, dim)[1]))], dim)"}),
    op("aten::glu.out(Tensor self, int dim=-1, *, Tensor(a!) out) -> Tensor(a!)", [](const Tensor& self, int64_t dim,
                                                                                     Tensor out) {
      return writeOut(out, glu(self, dim), "glu");
    }).shape(gluShape), );

}  // namespace
}  // namespace kiln
