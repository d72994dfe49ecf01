#include "kiln/tensor/loop_dims.h"

#include <utility>

namespace kiln {

DimVector loopDimOrder(IntArrayRef shape, const DimVector* strides, int num_operands, int num_reduced_outputs) {
  const size_t ndim = shape.size();
  DimVector perm(ndim);
  for (size_t i = 0; i < ndim; ++i) perm[i] = static_cast<int64_t>(ndim - 1 - i);
  // 1: dim1 goes inside dim0; -1: dim0 stays inside; 0: undecided.
  auto should_swap = [&](int64_t dim0, int64_t dim1) {
    for (int op = 0; op < num_operands; ++op) {
      int64_t s0 = strides[op][dim0], s1 = strides[op][dim1];
      if (op < num_reduced_outputs && ((s0 == 0) != (s1 == 0))) {
        return s1 == 0 ? 1 : -1;  // reduced dims innermost
      }
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[dim0] > shape[dim1]) return 1;
    }
    return 0;
  };
  // Insertion sort: stable, and the comparison is not a strict weak order.
  for (size_t i = 1; i < ndim; ++i) {
    size_t dim1 = i;
    for (size_t dim0 = i; dim0-- > 0;) {
      int cmp = should_swap(perm[dim0], perm[dim1]);
      if (cmp > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (cmp < 0) {
        break;
      }
    }
  }
  return perm;
}

void coalesceLoopDims(DimVector& shape, DimVector* strides, int num_operands) {
  const size_t ndim = shape.size();
  if (ndim == 0) {
    shape.assign(1, 1);
    for (int op = 0; op < num_operands; ++op) strides[op].assign(1, 0);
    return;
  }
  size_t prev = 0;
  for (size_t d = 1; d < ndim; ++d) {
    bool can_merge = shape[prev] == 1 || shape[d] == 1;
    if (!can_merge) {
      can_merge = true;
      for (int op = 0; op < num_operands && can_merge; ++op) {
        can_merge = strides[op][prev] * shape[prev] == strides[op][d];
      }
    }
    if (can_merge) {
      if (shape[prev] == 1) {
        for (int op = 0; op < num_operands; ++op) strides[op][prev] = strides[op][d];
      }
      shape[prev] *= shape[d];
    } else {
      ++prev;
      if (prev != d) {
        shape[prev] = shape[d];
        for (int op = 0; op < num_operands; ++op) strides[op][prev] = strides[op][d];
      }
    }
  }
  shape.resize(prev + 1);
  for (int op = 0; op < num_operands; ++op) strides[op].resize(prev + 1);
}

}  // namespace kiln
