// The Python printer's C++ API: `.code` of functions and methods, the
// CONSTANTS table for values without a literal, named tuples and classes,
// and the per-qualifier files of an archive (ArchiveCodeWriter). The text
// expected is PyTorch 1.13's (tests/python/test_python_print.py compares
// every script program's code with torch's directly).
#include <gtest/gtest.h>

#include "kiln/api/kiln.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/runtime/module.h"
#include "kiln/serialization/python_print.h"
#include "kiln/tensor/factory.h"

using namespace kiln;

TEST(PythonPrint, FunctionCodeAsTorchPrintsIt) {
  auto unit = compile(
      "def f(x: Tensor, n: int = 2) -> Tensor:\n"
      "    y = x\n"
      "    for i in range(n):\n"
      "        y = y * 2 + i\n"
      "    return y\n");
  EXPECT_EQ(printFunctionCode(unit->getFunction("f")),
            "def f(x: Tensor,\n"
            "    n: int=2) -> Tensor:\n"
            "  y = x\n"
            "  for i in range(n):\n"
            "    y = torch.add(torch.mul(y, 2), i)\n"
            "  return y\n");
}

TEST(PythonPrint, TensorConstantsAreNamedAndShared) {
  auto graph = parseIR(
      "graph(%x : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  return (%x)\n");
  Value* x = graph->inputs()[0];
  Value* one = graph->nodes().front()->output(0);
  WithInsertPoint guard(graph->returnNode());
  Value* a = graph->insertConstant(IValue(ones({2})));
  Value* b = graph->insertConstant(IValue(ones({2})));
  Value* s = graph->insertConstant(IValue(std::string("caf\xc3\xa9")));
  Node* add1 = graph->insertNode(graph->create(aten::add, {x, a, one}));
  Node* add2 = graph->insertNode(graph->create(aten::add, {add1->output(0), b, one}));
  Node* list = graph->insertNode(graph->createList(StringType::get(), {s}));
  Node* tuple = graph->insertNode(graph->createTuple({add2->output(0), list->output(0)}));
  graph->eraseOutput(0);
  graph->registerOutput(tuple->output(0));
  GraphFunction f("f", graph);
  CodeWithConstants printed = printFunctionCodeWithConstants(f);
  EXPECT_EQ(printed.code,
            "def f(x: Tensor) -> Tuple[Tensor, List[str]]:\n"
            "  _0 = torch.add(torch.add(x, CONSTANTS.c0), CONSTANTS.c0)\n"
            "  return (_0, [CONSTANTS.c1])\n");
  ASSERT_EQ(printed.constants.size(), 2u);
  EXPECT_TRUE(printed.constants[0].isTensor());
  EXPECT_EQ(printed.constants[1].toStringRef(), "caf\xc3\xa9");
}

TEST(PythonPrint, NamedTupleClass) {
  std::vector<IValue> constants;
  PrintDeps deps;
  PythonPrinter printer(constants, deps);
  printer.printNamedType(TupleType::createNamed("__torch__.P", {"a", "b"}, {IntType::get(), TensorType::get()}));
  EXPECT_EQ(printer.str(), "class P(NamedTuple):\n  a : int\n  b : Tensor\n");
}

TEST(PythonPrint, MethodCodeLeavesSelfUnannotatedAndArchivesGroupByQualifier) {
  Module inner("__torch__.lib.Inner");
  inner.register_parameter("w", ones({2}));
  inner.define("def forward(self, x: Tensor) -> Tensor:\n    return x * self.w\n");
  Module outer("__torch__.Outer");
  outer.register_module("inner", inner);
  outer.define("def forward(self, x: Tensor) -> Tensor:\n    return self.inner(x) + 1\n");

  EXPECT_EQ(printMethodCode(outer.get_method("forward").function()),
            "def forward(self,\n"
            "    x: Tensor) -> Tensor:\n"
            "  inner = self.inner\n"
            "  return torch.add((inner).forward(x, ), 1)\n");

  ArchiveCodeWriter writer;
  writer.convertTypes(outer.type());
  std::vector<CodeFile> files = writer.files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "code/__torch__.py");
  EXPECT_EQ(files[1].path, "code/__torch__/lib.py");
  EXPECT_NE(files[0].text.find("class Outer(Module):\n  __parameters__ = []\n"), std::string::npos) << files[0].text;
  EXPECT_NE(files[0].text.find("  inner : __torch__.lib.Inner\n"), std::string::npos) << files[0].text;
  EXPECT_NE(files[0].text.find("  def forward(self: __torch__.Outer,\n    x: Tensor) -> Tensor:\n"), std::string::npos)
      << files[0].text;
  EXPECT_NE(files[1].text.find("class Inner(Module):\n  __parameters__ = [\"w\", ]\n"), std::string::npos)
      << files[1].text;
  ASSERT_EQ(writer.types().size(), 2u);
  EXPECT_TRUE(writer.constants().empty());
}

TEST(PythonPrint, ArchivesQualifyBareFunctionNamesAndPrintCallees) {
  auto unit = compile(
      "def g(x: Tensor) -> Tensor:\n"
      "    return x + 1\n"
      "def f(x: Tensor) -> Tensor:\n"
      "    return g(x) * 2\n");
  // `.code` names the callee as the unit does.
  EXPECT_EQ(printFunctionCode(unit->getFunction("f")), "def f(x: Tensor) -> Tensor:\n  return torch.mul(g(x, ), 2)\n");
  ArchiveCodeWriter writer;
  writer.convertTypes(FunctionType::create("f", unit->findFunctionShared("f")));
  std::vector<CodeFile> files = writer.files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, "code/__torch__.py");
  EXPECT_EQ(files[0].text,
            "def f(x: Tensor) -> Tensor:\n"
            "  return torch.mul(__torch__.g(x, ), 2)\n"
            "def g(x: Tensor) -> Tensor:\n"
            "  return torch.add(x, 1)\n");
}
