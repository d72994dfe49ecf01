// Inlining: functions compiled from source and their graphs inlined (the
// graphs after the pass are in tests/lit/passes/inline_cases.py, some
// compared with what PyTorch 1.13 prints for the same program after
// torch._C._jit_pass_inline, then constant pooling and dead code
// elimination, which put the constants 1.13's preoptimized callees pool in
// one place); source ranges of the inlined nodes; method calls through a
// class type; calls that must stay; and the same results before and after.
#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include <sstream>

#include "kiln/api/kiln.h"
#include "kiln/core/function_schema.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/passes/constant_pooling.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/inliner.h"
#include "kiln/runtime/function.h"
#include "kiln/tensor/factory.h"

#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::countNodes;
using kiln::testing::runCopy;
using kiln::testing::shown;

namespace {

// A copy of `fn`'s graph in `source`, inlined.
std::shared_ptr<Graph> inlined(const CompilationUnit& unit, const char* fn) {
  auto g = unit.getFunction(fn).graph()->copy();
  inlineCalls(g);
  g->lint();
  return g;
}

}  // namespace

TEST(Inliner, InlinesCallsOfCalleesAndInNestedBlocksWithDefaultsAndTuples) {
  // The graph after the pass: tests/lit/passes/inline_cases.py.
  const char* source = R"PY(
def g(x: int, y: int = 2):
    z = x + y
    if z > 3:
        z = z * 2
    return z, x

def h(a: int):
    b, c = g(a)
    return b + c

def f(x: int):
    y = h(x)
    for i in range(3):
        if x > 1:
            y = y + g(i, 5)[0]
    return y + h(y)
)PY";
  auto unit = compile(source);
  auto g = inlined(*unit, "f");
  // Source ranges come with the copied nodes.
  for (const Node* n : g->nodes()) {
    if (n->kind() == aten::gt) {
      EXPECT_EQ(n->sourceRange().text(), "z > 3");
    }
  }
  for (int64_t x : {-2, 0, 1, 2, 5}) {
    EXPECT_EQ(shown(runCopy(g, {IValue(x)})), shown(unit->getFunction("f")({IValue(x)}))) << x;
  }
}

TEST(Inliner, KeywordArgumentsAndNoneResults) {
  // The graph after the pass: tests/lit/passes/inline_cases.py.
  const char* source = R"PY(
def g(x: int, y: int = 4, z: float = 1.5):
    return x * y, z

def p(x: int):
    assert x < 100

def f(a: int):
    b, c = g(a)
    d, e = g(a, z=2.0)
    p(b)
    return b + d, c + e
)PY";
  auto unit = compile(source);
  auto g = inlined(*unit, "f");
  for (int64_t a : {0, 3}) {
    EXPECT_EQ(shown(runCopy(g, {IValue(a)})), shown(unit->getFunction("f")({IValue(a)})));
  }
  EXPECT_THROW(runCopy(g, {IValue(int64_t{30})}), Error);
}

TEST(Inliner, InlinesMethodCallsThroughTheClassType) {
  // class Counter: count: int; bump(k) = add(k) twice; add(k) adds k.
  auto counter = ClassType::create("__torch__.Counter");
  counter->addAttribute("count", IntType::get());
  CompilationUnit cu;
  auto method = [&](const std::string& name, const char* ir) {
    auto g = parseIR(ir);
    g->inputs()[0]->setType(counter);
    counter->addMethod(&cu.createFunction("__torch__.Counter." + name, g));
  };
  method("add", R"IR(
graph(%self : Any, %k : int):
  %c : int = prim::GetAttr[name="count"](%self)
  %d : int = aten::add(%c, %k)
   = prim::SetAttr[name="count"](%self, %d)
  return (%d))IR");
  method("bump", R"IR(
graph(%self : Any, %k : int):
  %a : int = prim::CallMethod[name="add"](%self, %k)
  %b : int = prim::CallMethod[name="add"](%self, %k)
  return (%b))IR");
  auto g = parseIR(R"IR(
graph(%self : Any, %k : int):
  %r : int = prim::CallMethod[name="bump"](%self, %k)
  %s : int = prim::CallMethod[name="bump"](%self, %r)
  %c : int = prim::GetAttr[name="count"](%self)
  %t : (int, int, int) = prim::TupleConstruct(%r, %s, %c)
  return (%t))IR");
  g->inputs()[0]->setType(counter);
  auto after = g->copy();
  inlineCalls(after);
  after->lint();
  EXPECT_EQ(countNodes(after->block(), "prim::CallMethod"), 0u) << *after;
  EXPECT_EQ(countNodes(after->block(), "prim::SetAttr"), 4u);
  auto runOn = [&](const std::shared_ptr<Graph>& graph) {
    auto object = makeIntrusive<ObjectObj>(counter);
    object->setAttr("count", IValue(int64_t{5}));
    IValue result = runCopy(graph, {IValue(object), IValue(int64_t{2})});
    return shown(result) + " count=" + std::to_string(object->getAttr("count").toInt());
  };
  EXPECT_EQ(runOn(after), "(9, 27, 27) count=27");
  EXPECT_EQ(runOn(after), runOn(g));
}

TEST(Inliner, LeavesCallsOfFunctionsWithoutGraphsAndMissingMethods) {
  // A callee made of native code has no graph to inline.
  struct NativeFunction : Function {
    const std::string& name() const override { return name_; }
    const FunctionSchema& getSchema() const override { return schema_; }
    void run(Stack& stack) override { stack.back() = IValue(stack.back().toInt() + 1); }
    std::string name_ = "native";
    FunctionSchema schema_ = parseSchema("test::native(int x) -> int");
  };
  auto native = std::make_shared<NativeFunction>();
  auto g = parseIR(R"IR(
graph(%x : int, %o : __torch__.Empty):
  %f : Function = prim::Constant[name="native"]()
  %named : Function = prim::Constant[name="elsewhere"]()
  %y : int = prim::CallFunction(%f, %x)
  %z : int = prim::CallFunction(%named, %y)
  %w : int = prim::CallMethod[name="missing"](%o, %z)
  return (%w))IR");
  g->nodes().front()->output()->setType(FunctionType::create("native", native));
  std::string before = g->toString(false);
  inlineCalls(g);
  g->lint();
  EXPECT_EQ(g->toString(false), before);
}

TEST(Inliner, RecursiveCallsStayAfterOneLevel) {
  // count(n) = 0 if n == 0 else count(n - 1) + 1: inlining stops where the
  // callee calls back into a function being inlined.
  // count's graph, and the plans its executor caches, hold count itself
  // (through the Function type of %f): a cycle of shared pointers that
  // TorchScript's ban on recursion keeps out of real programs. What this
  // test allocates is not leak-checked.
#if defined(__SANITIZE_ADDRESS__)
  __lsan::ScopedDisabler not_leak_checked;
#endif
  CompilationUnit cu;
  auto g = parseIR(R"IR(
graph(%n : int):
  %f : Function = prim::Constant[name="count"]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %done : bool = aten::eq(%n, %zero)
  %r : int = prim::If(%done)
    block0():
      -> (%zero)
    block1():
      %m : int = aten::sub(%n, %one)
      %c : int = prim::CallFunction(%f, %m)
      %s : int = aten::add(%c, %one)
      -> (%s)
  return (%r))IR");
  cu.createFunction("count", g);
  g->nodes().front()->output()->setType(FunctionType::create("count", cu.findFunctionShared("count")));
  auto after = g->copy();
  inlineCalls(after);
  after->lint();
  EXPECT_EQ(countNodes(after->block(), "prim::CallFunction"), 1u) << *after;
  EXPECT_EQ(countNodes(after->block(), "prim::If"), 2u);
  for (int64_t n : {0, 1, 4}) EXPECT_EQ(runCopy(after, {IValue(n)}).toInt(), n);
}

TEST(Inliner, LeavesCallsWhoseArgumentsDoNotFitTheCallee) {
  auto unit = compile("def g(x: int, y: int):\n    return x + y\n");
  auto g = parseIR(R"IR(
graph(%x : int):
  %f : Function = prim::Constant[name="g"]()
  %y : int = prim::CallFunction(%f, %x)
  return (%y))IR");
  g->nodes().front()->output()->setType(FunctionType::create("g", unit->findFunctionShared("g")));
  inlineCalls(g);
  g->lint();
  EXPECT_EQ(countNodes(g->block(), "prim::CallFunction"), 1u);
}
