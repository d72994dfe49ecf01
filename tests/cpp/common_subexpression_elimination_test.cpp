// Common subexpression elimination beyond the lit tests (tests/lit/passes/cse*.ir,
// some checked against torch 1.13's _jit_pass_cse; side effects, attributes
// and the graph of ReportsWhetherItChangedTheGraph in cse_cases.ir): what
// the pass returns, tensor constants, and results before and after the
// pass, including merges 1.13 makes that change the result (across a write
// to a list's element, or to a loop's output that is its input when the
// loop runs zero times).
#include <gtest/gtest.h>

#include <sstream>
#include <unordered_map>

#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/passes/common_subexpression_elimination.h"
#include "kiln/runtime/function.h"
#include "kiln/tensor/factory.h"

using namespace kiln;

namespace {

std::string run(const std::shared_ptr<Graph>& g, Stack inputs) {
  GraphFunction fn("f", g->copy());
  std::ostringstream out;
  out << fn(std::move(inputs));
  return out.str();
}

// The pass changes the graph (or not, as `expect_change` says) and not what it computes.
void expectSameResults(const char* ir, const Stack& inputs, bool expect_change) {
  auto before = parseIR(ir);
  auto after = parseIR(ir);
  EXPECT_EQ(eliminateCommonSubexpression(after), expect_change);
  after->lint();
  EXPECT_EQ(run(before, inputs), run(after, inputs)) << *after;
}

}  // namespace

TEST(CommonSubexpressionElimination, ReportsWhetherItChangedTheGraph) {
  // The graph after the pass: tests/lit/passes/cse_cases.ir.
  auto g = parseIR(R"IR(
graph(%x : int):
  %1 : int = prim::Constant[value=1]()
  %a : int = aten::add(%x, %1)
  %b : int = aten::add(%x, %1)
  %c : int = aten::mul(%a, %b)
  return (%c))IR");
  EXPECT_TRUE(eliminateCommonSubexpression(g));
  EXPECT_FALSE(eliminateCommonSubexpression(g));
}

TEST(CommonSubexpressionElimination, MergesEqualTensorConstantsOnly) {
  auto g = std::make_shared<Graph>();
  Value* x = g->addInput("x");
  x->setType(TensorType::get());
  WithInsertPoint guard(g->block());
  Value* a = g->insertConstant(full({2, 3}, 1.5, ScalarType::Float));
  Value* b = g->insertConstant(full({2, 3}, 1.5, ScalarType::Float));
  Value* zero = g->insertConstant(full({2}, 0.0, ScalarType::Float));
  Value* negative_zero = g->insertConstant(full({2}, -0.0, ScalarType::Float));
  Value* s = g->insert(aten::mul, {a, b});
  Value* t = g->insert(aten::mul, {zero, negative_zero});
  g->registerOutput(g->insert(aten::mul, {x, g->insert(aten::sum, {s})}));
  g->registerOutput(t);
  EXPECT_TRUE(eliminateCommonSubexpression(g));
  EXPECT_EQ(s->node()->input(0), s->node()->input(1));
  EXPECT_NE(t->node()->input(0), t->node()->input(1));
}

TEST(CommonSubexpressionElimination, KeepsResults) {
  expectSameResults(R"IR(
graph(%a : Tensor, %c : bool):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %t : Tensor = aten::mul(%a, %1)
  %x : Tensor = aten::mul(%t, %1)
  %v1 : Tensor = aten::select(%t, %0, %0)
  %v2 : Tensor = aten::select(%t, %0, %0)
  %w : Tensor = aten::add_(%v1, %1, %1)
  %y : Tensor = aten::mul(%t, %1)
  %r : Tensor = prim::If(%c)
    block0():
      %z : Tensor = aten::mul(%t, %1)
      -> (%z)
    block1():
      %e : Tensor = aten::exp(%a)
      %e2 : Tensor = aten::exp(%a)
      %s : Tensor = aten::add(%e, %e2, %1)
      -> (%s)
  %o : Tensor = aten::add(%x, %y, %1)
  %o2 : Tensor = aten::add(%o, %v2, %1)
  %o3 : Tensor = aten::add(%o2, %r, %1)
  return (%o3))IR",
                    {IValue(ones({2, 2})), IValue(true)}, /*expect_change=*/true);
}

namespace {

// kiln's pass leaves `ir` alone; replacing `merged` by `kept` (what torch
// 1.13's pass does) changes the result.
void expectMergeWouldChangeResult(const char* ir, const char* merged, const char* kept, const Stack& inputs) {
  expectSameResults(ir, inputs, /*expect_change=*/false);
  std::unordered_map<std::string, Value*> values;
  auto g = std::make_shared<Graph>();
  parseIR(ir, *g, &values);
  values.at(merged)->replaceAllUsesWith(values.at(kept));
  values.at(merged)->node()->destroy();
  EXPECT_NE(run(g, inputs), run(parseIR(ir), inputs));
}

}  // namespace

TEST(CommonSubexpressionElimination, MergingAcrossAWriteToAListElementWouldChangeTheResult) {
  expectMergeWouldChangeResult(R"IR(
graph(%a : Tensor):
  %d : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct(%a)
  %x : Tensor = aten::cat(%l, %d)
  %b : Tensor = aten::add_(%a, %one, %one)
  %y : Tensor = aten::cat(%l, %d)
  %z : Tensor = aten::sub(%y, %x, %one)
  return (%z))IR",
                               "y", "x", {IValue(ones({2}))});
}

TEST(CommonSubexpressionElimination, MergingAcrossAWriteToAZeroTripLoopOutputWouldChangeTheResult) {
  expectMergeWouldChangeResult(R"IR(
graph(%x : Tensor, %n : int):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %true : bool = prim::Constant[value=1]()
  %t : Tensor = aten::mul(%x, %one)
  %u1 : Tensor = aten::neg(%t)
  %r : Tensor = prim::Loop(%n, %true, %t)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::mul(%acc, %two)
      -> (%true, %next)
  %w : Tensor = aten::add_(%r, %one, %one)
  %u2 : Tensor = aten::neg(%t)
  %z : Tensor = aten::sub(%u1, %u2, %one)
  return (%z))IR",
                               "u2", "u1", {IValue(ones({2})), IValue(int64_t{0})});
}
