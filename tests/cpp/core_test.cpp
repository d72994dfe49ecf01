#include <gtest/gtest.h>

#include "kiln/core/function_schema.h"
#include "kiln/core/operator.h"

using namespace kiln;

TEST(IValue, IsSixteenBytesAndRefcounts) {
  static_assert(sizeof(IValue) == 16);
  Tensor t = empty({2});
  {
    IValue v(t);
    IValue w = v;
    EXPECT_EQ(t.useCount(), 3u);
  }
  EXPECT_EQ(t.useCount(), 1u);
  IValue i(int64_t{7});
  EXPECT_TRUE(i.isInt());
  EXPECT_EQ(i.toInt(), 7);
  EXPECT_THROW(i.toTensor(), Error);
}

TEST(Symbol, InternsQualifiedNames) {
  Symbol a = Symbol::fromQualString("aten::add");
  EXPECT_EQ(a, Symbol::aten("add"));
  EXPECT_EQ(a.ns(), "aten");
  EXPECT_EQ(a.name(), "add");
  EXPECT_THROW(Symbol::fromQualString("add"), Error);
}

TEST(FunctionSchema, RoundTripsPyTorchText) {
  const char* schemas[] = {
      "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
      "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
      "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
      "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
      "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
      "aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)",
      "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] "
      "dilation=1, int groups=1) -> Tensor",
      "aten::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float "
      "eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor",
      "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
      "aten::format(str self, ...) -> str",
      "prim::TupleUnpack(Any tup) -> ...",
      "aten::dict.str(Dict(str, t) self) -> Dict(str, t)",
      "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
  };
  for (const char* text : schemas) {
    EXPECT_EQ(parseSchema(text).str(), text);
  }
  auto s = parseSchema("aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1) -> Tensor");
  EXPECT_EQ(s.arguments()[3].default_value->toDimVector(), (DimVector{1, 1}));
}

TEST(FunctionSchema, BadTextGivesColumnAndCaret) {
  try {
    parseSchema("aten::add(Tensor self, Tensr other) -> Tensor");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown type 'Tensr'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("column 24"), std::string::npos) << msg;
    EXPECT_NE(msg.find("^"), std::string::npos);
  }
  EXPECT_THROW(parseSchema("aten::add(Tensor self"), Error);
  EXPECT_THROW(parseSchema("add(Tensor self) -> Tensor"), Error);
  EXPECT_THROW(parseSchema(""), Error);
}

TEST(Registry, EveryRegisteredSchemaRoundTrips) {
  auto ops = getAllOperators();
  EXPECT_FALSE(ops.empty());
  for (const auto& op : ops) {
    std::string text = op->schema().str();
    EXPECT_EQ(parseSchema(text).str(), text);
  }
}

TEST(Registry, RunsAddThroughTheStack) {
  auto op = findOperator(Symbol::aten("add"), "Tensor");
  ASSERT_TRUE(op);
  Tensor a = empty({2});
  a.data<float>()[0] = 1;
  a.data<float>()[1] = 2;
  Stack stack{IValue(a), IValue(a), IValue(int64_t{2})};
  op->operation()(stack);
  ASSERT_EQ(stack.size(), 1u);
  Tensor r = stack[0].toTensor();
  EXPECT_EQ(r.data<float>()[1], 6.0f);
}

#include <dlfcn.h>

TEST(Registry, ASharedLibraryLoadedLaterAddsOperators) {
  Symbol triple = Symbol::fromQualString("kiln_test::triple");
  ASSERT_TRUE(getAllOperatorsFor(triple).empty());
  void* handle = dlopen(KILN_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto ops = getAllOperatorsFor(triple);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0]->schema().str(), "kiln_test::triple(Tensor self) -> Tensor");
  Tensor a = empty({2});
  a.data<float>()[0] = 1.5f;
  a.data<float>()[1] = -2.0f;
  Stack stack{IValue(a)};
  ops[0]->operation()(stack);
  EXPECT_EQ(stack.back().toTensor().data<float>()[0], 4.5f);
  EXPECT_EQ(stack.back().toTensor().data<float>()[1], -6.0f);
}

TEST(FunctionSchema, HugeFixedListSizeIsAnErrorNotAnAllocation) {
  // Found by the schema fuzzer: `int[N] x=1` expands its default to N elements.
  EXPECT_THROW(parseSchema("aten::f(int[777777777777777777777] x=1) -> Tensor"), Error);
  EXPECT_THROW(parseSchema("aten::f(int[100000000] x=1) -> Tensor"), Error);
  EXPECT_EQ(parseSchema("aten::f(int[3] x=1) -> Tensor").arguments()[0].default_value->toDimVector(),
            (DimVector{1, 1, 1}));
}
