#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/tensor/parallel.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/sort.h"

using namespace kiln;

namespace {

// 0, 1, 2, ... in `dtype`, shaped `sizes`.
Tensor iota(IntArrayRef sizes, ScalarType dtype = ScalarType::Float) {
  Tensor t = empty(sizes, dtype);
  KILN_DISPATCH_ALL_TYPES(dtype, "iota", [&] {
    for (int64_t i = 0; i < t.numel(); ++i) t.data<scalar_t>()[i] = static_cast<scalar_t>(i);
  });
  return t;
}

Tensor filled(IntArrayRef sizes, float value) {
  Tensor t = empty(sizes);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = value;
  return t;
}

template <typename T>
T at(const Tensor& t, int64_t i) {
  return t.data<T>()[i];
}

}  // namespace

TEST(ReduceSum, DimsKeepdimAndPromotion) {
  Tensor x = iota({2, 3, 4});
  Tensor s = sum(x, DimVector{0, 2});
  ASSERT_EQ(s.dim(), 1);
  EXPECT_EQ(s.sizes()[0], 3);
  // Element j reduces 12i + 4j + k over i < 2, k < 4.
  for (int j = 0; j < 3; ++j) EXPECT_EQ(at<float>(s, j), 48.0f + 32.0f * j + 12.0f);
  Tensor k = sum(x, DimVector{-1}, true);
  EXPECT_EQ(k.dim(), 3);
  EXPECT_EQ(k.sizes()[2], 1);
  Tensor ints = sum(iota({5}, ScalarType::Int));
  EXPECT_EQ(ints.dtype(), ScalarType::Long);
  EXPECT_EQ(at<int64_t>(ints, 0), 10);
  EXPECT_EQ(sum(x, std::nullopt, false, ScalarType::Double).dtype(), ScalarType::Double);
}

TEST(ReduceSum, TransposedInputWalksInMemoryOrder) {
  Tensor x = iota({3, 4});
  Tensor t = makeView(x, DimVector{4, 3}, DimVector{1, 4}, 0);  // x.T
  Tensor rows = sum(t, DimVector{1});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(at<float>(rows, i), static_cast<float>(i + (4 + i) + (8 + i)));
  Tensor cols = sum(t, DimVector{0});
  for (int j = 0; j < 3; ++j) EXPECT_EQ(at<float>(cols, j), static_cast<float>(4 * j * 4 + 6));
}

TEST(ReduceSum, BroadcastStrideZeroInputs) {
  Tensor x = iota({3});
  Tensor rows = makeView(x, DimVector{4, 3}, DimVector{0, 1}, 0);  // x expanded to 4 rows
  Tensor s = sum(rows, DimVector{0});
  for (int j = 0; j < 3; ++j) EXPECT_EQ(at<float>(s, j), 4.0f * static_cast<float>(j));
  auto [values, indices] = max(rows, 0);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(at<int64_t>(indices, j), 0);
  Tensor cols = makeView(x, DimVector{3, 5}, DimVector{1, 0}, 0);  // each element repeated 5 times
  EXPECT_EQ(at<float>(sum(cols, DimVector{1}), 2), 10.0f);
  EXPECT_EQ(at<float>(sum(cols), 0), 15.0f);
}

TEST(ReduceSum, PairwiseSummationKeepsFloat32Exact) {
  // A running float32 sum of ones stops growing at 2^24; pairwise summation does not.
  const int64_t n = (int64_t{1} << 24) + 4096;
  EXPECT_EQ(at<float>(sum(filled({n}, 1.0f)), 0), static_cast<float>(n));
  EXPECT_EQ(at<float>(sum(filled({n, 1}, 1.0f), DimVector{0}), 0), static_cast<float>(n));
}

TEST(ReduceSum, EmptyAndZeroDim) {
  EXPECT_EQ(at<float>(sum(empty({0, 3})), 0), 0.0f);
  Tensor rows = sum(empty({0, 3}), DimVector{0});
  EXPECT_EQ(rows.numel(), 3);
  EXPECT_EQ(at<float>(rows, 2), 0.0f);
  EXPECT_TRUE(std::isnan(at<float>(mean(empty({0})), 0)));
  Tensor scalar = filled({}, 2.5f);
  EXPECT_EQ(sum(scalar, DimVector{-1}).dim(), 0);
  EXPECT_EQ(at<int64_t>(prod(empty({0}, ScalarType::Int)), 0), 1);
}

TEST(ReduceSum, BadDimsRaise) {
  Tensor x = iota({2, 3});
  EXPECT_THROW(sum(x, DimVector{0, -2}), Error);
  EXPECT_THROW(sum(x, DimVector{2}), IndexError);
  EXPECT_THROW(mean(iota({3}, ScalarType::Long)), Error);
}

TEST(ReduceExtremum, NanPropagatesAndTiesGoFirst) {
  Tensor x = filled({6}, 1.0f);
  x.data<float>()[2] = 5.0f;
  x.data<float>()[4] = 5.0f;
  auto [values, indices] = max(x, 0);
  EXPECT_EQ(at<float>(values, 0), 5.0f);
  EXPECT_EQ(at<int64_t>(indices, 0), 2);
  EXPECT_EQ(at<int64_t>(argmin(x), 0), 0);
  x.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(at<float>(max(x), 0)));
  EXPECT_TRUE(std::isnan(at<float>(amin(x), 0)));
  EXPECT_EQ(at<int64_t>(argmax(x), 0), 3);
  EXPECT_THROW(max(empty({0})), Error);
  EXPECT_THROW(amax(empty({2, 0}), DimVector{1}), IndexError);
  EXPECT_EQ(amax(empty({0, 2}), DimVector{1}).numel(), 0);
}

TEST(ReduceExtremum, FlatArgmaxCountsInRowMajorOrder) {
  Tensor x = iota({3, 4});
  Tensor t = makeView(x, DimVector{4, 3}, DimVector{1, 4}, 0);  // largest value 11 sits at t[3][2]
  EXPECT_EQ(at<int64_t>(argmax(t), 0), 3 * 3 + 2);
}

TEST(ReduceAllAny, Uint8StaysUint8) {
  Tensor bytes = iota({4}, ScalarType::Byte);
  Tensor a = all(bytes);
  EXPECT_EQ(a.dtype(), ScalarType::Byte);
  EXPECT_EQ(at<uint8_t>(a, 0), 0);
  EXPECT_EQ(any(iota({4})).dtype(), ScalarType::Bool);
  EXPECT_TRUE(at<bool>(all(empty({0})), 0));
}

TEST(ReduceMoments, CorrectionAndTwoPassAccuracy) {
  Tensor x = iota({5}, ScalarType::Double);
  EXPECT_DOUBLE_EQ(at<double>(var(x), 0), 2.5);
  EXPECT_DOUBLE_EQ(at<double>(var(x, std::nullopt, 0), 0), 2.0);
  EXPECT_TRUE(std::isinf(at<double>(var(x, std::nullopt, 7), 0)));
  // A large offset cancels badly in a one-pass formula.
  Tensor shifted = empty({4}, ScalarType::Float);
  const float values[] = {1e4f + 1, 1e4f + 2, 1e4f + 3, 1e4f + 4};
  for (int i = 0; i < 4; ++i) shifted.data<float>()[i] = values[i];
  EXPECT_NEAR(at<float>(stdDev(shifted), 0), std::sqrt(5.0f / 3.0f), 1e-6);
  EXPECT_THROW(var(iota({3}, ScalarType::Int)), Error);
}

TEST(ReduceNorm, Orders) {
  Tensor x = empty({3});
  const float values[] = {3.0f, -4.0f, 0.0f};
  for (int i = 0; i < 3; ++i) x.data<float>()[i] = values[i];
  EXPECT_FLOAT_EQ(at<float>(norm(x, Scalar(2)), 0), 5.0f);
  EXPECT_FLOAT_EQ(at<float>(norm(x, Scalar(1)), 0), 7.0f);
  EXPECT_FLOAT_EQ(at<float>(norm(x, Scalar(0)), 0), 2.0f);
  EXPECT_FLOAT_EQ(at<float>(norm(x, Scalar(std::numeric_limits<double>::infinity())), 0), 4.0f);
  EXPECT_FLOAT_EQ(at<float>(norm(x, Scalar(-std::numeric_limits<double>::infinity())), 0), 0.0f);
  EXPECT_FLOAT_EQ(at<float>(norm(empty({0}), Scalar(-1)), 0), 0.0f);
}

TEST(ReduceSoftmax, StableForLargeInputs) {
  Tensor x = empty({2, 3});
  const float values[] = {1000.0f, 1001.0f, 1002.0f, -1000.0f, 0.0f, 1000.0f};
  for (int i = 0; i < 6; ++i) x.data<float>()[i] = values[i];
  Tensor s = softmax(x, 1);
  EXPECT_NEAR(at<float>(s, 0) + at<float>(s, 1) + at<float>(s, 2), 1.0f, 1e-6);
  EXPECT_NEAR(at<float>(s, 5), 1.0f, 1e-6);
  Tensor l = logSoftmax(x, -1);
  EXPECT_NEAR(at<float>(l, 2), -std::log1p(std::exp(-1.0f) + std::exp(-2.0f)), 1e-6);
  EXPECT_NEAR(at<float>(l, 3), -2000.0f, 1e-3);
  Tensor lse = logsumexp(x, DimVector{1});
  EXPECT_NEAR(at<float>(lse, 1), 1000.0f, 1e-3);
  EXPECT_THROW(softmax(iota({3}, ScalarType::Long), 0), Error);
  // Along dim 0, the vectorized across-lines path.
  Tensor cols = softmax(iota({4, 19}), 0);
  for (int j = 0; j < 19; ++j) {
    float total = 0;
    for (int i = 0; i < 4; ++i) total += at<float>(cols, i * 19 + j);
    EXPECT_NEAR(total, 1.0f, 1e-6);
  }
}

TEST(ReduceScan, CumsumPromotesAndAccumulates) {
  Tensor c = cumsum(iota({2, 3}, ScalarType::Int), 1);
  EXPECT_EQ(c.dtype(), ScalarType::Long);
  EXPECT_EQ(at<int64_t>(c, 2), 3);
  EXPECT_EQ(at<int64_t>(c, 5), 12);
  Tensor p = cumprod(iota({2, 3}), 0);
  EXPECT_EQ(at<float>(p, 5), 10.0f);
  EXPECT_THROW(cumsum(iota({2}), 1), IndexError);
}

TEST(ReduceParallel, ThreadsAgreeWithOneThread) {
  Tensor x = iota({1 << 20});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 1000) * 0.001f;
  Tensor m = makeView(x, DimVector{1024, 1024}, DimVector{1024, 1}, 0);
  const int before = getNumThreads();
  setNumThreads(1);
  const float one = at<float>(sum(x), 0);
  Tensor cols_one = sum(m, DimVector{0});
  setNumThreads(2);
  const float two = at<float>(sum(x), 0);
  Tensor cols_two = sum(m, DimVector{0});
  setNumThreads(before);
  EXPECT_NEAR(one, two, 1e-6 * std::abs(one));
  for (int j = 0; j < 1024; ++j) EXPECT_NEAR(at<float>(cols_one, j), at<float>(cols_two, j), 1e-3);
}

TEST(ReduceSort, NanLastZerosEqualAndStableTies) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float in[] = {1.0f, nan, -0.0f, 0.0f, -inf, nan, inf, -0.0f};
  Tensor x = empty({8});
  for (int i = 0; i < 8; ++i) x.data<float>()[i] = in[i];
  auto [up, up_idx] = sort(x, 0, false, true);
  const int64_t expect_up[] = {4, 2, 3, 7, 0, 6, 1, 5};  // -0.0 == 0.0, NaNs last, ties in input order
  for (int i = 0; i < 8; ++i) EXPECT_EQ(at<int64_t>(up_idx, i), expect_up[i]);
  EXPECT_TRUE(std::signbit(at<float>(up, 1)));
  EXPECT_FALSE(std::signbit(at<float>(up, 2)));
  Tensor down_idx = argsort(x, -1, true, true);
  const int64_t expect_down[] = {1, 5, 6, 0, 2, 3, 7, 4};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(at<int64_t>(down_idx, i), expect_down[i]);
}

TEST(ReduceSort, RadixAlongOuterDimKeepsTiesInOrder) {
  // 600 rows (above the radix threshold), sorted along dim 0 of a [600, 3] tensor.
  Tensor x = iota({600, 3}, ScalarType::Long);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<int64_t>()[i] = (i * 7919) % 5 - 2;
  auto [values, indices] = sort(x, 0, true, true);
  for (int64_t col = 0; col < 3; ++col) {
    for (int64_t row = 1; row < 600; ++row) {
      const int64_t prev = at<int64_t>(values, (row - 1) * 3 + col), cur = at<int64_t>(values, row * 3 + col);
      ASSERT_GE(prev, cur);
      if (prev == cur) {
        ASSERT_LT(at<int64_t>(indices, (row - 1) * 3 + col), at<int64_t>(indices, row * 3 + col));
      }
      ASSERT_EQ(at<int64_t>(x, at<int64_t>(indices, row * 3 + col) * 3 + col), cur);
    }
  }
  EXPECT_THROW(sort(x, 2), IndexError);
  auto [scalar, scalar_idx] = sort(iota({}), -1);
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(at<int64_t>(scalar_idx, 0), 0);
}
