#pragma once
// Fractional max pooling (Graham 2014) with PyTorch 1.13's CPU kernel: each
// (batch, channel) plane draws one sample in [0, 1) per spatial dim
// (`random_samples`, (N, C, rank)), which places output_size windows of
// kernel_size at pseudo-random, increasing starts covering the input.
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

// self (N, C, *spatial) or (C, *spatial) with rank = kernel_size.size() (2
// or 3). Returns (maxima, indices into each input plane), NaN winning as in
// max_pool.
std::tuple<Tensor, Tensor> fractionalMaxPool(const Tensor& self, IntArrayRef kernel_size, IntArrayRef output_size,
                                             const Tensor& random_samples);

// The gradient: grad_output summed into each plane at `indices`.
Tensor fractionalMaxPoolBackward(const Tensor& grad_output, const Tensor& self, IntArrayRef output_size,
                                 const Tensor& indices);

}  // namespace kiln
