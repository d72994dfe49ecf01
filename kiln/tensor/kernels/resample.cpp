// Resampling and layout kernels (kiln/tensor/resample.h). Upsampling is
// separable: each spatial dim is resized in turn, last dim first, with the
// taps (input index, weight) of each output index computed once; that is
// the order in which PyTorch's CPU kernels combine the taps, so the sums
// round alike. Padding gathers indices, dim by dim.
#include "kiln/tensor/resample.h"

#include <cmath>
#include <sstream>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/index.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

std::string sizesText(IntArrayRef sizes) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < sizes.size(); ++i) s << (i ? ", " : "") << sizes[i];
  s << "]";
  return s.str();
}

template <typename T>
struct Taps {
  int64_t width = 0;           // taps per output index
  std::vector<int64_t> index;  // out_size * width
  std::vector<T> weight;       // out_size * width
};

// PyTorch's compute_scales_value and area_pixel_compute_scale.
template <typename T>
T scalesValue(std::optional<double> scale, int64_t in, int64_t out) {
  return scale && *scale > 0. ? static_cast<T>(1.0 / *scale) : static_cast<T>(in) / static_cast<T>(out);
}
template <typename T>
T areaPixelScale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  return scalesValue<T>(scale, in, out);
}
template <typename T>
T sourceIndex(T scale, int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<T>(dst);
  const T src = scale * (static_cast<T>(dst) + T(0.5)) - T(0.5);
  return (!cubic && src < T(0)) ? T(0) : src;
}

template <typename T>
T cubic1(T x, T a) {
  return ((a + 2) * x - (a + 3)) * x * x + 1;
}
template <typename T>
T cubic2(T x, T a) {
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

// The antialiasing filters of torchvision's resize (PIL's).
template <typename T>
T aaFilter(T x, bool cubic) {
  if (x < 0) x = -x;
  if (!cubic) return x < 1 ? 1 - x : 0;
  const T a = T(-0.5);
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}

template <typename T>
Taps<T> makeTaps(int64_t in, int64_t out, ResampleMode mode, bool align_corners, std::optional<double> scale,
                 bool antialias) {
  Taps<T> taps;
  if constexpr (!std::is_floating_point_v<T>) mode = ResampleMode::Nearest;  // bytes resample by nearest only
  if constexpr (std::is_floating_point_v<T>) {
    if (antialias && (mode == ResampleMode::Linear || mode == ResampleMode::Cubic)) {
      const bool cubic = mode == ResampleMode::Cubic;
      const T s = areaPixelScale<T>(in, out, align_corners, scale);
      const T interp = cubic ? T(2) : T(1);  // half the filter's support at scale 1
      const T support = s >= T(1) ? interp * s : interp;
      const T invscale = s >= T(1) ? T(1) / s : T(1);
      taps.width = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
      taps.index.assign(static_cast<size_t>(out * taps.width), 0);
      taps.weight.assign(static_cast<size_t>(out * taps.width), T(0));
      for (int64_t i = 0; i < out; ++i) {
        const T center = s * (static_cast<T>(i) + T(0.5));
        const int64_t xmin = std::max<int64_t>(static_cast<int64_t>(center - support + T(0.5)), 0);
        const int64_t xsize = std::min<int64_t>(static_cast<int64_t>(center + support + T(0.5)), in) - xmin;
        T total = 0;
        const int64_t n = std::min(xsize, taps.width);
        for (int64_t j = 0; j < n; ++j) {
          const T w = aaFilter<T>((static_cast<T>(j + xmin) - center + T(0.5)) * invscale, cubic);
          taps.weight[static_cast<size_t>(i * taps.width + j)] = w;
          total += w;
        }
        for (int64_t j = 0; j < taps.width; ++j) {
          const auto k = static_cast<size_t>(i * taps.width + j);
          taps.index[k] = std::min(xmin + j, in - 1);
          taps.weight[k] = j < n && total != 0 ? taps.weight[k] / total : T(0);
        }
      }
      return taps;
    }
  }
  switch (mode) {
    case ResampleMode::Nearest:
    case ResampleMode::NearestExact: {
      taps.width = 1;
      taps.weight.assign(static_cast<size_t>(out), T(1));
      const float s = scalesValue<float>(scale, in, out);
      for (int64_t i = 0; i < out; ++i) {
        int64_t src;
        if (mode == ResampleMode::NearestExact) {
          src = std::min(static_cast<int64_t>(std::floor((static_cast<float>(i) + 0.5f) * s)), in - 1);
        } else if (out == in) {
          src = i;
        } else if (out == 2 * in) {
          src = i >> 1;
        } else {
          src = std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * s)), in - 1);
        }
        taps.index.push_back(src);
      }
      break;
    }
    case ResampleMode::Linear:
      if constexpr (std::is_floating_point_v<T>) {
        taps.width = 2;
        const T s = areaPixelScale<T>(in, out, align_corners, scale);
        for (int64_t i = 0; i < out; ++i) {
          const T real = sourceIndex<T>(s, i, align_corners, false);
          const auto i0 = static_cast<int64_t>(real);
          const T l1 = std::min(std::max(real - static_cast<T>(i0), T(0)), T(1));
          taps.index.push_back(i0);
          taps.index.push_back(i0 + (i0 < in - 1 ? 1 : 0));
          taps.weight.push_back(T(1) - l1);
          taps.weight.push_back(l1);
        }
      }
      break;
    case ResampleMode::Cubic:
      if constexpr (std::is_floating_point_v<T>) {
        taps.width = 4;
        const T s = areaPixelScale<T>(in, out, align_corners, scale);
        const T a = T(-0.75);
        for (int64_t i = 0; i < out; ++i) {
          const T real = sourceIndex<T>(s, i, align_corners, true);
          const auto x = static_cast<int64_t>(std::floor(real));
          const T t = real - static_cast<T>(x);
          const T w[4] = {cubic2<T>(t + 1, a), cubic1<T>(t, a), cubic1<T>(1 - t, a), cubic2<T>(2 - t, a)};
          for (int k = 0; k < 4; ++k) {
            taps.index.push_back(std::min(std::max<int64_t>(x - 1 + k, 0), in - 1));
            taps.weight.push_back(w[k]);
          }
        }
      }
      break;
  }
  return taps;
}

// Resizes dim `dim` of a contiguous tensor.
template <typename T>
Tensor resampleDim(const Tensor& x, int64_t dim, int64_t out_size, ResampleMode mode, bool align_corners,
                   std::optional<double> scale, bool antialias) {
  const int64_t in = x.size(dim);
  DimVector sizes(x.sizes().begin(), x.sizes().end());
  sizes[static_cast<size_t>(dim)] = out_size;
  Tensor out = empty(sizes, x.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const Taps<T> taps = makeTaps<T>(in, out_size, mode, align_corners, scale, antialias);
  const T* src = x.data<T>();
  T* dst = out.data<T>();
  const int64_t w = taps.width;
  parallelFor(0, outer * out_size, std::max<int64_t>(1, 32768 / std::max<int64_t>(inner * w, 1)),
              [&](int64_t begin, int64_t end) {
                for (int64_t row = begin; row < end; ++row) {
                  const int64_t o = row / out_size, i = row % out_size;
                  T* d = dst + row * inner;
                  const int64_t* idx = taps.index.data() + i * w;
                  const T* wt = taps.weight.data() + i * w;
                  const T* base = src + o * in * inner;
                  if (w == 1) {
                    const T* s0 = base + idx[0] * inner;
                    for (int64_t j = 0; j < inner; ++j) d[j] = s0[j];
                    continue;
                  }
                  for (int64_t j = 0; j < inner; ++j) {
                    T acc = base[idx[0] * inner + j] * wt[0];
                    for (int64_t k = 1; k < w; ++k) acc += base[idx[k] * inner + j] * wt[k];
                    d[j] = acc;
                  }
                }
              });
  return out;
}

const char* spatialNames(size_t n) { return n == 1 ? "W" : n == 2 ? "HW" : "DHW"; }

}  // namespace

Tensor upsample(const char* name, const Tensor& self, IntArrayRef output_size, ResampleMode mode, bool align_corners,
                const std::vector<std::optional<double>>& scales, bool antialias) {
  const auto spatial = static_cast<int64_t>(scales.size());
  KILN_CHECK(static_cast<int64_t>(output_size.size()) == spatial, "It is expected output_size equals to ", spatial,
             ", but got size ", output_size.size());
  KILN_CHECK(self.dim() == spatial + 2, "It is expected input_size equals to ", spatial + 2, ", but got size ",
             self.dim());
  bool positive = true;
  for (int64_t i = 0; i < spatial; ++i) positive = positive && self.size(i + 2) > 0 && output_size[i] > 0;
  if (!positive) {
    std::ostringstream m;
    const char* names = spatialNames(static_cast<size_t>(spatial));
    m << "Input and output sizes should be greater than 0, but got input (";
    for (int64_t i = 0; i < spatial; ++i) m << (i ? ", " : "") << names[i] << ": " << self.size(i + 2);
    m << ") output (";
    for (int64_t i = 0; i < spatial; ++i) m << (i ? ", " : "") << names[i] << ": " << output_size[i];
    m << ")";
    KILN_ERROR(m.str());
  }
  const bool nearest = mode == ResampleMode::Nearest || mode == ResampleMode::NearestExact;
  KILN_CHECK(isFloatingType(self.dtype()) || (nearest && self.dtype() == ScalarType::Byte), "\"", name,
             "\" not implemented for '", scalarTypeShortName(self.dtype()), "'");
  Tensor x = contiguous(self);
  bool resized = false;
  for (int64_t i = spatial - 1; i >= 0; --i) {
    const int64_t dim = i + 2;
    if (nearest && x.size(dim) == output_size[i] && mode == ResampleMode::Nearest) continue;
    resized = true;
    KILN_DISPATCH_SWITCH(x.dtype(), name, KILN_FLOATING_CASES([&] {
                           x = resampleDim<scalar_t>(x, dim, output_size[i], mode, align_corners, scales[i], antialias);
                         }) KILN_DISPATCH_CASE(Byte, uint8_t, [&] {
                           x = resampleDim<scalar_t>(x, dim, output_size[i], mode, align_corners, scales[i], false);
                         }));
  }
  return resized ? x : clone(self);
}

DimVector upsampleOutputSize(const Tensor& input, const std::optional<IntArrayRef>& output_size,
                             const std::optional<std::vector<double>>& scale_factors, int64_t spatial,
                             std::vector<std::optional<double>>* scales) {
  KILN_CHECK(!(output_size && scale_factors), "Must specify exactly one of output_size and scale_factors");
  scales->assign(static_cast<size_t>(spatial), std::nullopt);
  if (output_size) {
    DimVector out(output_size->begin(), output_size->end());
    return out;
  }
  KILN_CHECK(scale_factors.has_value(), "Must specify exactly one of output_size and scale_factors");
  KILN_CHECK(static_cast<int64_t>(scale_factors->size()) == spatial, "It is expected scale_factors equals to ", spatial,
             ", but got size ", scale_factors->size());
  KILN_CHECK(input.dim() == spatial + 2, "It is expected input_size equals to ", spatial + 2, ", but got size ",
             input.dim());
  DimVector out;
  for (int64_t i = 0; i < spatial; ++i) {
    const double s = (*scale_factors)[static_cast<size_t>(i)];
    out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(input.size(i + 2)) * s)));
    (*scales)[static_cast<size_t>(i)] = s;
  }
  return out;
}

// --- padding ------------------------------------------------------------------------------

namespace {

Tensor indexTensor(const std::vector<int64_t>& idx) {
  Tensor t = empty({static_cast<int64_t>(idx.size())}, ScalarType::Long);
  std::copy(idx.begin(), idx.end(), t.data<int64_t>());
  return t;
}

enum class PadKind { Reflect, Replicate, Circular };

Tensor gatherPad(const Tensor& self, IntArrayRef pad, PadKind kind) {
  Tensor x = self;
  const auto n = static_cast<int64_t>(pad.size() / 2);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t dim = self.dim() - 1 - i;
    const int64_t in = self.size(dim);
    const int64_t left = pad[static_cast<size_t>(2 * i)], right = pad[static_cast<size_t>(2 * i + 1)];
    const int64_t out = in + left + right;
    std::vector<int64_t> idx;
    idx.reserve(static_cast<size_t>(std::max<int64_t>(out, 0)));
    for (int64_t o = 0; o < out; ++o) {
      int64_t j = o - left;
      switch (kind) {
        case PadKind::Reflect:
          if (j < 0) j = -j;
          if (j >= in) j = 2 * (in - 1) - j;
          break;
        case PadKind::Replicate: j = std::min(std::max<int64_t>(j, 0), in - 1); break;
        case PadKind::Circular: {
          // Negative pads crop first; the wrapped parts come from what is kept.
          const int64_t start = std::max<int64_t>(-left, 0);
          const int64_t kept = in - start - std::max<int64_t>(-right, 0);
          const int64_t k = o - std::max<int64_t>(left, 0);
          j = start + ((k % kept) + kept) % kept;
          break;
        }
      }
      idx.push_back(j);
    }
    x = indexSelect(x, dim, indexTensor(idx));
  }
  return x;
}

void checkPadDims(const char* what, const Tensor& self, IntArrayRef pad, int64_t dims) {
  KILN_CHECK(static_cast<int64_t>(pad.size()) == 2 * dims, "padding size is expected to be ", 2 * dims,
             ", but got: ", pad.size());
  KILN_CHECK(self.dim() == dims + 1 || self.dim() == dims + 2, "Expected ", dims + 1, "D or ", dims + 2,
             "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: ",
             sizesText(self.sizes()));
  const char* names = spatialNames(static_cast<size_t>(dims));
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t dim = self.dim() - 1 - i;
    const int64_t out = self.size(dim) + pad[static_cast<size_t>(2 * i)] + pad[static_cast<size_t>(2 * i + 1)];
    KILN_CHECK(out >= 1, "input (", names[dims - 1 - i], ": ", self.size(dim), ") is too small. Calculated output ",
               names[dims - 1 - i], ": ", out);
  }
}

}  // namespace

Tensor constantPadNd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  KILN_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals ", pad.size());
  const auto n = static_cast<int64_t>(pad.size() / 2);
  KILN_CHECK(n <= self.dim(), "Length of pad should be no more than twice the number of dimensions of the input. ",
             "Pad length is ", pad.size(), "while the input has ", self.dim(), "dimensions.");
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  Tensor src = self;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t dim = self.dim() - 1 - i;
    const int64_t left = pad[static_cast<size_t>(2 * i)], right = pad[static_cast<size_t>(2 * i + 1)];
    const int64_t out = self.size(dim) + left + right;
    KILN_CHECK(out >= 0, "The input size ", self.size(dim), ", plus negative padding ", left, " and ", right,
               " resulted in a negative output size, which is invalid. Check dimension ", dim, " of your input.");
    sizes[static_cast<size_t>(dim)] = out;
    // Negative padding crops the input.
    const int64_t crop_left = std::max<int64_t>(-left, 0);
    const int64_t kept = std::max<int64_t>(src.size(dim) - crop_left - std::max<int64_t>(-right, 0), 0);
    src = narrow(src, dim, std::min(crop_left, src.size(dim)), kept);
  }
  Tensor out = full(sizes, value, self.dtype());
  Tensor region = out;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t dim = self.dim() - 1 - i;
    region = narrow(region, dim, std::max<int64_t>(pad[static_cast<size_t>(2 * i)], 0), src.size(dim));
  }
  if (src.numel() > 0) copy_(region, src);
  return out;
}

Tensor reflectionPad(const Tensor& self, IntArrayRef pad, int64_t dims) {
  checkPadDims("reflection", self, pad, dims);
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t dim = self.dim() - 1 - i;
    const int64_t l = pad[static_cast<size_t>(2 * i)], r = pad[static_cast<size_t>(2 * i + 1)];
    KILN_CHECK(l < self.size(dim) && r < self.size(dim),
               "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (", l,
               ", ", r, ") at dimension ", dim, " of input ", sizesText(self.sizes()));
  }
  return gatherPad(self, pad, PadKind::Reflect);
}

Tensor replicationPad(const Tensor& self, IntArrayRef pad, int64_t dims) {
  checkPadDims("replication", self, pad, dims);
  return gatherPad(self, pad, PadKind::Replicate);
}

Tensor circularPad(const Tensor& self, IntArrayRef pad) {
  KILN_CHECK(pad.size() % 2 == 0, "Padding length must be divisible by 2");
  const auto n = static_cast<int64_t>(pad.size() / 2);
  KILN_CHECK(n == self.dim() - 2, "Invalid padding size, expected ", 2 * (self.dim() - 2), " but got ", pad.size());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t dim = self.dim() - 1 - i;
    KILN_CHECK(
        pad[static_cast<size_t>(2 * i)] <= self.size(dim) && pad[static_cast<size_t>(2 * i + 1)] <= self.size(dim),
        "Padding value causes wrapping around more than once.");
    KILN_CHECK(self.size(dim) + pad[static_cast<size_t>(2 * i)] + pad[static_cast<size_t>(2 * i + 1)] >= 0,
               "Negative padding value is resulting in an empty dimension.");
  }
  return gatherPad(self, pad, PadKind::Circular);
}

Tensor padMode(const Tensor& self, IntArrayRef pad, const std::string& mode, std::optional<double> value) {
  KILN_CHECK(mode == "constant" || mode == "reflect" || mode == "replicate" || mode == "circular",
             "Unrecognised padding mode ", mode);
  if (mode == "constant") return constantPadNd(self, pad, Scalar(value.value_or(0.0)));
  KILN_CHECK(!value || *value == 0, "Padding mode \"", mode, "\" doesn't take in value argument");
  KILN_CHECK(pad.size() % 2 == 0, "Padding length must be divisible by 2");
  KILN_CHECK(static_cast<int64_t>(pad.size() / 2) <= self.dim(), "Padding length too large");
  const auto n = static_cast<int64_t>(pad.size() / 2);
  if (n >= 1 && n <= 3 && (self.dim() == n + 1 || self.dim() == n + 2)) {
    if (mode == "reflect") return reflectionPad(self, pad, n);
    if (mode == "replicate") return replicationPad(self, pad, n);
    return circularPad(self, pad);
  }
  KILN_ERROR("Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
}

// --- shuffles -----------------------------------------------------------------------------

Tensor pixelShuffle(const Tensor& self, int64_t r) {
  KILN_CHECK(self.dim() >= 3, "pixel_shuffle expects input to have at least 3 dimensions, but got input with ",
             self.dim(), " dimension(s)");
  KILN_CHECK(r > 0, "pixel_shuffle expects a positive upscale_factor, but got ", r);
  const int64_t c = self.size(-3), h = self.size(-2), w = self.size(-1);
  KILN_CHECK(c % (r * r) == 0,
             "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
             "but input.size(-3)=",
             c, " is not divisible by ", r * r);
  DimVector batch(self.sizes().begin(), self.sizes().end() - 3);
  const auto b = static_cast<int64_t>(batch.size());
  DimVector split = batch;
  for (int64_t s : {c / (r * r), r, r, h, w}) split.push_back(s);
  DimVector perm;
  for (int64_t i = 0; i < b; ++i) perm.push_back(i);
  for (int64_t p : {0, 3, 1, 4, 2}) perm.push_back(b + p);
  DimVector final_sizes = batch;
  for (int64_t s : {c / (r * r), h * r, w * r}) final_sizes.push_back(s);
  return reshape(contiguous(permute(reshape(self, split), perm), MemoryFormat::Contiguous), final_sizes);
}

Tensor pixelUnshuffle(const Tensor& self, int64_t r) {
  KILN_CHECK(self.dim() >= 3, "pixel_unshuffle expects input to have at least 3 dimensions, but got input with ",
             self.dim(), " dimension(s)");
  KILN_CHECK(r > 0, "pixel_unshuffle expects a positive downscale_factor, but got ", r);
  const int64_t c = self.size(-3), h = self.size(-2), w = self.size(-1);
  KILN_CHECK(h % r == 0, "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=", h,
             " is not divisible by ", r);
  KILN_CHECK(w % r == 0, "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=", w,
             " is not divisible by ", r);
  DimVector batch(self.sizes().begin(), self.sizes().end() - 3);
  const auto b = static_cast<int64_t>(batch.size());
  DimVector split = batch;
  for (int64_t s : {c, h / r, r, w / r, r}) split.push_back(s);
  DimVector perm;
  for (int64_t i = 0; i < b; ++i) perm.push_back(i);
  for (int64_t p : {0, 2, 4, 1, 3}) perm.push_back(b + p);
  DimVector final_sizes = batch;
  for (int64_t s : {c * r * r, h / r, w / r}) final_sizes.push_back(s);
  return reshape(contiguous(permute(reshape(self, split), perm), MemoryFormat::Contiguous), final_sizes);
}

Tensor channelShuffle(const Tensor& self, int64_t groups) {
  KILN_CHECK(self.dim() > 2, "channel_shuffle expects input with > 2 dims, but got input with sizes ",
             sizesText(self.sizes()));
  KILN_CHECK(groups > 0, "Number of groups to divide channels in must be positive.", " Value of groups:", groups);
  const int64_t c = self.size(1);
  KILN_CHECK(c % groups == 0, "Number of channels must be divisible by groups. Got ", c, " channels and ", groups,
             " groups.");
  DimVector split = {self.size(0), groups, c / groups};
  for (int64_t d = 2; d < self.dim(); ++d) split.push_back(self.size(d));
  DimVector perm = {0, 2, 1};
  for (int64_t d = 3; d < static_cast<int64_t>(split.size()); ++d) perm.push_back(d);
  DimVector sizes(self.sizes().begin(), self.sizes().end());
  return reshape(contiguous(permute(reshape(self, split), perm), MemoryFormat::Contiguous), sizes);
}

// --- im2col / col2im ----------------------------------------------------------------------

namespace {

void checkPair(IntArrayRef v, const char* what) {
  KILN_CHECK(v.size() == 2, "It is expected ", what, " equals to 2, but got size ", v.size());
}

struct Geometry {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
};

Geometry geometry(IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  checkPair(kernel_size, "kernel_size");
  checkPair(dilation, "dilation");
  checkPair(padding, "padding");
  checkPair(stride, "stride");
  Geometry g{kernel_size[0], kernel_size[1], dilation[0], dilation[1], padding[0], padding[1], stride[0], stride[1]};
  KILN_CHECK(g.kh > 0 && g.kw > 0, "kernel size should be greater than zero, but got kernel_height: ", g.kh,
             " kernel_width: ", g.kw);
  KILN_CHECK(g.sh > 0 && g.sw > 0, "stride should be greater than zero, but got stride_height: ", g.sh,
             " stride_width: ", g.sw);
  KILN_CHECK(g.dh > 0 && g.dw > 0, "dilation should be greater than zero, but got dilation_height: ", g.dh,
             " dilation_width: ", g.dw);
  KILN_CHECK(g.ph >= 0 && g.pw >= 0, "padding should be non-negative, but got pad_height: ", g.ph,
             " pad_width: ", g.pw);
  return g;
}

template <typename T>
void im2colFrame(const T* src, T* dst, int64_t channels, int64_t h, int64_t w, int64_t oh, int64_t ow,
                 const Geometry& g, bool accumulate_back) {
  // Row (c, ki, kj), column (y, x): src[c, y*sh - ph + ki*dh, x*sw - pw + kj*dw].
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const int64_t row = (c * g.kh + ki) * g.kw + kj;
        for (int64_t y = 0; y < oh; ++y) {
          const int64_t iy = y * g.sh - g.ph + ki * g.dh;
          for (int64_t x = 0; x < ow; ++x) {
            const int64_t ix = x * g.sw - g.pw + kj * g.dw;
            const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            T* col = dst + (row * oh + y) * ow + x;
            T* img = const_cast<T*>(src) + (c * h + iy) * w + ix;
            if (accumulate_back) {
              if (inside) *img += *col;
            } else {
              *col = inside ? *img : T(0);
            }
          }
        }
      }
    }
  }
}

}  // namespace

Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride) {
  const Geometry g = geometry(kernel_size, dilation, padding, stride);
  const bool batched = self.dim() == 4;
  KILN_CHECK((self.dim() == 3 && self.size(0) != 0 && self.size(1) != 0 && self.size(2) != 0) ||
                 (self.dim() == 4 && self.size(1) != 0 && self.size(2) != 0 && self.size(3) != 0),
             "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for "
             "input, but got: ",
             sizesText(self.sizes()));
  Tensor x = contiguous(batched ? self : reshape(self, {1, self.size(0), self.size(1), self.size(2)}));
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const int64_t oh = (h + 2 * g.ph - (g.dh * (g.kh - 1) + 1)) / g.sh + 1;
  const int64_t ow = (w + 2 * g.pw - (g.dw * (g.kw - 1) + 1)) / g.sw + 1;
  // PyTorch 1.13 prints the height twice.
  KILN_CHECK(oh >= 1 && ow >= 1, "Given input with spatial size (", h, ", ", h, "), kernel_size=(", g.kh, ", ", g.kw,
             "), dilation=(", g.dh, ", ", g.dw, "), padding=(", g.ph, ", ", g.pw,
             "), calculated shape of the array of sliding blocks as (", oh, ", ", ow,
             "), but its components must be at least one.");
  KILN_CHECK(isFloatingType(self.dtype()), "\"im2col_out_cpu\" not implemented for '",
             scalarTypeShortName(self.dtype()), "'");
  Tensor out = empty({n, c * g.kh * g.kw, oh * ow}, self.dtype());
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "im2col", [&] {
    const scalar_t* src = x.data<scalar_t>();
    scalar_t* dst = out.data<scalar_t>();
    parallelFor(0, n, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        im2colFrame<scalar_t>(src + b * c * h * w, dst + b * c * g.kh * g.kw * oh * ow, c, h, w, oh, ow, g, false);
    });
  });
  return batched ? out : reshape(out, {out.size(1), out.size(2)});
}

Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  checkPair(output_size, "output_size");
  const Geometry g = geometry(kernel_size, dilation, padding, stride);
  const bool batched = self.dim() == 3;
  KILN_CHECK((self.dim() == 2 && self.size(0) != 0 && self.size(1) != 0) ||
                 (self.dim() == 3 && self.size(1) != 0 && self.size(2) != 0),
             "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for "
             "input, but got: ",
             sizesText(self.sizes()));
  Tensor x = contiguous(batched ? self : reshape(self, {1, self.size(0), self.size(1)}));
  const int64_t h = output_size[0], w = output_size[1];
  const int64_t rows = x.size(1);
  KILN_CHECK(
      rows % (g.kh * g.kw) == 0,
      "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)=",
      rows, " and kernel_size=(", g.kh, ", ", g.kw, ")");
  const int64_t oh = (h + 2 * g.ph - (g.dh * (g.kh - 1) + 1)) / g.sh + 1;
  const int64_t ow = (w + 2 * g.pw - (g.dw * (g.kw - 1) + 1)) / g.sw + 1;
  KILN_CHECK(oh >= 1 && ow >= 1, "Given output_size=(", h, ", ", w, "), kernel_size=(", g.kh, ", ", g.kw,
             "), dilation=(", g.dh, ", ", g.dw, "), padding=(", g.ph, ", ", g.pw, "), stride=(", g.sh, ", ", g.sw,
             "), calculated shape of the array of sliding blocks as (", oh, ", ", ow,
             "), which is too small (non-positive)");
  KILN_CHECK(x.size(2) == oh * ow, "Given output_size=(", h, ", ", w, "), kernel_size=(", g.kh, ", ", g.kw,
             "), dilation=(", g.dh, ", ", g.dw, "), padding=(", g.ph, ", ", g.pw, "), stride=(", g.sh, ", ", g.sw,
             "), expected size of input's dimension 2 to match the calculated number of sliding blocks ", oh, " * ", ow,
             " = ", oh * ow, ", but got input.size(2)=", x.size(2), ".");
  KILN_CHECK(isFloatingType(self.dtype()), "\"col2im_out_cpu\" not implemented for '",
             scalarTypeShortName(self.dtype()), "'");
  const int64_t n = x.size(0), c = rows / (g.kh * g.kw);
  Tensor out = zeros({n, c, h, w}, self.dtype());
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "col2im", [&] {
    scalar_t* img = out.data<scalar_t>();
    scalar_t* col = x.data<scalar_t>();
    parallelFor(0, n, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        im2colFrame<scalar_t>(img + b * c * h * w, col + b * rows * oh * ow, c, h, w, oh, ow, g, true);
    });
  });
  return batched ? out : reshape(out, {c, h, w});
}

}  // namespace kiln
