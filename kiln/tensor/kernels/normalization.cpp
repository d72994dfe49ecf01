// Batch, instance and group normalization on contiguous (N, C, S) views of
// the input (S the product of the spatial dims). Statistics accumulate in
// double with several independent chains (so the loops vectorize without
// reassociating); the output is one x * alpha + beta per channel, with
// alpha and beta computed in the input's type as PyTorch's CPU kernels do,
// so results agree with torch to rounding. Channels (batch norm) and
// (sample, group) pairs (group norm) are spread over threads above a grain.
#include "kiln/tensor/normalization.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

constexpr int64_t kChains = 8;

// Sum of x[0..n) in double, and of (x - mean)^2 with the difference taken
// in T (as torch does).
template <typename T>
double sumLine(const T* x, int64_t n) {
  double acc[kChains] = {};
  int64_t i = 0;
  for (; i + kChains <= n; i += kChains) {
    for (int64_t j = 0; j < kChains; ++j) acc[j] += static_cast<double>(x[i + j]);
  }
  for (; i < n; ++i) acc[0] += static_cast<double>(x[i]);
  double total = 0;
  for (double a : acc) total += a;
  return total;
}

template <typename T>
double squaredDeviationLine(const T* x, int64_t n, T mean) {
  double acc[kChains] = {};
  int64_t i = 0;
  for (; i + kChains <= n; i += kChains) {
    for (int64_t j = 0; j < kChains; ++j) {
      const T d = x[i + j] - mean;
      acc[j] += static_cast<double>(d * d);
    }
  }
  for (; i < n; ++i) {
    const T d = x[i] - mean;
    acc[0] += static_cast<double>(d * d);
  }
  double total = 0;
  for (double a : acc) total += a;
  return total;
}

// Per channel of a contiguous (N, C, S) block: mean (in T, as torch stores
// it) and the sum of squared deviations from it.
template <typename T>
void channelStats(const T* x, int64_t n, int64_t c, int64_t s, std::vector<T>& mean, std::vector<double>& var_sum) {
  const double count = static_cast<double>(n * s);
  if (s == 1) {
    // (N, C): rows are contiguous across channels; accumulate whole rows.
    std::vector<double> acc(static_cast<size_t>(c), 0.0);
    parallelFor(0, c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n)), [&](int64_t lo, int64_t hi) {
      for (int64_t i = 0; i < n; ++i) {
        const T* row = x + i * c;
        for (int64_t k = lo; k < hi; ++k) acc[static_cast<size_t>(k)] += static_cast<double>(row[k]);
      }
      for (int64_t k = lo; k < hi; ++k)
        mean[static_cast<size_t>(k)] = static_cast<T>(acc[static_cast<size_t>(k)] / count);
      for (int64_t k = lo; k < hi; ++k) acc[static_cast<size_t>(k)] = 0;
      for (int64_t i = 0; i < n; ++i) {
        const T* row = x + i * c;
        for (int64_t k = lo; k < hi; ++k) {
          const T d = row[k] - mean[static_cast<size_t>(k)];
          acc[static_cast<size_t>(k)] += static_cast<double>(d * d);
        }
      }
      for (int64_t k = lo; k < hi; ++k) var_sum[static_cast<size_t>(k)] = acc[static_cast<size_t>(k)];
    });
    return;
  }
  parallelFor(0, c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n * s)), [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += sumLine(x + (i * c + k) * s, s);
      const T m = static_cast<T>(sum / count);
      double vs = 0;
      for (int64_t i = 0; i < n; ++i) vs += squaredDeviationLine(x + (i * c + k) * s, s, m);
      mean[static_cast<size_t>(k)] = m;
      var_sum[static_cast<size_t>(k)] = vs;
    }
  });
}

// y = x * alpha[channel] + beta[channel] over a contiguous (N, C, S) block.
template <typename T>
void affineChannels(const T* x, T* y, int64_t n, int64_t c, int64_t s, const std::vector<T>& alpha,
                    const std::vector<T>& beta) {
  if (s == 1) {
    parallelFor(0, n, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, c)), [&](int64_t lo, int64_t hi) {
      const T* a = alpha.data();
      const T* b = beta.data();
      for (int64_t i = lo; i < hi; ++i) {
        const T* row = x + i * c;
        T* out = y + i * c;
        for (int64_t k = 0; k < c; ++k) out[k] = row[k] * a[k] + b[k];
      }
    });
    return;
  }
  parallelFor(0, n * c, std::max<int64_t>(1, kGrainSize / s), [&](int64_t lo, int64_t hi) {
    for (int64_t line = lo; line < hi; ++line) {
      const T a = alpha[static_cast<size_t>(line % c)];
      const T b = beta[static_cast<size_t>(line % c)];
      const T* in = x + line * s;
      T* out = y + line * s;
      for (int64_t j = 0; j < s; ++j) out[j] = in[j] * a + b;
    }
  });
}

// A per-channel parameter as a contiguous vector of T (ones / zeros when absent).
template <typename T>
std::vector<T> channelVector(const OptionalTensor& t, int64_t c, T absent) {
  std::vector<T> out(static_cast<size_t>(c), absent);
  if (!t || !t->defined()) return out;
  const Tensor v = contiguous(to(*t, CppTypeToScalarType<T>::value));
  const T* p = v.data<T>();
  for (int64_t k = 0; k < c; ++k) out[static_cast<size_t>(k)] = p[k];
  return out;
}

bool present(const OptionalTensor& t) { return t && t->defined(); }

void checkChannelCount(const char* name, const OptionalTensor& t, int64_t c) {
  if (!present(t)) return;
  KILN_CHECK(t->numel() == c, name, " should contain ", c, " elements not ", t->numel());
}

// Writes `values` (double) into a 1-d tensor of c elements, whatever its layout.
void assignChannels(Tensor& dst, const std::vector<double>& values) {
  Tensor src = empty({static_cast<int64_t>(values.size())}, dst.dtype());
  KILN_DISPATCH_FLOATING_TYPES(dst.dtype(), "batch_norm", [&] {
    scalar_t* p = src.data<scalar_t>();
    for (size_t k = 0; k < values.size(); ++k) p[k] = static_cast<scalar_t>(values[k]);
  });
  Tensor target = dst.dim() == 1 ? dst : view(dst, {dst.numel()});
  copy_(target, src);
}

// Reads a 1-d tensor of c elements as double.
std::vector<double> channelValues(const Tensor& t) {
  const Tensor v = contiguous(to(t, ScalarType::Double));
  const double* p = v.data<double>();
  return std::vector<double>(p, p + v.numel());
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> nativeBatchNorm(const Tensor& input, const OptionalTensor& weight,
                                                   const OptionalTensor& bias, const OptionalTensor& running_mean,
                                                   const OptionalTensor& running_var, bool training, double momentum,
                                                   double eps) {
  const int64_t c = input.size(1);  // raises torch's dim-out-of-range error for 1-d input
  checkChannelCount("weight", weight, c);
  checkChannelCount("bias", bias, c);
  if (present(running_mean)) {
    checkChannelCount("running_mean", running_mean, c);
  } else {
    KILN_CHECK(training, "running_mean must be defined in evaluation mode");
  }
  if (present(running_var)) {
    checkChannelCount("running_var", running_var, c);
  } else {
    KILN_CHECK(training, "running_var must be defined in evaluation mode");
  }
  KILN_CHECK(
      isFloatingType(input.dtype()) && input.dtype() != ScalarType::Half && input.dtype() != ScalarType::BFloat16,
      "\"batch_norm\" not implemented for '", scalarTypeShortName(input.dtype()), "'");
  const int64_t n = input.size(0);
  const int64_t s = c == 0 || n == 0 ? 0 : input.numel() / (n * c);
  const Tensor x = contiguous(input);
  Tensor out = empty(input.sizes(), input.dtype());
  Tensor save_mean = empty({training ? c : 0}, input.dtype());
  Tensor save_invstd = empty({training ? c : 0}, input.dtype());
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), "batch_norm", [&] {
    using T = scalar_t;
    std::vector<T> mean(static_cast<size_t>(c)), invstd(static_cast<size_t>(c));
    const int64_t count = n * s;
    if (training) {
      KILN_CHECK(count > 0 || input.numel() == 0, "batch_norm: no values per channel");
      std::vector<double> var_sum(static_cast<size_t>(c), 0.0);
      if (count > 0) channelStats(x.data<T>(), n, c, s, mean, var_sum);
      T* sm = save_mean.data<T>();
      T* si = save_invstd.data<T>();
      std::vector<double> new_mean(static_cast<size_t>(c)), new_var(static_cast<size_t>(c));
      const std::vector<double> old_mean = present(running_mean) ? channelValues(*running_mean) : std::vector<double>();
      const std::vector<double> old_var = present(running_var) ? channelValues(*running_var) : std::vector<double>();
      for (int64_t k = 0; k < c; ++k) {
        const size_t i = static_cast<size_t>(k);
        // torch keeps the variance sum in T before dividing.
        const T vs = static_cast<T>(var_sum[i]);
        invstd[i] = static_cast<T>(1.0 / std::sqrt(static_cast<double>(vs / static_cast<T>(count)) + eps));
        sm[k] = mean[i];
        si[k] = invstd[i];
        if (!old_mean.empty()) new_mean[i] = momentum * static_cast<double>(mean[i]) + (1 - momentum) * old_mean[i];
        if (!old_var.empty()) {
          const T unbiased = vs / static_cast<T>(count - 1);
          new_var[i] = momentum * static_cast<double>(unbiased) + (1 - momentum) * old_var[i];
        }
      }
      if (count > 0) {
        if (present(running_mean)) {
          Tensor rm = *running_mean;
          assignChannels(rm, new_mean);
        }
        if (present(running_var)) {
          Tensor rv = *running_var;
          assignChannels(rv, new_var);
        }
      }
    } else {
      const std::vector<double> rm = channelValues(*running_mean);
      const std::vector<double> rv = channelValues(*running_var);
      for (size_t i = 0; i < static_cast<size_t>(c); ++i) {
        mean[i] = static_cast<T>(rm[i]);
        invstd[i] = static_cast<T>(1.0 / std::sqrt(static_cast<double>(static_cast<T>(rv[i])) + eps));
      }
    }
    if (input.numel() == 0) return;
    const std::vector<T> w = channelVector<T>(weight, c, T(1));
    const std::vector<T> b = channelVector<T>(bias, c, T(0));
    std::vector<T> alpha(static_cast<size_t>(c)), beta(static_cast<size_t>(c));
    for (size_t i = 0; i < static_cast<size_t>(c); ++i) {
      alpha[i] = invstd[i] * w[i];
      beta[i] = b[i] - mean[i] * alpha[i];
    }
    affineChannels(x.data<T>(), out.data<T>(), n, c, s, alpha, beta);
  });
  return {out, save_mean, save_invstd};
}

Tensor batchNorm(const Tensor& input, const OptionalTensor& weight, const OptionalTensor& bias,
                 const OptionalTensor& running_mean, const OptionalTensor& running_var, bool training, double momentum,
                 double eps) {
  return std::get<0>(nativeBatchNorm(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

Tensor instanceNorm(const Tensor& input, const OptionalTensor& weight, const OptionalTensor& bias,
                    const OptionalTensor& running_mean, const OptionalTensor& running_var, bool use_input_stats,
                    double momentum, double eps) {
  KILN_CHECK(use_input_stats || (present(running_mean) && present(running_var)),
             "Expected running_mean and running_var to be defined when use_input_stats is false");
  // As torch: the batch folds into the channels, (1, N * C, *), and the
  // per-channel parameters and statistics repeat N times.
  const int64_t n = input.size(0), c = input.size(1);
  DimVector shape{1, n * c};
  for (int64_t d = 2; d < input.dim(); ++d) shape.push_back(input.size(d));
  auto repeated = [&](const OptionalTensor& t) -> OptionalTensor {
    if (!present(t)) return std::nullopt;
    return repeat(*t, {n});
  };
  OptionalTensor rm = repeated(running_mean), rv = repeated(running_var);
  Tensor out = batchNorm(reshape(contiguous(input), shape), repeated(weight), repeated(bias), rm, rv, use_input_stats,
                         momentum, eps);
  if (use_input_stats) {
    const DimVector batch_dim{0};
    if (present(running_mean)) {
      Tensor dst = *running_mean;
      copy_(dst, mean(view(*rm, {n, c}), IntArrayRef(batch_dim)));
    }
    if (present(running_var)) {
      Tensor dst = *running_var;
      copy_(dst, mean(view(*rv, {n, c}), IntArrayRef(batch_dim)));
    }
  }
  return view(out, input.sizes());
}

std::tuple<Tensor, Tensor, Tensor> nativeGroupNorm(const Tensor& input, const OptionalTensor& weight,
                                                   const OptionalTensor& bias, int64_t n, int64_t c, int64_t hxw,
                                                   int64_t group, double eps) {
  KILN_CHECK(group > 0, "Expected num groups to be greater than 0, got ", group);
  KILN_CHECK(c % group == 0,
             "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
             shapeString(input.sizes()), " and num_groups=", group);
  KILN_CHECK(input.numel() == n * c * hxw, "Expected the input to have ", n * c * hxw, " elements, got ",
             input.numel());
  KILN_CHECK(!present(weight) || (weight->dim() == 1 && weight->numel() == c),
             "Expected weight to be a vector of size equal to the number of channels in input, but got weight of "
             "shape ",
             shapeString(weight->sizes()), " and input of shape ", shapeString(input.sizes()));
  KILN_CHECK(!present(bias) || (bias->dim() == 1 && bias->numel() == c),
             "Expected bias to be a vector of size equal to the number of channels in input, but got bias of shape ",
             shapeString(bias->sizes()), " and input of shape ", shapeString(input.sizes()));
  KILN_CHECK(input.dtype() == ScalarType::Float || input.dtype() == ScalarType::Double,
             "\"GroupNormKernelImpl\" not implemented for '", scalarTypeShortName(input.dtype()), "'");
  const Tensor x = contiguous(input);
  Tensor out = empty(input.sizes(), input.dtype());
  Tensor mean_out = empty({n, group}, input.dtype());
  Tensor rstd_out = empty({n, group}, input.dtype());
  const int64_t per_group = c / group;
  const int64_t d = per_group * hxw;  // elements of one (sample, group)
  KILN_DISPATCH_FLOATING_TYPES(input.dtype(), "GroupNormKernelImpl", [&] {
    using T = scalar_t;
    const std::vector<T> w = channelVector<T>(weight, c, T(1));
    const std::vector<T> b = channelVector<T>(bias, c, T(0));
    const T* xp = x.data<T>();
    T* yp = out.data<T>();
    T* mp = mean_out.data<T>();
    T* rp = rstd_out.data<T>();
    parallelFor(0, n * group, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, d)), [&](int64_t lo, int64_t hi) {
      for (int64_t ng = lo; ng < hi; ++ng) {
        const T* in = xp + ng * d;
        T* o = yp + ng * d;
        double m = d == 0 ? 0.0 : sumLine(in, d) / static_cast<double>(d);
        double sq = 0;
        {
          double acc[kChains] = {};
          int64_t i = 0;
          for (; i + kChains <= d; i += kChains) {
            for (int64_t j = 0; j < kChains; ++j) {
              const double dv = static_cast<double>(in[i + j]) - m;
              acc[j] += dv * dv;
            }
          }
          for (; i < d; ++i) {
            const double dv = static_cast<double>(in[i]) - m;
            acc[0] += dv * dv;
          }
          for (double a : acc) sq += a;
        }
        const double var = d == 0 ? 0.0 : sq / static_cast<double>(d);
        const T mean_t = static_cast<T>(m);
        const T rstd_t = static_cast<T>(1.0 / std::sqrt(std::max(var, 0.0) + eps));
        mp[ng] = mean_t;
        rp[ng] = rstd_t;
        const int64_t g = ng % group;
        for (int64_t k = 0; k < per_group; ++k) {
          const size_t ch = static_cast<size_t>(g * per_group + k);
          const T scale = rstd_t * w[ch];
          const T shift = b[ch] - scale * mean_t;
          const T* line = in + k * hxw;
          T* out_line = o + k * hxw;
          for (int64_t j = 0; j < hxw; ++j) out_line[j] = line[j] * scale + shift;
        }
      }
    });
  });
  return {out, mean_out, rstd_out};
}

Tensor groupNorm(const Tensor& input, int64_t num_groups, const OptionalTensor& weight, const OptionalTensor& bias,
                 double eps) {
  KILN_CHECK(input.dim() >= 2, "Expected at least 2 dimensions for input tensor but received ", input.dim());
  const int64_t n = input.size(0), c = input.size(1);
  KILN_CHECK(num_groups > 0 && c % num_groups == 0,
             "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
             shapeString(input.sizes()), " and num_groups=", num_groups);
  const int64_t hxw = n * c == 0 ? 1 : input.numel() / (n * c);
  return std::get<0>(nativeGroupNorm(input, weight, bias, n, c, hxw, num_groups, eps));
}

}  // namespace kiln
