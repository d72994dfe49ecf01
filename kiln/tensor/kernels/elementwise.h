#pragma once
// Eager kernels made from one element function, for operators declared by
// their element expression alone (kiln/ops/elementwise_ops.h): the loop, the
// dtype rule and the out= checks, with the element math of kernel_math.h.
#include "kiln/tensor/kernels/kernel_math.h"
#include "kiln/tensor/kernels/loops.h"

namespace kiln::kernels {

// out = f(self) for a floating self, in self's dtype; other dtypes raise as
// PyTorch's CPU kernels do ("silu_cpu" not implemented for 'Long'). An
// undefined `out` is allocated; a defined one must have self's dtype.
template <typename F>
Tensor floatElementwise(const char* name, const Tensor& self, const Tensor& out, const F& f) {
  KILN_CHECK(self.defined(), name, ": expected a defined tensor");
  KILN_CHECK(isFloatingType(self.dtype()), "\"", name, "_cpu\" not implemented for '",
             scalarTypeShortName(self.dtype()), "'");
  checkExactOutDtype(out, self.dtype(), name);
  TensorIter iter(name);
  iter.addOutput(out).addInput(self).build();
  KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), name,
                               [&] { cpuKernel<scalar_t, scalar_t>(iter, [&f](scalar_t x) { return f(x); }); });
  return iter.output();
}

}  // namespace kiln::kernels

namespace kiln::kernels {

// Which dtypes an element kernel with number parameters accepts, and how it
// refuses the others (PyTorch's messages).
enum class ParamDtypes {
  Floating,  // "elu_cpu" not implemented for 'Long'
  NoBool,    // every arithmetic dtype: "threshold_cpu" not implemented for 'Bool'
  Clamp,     // hardtanh: integers too; "Bool inputs not supported for hardtanh"
};

// out = f(self) where `make<T>()` returns the element function with its
// number parameters already converted to T (once, not per element). The
// result keeps self's dtype; an undefined `out` is allocated.
template <ParamDtypes dtypes, typename Make>
Tensor paramElementwise(const char* name, const Tensor& self, const Tensor& out, const Make& make) {
  KILN_CHECK(self.defined(), name, ": expected a defined tensor");
  const ScalarType dtype = self.dtype();
  if (dtypes == ParamDtypes::Clamp) KILN_CHECK(dtype != ScalarType::Bool, "Bool inputs not supported for ", name);
  const bool floating = isFloatingType(dtype);
  KILN_CHECK(floating || (dtypes != ParamDtypes::Floating && isIntegralType(dtype, false)), "\"", name,
             "_cpu\" not implemented for '", scalarTypeShortName(dtype), "'");
  checkExactOutDtype(out, dtype, name);
  TensorIter iter(name);
  iter.addOutput(out).addInput(self).build();
  auto run = [&]<typename T>() {
    auto f = make.template operator()<T>();
    cpuKernel<T, T>(iter, [&f](T x) { return f(x); });
  };
  if constexpr (dtypes == ParamDtypes::Floating) {
    KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), name, [&] { run.template operator()<scalar_t>(); });
  } else if (floating) {
    KILN_DISPATCH_FLOATING_TYPES(iter.computeDtype(), name, [&] { run.template operator()<scalar_t>(); });
  } else {
    KILN_DISPATCH_INTEGRAL_TYPES(iter.computeDtype(), name, [&] { run.template operator()<scalar_t>(); });
  }
  return iter.output();
}

// A number parameter in the element type, as PyTorch converts it: integer
// kernels truncate a float bound first (hardtanh's legacy behaviour).
template <typename T>
T paramAs(const Scalar& s) {
  if constexpr (std::is_integral_v<T>) {
    return ::kiln::checkedScalarTo<T>(Scalar(s.toLong()));
  } else {
    return ::kiln::checkedScalarTo<T>(s);
  }
}

}  // namespace kiln::kernels
