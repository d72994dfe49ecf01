// Pooling backward (pooling_backward.h): per plane (the N*C leading
// elements), each output's gradient added to the inputs of its window. The
// windows are the forward kernels' (pooling.cpp). Planes run in parallel;
// within a plane the adds are serial, so overlapping windows are safe.
#include "kiln/tensor/pooling_backward.h"

#include <algorithm>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/parallel.h"

namespace kiln {
namespace {

using Dims = std::vector<int64_t>;

struct Planes {
  int64_t planes = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t inVolume() const { return in[0] * in[1] * in[2]; }
  int64_t outVolume() const { return out[0] * out[1] * out[2]; }
};

Planes makePlanes(int64_t spatial, const Tensor& grad, const Tensor& self) {
  KILN_CHECK(spatial >= 1 && spatial <= 3 && self.dim() > spatial && grad.dim() == self.dim(),
             "pooling backward: grad_output and self must have the same number of dims, more than ", spatial);
  Planes p;
  const int64_t lead = self.dim() - spatial;
  for (int64_t i = 0; i < lead; ++i) {
    KILN_CHECK(grad.size(i) == self.size(i),
               "pooling backward: grad_output's batch and channel sizes differ from self's");
    p.planes *= self.size(i);
  }
  for (int64_t i = 0; i < spatial; ++i) {
    p.in[3 - spatial + i] = self.size(lead + i);
    p.out[3 - spatial + i] = grad.size(lead + i);
  }
  return p;
}

Dims expand3(IntArrayRef v, int64_t spatial, int64_t fill) {
  Dims out(3, fill);
  for (int64_t i = 0; i < spatial; ++i) out[3 - spatial + i] = v.size() == 1 ? v[0] : v[i];
  return out;
}

template <typename F>
void forEachPlane(const Planes& p, const F& f) {
  int64_t work = std::max<int64_t>(1, (p.outVolume() + p.inVolume()) * 4);
  parallelFor(0, p.planes, std::max<int64_t>(1, kGrainSize / work), [&](int64_t lo, int64_t hi) {
    for (int64_t plane = lo; plane < hi; ++plane) f(plane);
  });
}

int64_t adaptiveStart(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
int64_t adaptiveEnd(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

}  // namespace

Tensor maxPoolBackward(int64_t spatial, const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  Planes p = makePlanes(spatial, grad_output, self);
  Tensor g = contiguous(to(grad_output, self.dtype()));
  Tensor idx = contiguous(indices);
  KILN_CHECK(idx.dtype() == ScalarType::Long && idx.sizes() == g.sizes(),
             "max pooling backward: indices must be int64 of grad_output's size");
  Tensor out = zeros(self.sizes(), self.dtype());
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "max_pool_backward", [&] {
    const scalar_t* gd = g.data<scalar_t>();
    const int64_t* id = idx.data<int64_t>();
    scalar_t* od = out.data<scalar_t>();
    const int64_t in_vol = p.inVolume(), out_vol = p.outVolume();
    forEachPlane(p, [&](int64_t plane) {
      scalar_t* dst = od + plane * in_vol;
      for (int64_t o = 0; o < out_vol; ++o) {
        int64_t i = id[plane * out_vol + o];
        if (i >= 0 && i < in_vol) dst[i] += gd[plane * out_vol + o];
      }
    });
  });
  return out;
}

Tensor avgPoolBackward(int64_t spatial, const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                       IntArrayRef stride, IntArrayRef padding, bool count_include_pad,
                       std::optional<int64_t> divisor_override) {
  Planes p = makePlanes(spatial, grad_output, self);
  Dims k = expand3(kernel_size, spatial, 1);
  Dims s = stride.empty() ? k : expand3(stride, spatial, 1);
  Dims pad = expand3(padding, spatial, 0);
  KILN_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  Tensor g = contiguous(to(grad_output, self.dtype()));
  Tensor out = zeros(self.sizes(), self.dtype());
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "avg_pool_backward", [&] {
    const scalar_t* gd = g.data<scalar_t>();
    scalar_t* od = out.data<scalar_t>();
    forEachPlane(p, [&](int64_t plane) {
      const scalar_t* gp = gd + plane * p.outVolume();
      scalar_t* in = od + plane * p.inVolume();
      int64_t o = 0;
      for (int64_t od_ = 0; od_ < p.out[0]; ++od_) {
        int64_t d0 = od_ * s[0] - pad[0], d1 = std::min(d0 + k[0], p.in[0] + pad[0]);
        int64_t pool_d = d1 - d0;
        d0 = std::max<int64_t>(d0, 0);
        d1 = std::min(d1, p.in[0]);
        for (int64_t oh = 0; oh < p.out[1]; ++oh) {
          int64_t h0 = oh * s[1] - pad[1], h1 = std::min(h0 + k[1], p.in[1] + pad[1]);
          int64_t pool_h = h1 - h0;
          h0 = std::max<int64_t>(h0, 0);
          h1 = std::min(h1, p.in[1]);
          for (int64_t ow = 0; ow < p.out[2]; ++ow, ++o) {
            int64_t w0 = ow * s[2] - pad[2], w1 = std::min(w0 + k[2], p.in[2] + pad[2]);
            int64_t pool_w = w1 - w0;
            w0 = std::max<int64_t>(w0, 0);
            w1 = std::min(w1, p.in[2]);
            if (d0 >= d1 || h0 >= h1 || w0 >= w1) continue;
            int64_t div = divisor_override    ? *divisor_override
                          : count_include_pad ? pool_d * pool_h * pool_w
                                              : (d1 - d0) * (h1 - h0) * (w1 - w0);
            scalar_t v = gp[o] / static_cast<scalar_t>(div);
            for (int64_t d = d0; d < d1; ++d)
              for (int64_t h = h0; h < h1; ++h) {
                scalar_t* row = in + (d * p.in[1] + h) * p.in[2];
                for (int64_t w = w0; w < w1; ++w) row[w] += v;
              }
          }
        }
      }
    });
  });
  return out;
}

Tensor adaptiveAvgPoolBackward(int64_t spatial, const Tensor& grad_output, const Tensor& self) {
  Planes p = makePlanes(spatial, grad_output, self);
  Tensor g = contiguous(to(grad_output, self.dtype()));
  Tensor out = zeros(self.sizes(), self.dtype());
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "adaptive_avg_pool_backward", [&] {
    const scalar_t* gd = g.data<scalar_t>();
    scalar_t* od = out.data<scalar_t>();
    forEachPlane(p, [&](int64_t plane) {
      const scalar_t* gp = gd + plane * p.outVolume();
      scalar_t* in = od + plane * p.inVolume();
      int64_t o = 0;
      for (int64_t od_ = 0; od_ < p.out[0]; ++od_) {
        int64_t d0 = adaptiveStart(od_, p.in[0], p.out[0]), d1 = adaptiveEnd(od_, p.in[0], p.out[0]);
        for (int64_t oh = 0; oh < p.out[1]; ++oh) {
          int64_t h0 = adaptiveStart(oh, p.in[1], p.out[1]), h1 = adaptiveEnd(oh, p.in[1], p.out[1]);
          for (int64_t ow = 0; ow < p.out[2]; ++ow, ++o) {
            int64_t w0 = adaptiveStart(ow, p.in[2], p.out[2]), w1 = adaptiveEnd(ow, p.in[2], p.out[2]);
            scalar_t v = gp[o] / static_cast<scalar_t>((d1 - d0) * (h1 - h0) * (w1 - w0));
            for (int64_t d = d0; d < d1; ++d)
              for (int64_t h = h0; h < h1; ++h) {
                scalar_t* row = in + (d * p.in[1] + h) * p.in[2];
                for (int64_t w = w0; w < w1; ++w) row[w] += v;
              }
          }
        }
      }
    });
  });
  return out;
}

}  // namespace kiln
