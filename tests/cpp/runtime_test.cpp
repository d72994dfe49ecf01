// The interpreter, graph executor and functions: moves and drops, loops,
// control flow, calls, exceptions with tracebacks, fork and wait.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <sstream>
#include <thread>

#include "kiln/core/op_registration.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/ops/prim_ops.h"
#include "kiln/runtime/code.h"
#include "kiln/runtime/function.h"
#include "kiln/runtime/interpreter.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"

using namespace kiln;

namespace {

std::atomic<bool> storage_released{false};
std::atomic<int> sleeper_thread_differs{0};

// Scalar helpers of our own, so these tests do not depend on the scalar
// operator library.
KILN_REGISTER_OPS(op("rtest::add(int a, int b) -> int", [](int64_t a, int64_t b) { return a + b; }),
                  op("rtest::lt(int a, int b) -> bool", [](int64_t a, int64_t b) { return a < b; }),
                  op("rtest::eq(int a, int b) -> bool", [](int64_t a, int64_t b) { return a == b; }),
                  op("rtest::use_count(Tensor t) -> int",
                     [](const Tensor& t) { return static_cast<int64_t>(t.useCount()); }),
                  op("rtest::released() -> bool", [] { return storage_released.load(); }),
                  op("rtest::slow(int ms, int v) -> int",
                     [](int64_t ms, int64_t v) {
                       std::this_thread::sleep_for(std::chrono::milliseconds(ms));
                       return v;
                     }),
                  op("rtest::fail(int v) -> int", [](int64_t v) -> int64_t {
                    KILN_CHECK(v != 13, "unlucky value ", v);
                    return v;
                  }), );

Tensor trackedTensor() {
  static float data[4] = {1, 2, 3, 4};
  storage_released = false;
  auto storage = makeIntrusive<Storage>(
      data, sizeof(data), [](void*) { storage_released = true; }, nullptr);
  return Tensor(makeIntrusive<TensorImpl>(std::move(storage), ScalarType::Float, IntArrayRef{4}, IntArrayRef{1}, 0));
}

Stack run(const std::shared_ptr<Graph>& graph, Stack inputs) {
  InterpreterState(std::make_shared<Code>(graph, "test")).run(inputs);
  return inputs;
}

std::string listing(const std::shared_ptr<Graph>& graph) {
  std::ostringstream out;
  out << Code(graph, "test");
  return out.str();
}

TEST(Interpreter, MovesOnLastUseAndCopiesBefore) {
  auto g = parseIR(R"IR(
graph(%x : Tensor):
  %a : Tensor = aten::neg(%x)
  %n1 : int = rtest::use_count(%a)
  %n2 : int = rtest::use_count(%a)
  %r : (int, int) = prim::TupleConstruct(%n1, %n2)
  return (%r))IR");
  Stack out = run(g, {IValue(ones({2}))});
  const auto& counts = out[0].toTupleRef().elements;
  // The first use copies (register + argument); the last one moves.
  EXPECT_EQ(counts[0].toInt(), 2);
  EXPECT_EQ(counts[1].toInt(), 1);
}

TEST(Interpreter, TensorFreedRightAfterLastUse) {
  auto g = parseIR(R"IR(
graph(%x : Tensor):
  %a : Tensor = aten::neg(%x)
  %freed : bool = rtest::released()
  %r : (Tensor, bool) = prim::TupleConstruct(%a, %freed)
  return (%r))IR");
  Stack inputs;
  inputs.emplace_back(trackedTensor());
  Stack out = run(g, std::move(inputs));
  EXPECT_TRUE(out[0].toTupleRef().elements[1].toBool());
}

TEST(Interpreter, ValueUsedInOneBranchIsDroppedInTheOther) {
  auto g = parseIR(R"IR(
graph(%x : Tensor, %c : bool):
  %r : bool = prim::If(%c)
    block0():
      %n : int = rtest::use_count(%x)
      %f : bool = rtest::released()
      -> (%f)
    block1():
      %f2 : bool = rtest::released()
      -> (%f2)
  return (%r))IR");
  std::string code = listing(g);
  // `x` (register 0) dies by a move in the then-branch and by a drop at the
  // start of the else-branch.
  EXPECT_NE(code.find("MOVE 0\n"), std::string::npos) << code;
  EXPECT_NE(code.find("DROPR 0\n"), std::string::npos) << code;
  for (bool branch : {true, false}) {
    Stack inputs;
    inputs.emplace_back(trackedTensor());
    inputs.emplace_back(branch);
    EXPECT_TRUE(run(g, std::move(inputs))[0].toBool()) << "branch " << branch;
  }
}

TEST(Interpreter, ValueUsedInLoopLivesUntilTheLoopEnds) {
  auto g = parseIR(R"IR(
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %s : int = prim::Loop(%n, %true, %zero)
    block0(%i : int, %acc : int):
      %c : int = rtest::use_count(%x)
      %next : int = rtest::add(%acc, %c)
      -> (%true, %next)
  return (%s))IR");
  Stack inputs;
  inputs.emplace_back(ones({2}));
  inputs.emplace_back(int64_t{3});
  Stack out = run(g, std::move(inputs));
  // Each iteration sees x in its register and in the op's argument.
  EXPECT_EQ(out[0].toInt(), 6);
  EXPECT_NE(listing(g).find("DROPR 0"), std::string::npos);
}

TEST(Interpreter, ForLoopCountsAndCarriesValues) {
  // Fibonacci: (a, b) = (b, a + b), n times; carried values swap places.
  auto g = parseIR(R"IR(
graph(%n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %a : int, %b : int = prim::Loop(%n, %true, %zero, %one)
    block0(%i : int, %x : int, %y : int):
      %z : int = rtest::add(%x, %y)
      -> (%true, %y, %z)
  return (%a))IR");
  EXPECT_EQ(run(g, {IValue(int64_t{10})})[0].toInt(), 55);
  EXPECT_EQ(run(g, {IValue(int64_t{0})})[0].toInt(), 0);
  EXPECT_EQ(run(g, {IValue(int64_t{-5})})[0].toInt(), 0);
  std::string code = listing(g);
  EXPECT_NE(code.find("LOOP 1 exit 17 max\n"), std::string::npos) << code;  // a `for` without a condition test
}

TEST(Interpreter, WhileLoopTestsItsCondition) {
  auto g = parseIR(R"IR(
graph(%limit : int):
  %max : int = prim::Constant[value=9223372036854775807]()
  %zero : int = prim::Constant[value=0]()
  %three : int = prim::Constant[value=3]()
  %go : bool = rtest::lt(%zero, %limit)
  %r : int = prim::Loop(%max, %go, %zero)
    block0(%i : int, %v : int):
      %w : int = rtest::add(%v, %three)
      %more : bool = rtest::lt(%w, %limit)
      -> (%more, %w)
  return (%r))IR");
  EXPECT_EQ(run(g, {IValue(int64_t{10})})[0].toInt(), 12);
  EXPECT_EQ(run(g, {IValue(int64_t{0})})[0].toInt(), 0);
  std::string code = listing(g);
  EXPECT_NE(code.find(" cond\n"), std::string::npos) << code;  // no trip count kept
}

TEST(Interpreter, NestedControlFlow) {
  // sum over i < n of (i if i is even-ish by a test else 100)
  auto g = parseIR(R"IR(
graph(%n : int, %k : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %hundred : int = prim::Constant[value=100]()
  %s : int = prim::Loop(%n, %true, %zero)
    block0(%i : int, %acc : int):
      %small : bool = rtest::lt(%i, %k)
      %add : int = prim::If(%small)
        block0():
          %inner : int = prim::Loop(%i, %true, %zero)
            block0(%j : int, %t : int):
              %t2 : int = rtest::add(%t, %j)
              -> (%true, %t2)
          -> (%inner)
        block1():
          -> (%hundred)
      %next : int = rtest::add(%acc, %add)
      -> (%true, %next)
  return (%s))IR");
  // i = 0..4 with k = 3: triangular(0) + triangular(1) + triangular(2) + 100 + 100
  EXPECT_EQ(run(g, {IValue(int64_t{5}), IValue(int64_t{3})})[0].toInt(), 0 + 0 + 1 + 100 + 100);
}

TEST(Interpreter, RaiseExceptionCarriesClassAndMessage) {
  auto g = parseIR(R"IR(
graph(%x : int):
  %msg : str = prim::Constant[value="bad value"]()
  %cls : str = prim::Constant[value="builtins.ValueError"]()
  %zero : int = prim::Constant[value=0]()
  %neg : bool = rtest::lt(%x, %zero)
  %r : int = prim::If(%neg)
    block0():
       = prim::RaiseException(%msg, %cls)
      %u : int = prim::Uninitialized()
      -> (%u)
    block1():
      -> (%x)
  return (%r))IR");
  EXPECT_EQ(run(g, {IValue(int64_t{4})})[0].toInt(), 4);
  try {
    run(g, {IValue(int64_t{-1})});
    FAIL() << "expected an exception";
  } catch (const ScriptException& e) {
    EXPECT_EQ(e.pythonClass(), "builtins.ValueError");
    EXPECT_EQ(std::string(e.what()), "builtins.ValueError: bad value");
  }
}

TEST(Interpreter, ErrorsShowTheTorchScriptSourceLine) {
  auto g = parseIR(R"IR(
graph(%x : int):
  %r : int = rtest::fail(%x)
  return (%r))IR");
  auto source = std::make_shared<Source>("def f(x):\n    return fail(x)\n", "model.py");
  for (Node* n : g->nodes()) n->setSourceRange(SourceRange(source, 21, 28));
  try {
    run(g, {IValue(int64_t{13})});
    FAIL() << "expected an exception";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("Traceback of TorchScript"), std::string::npos) << what;
    EXPECT_NE(what.find("File \"model.py\", line 2, in test"), std::string::npos) << what;
    EXPECT_NE(what.find("    return fail(x)\n           ~~~~~~~ <--- HERE\n"), std::string::npos) << what;
    EXPECT_NE(what.find("RuntimeError: unlucky value 13"), std::string::npos) << what;
  }
}

TEST(Interpreter, ErrorsWithoutSourceKeepTheirType) {
  auto g = parseIR(R"IR(
graph(%t : (int, int)):
  %five : int = prim::Constant[value=5]()
  %r : int = prim::TupleIndex(%t, %five)
  return (%r))IR");
  EXPECT_THROW(run(g, {IValue::tuple({IValue(int64_t{1}), IValue(int64_t{2})})}), IndexError);
}

TEST(Interpreter, ListAndTupleConstructionAndUnpacking) {
  auto g = parseIR(R"IR(
graph(%a : int, %b : int):
  %l : int[] = prim::ListConstruct(%a, %b, %a)
  %x : int, %y : int, %z : int = prim::ListUnpack(%l)
  %t : (int, int) = prim::TupleConstruct(%z, %y)
  %p : int, %q : int = prim::TupleUnpack(%t)
  %s : int = rtest::add(%p, %q)
  %d : Dict(str, int) = prim::DictConstruct(%x, %s)
  return (%s, %l))IR");
  // DictConstruct with an int key for a str dict is a type error at parse or run time;
  // the graph above only needs to run the other nodes.
  g->nodes().back()->destroy();
  Stack out = run(g, {IValue(int64_t{1}), IValue(int64_t{2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].toInt(), 3);
  EXPECT_EQ(out[1].toIntVector(), (std::vector<int64_t>{1, 2, 1}));
  EXPECT_TRUE(out[1].isIntList());
}

TEST(Interpreter, ConstantChunkAndTupleSliceAndDicts) {
  auto g = parseIR(R"IR(
graph(%x : Tensor, %t : (int, int, int, int)):
  %a : Tensor, %b : Tensor, %c : Tensor = prim::ConstantChunk[chunks=3, dim=0](%x)
  %s : (int, int) = prim::TupleSlice[beg=1, end=3](%t)
  %k : str = prim::Constant[value="k"]()
  %d : Dict(str, Tensor) = prim::DictConstruct(%k, %c)
  %r : (Tensor, Tensor, (int, int), Dict(str, Tensor)) = prim::TupleConstruct(%a, %b, %s, %d)
  return (%r))IR");
  Stack inputs;
  inputs.emplace_back(arange(Scalar(int64_t{0}), Scalar(int64_t{6}), Scalar(int64_t{1}), ScalarType::Long));
  inputs.emplace_back(IValue::tuple({IValue(int64_t{1}), IValue(int64_t{2}), IValue(int64_t{3}), IValue(int64_t{4})}));
  IValue result = run(g, std::move(inputs))[0];
  const auto& out = result.toTupleRef().elements;
  // Rows [0, 1], [2, 3], [4, 5].
  EXPECT_EQ(out[0].toTensor().numel(), 2);
  EXPECT_EQ(sum(out[1].toTensor()).item().toLong(), 5);
  const auto& slice = out[2].toTupleRef().elements;
  ASSERT_EQ(slice.size(), 2u);
  EXPECT_EQ(slice[0].toInt(), 2);
  EXPECT_EQ(slice[1].toInt(), 3);
  const DictObj& d = out[3].toDictRef();
  EXPECT_EQ(d.size(), 1u);
  EXPECT_EQ(sum(d.at(IValue("k")).toTensor()).item().toLong(), 9);
}

TEST(Interpreter, ConstantChunkWithFewerPiecesThanOutputs) {
  // chunk(4) of 3 rows gives 3 pieces: fine while the fourth is unused.
  auto unused = parseIR(R"IR(
graph(%x : Tensor):
  %a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor = prim::ConstantChunk[chunks=4, dim=0](%x)
  return (%c))IR");
  Stack inputs;
  inputs.emplace_back(ones({3}));
  EXPECT_EQ(run(unused, std::move(inputs))[0].toTensor().numel(), 1);
  auto used = parseIR(R"IR(
graph(%x : Tensor):
  %a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor = prim::ConstantChunk[chunks=4, dim=0](%x)
  return (%d))IR");
  Stack again;
  again.emplace_back(ones({3}));
  EXPECT_THROW(run(used, std::move(again)), Error);
}

TEST(Interpreter, ListUnpackOfWrongLengthRaises) {
  auto g = parseIR(R"IR(
graph(%l : int[]):
  %x : int, %y : int = prim::ListUnpack(%l)
  return (%x))IR");
  try {
    run(g, {IValue(std::vector<int64_t>{1, 2, 3})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "Expected 2 elements in a list but found 3");
  }
}

std::shared_ptr<Graph> forkGraph(int64_t sleep_ms) {
  // Subgraph: slow(ms, v + 1). Main: fork it, do other work, wait.
  auto body = parseIR(R"IR(
graph(%ms : int, %v : int):
  %one : int = prim::Constant[value=1]()
  %w : int = rtest::add(%v, %one)
  %r : int = rtest::slow(%ms, %w)
  return (%r))IR");
  auto g = std::make_shared<Graph>();
  Value* v = g->addInput("v")->setType(IntType::get());
  Value* ms = g->insertConstant(IValue(sleep_ms));
  Node* fork = g->insertNode(g->create(prim::fork, {ms, v}));
  fork->g_(attr::Subgraph, body);
  fork->output()->setType(std::make_shared<FutureType>(IntType::get()));
  Node* wait = g->insertNode(g->create(aten::wait, {fork->output()}));
  wait->output()->setType(IntType::get());
  Node* add = g->insertNode(g->create(Symbol::fromQualString("rtest::add"), {wait->output(), v}));
  add->output()->setType(IntType::get());
  g->registerOutput(add->output());
  return g;
}

TEST(Interpreter, ForkAndWait) {
  auto g = forkGraph(0);
  EXPECT_EQ(run(g, {IValue(int64_t{20})})[0].toInt(), 41);
}

TEST(Interpreter, WaitSuspendsAndResumesOnAnotherThread) {
  // The forked task sleeps far longer than runAsync needs even on a loaded machine, so a
  // future that is still pending shows runAsync came back at the wait instead of blocking.
  // (No wall-clock bound is asserted: a busy CI machine made one flaky.)
  auto g = forkGraph(500);
  Stack inputs{IValue(int64_t{1})};
  IntrusivePtr<FutureObj> result = InterpreterState(std::make_shared<Code>(g, "test")).runAsync(inputs);
  EXPECT_FALSE(result->completed());
  EXPECT_EQ(result->wait().toInt(), 3);
}

TEST(Interpreter, ManyForksCannotDeadlockThePool) {
  // More waiting tasks than pool threads: waits suspend instead of blocking.
  auto g = forkGraph(5);
  std::vector<IntrusivePtr<FutureObj>> results;
  for (int i = 0; i < 32; ++i) {
    Stack inputs{IValue(int64_t{i})};
    results.push_back(InterpreterState(std::make_shared<Code>(g, "test")).runAsync(inputs));
  }
  for (int i = 0; i < 32; ++i) EXPECT_EQ(results[i]->wait().toInt(), 2 * i + 1);
}

TEST(Interpreter, WaitReleasesTheFuture) {
  // The WAIT handler once held the future in a local across a computed goto,
  // which skips destructors: the future leaked.
  auto g = parseIR(R"IR(
graph(%f : Future[int]):
  %v : int = aten::wait(%f)
  return (%v))IR");
  auto future = makeIntrusive<FutureObj>(IntType::get());
  future->markCompleted(IValue(int64_t{5}));
  Stack inputs;
  inputs.emplace_back(future);
  EXPECT_EQ(run(g, std::move(inputs))[0].toInt(), 5);
  EXPECT_EQ(future->useCount(), 1u);
}

TEST(Interpreter, ErrorInForkedTaskReachesTheWaiter) {
  auto body = parseIR(R"IR(
graph(%v : int):
  %r : int = rtest::fail(%v)
  return (%r))IR");
  auto g = std::make_shared<Graph>();
  Value* v = g->addInput("v")->setType(IntType::get());
  Node* fork = g->insertNode(g->create(prim::fork, {v}));
  fork->g_(attr::Subgraph, body);
  fork->output()->setType(std::make_shared<FutureType>(IntType::get()));
  Node* wait = g->insertNode(g->create(aten::wait, {fork->output()}));
  wait->output()->setType(IntType::get());
  g->registerOutput(wait->output());
  EXPECT_EQ(run(g, {IValue(int64_t{7})})[0].toInt(), 7);
  EXPECT_THROW(run(g, {IValue(int64_t{13})}), Error);
}

TEST(Function, CallsResolveInTheCompilationUnitWithoutCppRecursion) {
  CompilationUnit cu;
  // count(n) = 0 if n == 0 else count(n - 1) + 1, through prim::CallFunction.
  auto g = parseIR(R"IR(
graph(%n : int):
  %f : Function = prim::Constant[name="count"]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %minus : int = prim::Constant[value=-1]()
  %done : bool = rtest::eq(%n, %zero)
  %r : int = prim::If(%done)
    block0():
      -> (%zero)
    block1():
      %m : int = rtest::add(%n, %minus)
      %c : int = prim::CallFunction(%f, %m)
      %s : int = rtest::add(%c, %one)
      -> (%s)
  return (%r))IR");
  GraphFunction& count = cu.createFunction("count", g);
  EXPECT_EQ(count({IValue(int64_t{5})}).toInt(), 5);
  // Deep enough to overflow the C++ stack if each call recursed natively.
  EXPECT_EQ(count({IValue(int64_t{100000})}).toInt(), 100000);
}

TEST(Function, MethodsAttributesAndWithStatements) {
  // class Counter: count: int; bump(k) adds k; `with` adds 1 on enter, 10 on exit.
  auto counter = ClassType::create("__torch__.Counter");
  counter->addAttribute("count", IntType::get());
  CompilationUnit cu;
  auto method = [&](const std::string& name, const char* ir) {
    auto g = parseIR(ir);
    g->inputs()[0]->setType(counter);
    counter->addMethod(&cu.createFunction("__torch__.Counter." + name, g));
  };
  method("bump", R"IR(
graph(%self : Any, %k : int):
  %c : int = prim::GetAttr[name="count"](%self)
  %d : int = rtest::add(%c, %k)
   = prim::SetAttr[name="count"](%self, %d)
  return (%d))IR");
  method("__enter__", R"IR(
graph(%self : Any):
  %one : int = prim::Constant[value=1]()
  %c : int = prim::GetAttr[name="count"](%self)
  %d : int = rtest::add(%c, %one)
   = prim::SetAttr[name="count"](%self, %d)
  return (%d))IR");
  method("__exit__", R"IR(
graph(%self : Any, %a : Any, %b : Any, %c : Any):
  %ten : int = prim::Constant[value=10]()
  %n : NoneType = prim::Constant()
  %v : int = prim::GetAttr[name="count"](%self)
  %d : int = rtest::add(%v, %ten)
   = prim::SetAttr[name="count"](%self, %d)
  return (%n))IR");
  auto g = parseIR(R"IR(
graph(%self : Any, %k : int):
  %r : int = prim::CallMethod[name="bump"](%self, %k)
  %entered : int = prim::Enter(%self)
  %x : NoneType = prim::Exit(%self)
  %c : int = prim::GetAttr[name="count"](%self)
  %is_int : bool = prim::isinstance[types=[int]](%c)
  %is_str : bool = prim::isinstance[types=[str, float]](%c)
  %t : (int, int, int, bool, bool) = prim::TupleConstruct(%r, %entered, %c, %is_int, %is_str)
  return (%t))IR");
  g->inputs()[0]->setType(counter);
  GraphFunction& main = cu.createFunction("main", g);
  auto object = makeIntrusive<ObjectObj>(counter);
  object->setAttr("count", IValue(int64_t{5}));
  IValue result = main({IValue(object), IValue(int64_t{2})});
  const auto& out = result.toTupleRef().elements;
  EXPECT_EQ(out[0].toInt(), 7);   // bump
  EXPECT_EQ(out[1].toInt(), 8);   // __enter__
  EXPECT_EQ(out[2].toInt(), 18);  // after __exit__
  EXPECT_TRUE(out[3].toBool());
  EXPECT_FALSE(out[4].toBool());
  EXPECT_EQ(object->getAttr("count").toInt(), 18);  // the caller's object changed
}

TEST(Function, SchemaFromGraphAndArgumentChecks) {
  CompilationUnit cu;
  auto g = parseIR(R"IR(
graph(%x.1 : Tensor, %n.1 : int):
  %r : Tensor = aten::mul(%x.1, %n.1)
  return (%r))IR");
  GraphFunction& f = cu.createFunction("scale", g);
  EXPECT_EQ(f.getSchema().str(), "scale(Tensor x, int n) -> Tensor");
  EXPECT_EQ(f({IValue(ones({1})), IValue(int64_t{3})}).toTensor().item().toDouble(), 3.0);
  EXPECT_EQ(f({IValue(ones({1}))}, {{"n", IValue(int64_t{2})}}).toTensor().item().toDouble(), 2.0);
  try {
    f({IValue(int64_t{1}), IValue(int64_t{3})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Expected a value of type 'Tensor' for argument 'x' but instead found type "
                                         "'int'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(f({IValue(ones({2}))}), Error);
  EXPECT_THROW(f({IValue(ones({2})), IValue(int64_t{1}), IValue(int64_t{1})}), Error);
  EXPECT_THROW(f({IValue(ones({2}))}, {{"m", IValue(int64_t{2})}}), Error);
}

TEST(GraphExecutor, OnePlanPerArgumentSpec) {
  auto g = parseIR(R"IR(
graph(%x : Tensor):
  %r : Tensor = aten::neg(%x)
  return (%r))IR");
  GraphExecutor exec(g, "neg");
  auto runWith = [&](Tensor t) {
    Stack s{IValue(t)};
    exec.run(s);
    return s[0].toTensor();
  };
  setShapeSpecializationLimit(0);
  runWith(ones({2}));
  runWith(ones({3}));  // same dtype and rank: same plan
  EXPECT_EQ(exec.numPlans(), 1u);
  runWith(ones({2, 2}));
  runWith(ones({2}, ScalarType::Double));
  EXPECT_EQ(exec.numPlans(), 3u);
  Stack s{IValue(ones({2, 2}))};
  const ExecutionPlan& plan = exec.getPlanFor(s);
  std::ostringstream type;
  type << *plan.graph->inputs()[0]->type();
  EXPECT_EQ(type.str(), "Float(*, *, requires_grad=0, device=cpu)");
  // The function's own graph is untouched.
  EXPECT_EQ(g->inputs()[0]->type()->str(), "Tensor");
  setShapeSpecializationLimit(4);
}

TEST(GraphExecutor, FirstShapesGetCompletePlans) {
  auto g = parseIR(R"IR(
graph(%x : Tensor):
  %r : Tensor = aten::neg(%x)
  return (%r))IR");
  GraphExecutor exec(g, "neg");
  setShapeSpecializationLimit(2);
  auto typeFor = [&](Tensor t) {
    std::ostringstream type;
    type << *exec.getPlanFor({IValue(t)}).graph->inputs()[0]->type();
    return type.str();
  };
  EXPECT_EQ(typeFor(ones({2, 3})), "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)");
  EXPECT_EQ(typeFor(ones({2, 3})), "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)");
  EXPECT_EQ(exec.numPlans(), 1u);
  EXPECT_EQ(typeFor(t(ones({3, 2}))), "Float(2, 3, strides=[1, 2], requires_grad=0, device=cpu)");
  EXPECT_EQ(typeFor(ones({4, 4})), "Float(*, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeFor(ones({5, 4})), "Float(*, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(exec.numPlans(), 3u);
  // Shapes already specialized keep their plans.
  EXPECT_EQ(typeFor(ones({2, 3})), "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)");
  setShapeSpecializationLimit(4);
}

TEST(GraphExecutor, TensorsInsideTuplesAreSpecialized) {
  auto g = parseIR(R"IR(
graph(%t : (Tensor, int)):
  %x : Tensor, %n : int = prim::TupleUnpack(%t)
  return (%x))IR");
  GraphExecutor exec(g, "first");
  Stack a{IValue::tuple({IValue(ones({2})), IValue(int64_t{1})})};
  Stack b{IValue::tuple({IValue(ones({2, 3})), IValue(int64_t{1})})};
  exec.getPlanFor(a);
  const ExecutionPlan& plan = exec.getPlanFor(b);
  EXPECT_EQ(exec.numPlans(), 2u);
  std::ostringstream type;
  type << *plan.graph->inputs()[0]->type();
  EXPECT_EQ(type.str(), "(Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), int)");
}

TEST(GraphExecutor, OptionalsWithValuesBecomeTheirElementType) {
  auto g = parseIR(R"IR(
graph(%n : int?, %t : Tensor?):
  return (%n))IR");
  GraphExecutor exec(g, "first");
  auto typesFor = [&](IValue n, IValue t) {
    const ExecutionPlan& plan = exec.getPlanFor({std::move(n), std::move(t)});
    std::ostringstream types;
    types << *plan.graph->inputs()[0]->type() << " " << *plan.graph->inputs()[1]->type();
    return types.str();
  };
  EXPECT_EQ(typesFor(IValue(int64_t{3}), IValue(ones({2}))), "int Float(2, strides=[1], requires_grad=0, device=cpu)");
  // None keeps the Optional, as 1.13's ArgumentSpec does.
  EXPECT_EQ(typesFor(IValue(), IValue()), "int? Tensor?");
  EXPECT_EQ(exec.numPlans(), 2u);
}

TEST(GraphExecutor, NoneForAnOptionalBecomesAConstant) {
  auto g = parseIR(R"IR(
graph(%n : int?):
  %none : NoneType = prim::Constant()
  %r : bool = aten::__is__(%n, %none)
  return (%r))IR");
  GraphExecutor exec(g, "is_none");
  Stack none{IValue()};
  std::ostringstream text;
  text << *exec.getPlanFor(none).graph;
  EXPECT_EQ(text.str().find("aten::__is__"), std::string::npos) << text.str();
  exec.run(none);
  EXPECT_TRUE(none[0].toBool());
  Stack three{IValue(int64_t{3})};
  exec.run(three);
  EXPECT_FALSE(three[0].toBool());
}

TEST(GraphExecutor, RunsRegisteredPassesWhenOptimizing) {
  static std::atomic<int> runs{0};
  static bool registered = [] {
    registerGraphExecutorPass(PassStage::Optimization, "rtest-count", [](const std::shared_ptr<Graph>&) { ++runs; });
    return true;
  }();
  (void)registered;
  auto g = parseIR(R"IR(
graph(%x : Tensor):
  return (%x))IR");
  runs = 0;
  GraphExecutor(g, "a").getPlanFor({IValue(ones({1}))});
  EXPECT_EQ(runs, 1);
  setGraphExecutorOptimize(false);
  GraphExecutor(g, "b").getPlanFor({IValue(ones({1}))});
  setGraphExecutorOptimize(true);
  EXPECT_EQ(runs, 1);
}

TEST(GraphExecutor, SafeFromManyThreads) {
  auto g = parseIR(R"IR(
graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %y : Tensor):
      %z : Tensor = aten::add(%y, %one, %one)
      -> (%true, %z)
  return (%r))IR");
  GraphExecutor exec(g, "count");
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 50; ++k) {
        // Alternate dtypes and ranks so threads race on plan creation too.
        Tensor x = (k + t) % 2 ? zeros({2}) : zeros({1, 2}, ScalarType::Double);
        Stack s{IValue(x), IValue(int64_t{k})};
        exec.run(s);
        if (sum(s[0].toTensor()).item().toDouble() != 2.0 * k) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(exec.numPlans(), 2u);
}

TEST(Code, UseOutsideTheDefiningBlockIsAnError) {
  // IR text is not linted on the way in: a value of one branch used after
  // the `if` must be an error, not a crash.
  auto g = parseIR(R"IR(
graph(%x : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %inner : Tensor = aten::neg(%x)
      -> (%inner)
    block1():
      -> (%x)
  %bad : Tensor = aten::neg(%inner)
  return (%bad))IR");
  try {
    Code code(g, "bad");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("outside the block that defines it"), std::string::npos) << e.what();
  }
}

TEST(Code, BuildErrorsNameTheNode) {
  auto g = parseIR(R"IR(
graph(%x : Tensor):
  %r : Tensor = rtest::nonexistent(%x)
  return (%r))IR");
  try {
    Code code(g, "bad");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rtest::nonexistent"), std::string::npos) << e.what();
  }
}

}  // namespace

// Counts every operator new in the process while `counting` is set.
static std::atomic<bool> counting{false};
static std::atomic<size_t> allocations{0};

// The replacements pair malloc with free, which GCC cannot see through.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t size) {
  if (counting) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's buffer uses them): a new from
// one allocator and a delete from the other is what ASan calls a mismatch.
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  if (counting) ++allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace {

TEST(Interpreter, ScalarLoopsDoNotAllocatePerIteration) {
  auto g = parseIR(R"IR(
graph(%n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %s : int = prim::Loop(%n, %true, %zero)
    block0(%i : int, %acc : int):
      %sq : int = rtest::add(%i, %i)
      %small : bool = rtest::lt(%sq, %n)
      %next : int = prim::If(%small)
        block0():
          %a : int = rtest::add(%acc, %sq)
          -> (%a)
        block1():
          -> (%acc)
      -> (%true, %next)
  return (%s))IR");
  auto code = std::make_shared<Code>(g, "loop");
  auto allocationsFor = [&](int64_t n) {
    Stack s{IValue(n)};
    allocations = 0;
    counting = true;
    InterpreterState(code).run(s);
    counting = false;
    return allocations.load();
  };
  allocationsFor(10);  // warm up anything lazily created
  size_t few = allocationsFor(10);
  size_t many = allocationsFor(100000);
  EXPECT_EQ(few, many) << "allocations grow with the iteration count";
}

}  // namespace
