#pragma once
// Resampling and layout kernels: upsampling (nearest, linear, cubic, with
// and without antialiasing), padding, pixel and channel shuffles, and
// im2col/col2im, with PyTorch 1.13's index formulas and errors.
#include <optional>
#include <vector>

#include "kiln/tensor/tensor.h"

namespace kiln {

enum class ResampleMode { Nearest, NearestExact, Linear, Cubic };

// Resizes the trailing spatial dims of `self` (N, C, spatial...) to
// `output_size`; `scales` (one per spatial dim) are the user's scale
// factors, which PyTorch's index formulas use instead of in/out when given.
// `antialias` widens the kernel when downsampling (torchvision's resize).
Tensor upsample(const char* name, const Tensor& self, IntArrayRef output_size, ResampleMode mode, bool align_corners,
                const std::vector<std::optional<double>>& scales, bool antialias = false);
// The output size of the .vec overloads: exactly one of output_size and
// scale_factors, with `spatial` entries; also returns the scales to use.
DimVector upsampleOutputSize(const Tensor& input, const std::optional<IntArrayRef>& output_size,
                             const std::optional<std::vector<double>>& scale_factors, int64_t spatial,
                             std::vector<std::optional<double>>* scales);

Tensor constantPadNd(const Tensor& self, IntArrayRef pad, const Scalar& value);
// reflect/replicate padding of the last pad.size()/2 dims; `dims` is the
// op's number of padded dims (1, 2 or 3), checked against pad and rank.
Tensor reflectionPad(const Tensor& self, IntArrayRef pad, int64_t dims);
Tensor replicationPad(const Tensor& self, IntArrayRef pad, int64_t dims);
Tensor circularPad(const Tensor& self, IntArrayRef pad);
// aten::pad: the mode by name.
Tensor padMode(const Tensor& self, IntArrayRef pad, const std::string& mode, std::optional<double> value);

Tensor pixelShuffle(const Tensor& self, int64_t upscale_factor);
Tensor pixelUnshuffle(const Tensor& self, int64_t downscale_factor);
Tensor channelShuffle(const Tensor& self, int64_t groups);

Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride);
Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);

}  // namespace kiln
