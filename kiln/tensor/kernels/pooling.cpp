// Pooling with torch 1.13's output sizes, window rules and messages. Each
// output element's window is computed as torch's CPU kernels do, so ties,
// NaNs (max propagates them) and indices agree; average pooling of float32
// goes to oneDNN where its divisor rule is torch's.
#include "kiln/tensor/pooling.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/dnnl_glue.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using Dims = std::vector<int64_t>;

const char* countWord(int64_t spatial) { return spatial == 1 ? "one" : spatial == 2 ? "two" : "three"; }

std::string joinX(const Dims& v) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? "x" : "") << v[i];
  return s.str();
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// A pooling problem over planes (N*C of them) of up to three spatial dims,
// padded at the front with size-1 dims.
struct Pool {
  int64_t planes = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  int64_t inVolume() const { return in[0] * in[1] * in[2]; }
  int64_t outVolume() const { return out[0] * out[1] * out[2]; }
};

void fill3(int64_t* dst, const Dims& v) {
  size_t lead = 3 - v.size();
  for (size_t i = 0; i < v.size(); ++i) dst[lead + i] = v[i];
}

// The output tensor's sizes: the batch dims of self, then `out`.
Dims outputShape(const Tensor& self, int64_t spatial, const Dims& out) {
  Dims sizes(self.sizes().begin(), self.sizes().end() - spatial);
  sizes.insert(sizes.end(), out.begin(), out.end());
  return sizes;
}

Pool makePool(const Tensor& self, int64_t spatial, const Dims& out) {
  Pool p;
  p.planes = 1;
  for (int64_t i = 0; i < self.dim() - spatial; ++i) p.planes *= self.size(i);
  fill3(p.in, Dims(self.sizes().end() - spatial, self.sizes().end()));
  fill3(p.out, out);
  return p;
}

// Parallel over planes, each plane's outputs in order.
template <typename F>
void forEachPlane(const Pool& p, const F& f) {
  int64_t work = std::max<int64_t>(1, p.outVolume() * 8);
  parallelFor(0, p.planes, std::max<int64_t>(1, kGrainSize / work), [&](int64_t lo, int64_t hi) {
    for (int64_t plane = lo; plane < hi; ++plane) f(plane);
  });
}

// Pooling along the last dim only (max_pool1d, and 2-d/3-d windows whose
// other dims are 1): one loop per window instead of three nested ones, the
// comparison as a select so the compiler keeps it branch-free. The windows
// and the NaN rule are the general kernel's.
template <typename T>
void maxPoolLastDimKernel(const Pool& p, const T* x, T* y, int64_t* indices) {
  const int64_t in_w = p.in[2], out_w = p.out[2], k = p.kernel[2], s = p.stride[2], pad = p.pad[2], dil = p.dilation[2];
  forEachPlane(p, [&](int64_t plane) {
    const T* in = x + plane * in_w;
    T* out = y + plane * out_w;
    int64_t* idx = indices ? indices + plane * out_w : nullptr;
    for (int64_t ow = 0; ow < out_w; ++ow) {
      int64_t w0 = ow * s - pad;
      const int64_t w1 = std::min(w0 + (k - 1) * dil + 1, in_w);
      while (w0 < 0) w0 += dil;
      T best = -std::numeric_limits<T>::infinity();
      if (idx) {
        int64_t best_index = w0;
        for (int64_t w = w0; w < w1; w += dil) {
          T v = in[w];
          if (v > best || std::isnan(v)) {
            best = v;
            best_index = w;
          }
        }
        idx[ow] = best_index;
      } else {
        // Branch-free: a max and a NaN flag per element (random data makes
        // the compare-and-branch form mispredict half the time); a window
        // with a NaN takes the exact rule's result, that NaN.
        bool nan = false;
        for (int64_t w = w0; w < w1; w += dil) {
          T v = in[w];
          nan |= v != v;
          best = best < v ? v : best;
        }
        if (nan) {
          for (int64_t w = w0; w < w1; w += dil)
            if (std::isnan(in[w])) best = in[w];
        }
      }
      out[ow] = best;
    }
  });
}

// The maximum of one window of a plane and its index in the plane, by
// torch's rule: the first maximum, and a NaN wins and stays. The window
// runs from `lo` to before `hi` per dim, in steps of the dilation (max
// pooling) or of 1 (adaptive max pooling, whose steps stay constants).
template <bool Dilated, typename T>
inline std::pair<T, int64_t> windowMax(const Pool& p, const T* in, const std::array<int64_t, 3>& lo,
                                       const std::array<int64_t, 3>& hi) {
  const int64_t step_d = Dilated ? p.dilation[0] : 1, step_h = Dilated ? p.dilation[1] : 1,
                step_w = Dilated ? p.dilation[2] : 1;
  int64_t best_index = (lo[0] * p.in[1] + lo[1]) * p.in[2] + lo[2];
  T best = -std::numeric_limits<T>::infinity();
  for (int64_t d = lo[0]; d < hi[0]; d += step_d)
    for (int64_t h = lo[1]; h < hi[1]; h += step_h) {
      const int64_t row = (d * p.in[1] + h) * p.in[2];
      for (int64_t w = lo[2]; w < hi[2]; w += step_w) {
        T v = in[row + w];
        if (v > best || std::isnan(v)) {
          best = v;
          best_index = row + w;
        }
      }
    }
  return {best, best_index};
}

// c ? a : b without a branch (compare-and-branch on random data mispredicts
// about every other element).
template <typename T>
inline T selectBits(bool c, T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  const Bits mask = Bits(0) - Bits(c);
  return std::bit_cast<T>(static_cast<Bits>((std::bit_cast<Bits>(a) & mask) | (std::bit_cast<Bits>(b) & ~mask)));
}

// 2-D windows (depth 1): windowMax's rule (the first maximum; a NaN wins,
// and a later NaN wins over it), each element's update branch-free.
template <typename T>
void maxPool2dKernel(const Pool& p, const T* x, T* y, int64_t* indices) {
  const int64_t in_h = p.in[1], in_w = p.in[2];
  const int64_t dil_h = p.dilation[1], dil_w = p.dilation[2];
  forEachPlane(p, [&](int64_t plane) {
    const T* in = x + plane * p.inVolume();
    T* out = y + plane * p.outVolume();
    int64_t* idx = indices ? indices + plane * p.outVolume() : nullptr;
    int64_t o = 0;
    for (int64_t oh = 0; oh < p.out[1]; ++oh) {
      int64_t h0 = oh * p.stride[1] - p.pad[1];
      const int64_t h1 = std::min(h0 + (p.kernel[1] - 1) * dil_h + 1, in_h);
      while (h0 < 0) h0 += dil_h;
      for (int64_t ow = 0; ow < p.out[2]; ++ow, ++o) {
        int64_t w0 = ow * p.stride[2] - p.pad[2];
        const int64_t w1 = std::min(w0 + (p.kernel[2] - 1) * dil_w + 1, in_w);
        while (w0 < 0) w0 += dil_w;
        T best = -std::numeric_limits<T>::infinity();
        int64_t best_index = h0 * in_w + w0;
        for (int64_t h = h0; h < h1; h += dil_h) {
          const int64_t row = h * in_w;
          for (int64_t w = w0; w < w1; w += dil_w) {
            const T v = in[row + w];
            const bool take = (v > best) | (v != v);
            best = selectBits(take, v, best);
            best_index = take ? row + w : best_index;
          }
        }
        out[o] = best;
        if (idx) idx[o] = best_index;
      }
    }
  });
}

template <typename T>
void maxPoolKernel(const Pool& p, const T* x, T* y, int64_t* indices) {
  if (p.in[0] == 1 && p.in[1] == 1 && p.out[0] == 1 && p.out[1] == 1 && p.kernel[0] == 1 && p.kernel[1] == 1 &&
      p.pad[0] == 0 && p.pad[1] == 0) {
    maxPoolLastDimKernel(p, x, y, indices);
    return;
  }
  if (p.in[0] == 1 && p.out[0] == 1 && p.kernel[0] == 1 && p.pad[0] == 0) {
    maxPool2dKernel(p, x, y, indices);
    return;
  }
  forEachPlane(p, [&](int64_t plane) {
    const T* in = x + plane * p.inVolume();
    T* out = y + plane * p.outVolume();
    int64_t* idx = indices ? indices + plane * p.outVolume() : nullptr;
    int64_t o = 0;
    for (int64_t od = 0; od < p.out[0]; ++od) {
      int64_t d0 = od * p.stride[0] - p.pad[0];
      int64_t d1 = std::min(d0 + (p.kernel[0] - 1) * p.dilation[0] + 1, p.in[0]);
      while (d0 < 0) d0 += p.dilation[0];
      for (int64_t oh = 0; oh < p.out[1]; ++oh) {
        int64_t h0 = oh * p.stride[1] - p.pad[1];
        int64_t h1 = std::min(h0 + (p.kernel[1] - 1) * p.dilation[1] + 1, p.in[1]);
        while (h0 < 0) h0 += p.dilation[1];
        for (int64_t ow = 0; ow < p.out[2]; ++ow, ++o) {
          int64_t w0 = ow * p.stride[2] - p.pad[2];
          int64_t w1 = std::min(w0 + (p.kernel[2] - 1) * p.dilation[2] + 1, p.in[2]);
          while (w0 < 0) w0 += p.dilation[2];
          auto [best, best_index] = windowMax<true>(p, in, {d0, h0, w0}, {d1, h1, w1});
          out[o] = best;
          if (idx) idx[o] = best_index;
        }
      }
    }
  });
}

template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <typename T>
void avgPoolKernel(const Pool& p, const T* x, T* y, bool count_include_pad, std::optional<int64_t> divisor) {
  forEachPlane(p, [&](int64_t plane) {
    const T* in = x + plane * p.inVolume();
    T* out = y + plane * p.outVolume();
    int64_t o = 0;
    for (int64_t od = 0; od < p.out[0]; ++od) {
      int64_t d0 = od * p.stride[0] - p.pad[0], d1 = std::min(d0 + p.kernel[0], p.in[0] + p.pad[0]);
      int64_t pool_d = d1 - d0;
      d0 = std::max<int64_t>(d0, 0);
      d1 = std::min(d1, p.in[0]);
      for (int64_t oh = 0; oh < p.out[1]; ++oh) {
        int64_t h0 = oh * p.stride[1] - p.pad[1], h1 = std::min(h0 + p.kernel[1], p.in[1] + p.pad[1]);
        int64_t pool_h = h1 - h0;
        h0 = std::max<int64_t>(h0, 0);
        h1 = std::min(h1, p.in[1]);
        for (int64_t ow = 0; ow < p.out[2]; ++ow, ++o) {
          int64_t w0 = ow * p.stride[2] - p.pad[2], w1 = std::min(w0 + p.kernel[2], p.in[2] + p.pad[2]);
          int64_t pool_w = w1 - w0;
          w0 = std::max<int64_t>(w0, 0);
          w1 = std::min(w1, p.in[2]);
          if (d0 >= d1 || h0 >= h1 || w0 >= w1) {
            out[o] = T(0);
            continue;
          }
          Acc<T> sum = 0;
          for (int64_t d = d0; d < d1; ++d)
            for (int64_t h = h0; h < h1; ++h) {
              const T* row = in + (d * p.in[1] + h) * p.in[2];
              for (int64_t w = w0; w < w1; ++w) sum += row[w];
            }
          int64_t div = divisor             ? *divisor
                        : count_include_pad ? pool_d * pool_h * pool_w
                                            : (d1 - d0) * (h1 - h0) * (w1 - w0);
          out[o] = static_cast<T>(sum / static_cast<Acc<T>>(div));
        }
      }
    }
  });
}

int64_t adaptiveStart(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
int64_t adaptiveEnd(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

template <typename T>
void adaptiveKernel(const Pool& p, const T* x, T* y, int64_t* indices, bool max) {
  forEachPlane(p, [&](int64_t plane) {
    const T* in = x + plane * p.inVolume();
    T* out = y + plane * p.outVolume();
    int64_t* idx = indices ? indices + plane * p.outVolume() : nullptr;
    int64_t o = 0;
    for (int64_t od = 0; od < p.out[0]; ++od) {
      int64_t d0 = adaptiveStart(od, p.in[0], p.out[0]), d1 = adaptiveEnd(od, p.in[0], p.out[0]);
      for (int64_t oh = 0; oh < p.out[1]; ++oh) {
        int64_t h0 = adaptiveStart(oh, p.in[1], p.out[1]), h1 = adaptiveEnd(oh, p.in[1], p.out[1]);
        for (int64_t ow = 0; ow < p.out[2]; ++ow, ++o) {
          int64_t w0 = adaptiveStart(ow, p.in[2], p.out[2]), w1 = adaptiveEnd(ow, p.in[2], p.out[2]);
          if (max) {
            auto [best, best_index] = windowMax<false>(p, in, {d0, h0, w0}, {d1, h1, w1});
            out[o] = best;
            if (idx) idx[o] = best_index;
          } else {
            Acc<T> sum = 0;
            for (int64_t d = d0; d < d1; ++d)
              for (int64_t h = h0; h < h1; ++h) {
                const T* row = in + (d * p.in[1] + h) * p.in[2];
                for (int64_t w = w0; w < w1; ++w) sum += row[w];
              }
            out[o] = static_cast<T>(sum / static_cast<Acc<T>>((d1 - d0) * (h1 - h0) * (w1 - w0)));
          }
        }
      }
    }
  });
}

// torch's pooling_output_shape_pad_lr checks.
int64_t outputSize(int64_t input, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  KILN_CHECK(stride != 0, "stride should not be zero");
  KILN_CHECK(pad >= 0, "pad must be non-negative, but got pad: ", pad);
  KILN_CHECK(pad <= kernel / 2, "pad should be at most half of kernel size, but got pad=", pad,
             " and kernel_size=", kernel);
  return poolingOutputSize(input, kernel, pad, stride, dilation, ceil_mode);
}

// Kernel, stride, padding (and dilation) of a pooling op, one per spatial dim.
struct Window {
  Dims kernel, stride, pad, dilation, out;
};

Dims expandParam(IntArrayRef v, int64_t spatial) {
  if (v.size() == 1) return Dims(static_cast<size_t>(spatial), v[0]);
  return Dims(v.begin(), v.end());
}

void checkFloating(const Tensor& self, const char* name) {
  KILN_CHECK(isFloatingType(self.dtype()), "\"", name, "\" not implemented for '", scalarTypeShortName(self.dtype()),
             "'");
}

// torch's pool2d_shape_check / pool3d_shape_check.
void checkPoolShape(const Tensor& self, int64_t spatial, const Window& w, bool allow_empty_output) {
  for (int64_t i = 0; i < spatial; ++i) {
    KILN_CHECK(w.kernel[i] > 0, "kernel size should be greater than zero, but got ", "kernel_size: ", joinX(w.kernel));
    KILN_CHECK(w.stride[i] > 0, "stride should be greater than zero, but got ", "stride: ", joinX(w.stride));
    KILN_CHECK(w.dilation[i] > 0, "dilation should be greater than zero, but got ", "dilation: ", joinX(w.dilation));
  }
  bool valid = true;
  for (int64_t i = 1; i < self.dim(); ++i) valid = valid && self.size(i) != 0;
  if (self.dim() == spatial + 1) valid = valid && self.size(0) != 0;
  KILN_CHECK(valid, "Expected ", spatial + 1, "D or ", spatial + 2,
             "D (batch mode) tensor with optional 0 dim batch size for input, but got:", shapeString(self.sizes()));
  bool ok = true;
  for (int64_t o : w.out) ok = ok && (allow_empty_output ? o >= 0 : o >= 1);
  if (!ok) {
    Dims in(self.sizes().end() - spatial - 1, self.sizes().end());
    Dims out{in[0]};
    out.insert(out.end(), w.out.begin(), w.out.end());
    KILN_ERROR("Given input size: (", joinX(in), "). Calculated output size: (", joinX(out),
               "). Output size is too small");
  }
}

Window poolWindow(int64_t spatial, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode, const char* name) {
  const auto n = static_cast<size_t>(spatial);
  const char* count = countWord(spatial);
  KILN_CHECK(kernel_size.size() == 1 || kernel_size.size() == n, name,
             ": kernel_size must either be a single int, or a tuple of ", count, " ints");
  KILN_CHECK(stride.empty() || stride.size() == 1 || stride.size() == n, name,
             ": stride must either be omitted, a single int, or a tuple of ", count, " ints");
  KILN_CHECK(padding.size() == 1 || padding.size() == n, name, ": padding must either be a single int, or a tuple of ",
             count, " ints");
  KILN_CHECK(dilation.size() == 1 || dilation.size() == n, name,
             ": dilation must be either a single int, or a tuple of ", count, " ints");
  Window w;
  w.kernel = expandParam(kernel_size, spatial);
  w.stride = stride.empty() ? w.kernel : expandParam(stride, spatial);
  w.pad = expandParam(padding, spatial);
  w.dilation = expandParam(dilation, spatial);
  const int64_t rank = self.dim();
  KILN_CHECK(rank == spatial + 1 || rank == spatial + 2, "non-empty ", spatial + 1, "D or ", spatial + 2,
             "D (batch mode) tensor expected for input");
  for (int64_t i = 0; i < spatial; ++i) {
    w.out.push_back(
        outputSize(self.size(rank - spatial + i), w.kernel[i], w.pad[i], w.stride[i], w.dilation[i], ceil_mode));
  }
  return w;
}

Pool toPool(const Tensor& self, int64_t spatial, const Window& w) {
  Pool p = makePool(self, spatial, w.out);
  fill3(p.kernel, w.kernel);
  fill3(p.stride, w.stride);
  fill3(p.pad, w.pad);
  fill3(p.dilation, w.dilation);
  return p;
}

// max_pool1d has its own checks in torch (and allows an empty output).
void checkMaxPool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                    IntArrayRef dilation) {
  KILN_CHECK(self.dim() == 2 || self.dim() == 3, "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 ",
             "dim batch size for input, but got:", shapeString(self.sizes()));
  KILN_CHECK(kernel_size.size() == 1,
             "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but got size ",
             kernel_size.size());
  KILN_CHECK(stride.empty() || stride.size() == 1,
             "max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 but got size ",
             stride.size());
  KILN_CHECK(padding.size() == 1,
             "max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 but got size ",
             padding.size());
  KILN_CHECK(dilation.size() == 1,
             "max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 but got size ",
             dilation.size());
  int64_t k = kernel_size[0], s = stride.empty() ? k : stride[0];
  KILN_CHECK(k > 0, "max_pool1d() kernel_size must be greater than zero, but got ", k);
  KILN_CHECK(s > 0, "max_pool1d() stride must be greater than zero, but got ", s);
  KILN_CHECK(padding[0] >= 0, "max_pool1d() padding must be non-negative, but got ", padding[0]);
  KILN_CHECK(padding[0] <= k / 2,
             "max_pool1d() padding should be at most half of kernel size, but got padding=", padding[0],
             " and kernel_size=", k);
  KILN_CHECK(dilation[0] > 0, "max_pool1d() dilation must be greater than zero, but got ", dilation[0]);
}

std::tuple<Tensor, Tensor> maxPoolImpl(int64_t spatial, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                       IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, const char* name,
                                       bool want_indices) {
  const bool pool1d = spatial == 1 && std::string_view(name) == "max_pool1d";
  if (pool1d) checkMaxPool1d(self, kernel_size, stride, padding, dilation);
  Window w = poolWindow(spatial, self, kernel_size, stride, padding, dilation, ceil_mode, name);
  checkPoolShape(self, spatial, w, pool1d);
  checkFloating(self, spatial == 3 ? "max_pool3d" : "max_pool2d");
  Tensor x = contiguous(self);
  Dims sizes = outputShape(self, spatial, w.out);
  Tensor out = empty(sizes, self.dtype());
  Tensor indices = want_indices ? empty(sizes, ScalarType::Long) : Tensor();
  if (out.numel() == 0) return {out, indices};
  Pool p = toPool(x, spatial, w);
  KILN_DISPATCH_FLOATING_TYPES(x.dtype(), name, [&] {
    maxPoolKernel<scalar_t>(p, x.data<scalar_t>(), out.data<scalar_t>(),
                            want_indices ? indices.data<int64_t>() : nullptr);
  });
  return {out, indices};
}

bool avgPoolDnnl(int64_t spatial, const Tensor& x, const Window& w, bool count_include_pad, Tensor& out) {
  if (spatial < 2 || x.dtype() != ScalarType::Float) return false;
  detail::DnnlPoolParams d;
  d.kind = count_include_pad ? detail::DnnlPool::AvgIncludePad : detail::DnnlPool::AvgExcludePad;
  // oneDNN wants (N, C, spatial...): an unbatched input is one batch.
  const int64_t batch_dims = x.dim() - spatial;
  d.src = batch_dims == 2 ? Dims{x.size(0), x.size(1)} : Dims{1, x.size(0)};
  d.dst = d.src;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = x.size(batch_dims + i);
    d.src.push_back(in);
    d.dst.push_back(w.out[i]);
    // The ceil-mode windows that hang past the padding: oneDNN counts that
    // overhang as padding, torch does not.
    int64_t pad_r = (w.out[i] - 1) * w.stride[i] + w.kernel[i] - in - w.pad[i];
    if (count_include_pad && pad_r > w.pad[i]) return false;
    d.pad_r.push_back(pad_r);
  }
  d.kernel = w.kernel;
  d.stride = w.stride;
  d.dilation = Dims(static_cast<size_t>(spatial), 1);
  d.pad_l = w.pad;
  return detail::dnnlPooling(d, x.data<float>(), out.data<float>());
}

Dims adaptiveOutput(int64_t spatial, const Tensor& self, IntArrayRef given, const char* name, bool is_max) {
  const auto n = static_cast<size_t>(spatial);
  // One int stands for every dim (an int[2] argument given as a plain int).
  Dims broadcast = given.size() == 1 ? Dims(n, given[0]) : Dims(given.begin(), given.end());
  IntArrayRef output_size(broadcast);
  if (!is_max) {
    KILN_CHECK(output_size.size() == n, name, ": output_size must be ", spatial);
  } else {
    KILN_CHECK(output_size.size() == n, name, "(): internal error: output_size.size() must be ", spatial);
  }
  bool nonneg = true;
  for (int64_t v : output_size) nonneg = nonneg && v >= 0;
  if (!nonneg) {
    std::ostringstream s;
    for (size_t i = 0; i < output_size.size(); ++i) s << (i ? ", " : "") << output_size[i];
    KILN_ERROR(name, ": elements of output_size must be greater than or equal to 0 but received {", s.str(), "}");
  }
  const int64_t rank = self.dim();
  if (spatial == 1) {
    KILN_CHECK(rank == 2 || rank == 3, "Expected 2 to 3 dimensions, but got ", rank,
               "-dimensional tensor for argument #1 'self' (while checking arguments for ", name, ")");
  } else {
    KILN_CHECK(rank == spatial + 1 || rank == spatial + 2, name, "(): Expected ", spatial + 1, "D or ", spatial + 2,
               "D tensor, but got ", is_max ? ": " : "", shapeString(self.sizes()));
  }
  for (int64_t i = 1; i < rank; ++i) {
    KILN_CHECK(self.size(i) != 0, name,
               "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
               shapeString(self.sizes()), " with dimension ", i, " being empty");
  }
  return Dims(output_size.begin(), output_size.end());
}

}  // namespace

int64_t poolingOutputSize(int64_t input, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation,
                          bool ceil_mode) {
  int64_t out = floorDiv(input + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= input + pad) --out;
  return out;
}

Tensor maxPool(int64_t spatial, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
               IntArrayRef dilation, bool ceil_mode, const char* name) {
  return std::get<0>(maxPoolImpl(spatial, self, kernel_size, stride, padding, dilation, ceil_mode, name, false));
}

std::tuple<Tensor, Tensor> maxPoolWithIndices(int64_t spatial, const Tensor& self, IntArrayRef kernel_size,
                                              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                              bool ceil_mode, const char* name) {
  return maxPoolImpl(spatial, self, kernel_size, stride, padding, dilation, ceil_mode, name, true);
}

Tensor avgPool(int64_t spatial, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
               bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override, const char* name) {
  if (spatial == 1) {
    KILN_CHECK(self.dim() == 2 || self.dim() == 3, "Expected 2 to 3 dimensions, but got ", self.dim(),
               "-dimensional tensor for argument #1 'self' (while checking arguments for avg_pool1d)");
    KILN_CHECK(kernel_size.size() == 1, "avg_pool1d() argument 'kernel_size' should contain one int (got ",
               kernel_size.size(), ")");
    KILN_CHECK(stride.empty() || stride.size() == 1, "avg_pool1d() argument 'stride' should contain one int (got ",
               stride.size(), ")");
    KILN_CHECK(padding.size() == 1, "avg_pool1d() argument 'padding' should contain one int (got ", padding.size(),
               ")");
  }
  Window w = poolWindow(spatial, self, kernel_size, stride, padding, {1}, ceil_mode, name);
  KILN_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  checkPoolShape(self, spatial, w, false);
  Tensor x = contiguous(self);
  Tensor out = empty(outputShape(self, spatial, w.out), self.dtype());
  if (out.numel() == 0) return out;
  if (!divisor_override && avgPoolDnnl(spatial, x, w, count_include_pad, out)) return out;
  Pool p = toPool(x, spatial, w);
  KILN_DISPATCH_ALL_TYPES(x.dtype(), name, [&] {
    avgPoolKernel<scalar_t>(p, x.data<scalar_t>(), out.data<scalar_t>(), count_include_pad, divisor_override);
  });
  return out;
}

Tensor adaptiveAvgPool(int64_t spatial, const Tensor& self, IntArrayRef output_size, const char* name) {
  Dims out_sp = adaptiveOutput(spatial, self, output_size, name, false);
  KILN_CHECK(isFloatingType(self.dtype()), "\"", spatial == 3 ? "adaptive_avg_pool3d_cpu" : "adaptive_avg_pool2d",
             "\" not implemented for '", scalarTypeShortName(self.dtype()), "'");
  Tensor x = contiguous(self);
  Tensor out = empty(outputShape(self, spatial, out_sp), self.dtype());
  if (out.numel() == 0) return out;
  Pool p = makePool(x, spatial, out_sp);
  KILN_DISPATCH_FLOATING_TYPES(
      x.dtype(), name, [&] { adaptiveKernel<scalar_t>(p, x.data<scalar_t>(), out.data<scalar_t>(), nullptr, false); });
  return out;
}

std::tuple<Tensor, Tensor> adaptiveMaxPool(int64_t spatial, const Tensor& self, IntArrayRef output_size,
                                           const char* name) {
  Dims out_sp = adaptiveOutput(spatial, self, output_size, name, true);
  KILN_CHECK(isFloatingType(self.dtype()), "\"", spatial == 3 ? "adaptive_max_pool3d_cpu" : "adaptive_max_pool2d",
             "\" not implemented for '", scalarTypeShortName(self.dtype()), "'");
  Tensor x = contiguous(self);
  Dims sizes = outputShape(self, spatial, out_sp);
  Tensor out = empty(sizes, self.dtype());
  Tensor indices = empty(sizes, ScalarType::Long);
  if (out.numel() == 0) return {out, indices};
  Pool p = makePool(x, spatial, out_sp);
  KILN_DISPATCH_FLOATING_TYPES(x.dtype(), name, [&] {
    adaptiveKernel<scalar_t>(p, x.data<scalar_t>(), out.data<scalar_t>(), indices.data<int64_t>(), true);
  });
  return {out, indices};
}

}  // namespace kiln
