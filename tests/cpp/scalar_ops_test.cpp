// TorchScript's number, conversion, tensor-property and math operators,
// called through the registry on a Stack as the interpreter calls them.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>

#include "kiln/core/operator.h"

using namespace kiln;

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Runs the overload `name.overload` ("aten::add", "int") on `args`; returns the stack.
Stack call(std::string_view name, std::string_view overload, Stack args) {
  OperatorPtr op = findOperator(Symbol::fromQualString(name), overload);
  if (!op) throw std::runtime_error("no operator " + std::string(name) + "." + std::string(overload));
  op->operation()(args);
  return args;
}

// The single result of an overload.
IValue call1(std::string_view name, std::string_view overload, Stack args) {
  Stack out = call(name, overload, std::move(args));
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? IValue() : out[0];
}

Tensor scalarTensor(double value, ScalarType dtype) { return scalarToTensor(Scalar(value), dtype); }

}  // namespace

TEST(ScalarOps, IntArithmeticWrapsAndRoundsLikePython) {
  EXPECT_EQ(call1("aten::add", "int", {kMax, int64_t{1}}).toInt(), kMin);
  EXPECT_EQ(call1("aten::mul", "int", {int64_t{1} << 62, int64_t{4}}).toInt(), 0);
  EXPECT_EQ(call1("aten::floordiv", "int", {int64_t{-7}, int64_t{2}}).toInt(), -4);
  EXPECT_EQ(call1("aten::remainder", "int", {int64_t{-7}, int64_t{2}}).toInt(), 1);
  EXPECT_EQ(call1("aten::remainder", "int", {int64_t{7}, int64_t{-2}}).toInt(), -1);
  EXPECT_EQ(call1("aten::remainder", "float", {-7.0, 2.0}).toDouble(), 1.0);
  EXPECT_EQ(call1("aten::floordiv", "float", {-7.0, 2.0}).toDouble(), -4.0);
  IValue half = call1("aten::div", "int", {int64_t{7}, int64_t{2}});
  ASSERT_TRUE(half.isDouble());
  EXPECT_EQ(half.toDouble(), 3.5);
  Stack qr = call("aten::divmod", "int", {int64_t{-7}, int64_t{2}});
  ASSERT_EQ(qr.size(), 2u);
  EXPECT_EQ(qr[0].toInt(), -4);
  EXPECT_EQ(qr[1].toInt(), 1);
  // int ** int is a float in TorchScript.
  IValue power = call1("aten::pow", "int", {int64_t{2}, int64_t{-1}});
  ASSERT_TRUE(power.isDouble());
  EXPECT_EQ(power.toDouble(), 0.5);
}

TEST(ScalarOps, DivisionByZeroRaisesAndInt64MinOverMinusOneWraps) {
  EXPECT_THROW(call("aten::floordiv", "int", {int64_t{7}, int64_t{0}}), Error);
  EXPECT_THROW(call("aten::remainder", "int", {int64_t{7}, int64_t{0}}), Error);
  EXPECT_THROW(call("aten::divmod", "int", {int64_t{7}, int64_t{0}}), Error);
  EXPECT_THROW(call("aten::divmod", "float", {7.0, 0.0}), Error);
  EXPECT_THROW(call("aten::__round_to_zero_floordiv", "int", {int64_t{7}, int64_t{0}}), Error);
  EXPECT_THROW(call("aten::pow", "float", {0.0, -1.0}), Error);
  // Floats divide by zero without raising.
  EXPECT_TRUE(std::isinf(call1("aten::div", "float", {1.0, 0.0}).toDouble()));
  EXPECT_TRUE(std::isnan(call1("aten::remainder", "float", {1.0, 0.0}).toDouble()));
  // The hardware traps here (PyTorch crashes); kiln wraps like the other overflows.
  EXPECT_EQ(call1("aten::floordiv", "int", {kMin, int64_t{-1}}).toInt(), kMin);
  EXPECT_EQ(call1("aten::remainder", "int", {kMin, int64_t{-1}}).toInt(), 0);
  EXPECT_EQ(call1("aten::__round_to_zero_floordiv", "int", {kMin, int64_t{-1}}).toInt(), kMin);
  EXPECT_EQ(call1("aten::gcd", "int", {kMin, int64_t{-1}}).toInt(), 1);
  Stack qr = call("aten::divmod", "int", {kMin, int64_t{-1}});
  EXPECT_EQ(qr[0].toInt(), kMin);
  EXPECT_EQ(qr[1].toInt(), 0);
}

TEST(ScalarOps, ScalarOverloadsStayIntUnlessAFloatTakesPart) {
  IValue ints = call1("aten::add", "", {int64_t{2}, int64_t{3}});
  ASSERT_TRUE(ints.isInt());
  EXPECT_EQ(ints.toInt(), 5);
  IValue mixed = call1("aten::add", "", {int64_t{2}, 0.5});
  ASSERT_TRUE(mixed.isDouble());
  EXPECT_EQ(mixed.toDouble(), 2.5);
  // A bool in a Scalar slot is an int.
  IValue bools = call1("aten::add", "", {true, true});
  ASSERT_TRUE(bools.isInt());
  EXPECT_EQ(bools.toInt(), 2);
  IValue smaller = call1("prim::min", "", {int64_t{3}, 2.5});
  ASSERT_TRUE(smaller.isDouble());
  EXPECT_EQ(smaller.toDouble(), 2.5);
  IValue larger = call1("prim::max", "int_float", {int64_t{3}, 2.5});
  ASSERT_TRUE(larger.isDouble());
  EXPECT_EQ(larger.toDouble(), 3.0);
  EXPECT_TRUE(call1("aten::eq", "int_float", {int64_t{3}, 3.0}).toBool());
  EXPECT_FALSE(call1("aten::lt", "", {std::nan(""), 1.0}).toBool());
}

TEST(ScalarOps, BitwiseOpsAndShiftCountsModulo64) {
  EXPECT_EQ(call1("aten::__and__", "int", {int64_t{12}, int64_t{10}}).toInt(), 8);
  EXPECT_EQ(call1("aten::__xor__", "int", {int64_t{12}, int64_t{10}}).toInt(), 6);
  EXPECT_TRUE(call1("aten::__or__", "bool", {false, true}).toBool());
  EXPECT_FALSE(call1("aten::__not__", "", {true}).toBool());
  EXPECT_EQ(call1("aten::__lshift__", "int", {int64_t{1}, int64_t{63}}).toInt(), kMin);
  EXPECT_EQ(call1("aten::__lshift__", "int", {int64_t{1}, int64_t{64}}).toInt(), 1);
  EXPECT_EQ(call1("aten::__rshift__", "int", {int64_t{-8}, int64_t{1}}).toInt(), -4);
}

TEST(ScalarOps, UnaryScalarOverloadsPassThroughCppFloatAndInt) {
  // exp.float keeps double precision; exp.Scalar rounds to float32, as in PyTorch.
  EXPECT_EQ(call1("aten::exp", "float", {1.0}).toDouble(), std::numbers::e);
  EXPECT_EQ(call1("aten::exp", "Scalar", {1.0}).toDouble(), static_cast<double>(static_cast<float>(std::numbers::e)));
  IValue neg = call1("aten::neg", "Scalar", {int64_t{1} << 40});
  ASSERT_TRUE(neg.isInt());
  EXPECT_EQ(neg.toInt(), 0);  // -(2**40) narrowed to a C++ int
  EXPECT_EQ(call1("aten::floor", "Scalar", {1e10}).toInt(), 1410065408);
  EXPECT_EQ(call1("prim::abs", "int", {int64_t{-5}}).toInt(), 5);
  EXPECT_EQ(call1("prim::abs", "int", {kMin}).toInt(), kMin);
}

TEST(MathOps, FloorAndCeilAreCheckedInts) {
  IValue f = call1("aten::floor", "float", {-2.5});
  ASSERT_TRUE(f.isInt());
  EXPECT_EQ(f.toInt(), -3);
  EXPECT_EQ(call1("aten::ceil", "float", {-2.5}).toInt(), -2);
  EXPECT_EQ(call1("aten::ceil", "float", {0x1p63}).toInt(), kMin + 1);
  EXPECT_EQ(call1("aten::ceil", "int", {kMax}).toInt(), kMin);
  try {
    call("aten::ceil", "float", {INFINITY});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "Cannot convert float inf to integer");
  }
  EXPECT_THROW(call("aten::floor", "float", {1e30}), Error);
}

TEST(MathOps, IntegerFunctions) {
  EXPECT_EQ(call1("aten::factorial", "int", {int64_t{20}}).toInt(), 2432902008176640000);
  EXPECT_EQ(call1("aten::factorial", "int", {int64_t{21}}).toInt(), -4249290049419214848);  // 21! mod 2**64
  EXPECT_EQ(call1("aten::factorial", "int", {int64_t{1} << 32}).toInt(), 1);                // narrowed to a C++ int: 0
  EXPECT_THROW(call("aten::factorial", "int", {int64_t{-1}}), Error);
  EXPECT_EQ(call1("aten::gcd", "int", {int64_t{-12}, int64_t{18}}).toInt(), 6);
  EXPECT_EQ(call1("aten::gcd", "int", {int64_t{0}, int64_t{0}}).toInt(), 0);
}

TEST(MathOps, FloatDecompositions) {
  Stack me = call("aten::frexp", "", {8.0});
  EXPECT_EQ(me[0].toDouble(), 0.5);
  EXPECT_EQ(me[1].toInt(), 4);
  Stack parts = call("aten::modf", "", {-2.5});
  EXPECT_EQ(parts[0].toDouble(), -0.5);
  EXPECT_EQ(parts[1].toDouble(), -2.0);
  EXPECT_EQ(call1("aten::ldexp", "", {1.0, int64_t{3}}).toDouble(), 8.0);
  EXPECT_EQ(call1("aten::ldexp", "", {1.0, (int64_t{1} << 32) + 3}).toDouble(), 8.0);  // exponent narrowed
  EXPECT_EQ(call1("aten::log", "int_int", {int64_t{8}, int64_t{2}}).toDouble(), 3.0);
  EXPECT_EQ(call1("aten::mathremainder", "int", {int64_t{7}, int64_t{2}}).toDouble(), -1.0);
  EXPECT_EQ(call1("aten::copysign", "float", {1.0, -0.0}).toDouble(), -1.0);
  EXPECT_EQ(call1("aten::round", "float", {2.5}).toDouble(), 2.0);
  EXPECT_EQ(call1("aten::round", "float", {-3.5}).toDouble(), -4.0);
  EXPECT_EQ(call1("aten::angle", "float", {-0.0}).toDouble(), std::numbers::pi);
  EXPECT_TRUE(call1("aten::isnan", "float", {std::nan("")}).toBool());
}

TEST(MathOps, MixedDivmodNarrowsItsOperandsToCppIntAndFloat) {
  // 2**40 + 1 as a C++ int is 1; 3.3 as a float is 3.29999995.
  Stack qr = call("aten::divmod", "int_float", {(int64_t{1} << 40) + 1, 3.3});
  EXPECT_EQ(qr[0].toDouble(), 0.0);
  EXPECT_EQ(qr[1].toDouble(), 1.0);
  Stack fi = call("aten::divmod", "float_int", {0.1, int64_t{3}});
  EXPECT_EQ(fi[1].toDouble(), static_cast<double>(0.1f));
  EXPECT_THROW(call("aten::divmod", "float_int", {1.0, int64_t{1} << 32}), Error);  // the divisor narrows to 0
}

TEST(ScalarOps, NumberAndStringConversions) {
  EXPECT_EQ(call1("aten::Int", "float", {-2.7}).toInt(), -2);
  EXPECT_EQ(call1("aten::Int", "float", {INFINITY}).toInt(), kMin);
  EXPECT_EQ(call1("aten::Int", "Scalar", {2.7}).toInt(), 2);
  EXPECT_THROW(call("aten::Int", "Scalar", {3e9}), Error);  // a checked conversion to C++ int
  EXPECT_EQ(call1("aten::Float", "int", {(int64_t{1} << 40) + 1}).toDouble(), 0x1p40);  // through a C++ float
  EXPECT_TRUE(call1("aten::Bool", "float", {std::nan("")}).toBool());
  EXPECT_EQ(call1("aten::Int", "str", {std::string(" -12")}).toInt(), -12);
  EXPECT_THROW(call("aten::Int", "str", {std::string("12 ")}), Error);
  EXPECT_THROW(call("aten::Int", "str", {std::string("99999999999999999999")}), Error);
  EXPECT_THROW(call("aten::Int", "str", {std::string("")}), Error);
  EXPECT_EQ(call1("aten::Float", "str", {std::string("1e3")}).toDouble(), 1000.0);
  EXPECT_TRUE(std::isinf(call1("aten::Float", "str", {std::string("-inf")}).toDouble()));
  try {
    call("aten::Float", "str", {std::string("1.5x")});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "could not convert string to float: '1.5x'");
  }
}

TEST(ScalarOps, TensorToNumberConversions) {
  EXPECT_EQ(call1("aten::Int", "Tensor", {scalarTensor(-2.7, ScalarType::Float)}).toInt(), -2);
  EXPECT_EQ(call1("aten::Float", "Tensor", {scalarTensor(3, ScalarType::Long)}).toDouble(), 3.0);
  EXPECT_THROW(call("aten::Int", "Tensor", {scalarTensor(NAN, ScalarType::Double)}), Error);
  EXPECT_THROW(call("aten::Int", "Tensor", {empty({2}, ScalarType::Long)}), Error);
  EXPECT_THROW(call("aten::Bool", "Tensor", {empty({0})}), Error);
  EXPECT_TRUE(call1("aten::Bool", "Tensor", {scalarTensor(0.5, ScalarType::Float)}).toBool());

  EXPECT_EQ(call1("aten::IntImplicit", "", {scalarTensor(7, ScalarType::Char)}).toInt(), 7);
  EXPECT_THROW(call("aten::IntImplicit", "", {scalarTensor(2.5, ScalarType::Float)}), Error);
  EXPECT_THROW(call("aten::FloatImplicit", "", {empty({1})}), Error);
  Tensor needs_grad = scalarTensor(2.0, ScalarType::Float);
  needs_grad.impl()->setRequiresGrad(true);
  EXPECT_THROW(call("aten::FloatImplicit", "", {needs_grad}), Error);
  IValue b = call1("aten::ScalarImplicit", "", {scalarTensor(1, ScalarType::Bool)});
  ASSERT_TRUE(b.isBool());
  EXPECT_TRUE(b.toBool());
}

TEST(ScalarOps, NumToTensorMakesPlainZeroDimTensors) {
  Tensor f = call1("prim::NumToTensor", "Scalar", {2.5}).toTensor();
  EXPECT_EQ(f.dtype(), ScalarType::Double);
  EXPECT_EQ(f.dim(), 0);
  EXPECT_FALSE(f.isWrappedNumber());
  EXPECT_EQ(f.item().toDouble(), 2.5);
  EXPECT_EQ(call1("prim::NumToTensor", "Scalar", {true}).toTensor().dtype(), ScalarType::Long);
  Tensor b = call1("prim::NumToTensor", "bool", {true}).toTensor();
  EXPECT_EQ(b.dtype(), ScalarType::Bool);
  EXPECT_TRUE(b.item().toBool());
}

TEST(ScalarOps, TensorProperties) {
  Tensor t = empty({2, 3}, ScalarType::Double);
  EXPECT_EQ(call1("prim::dtype", "", {t}).toInt(), 7);
  EXPECT_EQ(call1("prim::layout", "", {t}).toInt(), 0);
  IValue device = call1("prim::device", "", {t});
  ASSERT_TRUE(device.isDevice());
  EXPECT_TRUE(device.toDevice().isCpu());
  EXPECT_TRUE(call1("prim::is_cpu", "", {t}).toBool());
  EXPECT_FALSE(call1("prim::is_cuda", "", {t}).toBool());
  EXPECT_TRUE(call1("prim::name", "", {t}).isNone());
  EXPECT_EQ(call1("aten::element_size", "", {t}).toInt(), 8);
  EXPECT_TRUE(call1("aten::is_floating_point", "", {t}).toBool());
  EXPECT_FALSE(call1("aten::is_signed", "", {empty({1}, ScalarType::Byte)}).toBool());
  EXPECT_EQ(call1("aten::get_device", "", {t}).toInt(), -1);
  Tensor transposed = makeView(t, {3, 2}, {1, 3}, 1);
  EXPECT_TRUE(call1("aten::is_contiguous", "", {t}).toBool());
  EXPECT_FALSE(call1("aten::is_contiguous", "", {transposed}).toBool());
  EXPECT_EQ(call1("aten::storage_offset", "", {transposed}).toInt(), 1);

  t.impl()->setRequiresGrad(true);
  EXPECT_TRUE(call1("prim::requires_grad", "", {t}).toBool());
  Tensor data = call1("prim::data", "", {t}).toTensor();
  EXPECT_FALSE(data.requiresGrad());
  EXPECT_FALSE(data.isSame(t));
  EXPECT_EQ(data.rawData(), t.rawData());
}

TEST(ScalarOps, DtypeArithmetic) {
  EXPECT_EQ(call1("aten::promote_types", "", {int64_t{4}, int64_t{6}}).toInt(), 6);
  EXPECT_FALSE(call1("aten::can_cast", "", {int64_t{6}, int64_t{4}}).toBool());
  EXPECT_EQ(call1("aten::result_type", "Scalar_Scalar", {int64_t{1}, 2.0}).toInt(), 6);
  EXPECT_EQ(call1("aten::result_type", "Scalar_Scalar", {int64_t{1}, true}).toInt(), 4);
}

TEST(ScalarOps, Devices) {
  IValue cuda1 = call1("aten::device", "", {std::string("cuda:1")});
  ASSERT_TRUE(cuda1.isDevice());
  EXPECT_EQ(call1("prim::index", "", {cuda1}).toInt(), 1);
  EXPECT_TRUE(call1("prim::index", "", {IValue(Device())}).isNone());
  EXPECT_EQ(call1("prim::type", "", {cuda1}).toStringRef(), "cuda");
  EXPECT_TRUE(call1("aten::eq", "device", {IValue(Device()), IValue(Device())}).toBool());
  EXPECT_TRUE(call1("aten::ne", "device", {IValue(Device()), cuda1}).toBool());
  EXPECT_THROW(call("aten::device", "", {std::string("bogus")}), Error);
}

TEST(ScalarOps, IdentityAndOptionals) {
  Tensor a = empty({1});
  Tensor b = empty({1});
  EXPECT_TRUE(call1("aten::__is__", "", {a, a}).toBool());
  EXPECT_FALSE(call1("aten::__is__", "", {a, b}).toBool());
  EXPECT_TRUE(call1("aten::__isnot__", "", {a, b}).toBool());
  EXPECT_TRUE(call1("aten::__is__", "", {IValue(), IValue()}).toBool());
  EXPECT_FALSE(call1("aten::__is__", "", {int64_t{1}, 1.0}).toBool());
  EXPECT_TRUE(call1("prim::unchecked_unwrap_optional", "", {a}).toTensor().isSame(a));
  EXPECT_EQ(call1("aten::_unwrap_optional", "", {int64_t{3}}).toInt(), 3);
  EXPECT_THROW(call("aten::_unwrap_optional", "", {IValue()}), Error);
}

TEST(ScalarOps, RangeLoopHelpers) {
  EXPECT_EQ(call1("aten::__range_length", "", {int64_t{0}, int64_t{10}, int64_t{3}}).toInt(), 4);
  EXPECT_EQ(call1("aten::__range_length", "", {int64_t{10}, int64_t{0}, int64_t{-3}}).toInt(), 4);
  EXPECT_EQ(call1("aten::__range_length", "", {int64_t{10}, int64_t{0}, int64_t{3}}).toInt(), 0);
  EXPECT_EQ(call1("aten::__range_length", "", {kMin, kMax, int64_t{1}}).toInt(), -1);  // wraps, as in PyTorch
  EXPECT_THROW(call("aten::__range_length", "", {int64_t{0}, int64_t{10}, int64_t{0}}), Error);
  EXPECT_EQ(call1("aten::__derive_index", "", {int64_t{2}, int64_t{1}, int64_t{3}}).toInt(), 7);
}

TEST(ScalarOps, WarnPrintsAUserWarning) {
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  Stack out = call("aten::warn", "", {std::string("careful"), int64_t{2}});
  std::cerr.rdbuf(old);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(captured.str(), "UserWarning: careful\n");
}
