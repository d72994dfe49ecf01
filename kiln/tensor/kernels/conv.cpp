// Convolution: torch 1.13's argument checks and output sizes, then oneDNN
// for float32 and kiln's im2col + GEMM kernel for everything else.
#include "kiln/tensor/conv.h"

#include <cblas.h>

#include <sstream>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/kernels/dnnl_glue.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using Dims = std::vector<int64_t>;

// torch's expand_param_if_needed: one value for every dim, or one per dim.
Dims expandParam(IntArrayRef values, const char* name, int64_t dims) {
  auto list = [&] {
    std::ostringstream s;
    s << "[";
    for (size_t i = 0; i < values.size(); ++i) s << (i ? ", " : "") << values[i];
    s << "]";
    return s.str();
  };
  if (values.size() == 1) return Dims(static_cast<size_t>(dims), values[0]);
  KILN_CHECK(static_cast<int64_t>(values.size()) == dims, "expected ", name,
             " to be a single integer value or a list of ", dims,
             " values to match the convolution dimensions, but got ", name, "=", list());
  return Dims(values.begin(), values.end());
}

std::string joinX(const Dims& v) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? " x " : "") << v[i];
  return s.str();
}

struct Conv {
  int64_t spatial = 0;
  Dims stride, pad_l, pad_r, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
};

// Geometry of one im2col: the image (channels of `image` spatial sizes) and
// the columns (one per position of `cols`), over three spatial dims (missing
// leading dims are 1).
struct Geometry {
  int64_t image[3], cols[3], kernel[3], stride[3], pad[3], dilation[3];
  int64_t kernelVolume() const { return kernel[0] * kernel[1] * kernel[2]; }
  int64_t colVolume() const { return cols[0] * cols[1] * cols[2]; }
  int64_t imageVolume() const { return image[0] * image[1] * image[2]; }
};

template <typename T>
void im2col(const T* image, int64_t channels, const Geometry& g, T* col) {
  const int64_t n_cols = g.colVolume();
  int64_t row = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const T* plane = image + c * g.imageVolume();
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++row) {
          T* out = col + row * n_cols;
          for (int64_t od = 0; od < g.cols[0]; ++od) {
            int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
            for (int64_t oh = 0; oh < g.cols[1]; ++oh) {
              int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
              T* line = out + (od * g.cols[1] + oh) * g.cols[2];
              if (id < 0 || id >= g.image[0] || ih < 0 || ih >= g.image[1]) {
                std::fill(line, line + g.cols[2], T(0));
                continue;
              }
              const T* in = plane + (id * g.image[1] + ih) * g.image[2];
              for (int64_t ow = 0; ow < g.cols[2]; ++ow) {
                int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dilation[2];
                line[ow] = iw >= 0 && iw < g.image[2] ? in[iw] : T(0);
              }
            }
          }
        }
  }
}

// The adjoint of im2col: adds every column entry into the image (zeroed first).
template <typename T>
void col2im(const T* col, int64_t channels, const Geometry& g, T* image) {
  std::fill(image, image + channels * g.imageVolume(), T(0));
  const int64_t n_cols = g.colVolume();
  int64_t row = 0;
  for (int64_t c = 0; c < channels; ++c) {
    T* plane = image + c * g.imageVolume();
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++row) {
          const T* in = col + row * n_cols;
          for (int64_t od = 0; od < g.cols[0]; ++od) {
            int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
            if (id < 0 || id >= g.image[0]) continue;
            for (int64_t oh = 0; oh < g.cols[1]; ++oh) {
              int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
              if (ih < 0 || ih >= g.image[1]) continue;
              const T* line = in + (od * g.cols[1] + oh) * g.cols[2];
              T* out = plane + (id * g.image[1] + ih) * g.image[2];
              for (int64_t ow = 0; ow < g.cols[2]; ++ow) {
                int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dilation[2];
                if (iw >= 0 && iw < g.image[2]) out[iw] += line[ow];
              }
            }
          }
        }
  }
}

// C (m x n) = op(A) (m x k) @ B (k x n), row-major.
template <typename T>
void gemm(bool trans_a, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, trans_a ? m : k, b,
                n, 0.0f, c, n);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, trans_a ? m : k, b,
                n, 0.0, c, n);
  } else {
    std::fill(c, c + m * n, T(0));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        T av = trans_a ? a[p * m + i] : a[i * k + p];
        const T* brow = b + p * n;
        T* crow = c + i * n;
        for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
      }
  }
}

// Sizes padded at the front to three spatial dims.
void fill3(int64_t* out, const Dims& v, int64_t fill) {
  size_t lead = 3 - v.size();
  for (size_t i = 0; i < 3; ++i) out[i] = i < lead ? fill : v[i - lead];
}

template <typename T>
void convGeneric(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, const Conv& p,
                 Tensor& out) {
  const int64_t n = input.size(0), g = p.groups;
  Dims in_sp(input.sizes().begin() + 2, input.sizes().end());
  Dims out_sp(out.sizes().begin() + 2, out.sizes().end());
  Dims k_sp(weight.sizes().begin() + 2, weight.sizes().end());
  Geometry geo;
  // Forward: the image is the input, the columns the output positions;
  // transposed: the image is the output, the columns the input positions.
  fill3(geo.image, p.transposed ? out_sp : in_sp, 1);
  fill3(geo.cols, p.transposed ? in_sp : out_sp, 1);
  fill3(geo.kernel, k_sp, 1);
  fill3(geo.stride, p.stride, 1);
  fill3(geo.pad, p.pad_l, 0);
  fill3(geo.dilation, p.dilation, 1);
  const int64_t c_in = input.size(1), c_out = out.size(1);
  const int64_t cg_in = c_in / g, cg_out = c_out / g;
  const int64_t kvol = geo.kernelVolume(), cols = geo.colVolume(), img = geo.imageVolume();
  const T* x = input.data<T>();
  const T* w = weight.data<T>();
  T* y = out.data<T>();
  const int64_t in_vol = shapeNumel(in_sp), out_vol = shapeNumel(out_sp);
  if (!p.transposed) {
    const bool direct = kvol == 1 && geo.stride[0] == 1 && geo.stride[1] == 1 && geo.stride[2] == 1 &&
                        geo.pad[0] == 0 && geo.pad[1] == 0 && geo.pad[2] == 0;
    std::vector<T> col(direct ? 0 : static_cast<size_t>(cg_in * kvol * cols));
    for (int64_t b = 0; b < n; ++b)
      for (int64_t gi = 0; gi < g; ++gi) {
        const T* image = x + (b * c_in + gi * cg_in) * in_vol;
        if (!direct) im2col(image, cg_in, geo, col.data());
        gemm<T>(false, cg_out, cols, cg_in * kvol, w + gi * cg_out * cg_in * kvol, direct ? image : col.data(),
                y + (b * c_out + gi * cg_out) * out_vol);
      }
  } else {
    std::vector<T> col(static_cast<size_t>(cg_out * kvol * cols));
    for (int64_t b = 0; b < n; ++b)
      for (int64_t gi = 0; gi < g; ++gi) {
        gemm<T>(true, cg_out * kvol, cols, cg_in, w + gi * cg_in * cg_out * kvol, x + (b * c_in + gi * cg_in) * in_vol,
                col.data());
        col2im(col.data(), cg_out, geo, y + (b * c_out + gi * cg_out) * img);
      }
  }
  if (bias) {
    const T* bv = bias->data<T>();
    for (int64_t b = 0; b < n; ++b)
      for (int64_t c = 0; c < c_out; ++c) {
        T* plane = y + (b * c_out + c) * out_vol;
        for (int64_t i = 0; i < out_vol; ++i) plane[i] += bv[c];
      }
  }
}

bool runDnnl(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, const Conv& p, Tensor& out) {
  detail::DnnlConvParams d;
  d.transposed = p.transposed;
  d.groups = p.groups;
  d.src.assign(input.sizes().begin(), input.sizes().end());
  d.weight.assign(weight.sizes().begin(), weight.sizes().end());
  d.dst.assign(out.sizes().begin(), out.sizes().end());
  d.stride = p.stride;
  d.dilation = p.dilation;
  d.pad_l = p.pad_l;
  d.pad_r = p.pad_r;
  if (p.transposed) {
    // oneDNN derives the output size from the padding: the extra
    // output_padding rows are less padding on the right.
    for (size_t i = 0; i < d.pad_r.size(); ++i) d.pad_r[i] -= p.output_padding[i];
  }
  d.has_bias = bias.has_value();
  return detail::dnnlConvolution(d, input.data<float>(), weight.data<float>(), bias ? bias->data<float>() : nullptr,
                                 out.data<float>());
}

std::string dtypeName(ScalarType t) { return std::string(scalarTypeShortName(t)); }

// torch's check_shape_forward and the output-size checks of its kernels.
void checkShape(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, const Conv& p) {
  for (size_t i = 0; i < p.pad_l.size(); ++i)
    KILN_CHECK(p.pad_l[i] >= 0 && p.pad_r[i] >= 0, "negative padding is not supported");
  for (int64_t v : p.output_padding) KILN_CHECK(v >= 0, "negative output_padding is not supported");
  for (int64_t v : p.stride) KILN_CHECK(v > 0, "non-positive stride is not supported");
  for (int64_t v : p.dilation) KILN_CHECK(v > 0, "non-positive dilation is not supported");
  const int64_t k = input.dim(), weight_dim = weight.dim();
  IntArrayRef ws = weight.sizes();
  KILN_CHECK(weight_dim == k, "Expected ", weight_dim, "-dimensional input for ", weight_dim, "-dimensional weight ",
             shapeString(ws), ", but got ", k, "-dimensional input of size ", shapeString(input.sizes()), " instead");
  const int64_t groups = p.groups;
  KILN_CHECK(ws[0] >= groups, "Given groups=", groups, ", expected weight to be at least ", groups,
             " at dimension 0, but got weight of size ", shapeString(ws), " instead");
  KILN_CHECK(ws[0] % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
             " at dimension 0, but got weight of size [", shapeString(ws), "] instead");
  if (!p.transposed) {
    KILN_CHECK(input.size(1) == ws[1] * groups, "Given groups=", groups, ", weight of size ", shapeString(ws),
               ", expected input", shapeString(input.sizes()), " to have ", ws[1] * groups, " channels, but got ",
               input.size(1), " channels instead");
    KILN_CHECK(!bias || (bias->dim() == 1 && bias->size(0) == ws[0]), "Given weight of size ", shapeString(ws),
               ", expected bias to be 1-dimensional with ", ws[0], " elements, but got bias of size ",
               shapeString(bias->sizes()), " instead");
    Dims padded, kernel;
    bool ok = true;
    for (int64_t i = 2; i < k; ++i) {
      padded.push_back(input.size(i) + p.pad_l[i - 2] + p.pad_r[i - 2]);
      kernel.push_back(p.dilation[i - 2] * (ws[i] - 1) + 1);
      if (padded.back() < kernel.back()) ok = false;
    }
    KILN_CHECK(ok, "Calculated padded input size per channel: (", joinX(padded), "). Kernel size: (", joinX(kernel),
               "). Kernel size can't be greater than actual input size");
  } else {
    KILN_CHECK(input.size(1) == ws[0], "Given transposed=1, weight of size ", shapeString(ws), ", expected input",
               shapeString(input.sizes()), " to have ", ws[0], " channels, but got ", input.size(1),
               " channels instead");
    KILN_CHECK(!bias || (bias->dim() == 1 && bias->size(0) == ws[1] * groups), "Given transposed=1, weight of size ",
               shapeString(ws), ", expected bias to be 1-dimensional with ", ws[1] * groups,
               " elements, but got bias of size ", shapeString(bias->sizes()), " instead");
    bool ok = true;
    for (size_t i = 0; i < p.stride.size(); ++i) {
      if (p.output_padding[i] >= p.stride[i] && p.output_padding[i] >= p.dilation[i]) ok = false;
    }
    if (!ok) {
      static const char* const names[] = {"depth", "height", "width"};
      std::ostringstream s;
      s << "output padding must be smaller than either stride or dilation, but got";
      size_t first = 3 - p.stride.size();
      for (const char* what : {"output_padding", "stride", "dilation"}) {
        const Dims& v = what[0] == 'o' ? p.output_padding : what[0] == 's' ? p.stride : p.dilation;
        for (size_t i = 0; i < v.size(); ++i) s << " " << what << "_" << names[first + i] << ": " << v[i];
      }
      KILN_ERROR(s.str());
    }
  }
}

Dims outputSizes(const Tensor& input, const Tensor& weight, const Conv& p) {
  Dims out{input.size(0), p.transposed ? weight.size(1) * p.groups : weight.size(0)};
  Dims in_sp, out_sp;
  bool ok = true;
  for (int64_t i = 0; i < p.spatial; ++i) {
    int64_t in = input.size(i + 2), kernel = weight.size(i + 2), o;
    if (p.transposed) {
      o = (in - 1) * p.stride[i] - p.pad_l[i] - p.pad_r[i] + p.dilation[i] * (kernel - 1) + p.output_padding[i] + 1;
    } else {
      o = (in + p.pad_l[i] + p.pad_r[i] - p.dilation[i] * (kernel - 1) - 1) / p.stride[i] + 1;
    }
    in_sp.push_back(in);
    out_sp.push_back(o);
    if (o <= 0) ok = false;
    out.push_back(o);
  }
  KILN_CHECK(ok, "Given input size per channel: (", joinX(in_sp), "). Calculated output size per channel: (",
             joinX(out_sp), "). Output size is too small");
  return out;
}

Tensor convolutionImpl(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, const Conv& p) {
  checkShape(input, weight, bias, p);
  Dims sizes = outputSizes(input, weight, p);
  Tensor out = empty(sizes, input.dtype());
  if (out.numel() == 0) return out;
  if (input.numel() == 0 || weight.numel() == 0) {
    // Nothing to sum: the bias alone.
    zero_(out);
    if (bias) {
      Dims shape(sizes.size(), 1);
      shape[1] = sizes[1];
      Tensor b = view(*bias, shape);
      copy_(out, expand(b, sizes));
    }
    return out;
  }
  Tensor x = contiguous(input), w = contiguous(weight);
  std::optional<Tensor> b;
  if (bias) b = contiguous(*bias);
  if (x.dtype() == ScalarType::Float && runDnnl(x, w, b, p, out)) return out;
  KILN_DISPATCH_SWITCH(x.dtype(), "convolution",
                       KILN_FLOATING_CASES([&] { convGeneric<scalar_t>(x, w, b, p, out); })
                           KILN_DISPATCH_CASE(Long, int64_t, [&] { convGeneric<scalar_t>(x, w, b, p, out); })
                               KILN_DISPATCH_CASE(Int, int32_t, [&] { convGeneric<scalar_t>(x, w, b, p, out); }));
  return out;
}

void checkDtypes(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  KILN_CHECK(input.dtype() == weight.dtype(), "expected scalar type ", dtypeName(input.dtype()), " but found ",
             dtypeName(weight.dtype()));
  KILN_CHECK(!bias || bias->dtype() == input.dtype(), "expected scalar type ", dtypeName(input.dtype()), " but found ",
             dtypeName(bias->dtype()));
}

Conv makeConv(const Tensor& weight, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
              IntArrayRef output_padding, int64_t groups) {
  const int64_t dim = weight.dim() - 2;
  KILN_CHECK(dim > 0, "weight should have at least three dimensions");
  KILN_CHECK(dim <= 3, "only 1, 2 and 3 spatial dimensions are supported, got a ", weight.dim(), "-dimensional weight");
  KILN_CHECK(groups > 0, "non-positive groups is not supported");
  Conv p;
  p.spatial = dim;
  p.stride = expandParam(stride, "stride", dim);
  p.pad_l = expandParam(padding, "padding", dim);
  p.pad_r = p.pad_l;
  p.dilation = expandParam(dilation, "dilation", dim);
  p.transposed = transposed;
  p.output_padding = expandParam(output_padding, "output_padding", dim);
  p.groups = groups;
  return p;
}

// Unbatched input (C, spatial...) gets a batch dim of 1 for the op and loses it after.
template <typename F>
Tensor batchified(int64_t spatial, const Tensor& input, const char* name, const F& run) {
  const int64_t rank = input.dim();
  KILN_CHECK(rank == spatial + 1 || rank == spatial + 2, "Expected ", spatial + 1, "D (unbatched) or ", spatial + 2,
             "D (batched) input to ", name, ", but got input of size: ", shapeString(input.sizes()));
  if (rank == spatial + 2) return run(input);
  return squeeze(run(unsqueeze(input, 0)), 0);
}

const char* convName(int64_t spatial, bool transposed) {
  static const char* const names[2][3] = {{"conv1d", "conv2d", "conv3d"},
                                          {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}};
  return names[transposed ? 1 : 0][spatial - 1];
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups) {
  checkDtypes(input, weight, bias);
  Conv p = makeConv(weight, stride, padding, dilation, transposed, output_padding, groups);
  if (!transposed) std::fill(p.output_padding.begin(), p.output_padding.end(), 0);
  return convolutionImpl(input, weight, bias, p);
}

Tensor convolutionMode(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                       const std::string& padding, IntArrayRef dilation, int64_t groups) {
  if (padding == "valid") {
    return convolution(input, weight, bias, stride, {0}, dilation, false, {0}, groups);
  }
  KILN_CHECK(padding == "same", "Invalid padding string: '", padding, "'");
  const int64_t k = weight.dim();
  KILN_CHECK(k > 2, "weight should have at least three dimensions");
  const int64_t dim = k - 2;
  KILN_CHECK(k == input.dim(), "Expected ", k, "-dimensional input for ", k, "-dimensional weight",
             shapeString(weight.sizes()), ", but got ", input.dim(), "-dimensional input of size ",
             shapeString(input.sizes()), " instead");
  KILN_CHECK(static_cast<int64_t>(stride.size()) == dim || stride.size() == 1, "stride cannot broadcast to ", dim,
             " dimensions");
  KILN_CHECK(static_cast<int64_t>(dilation.size()) == dim || dilation.size() == 1, "dilation cannot broadcast to ", dim,
             " dimensions");
  for (int64_t s : stride) KILN_CHECK(s == 1, "padding='same' is not supported for strided convolutions");
  checkDtypes(input, weight, bias);
  Conv p = makeConv(weight, stride, {0}, dilation, false, {0}, groups);
  // Total padding d * (k - 1), the odd one on the right, as torch's
  // _convolution_same (which pads the input for the asymmetric part; kiln's
  // kernels take asymmetric padding directly).
  for (int64_t i = 0; i < dim; ++i) {
    int64_t total = p.dilation[i] * (weight.size(i + 2) - 1);
    p.pad_l[i] = total / 2;
    p.pad_r[i] = total - total / 2;
  }
  return convolutionImpl(input, weight, bias, p);
}

Tensor convNd(int64_t spatial, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return batchified(spatial, input, convName(spatial, false), [&](const Tensor& x) {
    return convolution(x, weight, bias, stride, padding, dilation, false, {0}, groups);
  });
}

Tensor convNdMode(int64_t spatial, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                  IntArrayRef stride, const std::string& padding, IntArrayRef dilation, int64_t groups) {
  return batchified(spatial, input, convName(spatial, false), [&](const Tensor& x) {
    return convolutionMode(x, weight, bias, stride, padding, dilation, groups);
  });
}

Tensor convTransposeNd(int64_t spatial, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                       IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                       IntArrayRef dilation) {
  return batchified(spatial, input, convName(spatial, true), [&](const Tensor& x) {
    return convolution(x, weight, bias, stride, padding, dilation, true, output_padding, groups);
  });
}

}  // namespace kiln
