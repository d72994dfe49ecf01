#include "kiln/tensor/resample_backward.h"

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/linalg.h"
#include "kiln/tensor/shape.h"

namespace kiln {

Tensor upsampleBackward(const char* name, const Tensor& grad_output, IntArrayRef input_size, ResampleMode mode,
                        bool align_corners, const std::vector<std::optional<double>>& scales, bool antialias) {
  const auto spatial = static_cast<int64_t>(scales.size());
  KILN_CHECK(static_cast<int64_t>(input_size.size()) == spatial + 2 && grad_output.dim() == spatial + 2, name,
             "_backward: expected input_size and grad_output of ", spatial + 2, " dims");
  Tensor grad = grad_output;
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t in = input_size[static_cast<size_t>(d + 2)], out = grad_output.size(d + 2);
    // The identity as `in` one-hot rows of (1, 1.., in, 1..), upsampled along dim d only.
    DimVector probe_sizes{in, 1}, out_sizes;
    std::vector<std::optional<double>> probe_scales(scales.size());
    for (int64_t k = 0; k < spatial; ++k) {
      probe_sizes.push_back(k == d ? in : 1);
      out_sizes.push_back(k == d ? out : 1);
    }
    probe_scales[static_cast<size_t>(d)] = scales[static_cast<size_t>(d)];
    Tensor probe = reshape(eye(in, in, grad_output.dtype()), IntArrayRef(probe_sizes));
    Tensor columns = upsample(name, probe, IntArrayRef(out_sizes), mode, align_corners, probe_scales, antialias);
    Tensor matrix = reshape(columns, {in, out});  // [i, o]: how much input i gives output o
    // (..., out) x (out, in) along dim d.
    const int64_t dim = d + 2;
    Tensor moved = movedim(grad, {dim}, {-1});
    grad = movedim(matmul(moved, transpose(matrix, 0, 1)), {-1}, {dim});
  }
  return contiguous(grad);
}

Tensor padBackward(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef pad,
                   const std::function<Tensor(const Tensor&, IntArrayRef)>& pad_fn) {
  const auto padded = static_cast<int64_t>(pad.size() / 2);
  const auto rank = static_cast<int64_t>(input_size.size());
  KILN_CHECK(pad.size() % 2 == 0 && padded <= rank && grad_output.dim() == rank,
             "padding backward: the gradient and the input sizes must have the same number of dims");
  Tensor grad = grad_output;
  for (int64_t j = 0; j < padded; ++j) {
    const int64_t dim = rank - 1 - j;
    const int64_t in = input_size[static_cast<size_t>(dim)];
    // One-hot rows (in, 1, 1.., in, 1..) with `padded` spatial dims, padded along this dim only.
    DimVector probe_sizes{in, 1};
    for (int64_t k = 0; k < padded; ++k) probe_sizes.push_back(k == padded - 1 - j ? in : 1);
    DimVector probe_pad(pad.size(), 0);
    probe_pad[static_cast<size_t>(2 * j)] = pad[static_cast<size_t>(2 * j)];
    probe_pad[static_cast<size_t>(2 * j + 1)] = pad[static_cast<size_t>(2 * j + 1)];
    Tensor probe = reshape(eye(in, in, grad_output.dtype()), IntArrayRef(probe_sizes));
    Tensor columns = pad_fn(probe, IntArrayRef(probe_pad));
    const int64_t out = columns.size(2 + padded - 1 - j);
    Tensor matrix = reshape(columns, {in, out});
    Tensor moved = movedim(grad, {dim}, {-1});
    grad = movedim(matmul(moved, transpose(matrix, 0, 1)), {-1}, {dim});
  }
  return contiguous(grad);
}

}  // namespace kiln
