// Loop unrolling: what the pass returns, and the same results with and
// without the pass for trip counts around the unroll factor. The graphs
// after the pass are checked in tests/lit/passes/unroll_loops_cases.ir
// (those of the graph-in/graph-out cases compared with what PyTorch 1.13
// prints after torch._C._jit_pass_loop_unrolling on the same IR text).
#include <gtest/gtest.h>

#include <sstream>

#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/passes/loop_unrolling.h"
#include "kiln/runtime/function.h"
#include "kiln/tensor/factory.h"

#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::runCopy;
using kiln::testing::shown;

namespace {

// k = k * 2 + i, y = y + i, l.append(i), for i in range(trip count): the
// counter is read by three kinds of ops, one of them a write.
const char* kCounterLoop = R"IR(
graph(%n : int, %x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %l : int[] = prim::ListConstruct()
  %k : int, %y : Tensor = prim::Loop(TRIP, %t, %one, %x)
    block0(%i : int, %k.1 : int, %y.1 : Tensor):
      %a : int = aten::mul(%k.1, %two)
      %b : int = aten::add(%a, %i)
      %z : Tensor = aten::add(%y.1, %i, %one)
      %u : int[] = aten::append(%l, %i)
      -> (%t, %b, %z)
  %r : (int, Tensor, int[]) = prim::TupleConstruct(%k, %y, %l)
  return (%r))IR";

// The loop above, computed here.
std::string expectedCounterLoop(int64_t n) {
  int64_t k = 1, sum = 0;
  std::vector<IValue> list;
  for (int64_t i = 0; i < n; ++i) {
    k = k * 2 + i;
    sum += i;
    list.emplace_back(i);
  }
  Tensor y = full({3}, static_cast<double>(sum) + 1.0, ScalarType::Float);
  auto elements = makeIntrusive<ListObj>(IntType::get(), std::move(list));
  return shown(IValue(makeIntrusive<TupleObj>(std::vector<IValue>{IValue(k), IValue(y), IValue(elements)})));
}

std::string withTripCount(const std::string& trip) {
  std::string ir = kCounterLoop;
  ir.replace(ir.find("TRIP"), 4, trip);
  return ir;
}

}  // namespace

TEST(LoopUnrolling, SixtyFourOrMoreConstantIterationsUnrollByEight) {
  // The graphs after the pass: tests/lit/passes/unroll_loops_cases.ir.
  for (int trip : {63, 64}) {
    auto g = parseIR(R"IR(
graph(%n : int):
  %t : bool = prim::Constant[value=1]()
  %c : int = prim::Constant[value=)IR" +
                     std::to_string(trip) + R"IR(]()
  %k : int = prim::Loop(%c, %t, %n)
    block0(%i : int, %k.1 : int):
      %b : int = aten::mul(%k.1, %k.1)
      -> (%t, %b)
  return (%k))IR");
    EXPECT_TRUE(unrollLoops(g)) << trip;
  }
}

TEST(LoopUnrolling, BodiesOfThirtyTwoNodesThatRunAreTooLarge) {
  // 1.13 counts the nodes that run (not constants) plus the return node.
  for (int size : {31, 32}) {
    std::string ir =
        "graph(%n : int):\n  %t : bool = prim::Constant[value=1]()\n"
        "  %k : int = prim::Loop(%n, %t, %n)\n    block0(%i : int, %m0 : int):\n";
    for (int j = 0; j < size; ++j) {
      ir += "      %c" + std::to_string(j) + " : int = prim::Constant[value=2]()\n";
      ir += "      %m" + std::to_string(j + 1) + " : int = aten::mul(%m" + std::to_string(j) + ", %c" +
            std::to_string(j) + ")\n";
    }
    ir += "      -> (%t, %m" + std::to_string(size) + ")\n  return (%k)";
    auto g = parseIR(ir);
    EXPECT_EQ(unrollLoops(g), size == 31) << size;
  }
}

TEST(LoopUnrolling, UnrollsInnerLoopsFirst) {
  // The graph after the pass: tests/lit/passes/unroll_loops_cases.ir.
  auto g = parseIR(R"IR(
graph(%n : int):
  %t : bool = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %one : int = prim::Constant[value=1]()
  %k : int = prim::Loop(%n, %t, %one)
    block0(%i : int, %k.1 : int):
      %m : int = prim::Loop(%three, %t, %k.1)
        block0(%j : int, %m.1 : int):
          %a : int = aten::mul(%m.1, %i)
          %b : int = aten::add(%a, %j)
          -> (%t, %b)
      -> (%t, %m)
  return (%k))IR");
  EXPECT_TRUE(unrollLoops(g));
}

TEST(LoopUnrolling, ReturnsFalseWithoutForLoops) {
  auto g = parseIR("graph(%x : int):\n  %y : int = aten::add(%x, %x)\n  return (%y)");
  EXPECT_FALSE(unrollLoops(g));
}

TEST(LoopUnrolling, SameResultsForTripCountsAroundTheFactor) {
  // The graphs after the pass: tests/lit/passes/unroll_loops_cases.ir.
  for (int64_t n : {0, 1, 7, 8, 9, 17, -3}) {
    Stack inputs = {IValue(n), IValue(ones({3}))};
    // A trip count known only at run time: unrolled by eight.
    auto by_eight = parseIR(withTripCount("%n"));
    EXPECT_TRUE(unrollLoops(by_eight));
    EXPECT_EQ(shown(runCopy(by_eight, inputs)), expectedCounterLoop(n)) << n;
    EXPECT_EQ(shown(runCopy(parseIR(withTripCount("%n")), inputs)), expectedCounterLoop(n)) << n;
    // The same count as a constant: unrolled fully.
    std::string constant_ir = withTripCount("%c");
    constant_ir.insert(constant_ir.find("  %l : int[]"),
                       "  %c : int = prim::Constant[value=" + std::to_string(n) + "]()\n");
    auto full = parseIR(constant_ir);
    EXPECT_TRUE(unrollLoops(full));
    EXPECT_EQ(shown(runCopy(full, inputs)), expectedCounterLoop(n)) << n;
  }
}

TEST(LoopUnrolling, SameResultsForNestedLoopsReadingBothCounters) {
  // The graph after the pass: tests/lit/passes/unroll_loops_cases.ir.
  const char* ir = R"IR(
graph(%n : int, %p : int):
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %k : int = prim::Loop(%n, %t, %one)
    block0(%i : int, %k.1 : int):
      %m : int = prim::Loop(%p, %t, %k.1)
        block0(%j : int, %m.1 : int):
          %a : int = aten::mul(%m.1, %i)
          %b : int = aten::add(%a, %j)
          %c : int = aten::remainder(%b, %p)
          %d : int = aten::add(%c, %i)
          -> (%t, %d)
      -> (%t, %m)
  return (%k))IR";
  auto after = parseIR(ir);
  EXPECT_TRUE(unrollLoops(after));
  for (int64_t n : {0, 3, 9, 17}) {
    for (int64_t p : {1, 5, 8, 11}) {
      int64_t k = 1;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < p; ++j) k = (k * i + j) % p + i;
      }
      EXPECT_EQ(runCopy(after, {IValue(n), IValue(p)}).toInt(), k) << n << " " << p;
    }
  }
}

TEST(LoopUnrolling, PolicyDecidesLoopsOfUnknownTripCount) {
  const char* scalar_loop = R"IR(
graph(%n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %s : int = prim::Loop(%n, %true, %zero)
    block0(%i : int, %acc : int):
      %next : int = aten::add(%acc, %i)
      -> (%true, %next)
  return (%s))IR";
  const char* tensor_loop = R"IR(
graph(%n : int, %x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::add(%acc, %one, %one)
      -> (%true, %next)
  return (%y))IR";
  const char* constant_loop = R"IR(
graph(%x : int):
  %true : bool = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %y : int = prim::Loop(%three, %true, %x)
    block0(%i : int, %acc : int):
      %next : int = aten::add(%acc, %i)
      -> (%true, %next)
  return (%y))IR";
  auto changes = [](const char* ir, UnrollPolicy policy) { return unrollLoops(parseIR(ir), policy); };
  EXPECT_TRUE(changes(scalar_loop, UnrollPolicy::AllLoops));
  EXPECT_FALSE(changes(scalar_loop, UnrollPolicy::ConstantTripCounts));
  EXPECT_FALSE(changes(scalar_loop, UnrollPolicy::ConstantTripCountsOrTensorBodies));
  EXPECT_TRUE(changes(tensor_loop, UnrollPolicy::AllLoops));
  EXPECT_FALSE(changes(tensor_loop, UnrollPolicy::ConstantTripCounts));
  EXPECT_TRUE(changes(tensor_loop, UnrollPolicy::ConstantTripCountsOrTensorBodies));
  for (UnrollPolicy policy :
       {UnrollPolicy::AllLoops, UnrollPolicy::ConstantTripCounts, UnrollPolicy::ConstantTripCountsOrTensorBodies}) {
    EXPECT_TRUE(changes(constant_loop, policy));
  }
}
