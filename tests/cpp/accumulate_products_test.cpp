// Sums of matrix products accumulated in place (accumulate_products.h):
// which sums are rewritten (what the pass returns), and that the rewritten
// graph computes what the sum did (within summation-order tolerance),
// raising where it raised. The rewritten graphs are checked in
// tests/lit/passes/accumulate_products_cases.ir.
#include <gtest/gtest.h>

#include "kiln/ir/ir_parser.h"
#include "kiln/passes/accumulate_products.h"
#include "kiln/passes/analysis/shape_analysis.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/random.h"
#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::runGraph;
using kiln::testing::sameResults;
using kiln::testing::specializedGraph;
using kiln::testing::UnoptimizedRuns;

namespace {

std::shared_ptr<Graph> accumulated(const std::shared_ptr<Graph>& g, bool expect_change = true) {
  return kiln::testing::copyAfterPass(accumulateProducts, g, expect_change);
}

// An LSTM cell's gates: mm(x, w_ih.t()) + mm(h, w_hh.t()) + mm(z, w_z), then a bias.
const char* kGates = R"IR(
graph(%x : Tensor, %h : Tensor, %w_ih : Tensor, %w_hh : Tensor, %z : Tensor, %w_z : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %wt : Tensor = aten::t(%w_ih)
  %xw : Tensor = aten::mm(%x, %wt)
  %ut : Tensor = aten::t(%w_hh)
  %hw : Tensor = aten::mm(%h, %ut)
  %s : Tensor = aten::add(%xw, %hw, %one)
  %zw : Tensor = aten::mm(%z, %w_z)
  %s2 : Tensor = aten::add(%zw, %s, %one)
  %g : Tensor = aten::add(%s2, %b, %one)
  return (%g))IR";

Stack gateInputs(ScalarType dtype, int64_t batch = 5, int64_t input = 7, int64_t hidden = 12) {
  manualSeed(11);
  return {IValue(randn({batch, input}, dtype)), IValue(randn({batch, 3}, dtype)), IValue(randn({hidden, input}, dtype)),
          IValue(randn({hidden, 3}, dtype)),    IValue(randn({batch, 4}, dtype)), IValue(randn({4, hidden}, dtype)),
          IValue(randn({hidden}, dtype))};
}

}  // namespace

TEST(AccumulateProducts, SumsOfProductsChain) {
  // The graphs after the pass: tests/lit/passes/accumulate_products_cases.ir.
  for (ScalarType dtype : {ScalarType::Float, ScalarType::Double}) {
    Stack inputs = gateInputs(dtype);
    auto before = specializedGraph(kGates, inputs);
    auto after = accumulated(before);
    UnoptimizedRuns unoptimized;
    EXPECT_TRUE(sameResults(before, after, inputs, dtype == ScalarType::Float ? 1e-5 : 1e-12));
  }
  // Zero-size products too.
  Stack empty_batch = gateInputs(ScalarType::Float, 0);
  auto before = specializedGraph(kGates, empty_batch);
  UnoptimizedRuns unoptimized;
  EXPECT_TRUE(sameResults(before, accumulated(before), empty_batch));
}

TEST(AccumulateProducts, LeavesAloneWhatItCannotProve) {
  // Rank-only types: the sizes could broadcast, or a product could raise.
  Stack inputs = gateInputs(ScalarType::Float);
  accumulated(specializedGraph(kGates, inputs, /*with_sizes=*/false), /*expect_change=*/false);

  // A product read twice, an add with alpha 2, a broadcasting add, integers.
  const char* ir = R"IR(
graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor, %r : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %p : Tensor = aten::mm(%a, %b)
  %q : Tensor = aten::mm(%c, %d)
  %s : Tensor = aten::add(%p, %q, %one)
  %u : Tensor = aten::mul(%p, %two)
  %p2 : Tensor = aten::mm(%a, %b)
  %q2 : Tensor = aten::mm(%c, %d)
  %s2 : Tensor = aten::add(%p2, %q2, %two)
  %p3 : Tensor = aten::mm(%a, %b)
  %q3 : Tensor = aten::mm(%r, %d)
  %s3 : Tensor = aten::add(%p3, %q3, %one)
  return (%s, %u, %s2, %s3))IR";
  manualSeed(2);
  Stack floats{IValue(randn({3, 4}, ScalarType::Float)), IValue(randn({4, 5}, ScalarType::Float)),
               IValue(randn({3, 2}, ScalarType::Float)), IValue(randn({2, 5}, ScalarType::Float)),
               IValue(randn({1, 2}, ScalarType::Float))};
  accumulated(specializedGraph(ir, floats), /*expect_change=*/false);
  Stack longs;
  for (const IValue& v : floats) longs.push_back(IValue(to(v.toTensor(), ScalarType::Long)));
  accumulated(specializedGraph(ir, longs), /*expect_change=*/false);
}

TEST(AccumulateProducts, MismatchedProductsStillRaise) {
  // w_hh's inner size does not fit h: its product's sizes are unknown, so
  // neither sum is rewritten, and the graph raises as it did.
  Stack inputs = gateInputs(ScalarType::Float);
  inputs[3] = IValue(randn({12, 2}, ScalarType::Float));
  auto before = specializedGraph(kGates, inputs);
  auto after = accumulated(before, /*expect_change=*/false);
  UnoptimizedRuns unoptimized;
  EXPECT_FALSE(runGraph(after, inputs).value.has_value());
  EXPECT_TRUE(sameResults(before, after, inputs));
}

TEST(AccumulateProducts, ProductsFromOutsideALoopAreNotWritten) {
  // %p is read once, by an add in the loop's body: written in place, it
  // would grow on every iteration. %q's product moved into the loop would
  // run on every iteration.
  const char* ir = R"IR(
graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %p : Tensor = aten::mm(%a, %b)
  %q : Tensor = aten::mm(%c, %d)
  %acc : Tensor = prim::Loop(%three, %true, %a)
    block0(%i : int, %x : Tensor):
      %r : Tensor = aten::mm(%c, %d)
      %s : Tensor = aten::add(%p, %r, %one)
      %t : Tensor = aten::mm(%a, %b)
      %u : Tensor = aten::add(%t, %q, %one)
      %v : Tensor = aten::add(%s, %u, %one)
      -> (%true, %v)
  return (%acc))IR";
  manualSeed(4);
  Stack inputs{IValue(randn({3, 3}, ScalarType::Float)), IValue(randn({3, 3}, ScalarType::Float)),
               IValue(randn({3, 2}, ScalarType::Float)), IValue(randn({2, 3}, ScalarType::Float))};
  auto before = specializedGraph(ir, inputs);
  accumulated(before, /*expect_change=*/false);
  UnoptimizedRuns unoptimized;
  EXPECT_TRUE(sameResults(before, accumulated(before, false), inputs));
}
