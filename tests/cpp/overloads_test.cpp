// Operator overloads run through the Stack with the IValues a graph passes:
// typed (nested) lists, Device values, Tensor lists. The Python tests cannot
// build these (an empty `int[]`, a Device), so they are checked here.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kiln/core/operator.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"
#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::errorOf;

namespace {

Stack run(const char* name, const char* overload, Stack stack) {
  OperatorPtr op = findOperator(Symbol::aten(name), overload);
  EXPECT_TRUE(op) << name << "." << overload;
  op->operation()(stack);
  return stack;
}

IValue ints(std::vector<int64_t> values) { return IValue(values); }

IValue listOf(const TypePtr& element_type, std::vector<IValue> elements) {
  return IValue::list(element_type, std::move(elements));
}

// aten::tensor(data, dtype=None, device=None, requires_grad) as a graph calls it.
Tensor tensorOf(IValue data, IValue device = IValue(), bool requires_grad = false) {
  Stack out = run("tensor", "", {std::move(data), IValue(), std::move(device), IValue(requires_grad)});
  EXPECT_EQ(out.size(), 1u);
  return out.back().toTensor();
}

}  // namespace

TEST(Overloads, TensorOfTypedEmptyLists) {
  // Python cannot say `List[List[int]]` for [[], []]; a graph can.
  Tensor t = tensorOf(listOf(ListType::create(IntType::get()), {ints({}), ints({})}));
  EXPECT_EQ(t.dtype(), ScalarType::Long);
  EXPECT_EQ(DimVector(t.sizes()), (DimVector{2, 0}));

  Tensor flat = tensorOf(listOf(FloatType::get(), {}));
  EXPECT_EQ(flat.dtype(), ScalarType::Float);
  EXPECT_EQ(DimVector(flat.sizes()), (DimVector{0}));

  std::string message = errorOf([] { tensorOf(listOf(TensorType::get(), {})); });
  EXPECT_NE(message.find("Input must be of ints, floats, or bools, got Tensor"), std::string::npos) << message;
  EXPECT_NE(message.find("Empty lists default to List[Tensor]"), std::string::npos) << message;
}

TEST(Overloads, TensorOfNestedListsChecksEveryLength) {
  IValue ragged = listOf(ListType::create(IntType::get()), {ints({1, 2}), ints({3})});
  EXPECT_NE(errorOf([&] { tensorOf(ragged); }).find("Expected sequence of length 2 at dim 1 (got 1)"),
            std::string::npos);

  IValue floats = listOf(ListType::create(FloatType::get()),
                         {IValue(std::vector<double>{1.5, 1e300}), IValue(std::vector<double>{-2.0, 0.25})});
  Tensor t = tensorOf(floats);
  ASSERT_EQ(t.dtype(), ScalarType::Float);
  ASSERT_EQ(DimVector(t.sizes()), (DimVector{2, 2}));
  const float* p = t.data<float>();
  EXPECT_EQ(p[0], 1.5f);
  EXPECT_TRUE(std::isinf(p[1]));  // stored as float32, as PyTorch does
  EXPECT_EQ(p[2], -2.0f);
  EXPECT_EQ(p[3], 0.25f);
}

TEST(Overloads, TensorOptionsFromAGraph) {
  IValue data = IValue(std::vector<double>{1.0, 2.0});
  EXPECT_TRUE(tensorOf(data, IValue(Device(DeviceType::CPU)), true).requiresGrad());
  EXPECT_FALSE(tensorOf(data).requiresGrad());
  EXPECT_NE(errorOf([&] { tensorOf(data, IValue(Device(DeviceType::CUDA, 0))); }).find("cpu device"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              tensorOf(ints({1}), IValue(), true);
            }).find("Only Tensors of floating point and complex dtype can require gradients"),
            std::string::npos);

  Tensor x = empty({3}, ScalarType::Long);
  Stack same = run("as_tensor", "", {IValue(x), IValue(), IValue()});
  EXPECT_TRUE(same.back().toTensor().isSame(x));
  Stack converted = run("as_tensor", "", {IValue(x), IValue(static_cast<int64_t>(ScalarType::Double)), IValue()});
  EXPECT_EQ(converted.back().toTensor().dtype(), ScalarType::Double);
}

TEST(Overloads, LenAndTensorLists) {
  EXPECT_EQ(run("len", "Tensor", {IValue(empty({4, 2}))}).back().toInt(), 4);
  EXPECT_NE(errorOf([] { run("len", "Tensor", {IValue(empty({}))}); }).find("len() of a 0-d tensor"),
            std::string::npos);

  Tensor one = scalarToTensor(Scalar(int64_t{1}), ScalarType::Long);
  Tensor nan = scalarToTensor(Scalar(std::nan("")), ScalarType::Float);
  IValue a(std::vector<Tensor>{one, nan});
  EXPECT_FALSE(run("eq", "Tensor_list", {a, a}).back().toBool());  // no identity shortcut
  EXPECT_TRUE(run("ne", "Tensor_list", {a, a}).back().toBool());
  EXPECT_EQ(run("index", "list_Tensor", {a, IValue(one)}).back().toInt(), 0);
  EXPECT_NE(errorOf([&] { run("index", "list_Tensor", {a, IValue(nan)}); }).find("is not in list"), std::string::npos);
}

TEST(Overloads, UnsafeSplitOutWritesEveryPiece) {
  Tensor x = empty({5}, ScalarType::Float);
  for (int i = 0; i < 5; ++i) x.data<float>()[i] = static_cast<float>(i);
  std::vector<Tensor> outs{empty({0}, ScalarType::Long), empty({0}, ScalarType::Long), empty({0}, ScalarType::Long)};
  Stack stack = run("unsafe_split", "Tensor_out", {IValue(x), IValue(int64_t{2}), IValue(int64_t{0}), IValue(outs)});
  EXPECT_TRUE(stack.empty());
  ASSERT_EQ(DimVector(outs[2].sizes()), (DimVector{1}));
  EXPECT_EQ(outs[1].data<int64_t>()[1], 3);
  EXPECT_EQ(outs[2].data<int64_t>()[0], 4);

  std::vector<Tensor> two{empty({0}), empty({0})};
  EXPECT_NE(errorOf([&] {
              run("unsafe_split", "Tensor_out", {IValue(x), IValue(int64_t{2}), IValue(int64_t{0}), IValue(two)});
            }).find("expected 3 out tensors, got 2"),
            std::string::npos);
}

TEST(Overloads, LibraryEdgesTheOverloadsExposed) {
  // contiguous(Preserve) is a no-op on a contiguous tensor and an error when a copy is needed.
  Tensor m = empty({2, 3});
  EXPECT_TRUE(contiguous(m, MemoryFormat::Preserve).isSame(m));
  EXPECT_THROW(contiguous(transpose(m, 0, 1), MemoryFormat::Preserve), Error);

  // PyTorch's CPU scans have no bool kernels; empty and 0-dim inputs never reach them.
  EXPECT_THROW(cumsum(m, 0, ScalarType::Bool), Error);
  EXPECT_THROW(cumprod(m, 1, ScalarType::Bool), Error);
  EXPECT_EQ(cumsum(empty({0}), 0, ScalarType::Bool).dtype(), ScalarType::Bool);
  EXPECT_EQ(cumsum(empty({}), 0, ScalarType::Bool).dtype(), ScalarType::Bool);
}
