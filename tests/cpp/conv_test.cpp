// Convolution and pooling at the C++ level: oneDNN (float32) and kiln's own
// kernels (float64) agree, oneDNN primitives are built once per shape, and
// results do not depend on the thread count.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/tensor/conv.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/dnnl_glue.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/pooling.h"

using namespace kiln;

namespace {

Tensor values(IntArrayRef sizes, int seed) {
  Tensor t = empty(sizes, ScalarType::Double);
  double* d = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) d[i] = std::sin(0.37 * static_cast<double>(i) + seed);
  return t;
}

void expectClose(const Tensor& a, const Tensor& b, double tol) {
  ASSERT_EQ(shapeString(a.sizes()), shapeString(b.sizes()));
  Tensor x = to(a, ScalarType::Double), y = to(b, ScalarType::Double);
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_NEAR(x.data<double>()[i], y.data<double>()[i], tol) << i;
}

struct Case {
  bool transposed;
  std::vector<int64_t> input, weight, stride, padding, dilation, output_padding;
  int64_t groups;
};

TEST(Conv, OneDnnAgreesWithTheFallback) {
  const Case cases[] = {
      {false, {2, 4, 9, 8}, {6, 2, 3, 3}, {2, 1}, {1, 2}, {1, 2}, {0}, 2},
      {false, {1, 3, 7}, {4, 3, 3}, {1}, {0}, {3}, {0}, 1},
      {false, {1, 2, 4, 5, 6}, {4, 2, 2, 3, 2}, {1}, {1}, {1}, {0}, 1},
      {true, {2, 4, 5, 6}, {4, 3, 3, 3}, {2}, {1}, {1}, {1}, 2},
      {true, {1, 3, 6}, {3, 2, 4}, {3}, {0}, {2}, {2}, 1},
  };
  for (const Case& c : cases) {
    Tensor x = values(c.input, 1), w = values(c.weight, 2);
    Tensor b = values({c.transposed ? c.weight[1] * c.groups : c.weight[0]}, 3);
    Tensor exact = convolution(x, w, b, c.stride, c.padding, c.dilation, c.transposed, c.output_padding, c.groups);
    Tensor fast = convolution(to(x, ScalarType::Float), to(w, ScalarType::Float), to(b, ScalarType::Float), c.stride,
                              c.padding, c.dilation, c.transposed, c.output_padding, c.groups);
    expectClose(fast, exact, 1e-4);
  }
}

TEST(Conv, PrimitivesAreBuiltOncePerShape) {
  Tensor x = to(values({1, 3, 10, 10}, 1), ScalarType::Float), w = to(values({5, 3, 3, 3}, 2), ScalarType::Float);
  Tensor first = convolution(x, w, std::nullopt, {1}, {1}, {1}, false, {0}, 1);
  const int64_t built = detail::dnnlPrimitivesBuilt();
  for (int i = 0; i < 3; ++i) {
    Tensor again = convolution(x, w, std::nullopt, {1}, {1}, {1}, false, {0}, 1);
    expectClose(again, first, 0);
  }
  EXPECT_EQ(detail::dnnlPrimitivesBuilt(), built);
  // Another shape is another primitive.
  convolution(x, w, std::nullopt, {2}, {1}, {1}, false, {0}, 1);
  EXPECT_EQ(detail::dnnlPrimitivesBuilt(), built + 1);
}

TEST(Conv, ResultsDoNotDependOnTheThreadCount) {
  const int saved = getNumThreads();
  Tensor x = to(values({2, 16, 20, 20}, 1), ScalarType::Float), w = to(values({16, 16, 3, 3}, 2), ScalarType::Float);
  setNumThreads(1);
  Tensor one = convolution(x, w, std::nullopt, {1}, {1}, {1}, false, {0}, 1);
  Tensor pooled_one = avgPool(2, one, {3}, {2}, {1}, true, false, std::nullopt, "avg_pool2d");
  setNumThreads(2);
  Tensor two = convolution(x, w, std::nullopt, {1}, {1}, {1}, false, {0}, 1);
  Tensor pooled_two = avgPool(2, two, {3}, {2}, {1}, true, false, std::nullopt, "avg_pool2d");
  setNumThreads(saved);
  expectClose(two, one, 1e-5);
  expectClose(pooled_two, pooled_one, 1e-5);
}

TEST(Conv, SmallPrimitivesRunOnOneThreadAndFollowTheThreadCount) {
  const int saved = getNumThreads();
  setNumThreads(2);
  EXPECT_EQ(detail::dnnlThreadsFor(1000), 1);
  EXPECT_EQ(detail::dnnlThreadsFor(1e9), 2);
  // A convolution big enough to split is built again for another count
  // (oneDNN fixes a primitive's split when it builds it).
  Tensor x = to(values({2, 32, 24, 24}, 1), ScalarType::Float), w = to(values({32, 32, 3, 3}, 2), ScalarType::Float);
  Tensor two = convolution(x, w, std::nullopt, {1}, {1}, {1}, false, {0}, 1);
  const int64_t built = detail::dnnlPrimitivesBuilt();
  setNumThreads(1);
  Tensor one = convolution(x, w, std::nullopt, {1}, {1}, {1}, false, {0}, 1);
  EXPECT_EQ(detail::dnnlPrimitivesBuilt(), built + 1);
  setNumThreads(saved);
  expectClose(one, two, 1e-5);
}

TEST(Pool, OutputSizesFollowTorch) {
  EXPECT_EQ(poolingOutputSize(5, 2, 0, 2, 1, false), 2);
  EXPECT_EQ(poolingOutputSize(5, 2, 0, 2, 1, true), 3);
  // The last window would start in the right padding: ceil mode drops it.
  EXPECT_EQ(poolingOutputSize(6, 3, 1, 2, 1, true), 4);
  EXPECT_EQ(poolingOutputSize(5, 2, 1, 2, 1, true), 3);
  EXPECT_EQ(poolingOutputSize(10, 3, 1, 2, 2, false), 4);
}

TEST(Pool, BadArgumentsRaise) {
  Tensor x = values({1, 2, 4, 4}, 1);
  EXPECT_THROW(maxPool(2, x, {5}, {}, {0}, {1}, false, "max_pool2d"), Error);
  EXPECT_THROW(avgPool(2, x, {2}, {}, {-1}, false, true, std::nullopt, "avg_pool2d"), Error);
  EXPECT_THROW(adaptiveAvgPool(2, values({4, 4}, 1), {2, 2}, "adaptive_avg_pool2d"), Error);
  EXPECT_THROW(convolution(x, values({3, 3, 3, 3}, 2), std::nullopt, {1}, {0}, {1}, false, {0}, 1), Error);
}

}  // namespace
