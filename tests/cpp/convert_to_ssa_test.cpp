// Conversion to SSA and the exit transform. Each test starts from the graph
// TorchScript 1.13's IR emitter writes for a Python function (shown above
// it: loads, stores, exit statements, the loop condition in its own block)
// and checks that the converted graph computes what Python computes. The
// converted graphs (with the node kinds 1.13's `fn.graph` has for each
// function) are checked in tests/lit/passes/convert_to_ssa_cases.ir
// (`kiln opt -p convert_to_ssa`).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "kiln/frontend/convert_to_ssa.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/runtime/function.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

std::shared_ptr<Graph> toSSA(const std::string& ir) {
  auto graph = parseIR(ir);
  convertToSSA(graph);
  graph->lint();
  return graph;
}

constexpr int64_t kRaises = INT64_MIN;

// Runs a copy of the graph (the executor may optimize what it runs) on one
// int; kRaises when it raises.
int64_t call(const Graph& graph, int64_t x) {
  GraphFunction f("f", graph.copy());
  try {
    return f({IValue(x)}).toInt();
  } catch (const Error&) {
    return kRaises;
  }
}

// Python's results for x in -1, 0, 1, 2, 3, 5, 7.
void expectResults(const Graph& graph, const std::vector<int64_t>& expected) {
  const std::vector<int64_t> inputs{-1, 0, 1, 2, 3, 5, 7};
  ASSERT_EQ(inputs.size(), expected.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(call(graph, inputs[i]), expected[i]) << "x = " << inputs[i] << "\n" << graph;
  }
}

// def f(x: int) -> int:
//     if x > 2:
//         y = x + 1
//     else:
//         y = x * 2
//     return y
TEST(ConvertToSSA, IfAssigningInBothBranches) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %c2 : int = prim::Constant[value=2]()
  %cond : bool = aten::gt(%x.2, %c2)
  prim::If(%cond)
    block0():
      %x.3 : int = prim::Load[name="x"]()
      %c1 : int = prim::Constant[value=1]()
      %y.1 : int = aten::add(%x.3, %c1)
      prim::Store[name="y"](%y.1)
      %yt : int = prim::Load[name="y"]()
      -> ()
    block1():
      %x.4 : int = prim::Load[name="x"]()
      %c2b : int = prim::Constant[value=2]()
      %y.2 : int = aten::mul(%x.4, %c2b)
      prim::Store[name="y"](%y.2)
      %yf : int = prim::Load[name="y"]()
      -> ()
  %y.3 : int = prim::Load[name="y"]()
  prim::ReturnStmt(%y.3)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {-2, 0, 2, 4, 4, 6, 8});
}

// def f(x: int) -> int:
//     y = x
//     if x > 2:
//         y = x + 1
//     return y
TEST(ConvertToSSA, IfAssigningInOneBranchKeepsTheOuterValue) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  prim::Store[name="y"](%x.2)
  %x.3 : int = prim::Load[name="x"]()
  %c2 : int = prim::Constant[value=2]()
  %cond : bool = aten::gt(%x.3, %c2)
  prim::If(%cond)
    block0():
      %x.4 : int = prim::Load[name="x"]()
      %c1 : int = prim::Constant[value=1]()
      %y.1 : int = aten::add(%x.4, %c1)
      prim::Store[name="y"](%y.1)
      %yt : int = prim::Load[name="y"]()
      -> ()
    block1():
      %yf : int = prim::Load[name="y"]()
      -> ()
  %y.3 : int = prim::Load[name="y"]()
  prim::ReturnStmt(%y.3)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {-1, 0, 1, 2, 4, 6, 8});
}

// def f(x: int) -> int:
//     if x < 0:
//         y = 0 - x
//     elif x == 0:
//         y = 7
//     else:
//         y = x * 3
//     return y
TEST(ConvertToSSA, ElifChainNestsIfs) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %c0 : int = prim::Constant[value=0]()
  %cond : bool = aten::lt(%x.2, %c0)
  prim::If(%cond)
    block0():
      %c0b : int = prim::Constant[value=0]()
      %x.3 : int = prim::Load[name="x"]()
      %y.1 : int = aten::sub(%c0b, %x.3)
      prim::Store[name="y"](%y.1)
      %yt : int = prim::Load[name="y"]()
      -> ()
    block1():
      %x.4 : int = prim::Load[name="x"]()
      %c0c : int = prim::Constant[value=0]()
      %cond2 : bool = aten::eq(%x.4, %c0c)
      prim::If(%cond2)
        block0():
          %c7 : int = prim::Constant[value=7]()
          prim::Store[name="y"](%c7)
          %yt2 : int = prim::Load[name="y"]()
          -> ()
        block1():
          %x.5 : int = prim::Load[name="x"]()
          %c3 : int = prim::Constant[value=3]()
          %y.2 : int = aten::mul(%x.5, %c3)
          prim::Store[name="y"](%y.2)
          %yf2 : int = prim::Load[name="y"]()
          -> ()
      %yf : int = prim::Load[name="y"]()
      -> ()
  %y.3 : int = prim::Load[name="y"]()
  prim::ReturnStmt(%y.3)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {1, 7, 3, 6, 9, 15, 21});
}

// def f(x: int) -> int:
//     if x > 2:
//         z = x * 5
//         x = z + 1
//     return x
TEST(ConvertToSSA, VariableOfOneBranchStaysLocal) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %c2 : int = prim::Constant[value=2]()
  %cond : bool = aten::gt(%x.2, %c2)
  prim::If(%cond)
    block0():
      %x.3 : int = prim::Load[name="x"]()
      %c5 : int = prim::Constant[value=5]()
      %z.1 : int = aten::mul(%x.3, %c5)
      prim::Store[name="z"](%z.1)
      %z.2 : int = prim::Load[name="z"]()
      %c1 : int = prim::Constant[value=1]()
      %x.4 : int = aten::add(%z.2, %c1)
      prim::Store[name="x"](%x.4)
      %xt : int = prim::Load[name="x"]()
      -> ()
    block1():
      %xf : int = prim::Load[name="x"]()
      -> ()
  %x.5 : int = prim::Load[name="x"]()
  prim::ReturnStmt(%x.5)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {-1, 0, 1, 2, 16, 26, 36});
}

// def f(c: bool) -> Union[int, str]:
//     z: Union[int, str] = 1
//     if c:
//         z = 2
//     else:
//         z = "a"
//     return z
// 1.13 unifies if outputs to a Union when nothing narrower fits.
TEST(ConvertToSSA, IfOutputTypesUnifyToUnion) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%c.1 : bool):
  prim::Store[name="c"](%c.1)
  %one : int = prim::Constant[value=1]()
  prim::Store[name="z"](%one)
  %c.2 : bool = prim::Load[name="c"]()
  prim::If(%c.2)
    block0():
      %two : int = prim::Constant[value=2]()
      prim::Store[name="z"](%two)
      -> ()
    block1():
      %a : str = prim::Constant[value="a"]()
      prim::Store[name="z"](%a)
      -> ()
  %z.1 : Union(int, str) = prim::Load[name="z"]()
  prim::ReturnStmt(%z.1)
  %ret : Union(int, str) = prim::Uninitialized()
  return (%ret))IR");
  GraphFunction f("f", g->copy());
  EXPECT_EQ(f({IValue(true)}).toInt(), 2);
  EXPECT_EQ(f({IValue(false)}).toStringRef(), "a");
}

// def f(x: int) -> int:
//     i = 0
//     s = 0
//     while i < x:
//         s = s + i
//         i = i + 1
//     return s
TEST(ConvertToSSA, WhileLoopCarriesItsVariables) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %c0 : int = prim::Constant[value=0]()
  prim::Store[name="i"](%c0)
  %c0b : int = prim::Constant[value=0]()
  prim::Store[name="s"](%c0b)
  %max : int = prim::Constant[value=9223372036854775807]()
  prim::Loop(%max)
    block0(%it : int):
      %s.1 : int = prim::Load[name="s"]()
      %i.1 : int = prim::Load[name="i"]()
      %s.2 : int = aten::add(%s.1, %i.1)
      prim::Store[name="s"](%s.2)
      %i.2 : int = prim::Load[name="i"]()
      %c1 : int = prim::Constant[value=1]()
      %i.3 : int = aten::add(%i.2, %c1)
      prim::Store[name="i"](%i.3)
      -> ()
    block1():
      %i.4 : int = prim::Load[name="i"]()
      %x.2 : int = prim::Load[name="x"]()
      %lt : bool = aten::lt(%i.4, %x.2)
      -> (%lt)
  %s.3 : int = prim::Load[name="s"]()
  prim::ReturnStmt(%s.3)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {0, 0, 0, 1, 3, 10, 21});
}

// def f(x: int) -> int:
//     s = 1
//     for i in range(x):
//         s = s * 2 + i
//     return s
TEST(ConvertToSSA, ForRangeLoop) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %c1 : int = prim::Constant[value=1]()
  prim::Store[name="s"](%c1)
  %x.2 : int = prim::Load[name="x"]()
  %true : bool = prim::Constant[value=1]()
  prim::Loop(%x.2)
    block0(%i.1 : int):
      prim::Store[name="i"](%i.1)
      %s.1 : int = prim::Load[name="s"]()
      %c2 : int = prim::Constant[value=2]()
      %m : int = aten::mul(%s.1, %c2)
      %i.2 : int = prim::Load[name="i"]()
      %s.2 : int = aten::add(%m, %i.2)
      prim::Store[name="s"](%s.2)
      -> ()
    block1():
      -> (%true)
  %s.3 : int = prim::Load[name="s"]()
  prim::ReturnStmt(%s.3)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {1, 1, 2, 5, 12, 58, 248});
}

const char* kForBreak = R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %true : bool = prim::Constant[value=1]()
  prim::Loop(%x.2)
    block0(%i.1 : int):
      prim::Store[name="i"](%i.1)
      %i.2 : int = prim::Load[name="i"]()
      %c2 : int = prim::Constant[value=2]()
      %eq : bool = aten::eq(%i.2, %c2)
      prim::If(%eq)
        block0():
          prim::BreakStmt()
          -> ()
        block1():
          -> ()
      %x.3 : int = prim::Load[name="x"]()
      %i.3 : int = prim::Load[name="i"]()
      %x.4 : int = aten::add(%x.3, %i.3)
      prim::Store[name="x"](%x.4)
      -> ()
    block1():
      -> (%true)
  %x.5 : int = prim::Load[name="x"]()
  prim::ReturnStmt(%x.5)
  %ret : int = prim::Uninitialized()
  return (%ret))IR";

// def f(x: int) -> int:
//     for i in range(x):
//         if i == 2:
//             break
//         x += i
//     return x
TEST(ConvertToSSA, ForBreakIsCanonicalized) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(kForBreak);
  expectResults(*g, {-1, 0, 1, 3, 4, 6, 8});
}

// def f(x: int) -> int:
//     s = 0
//     for i in range(x):
//         if i % 2 == 0:
//             continue
//         s += i
//     return s
TEST(ConvertToSSA, ForContinue) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %c0 : int = prim::Constant[value=0]()
  prim::Store[name="s"](%c0)
  %x.2 : int = prim::Load[name="x"]()
  %true : bool = prim::Constant[value=1]()
  prim::Loop(%x.2)
    block0(%i.1 : int):
      prim::Store[name="i"](%i.1)
      %i.2 : int = prim::Load[name="i"]()
      %c2 : int = prim::Constant[value=2]()
      %r : int = aten::remainder(%i.2, %c2)
      %c0b : int = prim::Constant[value=0]()
      %eq : bool = aten::eq(%r, %c0b)
      prim::If(%eq)
        block0():
          prim::ContinueStmt()
          -> ()
        block1():
          -> ()
      %s.1 : int = prim::Load[name="s"]()
      %i.3 : int = prim::Load[name="i"]()
      %s.2 : int = aten::add(%s.1, %i.3)
      prim::Store[name="s"](%s.2)
      -> ()
    block1():
      -> (%true)
  %s.3 : int = prim::Load[name="s"]()
  prim::ReturnStmt(%s.3)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {0, 0, 0, 1, 1, 4, 9});
}

// def f(x: int) -> int:
//     i = 0
//     s = 0
//     while i < x:
//         i = i + 1
//         if i == 3:
//             continue
//         s = s + i
//     return s
TEST(ConvertToSSA, WhileContinueInlinesTheCondition) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %c0 : int = prim::Constant[value=0]()
  prim::Store[name="i"](%c0)
  %c0b : int = prim::Constant[value=0]()
  prim::Store[name="s"](%c0b)
  %max : int = prim::Constant[value=9223372036854775807]()
  prim::Loop(%max)
    block0(%it : int):
      %i.1 : int = prim::Load[name="i"]()
      %c1 : int = prim::Constant[value=1]()
      %i.2 : int = aten::add(%i.1, %c1)
      prim::Store[name="i"](%i.2)
      %i.3 : int = prim::Load[name="i"]()
      %c3 : int = prim::Constant[value=3]()
      %eq : bool = aten::eq(%i.3, %c3)
      prim::If(%eq)
        block0():
          prim::ContinueStmt()
          -> ()
        block1():
          -> ()
      %s.1 : int = prim::Load[name="s"]()
      %i.4 : int = prim::Load[name="i"]()
      %s.2 : int = aten::add(%s.1, %i.4)
      prim::Store[name="s"](%s.2)
      -> ()
    block1():
      %i.5 : int = prim::Load[name="i"]()
      %x.2 : int = prim::Load[name="x"]()
      %lt : bool = aten::lt(%i.5, %x.2)
      -> (%lt)
  %s.3 : int = prim::Load[name="s"]()
  prim::ReturnStmt(%s.3)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {0, 0, 1, 3, 3, 12, 25});
}

// def f(x: int) -> int:
//     s = 0
//     for i in range(x):
//         for j in range(x):
//             if j > i:
//                 break
//             s = s + j
//     return s
TEST(ConvertToSSA, BreakLeavesOnlyTheInnerLoop) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %c0 : int = prim::Constant[value=0]()
  prim::Store[name="s"](%c0)
  %x.2 : int = prim::Load[name="x"]()
  %true : bool = prim::Constant[value=1]()
  prim::Loop(%x.2)
    block0(%i.1 : int):
      prim::Store[name="i"](%i.1)
      %x.3 : int = prim::Load[name="x"]()
      %true2 : bool = prim::Constant[value=1]()
      prim::Loop(%x.3)
        block0(%j.1 : int):
          prim::Store[name="j"](%j.1)
          %j.2 : int = prim::Load[name="j"]()
          %i.2 : int = prim::Load[name="i"]()
          %gt : bool = aten::gt(%j.2, %i.2)
          prim::If(%gt)
            block0():
              prim::BreakStmt()
              -> ()
            block1():
              -> ()
          %s.1 : int = prim::Load[name="s"]()
          %j.3 : int = prim::Load[name="j"]()
          %s.2 : int = aten::add(%s.1, %j.3)
          prim::Store[name="s"](%s.2)
          -> ()
        block1():
          -> (%true2)
      -> ()
    block1():
      -> (%true)
  %s.3 : int = prim::Load[name="s"]()
  prim::ReturnStmt(%s.3)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {0, 0, 0, 1, 4, 20, 56});
}

// def f(x: int) -> int:
//     s = 0
//     for i in range(x):
//         if i == 1:
//             continue
//         for j in range(i):
//             s = s + j
//     return s
TEST(ConvertToSSA, ContinueAroundAnInnerLoop) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %c0 : int = prim::Constant[value=0]()
  prim::Store[name="s"](%c0)
  %x.2 : int = prim::Load[name="x"]()
  %true : bool = prim::Constant[value=1]()
  prim::Loop(%x.2)
    block0(%i.1 : int):
      prim::Store[name="i"](%i.1)
      %i.2 : int = prim::Load[name="i"]()
      %c1 : int = prim::Constant[value=1]()
      %eq : bool = aten::eq(%i.2, %c1)
      prim::If(%eq)
        block0():
          prim::ContinueStmt()
          -> ()
        block1():
          -> ()
      %i.3 : int = prim::Load[name="i"]()
      %true2 : bool = prim::Constant[value=1]()
      prim::Loop(%i.3)
        block0(%j.1 : int):
          prim::Store[name="j"](%j.1)
          %s.1 : int = prim::Load[name="s"]()
          %j.2 : int = prim::Load[name="j"]()
          %s.2 : int = aten::add(%s.1, %j.2)
          prim::Store[name="s"](%s.2)
          -> ()
        block1():
          -> (%true2)
      -> ()
    block1():
      -> (%true)
  %s.3 : int = prim::Load[name="s"]()
  prim::ReturnStmt(%s.3)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {0, 0, 0, 0, 1, 10, 35});
}

// def f(x: int) -> int:
//     i = 0
//     s = 0
//     while i < x:
//         i = i + 1
//         if i == 2:
//             continue
//         if i == 5:
//             break
//         s = s + i
//     return s
TEST(ConvertToSSA, BreakAndContinueInOneLoop) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %c0 : int = prim::Constant[value=0]()
  prim::Store[name="s"](%c0)
  %c0b : int = prim::Constant[value=0]()
  prim::Store[name="i"](%c0b)
  %max : int = prim::Constant[value=9223372036854775807]()
  prim::Loop(%max)
    block0(%it : int):
      %i.1 : int = prim::Load[name="i"]()
      %c1 : int = prim::Constant[value=1]()
      %i.2 : int = aten::add(%i.1, %c1)
      prim::Store[name="i"](%i.2)
      %i.3 : int = prim::Load[name="i"]()
      %c2 : int = prim::Constant[value=2]()
      %eq : bool = aten::eq(%i.3, %c2)
      prim::If(%eq)
        block0():
          prim::ContinueStmt()
          -> ()
        block1():
          -> ()
      %i.4 : int = prim::Load[name="i"]()
      %c5 : int = prim::Constant[value=5]()
      %eq5 : bool = aten::eq(%i.4, %c5)
      prim::If(%eq5)
        block0():
          prim::BreakStmt()
          -> ()
        block1():
          -> ()
      %s.1 : int = prim::Load[name="s"]()
      %i.5 : int = prim::Load[name="i"]()
      %s.2 : int = aten::add(%s.1, %i.5)
      prim::Store[name="s"](%s.2)
      -> ()
    block1():
      %i.6 : int = prim::Load[name="i"]()
      %x.2 : int = prim::Load[name="x"]()
      %lt : bool = aten::lt(%i.6, %x.2)
      -> (%lt)
  %s.3 : int = prim::Load[name="s"]()
  prim::ReturnStmt(%s.3)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {0, 0, 1, 1, 4, 8, 8});
}

// def f(x: int) -> int:
//     if x > 2:
//         return x * 10
//     return x - 1
TEST(ExitTransform, ReturnInsideIfGuardsTheRest) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %c2 : int = prim::Constant[value=2]()
  %cond : bool = aten::gt(%x.2, %c2)
  prim::If(%cond)
    block0():
      %x.3 : int = prim::Load[name="x"]()
      %c10 : int = prim::Constant[value=10]()
      %m : int = aten::mul(%x.3, %c10)
      prim::ReturnStmt(%m)
      -> ()
    block1():
      -> ()
  %x.4 : int = prim::Load[name="x"]()
  %c1 : int = prim::Constant[value=1]()
  %d : int = aten::sub(%x.4, %c1)
  prim::ReturnStmt(%d)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {-2, -1, 0, 1, 30, 50, 70});
}

// def f(x: int) -> int:
//     if x > 2:
//         return 1
//     else:
//         return x
TEST(ExitTransform, ReturnInBothBranches) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %c2 : int = prim::Constant[value=2]()
  %cond : bool = aten::gt(%x.2, %c2)
  prim::If(%cond)
    block0():
      %c1 : int = prim::Constant[value=1]()
      prim::ReturnStmt(%c1)
      -> ()
    block1():
      %x.3 : int = prim::Load[name="x"]()
      prim::ReturnStmt(%x.3)
      -> ()
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {-1, 0, 1, 2, 1, 1, 1});
}

// def f(x: int) -> int:
//     y = x * 2
//     if x > 5:
//         return y
//     y = y + 3
//     z = y * x
//     return z
TEST(ExitTransform, EarlyReturnFollowedByCode) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %c2 : int = prim::Constant[value=2]()
  %y.1 : int = aten::mul(%x.2, %c2)
  prim::Store[name="y"](%y.1)
  %x.3 : int = prim::Load[name="x"]()
  %c5 : int = prim::Constant[value=5]()
  %cond : bool = aten::gt(%x.3, %c5)
  prim::If(%cond)
    block0():
      %y.2 : int = prim::Load[name="y"]()
      prim::ReturnStmt(%y.2)
      -> ()
    block1():
      -> ()
  %y.3 : int = prim::Load[name="y"]()
  %c3 : int = prim::Constant[value=3]()
  %y.4 : int = aten::add(%y.3, %c3)
  prim::Store[name="y"](%y.4)
  %y.5 : int = prim::Load[name="y"]()
  %x.4 : int = prim::Load[name="x"]()
  %z.1 : int = aten::mul(%y.5, %x.4)
  prim::Store[name="z"](%z.1)
  %z.2 : int = prim::Load[name="z"]()
  prim::ReturnStmt(%z.2)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {-1, 0, 5, 14, 27, 65, 14});
}

// def f(x: int) -> int:
//     if x > 5:
//         return 0
//     else:
//         y = x * 3
//     return y + 1
// The emitter stores an uninitialized y in the returning branch.
TEST(ExitTransform, VariableDefinedWhereTheOtherBranchReturns) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %c5 : int = prim::Constant[value=5]()
  %cond : bool = aten::gt(%x.2, %c5)
  prim::If(%cond)
    block0():
      %c0 : int = prim::Constant[value=0]()
      prim::ReturnStmt(%c0)
      %u : int = prim::Uninitialized()
      prim::Store[name="y"](%u)
      -> ()
    block1():
      %x.3 : int = prim::Load[name="x"]()
      %c3 : int = prim::Constant[value=3]()
      %y.1 : int = aten::mul(%x.3, %c3)
      prim::Store[name="y"](%y.1)
      %yf : int = prim::Load[name="y"]()
      -> ()
  %y.2 : int = prim::Load[name="y"]()
  %c1 : int = prim::Constant[value=1]()
  %r : int = aten::add(%y.2, %c1)
  prim::ReturnStmt(%r)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {-2, 1, 4, 7, 10, 16, 0});
}

// def f(x: int) -> int:
//     for i in range(x):
//         if i * i > x:
//             return i
//     return x + 100
TEST(ExitTransform, ReturnInsideLoop) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %true : bool = prim::Constant[value=1]()
  prim::Loop(%x.2)
    block0(%i.1 : int):
      prim::Store[name="i"](%i.1)
      %i.2 : int = prim::Load[name="i"]()
      %i.3 : int = prim::Load[name="i"]()
      %sq : int = aten::mul(%i.2, %i.3)
      %x.3 : int = prim::Load[name="x"]()
      %gt : bool = aten::gt(%sq, %x.3)
      prim::If(%gt)
        block0():
          %i.4 : int = prim::Load[name="i"]()
          prim::ReturnStmt(%i.4)
          -> ()
        block1():
          -> ()
      -> ()
    block1():
      -> (%true)
  %x.4 : int = prim::Load[name="x"]()
  %c100 : int = prim::Constant[value=100]()
  %r : int = aten::add(%x.4, %c100)
  prim::ReturnStmt(%r)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {99, 100, 101, 102, 2, 3, 3});
}

// def f(x: int) -> int:
//     i = 0
//     while i < x:
//         if i * i >= 10:
//             return i
//         i = i + 1
//     return x + 100
TEST(ExitTransform, ReturnInsideWhileLoop) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %c0 : int = prim::Constant[value=0]()
  prim::Store[name="i"](%c0)
  %max : int = prim::Constant[value=9223372036854775807]()
  prim::Loop(%max)
    block0(%it : int):
      %i.1 : int = prim::Load[name="i"]()
      %i.2 : int = prim::Load[name="i"]()
      %sq : int = aten::mul(%i.1, %i.2)
      %c10 : int = prim::Constant[value=10]()
      %ge : bool = aten::ge(%sq, %c10)
      prim::If(%ge)
        block0():
          %i.3 : int = prim::Load[name="i"]()
          prim::ReturnStmt(%i.3)
          -> ()
        block1():
          -> ()
      %i.4 : int = prim::Load[name="i"]()
      %c1 : int = prim::Constant[value=1]()
      %i.5 : int = aten::add(%i.4, %c1)
      prim::Store[name="i"](%i.5)
      -> ()
    block1():
      %i.6 : int = prim::Load[name="i"]()
      %x.2 : int = prim::Load[name="x"]()
      %lt : bool = aten::lt(%i.6, %x.2)
      -> (%lt)
  %x.3 : int = prim::Load[name="x"]()
  %c100 : int = prim::Constant[value=100]()
  %r : int = aten::add(%x.3, %c100)
  prim::ReturnStmt(%r)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {99, 100, 101, 102, 103, 4, 4});
}

// def f(x: int) -> int:
//     for i in range(x):
//         for j in range(x):
//             if i * j == 6:
//                 return i + j
//     return 0
TEST(ExitTransform, ReturnFromNestedLoops) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %true : bool = prim::Constant[value=1]()
  prim::Loop(%x.2)
    block0(%i.1 : int):
      prim::Store[name="i"](%i.1)
      %x.3 : int = prim::Load[name="x"]()
      %true2 : bool = prim::Constant[value=1]()
      prim::Loop(%x.3)
        block0(%j.1 : int):
          prim::Store[name="j"](%j.1)
          %i.2 : int = prim::Load[name="i"]()
          %j.2 : int = prim::Load[name="j"]()
          %m : int = aten::mul(%i.2, %j.2)
          %c6 : int = prim::Constant[value=6]()
          %eq : bool = aten::eq(%m, %c6)
          prim::If(%eq)
            block0():
              %i.3 : int = prim::Load[name="i"]()
              %j.3 : int = prim::Load[name="j"]()
              %s : int = aten::add(%i.3, %j.3)
              prim::ReturnStmt(%s)
              -> ()
            block1():
              -> ()
          -> ()
        block1():
          -> (%true2)
      -> ()
    block1():
      -> (%true)
  %c0 : int = prim::Constant[value=0]()
  prim::ReturnStmt(%c0)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {0, 0, 0, 0, 0, 5, 7});
}

// def f(x: int) -> int:
//     if x < 0:
//         raise ValueError("neg")
//     else:
//         y = x + 1
//     return y * 2
TEST(ExitTransform, RaisingBranchNeedsNoGuard) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %c0 : int = prim::Constant[value=0]()
  %cond : bool = aten::lt(%x.2, %c0)
  prim::If(%cond)
    block0():
      %msg : str = prim::Constant[value="ValueError: neg"]()
      %cls : str = prim::Constant[value="builtins.ValueError"]()
      prim::RaiseException(%msg, %cls)
      %u : int = prim::Uninitialized()
      prim::Store[name="y"](%u)
      -> ()
    block1():
      %x.3 : int = prim::Load[name="x"]()
      %c1 : int = prim::Constant[value=1]()
      %y.1 : int = aten::add(%x.3, %c1)
      prim::Store[name="y"](%y.1)
      %yf : int = prim::Load[name="y"]()
      -> ()
  %y.2 : int = prim::Load[name="y"]()
  %c2 : int = prim::Constant[value=2]()
  %r : int = aten::mul(%y.2, %c2)
  prim::ReturnStmt(%r)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {kRaises, 2, 4, 6, 8, 12, 16});
}

// def f(x: int) -> int:
//     if x < 0:
//         raise ValueError("neg")
//     else:
//         return x + 1
// One branch raises, the other returns: the if counts as returning.
TEST(ExitTransform, RaiseOrReturn) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  %c0 : int = prim::Constant[value=0]()
  %cond : bool = aten::lt(%x.2, %c0)
  prim::If(%cond)
    block0():
      %msg : str = prim::Constant[value="ValueError: neg"]()
      %cls : str = prim::Constant[value="builtins.ValueError"]()
      prim::RaiseException(%msg, %cls)
      -> ()
    block1():
      %x.3 : int = prim::Load[name="x"]()
      %c1 : int = prim::Constant[value=1]()
      %r : int = aten::add(%x.3, %c1)
      prim::ReturnStmt(%r)
      -> ()
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {kRaises, 1, 2, 3, 4, 6, 8});
}

// def f(x: int) -> int:
//     r: Optional[int] = None
//     for i in range(x):
//         if i > 1:
//             r = i
//     if r is None:
//         return x + 100
//     return r
TEST(ConvertToSSA, LoopCarriedOptionalIsRefinedAfter) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %none : NoneType = prim::Constant()
  prim::Store[name="r"](%none)
  %x.2 : int = prim::Load[name="x"]()
  %true : bool = prim::Constant[value=1]()
  prim::Loop(%x.2)
    block0(%i.1 : int):
      prim::Store[name="i"](%i.1)
      %i.2 : int = prim::Load[name="i"]()
      %c1 : int = prim::Constant[value=1]()
      %gt : bool = aten::gt(%i.2, %c1)
      prim::If(%gt)
        block0():
          %i.3 : int = prim::Load[name="i"]()
          prim::Store[name="r"](%i.3)
          %rt : int = prim::Load[name="r"]()
          -> ()
        block1():
          %rf : int? = prim::Load[name="r"]()
          -> ()
      -> ()
    block1():
      -> (%true)
  %r.1 : int? = prim::Load[name="r"]()
  %none2 : NoneType = prim::Constant()
  %is : bool = aten::__is__(%r.1, %none2)
  prim::If(%is)
    block0():
      %x.3 : int = prim::Load[name="x"]()
      %c100 : int = prim::Constant[value=100]()
      %a : int = aten::add(%x.3, %c100)
      prim::ReturnStmt(%a)
      -> ()
    block1():
      -> ()
  %r.2 : int? = prim::Load[name="r"]()
  %r.3 : int = prim::unchecked_cast(%r.2)
  prim::Store[name="r"](%r.3)
  %r.4 : int = prim::Load[name="r"]()
  prim::ReturnStmt(%r.4)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {99, 100, 101, 102, 2, 4, 6});
}

// def f(x: int) -> int:
//     return x
//     x = x + 1  (unreachable)
TEST(ExitTransform, CodeAfterReturnIsRemoved) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %x.2 : int = prim::Load[name="x"]()
  prim::ReturnStmt(%x.2)
  %x.3 : int = prim::Load[name="x"]()
  %c1 : int = prim::Constant[value=1]()
  %x.4 : int = aten::add(%x.3, %c1)
  prim::Store[name="x"](%x.4)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {-1, 0, 1, 2, 3, 5, 7});
}

// def f(x: int) -> int:
//     i = 0
//     while True:
//         i = i + 1
//         if i > x:
//             break
//     return i
// A while loop whose counter is unused stays as it is.
TEST(ConvertToSSA, WhileTrueWithBreakIsNotCanonicalized) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %c0 : int = prim::Constant[value=0]()
  prim::Store[name="i"](%c0)
  %max : int = prim::Constant[value=9223372036854775807]()
  prim::Loop(%max)
    block0(%it : int):
      %i.1 : int = prim::Load[name="i"]()
      %c1 : int = prim::Constant[value=1]()
      %i.2 : int = aten::add(%i.1, %c1)
      prim::Store[name="i"](%i.2)
      %i.3 : int = prim::Load[name="i"]()
      %x.2 : int = prim::Load[name="x"]()
      %gt : bool = aten::gt(%i.3, %x.2)
      prim::If(%gt)
        block0():
          prim::BreakStmt()
          -> ()
        block1():
          -> ()
      -> ()
    block1():
      %t : bool = prim::Constant[value=1]()
      -> (%t)
  %i.4 : int = prim::Load[name="i"]()
  prim::ReturnStmt(%i.4)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {1, 1, 2, 3, 4, 6, 8});
}

// def f(x: int) -> int:
//     i = 5
//     l = [i * 2 for i in range(x)]
//     return len(l) * 100 + i
// The comprehension's `i` does not leak out of its prim::ComprehensionScope.
TEST(ConvertToSSA, ComprehensionScopeKeepsItsVariables) {
  // The converted graph: tests/lit/passes/convert_to_ssa_cases.ir.
  auto g = toSSA(R"IR(graph(%x.1 : int):
  prim::Store[name="x"](%x.1)
  %c5 : int = prim::Constant[value=5]()
  prim::Store[name="i"](%c5)
  %l.1 : int[] = prim::ListConstruct()
  prim::ComprehensionScope()
    block0():
      %x.2 : int = prim::Load[name="x"]()
      %true : bool = prim::Constant[value=1]()
      prim::Loop(%x.2)
        block0(%i.1 : int):
          prim::Store[name="i"](%i.1)
          %i.2 : int = prim::Load[name="i"]()
          %c2 : int = prim::Constant[value=2]()
          %m : int = aten::mul(%i.2, %c2)
          %a : int[] = aten::append(%l.1, %m)
          -> ()
        block1():
          -> (%true)
      -> ()
  prim::Store[name="l"](%l.1)
  %l.2 : int[] = prim::Load[name="l"]()
  %n : int = aten::len(%l.2)
  %c100 : int = prim::Constant[value=100]()
  %h : int = aten::mul(%n, %c100)
  %i.3 : int = prim::Load[name="i"]()
  %r : int = aten::add(%h, %i.3)
  prim::ReturnStmt(%r)
  %ret : int = prim::Uninitialized()
  return (%ret))IR");
  expectResults(*g, {5, 5, 105, 205, 305, 505, 705});
}

}  // namespace
}  // namespace kiln
