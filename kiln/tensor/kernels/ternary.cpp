// Pointwise ops of several inputs: where, clamp, addcmul, addcdiv, lerp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/kernel_math.h"
#include "kiln/tensor/kernels/loops.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/scalar_convert.h"

namespace kiln {

namespace {

Tensor whereOp(const Tensor& condition, const Tensor& self, const Tensor& other, const Tensor& out) {
  KILN_CHECK(condition.defined() && self.defined() && other.defined(), "where: expected defined tensors");
  KILN_CHECK(condition.dtype() == ScalarType::Bool || condition.dtype() == ScalarType::Byte,
             "where expected condition to be a boolean tensor, but got a tensor with dtype ",
             scalarTypeShortName(condition.dtype()));
  const ScalarType dtype = resultType(self, other);
  // A Python number becomes a tensor of the result dtype, checked as a fill value.
  for (const Tensor* t : {&self, &other}) {
    if (t->isWrappedNumber()) checkScalarFits(t->item(), dtype);
  }
  kernels::checkExactOutDtype(out, dtype, "where");
  // The condition keeps its own dtype, so the iterator must not promote it.
  TensorIter iter("where");
  iter.addOutput(out)
      .addInput(to(condition, ScalarType::Bool))
      .addInput(to(self, dtype))
      .addInput(to(other, dtype))
      .promoteInputs(false)
      .computeDtype(dtype)
      .build();
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(dtype, "where", [&] {
    kernels::cpuKernel<scalar_t, bool, scalar_t, scalar_t>(
        iter, [](bool c, scalar_t a, scalar_t b) { return kernels::select(c, a, b); });
  });
  return iter.output();
}

}  // namespace

Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other) {
  return whereOp(condition, self, other, Tensor());
}

Tensor& whereOut(const Tensor& condition, const Tensor& self, const Tensor& other, Tensor& out) {
  whereOp(condition, self, other, out);
  return out;
}

std::vector<Tensor> where(const Tensor& condition) {
  KILN_CHECK(condition.defined(), "where: expected a defined condition");
  const Tensor mask = contiguous(to(condition, ScalarType::Bool));
  const bool* data = static_cast<const bool*>(mask.rawData());
  const int64_t numel = mask.numel();
  // A 0-dim condition counts as one dim of size 1, as in PyTorch.
  const DimVector sizes = condition.dim() == 0 ? DimVector{1} : DimVector(condition.sizes());
  const size_t ndim = sizes.size();
  const int64_t count = std::count(data, data + numel, true);
  std::vector<Tensor> result;
  std::vector<int64_t*> columns;
  for (size_t d = 0; d < ndim; ++d) {
    result.push_back(empty({count}, ScalarType::Long));
    columns.push_back(result.back().data<int64_t>());
  }
  DimVector index(ndim, 0);
  for (int64_t i = 0, k = 0; i < numel; ++i) {
    if (data[i]) {
      for (size_t d = 0; d < ndim; ++d) columns[d][k] = index[d];
      ++k;
    }
    for (size_t d = ndim; d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return result;
}

namespace {

bool isNan(const std::optional<Scalar>& s) { return s && s->isFloatingPoint() && std::isnan(s->toDouble()); }

// max(x, lo) and min(x, hi) that keep a NaN x. Written with the bound first,
// the way x86's maxps/minps compare, so the compiler emits those directly.
template <typename T>
T atLeast(T x, T lo) {
  return lo > x ? lo : x;
}
template <typename T>
T atMost(T x, T hi) {
  return hi < x ? hi : x;
}

// clamp with number bounds. `nan_fills`: a NaN bound makes the result all
// NaN (clamp with both bounds, clamp_min, clamp_max); otherwise a NaN bound
// is ignored, as PyTorch's one-sided clamp does.
Tensor clampScalarOp(const char* name, const Tensor& self, const std::optional<Scalar>& min,
                     const std::optional<Scalar>& max, const Tensor& out, bool exact_out, bool nan_fills) {
  KILN_CHECK(self.defined(), name, ": expected a defined tensor");
  KILN_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  std::vector<Tensor> operands{self};
  if (min) operands.push_back(scalarToTensor(*min));
  if (max) operands.push_back(scalarToTensor(*max));
  const ScalarType dtype = resultType(operands);
  if (exact_out) kernels::checkExactOutDtype(out, dtype, name);
  TensorIter iter(name);
  iter.addOutput(out).addInput(self).computeDtype(dtype).build();
  const bool fill_nan = nan_fills && (isNan(min) || isNan(max));
  KILN_DISPATCH_ALL_TYPES(dtype, "clamp", [&] {
    using T = scalar_t;
    if (fill_nan) {
      kernels::cpuKernel<T, T>(iter, [](T) { return std::numeric_limits<T>::quiet_NaN(); });
    } else if (min && max) {
      const T lo = kernels::checkedScalarTo<T>(*min, name), hi = kernels::checkedScalarTo<T>(*max, name);
      kernels::cpuKernel<T, T>(iter, [lo, hi](T x) { return atMost(atLeast(x, lo), hi); });
    } else if (min) {
      const T lo = kernels::checkedScalarTo<T>(*min, name);
      kernels::cpuKernel<T, T>(iter, [lo](T x) { return atLeast(x, lo); });
    } else {
      const T hi = kernels::checkedScalarTo<T>(*max, name);
      kernels::cpuKernel<T, T>(iter, [hi](T x) { return atMost(x, hi); });
    }
  });
  return iter.output();
}

// clamp with tensor bounds; a NaN bound or element gives NaN.
Tensor clampTensorOp(const char* name, const Tensor& self, const Tensor& min, const Tensor& max, const Tensor& out) {
  KILN_CHECK(self.defined(), name, ": expected a defined tensor");
  KILN_CHECK(min.defined() || max.defined(), "torch.clamp: At least one of 'min' or 'max' must not be None");
  Tensor result = out;
  if (!max.defined()) return result.defined() ? maximumOut(self, min, result) : maximum(self, min);
  if (!min.defined()) return result.defined() ? minimumOut(self, max, result) : minimum(self, max);
  TensorIter iter(name);
  iter.addOutput(out).addInput(self).addInput(min).addInput(max).build();
  KILN_DISPATCH_ALL_TYPES(iter.computeDtype(), "clamp", [&] {
    using T = scalar_t;
    kernels::cpuKernel<T, T, T, T>(iter, [](T x, T lo, T hi) {
      const T clamped = atMost(atLeast(x, lo), hi);
      return kernels::select(lo != lo || hi != hi, std::numeric_limits<T>::quiet_NaN(), clamped);
    });
  });
  return iter.output();
}

}  // namespace

Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return clampScalarOp("clamp", self, min, max, Tensor(), false, min && max);
}

Tensor& clamp_(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  clampScalarOp("clamp_", self, min, max, self, false, min && max);
  return self;
}

Tensor& clampOut(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max, Tensor& out) {
  clampScalarOp("clamp", self, min, max, out, true, min && max);
  return out;
}

Tensor clamp(const Tensor& self, const Tensor& min, const Tensor& max) {
  return clampTensorOp("clamp", self, min, max, Tensor());
}

Tensor& clamp_(Tensor& self, const Tensor& min, const Tensor& max) {
  clampTensorOp("clamp_", self, min, max, self);
  return self;
}

Tensor& clampOut(const Tensor& self, const Tensor& min, const Tensor& max, Tensor& out) {
  clampTensorOp("clamp", self, min, max, out);
  return out;
}

Tensor clampMin(const Tensor& self, const Scalar& min) {
  return clampScalarOp("clamp_min", self, min, std::nullopt, Tensor(), false, true);
}

Tensor& clampMin_(Tensor& self, const Scalar& min) {
  clampScalarOp("clamp_min_", self, min, std::nullopt, self, false, true);
  return self;
}

Tensor& clampMinOut(const Tensor& self, const Scalar& min, Tensor& out) {
  clampScalarOp("clamp_min", self, min, std::nullopt, out, true, true);
  return out;
}

Tensor clampMax(const Tensor& self, const Scalar& max) {
  return clampScalarOp("clamp_max", self, std::nullopt, max, Tensor(), false, true);
}

Tensor& clampMax_(Tensor& self, const Scalar& max) {
  clampScalarOp("clamp_max_", self, std::nullopt, max, self, false, true);
  return self;
}

Tensor& clampMaxOut(const Tensor& self, const Scalar& max, Tensor& out) {
  clampScalarOp("clamp_max", self, std::nullopt, max, out, true, true);
  return out;
}

namespace {

// out = f(self, tensor1, tensor2) in their common dtype. PyTorch fails on an
// in-place or out= tensor of another dtype, so these must match it exactly.
template <typename Kernel>
Tensor ternaryOp(const char* name, const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Tensor& out,
                 const Kernel& kernel) {
  KILN_CHECK(self.defined() && tensor1.defined() && tensor2.defined(), name, ": expected defined tensors");
  const Tensor operands[] = {self, tensor1, tensor2};
  kernels::checkExactOutDtype(out, resultType(ArrayRef<Tensor>(operands, 3)), name);
  TensorIter iter(name);
  iter.addOutput(out).addInput(self).addInput(tensor1).addInput(tensor2).build();
  kernel(iter);
  return iter.output();
}

Tensor addcmulOp(const char* name, const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                 const Scalar& value, const Tensor& out) {
  return ternaryOp(name, self, tensor1, tensor2, out, [&](TensorIter& iter) {
    KILN_DISPATCH_ALL_TYPES(iter.computeDtype(), "addcmul", [&] {
      using T = scalar_t;
      const T v = kernels::checkedScalarTo<T>(value, "addcmul");
      kernels::cpuKernel<T, T, T, T>(iter, [v](T a, T b, T c) { return k_addcmul(a, v, b, c); });
    });
  });
}

Tensor addcdivOp(const char* name, const Tensor& self, const Tensor& tensor1, const Tensor& tensor2,
                 const Scalar& value, const Tensor& out) {
  KILN_CHECK(tensor1.defined() && tensor2.defined(), name, ": expected defined tensors");
  KILN_CHECK(!isIntegralType(tensor1.dtype(), true) || !isIntegralType(tensor2.dtype(), true),
             "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a "
             "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
             "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
             "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
             "(input + value * tensor1 / tensor2), for all dtypes.");
  return ternaryOp(name, self, tensor1, tensor2, out, [&](TensorIter& iter) {
    KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), "addcdiv", [&] {
      using T = scalar_t;
      const T v = kernels::checkedScalarTo<T>(value, "addcdiv");
      kernels::cpuKernel<T, T, T, T>(iter, [v](T a, T b, T c) { return a + v * b / c; });
    });
  });
}

}  // namespace

Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  return addcmulOp("addcmul", self, tensor1, tensor2, value, Tensor());
}

Tensor& addcmul_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  addcmulOp("addcmul_", self, tensor1, tensor2, value, self);
  return self;
}

Tensor& addcmulOut(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value, Tensor& out) {
  addcmulOp("addcmul", self, tensor1, tensor2, value, out);
  return out;
}

Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  return addcdivOp("addcdiv", self, tensor1, tensor2, value, Tensor());
}

Tensor& addcdiv_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  addcdivOp("addcdiv_", self, tensor1, tensor2, value, self);
  return self;
}

Tensor& addcdivOut(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value, Tensor& out) {
  addcdivOp("addcdiv", self, tensor1, tensor2, value, out);
  return out;
}

namespace {

void checkLerpOperand(const Tensor& self, const Tensor& t, const char* what) {
  KILN_CHECK(self.defined() && t.defined(), "lerp: expected defined tensors");
  KILN_CHECK(t.dtype() == self.dtype(), "lerp: expected dtype ", scalarTypeName(self.dtype()), " for `", what,
             "` but got dtype ", scalarTypeName(t.dtype()));
}

// out= casts with a number weight, but must match self's dtype with a tensor weight, as in PyTorch.
Tensor lerpScalarOp(const char* name, const Tensor& self, const Tensor& end, const Scalar& weight, const Tensor& out) {
  checkLerpOperand(self, end, "end");
  TensorIter iter(name);
  iter.addOutput(out).addInput(self).addInput(end).build();
  KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), "lerp", [&] {
    using T = scalar_t;
    const T w = kernels::checkedScalarTo<T>(weight, "lerp");
    // k_lerp (PyTorch 1.13's CPU formula) with its branch taken once, outside the loop.
    if (w < T(0.5)) {
      kernels::cpuKernel<T, T, T>(iter, [w](T a, T b) { return k_fma(w, b - a, a); });
    } else {
      const T w1 = T(1) - w;
      kernels::cpuKernel<T, T, T>(iter, [w1](T a, T b) { return k_fma(-(b - a), w1, b); });
    }
  });
  return iter.output();
}

Tensor lerpTensorOp(const char* name, const Tensor& self, const Tensor& end, const Tensor& weight, const Tensor& out) {
  checkLerpOperand(self, end, "end");
  checkLerpOperand(self, weight, "weight");
  kernels::checkExactOutDtype(out, self.dtype(), name);
  return ternaryOp(name, self, end, weight, out, [](TensorIter& iter) {
    KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), "lerp", [&] {
      kernels::cpuKernel<scalar_t, scalar_t, scalar_t, scalar_t>(
          iter, [](scalar_t a, scalar_t b, scalar_t w) { return k_lerp(a, b, w); });
    });
  });
}

}  // namespace

Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight) {
  return lerpScalarOp("lerp", self, end, weight, Tensor());
}

Tensor& lerp_(Tensor& self, const Tensor& end, const Scalar& weight) {
  lerpScalarOp("lerp_", self, end, weight, self);
  return self;
}

Tensor& lerpOut(const Tensor& self, const Tensor& end, const Scalar& weight, Tensor& out) {
  lerpScalarOp("lerp", self, end, weight, out);
  return out;
}

Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  return lerpTensorOp("lerp", self, end, weight, Tensor());
}

Tensor& lerp_(Tensor& self, const Tensor& end, const Tensor& weight) {
  lerpTensorOp("lerp_", self, end, weight, self);
  return self;
}

Tensor& lerpOut(const Tensor& self, const Tensor& end, const Tensor& weight, Tensor& out) {
  lerpTensorOp("lerp", self, end, weight, out);
  return out;
}

}  // namespace kiln
