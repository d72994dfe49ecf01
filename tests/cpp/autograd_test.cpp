// The eager autograd engine (kiln/autograd): recording through runOperator,
// the backward pass with dependency counting and accumulation, autograd's
// grad(), saved-variable version checks and freed graphs.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/autograd/engine.h"
#include "kiln/autograd/function.h"
#include "kiln/core/dispatch_hook.h"
#include "kiln/core/operator.h"
#include "kiln/tensor/factory.h"

namespace kiln {
namespace {

// Runs an operator the way eager callers do.
IValue call(const char* name, const char* overload, std::vector<IValue> args) {
  OperatorPtr op = findOperator(Symbol::fromQualString(name), overload);
  EXPECT_TRUE(op) << name << "." << overload;
  Stack stack(args.begin(), args.end());
  runOperator(*op, stack);
  return stack.back();
}

Tensor leaf(std::vector<float> values) {
  Tensor t = empty({static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = values[i];
  autograd::setRequiresGrad(t, true);
  return t;
}

std::vector<float> valuesOf(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

TEST(AutogradTest, RecordsOnlyWhenAnInputRequiresGrad) {
  Tensor plain = ones({3});
  Tensor y = call("aten::mul", "Tensor", {plain, plain}).toTensor();
  EXPECT_FALSE(y.requiresGrad());
  EXPECT_EQ(y.impl()->autogradMeta(), nullptr);
  Tensor a = leaf({1, 2, 3});
  Tensor z = call("aten::mul", "Tensor", {a, plain}).toTensor();
  ASSERT_TRUE(autograd::gradFn(z));
  EXPECT_EQ(autograd::gradFn(z)->name(), "MulBackward0");
  EXPECT_FALSE(autograd::isLeaf(z));
}

TEST(AutogradTest, BackwardAccumulatesThroughSharedInputs) {
  Tensor a = leaf({1, 2, 3});
  Tensor b = call("aten::mul", "Tensor", {a, a}).toTensor();  // a^2
  Tensor c = call("aten::add", "Tensor", {b, a, IValue(Scalar(int64_t{1}))}).toTensor();
  Tensor s = call("aten::sum", "", {c, IValue()}).toTensor();
  autograd::backward({s}, {}, std::nullopt, false);
  EXPECT_EQ(valuesOf(autograd::grad(a)), (std::vector<float>{3, 5, 7}));  // 2a + 1
  autograd::backward({call("aten::sum", "", {call("aten::mul", "Tensor", {a, a}).toTensor(), IValue()}).toTensor()}, {},
                     std::nullopt, false);
  EXPECT_EQ(valuesOf(autograd::grad(a)), (std::vector<float>{5, 9, 13}));  // accumulated
}

TEST(AutogradTest, GradReturnsWithoutAccumulating) {
  Tensor a = leaf({1, 2});
  Tensor s = call("aten::sum", "", {call("aten::exp", "", {a}).toTensor(), IValue()}).toTensor();
  autograd::TensorList g = autograd::grad({s}, {a}, {}, std::nullopt, false, false);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_NEAR(valuesOf(g[0])[1], std::exp(2.0f), 1e-5);
  EXPECT_FALSE(autograd::grad(a).defined());
}

TEST(AutogradTest, SecondBackwardWithoutRetainGraphRaises) {
  Tensor a = leaf({1, 2});
  Tensor s = call("aten::sum", "", {call("aten::mul", "Tensor", {a, a}).toTensor(), IValue()}).toTensor();
  autograd::backward({s}, {}, std::nullopt, false);
  EXPECT_THROW(autograd::backward({s}, {}, std::nullopt, false), Error);
}

TEST(AutogradTest, ModifiedSavedTensorRaises) {
  Tensor a = leaf({1, 2});
  Tensor b = call("aten::mul", "Scalar", {a, IValue(Scalar(2.0))}).toTensor();
  Tensor c = call("aten::mul", "Tensor", {b, b}).toTensor();
  uint32_t before = b.storage()->version();
  call("aten::add_", "Scalar", {b, IValue(Scalar(1.0)), IValue(Scalar(int64_t{1}))});
  EXPECT_EQ(b.storage()->version(), before + 1);
  Tensor s = call("aten::sum", "", {c, IValue()}).toTensor();
  try {
    autograd::backward({s}, {}, std::nullopt, false);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("modified by an inplace operation: [torch.FloatTensor [2]], which is output "
                                         "0 of AddBackward0, is at version 1; expected version 0 instead."),
              std::string::npos)
        << e.what();
  }
}

TEST(AutogradTest, NonScalarWithoutGradientRaises) {
  Tensor a = leaf({1, 2});
  Tensor b = call("aten::mul", "Tensor", {a, a}).toTensor();
  EXPECT_THROW(autograd::backward({b}, {}, std::nullopt, false), Error);
}

TEST(AutogradTest, ArgumentThatRequiresGradWithoutFormulaRaisesAtBackward) {
  // pow(Scalar, Tensor) once had no formula for its exponent: its gradient
  // was silently missing. Now it has one, and an argument without one raises.
  Tensor e = leaf({0.5f, 2.0f});
  Tensor p = call("aten::pow", "Scalar", {IValue(Scalar(2.0)), e}).toTensor();
  autograd::backward({call("aten::sum", "", {p, IValue()}).toTensor()}, {}, std::nullopt, false);
  ASSERT_TRUE(autograd::grad(e).defined());
  EXPECT_NEAR(valuesOf(autograd::grad(e))[1], 4.0 * std::log(2.0), 1e-5);

  Tensor b = leaf({1.5f, 2.5f});
  Tensor r = call("aten::remainder", "Scalar_Tensor", {IValue(Scalar(2.0)), b}).toTensor();
  ASSERT_TRUE(r.requiresGrad());
  Tensor s = call("aten::sum", "", {r, IValue()}).toTensor();
  try {
    autograd::backward({s}, {}, std::nullopt, false);
    FAIL() << "backward through an op without a derivative must raise";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("derivative for aten::remainder is not implemented"), std::string::npos);
  }
}

TEST(AutogradTest, CreateGraphGivesSecondDerivatives) {
  Tensor x = leaf({0.5f, 2.0f});
  Tensor cube = call("aten::pow", "Tensor_Scalar", {x, IValue(Scalar(3.0))}).toTensor();
  Tensor s = call("aten::sum", "", {cube, IValue()}).toTensor();
  autograd::TensorList first = autograd::grad({s}, {x}, {}, std::nullopt, /*create_graph=*/true, false);
  ASSERT_TRUE(first[0].requiresGrad());  // 3x^2, with a history
  Tensor t = call("aten::sum", "", {first[0], IValue()}).toTensor();
  autograd::TensorList second = autograd::grad({t}, {x}, {}, std::nullopt, false, false);
  EXPECT_EQ(valuesOf(second[0]), (std::vector<float>{3.0f, 12.0f}));  // 6x
}

}  // namespace
}  // namespace kiln
