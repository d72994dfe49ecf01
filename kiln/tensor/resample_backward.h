#pragma once
// The gradient of upsampling (torch 1.13's upsample_*_backward): every mode
// kiln has (nearest, nearest-exact, linear, cubic, antialiased) interpolates
// each spatial dim on its own, so the upsampling is a product of one matrix
// per dim (output size x input size). Each matrix is read off the forward
// kernel run on an identity, and the gradient is grad_output contracted with
// their transposes: exactly the adjoint of what the forward computes.
#include <functional>
#include <optional>
#include <vector>

#include "kiln/tensor/resample.h"

namespace kiln {

Tensor upsampleBackward(const char* name, const Tensor& grad_output, IntArrayRef input_size, ResampleMode mode,
                        bool align_corners, const std::vector<std::optional<double>>& scales, bool antialias);

// The gradient of reflection, replication or circular padding (each padded
// dim maps output positions to input positions on its own): `pad_fn` pads
// as the forward did, `pad` as the forward's (last dim first).
Tensor padBackward(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef pad,
                   const std::function<Tensor(const Tensor&, IntArrayRef)>& pad_fn);

}  // namespace kiln
