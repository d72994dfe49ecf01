// The tracer (kiln/frontend/tracer.h) and kiln::trace (kiln/api/trace.h):
// what a trace records, constants, in-place ops, tuples at the boundaries,
// calls of TorchScript functions, thread locality, errors.
#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "kiln/api/kiln.h"
#include "kiln/api/trace.h"
#include "kiln/core/dispatch_hook.h"
#include "kiln/frontend/tracer.h"
#include "kiln/ir/graph.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"

using namespace kiln;

namespace {

// Runs aten::<name>.<overload> eagerly, as the Python bindings do.
IValue call(const char* name, const char* overload, Stack args) {
  OperatorPtr op = findOperator(Symbol::fromQualString(name), overload);
  EXPECT_TRUE(op) << name << "." << overload;
  runOperator(*op, args);
  return args.back();
}

Tensor tracedAdd(const Tensor& a, const Tensor& b) {
  return call("aten::add", "Tensor", {a, b, int64_t{1}}).toTensor();
}
Tensor mulScalar(const Tensor& a, int64_t b) { return call("aten::mul", "Scalar", {a, b}).toTensor(); }

std::vector<std::string> kinds(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes()) {
    if (n->kind() != prim::Constant) out.push_back(n->kind().toQualString());
  }
  return out;
}

Tensor filled(std::vector<int64_t> sizes, double value) { return full(sizes, Scalar(value), ScalarType::Float); }

bool allEqual(const Tensor& a, const Tensor& b) {
  if (a.numel() != b.numel()) return false;
  Tensor ca = contiguous(a), cb = contiguous(b);
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (ca.data<float>()[i] != cb.data<float>()[i]) return false;
  }
  return true;
}

TEST(TracerTest, RecordsOperatorsWithConstantsAndCompleteInputTypes) {
  auto traced = trace("f",
                      [](const Stack& in) {
                        Tensor z = tracedAdd(in[0].toTensor(), in[1].toTensor());
                        for (int i = 0; i < 2; ++i) z = mulScalar(z, 2);  // a C++ loop: unrolled
                        return IValue(z);
                      },
                      {IValue(filled({2, 3}, 1)), IValue(filled({2, 3}, 2))}, {"x", "y"});
  const Graph& g = *traced.function->graph();
  EXPECT_EQ(kinds(g), (std::vector<std::string>{"aten::add", "aten::mul", "aten::mul"}));
  std::string text = g.toString();
  EXPECT_NE(text.find("graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),"), std::string::npos)
      << text;
  EXPECT_NE(text.find("aten::add(%x, %y, %"), std::string::npos) << text;
  EXPECT_NE(text.find("prim::Constant[value=2]()"), std::string::npos) << text;
  EXPECT_TRUE(allEqual(traced.output.toTensor(), filled({2, 3}, 12)));
  // The trace runs on other shapes (its schema says Tensor).
  EXPECT_EQ(traced.function->getSchema().arguments()[0].type->str(), "Tensor");
  IValue y = (*traced.function)({IValue(filled({4}, 1)), IValue(filled({4}, 0.5))});
  EXPECT_TRUE(allEqual(y.toTensor(), filled({4}, 6)));
  EXPECT_FALSE(tracer::isTracing());
}

TEST(TracerTest, TensorsTheTraceHasNotSeenAreConstants) {
  Tensor outside = filled({3}, 5);
  auto traced = trace("f", [&](const Stack& in) { return IValue(tracedAdd(in[0].toTensor(), outside)); },
                      {IValue(filled({3}, 1))}, {"x"});
  const Graph& g = *traced.function->graph();
  EXPECT_EQ(kinds(g), (std::vector<std::string>{"aten::add"}));
  EXPECT_NE(g.toString().find("prim::Constant[value= 5  5  5"), std::string::npos) << g;
  IValue y = (*traced.function)({IValue(filled({3}, 2))});
  EXPECT_TRUE(allEqual(y.toTensor(), filled({3}, 7)));
}

TEST(TracerTest, InPlaceOpsMoveTheValueMap) {
  auto traced = trace("f",
                      [](const Stack& in) {
                        Tensor x = in[0].toTensor();
                        call("aten::add_", "Tensor", {x, filled({2}, 1), int64_t{1}});  // x += 1
                        return IValue(mulScalar(x, 3));
                      },
                      {IValue(filled({2}, 1))}, {"x"});
  const Graph& g = *traced.function->graph();
  EXPECT_EQ(kinds(g), (std::vector<std::string>{"aten::add_", "aten::mul"}));
  const Node* add_node = nullptr;
  const Node* mul_node = nullptr;
  for (const Node* n : g.nodes()) {
    if (n->kind() == Symbol::fromQualString("aten::add_")) add_node = n;
    if (n->kind() == Symbol::fromQualString("aten::mul")) mul_node = n;
  }
  ASSERT_TRUE(add_node && mul_node);
  // The mul reads the add_'s result, not the graph input.
  EXPECT_EQ(mul_node->input(0), add_node->output());
  Tensor input = filled({2}, 2);
  IValue y = (*traced.function)({IValue(input)});
  EXPECT_TRUE(allEqual(y.toTensor(), filled({2}, 9)));
  EXPECT_TRUE(allEqual(input, filled({2}, 3)));  // the caller's tensor was written, as eagerly
}

TEST(TracerTest, TuplesAreFlattenedAtTheBoundaries) {
  auto traced = trace("f",
                      [](const Stack& in) {
                        const auto& pair = in[0].toTupleRef().elements;
                        Tensor s = tracedAdd(pair[0].toTensor(), pair[1].toTensor());
                        return IValue::tuple({IValue(s), IValue::tuple({IValue(pair[0].toTensor()), IValue(s)})});
                      },
                      {IValue::tuple({IValue(filled({2}, 1)), IValue(filled({2}, 2))})}, {"xs"});
  const Graph& g = *traced.function->graph();
  EXPECT_EQ(kinds(g), (std::vector<std::string>{"prim::TupleUnpack", "aten::add", "prim::TupleConstruct",
                                                "prim::TupleConstruct"}));
  EXPECT_NE(g.toString().find("graph(%xs : (Float(2, strides=[1], requires_grad=0, device=cpu), Float(2, "),
            std::string::npos)
      << g;
  IValue out = (*traced.function)({IValue::tuple({IValue(filled({3}, 1)), IValue(filled({3}, 4))})});
  ASSERT_TRUE(out.isTuple());
  EXPECT_TRUE(allEqual(out.toTupleRef().elements[0].toTensor(), filled({3}, 5)));
  EXPECT_TRUE(allEqual(out.toTupleRef().elements[1].toTupleRef().elements[0].toTensor(), filled({3}, 1)));
}

TEST(TracerTest, ScriptedCallsStayCallsWithTheirControlFlow) {
  auto cu = compile(
      "def pick(x: Tensor) -> Tensor:\n"
      "    if bool(x.sum() > 0):\n"
      "        return x * 2\n"
      "    return x - 1\n");
  GraphFunction& pick = cu->getFunction("pick");
  auto traced =
      trace("f", [&](const Stack& in) { return IValue(tracedAdd(pick({in[0]}).toTensor(), in[0].toTensor())); },
            {IValue(filled({2}, 1))}, {"x"});
  const Graph& g = *traced.function->graph();
  EXPECT_EQ(kinds(g), (std::vector<std::string>{"prim::CallFunction", "aten::add"}));
  EXPECT_NE(g.toString().find("Function = prim::Constant[name=\"pick\"]()"), std::string::npos) << g;
  // The other branch, which the example never took, still runs.
  IValue y = (*traced.function)({IValue(filled({2}, -1))});
  EXPECT_TRUE(allEqual(y.toTensor(), filled({2}, -3)));
}

TEST(TracerTest, TracingIsPerThread) {
  std::string other_thread_saw;
  auto traced = trace("f",
                      [&](const Stack& in) {
                        std::thread other([&] {
                          other_thread_saw = tracer::isTracing() ? "tracing" : "not tracing";
                          tracedAdd(filled({2}, 1), filled({2}, 1));  // not recorded
                        });
                        other.join();
                        return IValue(mulScalar(in[0].toTensor(), 2));
                      },
                      {IValue(filled({2}, 1))}, {"x"});
  EXPECT_EQ(other_thread_saw, "not tracing");
  EXPECT_EQ(kinds(*traced.function->graph()), (std::vector<std::string>{"aten::mul"}));
}

TEST(TracerTest, NestedTracesRestoreTheOuterOne) {
  std::shared_ptr<GraphFunction> inner;
  auto outer = trace("outer",
                     [&](const Stack& in) {
                       Tensor a = mulScalar(in[0].toTensor(), 2);
                       inner = trace("inner", [](const Stack& i) { return IValue(mulScalar(i[0].toTensor(), 5)); },
                                     {IValue(filled({2}, 1))}, {"y"})
                                   .function;
                       return IValue(tracedAdd(a, in[0].toTensor()));
                     },
                     {IValue(filled({2}, 1))}, {"x"});
  EXPECT_EQ(kinds(*outer.function->graph()), (std::vector<std::string>{"aten::mul", "aten::add"}));
  EXPECT_EQ(kinds(*inner->graph()), (std::vector<std::string>{"aten::mul"}));
}

TEST(TracerTest, ErrorsEndTheTrace) {
  // A non-tensor input.
  try {
    trace("f", [](const Stack& in) { return in[0]; }, {IValue(int64_t{3})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Type 'Tuple[int]' cannot be traced"), std::string::npos) << e.what();
  }
  // A non-tensor output.
  try {
    trace("f", [](const Stack&) { return IValue(int64_t{3}); }, {IValue(filled({2}, 1))});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Only tensors, lists, tuples of tensors"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(tracer::isTracing());
  // The traced code raising: the error propagates and the trace ends.
  EXPECT_THROW(trace("f",
                     [](const Stack& in) {
                       call("aten::view", "", {in[0], IValue(std::vector<int64_t>{7})});
                       return in[0];
                     },
                     {IValue(filled({2}, 1))}),
               Error);
  EXPECT_FALSE(tracer::isTracing());
  EXPECT_EQ(dispatchHook(), nullptr);
}

TEST(TracerTest, DeadCodeIsRemoved) {
  auto traced = trace("f",
                      [](const Stack& in) {
                        mulScalar(in[0].toTensor(), 7);  // unused
                        return IValue(tracedAdd(in[0].toTensor(), in[0].toTensor()));
                      },
                      {IValue(filled({2}, 1))}, {"x"});
  EXPECT_EQ(kinds(*traced.function->graph()), (std::vector<std::string>{"aten::add"}));
}

}  // namespace

namespace {

TEST(TracerTest, ContextNamesValuesAndGivesSourceRanges) {
  auto source = std::make_shared<const Source>("    y = x * 2", "model.py", 3);
  tracer::TraceContext context;
  context.value_name = [](const Tensor& t) { return t.dim() == 1 ? "y" : ""; };
  context.source_range = [&] { return SourceRange(source, 0, source->text().size()); };
  auto traced = trace(
      "f",
      [](const Stack& in) {
        Tensor y = mulScalar(in[0].toTensor(), 2);
        return IValue(tracedAdd(y, y));
      },
      {IValue(filled({2}, 1))}, {"x"}, true, context);
  std::string text = traced.function->graph()->toString();
  // Named when first used; outputs are not named (as in 1.13).
  EXPECT_NE(text.find("%y : Float(2, strides=[1], requires_grad=0, device=cpu) = aten::mul(%x, %1) # model.py:3:0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("prim::Constant[value=2]() # model.py:3:0"), std::string::npos) << text;
  EXPECT_NE(text.find("%4 : Float(2, strides=[1], requires_grad=0, device=cpu) = aten::add(%y, %y, %3)"),
            std::string::npos)
      << text;
}

TEST(TracerTest, AnOutputTheTraceDoesNotComputeRaises) {
  Tensor outside = filled({2}, 1);
  try {
    trace("f",
          [&](const Stack& in) {
            return IValue::tuple({IValue(mulScalar(in[0].toTensor(), 2)), IValue(outside)});
          },
          {IValue(filled({2}, 1))});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("output 1 ("), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(") of traced region did not have observable data dependence with trace "
                                         "inputs; this probably indicates your program cannot be understood by the "
                                         "tracer."),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(tracer::isTracing());
}

}  // namespace

namespace {

TEST(TracerTest, SuspendedTracingRecordsNothing) {
  bool tracing_inside = true, tracing_after = false;
  auto traced = trace("f",
                      [&](const Stack& in) {
                        Tensor y = mulScalar(in[0].toTensor(), 2);
                        {
                          tracer::TracingSuspended untraced;
                          tracing_inside = tracer::isTracing();
                          tracedAdd(y, y);  // not recorded
                        }
                        tracing_after = tracer::isTracing();
                        return IValue(mulScalar(y, 3));
                      },
                      {IValue(filled({2}, 1))}, {"x"});
  EXPECT_FALSE(tracing_inside);
  EXPECT_TRUE(tracing_after);
  EXPECT_EQ(kinds(*traced.function->graph()), (std::vector<std::string>{"aten::mul", "aten::mul"}));
}

}  // namespace

// --- tracing modules (kiln::traceMethod, kiln::traceMethodCall) --------------------------------

namespace {

size_t countKind(const Graph& g, const char* kind) {
  size_t n = 0;
  for (const Node* node : g.nodes()) n += node->kind().toQualString() == std::string(kind);
  return n;
}

// outer: parameter `scale`, submodule `inner` (parameter `w`); inner's forward is x + w.
struct Modules {
  Module outer{"Outer"};
  Module inner{"Inner"};
  Modules() {
    inner.register_parameter("w", filled({2}, 3));
    outer.register_parameter("scale", filled({2}, 2));
    outer.register_module("inner", inner);
  }
  // The eager code of inner.forward, called as a submodule call.
  IValue callInner(const Tensor& x) {
    return traceMethodCall(inner.toIValue(), "forward",
                           [&] { return IValue(tracedAdd(x, inner.attr("w").toTensor())); });
  }
};

}  // namespace

TEST(TracerModuleTest, ParametersAreGetAttrChainsAndSubmoduleCallsAreMethods) {
  Modules m;
  auto traced =
      traceMethod(m.outer.toIValue(), "forward",
                  [&](const Stack& in) {
                    Tensor x = call("aten::mul", "Tensor", {in[0], m.outer.attr("scale")}).toTensor();
                    Tensor y = m.callInner(x).toTensor();
                    Tensor z = m.callInner(y).toTensor();                       // called twice: a second method
                    return IValue(tracedAdd(z, m.inner.attr("w").toTensor()));  // inner.w read by outer: a chain of two
                  },
                  {IValue(filled({2}, 1))}, {"x"});
  const Graph& g = *traced.method->graph();
  std::ostringstream text;
  text << g;
  EXPECT_EQ(g.inputs()[0]->type()->str(), m.outer.type()->name()) << text.str();
  EXPECT_EQ(g.inputs()[0]->debugName(), "self.1");
  // scale; inner for the calls; inner.w: inner, w.
  EXPECT_EQ(countKind(g, "prim::GetAttr"), 4u) << text.str();
  EXPECT_EQ(countKind(g, "prim::CallMethod"), 2u) << text.str();
  EXPECT_NE(text.str().find("prim::CallMethod[name=\"forward1\"]"), std::string::npos) << text.str();
  ASSERT_TRUE(m.inner.find_method("forward"));
  ASSERT_TRUE(m.inner.find_method("forward1"));
  const Graph& inner = *m.inner.get_method("forward").graph();
  EXPECT_EQ(inner.inputs().size(), 2u);  // self, x (lifted: what the call reads)
  EXPECT_EQ(countKind(inner, "prim::GetAttr"), 1u);
  // Runs as the eager code did: ((1 * 2) + 3 + 3) + 3.
  IValue out = m.outer.forward({IValue(filled({2}, 1))});
  EXPECT_TRUE(allEqual(out.toTensor(), filled({2}, 11)));
  EXPECT_TRUE(allEqual(traced.output.toTensor(), filled({2}, 11)));
}

TEST(TracerModuleTest, MethodCallsOutsideAModuleTraceJustRun) {
  Modules m;
  IValue out = m.callInner(filled({2}, 1));
  EXPECT_TRUE(allEqual(out.toTensor(), filled({2}, 4)));
  EXPECT_FALSE(m.inner.find_method("forward"));
}

TEST(TracerModuleTest, ErrorsInASubmoduleCallEndTheTrace) {
  Modules m;
  EXPECT_THROW(traceMethod(m.outer.toIValue(), "forward",
                           [&](const Stack& in) {
                             return traceMethodCall(m.inner.toIValue(), "forward",
                                                    [&]() -> IValue { KILN_ERROR("boom"); });
                           },
                           {IValue(filled({2}, 1))}),
               Error);
  EXPECT_FALSE(tracer::isTracing());
  EXPECT_FALSE(m.inner.find_method("forward"));
  EXPECT_FALSE(m.outer.find_method("forward"));
  // A module's method name that is taken raises.
  m.outer.define("def forward(self, x: Tensor) -> Tensor:\n    return x\n");
  EXPECT_THROW(
      traceMethod(m.outer.toIValue(), "forward", [](const Stack& in) { return in[0]; }, {IValue(filled({2}, 1))}),
      Error);
}

TEST(TracerModuleTest, AValueOfAFinishedCallUsedLaterBecomesAnOutput) {
  Modules m;
  m.inner.register_buffer("count", filled({2}, 0));
  auto traced = traceMethod(
      m.outer.toIValue(), "forward",
      [&](const Stack& in) {
        Tensor x = in[0].toTensor();
        Tensor y = traceMethodCall(m.inner.toIValue(), "forward", [&] {
                     Tensor count = m.inner.attr("count").toTensor();
                     call("aten::add_", "Tensor", {count, filled({2}, 1), int64_t{1}});  // in place
                     return IValue(tracedAdd(x, m.inner.attr("w").toTensor()));
                   }).toTensor();
        return IValue(tracedAdd(y, m.inner.attr("count").toTensor()));  // the changed buffer, after the call
      },
      {IValue(filled({2}, 1))});
  const Graph& g = *traced.method->graph();
  std::ostringstream text;
  text << g << *m.inner.get_method("forward").graph();
  EXPECT_EQ(countKind(g, "prim::TupleUnpack"), 1u) << text.str();
  EXPECT_EQ(countKind(*m.inner.get_method("forward").graph(), "prim::TupleConstruct"), 1u) << text.str();
  // count was 1 after the trace: the run makes it 2; (1 + 3) + 2.
  IValue out = m.outer.forward({IValue(filled({2}, 1))});
  EXPECT_TRUE(allEqual(out.toTensor(), filled({2}, 6))) << text.str();
}

TEST(TracerModuleTest, ACallWhoseValuesAreNotUsedAfterItReturnsNone) {
  Modules m;
  auto traced = traceMethod(m.outer.toIValue(), "forward",
                            [&](const Stack& in) {
                              // Returns its input unchanged (nn.Identity): nothing of the call is used after it.
                              IValue same = traceMethodCall(m.inner.toIValue(), "forward", [&] { return in[0]; });
                              return IValue(tracedAdd(same.toTensor(), same.toTensor()));
                            },
                            {IValue(filled({2}, 1))});
  const Graph& g = *traced.method->graph();
  std::ostringstream text;
  text << g;
  EXPECT_EQ(countKind(g, "prim::CallMethod"), 1u) << text.str();
  EXPECT_NE(text.str().find("NoneType = prim::CallMethod[name=\"forward\"]"), std::string::npos) << text.str();
  EXPECT_EQ(m.inner.get_method("forward").graph()->outputs()[0]->type()->kind(), TypeKind::None);
  EXPECT_TRUE(allEqual(m.outer.forward({IValue(filled({2}, 3))}).toTensor(), filled({2}, 6)));
}
