// Script classes and modules: classes compiled from source (construction,
// attributes defined in __init__, methods calling methods, objects passed to
// and returned from functions), the C++ Module API (parameters, buffers,
// submodules, attributes, methods defined from source, train/eval), and the
// errors for misuse.
#include <gtest/gtest.h>

#include "kiln/api/kiln.h"
#include "kiln/ir/graph.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/reduce.h"

#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::countNodes;
using kiln::testing::errorOf;

namespace {

double sumOf(const IValue& v) { return sum(v.toTensor()).item().toDouble(); }

}  // namespace

TEST(ScriptClass, ConstructsAndCallsMethods) {
  auto unit = compile(R"PY(
class Counter:
    def __init__(self, start: int):
        self.count = start
        self.history: List[int] = []

    def bump(self, k: int) -> int:
        self.count += k
        self.history.append(self.count)
        return self.total()

    def total(self) -> int:
        return self.count * 10

def f(n: int) -> Tuple[int, int, List[int]]:
    c = Counter(n)
    a = c.bump(2)
    c.count = c.count + 1
    return a, c.total(), c.history
)PY");
  IValue out = unit->getFunction("f")({IValue(int64_t{5})});
  const auto& elems = out.toTupleRef().elements;
  EXPECT_EQ(elems[0].toInt(), 70);
  EXPECT_EQ(elems[1].toInt(), 80);
  ASSERT_EQ(elems[2].toListRef().elements.size(), 1u);
  EXPECT_EQ(elems[2].toListRef().elements[0].toInt(), 7);

  auto g = unit->getFunction("f").graph();
  EXPECT_EQ(countNodes(g->block(), "prim::CreateObject"), 1u) << *g;
  EXPECT_EQ(countNodes(g->block(), "prim::CallMethod"), 3u) << *g;
  EXPECT_EQ(countNodes(g->block(), "prim::SetAttr"), 1u) << *g;
  ClassTypePtr cls = unit->findClass("__torch__.Counter");
  ASSERT_TRUE(cls);
  EXPECT_EQ(cls->numAttributes(), 2u);
  EXPECT_EQ(cls->attributeType(1)->annotationStr(), "List[int]");
  EXPECT_TRUE(cls->findMethod("bump"));
}

TEST(ScriptClass, ObjectsAsArgumentsAndResults) {
  auto unit = compile(R"PY(
class Pair:
    def __init__(self, a: Tensor, b: Optional[Tensor]):
        self.a = a
        self.b = b

    def sum(self) -> Tensor:
        b = self.b
        if b is None:
            return self.a
        return self.a + b

    def swap(self) -> Pair:
        b = self.b
        assert b is not None
        return Pair(b, self.a)

def make(x: Tensor) -> Pair:
    return Pair(x, x * 2)

def use(p: Pair) -> Tensor:
    return p.swap().sum() + Pair(p.a, None).sum()
)PY");
  IValue p = unit->getFunction("make")({IValue(ones({3}))});
  ASSERT_TRUE(p.isObject());
  EXPECT_EQ(p.toObjectRef().type->name(), "__torch__.Pair");
  EXPECT_DOUBLE_EQ(sumOf(unit->getFunction("use")({p})), 3 * 3 + 3);
}

TEST(ScriptClass, ErrorsNameTheProblem) {
  EXPECT_NE(errorOf([] {
              compile(R"PY(
class A:
    def __init__(self):
        self.x = 1
    def f(self):
        self.y = 2
)PY");
            }).find("Tried to set nonexistent attribute: y"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              compile(R"PY(
class A:
    def __init__(self):
        self.x = 1
    def f(self) -> int:
        return self.z
)PY");
            }).find("has no attribute or method 'z'"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              compile(R"PY(
class A:
    def __init__(self):
        self.x = 1
    def f(self):
        self.x = "s"
)PY");
            }).find("Expected int but got str"),
            std::string::npos);
  std::string recursive = errorOf([] {
    compile(R"PY(
class A:
    def __init__(self):
        self.x = 1
    def f(self) -> int:
        return self.g()
    def g(self) -> int:
        return self.f()
)PY");
  });
  EXPECT_NE(recursive.find("called recursively"), std::string::npos) << recursive;
}

TEST(Module, ParametersBuffersSubmodulesAndForward) {
  Module sub("Sub");
  sub.register_parameter("w", full({2}, Scalar(3.0), ScalarType::Float));
  sub.define("def forward(self, x: Tensor) -> Tensor:\n    return x * self.w\n");

  Module m("Net");
  m.register_parameter("bias", ones({2}));
  m.register_buffer("steps", zeros({1}));
  m.register_module("sub", sub);
  m.register_attribute("scale", IntType::get(), IValue(int64_t{2}));
  m.define(R"PY(
def forward(self, x: Tensor) -> Tensor:
    self.steps.add_(1)
    return self.helper(self.sub(x)) + self.bias

def helper(self, y: Tensor) -> Tensor:
    if self.training:
        return y * self.scale
    return y
)PY");
  IValue y = m.forward({IValue(ones({2}))});
  EXPECT_DOUBLE_EQ(sumOf(y), 2 * (3 * 2 + 1));
  EXPECT_DOUBLE_EQ(sumOf(m.attr("steps")), 1);

  m.eval();
  EXPECT_FALSE(m.is_training());
  EXPECT_FALSE(sub.is_training());
  EXPECT_DOUBLE_EQ(sumOf(m.forward({IValue(ones({2}))})), 2 * (3 + 1));
  m.train();
  EXPECT_TRUE(sub.attr("training").toBool());

  auto params = m.named_parameters();
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[0].name, "bias");
  EXPECT_EQ(params[1].name, "sub.w");
  EXPECT_EQ(m.named_parameters(/*recurse=*/false).size(), 1u);
  EXPECT_EQ(m.parameters().size(), 2u);
  ASSERT_EQ(m.named_buffers().size(), 1u);
  EXPECT_EQ(m.named_buffers()[0].name, "steps");
  ASSERT_EQ(m.named_children().size(), 1u);
  EXPECT_EQ(m.named_children()[0].first, "sub");
  auto modules = m.named_modules();
  ASSERT_EQ(modules.size(), 2u);
  EXPECT_EQ(modules[0].first, "");
  EXPECT_EQ(modules[1].first, "sub");

  // The forward graph reads attributes and calls the submodule as TorchScript does.
  auto g = m.get_method("forward").graph();
  EXPECT_EQ(countNodes(g->block(), "prim::CallMethod"), 2u) << *g;
  EXPECT_EQ(countNodes(g->block(), "prim::GetAttr"), 3u) << *g;
  EXPECT_TRUE(m.find_method("helper"));
  EXPECT_FALSE(m.find_method("missing"));
  EXPECT_EQ(m.run_method("helper", {IValue(ones({2}))}).toTensor().sizes()[0], 2);
}

TEST(Module, SetattrChecksTypes) {
  Module m("Holder");
  m.register_attribute("n", IntType::get(), IValue(int64_t{1}));
  m.register_attribute("maybe", OptionalType::create(TensorType::get()), IValue());
  m.setattr("n", IValue(int64_t{4}));
  EXPECT_EQ(m.attr("n").toInt(), 4);
  m.setattr("maybe", IValue(ones({1})));
  EXPECT_TRUE(m.attr("maybe").isTensor());
  std::string wrong = errorOf([&] { m.setattr("n", IValue(std::string("x"))); });
  EXPECT_NE(wrong.find("attribute 'n'"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("str"), std::string::npos) << wrong;
  std::string missing = errorOf([&] { m.attr("nope"); });
  EXPECT_NE(missing.find("has no attribute 'nope'"), std::string::npos) << missing;
  EXPECT_EQ(m.attr("nope", IValue(int64_t{7})).toInt(), 7);
  std::string bad_method = errorOf([&] { m.define("def forward(self, x: Tensor) -> Tensor:\n    return self.q\n"); });
  EXPECT_NE(bad_method.find("has no attribute or method 'q'"), std::string::npos) << bad_method;
}

TEST(Module, ModuleListIsUnrolled) {
  auto make_layer = [](double w) {
    Module layer("Layer");
    layer.register_parameter("w", full({1}, Scalar(w), ScalarType::Float));
    layer.define("def forward(self, x: Tensor) -> Tensor:\n    return x * self.w\n");
    return layer;
  };
  // A ModuleList's type is iterable; build it by hand as kiln.nn does.
  auto list_type = ClassType::create("__torch__.torch.nn.modules.container.ModuleList", true, IterableKind::List);
  Module layers(Object(std::make_shared<CompilationUnit>(), list_type)._ivalue());
  layers.register_attribute("training", BoolType::get(), IValue(true));
  layers.register_module("0", make_layer(2));
  layers.register_module("1", make_layer(5));
  Module m("Stack");
  m.register_module("layers", layers);
  m.define(R"PY(
def forward(self, x: Tensor) -> Tensor:
    for layer in self.layers:
        x = layer(x)
    return x + len(self.layers) + self.layers[-1](x)
)PY");
  EXPECT_DOUBLE_EQ(sumOf(m.forward({IValue(ones({1}))})), 10 + 2 + 50);
  auto g = m.get_method("forward").graph();
  EXPECT_EQ(countNodes(g->block(), "prim::Loop"), 0u) << *g;
  // Three forwards and the list's __len__ (1.13's spelling of the constant).
  EXPECT_EQ(countNodes(g->block(), "prim::CallMethod"), 4u) << *g;
  EXPECT_TRUE(layers.type()->findMethod("__len__"));
  std::string bad = errorOf([&] { m.define("def g(self, i: int) -> Tensor:\n    return self.layers[i](i)\n"); });
  EXPECT_NE(bad.find("constant integer"), std::string::npos) << bad;
}

TEST(Module, HasattrAndGetattrAreStatic) {
  Module m("Probe");
  m.register_attribute("n", IntType::get(), IValue(int64_t{4}));
  m.define(R"PY(
def forward(self, x: int) -> int:
    if hasattr(self, "n") and not hasattr(self, "missing"):
        return getattr(self, "n") + x + int(hasattr(self, "helper"))
    return -1

def helper(self) -> int:
    return 1
)PY");
  EXPECT_EQ(m.forward({IValue(int64_t{1})}).toInt(), 6);
  auto g = m.get_method("forward").graph();
  EXPECT_EQ(countNodes(g->block(), "prim::If"), 0u) << *g;
}

TEST(Module, MethodFromAGraph) {
  // What a traced module's forward looks like: self first, parameters read by prim::GetAttr.
  Module m("Traced");
  m.register_parameter("w", full({2}, Scalar(4.0), ScalarType::Float));
  auto g = std::make_shared<Graph>();
  Value* self = g->addInput("self");
  self->setType(AnyType::get());
  Value* x = g->addInput("x");
  x->setType(TensorType::get());
  Node* get = g->insertNode(g->create(prim::GetAttr, {self}));
  get->s_(attr::name, "w");
  get->output()->setType(TensorType::get());
  Node* mul = g->insertNode(g->create(aten::mul, {x, get->output()}));
  mul->output()->setType(TensorType::get());
  g->registerOutput(mul->output());
  m.create_method("forward", g);
  EXPECT_DOUBLE_EQ(sumOf(m.forward({IValue(ones({2}))})), 8);
  EXPECT_EQ(m.get_method("forward").function().getSchema().name(), "forward");
}

TEST(ScriptClass, WithStatementOnAScriptClass) {
  // __enter__/__exit__ compile when a `with` first needs them.
  auto unit = compile(R"PY(
class Tally:
    def __init__(self):
        self.n = 0

    def __enter__(self):
        self.n += 1

    def __exit__(self, a: Any, b: Any, c: Any):
        self.n += 10

def f() -> int:
    t = Tally()
    with t:
        x = 1
    return t.n + x
)PY");
  EXPECT_EQ(unit->getFunction("f")({}).toInt(), 12);
}
