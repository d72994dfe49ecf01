#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numbers>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/loops.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/shape.h"

using namespace kiln;

namespace {

template <typename T>
Tensor tensorOf(const std::vector<T>& values) {
  Tensor t = empty({static_cast<int64_t>(values.size())}, CppTypeToScalarType<T>::value);
  if (!values.empty()) std::memcpy(t.rawData(), values.data(), values.size() * sizeof(T));
  return t;
}

template <typename T>
std::vector<T> valuesOf(const Tensor& t) {
  Tensor c = contiguous(t);
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}

// The same values twice: as a contiguous tensor (vector kernels) and as a
// stride-2 view (the scalar fallback).
template <typename T>
std::pair<Tensor, Tensor> contiguousAndStrided(const std::vector<T>& values) {
  std::vector<T> doubled;
  for (T v : values) {
    doubled.push_back(v);
    doubled.push_back(T(0));
  }
  Tensor base = tensorOf(doubled);
  const auto n = static_cast<int64_t>(values.size());
  return {tensorOf(values), makeView(base, DimVector{n}, DimVector{2}, 0)};
}

template <typename T>
std::vector<T> wideRange() {
  std::vector<T> values;
  for (int i = -4000; i <= 4000; ++i) values.push_back(static_cast<T>(i) * T(0.0237));
  for (T v : {T(0), T(-0.0), T(1e-30), T(-1e-30), T(88.5), T(-88.5), T(100), T(-100), T(1e30), T(-1e30)}) {
    values.push_back(v);
  }
  values.push_back(std::numeric_limits<T>::infinity());
  values.push_back(-std::numeric_limits<T>::infinity());
  values.push_back(std::numeric_limits<T>::quiet_NaN());
  values.push_back(T(0.5));  // an odd count: the vector loop has a tail
  return values;
}

// Both results agree within `ulps` units in the last place of the result
// or, where the formula cancels (gelu of negative x), of the input.
template <typename T>
void expectClose(const std::vector<T>& vector_path, const std::vector<T>& scalar_path, const std::vector<T>& inputs,
                 double ulps, const char* op, bool input_scaled) {
  ASSERT_EQ(vector_path.size(), scalar_path.size());
  for (size_t i = 0; i < vector_path.size(); ++i) {
    const T a = vector_path[i], b = scalar_path[i];
    if (std::isnan(b) || std::isinf(b)) {
      EXPECT_TRUE(std::isnan(b) ? std::isnan(a) : a == b) << op << "(" << inputs[i] << "): " << a << " vs " << b;
      continue;
    }
    const double scale =
        std::max<double>(std::abs(static_cast<double>(input_scaled ? inputs[i] : b)), std::abs(static_cast<double>(b)));
    const double tolerance =
        ulps * std::numeric_limits<T>::epsilon() * std::max<double>(scale, std::numeric_limits<T>::min());
    EXPECT_NEAR(a, b, tolerance) << op << "(" << inputs[i] << ")";
  }
}

template <typename T>
void checkVectorMatchesScalar(const std::function<Tensor(const Tensor&)>& op, const char* name, double ulps,
                              bool input_scaled = false) {
  const std::vector<T> inputs = wideRange<T>();
  auto [dense, strided] = contiguousAndStrided(inputs);
  ASSERT_FALSE(strided.isContiguous());
  expectClose(valuesOf<T>(op(dense)), valuesOf<T>(op(strided)), inputs, ulps, name, input_scaled);
}

}  // namespace

TEST(Pointwise, VectorPathsMatchScalarPaths) {
  const std::pair<const char*, Tensor (*)(const Tensor&)> ops[] = {{"exp", exp},
                                                                   {"log", log},
                                                                   {"log1p", log1p},
                                                                   {"expm1", expm1},
                                                                   {"sqrt", sqrt},
                                                                   {"rsqrt", rsqrt},
                                                                   {"sin", sin},
                                                                   {"cos", cos},
                                                                   {"tan", tan},
                                                                   {"tanh", tanh},
                                                                   {"sigmoid", sigmoid},
                                                                   {"erf", erf},
                                                                   {"reciprocal", reciprocal},
                                                                   {"floor", floor},
                                                                   {"ceil", ceil},
                                                                   {"round", round},
                                                                   {"trunc", trunc},
                                                                   {"asin", asin},
                                                                   {"acos", acos},
                                                                   {"atan", atan},
                                                                   {"sinh", sinh},
                                                                   {"cosh", cosh},
                                                                   {"asinh", asinh},
                                                                   {"acosh", acosh},
                                                                   {"atanh", atanh},
                                                                   {"log10", log10},
                                                                   {"erfc", erfc},
                                                                   {"lgamma", lgamma},
                                                                   {"angle", angle}};
  for (const auto& [name, fn] : ops) {
    auto op = [fn](const Tensor& t) { return fn(t); };
    checkVectorMatchesScalar<float>(op, name, 4);
    checkVectorMatchesScalar<double>(op, name, 4);
  }
  checkVectorMatchesScalar<float>([](const Tensor& t) { return pow(t, Scalar(2.5)); }, "pow", 4);
  checkVectorMatchesScalar<double>([](const Tensor& t) { return pow(t, Scalar(-1.5)); }, "pow", 4);
  checkVectorMatchesScalar<double>([](const Tensor& t) { return gelu(t); }, "gelu", 4, true);
  checkVectorMatchesScalar<double>([](const Tensor& t) { return gelu(t, "tanh"); }, "gelu", 4, true);
  checkVectorMatchesScalar<float>([](const Tensor& t) { return gelu(t, "tanh"); }, "gelu", 4, true);
}

template <typename T>
void checkBinaryVectorMatchesScalar() {
  // Every pair of a set of values, special ones included.
  std::vector<T> values = wideRange<T>();
  std::vector<T> divisors = {T(2),
                             T(-2),
                             T(0.1),
                             T(-0.37),
                             T(3),
                             T(0),
                             T(-0.0),
                             T(1e-38),
                             T(1e38),
                             std::numeric_limits<T>::infinity(),
                             std::numeric_limits<T>::quiet_NaN()};
  std::vector<T> lhs, rhs;
  for (T a : values) {
    for (T b : divisors) {
      lhs.push_back(a);
      rhs.push_back(b);
    }
  }
  auto [a_dense, a_strided] = contiguousAndStrided(lhs);
  auto [b_dense, b_strided] = contiguousAndStrided(rhs);
  const std::pair<const char*, Tensor (*)(const Tensor&, const Tensor&)> exact_ops[] = {
      {"remainder", remainder}, {"fmod", fmod}, {"floor_divide", floorDivide}};
  for (const auto& [name, fn] : exact_ops) {
    expectClose(valuesOf<T>(fn(a_dense, b_dense)), valuesOf<T>(fn(a_strided, b_strided)), lhs, 0, name, false);
  }
  const std::pair<const char*, Tensor (*)(const Tensor&, const Tensor&)> ops[] = {
      {"atan2", atan2}, {"pow", pow}, {"copysign", copysign}};
  for (const auto& [name, fn] : ops) {
    expectClose(valuesOf<T>(fn(a_dense, b_dense)), valuesOf<T>(fn(a_strided, b_strided)), lhs, 4, name, false);
  }
  const std::optional<std::string> trunc("trunc");
  expectClose(valuesOf<T>(div(a_dense, b_dense, trunc)), valuesOf<T>(div(a_strided, b_strided, trunc)), lhs, 0,
              "div trunc", false);
}

TEST(Pointwise, BinaryVectorPathsMatchScalarPaths) {
  checkBinaryVectorMatchesScalar<float>();
  checkBinaryVectorMatchesScalar<double>();
  // SLEEF's fmod gives NaN where the quotient overflows; kiln redoes those lanes.
  const std::vector<float> big(9, 1e38f), tiny(9, 1e-38f);
  EXPECT_EQ(valuesOf<float>(fmod(tensorOf(big), tensorOf(tiny)))[0], std::fmod(1e38f, 1e-38f));
  EXPECT_TRUE(std::isinf(valuesOf<float>(floorDivide(tensorOf(big), tensorOf(tiny)))[0]));
}

TEST(Pointwise, FloatGeluVectorPathIsWithinItsErfApproximation) {
  // The float vector path uses PyTorch's erf approximation (absolute error < 1.5e-7).
  std::vector<float> inputs;
  for (int i = -2000; i <= 2000; ++i) inputs.push_back(static_cast<float>(i) * 0.005f);
  auto [dense, strided] = contiguousAndStrided(inputs);
  const auto fast = valuesOf<float>(gelu(dense)), exact = valuesOf<float>(gelu(strided));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const double rounding = 4 * std::numeric_limits<float>::epsilon() * std::abs(inputs[i]);
    EXPECT_NEAR(fast[i], exact[i], 0.5 * std::abs(inputs[i]) * 1.5e-7 + rounding) << inputs[i];
  }
}

TEST(Pointwise, SigmoidSaturatesWithoutNaN) {
  const std::vector<float> inputs = {-1e30f,
                                     -200.0f,
                                     -89.0f,
                                     -88.0f,
                                     0.0f,
                                     88.0f,
                                     200.0f,
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity()};
  const auto result = valuesOf<float>(sigmoid(tensorOf(inputs)));
  EXPECT_EQ(result[0], 0.0f);
  EXPECT_EQ(result[1], 0.0f);
  EXPECT_GT(result[3], 0.0f);  // 1 / (1 + e^88) is a denormal, not 0
  EXPECT_EQ(result[4], 0.5f);
  EXPECT_EQ(result[6], 1.0f);
  EXPECT_EQ(result[7], 1.0f);
  EXPECT_EQ(result[8], 0.0f);
  EXPECT_TRUE(std::isnan(valuesOf<float>(sigmoid(tensorOf<float>({NAN})))[0]));
}

TEST(Pointwise, RemainderTakesTheDivisorsSign) {
  const auto ints =
      valuesOf<int64_t>(remainder(tensorOf<int64_t>({-7, 7, -7, 7, 6}), tensorOf<int64_t>({3, -3, -3, 3, -3})));
  EXPECT_EQ(ints, (std::vector<int64_t>{2, -2, -1, 1, 0}));
  const auto floats = valuesOf<double>(remainder(tensorOf<double>({-7.5, 7.5}), tensorOf<double>({2.0, -2.0})));
  EXPECT_EQ(floats, (std::vector<double>{0.5, -0.5}));
  const auto c_style = valuesOf<int64_t>(fmod(tensorOf<int64_t>({-7, 7}), tensorOf<int64_t>({3, -3})));
  EXPECT_EQ(c_style, (std::vector<int64_t>{-1, 1}));
  const auto floored = valuesOf<int32_t>(floorDivide(tensorOf<int32_t>({-7, 7, 6}), tensorOf<int32_t>({2, -2, -3})));
  EXPECT_EQ(floored, (std::vector<int32_t>{-4, -4, -2}));
}

TEST(Pointwise, IntegerDivisionByZeroRaises) {
  const Tensor a = tensorOf<int32_t>({4, 5});
  const Tensor zero = tensorOf<int32_t>({1, 0});
  for (const char* mode : {"trunc", "floor"}) {
    try {
      div(a, zero, std::string(mode));
      FAIL() << "div by zero with rounding_mode=" << mode << " did not raise";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ZeroDivisionError"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(remainder(a, zero), Error);
  EXPECT_THROW(fmod(a, zero), Error);
  EXPECT_THROW(floorDivide(a, zero), Error);
  // True division gives inf, as for floats.
  EXPECT_TRUE(std::isinf(valuesOf<float>(div(a, zero))[1]));
  // A zero found by one of several threads still raises.
  std::vector<int64_t> many(200000, 7);
  many.back() = 0;
  const int threads = getNumThreads();
  setNumThreads(4);
  EXPECT_THROW(remainder(tensorOf<int64_t>(many), tensorOf<int64_t>(many)), Error);
  setNumThreads(threads);
}

TEST(Pointwise, IntegerMinDividedByMinusOneWraps) {
  // PyTorch dies of SIGFPE here; kiln wraps like two's complement negation.
  const int64_t min = std::numeric_limits<int64_t>::min();
  const Tensor a = tensorOf<int64_t>({min, 9});
  const Tensor minus_one = tensorOf<int64_t>({-1, -1});
  EXPECT_EQ(valuesOf<int64_t>(floorDivide(a, minus_one)), (std::vector<int64_t>{min, -9}));
  EXPECT_EQ(valuesOf<int64_t>(div(a, minus_one, std::string("trunc"))), (std::vector<int64_t>{min, -9}));
  EXPECT_EQ(valuesOf<int64_t>(remainder(a, minus_one)), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(valuesOf<int64_t>(fmod(a, minus_one)), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(valuesOf<int64_t>(neg(a))[0], min);
  EXPECT_EQ(valuesOf<int64_t>(abs(a))[0], min);
}

TEST(Pointwise, IntegerPowerFollowsPython) {
  const Tensor base = tensorOf<int64_t>({2, -2, 1, -1, -1, 3});
  const Tensor exponent = tensorOf<int64_t>({10, 3, -5, -3, -2, -1});
  EXPECT_EQ(valuesOf<int64_t>(pow(base, exponent)), (std::vector<int64_t>{1024, -8, 1, -1, 1, 0}));
  EXPECT_THROW(pow(base, Scalar(int64_t{-1})), Error);
  EXPECT_EQ(valuesOf<int64_t>(pow(base, Scalar(int64_t{2}))), (std::vector<int64_t>{4, 4, 1, 1, 1, 9}));
  // 1 ** NaN is 1.
  EXPECT_EQ(valuesOf<float>(pow(Scalar(int64_t{1}), tensorOf<float>({NAN})))[0], 1.0f);
}

TEST(Pointwise, ShiftCountsBeyondTheWidthAreDefined) {
  const Tensor a = tensorOf<int64_t>({1, -8, 3});
  const Tensor counts = tensorOf<int64_t>({64, 65, -1});
  // Counts wrap modulo 64, as x86 shifts do.
  EXPECT_EQ(valuesOf<int64_t>(bitwiseLeftShift(a, counts)),
            (std::vector<int64_t>{1, -16, std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(valuesOf<int64_t>(bitwiseRightShift(a, counts)), (std::vector<int64_t>{1, -4, 0}));
  EXPECT_EQ(valuesOf<int8_t>(bitwiseLeftShift(tensorOf<int8_t>({1, -1}), tensorOf<int8_t>({7, 8}))),
            (std::vector<int8_t>{-128, 0}));
}

TEST(Pointwise, NumberArgumentsAreRangeChecked) {
  EXPECT_EQ(kernels::checkedScalarTo<uint8_t>(Scalar(int64_t{-1}), "t"), 255);
  EXPECT_THROW(kernels::checkedScalarTo<uint8_t>(Scalar(int64_t{256}), "t"), Error);
  EXPECT_THROW(kernels::checkedScalarTo<uint8_t>(Scalar(int64_t{-256}), "t"), Error);
  EXPECT_THROW(kernels::checkedScalarTo<uint8_t>(Scalar(-0.5), "t"), Error);
  EXPECT_THROW(kernels::checkedScalarTo<int32_t>(Scalar(int64_t{1} << 40), "t"), Error);
  EXPECT_THROW(kernels::checkedScalarTo<float>(Scalar(1e40), "t"), Error);
  EXPECT_TRUE(std::isinf(kernels::checkedScalarTo<float>(Scalar(std::numeric_limits<double>::infinity()), "t")));
  EXPECT_THROW(kernels::checkedScalarTo<int64_t>(Scalar(std::numeric_limits<double>::quiet_NaN()), "t"), Error);
  EXPECT_TRUE(kernels::checkedScalarTo<bool>(Scalar(int64_t{2}), "t"));
  EXPECT_THROW(clamp(tensorOf<uint8_t>({1}), Scalar(int64_t{0}), Scalar(int64_t{300})), Error);
}

TEST(Pointwise, WhereConditionGivesIndicesPerDim) {
  Tensor mask = empty({2, 3}, ScalarType::Bool);
  const bool values[] = {false, true, false, true, true, false};
  std::memcpy(mask.rawData(), values, sizeof(values));
  const std::vector<Tensor> indices = where(mask);
  ASSERT_EQ(indices.size(), 2u);
  EXPECT_EQ(valuesOf<int64_t>(indices[0]), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(valuesOf<int64_t>(indices[1]), (std::vector<int64_t>{1, 0, 1}));
  // A transposed view is walked in its logical order.
  const std::vector<Tensor> transposed = where(makeView(mask, DimVector{3, 2}, DimVector{1, 3}, 0));
  EXPECT_EQ(valuesOf<int64_t>(transposed[0]), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(valuesOf<int64_t>(transposed[1]), (std::vector<int64_t>{1, 0, 1}));
}

TEST(Pointwise, InPlaceWritesThroughAView) {
  Tensor base = tensorOf<float>({1, 2, 3, 4, 5, 6});
  Tensor column = makeView(base, DimVector{3}, DimVector{2}, 1);  // elements 1, 3, 5
  mul_(column, scalarToTensor(Scalar(10.0)));
  EXPECT_EQ(valuesOf<float>(base), (std::vector<float>{1, 20, 3, 40, 5, 60}));
  Tensor ints = tensorOf<int32_t>({1, 2});
  EXPECT_THROW(add_(ints, scalarToTensor(Scalar(1.5))), Error);
  EXPECT_EQ(valuesOf<int32_t>(ints), (std::vector<int32_t>{1, 2}));
}

TEST(Pointwise, ParallelSplitMatchesOneThread) {
  std::vector<float> inputs(100003);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = std::sin(static_cast<float>(i)) * 10.0f;
  const Tensor x = tensorOf(inputs);
  const int threads = getNumThreads();
  setNumThreads(1);
  const auto serial_tanh = valuesOf<float>(tanh(x));
  const auto serial_sum = valuesOf<float>(add(x, x));
  setNumThreads(4);
  const auto parallel_tanh = valuesOf<float>(tanh(x));
  const auto parallel_sum = valuesOf<float>(add(x, x));
  setNumThreads(threads);
  EXPECT_EQ(serial_tanh, parallel_tanh);
  EXPECT_EQ(serial_sum, parallel_sum);
}

TEST(Pointwise, AsinhAndAcoshStayFiniteForHugeInputs) {
  // SLEEF's vector forms overflow beyond sqrt(max); those lanes are redone.
  const float huge = 1e30f, tiny = 1e-40f;  // tiny is subnormal
  const std::vector<float> inputs = {huge, -huge, 3e38f, 2.0f, tiny, -tiny, 0.0f, 1e19f, 5.0f};
  const auto asinh_values = valuesOf<float>(asinh(tensorOf(inputs)));
  const auto acosh_values = valuesOf<float>(acosh(tensorOf(inputs)));
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_FLOAT_EQ(asinh_values[i], std::asinh(inputs[i])) << inputs[i];
    if (inputs[i] >= 1) {
      EXPECT_FLOAT_EQ(acosh_values[i], std::acosh(inputs[i])) << inputs[i];
    }
  }
  EXPECT_EQ(asinh_values[4], tiny);
  const std::vector<double> doubles = {1e300, -1e200, 7.0, 1e-310};
  const auto asinh_doubles = valuesOf<double>(asinh(tensorOf(doubles)));
  for (size_t i = 0; i < doubles.size(); ++i) EXPECT_DOUBLE_EQ(asinh_doubles[i], std::asinh(doubles[i]));
}

TEST(Pointwise, FloatFunctionsOfIntegersGiveFloat32) {
  Tensor ints = tensorOf<int32_t>({-2, 0, 1, 3});
  const Tensor result = lgamma(ints);
  EXPECT_EQ(result.dtype(), ScalarType::Float);
  const auto values = valuesOf<float>(result);
  EXPECT_TRUE(std::isinf(values[0]));
  EXPECT_EQ(values[2], 0.0f);
  EXPECT_FLOAT_EQ(values[3], std::log(2.0f));
  EXPECT_EQ(valuesOf<float>(angle(ints)), (std::vector<float>{std::numbers::pi_v<float>, 0, 0, 0}));
  EXPECT_THROW(asin_(ints), Error);  // float32 can't go back into int32
  Tensor out = empty({4}, ScalarType::Long);
  EXPECT_THROW(log10Out(ints, out), Error);
}

TEST(Pointwise, ClassTests) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = tensorOf<float>({1.0f, NAN, inf, -inf, -0.0f});
  EXPECT_EQ(valuesOf<bool>(isnan(x)), (std::vector<bool>{false, true, false, false, false}));
  EXPECT_EQ(valuesOf<bool>(isinf(x)), (std::vector<bool>{false, false, true, true, false}));
  EXPECT_EQ(valuesOf<bool>(isfinite(x)), (std::vector<bool>{true, false, false, false, true}));
  EXPECT_EQ(valuesOf<bool>(isposinf(x)), (std::vector<bool>{false, false, true, false, false}));
  EXPECT_EQ(valuesOf<bool>(isneginf(x)), (std::vector<bool>{false, false, false, true, false}));
  const Tensor ints = tensorOf<int64_t>({std::numeric_limits<int64_t>::max(), 0});
  EXPECT_EQ(valuesOf<bool>(isfinite(ints)), (std::vector<bool>{true, true}));
  EXPECT_EQ(valuesOf<bool>(isnan(ints)), (std::vector<bool>{false, false}));
  // isnan casts into any out= dtype; isposinf takes only bool.
  Tensor float_out = empty({5}, ScalarType::Float);
  isnanOut(x, float_out);
  EXPECT_EQ(valuesOf<float>(float_out), (std::vector<float>{0, 1, 0, 0, 0}));
  EXPECT_THROW(isposinfOut(x, float_out), Error);
}

TEST(Pointwise, FrexpSplitsMantissaAndExponent) {
  const Tensor x = tensorOf<double>({8.0, -0.375, 0.0, 1e-310, std::numeric_limits<double>::infinity()});
  const auto [mantissa, exponent] = frexp(x);
  EXPECT_EQ(mantissa.dtype(), ScalarType::Double);
  EXPECT_EQ(exponent.dtype(), ScalarType::Int);
  const auto m = valuesOf<double>(mantissa);
  const auto e = valuesOf<int32_t>(exponent);
  EXPECT_EQ(m[0], 0.5);
  EXPECT_EQ(e[0], 4);
  EXPECT_EQ(m[1], -0.75);
  EXPECT_EQ(e[1], -1);
  EXPECT_EQ(e[2], 0);
  EXPECT_EQ(std::ldexp(m[3], e[3]), 1e-310);
  EXPECT_TRUE(std::isinf(m[4]));
  EXPECT_THROW(frexp(tensorOf<int32_t>({1})), Error);
  Tensor wrong_mantissa = empty({5}, ScalarType::Float), exponent_out = empty({5}, ScalarType::Int);
  EXPECT_THROW(frexpOut(x, wrong_mantissa, exponent_out), Error);
  Tensor mantissa_out = empty({5}, ScalarType::Double), wrong_exponent = empty({5}, ScalarType::Long);
  EXPECT_THROW(frexpOut(x, mantissa_out, wrong_exponent), Error);
  frexpOut(x, mantissa_out, exponent_out);
  EXPECT_EQ(valuesOf<int32_t>(exponent_out), e);
}

TEST(Pointwise, GcdOfNegativesAndExtremes) {
  const int64_t min = std::numeric_limits<int64_t>::min();
  const Tensor a = tensorOf<int64_t>({-12, 0, min, min, 7, 0});
  const Tensor b = tensorOf<int64_t>({18, -5, 0, -1, 0, 0});
  EXPECT_EQ(valuesOf<int64_t>(gcd(a, b)), (std::vector<int64_t>{6, 5, min, 1, 7, 0}));
  EXPECT_EQ(valuesOf<uint8_t>(gcd(tensorOf<uint8_t>({255, 128}), tensorOf<uint8_t>({85, 96}))),
            (std::vector<uint8_t>{85, 32}));
  EXPECT_THROW(gcd(tensorOf<float>({1}), tensorOf<float>({2})), Error);
  const Tensor bools = to(tensorOf<uint8_t>({1}), ScalarType::Bool);
  EXPECT_THROW(gcd(bools, bools), Error);
}

TEST(Pointwise, CopysignAndLdexpPromoteIntegers) {
  const Tensor ints = tensorOf<int32_t>({3, -4, 0});
  const Tensor signs = tensorOf<float>({-0.0f, 1.0f, -NAN});
  const Tensor result = copysign(ints, signs);
  EXPECT_EQ(result.dtype(), ScalarType::Float);
  const auto values = valuesOf<float>(result);
  EXPECT_EQ(values[0], -3.0f);
  EXPECT_EQ(values[1], 4.0f);
  EXPECT_TRUE(std::signbit(values[2]));  // the sign bit of a NaN counts
  const Tensor scaled = ldexp(ints, tensorOf<int64_t>({2, -2, 5}));
  EXPECT_EQ(scaled.dtype(), ScalarType::Float);
  EXPECT_EQ(valuesOf<float>(scaled), (std::vector<float>{12.0f, -1.0f, 0.0f}));
  // As PyTorch computes it (x * 2 ** e), 2 ** 130 overflows float first.
  EXPECT_TRUE(std::isinf(valuesOf<float>(ldexp(tensorOf<float>({1e-30f}), tensorOf<int32_t>({130})))[0]));
}

TEST(Pointwise, ContiguityPerMemoryFormat) {
  const Tensor plain = empty({2, 3, 4, 5});
  const Tensor channels_last = makeView(empty({2, 4, 5, 3}), DimVector{2, 3, 4, 5}, DimVector{60, 1, 15, 3}, 0);
  EXPECT_TRUE(isContiguous(plain, MemoryFormat::Contiguous));
  EXPECT_FALSE(isContiguous(plain, MemoryFormat::ChannelsLast));
  EXPECT_TRUE(isContiguous(channels_last, MemoryFormat::ChannelsLast));
  EXPECT_FALSE(isContiguous(channels_last, MemoryFormat::Contiguous));
  EXPECT_FALSE(isContiguous(channels_last, MemoryFormat::ChannelsLast3d));
  EXPECT_TRUE(isContiguous(plain, MemoryFormat::Preserve));
  // Other ranks are never channels-last.
  EXPECT_FALSE(isContiguous(empty({2, 3}), MemoryFormat::ChannelsLast));
  EXPECT_TRUE(isContiguous(empty({2, 1, 1, 1}), MemoryFormat::ChannelsLast));
}
