// Fractional max pooling (fractional_pool.h). The window starts along a dim
// of input size n, output size m and pool size k are, for the plane's
// sample u, floor((i + u) * a) - floor(u * a) with a = (n - k) / (m - 1),
// computed in the input's dtype as torch does, and n - k for the last one.
// Planes are independent and run in parallel.
#include "kiln/tensor/fractional_pool.h"

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

template <typename T>
std::vector<int64_t> windowStarts(T sample, int64_t input_size, int64_t output_size, int64_t pool_size) {
  std::vector<int64_t> starts(static_cast<size_t>(output_size));
  if (output_size > 1) {
    const T alpha = static_cast<T>(input_size - pool_size) / static_cast<T>(output_size - 1);
    for (int64_t i = 0; i + 1 < output_size; ++i) {
      starts[static_cast<size_t>(i)] =
          static_cast<int>((static_cast<T>(i) + sample) * alpha) - static_cast<int>(sample * alpha);
    }
  }
  if (output_size > 0) starts.back() = input_size - pool_size;
  return starts;
}

// The op's name in torch's messages (3d's carry an "_out").
std::string opName(size_t rank) { return rank == 2 ? "fractional_max_pool2d()" : "fractional_max_pool3d_out()"; }

// Batch and plane counts, checked as torch checks them.
std::pair<int64_t, int64_t> checkShapes(const Tensor& self, IntArrayRef kernel_size, IntArrayRef output_size) {
  const size_t rank = kernel_size.size();
  const std::string name = opName(rank);
  const char* ints = rank == 2 ? "tuple of Ints" : "tuple of three Ints";
  KILN_CHECK(kernel_size.size() == rank && (rank == 2 || rank == 3), "fractional_max_pool", rank,
             "d: kernel_size must either be a single Int or ", ints);
  KILN_CHECK(output_size.size() == rank, "fractional_max_pool", rank, "d: output_size must either be a single Int or ",
             ints);
  const int64_t ndims = self.dim(), spatial = static_cast<int64_t>(rank);
  KILN_CHECK(ndims == spatial + 1 || ndims == spatial + 2, name, ": Expected ", spatial + 1, "D or ", spatial + 2,
             "D tensor, but got: ", shapeString(self.sizes()));
  for (int64_t i = 1; i < ndims; ++i) {
    KILN_CHECK(self.size(i) > 0, name, ": Expected input to have non-zero size for non-batch dimensions, but got",
               shapeString(self.sizes()), " with dimension ", i, " being empty.");
  }
  static constexpr std::array<const char*, 3> kDimNames{"time", "height", "width"};
  for (size_t d = 0; d < rank; ++d) {
    const int64_t input = self.size(ndims - spatial + static_cast<int64_t>(d));
    // torch's 3d check is strict where its 2d check is not.
    const bool fits =
        rank == 2 ? output_size[d] + kernel_size[d] - 1 <= input : output_size[d] + kernel_size[d] - 1 < input;
    const char* dim_name = kDimNames[d + 3 - rank];
    KILN_CHECK(fits, name, ": pool ", dim_name, " ", kernel_size[d], " too large relative to input ", dim_name, " ",
               input);
  }
  return {ndims == spatial + 2 ? self.size(0) : 1, self.size(ndims - spatial - 1)};
}

}  // namespace

std::tuple<Tensor, Tensor> fractionalMaxPool(const Tensor& self, IntArrayRef kernel_size, IntArrayRef output_size,
                                             const Tensor& random_samples) {
  const auto [batch, planes] = checkShapes(self, kernel_size, output_size);
  const size_t rank = kernel_size.size();
  const int64_t spatial = static_cast<int64_t>(rank);
  KILN_CHECK(self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double, "\"fractional_max_pool", rank,
             "d_out_frame\" not implemented for '", scalarTypeShortName(self.dtype()), "'");
  KILN_CHECK(random_samples.dtype() == self.dtype(), "expected scalar type ", scalarTypeShortName(self.dtype()),
             " but found ", scalarTypeShortName(random_samples.dtype()));
  KILN_CHECK(random_samples.dim() == 3 && random_samples.size(0) >= batch && random_samples.size(1) == planes &&
                 random_samples.size(2) == spatial,
             opName(rank), ": expected random_samples of size [", batch, ", ", planes, ", ", spatial, "], got ",
             shapeString(random_samples.sizes()));
  // Input and output plane sizes, (T,) H, W.
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, pool{1, 1, 1};
  for (size_t d = 0; d < rank; ++d) {
    in[d + 3 - rank] = self.size(self.dim() - spatial + static_cast<int64_t>(d));
    out[d + 3 - rank] = output_size[d];
    pool[d + 3 - rank] = kernel_size[d];
  }
  DimVector out_sizes;
  for (int64_t d = 0; d < self.dim() - spatial; ++d) out_sizes.push_back(self.size(d));
  for (int64_t s : output_size) out_sizes.push_back(s);
  Tensor output = empty(out_sizes, self.dtype());
  Tensor indices = empty(out_sizes, ScalarType::Long);
  const Tensor input = contiguous(self);
  const Tensor samples = contiguous(random_samples);
  const int64_t in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2];
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "fractional_max_pool", [&] {
    using T = scalar_t;
    constexpr T kNegInf = -std::numeric_limits<T>::infinity();
    const T* x = input.data<T>();
    const T* u = samples.data<T>();
    T* y = output.data<T>();
    int64_t* idx = indices.data<int64_t>();
    parallelFor(0, batch * planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        // torch's sample order: W then H in 2d, T, H, W in 3d.
        const T* sample = u + p * spatial;
        const T sample_t = rank == 3 ? sample[0] : T(0);
        const T sample_h = sample[1];
        const T sample_w = rank == 3 ? sample[2] : sample[0];
        const std::vector<int64_t> st = windowStarts(sample_t, in[0], out[0], pool[0]);
        const std::vector<int64_t> sh = windowStarts(sample_h, in[1], out[1], pool[1]);
        const std::vector<int64_t> sw = windowStarts(sample_w, in[2], out[2], pool[2]);
        const T* plane = x + p * in_plane;
        for (int64_t t = 0; t < out[0]; ++t) {
          for (int64_t h = 0; h < out[1]; ++h) {
            for (int64_t w = 0; w < out[2]; ++w) {
              const int64_t t0 = st[static_cast<size_t>(t)], h0 = sh[static_cast<size_t>(h)],
                            w0 = sw[static_cast<size_t>(w)];
              T best = kNegInf;
              int64_t best_index = (t0 * in[1] + h0) * in[2] + w0;
              for (int64_t t2 = t0; t2 < t0 + pool[0]; ++t2) {
                for (int64_t h2 = h0; h2 < h0 + pool[1]; ++h2) {
                  for (int64_t w2 = w0; w2 < w0 + pool[2]; ++w2) {
                    const int64_t k = (t2 * in[1] + h2) * in[2] + w2;
                    if (plane[k] > best || std::isnan(plane[k])) {
                      best = plane[k];
                      best_index = k;
                    }
                  }
                }
              }
              const int64_t o = p * out_plane + (t * out[1] + h) * out[2] + w;
              y[o] = best;
              idx[o] = best_index;
            }
          }
        }
      }
    });
  });
  return {output, indices};
}

Tensor fractionalMaxPoolBackward(const Tensor& grad_output, const Tensor& self, IntArrayRef output_size,
                                 const Tensor& indices) {
  const int64_t spatial = static_cast<int64_t>(output_size.size());
  KILN_CHECK(indices.sizes() == grad_output.sizes() && self.dim() == grad_output.dim() && self.dim() > spatial,
             "fractional_max_pool", spatial, "d_backward: grad_output ", shapeString(grad_output.sizes()),
             " and indices ", shapeString(indices.sizes()), " do not match the input ", shapeString(self.sizes()));
  for (int64_t d = 0; d < spatial; ++d) {
    KILN_CHECK(grad_output.size(grad_output.dim() - spatial + d) == output_size[static_cast<size_t>(d)],
               "fractional_max_pool", spatial, "d_backward: gradOutput has the wrong size ",
               shapeString(grad_output.sizes()));
  }
  int64_t in_plane = 1, out_plane = 1;
  for (int64_t d = self.dim() - spatial; d < self.dim(); ++d) {
    in_plane *= self.size(d);
    out_plane *= grad_output.size(d);
  }
  const int64_t planes = in_plane == 0 ? 0 : self.numel() / in_plane;
  Tensor grad_input = zeros(self.sizes(), self.dtype());
  const Tensor g = contiguous(to(grad_output, self.dtype()));
  const Tensor index = contiguous(indices);
  const int64_t* ip = index.data<int64_t>();
  for (int64_t i = 0; i < index.numel(); ++i) {
    KILN_CHECK_INDEX(ip[i] >= 0 && ip[i] < in_plane, "fractional_max_pool", spatial, "d_backward: index ", ip[i],
                     " is out of bounds for an input plane of ", in_plane, " elements");
  }
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "fractional_max_pool_backward", [&] {
    const scalar_t* gp = g.data<scalar_t>();
    scalar_t* out = grad_input.data<scalar_t>();
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t i = 0; i < out_plane; ++i) out[p * in_plane + ip[p * out_plane + i]] += gp[p * out_plane + i];
    }
  });
  return grad_input;
}

}  // namespace kiln
