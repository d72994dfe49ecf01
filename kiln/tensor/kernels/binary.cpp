// Binary pointwise kernels.
#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/loops.h"
#include "kiln/tensor/pointwise.h"

namespace kiln {

namespace {

// Builds the iterator for out = f(self, other) and returns the result tensor.
template <typename Kernel>
Tensor binaryOp(const char* name, const Tensor& self, const Tensor& other, const Tensor& out, Kernel kernel) {
  TensorIter iter(name);
  iter.addOutput(out).addInput(self).addInput(other).build();
  kernel(iter);
  return iter.output();
}

void addKernel(TensorIter& iter, const Scalar& alpha) {
  KILN_CHECK(isFloatingType(iter.computeDtype()) || !alpha.isFloatingPoint(),
             "For integral input tensors, argument alpha must not be a floating point number.");
  KILN_CHECK(iter.computeDtype() != ScalarType::Bool || alpha.isBoolean() || alpha.toLong() == 1 ||
                 alpha.toLong() == 0,
             "Boolean alpha only supported for Boolean results.");
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.computeDtype(), "add", [&] {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      bool a = alpha.toBool();
      kernels::cpuKernel<bool, bool, bool>(iter, [a](bool x, bool y) { return x || (a && y); });
    } else {
      scalar_t a = alpha.to<scalar_t>();
      if (a == scalar_t(1)) {
        kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [](scalar_t x, scalar_t y) { return x + y; });
      } else {
        kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [a](scalar_t x, scalar_t y) { return x + a * y; });
      }
    }
  });
}

}  // namespace

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return binaryOp("add", self, other, Tensor(), [&](TensorIter& iter) { addKernel(iter, alpha); });
}

Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha) {
  binaryOp("add_", self, other, self, [&](TensorIter& iter) { addKernel(iter, alpha); });
  return self;
}

Tensor& addOut(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out) {
  binaryOp("add", self, other, out, [&](TensorIter& iter) { addKernel(iter, alpha); });
  return out;
}

}  // namespace kiln
