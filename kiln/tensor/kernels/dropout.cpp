// Dropout, feature dropout and alpha dropout, as torch 1.13's _dropout_impl:
// the noise is a Bernoulli(1 - p) draw per element (per channel for the
// feature forms) from kiln's generator, scaled so the expectation is kept.
#include "kiln/tensor/dropout.h"

#include <cmath>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/random.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

bool isFeature(DropoutKind kind) { return kind == DropoutKind::Feature || kind == DropoutKind::FeatureAlpha; }
bool isAlpha(DropoutKind kind) { return kind == DropoutKind::Alpha || kind == DropoutKind::FeatureAlpha; }

// 1 where an element is kept (probability keep), 0 elsewhere, in `dtype`.
Tensor bernoulliNoise(IntArrayRef sizes, double keep, ScalarType dtype) {
  Tensor u = rand(sizes, ScalarType::Float);
  Tensor noise = empty(sizes, dtype);
  const float* ud = u.data<float>();
  const int64_t n = u.numel();
  KILN_DISPATCH_FLOATING_TYPES(dtype, "bernoulli_", [&] {
    scalar_t* d = noise.data<scalar_t>();
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<double>(ud[i]) < keep ? scalar_t(1) : scalar_t(0);
  });
  return noise;
}

void checkP(double p) { KILN_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p); }

// The dropped-out value of `input` (p strictly between 0 and 1, training).
Tensor dropNoise(const Tensor& input, double p, DropoutKind kind, Tensor& b) {
  KILN_CHECK(input.dtype() != ScalarType::Half, "\"bernoulli_scalar_cpu_\" not implemented for 'Half'");
  KILN_CHECK(isFloatingType(input.dtype()), "result type Float can't be cast to the desired output type ",
             scalarTypeShortName(input.dtype()));
  DimVector noise_shape;
  if (isFeature(kind)) {
    KILN_CHECK(input.dim() >= 2, "Feature dropout requires at least 2 dimensions in the input");
    noise_shape = {input.size(0), input.size(1)};
    for (int64_t i = 2; i < input.dim(); ++i) noise_shape.push_back(1);
  } else {
    noise_shape.assign(input.sizes().begin(), input.sizes().end());
  }
  const ScalarType dtype = input.dtype() == ScalarType::Double ? ScalarType::Double : ScalarType::Float;
  Tensor noise = bernoulliNoise(noise_shape, 1 - p, dtype);
  if (isAlpha(kind)) {
    constexpr double alpha = 1.7580993408473766;
    const double a = 1. / std::sqrt((alpha * alpha * p + 1) * (1 - p));
    // b = (noise - 1) * alpha * a + alpha * a * p; noise = noise * a.
    b = add(mul(add(noise, scalarToTensor(-1.0, dtype)), scalarToTensor(alpha * a, dtype)),
            scalarToTensor(alpha * a * p, dtype));
    noise = mul(noise, scalarToTensor(a, dtype));
  } else {
    noise = mul(noise, scalarToTensor(1. / (1 - p), dtype));
  }
  return to(noise, input.dtype());
}

}  // namespace

std::tuple<Tensor, Tensor> dropoutNoise(const Tensor& input, double p, DropoutKind kind) {
  Tensor shift;
  Tensor scale = dropNoise(input, p, kind, shift);
  if (shift.defined()) shift = to(shift, input.dtype());
  return {scale, shift};
}

Tensor dropout(const Tensor& input, double p, bool train, DropoutKind kind) {
  checkP(p);
  if (p == 0 || !train || input.numel() == 0) return input;
  if (p == 1) return mul(input, zeros({}, input.dtype()));
  Tensor b;
  Tensor noise = dropNoise(input, p, kind, b);
  Tensor out = mul(input, noise);
  if (b.defined()) out = add(out, to(b, input.dtype()));
  return out;
}

Tensor& dropout_(Tensor& self, double p, bool train, DropoutKind kind) {
  checkP(p);
  if (p == 0 || !train || self.numel() == 0) return self;
  if (p == 1) return mul_(self, zeros({}, self.dtype()));
  Tensor b;
  Tensor noise = dropNoise(self, p, kind, b);
  mul_(self, noise);
  if (b.defined()) add_(self, to(b, self.dtype()));
  return self;
}

std::tuple<Tensor, Tensor> nativeDropout(const Tensor& input, double p, std::optional<bool> train) {
  if (input.numel() == 0) return {input, empty(input.sizes(), input.dtype())};
  if (train.value_or(true)) {
    const double keep = 1. - p;
    KILN_CHECK(keep >= 0 && keep <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", keep);
    KILN_CHECK(input.dtype() != ScalarType::Half, "\"bernoulli_scalar_cpu_\" not implemented for 'Half'");
    KILN_CHECK(isFloatingType(input.dtype()), "result type Float can't be cast to the desired output type ",
               scalarTypeShortName(input.dtype()));
    Tensor u = rand(input.sizes(), ScalarType::Float);
    Tensor mask = empty(input.sizes(), ScalarType::Bool);
    const float* ud = u.data<float>();
    bool* md = mask.data<bool>();
    for (int64_t i = 0; i < u.numel(); ++i) md[i] = static_cast<double>(ud[i]) < keep;
    const double scale = keep == 0 ? 0. : 1. / keep;
    Tensor out = mul(mul(input, mask), scalarToTensor(scale, input.dtype()));
    return {out, mask};
  }
  return {clone(input), ones(input.sizes(), ScalarType::Bool)};
}

}  // namespace kiln
