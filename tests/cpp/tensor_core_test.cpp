#include <gtest/gtest.h>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/pointwise.h"

using namespace kiln;

TEST(ScalarType, PromotionFollowsPyTorch) {
  EXPECT_EQ(promoteTypes(ScalarType::Byte, ScalarType::Char), ScalarType::Short);
  EXPECT_EQ(promoteTypes(ScalarType::Bool, ScalarType::Byte), ScalarType::Byte);
  EXPECT_EQ(promoteTypes(ScalarType::Long, ScalarType::Float), ScalarType::Float);
  EXPECT_EQ(promoteTypes(ScalarType::Half, ScalarType::BFloat16), ScalarType::Float);
}

TEST(ResultType, WrappedNumbersOnlyCountByCategory) {
  Tensor ints = empty({3}, ScalarType::Int);
  EXPECT_EQ(resultType(ints, Scalar(int64_t{2})), ScalarType::Int);
  EXPECT_EQ(resultType(ints, Scalar(2.5)), ScalarType::Float);
  Tensor bytes = empty({3}, ScalarType::Byte);
  Tensor zero_dim_long = empty({}, ScalarType::Long);
  EXPECT_EQ(resultType(bytes, zero_dim_long), ScalarType::Byte);
  Tensor zero_dim_double = empty({}, ScalarType::Double);
  EXPECT_EQ(resultType(bytes, zero_dim_double), ScalarType::Double);
  Tensor floats = empty({2}, ScalarType::Float);
  EXPECT_EQ(resultType(floats, zero_dim_double), ScalarType::Float);
}

TEST(Tensor, EmptyIsContiguousAndAligned) {
  Tensor t = empty({2, 3, 4});
  EXPECT_TRUE(t.isContiguous());
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.strides()[0], 12);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.rawData()) % 64, 0u);
  EXPECT_THROW(empty({-1}), Error);
}

TEST(TensorIter, BroadcastAddAndTransposedLayout) {
  Tensor a = empty({2, 3});
  Tensor b = empty({3});
  float* pa = a.data<float>();
  float* pb = b.data<float>();
  for (int i = 0; i < 6; ++i) pa[i] = static_cast<float>(i);
  for (int i = 0; i < 3; ++i) pb[i] = 10.0f * static_cast<float>(i);
  Tensor c = add(a, b);
  ASSERT_EQ(c.dim(), 2);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.data<float>()[i], static_cast<float>(i) + 10.0f * static_cast<float>(i % 3));

  // A transposed view: the output follows its layout, values follow its indices.
  Tensor t = makeView(a, DimVector{3, 2}, DimVector{1, 3}, 0);
  Tensor d = add(t, t);
  EXPECT_FALSE(t.isContiguous());
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      const char* base = static_cast<const char*>(d.rawData());
      float v = *reinterpret_cast<const float*>(base + (i * d.strides()[0] + j * d.strides()[1]) * 4);
      EXPECT_EQ(v, 2.0f * pa[j * 3 + i]);
    }
}

TEST(TensorIter, ShapeMismatchIsAnError) {
  Tensor a = empty({2, 3});
  Tensor b = empty({4});
  EXPECT_THROW(add(a, b), Error);
  Tensor small = empty({3});
  EXPECT_THROW(add_(small, a), Error);  // in-place cannot grow self
}

TEST(Copy, ConvertsBetweenDtypes) {
  Tensor f = empty({4});
  for (int i = 0; i < 4; ++i) f.data<float>()[i] = static_cast<float>(i) - 1.5f;
  Tensor l = to(f, ScalarType::Long);
  EXPECT_EQ(l.data<int64_t>()[0], -1);
  EXPECT_EQ(l.data<int64_t>()[3], 1);
  Tensor b = to(f, ScalarType::Bool);
  EXPECT_TRUE(b.data<bool>()[0]);
}

TEST(Copy, HalfAndBFloat16RoundTrip) {
  Tensor f = empty({6});
  const float values[] = {0.0f, 1.0f, -2.5f, 65504.0f, 1e-6f, 3.14159f};
  for (int i = 0; i < 6; ++i) f.data<float>()[i] = values[i];
  Tensor h = to(f, ScalarType::Half);
  Tensor back = to(h, ScalarType::Float);
  EXPECT_EQ(back.data<float>()[2], -2.5f);
  EXPECT_EQ(back.data<float>()[3], 65504.0f);
  EXPECT_NEAR(back.data<float>()[4], 1e-6f, 1e-7f);   // a float16 subnormal
  EXPECT_NEAR(back.data<float>()[5], 3.14159f, 2e-3f);
  Tensor bf = to(to(f, ScalarType::BFloat16), ScalarType::Float);
  EXPECT_NEAR(bf.data<float>()[5], 3.14159f, 2e-2f);
  EXPECT_EQ(bf.data<float>()[1], 1.0f);
}
