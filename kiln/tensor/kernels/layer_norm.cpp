// Layer normalization: each row of the normalized dims is one task. A row is
// small enough to stay in L1, so its three sweeps (sum, centred sum of
// squares, normalize) read memory once; the centred second sweep keeps the
// variance exact where the mean is large against the spread.
#include "kiln/tensor/layer_norm.h"

#include <cmath>
#include <sstream>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/kernels/vec.h"
#include "kiln/tensor/parallel.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

std::string listString(IntArrayRef v) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  s << "]";
  return s.str();
}

template <typename T>
void normalizeRows(const T* x, const T* w, const T* b, T* y, T* mean_out, T* rstd_out, int64_t rows, int64_t n,
                   double eps) {
  using V = kernels::Vec<T>;
  constexpr int64_t kW = V::kSize;
  parallelFor(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n)), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const T* xr = x + r * n;
      T* yr = y + r * n;
      V acc0 = V::broadcast(0), acc1 = V::broadcast(0);
      int64_t i = 0;
      for (; i + 2 * kW <= n; i += 2 * kW) {
        acc0 = acc0 + V::load(xr + i);
        acc1 = acc1 + V::load(xr + i + kW);
      }
      for (; i < n; i += kW) acc0 = acc0 + V::loadPartial(xr + i, n - i, 0);
      const T mean = (acc0 + acc1).sum() / static_cast<T>(n);
      const V vmean = V::broadcast(mean);
      V sq0 = V::broadcast(0), sq1 = V::broadcast(0);
      i = 0;
      for (; i + 2 * kW <= n; i += 2 * kW) {
        const V d0 = V::load(xr + i) - vmean, d1 = V::load(xr + i + kW) - vmean;
        sq0 = sq0 + d0 * d0;
        sq1 = sq1 + d1 * d1;
      }
      for (; i < n; i += kW) {
        const V d = V::loadPartial(xr + i, n - i, mean) - vmean;
        sq0 = sq0 + d * d;
      }
      const T var = (sq0 + sq1).sum() / static_cast<T>(n);
      const T rstd = static_cast<T>(1) / std::sqrt(std::max(var, static_cast<T>(0)) + static_cast<T>(eps));
      mean_out[r] = mean;
      rstd_out[r] = rstd;
      const V vrstd = V::broadcast(rstd);
      // Whole vectors with plain loads and stores, the tail masked: AMD's
      // masked store is microcoded (Zen 3: a transformer's layer norms ran
      // five times slower with every store masked).
      for (i = 0; i + kW <= n; i += kW) {
        V v = (V::load(xr + i) - vmean) * vrstd;
        if (w) v = v * V::load(w + i);
        if (b) v = v + V::load(b + i);
        v.store(yr + i);
      }
      if (i < n) {
        const int64_t m = n - i;
        V v = (V::loadPartial(xr + i, m, 0) - vmean) * vrstd;
        if (w) v = v * V::loadPartial(w + i, m, 1);
        if (b) v = v + V::loadPartial(b + i, m, 0);
        v.storePartial(yr + i, m);
      }
    }
  });
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> nativeLayerNorm(const Tensor& input, IntArrayRef normalized_shape,
                                                   const std::optional<Tensor>& weight,
                                                   const std::optional<Tensor>& bias, double eps) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  KILN_CHECK(k >= 1,
             "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got "
             "normalized_shape = ",
             listString(normalized_shape));
  KILN_CHECK(!weight || weight->sizes() == normalized_shape,
             "Expected weight to be of same shape as normalized_shape, but got weight of shape ",
             listString(weight ? weight->sizes() : IntArrayRef()),
             " and normalized_shape = ", listString(normalized_shape));
  KILN_CHECK(!bias || bias->sizes() == normalized_shape,
             "Expected bias to be of same shape as normalized_shape, but got bias of shape ",
             listString(bias ? bias->sizes() : IntArrayRef()),
             " and normalized_shape = ", listString(normalized_shape));
  const int64_t axis = input.dim() - k;
  bool matches = axis >= 0;
  for (int64_t i = 0; matches && i < k; ++i) matches = input.size(axis + i) == normalized_shape[i];
  if (!matches) {
    std::ostringstream s;
    s << "Given normalized_shape=" << listString(normalized_shape) << ", expected input with shape [*";
    for (int64_t v : normalized_shape) s << ", " << v;
    s << "], but got input of size" << listString(input.sizes());
    KILN_CHECK(false, s.str());
  }
  const ScalarType dtype = input.dtype();
  KILN_CHECK(dtype == ScalarType::Float || dtype == ScalarType::Double || dtype == ScalarType::BFloat16,
             "\"LayerNormKernelImpl\" not implemented for '", scalarTypeShortName(dtype), "'");
  for (const std::optional<Tensor>* param : {&weight, &bias}) {
    KILN_CHECK(!*param || (*param)->dtype() == dtype, "expected scalar type ", scalarTypeShortName(dtype),
               " but found ", scalarTypeShortName((*param)->dtype()));
  }
  DimVector stat_shape(input.sizes().begin(), input.sizes().begin() + axis);
  for (int64_t i = 0; i < k; ++i) stat_shape.push_back(1);
  // bfloat16 is computed in float and rounded once at the end, as torch does.
  const ScalarType compute = dtype == ScalarType::BFloat16 ? ScalarType::Float : dtype;
  const Tensor x = contiguous(to(input, compute));
  Tensor w, b;
  if (weight) w = contiguous(to(*weight, compute));
  if (bias) b = contiguous(to(*bias, compute));
  Tensor y = empty(input.sizes(), compute);
  Tensor mean = empty(stat_shape, compute);
  Tensor rstd = empty(stat_shape, compute);
  int64_t n = 1;
  for (int64_t v : normalized_shape) n *= v;
  const int64_t rows = n == 0 ? 0 : x.numel() / n;
  if (n == 0) {
    mean = zeros(stat_shape, compute);
    rstd = full(stat_shape, std::nan(""), compute);
  }
  KILN_DISPATCH_FLOATING_TYPES(compute, "LayerNormKernelImpl", [&] {
    using T = scalar_t;
    normalizeRows<T>(x.data<T>(), w.defined() ? w.data<T>() : nullptr, b.defined() ? b.data<T>() : nullptr, y.data<T>(),
                     mean.data<T>(), rstd.data<T>(), rows, n, eps);
  });
  if (compute != dtype) return {to(y, dtype), to(mean, dtype), to(rstd, dtype)};
  return {y, mean, rstd};
}

Tensor layerNorm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                 const std::optional<Tensor>& bias, double eps) {
  return std::get<0>(nativeLayerNorm(input, normalized_shape, weight, bias, eps));
}

}  // namespace kiln
