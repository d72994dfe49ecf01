// kiln's Winograd F(4x4, 3x3) (kiln/tensor/kernels/winograd.h), reached
// through fusedConv2d on activations blocked by 8 with torch's weight:
// against a direct convolution in double precision, with odd image sizes,
// channels that are not a multiple of 8, padding 0 to 2, batches above 1,
// bias, residual and activations; the same at 1 and 2 threads; weights
// transformed once per constant.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/tensor/blocked_conv.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/winograd.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/shape.h"

using namespace kiln;

namespace {

Tensor values(IntArrayRef sizes, int seed) {
  Tensor t = empty(sizes, ScalarType::Float);
  float* d = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) d[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + seed));
  return t;
}

struct Case {
  int64_t n, c, h, w, oc, pad;
  bool bias, residual;
  std::string activation;
};

// The direct convolution, in double, of plain (N, C, H, W) float tensors.
std::vector<double> reference(const Case& k, const Tensor& x, const Tensor& wt, const Tensor& b, const Tensor& r) {
  const int64_t oh = k.h + 2 * k.pad - 2, ow = k.w + 2 * k.pad - 2;
  std::vector<double> out(static_cast<size_t>(k.n * k.oc * oh * ow));
  const float* xp = x.data<float>();
  const float* wp = wt.data<float>();
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.oc; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t z = 0; z < ow; ++z) {
          double acc = k.bias ? b.data<float>()[o] : 0.0;
          for (int64_t c = 0; c < k.c; ++c)
            for (int64_t i = 0; i < 3; ++i)
              for (int64_t j = 0; j < 3; ++j) {
                int64_t iy = y + i - k.pad, ix = z + j - k.pad;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
                acc += static_cast<double>(xp[((n * k.c + c) * k.h + iy) * k.w + ix]) *
                       wp[((o * k.c + c) * 3 + i) * 3 + j];
              }
          const int64_t at = ((n * k.oc + o) * oh + y) * ow + z;
          if (k.residual) acc += r.data<float>()[at];
          if (k.activation == "relu") acc = std::max(acc, 0.0);
          if (k.activation == "hardtanh") acc = std::min(std::max(acc, 0.0), 6.0);
          out[static_cast<size_t>(at)] = acc;
        }
  return out;
}

FusedConv2dParams params(const Case& k, int64_t block = 8) {
  FusedConv2dParams p;
  p.weight_size = {k.oc, k.c, 3, 3};
  p.stride = {1};
  p.padding = {k.pad};
  p.dilation = {1};
  p.in_block = p.out_block = block;
  p.has_bias = k.bias;
  p.has_residual = k.residual;
  p.activation = k.activation;
  if (k.activation == "hardtanh") p.beta = 6;
  return p;
}

// The blocked output for case k: kiln's Winograd, or fusedConv2d (which
// runs it only on images of enough tiles).
Tensor run(const Case& k, const Tensor& x, const Tensor& wt, const Tensor& b, const Tensor& r, bool fused = false,
           int64_t block = 8) {
  const int64_t oh = k.h + 2 * k.pad - 2, ow = k.w + 2 * k.pad - 2;
  std::optional<Tensor> bias, residual;
  if (k.bias) bias = b;
  if (k.residual) residual = toBlocked(view(r, {k.n, k.oc, oh, ow}), block);
  if (fused) return fusedConv2d(toBlocked(x, block), wt, bias, residual, params(k, block));
  return detail::winogradConv2d(toBlocked(x, block), wt, bias, residual, params(k, block), true);
}

const Case kCases[] = {
    {1, 3, 7, 9, 5, 1, false, false, "none"},   {2, 16, 13, 11, 24, 1, true, true, "relu"},
    {1, 8, 6, 6, 8, 0, true, false, "none"},    {3, 20, 10, 5, 13, 2, true, false, "hardtanh"},
    {1, 64, 14, 14, 64, 1, true, true, "relu"}, {2, 9, 4, 17, 7, 1, false, true, "none"},
    {1, 32, 3, 3, 40, 1, true, false, "relu"},
};

}  // namespace

TEST(Winograd, RunsWhereItApplies) {
  EXPECT_TRUE(detail::winogradApplies(params(kCases[0])));
  FusedConv2dParams p = params(kCases[0]);
  p.activation = "silu";
  EXPECT_FALSE(detail::winogradApplies(p));
  p = params(kCases[0]);
  p.stride = {2};
  EXPECT_FALSE(detail::winogradApplies(p));
  p = params(kCases[0]);
  p.in_block = 16;
  EXPECT_FALSE(detail::winogradApplies(p));
}

TEST(Winograd, AgreesWithTheDirectConvolution) {
  if (!detail::winogradApplies(params(kCases[0]))) GTEST_SKIP() << "no AVX2, or KILN_WINOGRAD=0";
  int seed = 0;
  for (int64_t block : {8, 16})
    for (const Case& k : kCases) {
      SCOPED_TRACE(::testing::Message() << "block " << block << " n " << k.n << " c " << k.c << " " << k.h << "x" << k.w
                                        << " oc " << k.oc << " pad " << k.pad << " " << k.activation);
      const int64_t oh = k.h + 2 * k.pad - 2, ow = k.w + 2 * k.pad - 2;
      Tensor x = values({k.n, k.c, k.h, k.w}, ++seed), wt = values({k.oc, k.c, 3, 3}, ++seed);
      Tensor b = values({k.oc}, ++seed), r = values({k.n * k.oc * oh * ow}, ++seed);
      std::vector<double> want = reference(k, x, wt, b, r);
      Tensor blocked = run(k, x, wt, b, r, false, block);
      ASSERT_EQ(blocked.dim(), 5);
      ASSERT_EQ(blocked.size(1), (k.oc + block - 1) / block);
      Tensor got = fromBlocked(blocked, k.oc);
      double scale = 0;
      for (double v : want) scale = std::max(scale, std::abs(v));
      double worst = 0;
      for (size_t i = 0; i < want.size(); ++i)
        worst = std::max(worst, std::abs(got.data<float>()[i] - want[i]) / std::max(scale, 1.0));
      EXPECT_LT(worst, 3e-5);  // measured up to 1.1e-5 (64 channels); model tests allow 1e-4
      // The lanes past the last channel stay zero, as oneDNN leaves them.
      const float* bp = blocked.data<float>();
      if (k.oc % block != 0) {
        for (int64_t n = 0; n < k.n; ++n)
          for (int64_t pix = 0; pix < oh * ow; ++pix)
            for (int64_t lane = k.oc % block; lane < block; ++lane)
              ASSERT_EQ(bp[((n * blocked.size(1) + blocked.size(1) - 1) * oh * ow + pix) * block + lane], 0.f);
      }
    }
}

TEST(Winograd, FusedConvRunsItOnLargeImages) {
  if (!detail::winogradApplies(params(kCases[0]))) GTEST_SKIP() << "no AVX2, or KILN_WINOGRAD=0";
  const Case k{1, 16, 20, 20, 16, 1, true, true, "relu"};
  EXPECT_TRUE(detail::winogradChosen(params(k), 1, 20, 20));
  EXPECT_FALSE(detail::winogradChosen(params(k), 1, 7, 7));  // 4 tiles: oneDNN's direct kernel
  EXPECT_FALSE(detail::winogradMayRun(params({1, 512, 7, 7, 512, 1, true, false, "relu"})));
  Tensor x = values({1, 16, 20, 20}, 1), wt = values({16, 16, 3, 3}, 2);
  Tensor b = values({16}, 3), r = values({16 * 20 * 20}, 4);
  Tensor fused = run(k, x, wt, b, r, true), own = run(k, x, wt, b, r);
  ASSERT_EQ(fused.numel(), own.numel());
  for (int64_t i = 0; i < own.numel(); ++i) ASSERT_EQ(fused.data<float>()[i], own.data<float>()[i]) << i;
  // On small images the prepacked (torch layout) weight goes to oneDNN.
  const Case small{1, 16, 7, 7, 16, 1, true, false, "relu"};
  FusedConv2dParams p = params(small);
  Tensor packed = *prepackConv2dWeight(wt, p);
  Tensor a = fromBlocked(fusedConv2d(toBlocked(values({1, 16, 7, 7}, 5), 8), packed, b, std::nullopt, p), 16);
  Tensor c = fromBlocked(run(small, values({1, 16, 7, 7}, 5), wt, b, Tensor()), 16);
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_NEAR(a.data<float>()[i], c.data<float>()[i], 1e-4) << i;
}

TEST(Winograd, SameAtOneAndTwoThreads) {
  if (!detail::winogradApplies(params(kCases[0]))) GTEST_SKIP() << "no AVX2, or KILN_WINOGRAD=0";
  const int before = getNumThreads();
  const Case k{2, 64, 28, 28, 64, 1, true, true, "relu"};
  Tensor x = values({k.n, k.c, k.h, k.w}, 1), wt = values({k.oc, k.c, 3, 3}, 2);
  Tensor b = values({k.oc}, 3), r = values({k.n * k.oc * 28 * 28}, 4);
  setNumThreads(1);
  Tensor one = run(k, x, wt, b, r);
  setNumThreads(2);
  Tensor two = run(k, x, wt, b, r);
  setNumThreads(before);
  ASSERT_EQ(one.numel(), two.numel());
  for (int64_t i = 0; i < one.numel(); ++i) ASSERT_EQ(one.data<float>()[i], two.data<float>()[i]) << i;
}

TEST(Winograd, TransformsAWeightOnce) {
  if (!detail::winogradApplies(params(kCases[0]))) GTEST_SKIP() << "no AVX2, or KILN_WINOGRAD=0";
  const int64_t before = detail::winogradCachedWeights();
  {
    const Case k{1, 8, 9, 9, 8, 1, false, false, "none"};
    Tensor x = values({1, 8, 9, 9}, 1), wt = values({8, 8, 3, 3}, 2);
    Tensor first = run(k, x, wt, Tensor(), Tensor());
    EXPECT_EQ(detail::winogradCachedWeights(), before + 1);
    Tensor bigger = run({1, 8, 17, 12, 8, 1, false, false, "none"}, values({1, 8, 17, 12}, 3), wt, Tensor(), Tensor());
    EXPECT_EQ(detail::winogradCachedWeights(), before + 1);
  }
  EXPECT_EQ(detail::winogradCachedWeights(), before);
}

TEST(Winograd, RejectsBadInput) {
  if (!detail::winogradApplies(params(kCases[0]))) GTEST_SKIP() << "no AVX2, or KILN_WINOGRAD=0";
  const Case k{1, 8, 9, 9, 8, 1, true, false, "none"};
  EXPECT_THROW(detail::winogradConv2d(values({1, 8, 9, 9}, 1), values({8, 8, 3, 3}, 2), values({8}, 3), std::nullopt,
                                      params(k), false),
               Error);
  EXPECT_THROW(detail::winogradConv2d(toBlocked(values({1, 8, 9, 9}, 1), 8), values({8, 8, 3, 3}, 2), values({5}, 3),
                                      std::nullopt, params(k), false),
               Error);
}
