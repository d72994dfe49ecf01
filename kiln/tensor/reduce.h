#pragma once
// Reductions (sum, mean, max, var, norm, ...), softmax and cumulative ops,
// with PyTorch 1.13's semantics: dims may be negative, a dim list that is
// absent or empty reduces every dim (a 0-dim tensor reduces over dim 0 or
// -1), `keepdim` keeps reduced dims with size 1, integer sums and products
// give int64, and reductions over zero elements give the identity (or raise
// for max/min, which have none). `Out` forms write into `out`, resizing it
// as PyTorch does.
#include <optional>
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

using OptionalDims = std::optional<IntArrayRef>;
using OptionalDtype = std::optional<ScalarType>;

Tensor sum(const Tensor& self, OptionalDims dims = std::nullopt, bool keepdim = false,
           OptionalDtype dtype = std::nullopt);
Tensor& sumOut(const Tensor& self, OptionalDims dims, bool keepdim, OptionalDtype dtype, Tensor& out);
// Floating inputs only (or a floating `dtype`); the mean of nothing is nan.
Tensor mean(const Tensor& self, OptionalDims dims = std::nullopt, bool keepdim = false,
            OptionalDtype dtype = std::nullopt);
Tensor& meanOut(const Tensor& self, OptionalDims dims, bool keepdim, OptionalDtype dtype, Tensor& out);
// `dim` absent: the product of every element.
Tensor prod(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
            OptionalDtype dtype = std::nullopt);
Tensor& prodOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, OptionalDtype dtype, Tensor& out);

// Largest/smallest element; NaN wins over numbers.
Tensor max(const Tensor& self);
Tensor min(const Tensor& self);
// (values, indices) along `dim`; ties give the first index.
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false);
std::tuple<Tensor&, Tensor&> maxOut(const Tensor& self, int64_t dim, bool keepdim, Tensor& values, Tensor& indices);
std::tuple<Tensor&, Tensor&> minOut(const Tensor& self, int64_t dim, bool keepdim, Tensor& values, Tensor& indices);
// Elementwise max/min of two broadcast tensors (aten::max.other), NaN-propagating.
Tensor max(const Tensor& self, const Tensor& other);
Tensor min(const Tensor& self, const Tensor& other);
Tensor& maxOut(const Tensor& self, const Tensor& other, Tensor& out);
Tensor& minOut(const Tensor& self, const Tensor& other, Tensor& out);
// `dim` absent: the index into the flattened tensor.
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor& argmaxOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out);
Tensor& argminOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out);
Tensor amax(const Tensor& self, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& self, IntArrayRef dims = {}, bool keepdim = false);
Tensor& amaxOut(const Tensor& self, IntArrayRef dims, bool keepdim, Tensor& out);
Tensor& aminOut(const Tensor& self, IntArrayRef dims, bool keepdim, Tensor& out);

// Bool results, except that uint8 inputs give uint8 (as in PyTorch 1.13).
Tensor all(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor any(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor& allOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out);
Tensor& anyOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out);

// Variance with Bessel-style `correction` (absent: 1), i.e. the sum of
// squared deviations divided by max(0, N - correction).
Tensor var(const Tensor& self, OptionalDims dims = std::nullopt, std::optional<int64_t> correction = std::nullopt,
           bool keepdim = false);
Tensor stdDev(const Tensor& self, OptionalDims dims = std::nullopt, std::optional<int64_t> correction = std::nullopt,
              bool keepdim = false);
Tensor& varOut(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction, bool keepdim, Tensor& out);
Tensor& stdDevOut(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction, bool keepdim, Tensor& out);
// (var or std, mean). The Out forms copy into outs of any dtype, as PyTorch's
// generated var_mean.correction_out does (varOut/stdDevOut need floating outs).
std::tuple<Tensor, Tensor> varMean(const Tensor& self, OptionalDims dims = std::nullopt,
                                   std::optional<int64_t> correction = std::nullopt, bool keepdim = false);
std::tuple<Tensor, Tensor> stdMean(const Tensor& self, OptionalDims dims = std::nullopt,
                                   std::optional<int64_t> correction = std::nullopt, bool keepdim = false);
std::tuple<Tensor&, Tensor&> varMeanOut(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction,
                                        bool keepdim, Tensor& var_out, Tensor& mean_out);
std::tuple<Tensor&, Tensor&> stdMeanOut(const Tensor& self, OptionalDims dims, std::optional<int64_t> correction,
                                        bool keepdim, Tensor& std_out, Tensor& mean_out);

// The vector p-norm (p absent: 2; p = 0 counts non-zeros, +-inf: max/min of |x|),
// computed in `dtype` when given.
Tensor norm(const Tensor& self, const std::optional<Scalar>& p, OptionalDims dims = std::nullopt, bool keepdim = false,
            OptionalDtype dtype = std::nullopt);
Tensor& normOut(const Tensor& self, const std::optional<Scalar>& p, OptionalDims dims, bool keepdim,
                OptionalDtype dtype, Tensor& out);

// log(sum(exp(x))) without overflow; integer inputs compute in float32.
Tensor logsumexp(const Tensor& self, IntArrayRef dims, bool keepdim = false);
Tensor& logsumexpOut(const Tensor& self, IntArrayRef dims, bool keepdim, Tensor& out);
// Along `dim`, in `dtype` when given (the input is converted first).
Tensor softmax(const Tensor& self, int64_t dim, OptionalDtype dtype = std::nullopt);
Tensor logSoftmax(const Tensor& self, int64_t dim, OptionalDtype dtype = std::nullopt);
Tensor& softmaxOut(const Tensor& self, int64_t dim, OptionalDtype dtype, Tensor& out);
Tensor& logSoftmaxOut(const Tensor& self, int64_t dim, OptionalDtype dtype, Tensor& out);

// Running sums/products along `dim`; integer and bool inputs give int64
// unless `dtype` says otherwise.
Tensor cumsum(const Tensor& self, int64_t dim, OptionalDtype dtype = std::nullopt);
Tensor cumprod(const Tensor& self, int64_t dim, OptionalDtype dtype = std::nullopt);
Tensor& cumsumOut(const Tensor& self, int64_t dim, OptionalDtype dtype, Tensor& out);
Tensor& cumprodOut(const Tensor& self, int64_t dim, OptionalDtype dtype, Tensor& out);

}  // namespace kiln
