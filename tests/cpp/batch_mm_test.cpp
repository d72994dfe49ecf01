// Batching matrix multiplies: the kernels of prim::MMTreeReduce and
// prim::MMBatchSide against the products and sums they replace (fast and
// fallback paths, broadcasting, errors), and graphs and programs that give
// the same results with and without the pass. The graphs after the pass
// (what PyTorch 1.13 prints after torch._C._jit_pass_batch_mm on the same
// IR, up to renaming and the result types kiln keeps) are checked in
// tests/lit/passes/batch_mm_cases.ir and batch_mm_cases.py. BatchMMAliasDb
// needs the memory-DAG AliasDb.
#include <gtest/gtest.h>

#include "kiln/api/kiln.h"
#include "kiln/passes/batch_mm.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/random.h"
#include "kiln/tensor/shape.h"
#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::sameResults;

namespace {

constexpr double kTolerance = 1e-5;

Tensor randomMatrix(int64_t rows, int64_t cols, ScalarType dtype = ScalarType::Float) {
  return randn({rows, cols}, dtype);
}

// Two graphs computing the same thing, one through the batched operator.
void expectSameAs(const char* reference_ir, const char* batched_ir, const Stack& inputs) {
  EXPECT_TRUE(sameResults(parseIR(reference_ir), parseIR(batched_ir), inputs, kTolerance));
}

const char* kFourProducts = R"IR(
graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor, %e : Tensor, %f : Tensor, %g : Tensor, %h : Tensor):
  %1 : int = prim::Constant[value=1]()
  %m1 : Tensor = aten::mm(%a, %b)
  %m2 : Tensor = aten::mm(%c, %d)
  %m3 : Tensor = aten::mm(%e, %f)
  %m4 : Tensor = aten::mm(%g, %h)
  %s1 : Tensor = aten::add(%m1, %m2, %1)
  %s2 : Tensor = aten::add(%s1, %m3, %1)
  %s : Tensor = aten::add(%s2, %m4, %1)
  return (%s))IR";

const char* kFourReduced = R"IR(
graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor, %e : Tensor, %f : Tensor, %g : Tensor, %h : Tensor):
  %s : Tensor = prim::MMTreeReduce(%a, %c, %e, %g, %b, %d, %f, %h)
  return (%s))IR";

Stack fourProducts(std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes,
                   ScalarType dtype = ScalarType::Float) {
  manualSeed(3);
  Stack inputs;
  for (auto& [lhs, rhs] : shapes) {
    inputs.emplace_back(randn(lhs, dtype));
    inputs.emplace_back(randn(rhs, dtype));
  }
  return inputs;
}

}  // namespace

TEST(BatchMM, TreeOfProductsBecomesOneReduce) {
  // The graph after the pass: tests/lit/passes/batch_mm_cases.ir.
  const char* ir = R"IR(
graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor, %e : Tensor, %f : Tensor, %g : Tensor, %h : Tensor):
  %1 : int = prim::Constant[value=1]()
  %m1 : Tensor = aten::mm(%a, %b)
  %m2 : Tensor = aten::mm(%c, %d)
  %m3 : Tensor = aten::mm(%e, %f)
  %m4 : Tensor = aten::mm(%g, %h)
  %t4 : Tensor = aten::t(%m4)
  %s1 : Tensor = aten::add(%m1, %m2, %1)
  %s2 : Tensor = aten::add(%m3, %t4, %1)
  %s : Tensor = aten::add(%s1, %s2, %1)
  return (%s))IR";
  manualSeed(5);
  Stack inputs;
  for (int i = 0; i < 3; ++i) {
    inputs.emplace_back(randomMatrix(2, 3));
    inputs.emplace_back(randomMatrix(3, 4));
  }
  inputs.emplace_back(randomMatrix(4, 3));
  inputs.emplace_back(randomMatrix(3, 2));
  auto after = parseIR(ir);
  batchMM(after);
  EXPECT_TRUE(sameResults(parseIR(ir), after, inputs, kTolerance));
}

TEST(BatchMM, TreeReduceKernel) {
  // One shape: one product of concatenated operands.
  expectSameAs(kFourProducts, kFourReduced,
               fourProducts({{{2, 3}, {3, 4}}, {{2, 3}, {3, 4}}, {{2, 3}, {3, 4}}, {{2, 3}, {3, 4}}}));
  // Inner sizes differ: product by product.
  expectSameAs(kFourProducts, kFourReduced,
               fourProducts({{{2, 1}, {1, 4}}, {{2, 3}, {3, 4}}, {{2, 5}, {5, 4}}, {{2, 3}, {3, 4}}}));
  // Sums that broadcast a row.
  expectSameAs(kFourProducts, kFourReduced,
               fourProducts({{{1, 3}, {3, 4}}, {{5, 3}, {3, 4}}, {{5, 3}, {3, 4}}, {{1, 3}, {3, 4}}}));
  // Doubles.
  expectSameAs(
      kFourProducts, kFourReduced,
      fourProducts({{{2, 3}, {3, 4}}, {{2, 3}, {3, 4}}, {{2, 3}, {3, 4}}, {{2, 3}, {3, 4}}}, ScalarType::Double));
  // Products that do not fit, and sums that do not broadcast: both raise.
  expectSameAs(kFourProducts, kFourReduced,
               fourProducts({{{2, 3}, {4, 4}}, {{2, 4}, {3, 4}}, {{2, 3}, {3, 4}}, {{2, 3}, {3, 4}}}));
  expectSameAs(kFourProducts, kFourReduced,
               fourProducts({{{2, 3}, {3, 4}}, {{3, 3}, {3, 4}}, {{2, 3}, {3, 4}}, {{2, 3}, {3, 4}}}));
  // Not matrices.
  expectSameAs(kFourProducts, kFourReduced, fourProducts({{{3}, {3}}, {{3}, {3}}, {{3}, {3}}, {{3}, {3}}}));
  // Operands stored transposed (column-major), and a mix of float and double pairs.
  Stack transposed = fourProducts({{{3, 2}, {4, 3}}, {{3, 2}, {4, 3}}, {{3, 2}, {4, 3}}, {{3, 2}, {4, 3}}});
  for (IValue& v : transposed) v = IValue(t(v.toTensor()));
  expectSameAs(kFourProducts, kFourReduced, transposed);
  Stack mixed = fourProducts({{{2, 3}, {3, 4}}, {{2, 3}, {3, 4}}, {{2, 3}, {3, 4}}, {{2, 3}, {3, 4}}});
  mixed[0] = IValue(to(mixed[0].toTensor(), ScalarType::Double));
  mixed[1] = IValue(to(mixed[1].toTensor(), ScalarType::Double));
  expectSameAs(kFourProducts, kFourReduced, mixed);
}

namespace {

const char* kSideProducts = R"IR(
graph(%w : Tensor, %a : Tensor, %b : Tensor, %c : Tensor):
  %1 : Tensor = aten::mm(%w, %a)
  %2 : Tensor = aten::mm(%w, %b)
  %3 : Tensor = aten::mm(%w, %c)
  %4 : Tensor = aten::mm(%a, %w)
  %5 : Tensor = aten::mm(%b, %w)
  %6 : Tensor = aten::mm(%c, %w)
  %r : (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%1, %2, %3, %4, %5, %6)
  return (%r))IR";

const char* kSideBatched = R"IR(
graph(%w : Tensor, %a : Tensor, %b : Tensor, %c : Tensor):
  %1 : Tensor, %2 : Tensor, %3 : Tensor = prim::MMBatchSide[side=0](%w, %a, %b, %c)
  %4 : Tensor, %5 : Tensor, %6 : Tensor = prim::MMBatchSide[side=1](%w, %a, %b, %c)
  %r : (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%1, %2, %3, %4, %5, %6)
  return (%r))IR";

Stack sideInputs(std::vector<int64_t> w, std::vector<std::vector<int64_t>> others) {
  manualSeed(9);
  Stack inputs{IValue(randn(w, ScalarType::Float))};
  for (auto& sizes : others) inputs.emplace_back(randn(sizes, ScalarType::Float));
  return inputs;
}

}  // namespace

TEST(BatchMM, BatchSideKernel) {
  // Square operands, so that both sides fit: one product each side.
  expectSameAs(kSideProducts, kSideBatched, sideInputs({3, 3}, {{3, 3}, {3, 3}, {3, 3}}));
  // Some products do not fit: both raise.
  expectSameAs(kSideProducts, kSideBatched, sideInputs({3, 3}, {{3, 2}, {3, 2}, {3, 2}}));
  // Empty operands, and a shared operand that is not a matrix.
  expectSameAs(kSideProducts, kSideBatched, sideInputs({0, 0}, {{0, 0}, {0, 0}, {0, 0}}));
  expectSameAs(kSideProducts, kSideBatched, sideInputs({3}, {{3, 3}, {3, 3}, {3, 3}}));
  // A double among floats raises as the separate products do.
  Stack mixed = sideInputs({3, 3}, {{3, 3}, {3, 3}, {3, 3}});
  mixed[2] = IValue(to(mixed[2].toTensor(), ScalarType::Double));
  expectSameAs(kSideProducts, kSideBatched, mixed);
  // Left operand shared, others of different widths: product by product.
  const char* lhs_products = R"IR(
graph(%w : Tensor, %a : Tensor, %b : Tensor):
  %1 : Tensor = aten::mm(%w, %a)
  %2 : Tensor = aten::mm(%w, %b)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%1, %2)
  return (%r))IR";
  const char* lhs_batched = R"IR(
graph(%w : Tensor, %a : Tensor, %b : Tensor):
  %1 : Tensor, %2 : Tensor = prim::MMBatchSide[side=0](%w, %a, %b)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%1, %2)
  return (%r))IR";
  expectSameAs(lhs_products, lhs_batched, sideInputs({2, 3}, {{3, 1}, {3, 4}}));
  expectSameAs(lhs_products, lhs_batched, sideInputs({2, 3}, {{3, 4}, {3, 4}}));
}

TEST(BatchMM, UnrolledLoopProgram) {
  // The graph after the pass: tests/lit/passes/batch_mm_cases.py.
  // What unrolling `for i in range(4): acc = acc + x[i].mm(w)` leaves.
  auto unit = compile(R"(
def f(x, w, h):
    return h + (x[0].mm(w) + x[1].mm(w) + x[2].mm(w) + x[3].mm(w))
)");
  auto before = unit->getFunction("f").graph()->copy();
  auto after = before->copy();
  batchMM(after);
  manualSeed(1);
  Stack inputs{IValue(randn({4, 2, 3}, ScalarType::Float)), IValue(randomMatrix(3, 5)), IValue(randomMatrix(2, 5))};
  EXPECT_TRUE(sameResults(before, after, inputs, kTolerance));
}

// --- needing the memory-DAG AliasDb ---------------------------------------------------

TEST(BatchMMAliasDb, EightProductsSharingAnOperand) {
  // The graph after the pass: tests/lit/passes/batch_mm_cases.ir.
  std::string ir = "graph(%w : Tensor";
  std::string body;
  std::string outputs;
  for (int i = 0; i < 8; ++i) {
    ir += ", %x" + std::to_string(i) + " : Tensor";
    body += "  %m" + std::to_string(i) + " : Tensor = aten::mm(%w, %x" + std::to_string(i) + ")\n";
    outputs += std::string(i ? ", " : "") + "%m" + std::to_string(i);
  }
  ir += "):\n" + body +
        "  %r : (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(" + outputs +
        ")\n  return (%r)";
  auto after = parseIR(ir);
  batchMM(after);
  manualSeed(2);
  Stack inputs{IValue(randomMatrix(3, 4))};
  for (int i = 0; i < 8; ++i) inputs.emplace_back(randomMatrix(4, 2));
  EXPECT_TRUE(sameResults(parseIR(ir), after, inputs, kTolerance));
}
