// Batching a loop's input products: which loops are rewritten, and that the
// rewritten graph computes what the per-step products did (within float
// tolerance), for zero, one and several steps, contiguous or not, float and
// double. Graphs run with the executor's optimization off, so each runs as
// written.
#include <gtest/gtest.h>

#include "kiln/ir/ir_parser.h"
#include "kiln/passes/analysis/shape_analysis.h"
#include "kiln/passes/batch_loop_matmuls.h"
#include "kiln/runtime/graph_executor.h"
#include "kiln/tensor/random.h"
#include "kiln/tensor/shape.h"
#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::countNodes;
using kiln::testing::runGraph;
using kiln::testing::sameResults;

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

// `ir` with its inputs typed as the executor's shape plans type them
// (complete types of `inputs`), or only by rank, and shapes propagated.
std::shared_ptr<Graph> specialized(const char* ir, const Stack& inputs, bool with_sizes = true) {
  auto g = parseIR(ir);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].isTensor()) continue;
    TypePtr complete = TensorType::fromTensor(inputs[i].toTensor());
    g->inputs()[i]->setType(with_sizes ? complete : complete->cast<TensorType>()->dimensionedOnly());
  }
  propagateShapes(g);
  return g;
}

std::shared_ptr<Graph> batched(const std::shared_ptr<Graph>& g, bool expect_change = true) {
  auto copy = g->copy();
  EXPECT_EQ(batchLoopMatmuls(copy), expect_change);
  copy->lint();
  return copy;
}

// Runs graphs as written: the executor's pipeline would batch both.
struct UnoptimizedRuns {
  UnoptimizedRuns() { setGraphExecutorOptimize(false); }
  ~UnoptimizedRuns() { setGraphExecutorOptimize(true); }
};

size_t productsBeforeLoop(const std::shared_ptr<Graph>& g) {
  size_t n = 0;
  for (const Node* node : g->nodes()) n += node->kind() == aten::matmul;
  return n;
}

const Node* onlyLoop(const std::shared_ptr<Graph>& g) {
  for (const Node* node : g->nodes()) {
    if (node->kind() == prim::Loop) return node;
  }
  return nullptr;
}

}  // namespace

TEST(BatchLoopMatmuls, LstmInputProductBecomesOneProductBeforeTheLoop) {
  Stack inputs = lstmInputs({6, 3, 5, 4});
  auto before = specialized(kLstm, inputs);
  auto after = batched(before);
  EXPECT_EQ(productsBeforeLoop(after), 1u);
  const Block* body = onlyLoop(after)->blocks()[0];
  EXPECT_EQ(countNodes(body, "aten::mm"), 1u);  // the hidden product depends on the carried state
  EXPECT_EQ(countNodes(body, "aten::t"), 1u);
  EXPECT_EQ(countNodes(body, "aten::select"), 1u);
  UnoptimizedRuns unoptimized;
  EXPECT_TRUE(sameResults(before, after, inputs, kTolerance));
}

TEST(BatchLoopMatmuls, SameResultsForManyShapes) {
  UnoptimizedRuns unoptimized;
  for (const LstmShape& s : std::vector<LstmShape>{
           {0, 3, 5, 4}, {1, 1, 1, 1}, {9, 2, 7, 3}, {3, 0, 4, 2}, {4, 2, 0, 3}, {2, 64, 32, 16}}) {
    SCOPED_TRACE(::testing::Message() << s.steps << " steps, batch " << s.batch << ", " << s.input << " -> "
                                      << s.hidden);
    Stack inputs = lstmInputs(s);
    auto before = specialized(kLstm, inputs);
    EXPECT_TRUE(sameResults(before, batched(before), inputs, kTolerance));
  }
}

TEST(BatchLoopMatmuls, DoubleAndNonContiguousInputs) {
  UnoptimizedRuns unoptimized;
  Stack inputs = lstmInputs({5, 3, 4, 2}, ScalarType::Double);
  auto before = specialized(kLstm, inputs);
  EXPECT_TRUE(sameResults(before, batched(before), inputs, 1e-12));

  // The steps along the middle dimension of a [batch, steps, input] tensor.
  inputs = lstmInputs({5, 3, 4, 2});
  inputs[0] = IValue(transpose(randn({3, 5, 4}, ScalarType::Float), 0, 1));
  inputs[3] = IValue(transpose(randn({4, 8}, ScalarType::Float), 0, 1));
  before = specialized(kLstm, inputs);
  EXPECT_TRUE(sameResults(before, batched(before), inputs, kTolerance));
}

TEST(BatchLoopMatmuls, RankLevelTypesAreLeftAlone) {
  // Without sizes the product before the loop could raise on mismatched
  // inner sizes where a loop of zero steps raises nothing.
  Stack inputs = lstmInputs({0, 3, 5, 4});
  inputs[3] = IValue(randn({16, 6}, ScalarType::Float));
  auto g = specialized(kLstm, inputs, /*with_sizes=*/false);
  batched(g, /*expect_change=*/false);
  UnoptimizedRuns unoptimized;
  EXPECT_TRUE(runGraph(g, inputs).value.has_value());
}

TEST(BatchLoopMatmuls, MismatchedSizesAreLeftAlone) {
  Stack inputs = lstmInputs({0, 3, 5, 4});
  inputs[3] = IValue(randn({16, 6}, ScalarType::Float));
  batched(specialized(kLstm, inputs), /*expect_change=*/false);
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
  auto g = specialized(ir, inputs);
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
  batched(specialized(ir, inputs), /*expect_change=*/false);
}
