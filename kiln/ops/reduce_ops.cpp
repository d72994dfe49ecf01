// aten:: registrations of the reductions, softmax and scans, with PyTorch
// 1.13's schemas. (The named-dim overloads are left out: kiln has no named
// tensors.) The out= forms PyTorch generates from a functional op (sum.out,
// prod.out, norm.Scalar_out, ...) compute the result as usual and copy it into
// `out` whatever its dtype.
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"
#include "kiln/tensor/sort.h"

namespace kiln {
namespace {

using Dtype = OptionalDtype;
using Correction = std::optional<int64_t>;

// The `unbiased` overloads are the `correction` ones with correction 0 or 1.
Correction fromUnbiased(bool unbiased) { return unbiased ? 1 : 0; }

// PyTorch's CPU softmax has no half-to-float mode either.
void checkNoHalfToFloat(bool half_to_float) {
  KILN_CHECK(!half_to_float, "softmax with half to float conversion is not supported on CPU");
}

// sort.stable takes `bool? stable` but, like PyTorch, refuses None.
bool requireStable(std::optional<bool> stable) {
  KILN_CHECK(stable.has_value(), "sort(): c10::optional<bool> for stable has to have value.");
  return *stable;
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest) {
  int64_t d = wrapDim(dim, std::max<int64_t>(self.dim(), 1));
  int64_t n = self.dim() == 0 ? 1 : self.size(d);
  KILN_CHECK_INDEX(k >= 0 && k <= n, "topk: k (", k, ") is out of range for a dimension of size ", n);
  auto [values, indices] = sort(self, d, largest, true);
  if (self.dim() == 0) return std::make_tuple(values, indices);
  return std::make_tuple(contiguous(narrow(values, d, 0, k), MemoryFormat::Contiguous),
                         contiguous(narrow(indices, d, 0, k), MemoryFormat::Contiguous));
}

KILN_REGISTER_OPS(
    // sum, mean, prod
    op("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, OptionalDims dim, bool keepdim, Dtype dtype) { return sum(self, dim, keepdim, dtype); })
        .derivative({"self: _sum_backward(grad, self.size(), dim, keepdim)", "grad_fn: SumBackward1"})
        .shape(shapes::reduceUpcast),
    op("aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, Dtype dtype) { return sum(self, std::nullopt, false, dtype); })
        .derivative({"self: grad.expand(self.size())"})
        .shape(shapes::reduceUpcast),
    op("aten::sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, OptionalDims dim, bool keepdim, Dtype dtype, Tensor out) {
         return sumOut(self, dim, keepdim, dtype, out);
       })
        .shape(shapes::reduceUpcast),
    op("aten::sum.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Dtype dtype, Tensor out) {
         return writeOut(out, sum(self, std::nullopt, false, dtype), "sum", OutDtype::Any);
       })
        .shape(shapes::reduceUpcast),
    op("aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, Dtype dtype) { return mean(self, std::nullopt, false, dtype); })
        .derivative({"self: grad.expand(self.size()) / self.numel()"})
        .shape(shapes::reduceDtype),
    op("aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, OptionalDims dim, bool keepdim, Dtype dtype) { return mean(self, dim, keepdim, dtype); })
        .derivative({"self: _mean_backward(grad, self, dim, keepdim)", "grad_fn: MeanBackward1"})
        .shape(shapes::reduceDtype),
    op("aten::mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, OptionalDims dim, bool keepdim, Dtype dtype, Tensor out) {
         return meanOut(self, dim, keepdim, dtype, out);
       })
        .shape(shapes::reduceDtype),
    op("aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, Dtype dtype) { return prod(self, std::nullopt, false, dtype); })
        .derivative({"self: _prod_backward(grad, self, result)"})
        .shape(shapes::reduceUpcast),
    op("aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, int64_t dim, bool keepdim, Dtype dtype) { return prod(self, dim, keepdim, dtype); })
        .derivative({"self: _prod_dim_backward(grad, self, result, dim, keepdim)", "grad_fn: ProdBackward1"})
        .shape(shapes::reduceUpcast),
    op("aten::prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, bool keepdim, Dtype dtype, Tensor out) {
         return prodOut(self, dim, keepdim, dtype, out);
       })
        .shape(shapes::reduceUpcast),
    op("aten::prod.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Dtype dtype, Tensor out) {
         return writeOut(out, prod(self, std::nullopt, false, dtype), "prod", OutDtype::Any);
       })
        .shape(shapes::reduceUpcast),

    // max, min
    op("aten::max.other(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return max(self, other); })
        .derivative({"self: torch.where(self == other, grad / 2, grad * (self > other))",
                     "other: torch.where(self == other, grad / 2, grad * (other > self))", "grad_fn: MaximumBackward0"})
        .shape(shapes::arithmetic),
    op("aten::max(Tensor self) -> Tensor", [](const Tensor& self) { return max(self); })
        .derivative({"self: _evenly_distribute(grad, self, result)", "grad_fn: MaxBackward1"})
        .shape(shapes::reduceSame),
    op("aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
       [](const Tensor& self, int64_t dim, bool keepdim) { return max(self, dim, keepdim); })
        .derivative({"self: _select_backward(grad, self, dim, keepdim, indices)", "non_differentiable: indices"})
        .shape(shapes::reduceWithIndices),
    op("aten::max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> "
       "(Tensor(a!) values, Tensor(b!) indices)",
       [](const Tensor& self, int64_t dim, bool keepdim, Tensor values, Tensor indices) {
         maxOut(self, dim, keepdim, values, indices);
         return std::make_tuple(values, indices);
       })
        .shape(shapes::reduceSame),
    op("aten::max.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return maxOut(self, other, out); })
        .shape(shapes::reduceSame),
    op("aten::min.other(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return min(self, other); })
        .derivative({"self: torch.where(self == other, grad / 2, grad * (self < other))",
                     "other: torch.where(self == other, grad / 2, grad * (other < self))", "grad_fn: MinimumBackward0"})
        .shape(shapes::arithmetic),
    op("aten::min(Tensor self) -> Tensor", [](const Tensor& self) { return min(self); })
        .derivative({"self: _evenly_distribute(grad, self, result)", "grad_fn: MinBackward1"})
        .shape(shapes::reduceSame),
    op("aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
       [](const Tensor& self, int64_t dim, bool keepdim) { return min(self, dim, keepdim); })
        .derivative({"self: _select_backward(grad, self, dim, keepdim, indices)", "non_differentiable: indices"})
        .shape(shapes::reduceWithIndices),
    op("aten::min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min, Tensor(b!) min_indices) -> "
       "(Tensor(a!) values, Tensor(b!) indices)",
       [](const Tensor& self, int64_t dim, bool keepdim, Tensor values, Tensor indices) {
         minOut(self, dim, keepdim, values, indices);
         return std::make_tuple(values, indices);
       })
        .shape(shapes::reduceSame),
    op("aten::min.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return minOut(self, other, out); })
        .shape(shapes::reduceSame),
    op("aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
       [](const Tensor& self, std::optional<int64_t> dim, bool keepdim) { return argmax(self, dim, keepdim); })
        .shape(shapes::reduceLong),
    op("aten::argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor out) {
         return argmaxOut(self, dim, keepdim, out);
       })
        .shape(shapes::reduceLong),
    op("aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
       [](const Tensor& self, std::optional<int64_t> dim, bool keepdim) { return argmin(self, dim, keepdim); })
        .shape(shapes::reduceLong),
    op("aten::argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor out) {
         return argminOut(self, dim, keepdim, out);
       })
        .shape(shapes::reduceLong),
    op("aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
       [](const Tensor& self, IntArrayRef dim, bool keepdim) { return amax(self, dim, keepdim); })
        .derivative({"self: _amax_backward(grad, self, result, dim, keepdim)"})
        .shape(shapes::reduceSame),
    op("aten::amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef dim, bool keepdim, Tensor out) { return amaxOut(self, dim, keepdim, out); })
        .shape(shapes::reduceSame),
    op("aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
       [](const Tensor& self, IntArrayRef dim, bool keepdim) { return amin(self, dim, keepdim); })
        .derivative({"self: _amax_backward(grad, self, result, dim, keepdim)"})
        .shape(shapes::reduceSame),
    op("aten::amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef dim, bool keepdim, Tensor out) { return aminOut(self, dim, keepdim, out); })
        .shape(shapes::reduceSame),

    // all, any
    op("aten::all(Tensor self) -> Tensor", [](const Tensor& self) { return all(self); }).shape(shapes::reduceBool),
    op("aten::all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
       [](const Tensor& self, int64_t dim, bool keepdim) { return all(self, dim, keepdim); })
        .shape(shapes::reduceBool),
    op("aten::all.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, bool keepdim, Tensor out) { return allOut(self, dim, keepdim, out); })
        .shape(shapes::reduceBool),
    op("aten::all.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return allOut(self, std::nullopt, false, out); })
        .shape(shapes::reduceBool),
    op("aten::any(Tensor self) -> Tensor", [](const Tensor& self) { return any(self); }).shape(shapes::reduceBool),
    op("aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
       [](const Tensor& self, int64_t dim, bool keepdim) { return any(self, dim, keepdim); })
        .shape(shapes::reduceBool),
    op("aten::any.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, bool keepdim, Tensor out) { return anyOut(self, dim, keepdim, out); })
        .shape(shapes::reduceBool),
    op("aten::any.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return anyOut(self, std::nullopt, false, out); })
        .shape(shapes::reduceBool),

    // var, std
    op("aten::var(Tensor self, bool unbiased=True) -> Tensor",
       [](const Tensor& self, bool unbiased) { return var(self, std::nullopt, fromUnbiased(unbiased)); })
        .derivative({"self: _var_backward(grad, self, None, False, int(unbiased))"})
        .shape(shapes::reduceSame),
    op("aten::var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
       [](const Tensor& self, OptionalDims dim, bool unbiased, bool keepdim) {
         return var(self, dim, fromUnbiased(unbiased), keepdim);
       })
        .derivative({"self: _var_backward(grad, self, dim, keepdim, int(unbiased))", "grad_fn: VarBackward0"})
        .shape(shapes::reduceSame),
    op("aten::var.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> Tensor",
       [](const Tensor& self, OptionalDims dim, Correction correction, bool keepdim) {
         return var(self, dim, correction, keepdim);
       })
        .derivative({"self: _var_backward(grad, self, dim, keepdim, correction)", "grad_fn: VarBackward0"})
        .shape(shapes::reduceSame),
    op("aten::var.out(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, OptionalDims dim, bool unbiased, bool keepdim, Tensor out) {
         return varOut(self, dim, fromUnbiased(unbiased), keepdim, out);
       })
        .shape(shapes::reduceSame),
    op("aten::var.correction_out(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, OptionalDims dim, Correction correction, bool keepdim, Tensor out) {
         return varOut(self, dim, correction, keepdim, out);
       })
        .shape(shapes::reduceSame),
    op("aten::std(Tensor self, bool unbiased=True) -> Tensor",
       [](const Tensor& self, bool unbiased) { return stdDev(self, std::nullopt, fromUnbiased(unbiased)); })
        .derivative({"self: _std_backward(grad, self, result, None, False, int(unbiased))"})
        .shape(shapes::reduceSame),
    op("aten::std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
       [](const Tensor& self, OptionalDims dim, bool unbiased, bool keepdim) {
         return stdDev(self, dim, fromUnbiased(unbiased), keepdim);
       })
        .derivative({"self: _std_backward(grad, self, result, dim, keepdim, int(unbiased))", "grad_fn: StdBackward0"})
        .shape(shapes::reduceSame),
    op("aten::std.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> Tensor",
       [](const Tensor& self, OptionalDims dim, Correction correction, bool keepdim) {
         return stdDev(self, dim, correction, keepdim);
       })
        .derivative({"self: _std_backward(grad, self, result, dim, keepdim, correction)", "grad_fn: StdBackward0"})
        .shape(shapes::reduceSame),
    op("aten::std.out(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, OptionalDims dim, bool unbiased, bool keepdim, Tensor out) {
         return stdDevOut(self, dim, fromUnbiased(unbiased), keepdim, out);
       })
        .shape(shapes::reduceSame),
    op("aten::std.correction_out(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, OptionalDims dim, Correction correction, bool keepdim, Tensor out) {
         return stdDevOut(self, dim, correction, keepdim, out);
       })
        .shape(shapes::reduceSame),
    op("aten::var_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)",
       [](const Tensor& self, bool unbiased) { return varMean(self, std::nullopt, fromUnbiased(unbiased)); })
        .derivative({"self: _var_backward(grads[0], self, None, False, int(unbiased)) + "
                     "_mean_backward(grads[1], self, None, False)",
                     "grad_fn: VarMeanBackward0"})
        .shape(shapes::reducePair),
    op("aten::var_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)",
       [](const Tensor& self, OptionalDims dim, bool unbiased, bool keepdim) {
         return varMean(self, dim, fromUnbiased(unbiased), keepdim);
       })
        .derivative({"self: _var_backward(grads[0], self, dim, keepdim, int(unbiased)) + "
                     "_mean_backward(grads[1], self, dim, keepdim)",
                     "grad_fn: VarMeanBackward0"})
        .shape(shapes::reducePair),
    op("aten::var_mean.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> "
       "(Tensor, Tensor)",
       [](const Tensor& self, OptionalDims dim, Correction correction, bool keepdim) {
         return varMean(self, dim, correction, keepdim);
       })
        .derivative({"self: _var_backward(grads[0], self, dim, keepdim, correction) + "
                     "_mean_backward(grads[1], self, dim, keepdim)"})
        .shape(shapes::reducePair),
    op("aten::var_mean.correction_out(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False, "
       "Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& self, OptionalDims dim, Correction correction, bool keepdim, Tensor out0, Tensor out1) {
         varMeanOut(self, dim, correction, keepdim, out0, out1);
         return std::make_tuple(out0, out1);
       })
        .shape(shapes::reducePair),
    op("aten::std_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)",
       [](const Tensor& self, bool unbiased) { return stdMean(self, std::nullopt, fromUnbiased(unbiased)); })
        .derivative({"self: _std_backward(grads[0], self, result0, None, False, int(unbiased)) + "
                     "_mean_backward(grads[1], self, None, False)",
                     "grad_fn: StdMeanBackward0"})
        .shape(shapes::reducePair),
    op("aten::std_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)",
       [](const Tensor& self, OptionalDims dim, bool unbiased, bool keepdim) {
         return stdMean(self, dim, fromUnbiased(unbiased), keepdim);
       })
        .derivative({"self: _std_backward(grads[0], self, result0, dim, keepdim, int(unbiased)) + "
                     "_mean_backward(grads[1], self, dim, keepdim)",
                     "grad_fn: StdMeanBackward0"})
        .shape(shapes::reducePair),
    op("aten::std_mean.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> "
       "(Tensor, Tensor)",
       [](const Tensor& self, OptionalDims dim, Correction correction, bool keepdim) {
         return stdMean(self, dim, correction, keepdim);
       })
        .derivative({"self: _std_backward(grads[0], self, result0, dim, keepdim, correction) + "
                     "_mean_backward(grads[1], self, dim, keepdim)"})
        .shape(shapes::reducePair),
    op("aten::std_mean.correction_out(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False, "
       "Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
       [](const Tensor& self, OptionalDims dim, Correction correction, bool keepdim, Tensor out0, Tensor out1) {
         stdMeanOut(self, dim, correction, keepdim, out0, out1);
         return std::make_tuple(out0, out1);
       })
        .shape(shapes::reducePair),

    // norm
    op("aten::norm.Scalar(Tensor self, Scalar p=2) -> Tensor",
       [](const Tensor& self, const Scalar& p) { return norm(self, p); })
        .derivative({"self: _norm_backward(grad, self, result, float(p), None, False)", "grad_fn: NormBackward0"})
        .shape(shapes::reduceDtype),
    op("aten::norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor",
       [](const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim) {
         return norm(self, p, dim, keepdim);
       })
        .derivative({"self: _norm_backward(grad, self, result, 2.0 if p is None else float(p), dim, keepdim)",
                     "grad_fn: NormBackward1"})
        .shape(shapes::reduceDtype),
    op("aten::norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype) -> "
       "Tensor",
       [](const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim, ScalarType dtype) {
         return norm(self, p, dim, keepdim, dtype);
       })
        .derivative({"self: _norm_backward(grad, self, result, 2.0 if p is None else float(p), dim, keepdim)",
                     "grad_fn: NormBackward3"})
        .shape(shapes::reduceDtype),
    op("aten::norm.ScalarOpt_dtype(Tensor self, Scalar? p, *, ScalarType dtype) -> Tensor",
       [](const Tensor& self, const std::optional<Scalar>& p, ScalarType dtype) {
         return norm(self, p, std::nullopt, false, dtype);
       })
        .derivative({"self: _norm_backward(grad, self, result, 2.0 if p is None else float(p), None, False)",
                     "grad_fn: NormBackward2"})
        .shape(shapes::reduceDtype),
    op("aten::norm.Scalar_out(Tensor self, Scalar p=2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& p, Tensor out) {
         return writeOut(out, norm(self, p), "norm", OutDtype::Any);
       })
        .shape(shapes::reduceDtype),
    op("aten::norm.out(Tensor self, Scalar? p, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim, Tensor out) {
         return normOut(self, p, dim, keepdim, std::nullopt, out);
       })
        .shape(shapes::reduceDtype),
    op("aten::norm.dtype_out(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim, bool keepdim, ScalarType dtype,
          Tensor out) { return normOut(self, p, dim, keepdim, dtype, out); })
        .shape(shapes::reduceDtype),
    op("aten::norm.ScalarOpt_dtype_out(Tensor self, Scalar? p, *, ScalarType dtype, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const std::optional<Scalar>& p, ScalarType dtype, Tensor out) {
         return writeOut(out, norm(self, p, std::nullopt, false, dtype), "norm", OutDtype::Any);
       })
        .shape(shapes::reduceDtype),

    // logsumexp, softmax
    op("aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
       [](const Tensor& self, IntArrayRef dim, bool keepdim) { return logsumexp(self, dim, keepdim); })
        .derivative({"self: _sum_backward(grad, self.size(), dim, keepdim) * (self - _sum_backward(result, "
                     "self.size(), dim, keepdim)).exp()"})
        .shape(shapes::reduceFloat),
    op("aten::logsumexp.out(Tensor self, int[1] dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, IntArrayRef dim, bool keepdim, Tensor out) {
         return logsumexpOut(self, dim, keepdim, out);
       })
        .shape(shapes::reduceFloat),
    op("aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, int64_t dim, Dtype dtype) { return softmax(self, dim, dtype); })
        .derivative({"self: (grad - (grad * result).sum(dim, keepdim=True)) * result", "grad_fn: SoftmaxBackward0"})
        .shape(shapes::softmaxOp),
    op("aten::softmax.int_out(Tensor self, int dim, ScalarType? dtype=None, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, Dtype dtype, Tensor out) { return softmaxOut(self, dim, dtype, out); })
        .shape(shapes::softmaxOp),
    op("aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, int64_t dim, Dtype dtype) { return logSoftmax(self, dim, dtype); })
        .derivative({"self: grad - result.exp() * grad.sum(dim, keepdim=True)", "grad_fn: LogSoftmaxBackward0"})
        .shape(shapes::softmaxOp),
    op("aten::log_softmax.int_out(Tensor self, int dim, ScalarType? dtype=None, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, Dtype dtype, Tensor out) { return logSoftmaxOut(self, dim, dtype, out); })
        .shape(shapes::softmaxOp),
    op("aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
       [](const Tensor& self, int64_t dim, bool half_to_float) {
         checkNoHalfToFloat(half_to_float);
         return softmax(self, dim);
       })
        .derivative({"self: (grad - (grad * result).sum(dim, keepdim=True)) * result", "grad_fn: SoftmaxBackward0"})
        .shape(shapes::internalSoftmax),
    op("aten::_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, bool half_to_float, Tensor out) {
         checkNoHalfToFloat(half_to_float);
         return softmaxOut(self, dim, std::nullopt, out);
       })
        .shape(shapes::internalSoftmax),
    op("aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
       [](const Tensor& self, int64_t dim, bool half_to_float) {
         checkNoHalfToFloat(half_to_float);
         return logSoftmax(self, dim);
       })
        .derivative({"self: grad - result.exp() * grad.sum(dim, keepdim=True)", "grad_fn: LogSoftmaxBackward0"})
        .shape(shapes::internalSoftmax),
    op("aten::_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, bool half_to_float, Tensor out) {
         checkNoHalfToFloat(half_to_float);
         return logSoftmaxOut(self, dim, std::nullopt, out);
       })
        .shape(shapes::internalSoftmax),

    // cumsum, cumprod
    op("aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, int64_t dim, Dtype dtype) { return cumsum(self, dim, dtype); })
        .derivative({"self: grad if grad.dim() == 0 else _reversed_cumsum(grad, dim)"})
        .shape(shapes::cumulative),
    op("aten::cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, Dtype dtype, Tensor out) { return cumsumOut(self, dim, dtype, out); })
        .shape(shapes::cumulative),
    op("aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
       [](const Tensor& self, int64_t dim, Dtype dtype) { return cumprod(self, dim, dtype); })
        .derivative({"self: _cumprod_backward(grad, self, result, dim)"})
        .shape(shapes::cumulative),
    op("aten::cumprod.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, Dtype dtype, Tensor out) { return cumprodOut(self, dim, dtype, out); })
        .shape(shapes::cumulative),

    // topk: the first k of a stable sort (ties keep input order).
    op("aten::topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> "
       "(Tensor values, Tensor indices)",
       [](const Tensor& self, int64_t k, int64_t dim, bool largest, bool) { return topk(self, k, dim, largest); })
        .derivative({"self: torch.zeros_like(self).scatter(dim, indices, grad)", "non_differentiable: indices"})
        .shape(shapes::topk),
    op("aten::topk.values(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True, *, Tensor(a!) values, "
       "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
       [](const Tensor& self, int64_t k, int64_t dim, bool largest, bool, Tensor values, Tensor indices) {
         auto [v, i] = topk(self, k, dim, largest);
         writeOut(values, v, "topk");
         writeOut(indices, i, "topk");
         return std::make_tuple(values, indices);
       })
        .shape(shapes::topk),

    // sort, argsort, msort
    op("aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",
       [](const Tensor& self, int64_t dim, bool descending) { return sort(self, dim, descending); })
        .derivative({"self: torch.zeros_like(self).scatter(dim, indices, grad)", "non_differentiable: indices"})
        .shape(shapes::sortOp),
    op("aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> "
       "(Tensor values, Tensor indices)",
       [](const Tensor& self, std::optional<bool> stable, int64_t dim, bool descending) {
         return sort(self, dim, descending, requireStable(stable));
       })
        .derivative({"self: torch.zeros_like(self).scatter(dim, indices, grad)", "non_differentiable: indices",
                     "grad_fn: SortBackward1"})
        .shape(shapes::sortOp),
    op("aten::sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values, Tensor(b!) indices) "
       "-> (Tensor(a!) values, Tensor(b!) indices)",
       [](const Tensor& self, int64_t dim, bool descending, Tensor values, Tensor indices) {
         sortOut(self, dim, descending, false, values, indices);
         return std::make_tuple(values, indices);
       })
        .shape(shapes::sortOp),
    op("aten::sort.values_stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False, "
       "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
       [](const Tensor& self, std::optional<bool> stable, int64_t dim, bool descending, Tensor values, Tensor indices) {
         sortOut(self, dim, descending, requireStable(stable), values, indices);
         return std::make_tuple(values, indices);
       })
        .shape(shapes::sortOp),
    op("aten::argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor",
       [](const Tensor& self, int64_t dim, bool descending) { return argsort(self, dim, descending); })
        .shape(shapes::argsortOp),
    op("aten::argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor",
       [](const Tensor& self, bool stable, int64_t dim, bool descending) {
         return argsort(self, dim, descending, stable);
       })
        .shape(shapes::argsortOp),
    op("aten::argsort.stable_out(Tensor self, *, bool stable, int dim=-1, bool descending=False, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, bool stable, int64_t dim, bool descending, Tensor out) {
         return argsortOut(self, dim, descending, stable, out);
       })
        .shape(shapes::argsortOp),
    op("aten::msort(Tensor self) -> Tensor", [](const Tensor& self) { return msort(self); })
        .derivative({"self: torch.zeros_like(self).scatter(0, self.sort(0)[1], grad)", "grad_fn: SortBackward0"})
        .shape(shapes::sameDtype),
    op("aten::msort.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", [](const Tensor& self, Tensor out) {
      return msortOut(self, out);
    }).shape(shapes::sameDtype), );

}  // namespace
}  // namespace kiln
