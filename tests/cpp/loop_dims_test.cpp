#include "kiln/tensor/loop_dims.h"

#include <gtest/gtest.h>

#include <vector>

using namespace kiln;

namespace {

std::vector<int64_t> vec(const DimVector& v) { return std::vector<int64_t>(v.begin(), v.end()); }

using Dims = std::vector<int64_t>;

}  // namespace

TEST(LoopDimsTest, OrderPutsTheSmallerStrideInside) {
  const DimVector shape{2, 3};
  DimVector contiguous[] = {DimVector{3, 1}};
  EXPECT_EQ(vec(loopDimOrder(shape, contiguous, 1)), (Dims{1, 0}));
  DimVector transposed[] = {DimVector{1, 2}};
  EXPECT_EQ(vec(loopDimOrder(shape, transposed, 1)), (Dims{0, 1}));
}

TEST(LoopDimsTest, FirstOperandWithStridesDecides) {
  const DimVector shape{2, 3};
  // The output (first) is contiguous, the input transposed: the output wins.
  DimVector both[] = {DimVector{3, 1}, DimVector{1, 2}};
  EXPECT_EQ(vec(loopDimOrder(shape, both, 2)), (Dims{1, 0}));
  // An operand not allocated yet (all strides 0) takes no part.
  DimVector unallocated_first[] = {DimVector{0, 0}, DimVector{1, 2}};
  EXPECT_EQ(vec(loopDimOrder(shape, unallocated_first, 2)), (Dims{0, 1}));
  // Equal strides: the smaller dim goes inside.
  DimVector tie[] = {DimVector{1, 1}};
  EXPECT_EQ(vec(loopDimOrder(DimVector{3, 5}, tie, 1)), (Dims{0, 1}));
  EXPECT_EQ(vec(loopDimOrder(DimVector{5, 3}, tie, 1)), (Dims{1, 0}));
}

TEST(LoopDimsTest, ReducedDimsOfReductionOutputsGoInnermost) {
  const DimVector shape{4, 5};
  // The output is reduced along dim 0 (stride 0 there); the input is contiguous.
  DimVector strides[] = {DimVector{0, 1}, DimVector{5, 1}};
  EXPECT_EQ(vec(loopDimOrder(shape, strides, 2, /*num_reduced_outputs=*/1)), (Dims{0, 1}));
  EXPECT_EQ(vec(loopDimOrder(shape, strides, 2)), (Dims{1, 0}));
}

TEST(LoopDimsTest, CoalesceMergesDimsEveryOperandWalksAsOne) {
  // Innermost first: a contiguous 3x4 is one dim of 12.
  DimVector shape{4, 3};
  DimVector strides[] = {DimVector{1, 4}, DimVector{1, 4}};
  coalesceLoopDims(shape, strides, 2);
  EXPECT_EQ(vec(shape), (Dims{12}));
  EXPECT_EQ(vec(strides[0]), (Dims{1}));
  EXPECT_EQ(vec(strides[1]), (Dims{1}));

  // One transposed operand keeps both dims.
  DimVector kept{4, 3};
  DimVector mixed[] = {DimVector{1, 4}, DimVector{3, 1}};
  coalesceLoopDims(kept, mixed, 2);
  EXPECT_EQ(vec(kept), (Dims{4, 3}));
  EXPECT_EQ(vec(mixed[1]), (Dims{3, 1}));
}

TEST(LoopDimsTest, CoalesceDropsSizeOneDims) {
  DimVector shape{4, 1, 3};
  DimVector strides[] = {DimVector{1, 99, 4}};
  coalesceLoopDims(shape, strides, 1);
  EXPECT_EQ(vec(shape), (Dims{12}));
  EXPECT_EQ(vec(strides[0]), (Dims{1}));

  DimVector ones{1, 1};
  DimVector zero[] = {DimVector{0, 0}};
  coalesceLoopDims(ones, zero, 1);
  EXPECT_EQ(vec(ones), (Dims{1}));
  EXPECT_EQ(vec(zero[0]), (Dims{0}));
}

TEST(LoopDimsTest, CoalesceGivesAScalarLoopOneDim) {
  DimVector shape;
  DimVector strides[] = {DimVector{}, DimVector{}};
  coalesceLoopDims(shape, strides, 2);
  EXPECT_EQ(vec(shape), (Dims{1}));
  EXPECT_EQ(vec(strides[0]), (Dims{0}));
  EXPECT_EQ(vec(strides[1]), (Dims{0}));
}
