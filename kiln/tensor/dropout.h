#pragma once
// Dropout and its variants, with masks drawn from kiln's random generator
// (random.h). In evaluation (train=false) each returns its input unchanged.
#include <optional>
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

enum class DropoutKind { Plain, Feature, Alpha, FeatureAlpha };

// The functional forms: the input itself where nothing is dropped.
Tensor dropout(const Tensor& input, double p, bool train, DropoutKind kind);
// The in-place forms.
Tensor& dropout_(Tensor& self, double p, bool train, DropoutKind kind);
// What training-mode dropout of `input` (0 < p < 1) draws: the factor each
// element is multiplied by, and for the alpha kinds the shift added after
// (undefined otherwise): dropout(input) = input * scale + shift. Autograd's
// decomposition of the dropout ops multiplies by it as a recorded operator.
std::tuple<Tensor, Tensor> dropoutNoise(const Tensor& input, double p, DropoutKind kind);
// (output, bool mask of the kept elements); train unset means training.
std::tuple<Tensor, Tensor> nativeDropout(const Tensor& input, double p, std::optional<bool> train);

}  // namespace kiln
