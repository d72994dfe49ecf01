// The kernels over Vec<T> at every width this build and CPU have (AVX2, and
// AVX-512 where the CPU runs it): exp and log give the same bits at every
// width and for single elements; sums agree within the rounding of their
// summation order; softmax, log_softmax and logsumexp give the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "kiln/tensor/kernels/vec_kernels.h"
#include "kiln/tensor/kernels/vector_math.h"
#include "kiln/tensor/reduce.h"

using namespace kiln;
using kernels::VecIsa;
using kernels::VecKernels;
using kernels::VecKernelSet;

namespace {

std::vector<const VecKernelSet*> availableSets() {
  std::vector<const VecKernelSet*> sets;
  for (VecIsa isa : {VecIsa::Portable, VecIsa::Avx2, VecIsa::Avx512}) {
    if (const VecKernelSet* set = kernels::vecKernelSet(isa)) sets.push_back(set);
  }
  return sets;
}

// Sets the kernels' instruction set for one scope.
class IsaScope {
 public:
  explicit IsaScope(VecIsa isa) : saved_(kernels::vecIsa()) { chosen_ = kernels::setVecIsa(isa); }
  ~IsaScope() { kernels::setVecIsa(saved_); }
  VecIsa chosen() const { return chosen_; }

 private:
  VecIsa saved_;
  VecIsa chosen_;
};

template <typename T>
bool sameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <typename T>
T scalarExp(T x) {
  if constexpr (sizeof(T) == sizeof(float)) {
    return kiln_vm_expf(x);
  } else {
    return kiln_vm_exp(x);
  }
}

template <typename T>
T scalarLog(T x) {
  if constexpr (sizeof(T) == sizeof(float)) {
    return kiln_vm_logf(x);
  } else {
    return kiln_vm_log(x);
  }
}

// Random values of every magnitude and sign, subnormals, zeros, infinities,
// NaN, and the edges where exp overflows and underflows.
template <typename T>
std::vector<T> edgeInputs() {
  using L = std::numeric_limits<T>;
  std::vector<T> x = {T(0),      -T(0),      L::infinity(),   -L::infinity(),   L::quiet_NaN(), -L::quiet_NaN(),
                      L::min(),  -L::min(),  L::denorm_min(), -L::denorm_min(), L::min() / 3,   L::max(),
                      -L::max(), T(1),       T(-1),           T(0.5),           T(88.72),       T(88.73),
                      T(-87.3),  T(-103.97), T(-104),         T(709.78),        T(709.79),      T(-708.4),
                      T(-745.1), T(-745.2)};
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> exponent(-40, 40);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int i = 0; i < 2000; ++i) x.push_back(static_cast<T>(unit(rng) * std::pow(2.0, exponent(rng))));
  for (int i = 0; i < 2000; ++i) x.push_back(static_cast<T>(unit(rng) * 120));
  return x;
}

template <typename T>
void expectMathBitIdentical() {
  const std::vector<T> x = edgeInputs<T>();
  const int64_t n = static_cast<int64_t>(x.size());
  for (const VecKernelSet* set : availableSets()) {
    SCOPED_TRACE(kernels::vecIsaName(set->isa));
    const VecKernels<T>& k = set->template of<T>();
    // From each start offset an element sits in another lane, or in a partial vector.
    for (int64_t offset = 0; offset < 17; ++offset) {
      std::vector<T> e(x.size()), l(x.size());
      k.exp(x.data() + offset, e.data(), n - offset);
      k.log(x.data() + offset, l.data(), n - offset);
      for (int64_t i = 0; i < n - offset; ++i) {
        const T v = x[static_cast<size_t>(i + offset)];
        ASSERT_TRUE(sameBits(e[static_cast<size_t>(i)], scalarExp(v))) << "exp(" << v << ") at offset " << offset;
        ASSERT_TRUE(sameBits(l[static_cast<size_t>(i)], scalarLog(v))) << "log(" << v << ") at offset " << offset;
      }
    }
  }
}

template <typename T>
Tensor randomTensor(IntArrayRef sizes, uint32_t seed, double scale = 1.0) {
  Tensor t = empty(sizes, std::is_same_v<T, float> ? ScalarType::Float : ScalarType::Double);
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<T>()[i] = static_cast<T>(normal(rng));
  return t;
}

// Each element of a within rtol * |b| + atol of b's, or both NaN, or the same infinity.
template <typename T>
void expectClose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  ASSERT_EQ(a.numel(), b.numel());
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data<T>()[i], y = b.data<T>()[i];
    if (std::isnan(y)) {
      ASSERT_TRUE(std::isnan(x)) << "element " << i << ": " << x << " vs NaN";
    } else if (std::isinf(y)) {
      ASSERT_EQ(x, y) << "element " << i;
    } else {
      ASSERT_NEAR(x, y, rtol * std::abs(y) + atol) << "element " << i;
    }
  }
}

template <typename T>
void expectIdentical(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.numel(), b.numel());
  ASSERT_EQ(std::memcmp(a.data<T>(), b.data<T>(), static_cast<size_t>(a.numel()) * sizeof(T)), 0);
}

// f() with the AVX2 kernels and with the AVX-512 ones; false where the CPU
// has no AVX-512.
template <typename F>
bool atBothWidths(const F& f, Tensor& avx2, Tensor& avx512) {
  {
    IsaScope scope(VecIsa::Avx2);
    avx2 = f();
  }
  IsaScope scope(VecIsa::Avx512);
  if (scope.chosen() != VecIsa::Avx512) return false;
  avx512 = f();
  return true;
}

#define KILN_SKIP_WITHOUT_AVX512()                                                              \
  if (!kernels::vecKernelSet(VecIsa::Avx512) || !kernels::vecKernelSet(VecIsa::Avx2)) {         \
    GTEST_SKIP() << "this build or CPU has no AVX-512 kernels; the AVX2 ones are tested alone"; \
  }

// Rounding of a sum of n terms of magnitude `scale`, generously.
template <typename T>
double sumTolerance(int64_t n, double scale) {
  return 8 * std::numeric_limits<T>::epsilon() * std::sqrt(static_cast<double>(n) + 1) * scale * 16;
}

template <typename T>
void expectSumsAgree() {
  for (int64_t n : {0, 1, 3, 7, 8, 15, 16, 17, 31, 127, 128, 129, 1000, 4099, 100003}) {
    SCOPED_TRACE(n);
    const Tensor x = randomTensor<T>({n}, static_cast<uint32_t>(n) + 1);
    const T* p = x.data<T>();
    long double exact = 0, magnitude = 0;
    for (int64_t i = 0; i < n; ++i) {
      exact += p[i];
      magnitude += std::abs(p[i]);
    }
    for (const VecKernelSet* set : availableSets()) {
      SCOPED_TRACE(kernels::vecIsaName(set->isa));
      const T s = set->template of<T>().sum(p, n);
      EXPECT_NEAR(static_cast<double>(s), static_cast<double>(exact),
                  sumTolerance<T>(n, static_cast<double>(magnitude) / std::max<int64_t>(1, n) * 4));
    }
  }
}

template <typename T>
void expectComplete(const VecKernels<T>& k) {
  EXPECT_TRUE(k.sum && k.exp && k.log && k.softmaxRows && k.softmaxColumns && k.logsumexpRows && k.logsumexpColumns);
}

}  // namespace

TEST(VecKernels, ExpAndLogAreBitIdenticalAtEveryWidthFloat) { expectMathBitIdentical<float>(); }
TEST(VecKernels, ExpAndLogAreBitIdenticalAtEveryWidthDouble) { expectMathBitIdentical<double>(); }

TEST(VecKernels, SumsAreAccurateAtEveryWidthFloat) { expectSumsAgree<float>(); }
TEST(VecKernels, SumsAreAccurateAtEveryWidthDouble) { expectSumsAgree<double>(); }

TEST(VecKernels, SetVecIsaFallsBackToWhatTheCpuHas) {
  const VecIsa saved = kernels::vecIsa();
  EXPECT_EQ(kernels::setVecIsa(VecIsa::Avx512), kernels::vecKernelSet(VecIsa::Avx512) ? VecIsa::Avx512
                                                : kernels::vecKernelSet(VecIsa::Avx2) ? VecIsa::Avx2
                                                                                      : VecIsa::Portable);
  EXPECT_EQ(kernels::setVecIsa(VecIsa::Avx2), kernels::vecKernelSet(VecIsa::Avx2) ? VecIsa::Avx2 : VecIsa::Portable);
  EXPECT_EQ(kernels::vecIsa(), kernels::vecKernelSet(VecIsa::Avx2) ? VecIsa::Avx2 : VecIsa::Portable);
  kernels::setVecIsa(saved);
  EXPECT_EQ(kernels::vecIsa(), saved);
  EXPECT_STREQ(kernels::vecIsaName(VecIsa::Avx512), "avx512");
  // A set without its own form of a kernel runs the AVX2 one: no entry is null.
  for (const VecKernelSet* set : availableSets()) {
    SCOPED_TRACE(kernels::vecIsaName(set->isa));
    expectComplete(set->f32);
    expectComplete(set->f64);
  }
}

TEST(VecKernels, SumAndMeanAgreeAcrossWidths) {
  KILN_SKIP_WITHOUT_AVX512();
  Tensor a, b;
  for (const auto& sizes : {DimVector{1 << 20}, DimVector{333, 1001}, DimVector{4096, 5}, DimVector{3, 17}}) {
    const Tensor xf = randomTensor<float>(sizes, 3);
    const Tensor xd = randomTensor<double>(sizes, 4);
    const int64_t n = sizes.back();
    ASSERT_TRUE(atBothWidths([&] { return sum(xf); }, a, b));
    expectClose<float>(a, b, 0, sumTolerance<float>(xf.numel(), 4));
    ASSERT_TRUE(atBothWidths([&] { return sum(xf, DimVector{-1}); }, a, b));
    expectClose<float>(a, b, 0, sumTolerance<float>(n, 4));
    ASSERT_TRUE(atBothWidths([&] { return mean(xf, DimVector{-1}); }, a, b));
    expectClose<float>(a, b, 0, sumTolerance<float>(n, 4) / static_cast<double>(n));
    ASSERT_TRUE(atBothWidths([&] { return sum(xd, DimVector{-1}); }, a, b));
    expectClose<double>(a, b, 0, sumTolerance<double>(n, 4));
  }
}

// The exp passes run at AVX2 width in both sets and the max is exact, so
// lines of any length give the same bits at both widths, along the last dim
// (the max and scaling passes at 512 bits, from 64 floats) or along an inner
// dim (each lane sums its own line in order, whatever mix of wide, full,
// narrower and single-lane groups covers the lines).
TEST(VecKernels, SoftmaxIsIdenticalAcrossWidths) {
  KILN_SKIP_WITHOUT_AVX512();
  Tensor a, b;
  for (const auto& sizes : {DimVector{7, 1}, DimVector{7, 5}, DimVector{7, 17}, DimVector{7, 63}, DimVector{7, 64},
                            DimVector{7, 65}, DimVector{5, 1000}, DimVector{3, 4099}, DimVector{3, 50, 3},
                            DimVector{3, 50, 13}, DimVector{3, 50, 29}, DimVector{2, 50, 77}, DimVector{2, 40, 200}}) {
    SCOPED_TRACE(sizes.back());
    const Tensor xf = randomTensor<float>(sizes, static_cast<uint32_t>(sizes.back()), 10);
    const Tensor xd = randomTensor<double>(sizes, static_cast<uint32_t>(sizes.back()) + 1, 10);
    ASSERT_TRUE(atBothWidths([&] { return softmax(xf, 1); }, a, b));
    expectIdentical<float>(a, b);
    ASSERT_TRUE(atBothWidths([&] { return logSoftmax(xf, 1); }, a, b));
    expectIdentical<float>(a, b);
    ASSERT_TRUE(atBothWidths([&] { return logsumexp(xf, DimVector{1}); }, a, b));
    expectIdentical<float>(a, b);
    ASSERT_TRUE(atBothWidths([&] { return softmax(xd, 1); }, a, b));
    expectIdentical<double>(a, b);
    ASSERT_TRUE(atBothWidths([&] { return logSoftmax(xd, 1); }, a, b));
    expectIdentical<double>(a, b);
    ASSERT_TRUE(atBothWidths([&] { return logsumexp(xd, DimVector{1}); }, a, b));
    expectIdentical<double>(a, b);
  }
}

// NaN, infinities and empty lines give the same results at both widths.
TEST(VecKernels, SoftmaxSpecialValuesAgreeAcrossWidths) {
  KILN_SKIP_WITHOUT_AVX512();
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Lines of 21 elements (a full vector and a partial one at either width):
  // all -inf, one NaN, one +inf, -inf mixed in, huge values.
  Tensor x = randomTensor<float>({5, 21}, 9);
  float* p = x.data<float>();
  for (int i = 0; i < 21; ++i) p[i] = -inf;
  p[21 + 19] = nan;
  p[42 + 3] = inf;
  for (int i = 63; i < 84; i += 2) p[i] = -inf;
  for (int i = 84; i < 105; ++i) p[i] = 1e30f * static_cast<float>(i - 90);
  Tensor a, b;
  for (int64_t dim : {0, 1}) {
    ASSERT_TRUE(atBothWidths([&] { return softmax(x, dim); }, a, b));
    expectClose<float>(a, b, 1e-5, 1e-30);
    ASSERT_TRUE(atBothWidths([&] { return logSoftmax(x, dim); }, a, b));
    expectClose<float>(a, b, 1e-5, 1e-5);
    ASSERT_TRUE(atBothWidths([&] { return logsumexp(x, DimVector{dim}); }, a, b));
    expectClose<float>(a, b, 1e-5, 1e-5);
  }
  // logsumexp: -inf for a line of -inf, +inf for one with +inf, NaN with NaN.
  const Tensor lse = logsumexp(x, DimVector{1});
  EXPECT_EQ(lse.data<float>()[0], -inf);
  EXPECT_TRUE(std::isnan(lse.data<float>()[1]));
  EXPECT_EQ(lse.data<float>()[2], inf);
  const Tensor empty_lines = logsumexp(randomTensor<float>({4, 0}, 1), DimVector{1});
  for (int i = 0; i < 4; ++i) EXPECT_EQ(empty_lines.data<float>()[i], -inf);
}

// sin, cos and tan of an element do not depend on the other lanes of its
// vector: SLEEF reduces a whole vector differently when one lane is large or
// NaN, so kiln's vector math computes such lanes alone.
template <typename T, typename V, typename F>
void expectTrigLaneIndependent(const F& f) {
  constexpr int kLanes = sizeof(V) / sizeof(T);
  std::mt19937 gen(7);
  std::uniform_real_distribution<T> small(T(-200), T(200));
  const T neighbours[] = {T(3e7), T(-1e20), std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()};
  for (int trial = 0; trial < 2000; ++trial) {
    alignas(32) T alone[kLanes], mixed[kLanes], r_alone[kLanes], r_mixed[kLanes];
    for (int i = 0; i < kLanes; ++i) alone[i] = mixed[i] = small(gen);
    mixed[trial % kLanes] = neighbours[trial % 4];
    V a, m;
    std::memcpy(&a, alone, sizeof(V));
    std::memcpy(&m, mixed, sizeof(V));
    const V ra = f(a), rm = f(m);
    std::memcpy(r_alone, &ra, sizeof(V));
    std::memcpy(r_mixed, &rm, sizeof(V));
    for (int i = 0; i < kLanes; ++i) {
      if (i == trial % kLanes) continue;
      ASSERT_EQ(std::memcmp(&r_alone[i], &r_mixed[i], sizeof(T)), 0) << "x = " << alone[i];
    }
  }
}

#if KILN_HAVE_AVX2
TEST(VectorMath, TrigOfALaneIgnoresItsNeighboursFloat) {
  expectTrigLaneIndependent<float, __m256>([](__m256 x) { return kiln::vm::sin(x); });
  expectTrigLaneIndependent<float, __m256>([](__m256 x) { return kiln::vm::cos(x); });
  expectTrigLaneIndependent<float, __m256>([](__m256 x) { return kiln::vm::tan(x); });
}
TEST(VectorMath, TrigOfALaneIgnoresItsNeighboursDouble) {
  expectTrigLaneIndependent<double, __m256d>([](__m256d x) { return kiln::vm::sin(x); });
  expectTrigLaneIndependent<double, __m256d>([](__m256d x) { return kiln::vm::cos(x); });
  expectTrigLaneIndependent<double, __m256d>([](__m256d x) { return kiln::vm::tan(x); });
}
#endif
