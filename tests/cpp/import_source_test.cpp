// The source importer (kiln/serialization/import_source.h) on hand-written
// archive code: module classes (attributes in declaration order, parameters,
// buffers, submodules, constants), script classes built the printer's way
// (__new__ then __init__), NamedTuples, free functions in other files loaded
// on demand, CONSTANTS, the printer's forms, and errors naming the file.
#include <gtest/gtest.h>

#include <map>

#include "kiln/api/kiln.h"
#include "kiln/ir/graph.h"
#include "kiln/serialization/import_source.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/reduce.h"

#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::countNodes;
using kiln::testing::errorOf;

namespace {

// An importer over `files` (qualifier -> text) that counts what it reads.
struct Archive {
  std::map<std::string, std::string> files;
  std::map<std::string, int> reads;
  std::shared_ptr<CompilationUnit> unit = std::make_shared<CompilationUnit>();

  std::unique_ptr<SourceImporter> importer(std::vector<IValue> constants = {}) {
    return std::make_unique<SourceImporter>(unit, std::move(constants),
                                            [this](const std::string& qualifier) -> std::optional<std::string> {
                                              ++reads[qualifier];
                                              auto it = files.find(qualifier);
                                              if (it == files.end()) return std::nullopt;
                                              return it->second;
                                            });
  }
};

const char* kModels = R"PY(class Net(Module):
  __parameters__ = ["weight", ]
  __buffers__ = ["offset", ]
  weight : Tensor
  offset : Tensor
  training : bool
  _is_full_backward_hook : Optional[bool]
  scale : float
  names : List[str]
  __annotations__["0"] = __torch__.layers.Scale
  k : Final[int] = 3
  def forward(self: __torch__.models.Net,
    x: Tensor) -> Tensor:
    _0 = getattr(self, "0")
    y = torch.add(torch.mul(x, self.weight), self.offset)
    y0 = (_0).forward(y, )
    return torch.mul(y0, 3)
  def twice(self: __torch__.models.Net,
    x: Tensor) -> Tensor:
    return torch.mul((self).forward(x, ), 2)
)PY";

const char* kLayers = R"PY(class Scale(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  factor : float
  def forward(self: __torch__.layers.Scale,
    x: Tensor) -> Tensor:
    return torch.mul(x, self.factor)
)PY";

}  // namespace

TEST(ImportSource, ModuleClassAttributesInDeclarationOrder) {
  Archive archive;
  archive.files["__torch__.models"] = kModels;
  archive.files["__torch__.layers"] = kLayers;
  auto importer = archive.importer();
  TypePtr type = importer->loadType("__torch__.models.Net");
  ASSERT_TRUE(type);
  auto cls = std::dynamic_pointer_cast<ClassType>(std::const_pointer_cast<Type>(type));
  ASSERT_TRUE(cls);
  EXPECT_TRUE(cls->isModule());
  std::vector<std::string> names;
  for (size_t i = 0; i < cls->numAttributes(); ++i) names.push_back(cls->attributeName(i));
  EXPECT_EQ(names, (std::vector<std::string>{"weight", "offset", "training", "_is_full_backward_hook", "scale", "names",
                                             "0"}));
  EXPECT_EQ(cls->attributeKind(0), SlotKind::Parameter);
  EXPECT_EQ(cls->attributeKind(1), SlotKind::Buffer);
  EXPECT_EQ(cls->attributeKind(2), SlotKind::Attribute);
  EXPECT_EQ(cls->attributeKind(6), SlotKind::Module);
  EXPECT_EQ(cls->attributeType(5)->annotationStr(), "List[str]");
  EXPECT_EQ(cls->attributeType(6)->str(), "__torch__.layers.Scale");
  ASSERT_TRUE(cls->findConstant("k"));
  EXPECT_EQ(cls->findConstant("k")->toInt(), 3);
  // Every method compiled, with self of the class.
  ASSERT_TRUE(cls->findMethod("forward"));
  ASSERT_TRUE(cls->findMethod("twice"));
  EXPECT_EQ(archive.unit->findClass("__torch__.models.Net"), cls);
  EXPECT_TRUE(archive.unit->findClass("__torch__.layers.Scale"));
  // The same type the second time, without reading the file again.
  EXPECT_EQ(importer->loadType("__torch__.models.Net"), type);
  EXPECT_EQ(archive.reads["__torch__.models"], 1);
}

TEST(ImportSource, ImportedModuleRuns) {
  Archive archive;
  archive.files["__torch__.models"] = kModels;
  archive.files["__torch__.layers"] = kLayers;
  auto importer = archive.importer();
  auto net_type =
      std::dynamic_pointer_cast<ClassType>(std::const_pointer_cast<Type>(importer->loadType("__torch__.models.Net")));
  auto scale_type =
      std::dynamic_pointer_cast<ClassType>(std::const_pointer_cast<Type>(importer->loadType("__torch__.layers.Scale")));
  ASSERT_TRUE(net_type && scale_type);
  // What the archive loader does with the pickle: fill the slots.
  Object scale(archive.unit, scale_type);
  scale.setattr("training", IValue(false));
  scale.setattr("factor", IValue(0.5));
  Object net(archive.unit, net_type);
  net.setattr("weight", IValue(ones({2})));
  net.setattr("offset", IValue(ones({2})));
  net.setattr("training", IValue(false));
  net.setattr("_is_full_backward_hook", IValue());
  net.setattr("scale", IValue(1.0));
  net.setattr("names", IValue::list(StringType::get(), {}));
  net.setattr("0", scale.toIValue());
  IValue y = net.run_method("twice", {IValue(full({2}, 2.0, ScalarType::Float))});
  // ((2 * 1 + 1) * 0.5 * 3) * 2 = 9 per element.
  EXPECT_DOUBLE_EQ(sum(y.toTensor()).item().toDouble(), 18.0);
}

TEST(ImportSource, ScriptClassesNamedTuplesAndFunctions) {
  Archive archive;
  archive.files["__torch__"] = R"PY(class Point:
  x : int
  y : float
  def __init__(self: __torch__.Point,
    x: int,
    y: float) -> NoneType:
    self.x = x
    self.y = y
    return None
  def moved(self: __torch__.Point,
    d: int) -> __torch__.Point:
    _0 = __torch__.Point.__new__(__torch__.Point)
    _1 = (_0).__init__(torch.add(self.x, d), self.y, )
    return _0
class Pair(NamedTuple):
  point : __torch__.Point
  count : int
def make(n: int) -> __torch__.Pair:
  p = __torch__.Point.__new__(__torch__.Point)
  _2 = (p).__init__(n, 1.5, )
  q = (p).moved(__torch__.util.twice(n), )
  return __torch__.Pair(q, n)
)PY";
  archive.files["__torch__.util"] = "def twice(n: int) -> int:\n  return torch.mul(n, 2)\n";
  auto importer = archive.importer();
  std::shared_ptr<Function> make = importer->loadFunction("__torch__.make");
  ASSERT_TRUE(make);
  EXPECT_EQ(make->name(), "__torch__.make");
  // The function of the other file was loaded because make calls it.
  EXPECT_EQ(archive.reads["__torch__.util"], 1);
  EXPECT_TRUE(archive.unit->findFunction("__torch__.util.twice"));
  auto graph = make->inlinableGraph();
  EXPECT_EQ(countNodes(graph->block(), "prim::CreateObject"), 1u) << *graph;
  EXPECT_EQ(countNodes(graph->block(), "prim::CallFunction"), 1u) << *graph;

  TypePtr pair = importer->loadType("__torch__.Pair");
  ASSERT_TRUE(pair);
  auto tuple = pair->cast<TupleType>();
  ASSERT_TRUE(tuple);
  EXPECT_EQ(tuple->fieldNames(), (std::vector<std::string>{"point", "count"}));
  EXPECT_EQ(graph->outputs()[0]->type()->str(), pair->str());

  Stack stack{IValue(int64_t{4})};
  make->run(stack);
  const auto& elements = stack.back().toTupleRef().elements;
  EXPECT_EQ(elements[1].toInt(), 4);
  Object point(elements[0].toObject());
  EXPECT_EQ(point.attr("x").toInt(), 12);
  EXPECT_DOUBLE_EQ(point.attr("y").toDouble(), 1.5);
}

TEST(ImportSource, PrintedFormsAndConstants) {
  Archive archive;
  archive.files["__torch__.forms"] = R"PY(def f(x: Tensor,
    n: Optional[int]) -> Tuple[Tensor, List[int]]:
  l = annotate(List[int], [])
  if torch.__isnot__(n, None):
    n0 = unchecked_cast(int, n)
    _0 = torch.append(l, n0)
  else:
    pass
  t = ops.prim.NumToTensor(torch.size(x, 0))
  return (torch.add(ops.aten.mul(x, t), CONSTANTS.c0), l)
def g() -> int:
  y = uninitialized(int)
  return y
)PY";
  auto importer = archive.importer({IValue(full({2}, 10.0, ScalarType::Float))});
  std::shared_ptr<Function> f = importer->loadFunction("__torch__.forms.f");
  ASSERT_TRUE(f);
  auto graph = f->inlinableGraph();
  EXPECT_EQ(countNodes(graph->block(), "prim::unchecked_cast"), 1u) << *graph;
  EXPECT_EQ(countNodes(graph->block(), "prim::NumToTensor"), 1u) << *graph;
  std::shared_ptr<Function> g = importer->loadFunction("__torch__.forms.g");
  EXPECT_EQ(countNodes(g->inlinableGraph()->block(), "prim::Uninitialized"), 1u) << *g->inlinableGraph();

  Stack stack{IValue(ones({2})), IValue(int64_t{7})};
  f->run(stack);
  const auto& out = stack.back().toTupleRef().elements;
  EXPECT_DOUBLE_EQ(sum(out[0].toTensor()).item().toDouble(), 24.0);  // (1 * 2 + 10) * 2
  ASSERT_EQ(out[1].toListRef().elements.size(), 1u);
  EXPECT_EQ(out[1].toListRef().elements[0].toInt(), 7);
}

TEST(ImportSource, ErrorsNameTheFileAndLine) {
  Archive archive;
  archive.files["__torch__.a"] = "def f(x: int) -> int:\n  return __torch__.b.g(x)\n";
  archive.files["__torch__.b"] = "def g(x: int) -> int:\n  return torch.add(x, 'no')\n";
  archive.files["__torch__.c"] = "class C(Module):\n  __parameters__ = [\"w\", ]\n  training : bool\n";
  archive.files["__torch__.d"] = "class D(Base):\n  x : int\n";
  archive.files["__torch__.e"] = "def f(x: int) -> int:\n  return x +\n";
  archive.files["__torch__.f"] = "def f() -> Tensor:\n  return CONSTANTS.c3\n";
  auto importer = archive.importer();
  std::string e = errorOf([&] { importer->loadFunction("__torch__.a.f"); });
  EXPECT_NE(e.find("File \"code/__torch__/b.py\", line 2"), std::string::npos) << e;
  EXPECT_NE(e.find("File \"code/__torch__/a.py\", line 2"), std::string::npos) << e;
  e = errorOf([&] { importer->loadType("__torch__.c.C"); });
  EXPECT_NE(e.find("parameter 'w' of class '__torch__.c.C' has no type"), std::string::npos) << e;
  EXPECT_NE(e.find("code/__torch__/c.py"), std::string::npos) << e;
  e = errorOf([&] { importer->loadType("__torch__.d.D"); });
  EXPECT_NE(e.find("unknown base class 'Base'"), std::string::npos) << e;
  e = errorOf([&] { importer->loadFile("__torch__.e"); });
  EXPECT_NE(e.find("File \"code/__torch__/e.py\", line 2"), std::string::npos) << e;
  e = errorOf([&] { importer->loadFunction("__torch__.f.f"); });
  EXPECT_NE(e.find("constant c3 is out of range"), std::string::npos) << e;
  // A class that failed fails again the same way, not half-imported.
  archive.files["__torch__.g"] =
      "class G(Module):\n  __parameters__ = []\n  training : bool\n"
      "  def forward(self: __torch__.g.G) -> int:\n    return self.nope\n";
  std::string first = errorOf([&] { importer->loadType("__torch__.g.G"); });
  EXPECT_NE(first.find("File \"code/__torch__/g.py\", line 5"), std::string::npos) << first;
  EXPECT_EQ(errorOf([&] { importer->loadType("__torch__.g.G"); }), first);
  // Names no file defines are null, not errors.
  EXPECT_FALSE(importer->loadType("__torch__.nowhere.X"));
  EXPECT_FALSE(importer->loadFunction("__torch__.a.nothing"));
  EXPECT_EQ(SourceImporter::filenameOf("__torch__.torch.nn.modules.linear"),
            "code/__torch__/torch/nn/modules/linear.py");
}

TEST(ImportSource, InterfacesDispatchOnTheObjectsClass) {
  Archive archive;
  archive.files["__torch__"] = R"PY(class Iface(ModuleInterface):
  def forward(self, x: Tensor) -> Tensor:
    pass
class Holder(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  impl : __torch__.Iface
  def forward(self: __torch__.Holder,
    x: Tensor) -> Tensor:
    impl = self.impl
    return (impl).forward(x, )
class Double(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  def forward(self: __torch__.Double,
    x: Tensor) -> Tensor:
    return torch.mul(x, 2)
class Other(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  def forward(self: __torch__.Other,
    x: int) -> int:
    return x
)PY";
  auto importer = archive.importer();
  auto holder_type =
      std::dynamic_pointer_cast<ClassType>(std::const_pointer_cast<Type>(importer->loadType("__torch__.Holder")));
  TypePtr iface = importer->loadType("__torch__.Iface");
  auto double_type =
      std::dynamic_pointer_cast<ClassType>(std::const_pointer_cast<Type>(importer->loadType("__torch__.Double")));
  auto other_type =
      std::dynamic_pointer_cast<ClassType>(std::const_pointer_cast<Type>(importer->loadType("__torch__.Other")));
  ASSERT_TRUE(holder_type && iface && double_type && other_type);
  EXPECT_EQ(iface->str(), "InterfaceType<Iface>");
  EXPECT_EQ(iface->annotationStr(), "__torch__.Iface");
  EXPECT_EQ(holder_type->attributeKind(1), SlotKind::Module);
  EXPECT_TRUE(double_type->isSubtypeOf(*iface));
  EXPECT_FALSE(other_type->isSubtypeOf(*iface));
  auto graph = holder_type->findMethod("forward")->inlinableGraph();
  EXPECT_EQ(countNodes(graph->block(), "prim::CallMethod"), 1u) << *graph;

  Object impl(archive.unit, double_type);
  impl.setattr("training", IValue(false));
  Object holder(archive.unit, holder_type);
  holder.setattr("training", IValue(false));
  holder.setattr("impl", impl.toIValue());
  IValue y = holder.run_method("forward", {IValue(ones({3}))});
  EXPECT_DOUBLE_EQ(sum(y.toTensor()).item().toDouble(), 6.0);
  Object other(archive.unit, other_type);
  EXPECT_NE(errorOf([&] { holder.setattr("impl", other.toIValue()); }), "");
}
