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
