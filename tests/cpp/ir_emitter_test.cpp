// The IR emitter: what it emits for each construct (before the cleanup
// passes), and its errors (message, line and caret).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/frontend/ir_emitter.h"
#include "kiln/frontend/parser.h"
#include "kiln/ir/graph.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

// Stands in for a runtime function: the tests look at the graphs that
// defineFunctions hands over (converted to SSA, before the cleanup passes).
class RecordingFunction : public Function {
 public:
  RecordingFunction(std::string name, FunctionSchema schema) : name_(std::move(name)), schema_(std::move(schema)) {}
  const std::string& name() const override { return name_; }
  const FunctionSchema& getSchema() const override { return schema_; }
  void run(Stack&) override {}

 private:
  std::string name_;
  FunctionSchema schema_;
};

struct Compiled {
  std::map<std::string, std::shared_ptr<Graph>> graphs;
  std::map<std::string, std::string> schemas;
  std::vector<std::string> order;
};

Compiled compileSource(const std::string& source) {
  Compiled out;
  CompilationTarget target;
  target.find = [](const std::string&) -> std::shared_ptr<Function> { return nullptr; };
  target.define = [&](const std::string& name, std::shared_ptr<Graph> graph, FunctionSchema schema) {
    out.graphs[name] = graph;
    out.schemas[name] = schema.str();
    out.order.push_back(name);
    return std::make_shared<RecordingFunction>(name, std::move(schema));
  };
  defineFunctions(parseSource(source, "<string>"), nullptr, target);
  return out;
}

// Node kinds in program order, nested blocks included.
void collectKinds(const Block* b, std::vector<std::string>& out) {
  for (const Node* n : b->nodes()) {
    out.push_back(n->kind().toQualString());
    for (const Block* sub : n->blocks()) collectKinds(sub, out);
  }
}

std::vector<std::string> kinds(const Graph& g) {
  std::vector<std::string> out;
  collectKinds(g.block(), out);
  return out;
}

size_t count(const Graph& g, const std::string& kind) {
  auto k = kinds(g);
  return static_cast<size_t>(std::count(k.begin(), k.end(), kind));
}

// The error text of compiling `source`, or "" when it compiles.
std::string errorOf(const std::string& source) {
  try {
    compileSource(source);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The column of the first `~` under the source line in an error message.
size_t caretColumn(const std::string& message) {
  size_t here = message.find("<--- HERE");
  EXPECT_NE(here, std::string::npos) << message;
  size_t line_start = message.rfind('\n', here) + 1;
  return message.find('~', line_start) - line_start;
}

TEST(IREmitter, SchemaFromAnnotationsAndDefaults) {
  auto c = compileSource(
      "def f(x: int, y: float = 1.5, z: str = \"a\", w: List[int] = [1, 2], o: Optional[int] = None,"
      " t: Tuple[int, int] = (1, -2)):\n"
      "    return x, y\n"
      "def g(x):\n"
      "    return x\n");
  EXPECT_EQ(c.schemas["f"],
            "f(int x, float y=1.5, str z=\"a\", int[] w=[1, 2], int? o=None, (int, int) t=(1, -2)) -> ((int, float))");
  EXPECT_EQ(c.schemas["g"], "g(Tensor x) -> Tensor");
}

TEST(IREmitter, ReturnTypeIsTheUnionOfReturns) {
  auto c = compileSource(
      "def f(x: int):\n"
      "    if x > 0:\n"
      "        return None\n"
      "    return 1\n");
  EXPECT_EQ(c.schemas["f"], "f(int x) -> int?");
}

TEST(IREmitter, CalleesCompileFirstAndCallsAreCallFunction) {
  auto c = compileSource(
      "def f(x: int) -> int:\n"
      "    return g(x) + g(x, 2)\n"
      "def g(x: int, n: int = 1) -> int:\n"
      "    return x * n\n");
  ASSERT_EQ(c.order, (std::vector<std::string>{"g", "f"}));
  EXPECT_EQ(count(*c.graphs["f"], "prim::CallFunction"), 2u);
}

TEST(IREmitter, TupleLoopsAreUnrolled) {
  auto c = compileSource(
      "def f(t: Tuple[int, float, int]) -> float:\n"
      "    s = 0.0\n"
      "    for v in t:\n"
      "        s += v\n"
      "    return s\n");
  EXPECT_EQ(count(*c.graphs["f"], "prim::Loop"), 0u);
  EXPECT_EQ(count(*c.graphs["f"], "aten::add"), 3u);
}

TEST(IREmitter, StaticIsinstanceEmitsOneBranch) {
  auto c = compileSource(
      "def f(x: int) -> int:\n"
      "    if isinstance(x, int):\n"
      "        return x + 1\n"
      "    else:\n"
      "        return x - 1\n");
  EXPECT_EQ(count(*c.graphs["f"], "prim::If"), 0u);
  EXPECT_EQ(count(*c.graphs["f"], "aten::sub"), 0u);
}

TEST(IREmitter, IsNoneRefinesOptional) {
  auto c = compileSource(
      "def f(x: Optional[int]) -> int:\n"
      "    if x is None:\n"
      "        return 0\n"
      "    return x + 1\n");
  EXPECT_EQ(count(*c.graphs["f"], "prim::unchecked_cast"), 1u);
  EXPECT_EQ(count(*c.graphs["f"], "aten::__is__"), 1u);
}

TEST(IREmitter, AssertRefinesAfterwards) {
  auto c = compileSource(
      "def f(x: Optional[int]) -> int:\n"
      "    assert x is not None, \"x\"\n"
      "    return x + 1\n");
  EXPECT_EQ(count(*c.graphs["f"], "prim::RaiseException"), 1u);
  EXPECT_EQ(count(*c.graphs["f"], "prim::unchecked_cast"), 1u);
}

TEST(IREmitter, TensorIndexingDesugars) {
  auto c = compileSource(
      "def f(x: Tensor, i: Tensor):\n"
      "    a = x[0, 1:3, None, ...]\n"
      "    b = x[i]\n"
      "    x[0] = 1.0\n"
      "    x[i] = 2.0\n"
      "    return a, b\n");
  const Graph& g = *c.graphs["f"];
  EXPECT_EQ(count(g, "aten::select"), 2u);
  EXPECT_EQ(count(g, "aten::slice"), 1u);
  EXPECT_EQ(count(g, "aten::unsqueeze"), 1u);
  EXPECT_EQ(count(g, "aten::index"), 1u);
  EXPECT_EQ(count(g, "aten::copy_"), 1u);
  EXPECT_EQ(count(g, "aten::index_put_"), 1u);
}

TEST(IREmitter, AugmentedAssignmentIsInPlaceForTensorsAndLists) {
  auto c = compileSource(
      "def f(x: Tensor, l: List[int], n: int):\n"
      "    x += 1\n"
      "    l += [n]\n"
      "    n += 1\n"
      "    return x, l, n\n");
  EXPECT_EQ(count(*c.graphs["f"], "aten::add_"), 2u);
  EXPECT_EQ(count(*c.graphs["f"], "aten::add"), 1u);
}

TEST(IREmitter, EmptyListTakesTheTypeACallNeeds) {
  auto c = compileSource(
      "def f(x: Tensor):\n"
      "    return torch.zeros([]), x.view([2, 2])\n");
  EXPECT_EQ(count(*c.graphs["f"], "prim::EmptyListLiteral"), 0u);
}

TEST(IREmitter, VarargsBecomeAList) {
  auto c = compileSource(
      "def f(x: Tensor):\n"
      "    return x.view(2, 3)\n");
  EXPECT_EQ(count(*c.graphs["f"], "prim::ListConstruct"), 1u);
}

// The source of module classes' methods, handed over the first time the
// emitter meets a call (as kiln.nn hands over a Python class's methods).
class MethodSources : public Resolver {
 public:
  std::map<std::string, std::string> sources;  // "Class.method" -> its def
  std::vector<std::string> asked;
  SugaredValuePtr resolveValue(const std::string&, Graph&, const SourceRange&) override { return nullptr; }
  std::optional<MethodSource> resolveMethod(const ClassTypePtr& cls, const std::string& name) override {
    std::string key = cls->unqualifiedName() + "." + name;
    asked.push_back(key);
    auto it = sources.find(key);
    if (it == sources.end()) return std::nullopt;
    return MethodSource{parseSource(it->second, "<" + key + ">").at(0), nullptr};
  }
  std::string explainMissingAttribute(const ClassTypePtr&, const std::string& name) override {
    return name == "cache" ? "(it holds Python objects)" : "";
  }
};

struct ModuleMethods {
  ClassTypePtr net = ClassType::create("__torch__.Net", /*is_module=*/true);
  ClassTypePtr sub = ClassType::create("__torch__.Sub", /*is_module=*/true);
  std::vector<std::shared_ptr<Function>> functions;
  std::vector<std::string> compiled;
  CompilationTarget target;
  ModuleMethods() {
    net->addAttribute("sub", sub, SlotKind::Module);
    target.define_method = [this](const ClassTypePtr& cls, const std::string& name, std::shared_ptr<Graph>,
                                  FunctionSchema schema) -> Function* {
      functions.push_back(std::make_shared<RecordingFunction>(name, std::move(schema)));
      cls->addMethod(functions.back().get());
      compiled.push_back(cls->unqualifiedName() + "." + name);
      return functions.back().get();
    };
  }
};

TEST(IREmitter, MethodsCompileWhenFirstCalledFromSourceTheResolverGives) {
  ModuleMethods m;
  auto resolver = std::make_shared<MethodSources>();
  resolver->sources["Net.helper"] = "def helper(self, x: Tensor) -> Tensor:\n    return x * 2\n";
  resolver->sources["Sub.twice"] = "def twice(self, x: Tensor) -> Tensor:\n    return x + x\n";
  resolver->sources["Net.python_only"] = "def python_only(self):\n    return f'{self}'\n";
  std::vector<MethodSource> roots{{parseSource("def forward(self, x: Tensor) -> Tensor:\n"
                                               "    return self.helper(x) + self.sub.twice(x)\n",
                                               "<string>")
                                       .at(0),
                                   nullptr}};
  defineMethods(m.net, roots, {"forward"}, m.target, resolver);
  EXPECT_EQ(m.compiled, (std::vector<std::string>{"Net.helper", "Sub.twice", "Net.forward"}));
  EXPECT_EQ(m.net->findMethod("python_only"), nullptr);
  EXPECT_EQ(std::count(resolver->asked.begin(), resolver->asked.end(), "Net.python_only"), 0);
  // A root the resolver knows compiles from its source too.
  resolver->sources["Net.later"] = "def later(self) -> int:\n    return 1\n";
  defineMethods(m.net, {}, {"later"}, m.target, resolver);
  EXPECT_NE(m.net->findMethod("later"), nullptr);
}

TEST(IREmitterErrors, MissingAttributeIsExplainedByTheResolver) {
  ModuleMethods m;
  auto resolver = std::make_shared<MethodSources>();
  auto compile = [&](const std::string& body) {
    std::vector<MethodSource> roots{
        {parseSource("def forward(self):\n    return " + body + "\n", "<string>").at(0), nullptr}};
    try {
      defineMethods(m.net, roots, {"forward"}, m.target, resolver);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e = compile("self.cache");
  EXPECT_NE(e.find("Module 'Net' has no attribute 'cache' (it holds Python objects)"), std::string::npos) << e;
  e = compile("self.sub.nothing(1)");
  EXPECT_NE(e.find("Module 'Sub' has no attribute or method 'nothing'"), std::string::npos) << e;
}

TEST(IREmitterErrors, UndefinedName) {
  std::string e = errorOf("def f(x: int) -> int:\n    return y + x\n");
  EXPECT_NE(e.find("undefined value y"), std::string::npos) << e;
  EXPECT_NE(e.find("File \"<string>\", line 2"), std::string::npos) << e;
  EXPECT_EQ(caretColumn(e), 11u) << e;
}

TEST(IREmitterErrors, BadCallListsCandidates) {
  std::string e = errorOf("def f(x: Tensor):\n    return torch.add(x, \"a\")\n");
  EXPECT_NE(e.find("Arguments for call are not valid."), std::string::npos) << e;
  EXPECT_NE(e.find("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"), std::string::npos) << e;
  EXPECT_NE(e.find("Expected a value of type 'Tensor' for argument 'other' but instead found type 'str'."),
            std::string::npos)
      << e;
  EXPECT_EQ(caretColumn(e), 11u) << e;
}

TEST(IREmitterErrors, ReturnTypeMismatch) {
  std::string e = errorOf("def f(x: int) -> str:\n    return x\n");
  EXPECT_NE(e.find("Return value was annotated as having type str but is actually of type int"), std::string::npos)
      << e;
}

TEST(IREmitterErrors, MissingReturn) {
  std::string e = errorOf("def f(x: int) -> int:\n    if x > 0:\n        return 1\n");
  EXPECT_NE(e.find("does not return along all paths"), std::string::npos) << e;
}

TEST(IREmitterErrors, VariableRetyped) {
  std::string e = errorOf(
      "def f(x: int):\n"
      "    y = 1\n"
      "    if x > 0:\n"
      "        y = \"a\"\n"
      "    return y\n");
  EXPECT_NE(e.find("Variable 'y' previously had type int but is now being assigned to a value of type str"),
            std::string::npos)
      << e;
}

TEST(IREmitterErrors, DefinedInOneBranchOnly) {
  std::string e = errorOf(
      "def f(x: int):\n"
      "    if x > 0:\n"
      "        y = 1\n"
      "    return y\n");
  EXPECT_NE(e.find("y is not defined in the false branch"), std::string::npos) << e;
}

TEST(IREmitterErrors, BreakOutsideLoop) {
  std::string e = errorOf("def f(x: int):\n    break\n");
  EXPECT_NE(e.find("SyntaxError: 'break' outside loop"), std::string::npos) << e;
}

TEST(IREmitterErrors, BreakInUnrolledLoop) {
  std::string e = errorOf("def f(t: Tuple[int, int]):\n    for v in t:\n        break\n");
  EXPECT_NE(e.find("unrolled loops"), std::string::npos) << e;
}

TEST(IREmitterErrors, Recursion) {
  std::string e = errorOf("def f(x: int) -> int:\n    return f(x)\n");
  EXPECT_NE(e.find("Recursive calls are not supported"), std::string::npos) << e;
}

TEST(IREmitterErrors, AnnotatedAssignmentMismatch) {
  std::string e = errorOf("def f(x: int):\n    y: str = x\n    return y\n");
  EXPECT_NE(e.find("Variable 'y' is annotated with type str but is being assigned to a value of type int"),
            std::string::npos)
      << e;
}

TEST(IREmitterErrors, UnknownTypeAnnotation) {
  std::string e = errorOf("def f(x: Foo):\n    return x\n");
  EXPECT_NE(e.find("Unknown type name 'Foo'"), std::string::npos) << e;
  EXPECT_EQ(caretColumn(e), 9u) << e;
}

TEST(IREmitterErrors, TupleUnpackCounts) {
  EXPECT_NE(errorOf("def f(t: Tuple[int, int]):\n    a, b, c = t\n    return a\n").find("need 3 values to unpack"),
            std::string::npos);
  EXPECT_NE(errorOf("def f(t: Tuple[int, int]):\n    a, = t\n    return a\n").find("too many values to unpack"),
            std::string::npos);
}

TEST(IREmitterErrors, NonDefAtTopLevel) { EXPECT_NE(errorOf("x = 1\n").find("expected def"), std::string::npos); }

}  // namespace
}  // namespace kiln
