// Batching a loop's input products: which loops are rewritten (what the
// pass returns), and that the rewritten graph computes what the per-step
// products did (within float tolerance), for zero, one and several steps,
// contiguous or not, float and double. Then copyTransposedLoopWeights, the
// pass that follows it, on the same LSTM and on loops of its own. The
// graphs after the passes (which products are batched, which read a copy)
// are checked in tests/lit/passes/batch_loop_matmuls_cases.ir and
// copy_transposed_loop_weights_cases.ir. Graphs run with the executor's
// optimization off, so each runs as written.
#include <gtest/gtest.h>

#include "kiln/ir/ir_parser.h"
#include "kiln/passes/analysis/shape_analysis.h"
#include "kiln/passes/batch_loop_matmuls.h"
#include "kiln/passes/copy_transposed_loop_weights.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/tensor/random.h"
#include "kiln/tensor/shape.h"
#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::runGraph;
using kiln::testing::sameResults;
using kiln::testing::specializedGraph;
using kiln::testing::UnoptimizedRuns;

namespace {

constexpr double kTolerance = 1e-5;

// One step of an LSTM over the rows of %x, as `torch.mm(x[t], w_ih.t())`
// lowers: the transpose of the weight is inside the loop.
const char* kLstm = R"IR(
graph(%x : Tensor, %hx0 : Tensor, %cx0 : Tensor, %w_ih : Tensor, %w_hh : Tensor, %b_ih : Tensor, %b_hh : Tensor):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %four : int = prim::Constant[value=4]()
  %T : int = aten::size(%x, %zero)
  %hx : Tensor, %cx : Tensor = prim::Loop(%T, %true, %hx0, %cx0)
    block0(%t : int, %h : Tensor, %c : Tensor):
      %xt : Tensor = aten::select(%x, %zero, %t)
      %wt : Tensor = aten::t(%w_ih)
      %xw : Tensor = aten::mm(%xt, %wt)
      %ut : Tensor = aten::t(%w_hh)
      %hw : Tensor = aten::mm(%h, %ut)
      %g0 : Tensor = aten::add(%xw, %hw, %one)
      %g1 : Tensor = aten::add(%g0, %b_ih, %one)
      %gates : Tensor = aten::add(%g1, %b_hh, %one)
      %chunks : Tensor[] = aten::chunk(%gates, %four, %one)
      %i : Tensor, %f : Tensor, %g : Tensor, %o : Tensor = prim::ListUnpack(%chunks)
      %is : Tensor = aten::sigmoid(%i)
      %fs : Tensor = aten::sigmoid(%f)
      %gt : Tensor = aten::tanh(%g)
      %os : Tensor = aten::sigmoid(%o)
      %fc : Tensor = aten::mul(%fs, %c)
      %ig : Tensor = aten::mul(%is, %gt)
      %cn : Tensor = aten::add(%fc, %ig, %one)
      %ct : Tensor = aten::tanh(%cn)
      %hn : Tensor = aten::mul(%os, %ct)
      -> (%true, %hn, %cn)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%hx, %cx)
  return (%r))IR";

struct LstmShape {
  int64_t steps, batch, input, hidden;
};

Stack lstmInputs(const LstmShape& s, ScalarType dtype = ScalarType::Float) {
  manualSeed(7);
  return {IValue(randn({s.steps, s.batch, s.input}, dtype)),
          IValue(randn({s.batch, s.hidden}, dtype)),
          IValue(randn({s.batch, s.hidden}, dtype)),
          IValue(randn({4 * s.hidden, s.input}, dtype)),
          IValue(randn({4 * s.hidden, s.hidden}, dtype)),
          IValue(randn({4 * s.hidden}, dtype)),
          IValue(randn({4 * s.hidden}, dtype))};
}

std::shared_ptr<Graph> batched(const std::shared_ptr<Graph>& g, bool expect_change = true) {
  return kiln::testing::copyAfterPass(batchLoopMatmuls, g, expect_change);
}

}  // namespace

TEST(BatchLoopMatmuls, LstmInputProductBecomesOneProductBeforeTheLoop) {
  // The graph after the pass: tests/lit/passes/batch_loop_matmuls_cases.ir.
  Stack inputs = lstmInputs({6, 3, 5, 4});
  auto before = specializedGraph(kLstm, inputs);
  auto after = batched(before);
  UnoptimizedRuns unoptimized;
  EXPECT_TRUE(sameResults(before, after, inputs, kTolerance));
}

TEST(BatchLoopMatmuls, SameResultsForManyShapes) {
  UnoptimizedRuns unoptimized;
  for (const LstmShape& s :
       std::vector<LstmShape>{{0, 3, 5, 4}, {1, 1, 1, 1}, {9, 2, 7, 3}, {3, 0, 4, 2}, {4, 2, 0, 3}, {2, 64, 32, 16}}) {
    SCOPED_TRACE(::testing::Message() << s.steps << " steps, batch " << s.batch << ", " << s.input << " -> "
                                      << s.hidden);
    Stack inputs = lstmInputs(s);
    auto before = specializedGraph(kLstm, inputs);
    EXPECT_TRUE(sameResults(before, batched(before), inputs, kTolerance));
  }
}

TEST(BatchLoopMatmuls, DoubleAndNonContiguousInputs) {
  UnoptimizedRuns unoptimized;
  Stack inputs = lstmInputs({5, 3, 4, 2}, ScalarType::Double);
  auto before = specializedGraph(kLstm, inputs);
  EXPECT_TRUE(sameResults(before, batched(before), inputs, 1e-12));

  // The steps along the middle dimension of a [batch, steps, input] tensor.
  inputs = lstmInputs({5, 3, 4, 2});
  inputs[0] = IValue(transpose(randn({3, 5, 4}, ScalarType::Float), 0, 1));
  inputs[3] = IValue(transpose(randn({4, 8}, ScalarType::Float), 0, 1));
  before = specializedGraph(kLstm, inputs);
  EXPECT_TRUE(sameResults(before, batched(before), inputs, kTolerance));
}

TEST(BatchLoopMatmuls, RankLevelTypesAreLeftAlone) {
  // Without sizes the product before the loop could raise on mismatched
  // inner sizes where a loop of zero steps raises nothing.
  Stack inputs = lstmInputs({0, 3, 5, 4});
  inputs[3] = IValue(randn({16, 6}, ScalarType::Float));
  auto g = specializedGraph(kLstm, inputs, /*with_sizes=*/false);
  batched(g, /*expect_change=*/false);
  UnoptimizedRuns unoptimized;
  EXPECT_TRUE(runGraph(g, inputs).value.has_value());
}

TEST(BatchLoopMatmuls, MismatchedSizesAreLeftAlone) {
  Stack inputs = lstmInputs({0, 3, 5, 4});
  inputs[3] = IValue(randn({16, 6}, ScalarType::Float));
  batched(specializedGraph(kLstm, inputs), /*expect_change=*/false);
}

TEST(BatchLoopMatmuls, WritesThroughAViewOfTheWeightAreSeen) {
  const char* ir = R"IR(
graph(%x : Tensor, %w : Tensor):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %two : int = prim::Constant[value=2]()
  %T : int = aten::size(%x, %zero)
  %v : Tensor = aten::t(%w)
  %acc : Tensor = prim::Loop(%T, %true, %x)
    block0(%t : int, %a : Tensor):
      %xt : Tensor = aten::select(%x, %zero, %t)
      %p : Tensor = aten::mm(%xt, %w)
      %u : Tensor = aten::mul_(%v, %two)
      -> (%true, %p)
  return (%acc))IR";
  manualSeed(1);
  Stack inputs{IValue(randn({4, 2, 3}, ScalarType::Float)), IValue(randn({3, 3}, ScalarType::Float))};
  auto g = specializedGraph(ir, inputs);
  batched(g, /*expect_change=*/false);
}

TEST(BatchLoopMatmuls, WrittenResultsAreLeftAlone) {
  const char* ir = R"IR(
graph(%x : Tensor, %w : Tensor):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %two : int = prim::Constant[value=2]()
  %T : int = aten::size(%x, %zero)
  %acc : Tensor = prim::Loop(%T, %true, %w)
    block0(%t : int, %a : Tensor):
      %xt : Tensor = aten::select(%x, %zero, %t)
      %p : Tensor = aten::mm(%xt, %w)
      %u : Tensor = aten::mul_(%p, %two)
      -> (%true, %p)
  return (%acc))IR";
  manualSeed(1);
  Stack inputs{IValue(randn({4, 2, 3}, ScalarType::Float)), IValue(randn({3, 3}, ScalarType::Float))};
  batched(specializedGraph(ir, inputs), /*expect_change=*/false);
}

// copyTransposedLoopWeights: the products left in the loop read a
// contiguous copy of their transposed weight, made once before the loop.

namespace {

std::shared_ptr<Graph> copied(const std::shared_ptr<Graph>& g, bool expect_change = true) {
  return kiln::testing::copyAfterPass(copyTransposedLoopWeights, g, expect_change);
}

// A loop (for or while, with trip count %T) whose products read t(%w_hh):
// one in the body, one through a transpose made before the loop, and a
// third whose weight the body writes when %write is true.
std::string hiddenProducts(const char* trip_count, bool write) {
  std::string ir = R"IR(
graph(%h0 : Tensor, %w_hh : Tensor, %w_out : Tensor):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %T : int = prim::Constant[value=TRIP]()
  %v : Tensor = aten::t(%w_hh)
  %h : Tensor = prim::Loop(%T, %true, %h0)
    block0(%t : int, %hc : Tensor):
      %ut : Tensor = aten::t(%w_hh)
      %hw : Tensor = aten::mm(%hc, %ut)
      %hv : Tensor = aten::matmul(%hc, %v)
      %s : Tensor = aten::add(%hw, %hv, %one)
      %ot : Tensor = aten::t(%w_out)
      %o : Tensor = aten::mm(%hc, %ot)
      WRITE
      %n : Tensor = aten::tanh(%s)
      %m : Tensor = aten::add(%n, %o, %one)
      -> (%true, %m)
  return (%h))IR";
  ir.replace(ir.find("TRIP"), 4, trip_count);
  ir.replace(ir.find("WRITE"), 5, write ? "%written : Tensor = aten::mul_(%w_out, %two)" : "");
  return ir;
}

Stack hiddenInputs() {
  manualSeed(3);
  return {IValue(randn({3, 4}, ScalarType::Float)), IValue(randn({4, 4}, ScalarType::Float)),
          IValue(randn({4, 4}, ScalarType::Float))};
}

}  // namespace

TEST(CopyTransposedLoopWeights, ProductsReadOneCopyPerWeight) {
  // The graph after the pass: tests/lit/passes/copy_transposed_loop_weights_cases.ir.
  Stack inputs = hiddenInputs();
  auto before = specializedGraph(hiddenProducts("5", false).c_str(), inputs);
  auto after = copied(before);
  UnoptimizedRuns unoptimized;
  EXPECT_TRUE(sameResults(before, after, inputs));  // exactly
}

TEST(CopyTransposedLoopWeights, WrittenWeightsAreLeftAlone) {
  // Graph inputs may share memory, so a write to w_out may change w_hh too:
  // no product is rewritten.
  copied(specializedGraph(hiddenProducts("5", true).c_str(), hiddenInputs()), /*expect_change=*/false);

  // A weight made in the graph is its own memory: w_hh's products read a
  // copy, the written weight's product does not (the graph after the pass:
  // tests/lit/passes/copy_transposed_loop_weights_cases.ir).
  const char* ir = R"IR(
graph(%h0 : Tensor, %a : Tensor, %b : Tensor):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %T : int = prim::Constant[value=3]()
  %w_hh : Tensor = aten::add(%a, %one, %one)
  %w_out : Tensor = aten::add(%b, %one, %one)
  %h : Tensor = prim::Loop(%T, %true, %h0)
    block0(%t : int, %hc : Tensor):
      %ut : Tensor = aten::t(%w_hh)
      %hw : Tensor = aten::mm(%hc, %ut)
      %ot : Tensor = aten::t(%w_out)
      %o : Tensor = aten::mm(%hc, %ot)
      %written : Tensor = aten::mul_(%w_out, %two)
      %m : Tensor = aten::add(%hw, %o, %one)
      -> (%true, %m)
  return (%h))IR";
  Stack inputs = hiddenInputs();
  auto before = specializedGraph(ir, inputs);
  auto after = copied(before);
  UnoptimizedRuns unoptimized;
  EXPECT_TRUE(sameResults(before, after, inputs));
}

TEST(CopyTransposedLoopWeights, LoopsThatRunAtMostOnceAreLeftAlone) {
  Stack inputs = hiddenInputs();
  copied(specializedGraph(hiddenProducts("1", false).c_str(), inputs), /*expect_change=*/false);
  copied(specializedGraph(hiddenProducts("0", false).c_str(), inputs), /*expect_change=*/false);
}

TEST(CopyTransposedLoopWeights, WhileLoopsAndLstms) {
  // The graphs after the pass: tests/lit/passes/copy_transposed_loop_weights_cases.ir.
  // A while loop: its trip count is not known.
  const char* ir = R"IR(
graph(%h0 : Tensor, %w : Tensor, %limit : int):
  %true : bool = prim::Constant[value=1]()
  %big : int = prim::Constant[value=9223372036854775807]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %h : Tensor, %k : int = prim::Loop(%big, %true, %h0, %zero)
    block0(%t : int, %hc : Tensor, %kc : int):
      %wt : Tensor = aten::t(%w)
      %hw : Tensor = aten::mm(%hc, %wt)
      %hn : Tensor = aten::tanh(%hw)
      %kn : int = aten::add(%kc, %one)
      %go : bool = aten::lt(%kn, %limit)
      -> (%go, %hn, %kn)
  return (%h, %k))IR";
  manualSeed(5);
  Stack inputs{IValue(randn({2, 3}, ScalarType::Float)), IValue(randn({3, 3}, ScalarType::Float)), IValue(int64_t{4})};
  auto before = specializedGraph(ir, inputs);
  auto after = copied(before);
  UnoptimizedRuns unoptimized;
  EXPECT_TRUE(sameResults(before, after, inputs));

  // The LSTM after batching: the hidden product reads the copy, in float and double.
  for (ScalarType dtype : {ScalarType::Float, ScalarType::Double}) {
    Stack lstm = lstmInputs({6, 3, 5, 4}, dtype);
    auto batched_lstm = batched(specializedGraph(kLstm, lstm));
    auto lstm_after = copied(batched_lstm);
    EXPECT_TRUE(sameResults(batched_lstm, lstm_after, lstm));
  }
}
