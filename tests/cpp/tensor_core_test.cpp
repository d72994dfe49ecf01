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
  EXPECT_NEAR(back.data<float>()[4], 1e-6f, 1e-7f);  // a float16 subnormal
  EXPECT_NEAR(back.data<float>()[5], 3.14159f, 2e-3f);
  Tensor bf = to(to(f, ScalarType::BFloat16), ScalarType::Float);
  EXPECT_NEAR(bf.data<float>()[5], 3.14159f, 2e-2f);
  EXPECT_EQ(bf.data<float>()[1], 1.0f);
}

namespace {

Tensor arangeFloat(int64_t n) {
  Tensor t = empty({n});
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(i % 1000) * 0.5f;
  return t;
}

float at2d(const Tensor& t, int64_t i, int64_t j) {
  const char* base = static_cast<const char*>(t.rawData());
  return *reinterpret_cast<const float*>(base + (i * t.strides()[0] + j * t.strides()[1]) * 4);
}

}  // namespace

TEST(TensorIter, ZeroDimAndEmptyOperands) {
  Tensor scalar = scalarToTensor(Scalar(2.0), ScalarType::Float);
  Tensor v = arangeFloat(5);
  Tensor r = add(v, scalar);
  ASSERT_EQ(r.dim(), 1);
  EXPECT_EQ(r.data<float>()[4], 4.0f);
  Tensor rr = add(scalar, scalar);
  EXPECT_EQ(rr.dim(), 0);
  EXPECT_EQ(rr.item().toDouble(), 4.0);
  Tensor e = empty({0, 3});
  Tensor re = add(e, arangeFloat(3));
  EXPECT_EQ(re.numel(), 0);
  EXPECT_EQ(re.sizes()[0], 0);
  EXPECT_EQ(re.sizes()[1], 3);
}

TEST(TensorIter, CoalescesContiguousDimsIntoOneLoop) {
  Tensor a = empty({4, 5, 6});
  TensorIter iter("test");
  iter.addOutput(Tensor()).addInput(a).addInput(a).build();
  EXPECT_EQ(iter.loopShape().size(), 1u);
  EXPECT_EQ(iter.loopShape()[0], 120);
  EXPECT_TRUE(iter.isContiguous());
}

TEST(TensorIter, ParallelSplitGivesTheSameResult) {
  // Large enough to cross the grain size, with a broadcast operand and a
  // transposed one so the split lands inside non-trivial index arithmetic.
  const int64_t rows = 700, cols = 300;
  Tensor base = arangeFloat(rows * cols);
  Tensor m = makeView(base, DimVector{rows, cols}, DimVector{cols, 1}, 0);
  Tensor mt = makeView(base, DimVector{cols, rows}, DimVector{1, cols}, 0);
  Tensor row = arangeFloat(rows);
  int saved = getNumThreads();
  setNumThreads(1);
  Tensor serial = add(mt, row);
  setNumThreads(4);
  Tensor parallel = add(mt, row);
  setNumThreads(saved);
  for (int64_t i = 0; i < cols; i += 7)
    for (int64_t j = 0; j < rows; j += 3) {
      float expected = at2d(m, j, i) + row.data<float>()[j];
      ASSERT_EQ(at2d(serial, i, j), expected);
      ASSERT_EQ(at2d(parallel, i, j), expected);
    }
}

TEST(TensorIter, InPlaceThroughAViewWritesTheBase) {
  Tensor base = arangeFloat(12);
  Tensor column = makeView(base, DimVector{3}, DimVector{4}, 1);  // base.view(3, 4)[:, 1]
  add_(column, scalarToTensor(Scalar(100.0)));
  EXPECT_EQ(base.data<float>()[1], 100.5f);
  EXPECT_EQ(base.data<float>()[5], 102.5f);
  EXPECT_EQ(base.data<float>()[2], 1.0f);  // untouched
}

TEST(TensorIter, OutputDtypeCastingRules) {
  Tensor ints = empty({3}, ScalarType::Long);
  for (int i = 0; i < 3; ++i) ints.data<int64_t>()[i] = i;
  // int += float is an error (result Float can't be cast to Long) ...
  EXPECT_THROW(add_(ints, scalarToTensor(Scalar(1.5))), Error);
  // ... float += int is fine, and computes in float.
  Tensor floats = arangeFloat(3);
  add_(floats, ints);
  EXPECT_EQ(floats.data<float>()[2], 3.0f);
  // An out= tensor of a wider dtype receives the converted result.
  Tensor out = empty({3}, ScalarType::Double);
  addOut(ints, ints, Scalar(int64_t{1}), out);
  EXPECT_EQ(out.data<double>()[2], 4.0);
}

TEST(Scalar, KeepsItsKind) {
  EXPECT_EQ(Scalar(int64_t{3}).type(), ScalarType::Long);
  EXPECT_EQ(Scalar(3.0).type(), ScalarType::Double);
  EXPECT_EQ(Scalar(true).type(), ScalarType::Bool);
  EXPECT_EQ((-Scalar(int64_t{3})).toLong(), -3);
}

TEST(Tensor, SizeOfZeroDimIsAnIndexError) {
  Tensor s = empty({});
  EXPECT_THROW(s.size(0), IndexError);
  EXPECT_THROW(s.stride(-1), IndexError);
  EXPECT_THROW(empty({2}).size(1), IndexError);
}

TEST(Copy, BroadcastsTheSourceOnly) {
  Tensor dst = empty({2, 3});
  Tensor row = arangeFloat(3);
  copy_(dst, row);
  EXPECT_EQ(dst.data<float>()[5], row.data<float>()[2]);
  Tensor small = empty({3});
  EXPECT_THROW(copy_(small, dst), Error);
}
