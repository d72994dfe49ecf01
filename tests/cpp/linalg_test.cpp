// Matrix products, factories and the random generator at the C++ level.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/tensor/factory.h"
#include "kiln/tensor/linalg.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/random.h"

using namespace kiln;

namespace {

// A row-major tensor with element (i, j) = f(i, j).
template <typename T, typename F>
Tensor matrix(int64_t rows, int64_t cols, F f) {
  Tensor t = empty({rows, cols}, CppTypeToScalarType<T>::value);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t.data<T>()[i * cols + j] = static_cast<T>(f(i, j));
  return t;
}

template <typename T>
T at(const Tensor& t, int64_t i, int64_t j) {
  return static_cast<const T*>(t.rawData())[i * t.stride(0) + j * t.stride(1)];
}

// The transpose of a 2-D tensor as a view.
Tensor transposed(const Tensor& t) {
  return makeView(t, DimVector{t.size(1), t.size(0)}, DimVector{t.stride(1), t.stride(0)}, t.storageOffset());
}

template <typename T>
void expectMatchesNaiveProduct(const Tensor& a, const Tensor& b, const Tensor& c) {
  ASSERT_EQ(c.size(0), a.size(0));
  ASSERT_EQ(c.size(1), b.size(1));
  for (int64_t i = 0; i < a.size(0); ++i)
    for (int64_t j = 0; j < b.size(1); ++j) {
      double expected = 0;
      for (int64_t p = 0; p < a.size(1); ++p) expected += double(at<T>(a, i, p)) * double(at<T>(b, p, j));
      EXPECT_NEAR(double(at<T>(c, i, j)), expected, 1e-3) << i << "," << j;
    }
}

}  // namespace

TEST(Linalg, MmReadsTransposedOperandsWithoutCopies) {
  Tensor a = matrix<float>(4, 3, [](int64_t i, int64_t j) { return i - 2.0 * j; });
  Tensor b = matrix<float>(5, 3, [](int64_t i, int64_t j) { return 0.5 * i + j; });
  Tensor bt = transposed(b);  // 3 x 5, column-major
  ASSERT_FALSE(bt.isContiguous());
  expectMatchesNaiveProduct<float>(a, bt, mm(a, bt));
  Tensor lhs_t = transposed(matrix<float>(3, 4, [](int64_t i, int64_t j) { return i * j - 1.0; }));  // 4 x 3
  expectMatchesNaiveProduct<float>(lhs_t, bt, mm(lhs_t, bt));
}

TEST(Linalg, MmWithGappedStridesAndDoubles) {
  Tensor big = matrix<double>(6, 8, [](int64_t i, int64_t j) { return std::sin(double(i * 8 + j)); });
  // Every other row and column: BLAS cannot describe it, so it is packed first.
  Tensor gapped = makeView(big, DimVector{3, 4}, DimVector{16, 2}, 0);
  Tensor rhs = matrix<double>(4, 2, [](int64_t i, int64_t j) { return i - j; });
  expectMatchesNaiveProduct<double>(gapped, rhs, mm(gapped, rhs));
}

TEST(Linalg, IntegerMmUsesLoopsAndWraps) {
  Tensor a = matrix<int64_t>(3, 4, [](int64_t i, int64_t j) { return i + j; });
  Tensor b = matrix<int64_t>(4, 2, [](int64_t i, int64_t j) { return i * 2 - j; });
  expectMatchesNaiveProduct<int64_t>(a, b, mm(a, b));
  Tensor bytes = full({1, 2}, Scalar(int64_t{100}), ScalarType::Char);
  Tensor col = full({2, 1}, Scalar(int64_t{2}), ScalarType::Char);
  EXPECT_EQ(at<int8_t>(mm(bytes, col), 0, 0), static_cast<int8_t>(400));
  EXPECT_THROW(mm(full({2, 2}, Scalar(true), ScalarType::Bool), full({2, 2}, Scalar(true), ScalarType::Bool)), Error);
}

TEST(Linalg, ShapeAndDtypeErrorsNameTheOperands) {
  try {
    mm(zeros({2, 3}), zeros({4, 5}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  }
  try {
    mm(zeros({2, 3}), zeros({3, 2}, ScalarType::Double));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "expected scalar type Float but found Double");
  }
  EXPECT_THROW(matmul(zeros({}), zeros({3})), Error);
  EXPECT_THROW(bmm(zeros({2, 2, 3}), zeros({3, 3, 2})), Error);
  EXPECT_THROW(dot(zeros({3}), zeros({4})), Error);
}

TEST(Linalg, MatmulBroadcastsBatchDims) {
  Tensor a = ones({2, 1, 3, 4});
  Tensor b = ones({5, 4, 2});
  Tensor c = matmul(a, b);
  EXPECT_EQ(c.sizes(), IntArrayRef(DimVector{2, 5, 3, 2}));
  for (int64_t i = 0; i < c.numel(); ++i) EXPECT_EQ(c.data<float>()[i], 4.0f);
  EXPECT_EQ(matmul(ones({4}), ones({5, 4, 2})).sizes(), IntArrayRef(DimVector{5, 2}));
  EXPECT_EQ(matmul(ones({5, 3, 4}), ones({4})).sizes(), IntArrayRef(DimVector{5, 3}));
  EXPECT_EQ(matmul(ones({4}), ones({4})).dim(), 0);
}

TEST(Linalg, EmptyInnerDimensionGivesBetaTimesSelf) {
  Tensor self = full({2, 3}, Scalar(2.0), ScalarType::Float);
  Tensor c = addmm(self, zeros({2, 0}), zeros({0, 3}), Scalar(3.0), Scalar(1.0));
  for (int64_t i = 0; i < c.numel(); ++i) EXPECT_EQ(c.data<float>()[i], 6.0f);
  Tensor z = mm(zeros({2, 0}), zeros({0, 3}));
  for (int64_t i = 0; i < z.numel(); ++i) EXPECT_EQ(z.data<float>()[i], 0.0f);
}

TEST(Linalg, AddmmBetaZeroIgnoresNaN) {
  Tensor self = full({2, 2}, Scalar(std::numeric_limits<double>::quiet_NaN()), ScalarType::Float);
  Tensor c = addmm(self, ones({2, 3}), ones({3, 2}), Scalar(0.0), Scalar(2.0));
  for (int64_t i = 0; i < c.numel(); ++i) EXPECT_EQ(c.data<float>()[i], 6.0f);
}

TEST(Linalg, LinearAddsBroadcastBias) {
  Tensor input = ones({2, 3, 4});
  Tensor weight = full({5, 4}, Scalar(0.5), ScalarType::Float);
  Tensor bias = full({5}, Scalar(1.0), ScalarType::Float);
  Tensor y = linear(input, weight, bias);
  EXPECT_EQ(y.sizes(), IntArrayRef(DimVector{2, 3, 5}));
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.data<float>()[i], 3.0f);
  EXPECT_EQ(linear(ones({4}), weight, std::nullopt).sizes(), IntArrayRef(DimVector{5}));
}

TEST(Factory, RangesAndIdentity) {
  Tensor r = arange(Scalar(int64_t{1}), Scalar(int64_t{10}), Scalar(int64_t{3}), ScalarType::Long);
  ASSERT_EQ(r.numel(), 3);
  EXPECT_EQ(r.data<int64_t>()[2], 7);
  Tensor f = arange(Scalar(0.0), Scalar(1.0), Scalar(0.1), ScalarType::Float);
  EXPECT_EQ(f.numel(), 10);
  EXPECT_THROW(arange(Scalar(0.0), Scalar(1.0), Scalar(0.0), ScalarType::Float), Error);
  EXPECT_THROW(arange(Scalar(0.0), Scalar(1.0), Scalar(-1.0), ScalarType::Float), Error);
  Tensor l = linspace(Scalar(-1.0), Scalar(1.0), 5, ScalarType::Double);
  EXPECT_EQ(l.data<double>()[0], -1.0);
  EXPECT_EQ(l.data<double>()[2], 0.0);
  EXPECT_EQ(l.data<double>()[4], 1.0);
  Tensor e = eye(2, 3, ScalarType::Bool);
  EXPECT_TRUE(e.data<bool>()[0] && e.data<bool>()[4]);
  EXPECT_FALSE(e.data<bool>()[1] || e.data<bool>()[5]);
}

TEST(Factory, FillChecksOverflowLikeC10) {
  Tensor bytes = zeros({3}, ScalarType::Char);
  EXPECT_THROW(fill_(bytes, Scalar(int64_t{300})), Error);
  EXPECT_THROW(fill_(bytes, Scalar(std::nan(""))), Error);
  Tensor ubytes = zeros({3}, ScalarType::Byte);
  fill_(ubytes, Scalar(int64_t{-1}));  // negative ints wrap into unsigned types
  EXPECT_EQ(ubytes.data<uint8_t>()[2], 255);
  EXPECT_EQ(fullDtype(Scalar(true)), ScalarType::Bool);
  EXPECT_EQ(fullDtype(Scalar(int64_t{2})), ScalarType::Long);
  EXPECT_EQ(fullDtype(Scalar(2.5)), ScalarType::Float);
}

TEST(Random, PhiloxKnownAnswer) {
  // Random123's known-answer test for philox4x32-10 with zero key and counter.
  auto words = philox(0, 0);
  EXPECT_EQ(words[0], 0x6627e8d5u);
  EXPECT_EQ(words[1], 0xe169c58du);
  EXPECT_EQ(words[2], 0xbc57ac4cu);
  EXPECT_EQ(words[3], 0x9b00dbd8u);
}

TEST(Random, SeedReproducesAndThreadsDoNotMatter) {
  const int old_threads = getNumThreads();
  setNumThreads(1);
  manualSeed(42);
  Tensor a = randn({100001}, ScalarType::Float);
  setNumThreads(2);
  manualSeed(42);
  Tensor b = randn({100001}, ScalarType::Float);
  setNumThreads(old_threads);
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;
  Tensor c = randn({100001}, ScalarType::Float);  // the stream moved on
  EXPECT_NE(a.data<float>()[0], c.data<float>()[0]);
}

TEST(Random, DistributionsStayInRange) {
  manualSeed(3);
  Tensor u = rand({10000}, ScalarType::Double);
  double sum = 0;
  for (int64_t i = 0; i < u.numel(); ++i) {
    double v = u.data<double>()[i];
    ASSERT_TRUE(v >= 0 && v < 1);
    sum += v;
  }
  EXPECT_NEAR(sum / u.numel(), 0.5, 0.02);
  Tensor r = randint(-2, 3, {10000}, ScalarType::Int);
  int seen[5] = {};
  for (int64_t i = 0; i < r.numel(); ++i) {
    int v = r.data<int32_t>()[i];
    ASSERT_TRUE(v >= -2 && v < 3);
    ++seen[v + 2];
  }
  for (int count : seen) EXPECT_GT(count, 1500);
  EXPECT_THROW(rand({2}, ScalarType::Long), Error);
  EXPECT_THROW(randint(3, 3, {2}, ScalarType::Long), Error);
  EXPECT_THROW(randint(0, 300, {2}, ScalarType::Byte), Error);
}
