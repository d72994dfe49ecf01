// The argument binder on its own: arguments described by their types only,
// a policy that checks subtypes with type variables.
#include <gtest/gtest.h>

#include "kiln/core/argument_binder.h"
#include "kiln/core/function_schema.h"

using namespace kiln;

namespace {

// Positional and keyword arguments known by type; packs trailing ints when asked.
class TypePolicy : public ConversionPolicy {
 public:
  TypePolicy(std::vector<TypePtr> positional, std::vector<TypePtr> keyword, bool pack_ints = false)
      : positional_(std::move(positional)), keyword_(std::move(keyword)), pack_ints_(pack_ints) {}

  bool packsPositionals(const FunctionSchema& schema, size_t param_index, size_t first) override {
    auto list = schema.arguments()[param_index].type->cast<ListType>();
    return pack_ints_ && list && positional_[first]->kind() == TypeKind::Int;
  }

  std::optional<std::string> convert(const Argument& param, const ParamSource& source, TypeEnv& env) override {
    TypePtr actual;
    switch (source.kind) {
      case ParamSource::Kind::Positional: actual = positional_[source.index]; break;
      case ParamSource::Kind::Keyword: actual = keyword_[source.index]; break;
      case ParamSource::Kind::Self: actual = TensorType::get(); break;
      case ParamSource::Kind::Default: actual = param.default_value->type(); break;
      case ParamSource::Kind::Packed: actual = ListType::create(IntType::get()); break;
    }
    if (auto why = matchTypeVariables(param.type, actual, env)) return *why;
    TypePtr concrete = evalTypeVariables(param.type, env);
    if (!actual->isSubtypeOf(*(concrete ? concrete : param.type))) return "bad type for " + param.name;
    converted.push_back(param.name);
    return std::nullopt;
  }

  std::vector<std::string> converted;

 private:
  std::vector<TypePtr> positional_;
  std::vector<TypePtr> keyword_;
  bool pack_ints_;
};

struct Call {
  std::vector<TypePtr> positional;
  std::vector<std::pair<std::string, TypePtr>> keywords;
  bool self = false;
  bool pack_ints = false;
};

BindResult bind(const std::string& schema_text, const Call& call, std::vector<std::string>* converted = nullptr,
                TypeEnv* env_out = nullptr) {
  FunctionSchema schema = parseSchema(schema_text);
  CallShape shape;
  shape.num_positional = call.positional.size();
  shape.has_self = call.self;
  std::vector<TypePtr> keyword_types;
  for (const auto& [name, type] : call.keywords) {
    shape.keywords.push_back(name);
    keyword_types.push_back(type);
  }
  TypePolicy policy(call.positional, keyword_types, call.pack_ints);
  TypeEnv env;
  BindResult result = bindArguments(schema, shape, policy, env);
  if (converted) *converted = policy.converted;
  if (env_out) *env_out = env;
  return result;
}

TypePtr intT() { return IntType::get(); }
TypePtr floatT() { return FloatType::get(); }

}  // namespace

TEST(ArgumentBinder, PositionalKeywordAndDefault) {
  std::vector<std::string> converted;
  auto r = bind("test::f(int a, float b, int c=3, *, int d=4) -> int", {{intT()}, {{"b", floatT()}, {"d", intT()}}},
                &converted);
  ASSERT_TRUE(r);
  ASSERT_EQ(r.bound->params.size(), 4u);
  EXPECT_EQ(r.bound->params[0].kind, ParamSource::Kind::Positional);
  EXPECT_EQ(r.bound->params[1].kind, ParamSource::Kind::Keyword);
  EXPECT_EQ(r.bound->params[1].index, 0u);
  EXPECT_EQ(r.bound->params[2].kind, ParamSource::Kind::Default);
  EXPECT_EQ(r.bound->params[3].kind, ParamSource::Kind::Keyword);
  EXPECT_EQ(r.bound->params[3].index, 1u);
  EXPECT_EQ(converted, (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(ArgumentBinder, KwargOnlyParametersTakeNoPositionals) {
  auto r = bind("test::f(int a, *, int b) -> int", {{intT(), intT()}, {}});
  ASSERT_FALSE(r);
  // The first failure in schema order: b has no value.
  EXPECT_EQ(r.failure.kind, BindFailure::Kind::Missing);
  EXPECT_EQ(r.failure.message, "Argument b not provided.\n");
}

TEST(ArgumentBinder, TorchMessages) {
  auto too_many = bind("test::f(int a) -> int", {{intT(), intT()}, {}});
  EXPECT_EQ(too_many.failure.kind, BindFailure::Kind::TooManyPositional);
  EXPECT_EQ(too_many.failure.message, "Expected at most 1 arguments but found 2 positional arguments.\n");
  auto unknown = bind("test::f(int a) -> int", {{intT()}, {{"z", intT()}}});
  EXPECT_EQ(unknown.failure.message, "Keyword argument z unknown.\n");
  auto twice = bind("test::f(int a) -> int", {{intT()}, {{"a", intT()}}});
  EXPECT_EQ(twice.failure.kind, BindFailure::Kind::KeywordTwice);
  EXPECT_EQ(twice.failure.message, "Keyword argument a specified twice.\n");
  auto self_unused = bind("test::f(int a) -> int", {{intT()}, {}, true});
  EXPECT_EQ(self_unused.failure.message, "Provided self argument not used in schema.\n");
  auto mismatch = bind("test::f(int a, int b) -> int", {{intT(), floatT()}, {}});
  EXPECT_EQ(mismatch.failure.kind, BindFailure::Kind::Conversion);
  EXPECT_EQ(mismatch.failure.name, "b");
  EXPECT_EQ(mismatch.failure.message, "bad type for b");
}

TEST(ArgumentBinder, SelfGoesToTheSelfParameter) {
  auto r = bind("test::f(Tensor self, int a) -> Tensor", {{intT()}, {}, true});
  ASSERT_TRUE(r);
  EXPECT_EQ(r.bound->params[0].kind, ParamSource::Kind::Self);
  EXPECT_EQ(r.bound->params[1].kind, ParamSource::Kind::Positional);
  EXPECT_EQ(r.bound->params[1].index, 0u);
}

TEST(ArgumentBinder, VarargSchemaPassesExtraPositionalsOn) {
  auto r = bind("test::f(str self, ...) -> str", {{StringType::get(), intT(), floatT()}, {}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r.bound->varargs, (std::vector<size_t>{1, 2}));
}

TEST(ArgumentBinder, PackedPositionals) {
  auto r =
      bind("test::f(Tensor x, int[] size) -> Tensor", {{TensorType::get(), intT(), intT(), intT()}, {}, false, true});
  ASSERT_TRUE(r);
  EXPECT_EQ(r.bound->params[1].kind, ParamSource::Kind::Packed);
  EXPECT_EQ(r.bound->params[1].index, 1u);
  EXPECT_EQ(r.bound->params[1].end, 4u);
}

TEST(ArgumentBinder, TypeVariablesUnify) {
  TypeEnv env;
  auto r = bind("test::f(t[] l, t el) -> t", {{ListType::create(intT()), intT()}, {}}, nullptr, &env);
  ASSERT_TRUE(r);
  EXPECT_EQ(env.at("t")->kind(), TypeKind::Int);
  auto bad = bind("test::f(t[] l, t el) -> t", {{ListType::create(intT()), StringType::get()}, {}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.failure.message, "Type variable 't' previously matched to type int is matched to type str");
}
