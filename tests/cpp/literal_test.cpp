// Python literals as `kiln run` arguments (kiln/api/literal.h).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "kiln/api/literal.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

std::string shown(const std::string& text, const TypePtr& type) {
  IValue v = parseLiteral(text, type);
  std::ostringstream out;
  out << v.type()->str() << " " << v;
  return out.str();
}

std::string errorOf(const std::string& text, const TypePtr& type) {
  try {
    parseLiteral(text, type);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Literal, Scalars) {
  EXPECT_EQ(shown("3", IntType::get()), "int 3");
  EXPECT_EQ(shown("-3", IntType::get()), "int -3");
  EXPECT_EQ(shown("0x10", IntType::get()), "int 16");
  EXPECT_EQ(shown("2", FloatType::get()), "float 2.");
  EXPECT_EQ(shown("-1.5e3", FloatType::get()), "float -1500.");
  EXPECT_EQ(shown("+2.5", NumberType::get()), "float 2.5");
  EXPECT_EQ(shown("7", NumberType::get()), "int 7");
  EXPECT_EQ(shown("True", BoolType::get()), "bool True");
  EXPECT_EQ(shown("'a\\tb'", StringType::get()), "str a\tb");
  EXPECT_EQ(shown("\"q\"", StringType::get()), "str q");
  EXPECT_EQ(shown("None", OptionalType::create(IntType::get())), "NoneType None");
  EXPECT_EQ(shown("4", OptionalType::create(FloatType::get())), "float 4.");
  EXPECT_EQ(shown("-9223372036854775807", IntType::get()), "int -9223372036854775807");
}

TEST(Literal, Containers) {
  EXPECT_EQ(shown("[1, 2]", ListType::ofInts()), "int[] [1, 2]");
  EXPECT_EQ(shown("[1, 2.5]", ListType::ofFloats()), "float[] [1., 2.5]");
  EXPECT_EQ(shown("[]", ListType::ofFloats()), "float[] []");
  EXPECT_EQ(shown("[[1], []]", ListType::create(ListType::ofInts())), "int[][] [[1], []]");
  EXPECT_EQ(shown("(1, 'a', None)", TupleType::create({FloatType::get(), StringType::get(), NoneType::get()})),
            "(float, str, NoneType) (1., a, None)");
  EXPECT_EQ(shown("{'k': 1, 'j': 2}", DictType::create(StringType::get(), FloatType::get())),
            "Dict(str, float) {k: 1., j: 2.}");
  EXPECT_EQ(shown("[1, 2]", AnyType::get()), "int[] [1, 2]");
  EXPECT_EQ(shown("(1, [True])", AnyType::get()), "(int, bool[]) (1, [True])");
}

TEST(Literal, Errors) {
  EXPECT_NE(errorOf("1.5", IntType::get()).find("expected a value of type 'int' but got the float 1.5"),
            std::string::npos);
  EXPECT_NE(errorOf("[1, 'a']", ListType::ofInts()).find("expected a value of type 'int[]'"), std::string::npos);
  EXPECT_NE(errorOf("(1, 2)", TupleType::create({IntType::get()})).find("expected a value of type"), std::string::npos);
  EXPECT_NE(errorOf("x", IntType::get()).find("not a literal"), std::string::npos);
  EXPECT_NE(errorOf("1 + 2", IntType::get()).find("not a literal"), std::string::npos);
  EXPECT_NE(errorOf("-'a'", StringType::get()).find("a sign applies to numbers only"), std::string::npos);
  EXPECT_NE(errorOf("[1,", ListType::ofInts()), "<no error>");
  EXPECT_NE(errorOf("", IntType::get()), "<no error>");
  EXPECT_NE(errorOf("2.0", TensorType::get()).find("tensors are given as .npy files"), std::string::npos);
}

}  // namespace
}  // namespace kiln
