#pragma once
// How an elementwise loop over several operands orders and merges its dims,
// shared by the loop engine (TensorIter, iterator.h) and the fused kernels
// (fuser/fusion_group_op.cpp), so both walk memory the same way.
//
// Strides are per operand, in elements or bytes (any unit, one per operand),
// 0 along dims where the operand is broadcast.
#include "kiln/tensor/tensor.h"

namespace kiln {

// The order to walk the dims of a loop of `shape` in: perm[i] is the dim at
// loop depth i, innermost first. `strides[op][d]` is operand op's stride
// along dim d; an operand not allocated yet has all strides 0. As PyTorch's
// reorder_dimensions: the first operand with nonzero strides along two dims
// puts the smaller stride inside (on a tie, the smaller size); otherwise
// dims keep their order. The first `num_reduced_outputs` operands are the
// outputs of a reduction, whose reduced dims (stride 0) go innermost.
DimVector loopDimOrder(IntArrayRef shape, const DimVector* strides, int num_operands, int num_reduced_outputs = 0);

// Merges, in place, adjacent loop dims (`shape` innermost first, with
// `strides[op]` in the same order) that every operand walks as one: the
// outer stride is the inner stride times the inner size. Size-1 dims merge
// into their neighbours. An empty shape becomes {1} with stride 0.
void coalesceLoopDims(DimVector& shape, DimVector* strides, int num_operands);

}  // namespace kiln
