#include "kiln/tensor/copy.h"

#include <cstring>

#include "kiln/tensor/kernels/loops.h"

namespace kiln {

namespace {

template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace

Tensor& copy_(Tensor& dst, const Tensor& src) {
  KILN_CHECK(dst.defined() && src.defined(), "copy_: undefined tensor");
  if (dst.numel() == 0) return dst;
  if (dst.isSame(src)) return dst;
  // Same dtype, both contiguous, same shape: one memcpy.
  if (dst.dtype() == src.dtype() && dst.isContiguous() && src.isContiguous() && dst.numel() == src.numel() &&
      dst.dim() == src.dim() && std::equal(dst.sizes().begin(), dst.sizes().end(), src.sizes().begin())) {
    std::memmove(dst.rawData(), src.rawData(), dst.nbytes());
    return dst;
  }
  TensorIter iter("copy_");
  iter.addOutput(dst).addInput(src).promoteInputs(false).checkOutputCast(false).build();
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(dst.dtype(), "copy_", [&] {
    using to_t = scalar_t;
    KILN_DISPATCH_ALL_TYPES_AND_BOOL(src.dtype(), "copy_", [&] {
      kernels::cpuKernel<to_t, scalar_t>(iter, [](scalar_t v) { return convert<to_t>(v); });
    });
  });
  return dst;
}

Tensor to(const Tensor& t, ScalarType dtype, bool copy) {
  if (t.dtype() == dtype && !copy) return t;
  Tensor out = empty(t.sizes(), dtype);
  copy_(out, t);
  return out;
}

Tensor contiguous(const Tensor& t) {
  if (t.isContiguous()) return t;
  return clone(t);
}

Tensor clone(const Tensor& t) {
  Tensor out = empty(t.sizes(), t.dtype());
  copy_(out, t);
  return out;
}

}  // namespace kiln
