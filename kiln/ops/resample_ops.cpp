// aten:: registrations of upsampling, padding, pixel and channel shuffles
// and im2col/col2im (kernels in kiln/tensor/kernels/resample.cpp), with
// PyTorch 1.13's schemas, and their shape rules.
#include <algorithm>

#include "kiln/core/op_registration.h"
#include "kiln/ops/composite.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/resample.h"
#include "kiln/tensor/resample_backward.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using Sizes = std::optional<IntArrayRef>;
using Factors = std::optional<std::vector<double>>;
using OptScale = std::optional<double>;

// The result of a layout op: self's dtype, sizes from `sizes` (a list of
// known or unknown entries), or only self's rank when `sizes` is empty.
shapes::OutputFacts facts(const TensorType* self, std::optional<shapes::DimList> sizes) {
  shapes::OutputFacts out;
  out.kind = shapes::OutputFacts::Kind::Tensor;
  out.tensor.dtype = self->scalarType();
  out.tensor.contiguous = true;
  if (sizes) {
    out.tensor.sizes = VaryingShape(std::move(*sizes));
  } else if (self->dim()) {
    out.tensor.sizes = VaryingShape(*self->dim());
  }
  return out;
}

// Upsampling: N and C of self, then output_size (or self's spatial sizes
// times scale_factors).
std::vector<shapes::OutputFacts> upsampleShape(const shapes::Args& a) {
  const TensorType* self = a.tensor(a.has("self") ? "self" : "input");
  if (!self) return {};
  const auto& dims = self->sizes().dims();
  std::optional<shapes::DimList> sizes;
  if (dims && dims->size() >= 2) {
    auto out_sizes = a.isNone("output_size") ? std::nullopt : a.intList("output_size");
    if (out_sizes && out_sizes->size() + 2 == dims->size()) {
      sizes = shapes::DimList{(*dims)[0], (*dims)[1]};
      sizes->insert(sizes->end(), out_sizes->begin(), out_sizes->end());
    } else {
      sizes = shapes::DimList{(*dims)[0], (*dims)[1]};
      sizes->resize(dims->size());
    }
  }
  return {facts(self, sizes)};
}

// Same dtype and rank as self.
std::vector<shapes::OutputFacts> sameRank(const shapes::Args& a) {
  const TensorType* self = a.tensor("self");
  if (!self) return {};
  return {facts(self, std::nullopt)};
}

// Padding: each padded dim grows by its two pads.
std::vector<shapes::OutputFacts> padShape(const shapes::Args& a) {
  const TensorType* self = a.tensor("self");
  if (!self) return {};
  const auto& dims = self->sizes().dims();
  auto pad = a.intList(a.has("padding") ? "padding" : "pad");
  if (!dims || !pad || pad->size() % 2 || pad->size() / 2 > dims->size()) return {facts(self, std::nullopt)};
  shapes::DimList sizes = *dims;
  for (size_t i = 0; i < pad->size() / 2; ++i) {
    auto& d = sizes[sizes.size() - 1 - i];
    const auto& l = (*pad)[2 * i];
    const auto& r = (*pad)[2 * i + 1];
    d = d && l && r ? std::optional<int64_t>(*d + *l + *r) : std::nullopt;
  }
  return {facts(self, sizes)};
}

// The derivative formulas of upsampling op `name` with `n` spatial dims:
// its _backward op (registered with it) with the forward's sizes and scales;
// the .vec form passes its scale factors as the scales, as its forward does.
std::string upsampleScaleNames(int n) {
  return n == 1 ? "scales" : n == 2 ? "scales_h, scales_w" : "scales_d, scales_h, scales_w";
}

OpDeclaration upsampleDerivative(OpDeclaration declaration, const char* name, int n, bool align) {
  std::string formula = std::string("self: torch.") + name + "_backward(grad, output_size, self.size(), " +
                        (align ? "align_corners, " : "") + upsampleScaleNames(n) + ")";
  return std::move(declaration).derivative({formula.c_str()});
}

OpDeclaration upsampleVecDerivative(OpDeclaration declaration, const char* name, int n, bool align) {
  std::string scales;
  for (int i = 0; i < n; ++i) {
    scales +=
        std::string(i ? ", " : "") + "(None if scale_factors is None else scale_factors[" + std::to_string(i) + "])";
  }
  std::string formula = std::string("input: torch.") + name + "_backward(grad, grad.size()[2:], input.size(), " +
                        (align ? "align_corners, " : "") + scales + ")";
  return std::move(declaration).derivative({formula.c_str()});
}

// The derivative of an upsampling op's _backward (its .vec form when `vec`):
// linear in grad_output, its derivative is the forward op applied to the
// incoming gradient, as derivatives.yaml's.
OpDeclaration upsampleBackwardDerivative(OpDeclaration declaration, const char* name, int n, bool align, bool vec) {
  std::string formula = std::string("grad_output: torch.") + name + "(grad, output_size, " +
                        (align ? "align_corners, " : "") + (vec ? "scale_factors" : upsampleScaleNames(n)) + ")";
  return std::move(declaration).derivative({formula.c_str()});
}

// The scales of a .vec form: its scale factors, or none.
std::vector<std::optional<double>> scalesOf(const std::optional<std::vector<double>>& factors, int64_t n) {
  std::vector<std::optional<double>> scales(static_cast<size_t>(n));
  if (factors) {
    for (size_t i = 0; i < scales.size() && i < factors->size(); ++i) scales[i] = (*factors)[i];
  }
  return scales;
}

// The `name` overloads of an upsampling op with `n` spatial dims: the sized
// form with per-dim scales, .out, .vec and .vec_out, and name_backward (the
// gradient, resample_backward.h). `SCALES` is the schema text of the scales,
// `PARAMS` their C++ parameters and `LIST` the vector of them;
// `ALIGN`/`ALIGN_PARAM`/`ALIGN_ARG` add align_corners where the mode has it.
#define KILN_UPSAMPLE_OPS(name, n, mode, aa, SCALES, PARAMS, LIST, ALIGN, ALIGN_PARAM, ALIGN_ARG)                     \
  upsampleDerivative(op("aten::" name "(Tensor self, SymInt[" #n "] output_size" ALIGN SCALES ") -> Tensor",          \
                        [](const Tensor& self, IntArrayRef output_size ALIGN_PARAM PARAMS) {                          \
                          return upsample(name, self, output_size, mode, ALIGN_ARG, LIST, aa);                        \
                        })                                                                                            \
                         .shape(upsampleShape),                                                                       \
                     name, n, sizeof(ALIGN) > 1),                                                                     \
      op("aten::" name ".out(Tensor self, SymInt[" #n "] output_size" ALIGN SCALES                                    \
         ", *, Tensor(a!) out) -> Tensor(a!)",                                                                        \
         [](const Tensor& self, IntArrayRef output_size ALIGN_PARAM PARAMS, Tensor out) {                             \
           return writeOut(out, upsample(name, self, output_size, mode, ALIGN_ARG, LIST, aa), name);                  \
         })                                                                                                           \
          .shape(upsampleShape),                                                                                      \
      upsampleVecDerivative(                                                                                          \
          op("aten::" name ".vec(Tensor input, SymInt[]? output_size" ALIGN ", float[]? scale_factors) -> Tensor",    \
             [](const Tensor& input, Sizes output_size ALIGN_PARAM, Factors scale_factors) {                          \
               std::vector<OptScale> scales;                                                                          \
               const DimVector size = upsampleOutputSize(input, output_size, scale_factors, n, &scales);              \
               return upsample(name, input, size, mode, ALIGN_ARG, scales, aa);                                       \
             })                                                                                                       \
              .shape(upsampleShape),                                                                                  \
          name, n, sizeof(ALIGN) > 1),                                                                                \
      op("aten::" name ".vec_out(Tensor input, SymInt[]? output_size" ALIGN                                           \
         ", float[]? scale_factors, *, Tensor(a!) out) -> Tensor(a!)",                                                \
         [](const Tensor& input, Sizes output_size ALIGN_PARAM, Factors scale_factors, Tensor out) {                  \
           std::vector<OptScale> scales;                                                                              \
           const DimVector size = upsampleOutputSize(input, output_size, scale_factors, n, &scales);                  \
           return writeOut(out, upsample(name, input, size, mode, ALIGN_ARG, scales, aa), name);                      \
         })                                                                                                           \
          .shape(upsampleShape),                                                                                      \
      upsampleBackwardDerivative(op("aten::" name "_backward(Tensor grad_output, SymInt[" #n                          \
                                    "] output_size, SymInt[" KILN_RANK##n "] input_size" ALIGN SCALES ") -> Tensor",  \
                                    [](const Tensor& grad, IntArrayRef, IntArrayRef input_size ALIGN_PARAM PARAMS) {  \
                                      return upsampleBackward(name, grad, input_size, mode, ALIGN_ARG, LIST, aa);     \
                                    }),                                                                               \
                                 name, n, sizeof(ALIGN) > 1, false),                                                  \
      op("aten::" name "_backward.grad_input(Tensor grad_output, SymInt[" #n "] output_size, SymInt[" KILN_RANK##n    \
         "] input_size" ALIGN SCALES ", *, Tensor(a!) grad_input) -> Tensor(a!)",                                     \
         [](const Tensor& grad, IntArrayRef, IntArrayRef input_size ALIGN_PARAM PARAMS, Tensor out) {                 \
           return writeOut(out, upsampleBackward(name, grad, input_size, mode, ALIGN_ARG, LIST, aa), name);           \
         }),                                                                                                          \
      upsampleBackwardDerivative(                                                                                     \
          op("aten::" name "_backward.vec(Tensor grad_output, SymInt[]? output_size, SymInt[] input_size" ALIGN       \
             ", float[]? scale_factors) -> Tensor",                                                                   \
             [](const Tensor& grad, Sizes, IntArrayRef input_size ALIGN_PARAM, Factors scale_factors) {               \
               return upsampleBackward(name, grad, input_size, mode, ALIGN_ARG, scalesOf(scale_factors, n), aa);      \
             }),                                                                                                      \
          name, n, sizeof(ALIGN) > 1, true),                                                                          \
      op("aten::" name "_backward.vec_out(Tensor grad_output, SymInt[]? output_size, SymInt[] input_size" ALIGN       \
         ", float[]? scale_factors, *, Tensor(a!) out) -> Tensor(a!)",                                                \
         [](const Tensor& grad, Sizes, IntArrayRef input_size ALIGN_PARAM, Factors scale_factors, Tensor out) {       \
           return writeOut(                                                                                           \
               out, upsampleBackward(name, grad, input_size, mode, ALIGN_ARG, scalesOf(scale_factors, n), aa), name); \
         })

#define KILN_RANK1 "3"
#define KILN_RANK2 "4"
#define KILN_RANK3 "5"

#define KILN_SCALES1 ", float? scales=None"
#define KILN_SCALES2 ", float? scales_h=None, float? scales_w=None"
#define KILN_SCALES3 ", float? scales_d=None, float? scales_h=None, float? scales_w=None"
#define KILN_PARAMS1 , OptScale scales
#define KILN_PARAMS2 , OptScale scales_h, OptScale scales_w
#define KILN_PARAMS3 , OptScale scales_d, OptScale scales_h, OptScale scales_w
#define KILN_LIST1 \
  std::vector<OptScale> { scales }
#define KILN_LIST2 \
  std::vector<OptScale> { scales_h, scales_w }
#define KILN_LIST3 \
  std::vector<OptScale> { scales_d, scales_h, scales_w }
#define KILN_ALIGN ", bool align_corners"
#define KILN_ALIGN_PARAM , bool align_corners
#define KILN_NEAREST(name, n) \
  KILN_UPSAMPLE_OPS(name, n, ResampleMode::Nearest, false, KILN_SCALES##n, KILN_PARAMS##n, KILN_LIST##n, "", , false)
#define KILN_NEAREST_EXACT(name, n)                                                                                 \
  KILN_UPSAMPLE_OPS(name, n, ResampleMode::NearestExact, false, KILN_SCALES##n, KILN_PARAMS##n, KILN_LIST##n, "", , \
                    false)
#define KILN_INTERP(name, n, mode, aa)                                                                             \
  KILN_UPSAMPLE_OPS(name, n, mode, aa, KILN_SCALES##n, KILN_PARAMS##n, KILN_LIST##n, KILN_ALIGN, KILN_ALIGN_PARAM, \
                    align_corners)

KILN_REGISTER_OPS(KILN_NEAREST("upsample_nearest1d", 1), KILN_NEAREST("upsample_nearest2d", 2),
                  KILN_NEAREST("upsample_nearest3d", 3), KILN_NEAREST_EXACT("_upsample_nearest_exact1d", 1),
                  KILN_NEAREST_EXACT("_upsample_nearest_exact2d", 2),
                  KILN_NEAREST_EXACT("_upsample_nearest_exact3d", 3),
                  KILN_INTERP("upsample_linear1d", 1, ResampleMode::Linear, false),
                  KILN_INTERP("upsample_bilinear2d", 2, ResampleMode::Linear, false),
                  KILN_INTERP("upsample_trilinear3d", 3, ResampleMode::Linear, false),
                  KILN_INTERP("upsample_bicubic2d", 2, ResampleMode::Cubic, false),
                  KILN_INTERP("_upsample_bilinear2d_aa", 2, ResampleMode::Linear, true),
                  KILN_INTERP("_upsample_bicubic2d_aa", 2, ResampleMode::Cubic, true), );

#undef KILN_INTERP
#undef KILN_NEAREST_EXACT
#undef KILN_NEAREST
#undef KILN_UPSAMPLE_OPS

// The padding ops of one mode and rank, their .out forms and their
// _backward (resample_backward.h), which the derivative calls.
#define KILN_PAD_OPS(name, n, fn)                                                                       \
  op("aten::" name "(Tensor self, int[" #n "] padding) -> Tensor",                                      \
     [](const Tensor& self, IntArrayRef padding) { return fn(self, padding, n / 2); })                  \
      .shape(padShape)                                                                                  \
      .derivative({"self: torch." name "_backward(grad, self, padding)"}),                              \
      op("aten::" name ".out(Tensor self, int[" #n "] padding, *, Tensor(a!) out) -> Tensor(a!)",       \
         [](const Tensor& self, IntArrayRef padding, Tensor out) {                                      \
           return writeOut(out, fn(self, padding, n / 2), name);                                        \
         })                                                                                             \
          .shape(padShape),                                                                             \
      op("aten::" name "_backward(Tensor grad_output, Tensor self, int[" #n "] padding) -> Tensor",     \
         [](const Tensor& grad, const Tensor& self, IntArrayRef padding) {                              \
           return padBackward(grad, self.sizes(), padding,                                              \
                              [](const Tensor& x, IntArrayRef p) { return fn(x, p, n / 2); });          \
         })                                                                                             \
          .derivative({"grad_output: torch." name "(grad, padding)", "self: torch.zeros_like(self)"}),  \
      op("aten::" name "_backward.grad_input(Tensor grad_output, Tensor self, int[" #n                  \
         "] padding, *, "                                                                               \
         "Tensor(a!) grad_input) -> Tensor(a!)",                                                        \
         [](const Tensor& grad, const Tensor& self, IntArrayRef padding, Tensor out) {                  \
           return writeOut(out,                                                                         \
                           padBackward(grad, self.sizes(), padding,                                     \
                                       [](const Tensor& x, IntArrayRef p) { return fn(x, p, n / 2); }), \
                           name);                                                                       \
         })

// aten::_pad_circular as torch 1.13 composes it when self requires grad
// (composite.h): in each padded dim, negative pads crop first; then
// out[i] = cropped[(i - left) mod size], a window of three copies of the
// cropped tensor (wrapping at most once, else the kernel raises torch's error).
Tensor circularPadOp(const Tensor& self, IntArrayRef pad) {
  const auto n = static_cast<int64_t>(pad.size() / 2);
  bool decomposable = composite::recording({self}) && pad.size() % 2 == 0 && n == self.dim() - 2;
  for (int64_t i = 0; decomposable && i < n; ++i) {
    const int64_t left = pad[static_cast<size_t>(2 * i)];
    const int64_t right = pad[static_cast<size_t>(2 * i + 1)];
    const int64_t cropped = self.size(self.dim() - 1 - i) + std::min<int64_t>(left, 0) + std::min<int64_t>(right, 0);
    decomposable = cropped > 0 && left <= cropped && right <= cropped;
  }
  if (!decomposable) return circularPad(self, pad);
  Tensor x = self;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t dim = self.dim() - 1 - i;
    const int64_t left = pad[static_cast<size_t>(2 * i)];
    const int64_t right = pad[static_cast<size_t>(2 * i + 1)];
    if (left < 0 || right < 0) {
      const int64_t start = std::max<int64_t>(-left, 0);
      const int64_t length = x.size(dim) - start - std::max<int64_t>(-right, 0);
      x = composite::callTensor("aten::narrow", "", {IValue(x), IValue(dim), IValue(start), IValue(length)});
    }
    const int64_t size = x.size(dim);
    const int64_t l = std::max<int64_t>(left, 0), r = std::max<int64_t>(right, 0);
    if (l == 0 && r == 0) continue;
    Tensor tripled = composite::callTensor("aten::cat", "", {IValue(std::vector<Tensor>{x, x, x}), IValue(dim)});
    x = composite::callTensor("aten::narrow", "",
                              {IValue(tripled), IValue(dim), IValue(size - l), IValue(size + l + r)});
  }
  return x;
}

// aten::pad as torch 1.13 composes it when an input requires grad
// (composite.h): the op of its mode, which has the derivative.
Tensor padOp(const Tensor& self, IntArrayRef pad, const std::string& mode, OptScale value) {
  const auto n = static_cast<int64_t>(pad.size() / 2);
  if (composite::recording({self}) && pad.size() % 2 == 0 && n >= 1 && n <= 3 && self.dim() >= n + 1) {
    IValue list{pad};
    if (mode == "constant") {
      return composite::callTensor("aten::constant_pad_nd", "", {self, list, value ? IValue(*value) : IValue(0.0)});
    }
    static const char* const reflect[] = {"aten::reflection_pad1d", "aten::reflection_pad2d", "aten::reflection_pad3d"};
    static const char* const replicate[] = {"aten::replication_pad1d", "aten::replication_pad2d",
                                            "aten::replication_pad3d"};
    if (mode == "reflect") return composite::callTensor(reflect[n - 1], "", {self, list});
    if (mode == "replicate") return composite::callTensor(replicate[n - 1], "", {self, list});
    if (mode == "circular" && self.dim() == n + 2) return circularPadOp(self, pad);
  }
  return padMode(self, pad, mode, value);
}

KILN_REGISTER_OPS(
    op("aten::pad(Tensor self, int[] pad, str mode=\"constant\", float? value=None) -> Tensor",
       [](const Tensor& self, IntArrayRef pad, const std::string& mode, OptScale value) {
         return padOp(self, pad, mode, value);
       })
        .shape(padShape),
    op("aten::_pad_enum(Tensor self, int[] pad, int mode, float? value=None) -> Tensor",
       [](const Tensor& self, IntArrayRef pad, int64_t mode, OptScale value) {
         // at::padding_mode's order
         static const char* const modes[] = {"reflect", "replicate", "circular", "constant"};
         KILN_CHECK(mode >= 0 && mode < 4, "Unrecognised padding mode ", mode);
         return padOp(self, pad, modes[mode], value);
       })
        .shape(padShape),
    op("aten::constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor",
       [](const Tensor& self, IntArrayRef pad, const Scalar& value) { return constantPadNd(self, pad, value); })
        .shape(padShape)
        .derivative({"self: torch.constant_pad_nd(grad, [-p for p in pad], 0)"}),
    op("aten::constant_pad_nd.out(Tensor self, int[] pad, Scalar value=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef pad, const Scalar& value, Tensor out) {
         return writeOut(out, constantPadNd(self, pad, value), "constant_pad_nd");
       })
        .shape(padShape),
    op("aten::_pad_circular(Tensor self, int[] pad) -> Tensor",
       [](const Tensor& self, IntArrayRef pad) { return circularPadOp(self, pad); })
        .shape(padShape),
    KILN_PAD_OPS("reflection_pad1d", 2, reflectionPad), KILN_PAD_OPS("reflection_pad2d", 4, reflectionPad),
    KILN_PAD_OPS("reflection_pad3d", 6, reflectionPad), KILN_PAD_OPS("replication_pad1d", 2, replicationPad),
    KILN_PAD_OPS("replication_pad2d", 4, replicationPad), KILN_PAD_OPS("replication_pad3d", 6, replicationPad),

    op("aten::pixel_shuffle(Tensor self, int upscale_factor) -> Tensor",
       [](const Tensor& self, int64_t r) { return pixelShuffle(self, r); })
        .shape(sameRank)
        .derivative({"self: torch.pixel_unshuffle(grad, upscale_factor)"}),
    op("aten::pixel_shuffle.out(Tensor self, int upscale_factor, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t r, Tensor out) { return writeOut(out, pixelShuffle(self, r), "pixel_shuffle"); })
        .shape(sameRank),
    op("aten::pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor",
       [](const Tensor& self, int64_t r) { return pixelUnshuffle(self, r); })
        .shape(sameRank)
        .derivative({"self: torch.pixel_shuffle(grad, downscale_factor)"}),
    op("aten::pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t r, Tensor out) {
         return writeOut(out, pixelUnshuffle(self, r), "pixel_unshuffle");
       })
        .shape(sameRank),
    op("aten::channel_shuffle(Tensor self, int groups) -> Tensor",
       [](const Tensor& self, int64_t groups) { return channelShuffle(self, groups); })
        .shape(sameRank)
        .derivative({"self: torch.channel_shuffle(grad, self.size(1) // groups)"}),
    op("aten::channel_shuffle.out(Tensor self, int groups, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t groups, Tensor out) {
         return writeOut(out, channelShuffle(self, groups), "channel_shuffle");
       })
        .shape(sameRank),
    op("aten::native_channel_shuffle(Tensor self, int groups) -> Tensor",
       [](const Tensor& self, int64_t groups) { return channelShuffle(self, groups); })
        .shape(sameRank)
        .derivative({"self: torch.native_channel_shuffle(grad, self.size(1) // groups)"}),

    op("aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor",
       [](const Tensor& self, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s) {
         return im2col(self, k, d, p, s);
       })
        .shape(sameRank)
        .derivative({"self: torch.col2im(grad, self.size()[-2:], kernel_size, dilation, padding, stride)"}),
    op("aten::im2col.out(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride, *, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s, Tensor out) {
         return writeOut(out, im2col(self, k, d, p, s), "im2col");
       })
        .shape(sameRank),
    op("aten::col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "
       "int[2] stride) -> Tensor",
       [](const Tensor& self, IntArrayRef o, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s) {
         return col2im(self, o, k, d, p, s);
       })
        .derivative({"self: torch.im2col(grad, kernel_size, dilation, padding, stride)"}),
    op("aten::col2im.out(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "
       "int[2] stride, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef o, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s, Tensor out) {
         return writeOut(out, col2im(self, o, k, d, p, s), "col2im");
       }), );

#undef KILN_PAD_OPS

}  // namespace
}  // namespace kiln
