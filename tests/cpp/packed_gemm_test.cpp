// The prepacked weight product of recurrent layers (kiln/tensor/kernels/
// packed_gemm.h): c = a @ w^T (+ bias) against a double-precision reference,
// for row counts that split unevenly into the micro-kernel's groups, column
// counts around the 16-column panels, K of 0, 1 and odd sizes, strided rows
// of a and c (columns past n must stay untouched), and bit-identical
// results at 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kiln/tensor/kernels/packed_gemm.h"
#include "kiln/tensor/parallel.h"

using kiln::detail::PackedWeightNT;

namespace {

std::vector<float> values(int64_t count, double seed) {
  std::vector<float> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.731 * static_cast<double>(i) + seed));
  return v;
}

struct Product {
  int64_t m, n, k;
  bool bias;
};

// Runs the packed product with rows of a and c padded past k and n, and
// checks it against the reference; returns c.
std::vector<float> run(const Product& p) {
  const int64_t lda = p.k + 3, ldc = p.n + 5;
  const std::vector<float> a = values(p.m * lda, 1.0), w = values(p.n * p.k, 2.0), bias = values(p.n, 3.0);
  std::vector<float> c(static_cast<size_t>(std::max<int64_t>(1, p.m * ldc)), -7.f);
  PackedWeightNT packed(w.data(), p.n, p.k);
  packed.multiply(p.m, a.data(), lda, p.bias ? bias.data() : nullptr, c.data(), ldc);
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = c[static_cast<size_t>(i * ldc + j)];
      if (j >= p.n) {
        EXPECT_EQ(got, -7.f) << "wrote past column " << p.n;
        continue;
      }
      double want = p.bias ? bias[static_cast<size_t>(j)] : 0.0, scale = std::abs(want);
      for (int64_t q = 0; q < p.k; ++q) {
        const double term =
            static_cast<double>(a[static_cast<size_t>(i * lda + q)]) * w[static_cast<size_t>(j * p.k + q)];
        want += term;
        scale += std::abs(term);
      }
      // A float sum of k + 1 terms: within about (k + 1) units of rounding of their magnitudes.
      EXPECT_NEAR(got, want, 1.2e-7 * static_cast<double>(p.k + 2) * scale + 1e-30)
          << "m " << p.m << " n " << p.n << " k " << p.k << " at " << i << ", " << j;
    }
  }
  return c;
}

}  // namespace

TEST(PackedGemm, MatchesReference) {
  if (!PackedWeightNT::available()) GTEST_SKIP() << "no AVX2 in this build";
  for (int64_t m : {1, 2, 5, 6, 7, 8, 13, 32, 35})
    for (int64_t n : {1, 15, 16, 17, 40})
      for (int64_t k : {0, 1, 9, 64})
        for (bool bias : {false, true}) run({m, n, k, bias});
}

TEST(PackedGemm, SameBitsAtOneAndTwoThreads) {
  if (!PackedWeightNT::available()) GTEST_SKIP() << "no AVX2 in this build";
  const int previous = kiln::getNumThreads();
  const Product p{8, 2048, 512, true};  // an LSTM step: large enough to split
  kiln::setNumThreads(1);
  const std::vector<float> one = run(p);
  kiln::setNumThreads(2);
  const std::vector<float> two = run(p);
  kiln::setNumThreads(previous);
  EXPECT_EQ(one, two);
}
