// Convolution backward (conv_backward.h). The input gradient is the
// adjoint convolution of the output gradient (a transposed one for a
// convolution, a plain one for a transposed convolution), run by the
// forward kernel (oneDNN for float32). The weight gradient is oneDNN's
// backward-weights primitive for float32; other dtypes (and cases oneDNN
// refuses) correlate the input with the output gradient, one group at a
// time, with the forward kernel.
#include <oneapi/dnnl/dnnl.hpp>

#include "kiln/tensor/conv.h"
#include "kiln/tensor/conv_backward.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/kernels/dnnl_glue.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using Dims = std::vector<int64_t>;

Dims expandParam(IntArrayRef values, int64_t dims) {
  if (values.size() == 1) return Dims(static_cast<size_t>(dims), values[0]);
  KILN_CHECK(static_cast<int64_t>(values.size()) == dims, "convolution_backward: expected a parameter list of ", dims,
             " values, got ", values.size());
  return Dims(values.begin(), values.end());
}

Dims contiguousStrides(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

// The parameters of one plain convolution's weight gradient: src (N, C,
// ...), diff_dst (N, OC, ...) and the weight (OC, C/g, k...).
struct WeightGrad {
  Dims src, dst, weight, stride, dilation, pad_l, pad_r;
  int64_t groups = 1;
};

struct WeightGradEntry {
  bool ok = false;
  dnnl::primitive prim;
  dnnl::memory::desc src_user, src, dst_user, dst, weight_user, weight;
  std::optional<dnnl::reorder> src_in, dst_in, weight_out;
};

std::optional<dnnl::reorder> reorderBetween(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  if (from == to) return std::nullopt;
  auto& engine = detail::dnnlEngine();
  return dnnl::reorder(dnnl::reorder::primitive_desc(engine, from, engine, to));
}

WeightGradEntry makeWeightGrad(const WeightGrad& p) {
  using dnnl::memory;
  WeightGradEntry e;
  try {
    auto& engine = detail::dnnlEngine();
    const auto f32 = memory::data_type::f32;
    e.src_user = memory::desc(p.src, f32, contiguousStrides(p.src));
    e.dst_user = memory::desc(p.dst, f32, contiguousStrides(p.dst));
    // The weight in oneDNN's logical dims ((g,) OC/g, C/g, k...) with torch's strides.
    Dims kdims(p.weight.begin() + 2, p.weight.end());
    Dims wdims, wstrides = contiguousStrides(p.weight);
    if (p.groups > 1) {
      wdims = {p.groups, p.weight[0] / p.groups, p.weight[1]};
      wstrides.insert(wstrides.begin(), wstrides[0] * (p.weight[0] / p.groups));
    } else {
      wdims = {p.weight[0], p.weight[1]};
    }
    wdims.insert(wdims.end(), kdims.begin(), kdims.end());
    e.weight_user = memory::desc(wdims, f32, wstrides);
    auto any = memory::format_tag::any;
    memory::desc src_any(p.src, f32, any), dst_any(p.dst, f32, any), weight_any(wdims, f32, any);
    Dims dilation;
    for (int64_t d : p.dilation) dilation.push_back(d - 1);  // oneDNN counts the gaps
    dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, src_any,
                                       weight_any, dst_any, p.stride, dilation, p.pad_l, p.pad_r);
    dnnl::convolution_forward::primitive_desc fpd(fd, engine);
    dnnl::convolution_backward_weights::desc bd(dnnl::algorithm::convolution_direct, src_any, weight_any, dst_any,
                                                p.stride, dilation, p.pad_l, p.pad_r);
    dnnl::convolution_backward_weights::primitive_desc bpd(bd, engine, fpd);
    e.src = bpd.src_desc();
    e.dst = bpd.diff_dst_desc();
    e.weight = bpd.diff_weights_desc();
    e.prim = dnnl::convolution_backward_weights(bpd);
    e.src_in = reorderBetween(e.src_user, e.src);
    e.dst_in = reorderBetween(e.dst_user, e.dst);
    e.weight_out = reorderBetween(e.weight, e.weight_user);
    e.ok = true;
  } catch (const dnnl::error&) {
    e.ok = false;
  }
  return e;
}

// grad_weight of a plain float32 convolution by oneDNN; false where it has no implementation.
bool dnnlWeightGrad(const WeightGrad& p, const float* src, const float* diff_dst, float* diff_weight) {
  using dnnl::memory;
  static detail::PrimitiveCache<WeightGradEntry> cache;
  double work = 1;
  for (int64_t d : p.dst) work *= static_cast<double>(d);
  for (size_t i = 1; i < p.weight.size(); ++i) work *= static_cast<double>(p.weight[i]);
  const int threads = detail::dnnlThreadsFor(work);
  detail::useKilnThreadsForDnnl(threads);
  std::vector<int64_t> key{p.groups, threads};
  for (const Dims* v : {&p.src, &p.weight, &p.dst, &p.stride, &p.dilation, &p.pad_l, &p.pad_r}) {
    key.push_back(static_cast<int64_t>(v->size()));
    key.insert(key.end(), v->begin(), v->end());
  }
  auto entry = cache.get(key, [&] { return makeWeightGrad(p); });
  if (!entry->ok) return false;
  try {
    auto& engine = detail::dnnlEngine();
    auto& stream = detail::dnnlThreadStream();
    memory src_user(entry->src_user, engine, const_cast<float*>(src));
    memory dst_user(entry->dst_user, engine, const_cast<float*>(diff_dst));
    memory weight_user(entry->weight_user, engine, diff_weight);
    // Reordered copies live as long as this call.
    memory src_mem = src_user, dst_mem = dst_user, weight_mem = weight_user;
    if (entry->src_in) {
      src_mem = memory(entry->src, engine);
      entry->src_in->execute(stream, src_user, src_mem);
    }
    if (entry->dst_in) {
      dst_mem = memory(entry->dst, engine);
      entry->dst_in->execute(stream, dst_user, dst_mem);
    }
    if (entry->weight_out) weight_mem = memory(entry->weight, engine);
    entry->prim.execute(stream,
                        {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_DIFF_DST, dst_mem}, {DNNL_ARG_DIFF_WEIGHTS, weight_mem}});
    if (entry->weight_out) entry->weight_out->execute(stream, weight_mem, weight_user);
    stream.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// grad_weight of a plain convolution of `input` (N, C, I...) giving `grad`
// (N, OC, O...): gw[oc, c, k] = sum over n, o of grad[n, oc, o] * input[n, c,
// o*stride + k*dilation - pad], which is itself a convolution of the input
// (batch and channels swapped) with the gradient as the weight, stride and
// dilation exchanged, cut to the kernel size.
Tensor weightGradByConv(const Tensor& input, const Tensor& grad, IntArrayRef weight_sizes, const Dims& stride,
                        const Dims& padding, const Dims& dilation, int64_t groups) {
  const int64_t spatial = static_cast<int64_t>(weight_sizes.size()) - 2;
  const int64_t cg = input.size(1) / groups, ocg = grad.size(1) / groups;
  std::vector<Tensor> parts;
  for (int64_t g = 0; g < groups; ++g) {
    Tensor x = transpose(narrow(input, 1, g * cg, cg), 0, 1);   // (Cg, N, I...)
    Tensor w = transpose(narrow(grad, 1, g * ocg, ocg), 0, 1);  // (OCg, N, O...)
    Tensor out = convolution(contiguous(x), contiguous(w), std::nullopt, IntArrayRef(dilation), IntArrayRef(padding),
                             IntArrayRef(stride), false, {0}, 1);  // (Cg, OCg, >= k...)
    for (int64_t d = 0; d < spatial; ++d) out = narrow(out, d + 2, 0, weight_sizes[d + 2]);
    parts.push_back(transpose(out, 0, 1));
  }
  return contiguous(groups == 1 ? parts[0] : cat(parts, 0));
}

Tensor weightGrad(const Tensor& input, const Tensor& grad, IntArrayRef weight_sizes, const Dims& stride,
                  const Dims& padding, const Dims& dilation, int64_t groups) {
  if (input.numel() == 0 || grad.numel() == 0) return zeros(weight_sizes, input.dtype());
  if (input.dtype() == ScalarType::Float) {
    WeightGrad p;
    p.src.assign(input.sizes().begin(), input.sizes().end());
    p.dst.assign(grad.sizes().begin(), grad.sizes().end());
    p.weight.assign(weight_sizes.begin(), weight_sizes.end());
    p.stride = stride;
    p.dilation = dilation;
    p.pad_l = padding;
    // The right padding that makes oneDNN's output size exactly the gradient's.
    for (size_t i = 0; i < stride.size(); ++i) {
      int64_t in = p.src[i + 2], out = p.dst[i + 2], k = p.weight[i + 2];
      p.pad_r.push_back((out - 1) * stride[i] + dilation[i] * (k - 1) + 1 - in - padding[i]);
    }
    p.groups = groups;
    Tensor x = contiguous(input), g = contiguous(grad);
    Tensor out = empty(weight_sizes, ScalarType::Float);
    if (dnnlWeightGrad(p, x.data<float>(), g.data<float>(), out.data<float>())) return out;
  }
  return weightGradByConv(input, grad, weight_sizes, stride, padding, dilation, groups);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> convolutionBackward(const Tensor& grad_output, const Tensor& input,
                                                       const Tensor& weight, IntArrayRef stride, IntArrayRef padding,
                                                       IntArrayRef dilation, bool transposed,
                                                       IntArrayRef output_padding, int64_t groups,
                                                       std::array<bool, 3> output_mask) {
  const int64_t spatial = weight.dim() - 2;
  KILN_CHECK(spatial >= 1 && spatial <= 3, "convolution_backward: expected a 3-5 dimensional weight, got ",
             weight.dim());
  // kiln's conv1d/2d/3d take unbatched inputs; their gradients come here too.
  const bool unbatched = input.dim() == weight.dim() - 1;
  Tensor x = unbatched ? unsqueeze(input, 0) : input;
  Tensor g = unbatched ? unsqueeze(grad_output, 0) : grad_output;
  KILN_CHECK(x.dim() == weight.dim() && g.dim() == weight.dim(),
             "convolution_backward: input, weight and grad_output must have the same number of dimensions");
  Dims s = expandParam(stride, spatial), p = expandParam(padding, spatial), d = expandParam(dilation, spatial);
  Tensor grad_input, grad_weight, grad_bias;
  if (output_mask[0]) {
    if (!transposed) {
      // The output padding that gives the transposed convolution the input's size.
      Dims extra;
      for (int64_t i = 0; i < spatial; ++i) {
        extra.push_back(x.size(i + 2) - ((g.size(i + 2) - 1) * s[i] - 2 * p[i] + d[i] * (weight.size(i + 2) - 1) + 1));
      }
      grad_input = convolution(g, weight, std::nullopt, IntArrayRef(s), IntArrayRef(p), IntArrayRef(d), true,
                               IntArrayRef(extra), groups);
    } else {
      grad_input =
          convolution(g, weight, std::nullopt, IntArrayRef(s), IntArrayRef(p), IntArrayRef(d), false, {0}, groups);
      // An output padding of a stride or more (allowed below the dilation) leaves rows the forward never read.
      for (int64_t i = 0; i < spatial; ++i) grad_input = narrow(grad_input, i + 2, 0, x.size(i + 2));
      grad_input = contiguous(grad_input);
    }
    if (unbatched) grad_input = squeeze(grad_input, 0);
  }
  if (output_mask[1]) {
    // A transposed convolution's weight is, for its adjoint (a plain
    // convolution of the output gradient into the input's shape), a plain
    // convolution weight.
    grad_weight = transposed ? weightGrad(g, x, weight.sizes(), s, p, d, groups)
                             : weightGrad(x, g, weight.sizes(), s, p, d, groups);
  }
  if (output_mask[2]) {
    DimVector dims{0};
    for (int64_t i = 2; i < g.dim(); ++i) dims.push_back(i);
    grad_bias = sum(g, IntArrayRef(dims));
  }
  (void)output_padding;
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace kiln
