#pragma once
// Copies and dtype conversion: the operations every kernel relies on.
#include "kiln/tensor/tensor.h"

namespace kiln {

// Writes src (broadcast to dst's shape, converted to dst's dtype) into dst.
Tensor& copy_(Tensor& dst, const Tensor& src);
inline Tensor copy_(Tensor&& dst, const Tensor& src) {
  copy_(dst, src);
  return dst;
}
// `t` in another dtype; returns `t` itself when nothing changes and !copy.
Tensor to(const Tensor& t, ScalarType dtype, bool copy = false);
// `t` if already contiguous, else a contiguous copy.
Tensor contiguous(const Tensor& t);
// A new tensor with the same values (contiguous layout).
Tensor clone(const Tensor& t);

}  // namespace kiln
