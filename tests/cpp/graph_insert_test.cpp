// Graph::insert through the argument binder: vararg schemas, keyword
// arguments written as NamedValues with source ranges, and its own wording
// for overloads that do not fit.
#include <gtest/gtest.h>

#include "kiln/ir/graph.h"

using namespace kiln;

TEST(GraphInsert, VarargSchemaPassesExtraArgumentsOn) {
  auto g = std::make_shared<Graph>();
  Value* x = g->addInput("x");
  x->setType(IntType::get());
  Value* s = g->insert(Symbol::fromQualString("aten::format"), {"{} and {}", x, 2.5});
  EXPECT_EQ(s->type()->kind(), TypeKind::String);
  ASSERT_EQ(s->node()->inputs().size(), 3u);
  EXPECT_EQ(s->node()->input(1), x);
  EXPECT_EQ(toIValue(s->node()->input(2))->toDouble(), 2.5);
}

TEST(GraphInsert, KeywordNamedValueWithSourceRange) {
  auto g = std::make_shared<Graph>();
  Value* a = g->addInput("a");
  a->setType(IntType::get());
  Value* b = g->addInput("b");
  b->setType(IntType::get());
  Value* sum = g->insert(Symbol::fromQualString("aten::add"), {a}, {NamedValue(SourceRange(), "b", b)});
  EXPECT_EQ(sum->type()->kind(), TypeKind::Int);
  EXPECT_EQ(sum->node()->input(1), b);
}

TEST(GraphInsert, SaysWhyEachOverloadDoesNotFit) {
  auto g = std::make_shared<Graph>();
  try {
    g->insert(Symbol::fromQualString("aten::format"), {1});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("no overload of aten::format accepts these arguments"), std::string::npos) << what;
    EXPECT_NE(what.find("argument 'self' expects str but got int"), std::string::npos) << what;
  }
  try {
    g->insert(Symbol::fromQualString("aten::format"), {"x"}, {{"zz", IValue(1)}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("unknown keyword argument 'zz'"), std::string::npos) << what;
  }
}
