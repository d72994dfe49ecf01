// Shape and type propagation (kiln/passes/analysis/shape_analysis.h): IR in,
// types out, per category of op, for unknown, rank-only and complete input
// types, through control flow, tuples, lists and mutation. Where PyTorch
// 1.13's _jit_pass_complete_shape_analysis refines a value on the same IR,
// the expected type is what it prints, unless the test says why kiln differs.
#include <gtest/gtest.h>

#include <unordered_map>

#include "kiln/api/kiln.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/passes/analysis/shape_analysis.h"

using namespace kiln;

namespace {

// A graph parsed from IR text and propagated, with its values by their
// names in the text (the parser, like 1.13's, renumbers them).
struct Propagated {
  std::shared_ptr<Graph> graph = std::make_shared<Graph>();
  std::unordered_map<std::string, Value*> values;
};

Propagated propagated(const std::string& ir) {
  Propagated p;
  parseIR(ir, *p.graph, &p.values);
  propagateShapes(p.graph);
  p.graph->lint();
  return p;
}

// The IR spelling of a value's type.
std::string typeOf(const Propagated& p, const std::string& name) {
  auto it = p.values.find(name);
  if (it == p.values.end()) return "<no value " + name + ">";
  return irStr(*it->second->type());
}

const char* kF23 = "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)";

}  // namespace

// --- pointwise ----------------------------------------------------------------------------

TEST(ShapeAnalysisTest, UnaryKeepsShapeAndPromotesIntegersOfFloatOps) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %i : Long(*, *, requires_grad=0, device=cpu),
      %u : Tensor):
  %a : Tensor = aten::neg(%x)
  %b : Tensor = aten::sin(%i)
  %c : Tensor = aten::neg(%i)
  %d : Tensor = aten::sin(%u)
  %e : Tensor = aten::isnan(%i)
  return (%a, %b, %c, %d, %e)
)IR");
  EXPECT_EQ(typeOf(g, "a"), kF23);
  // 1.13 says Long: sin of integers is float32.
  EXPECT_EQ(typeOf(g, "b"), "Float(*, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "c"), "Long(*, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "d"), "Tensor(device=cpu)");
  EXPECT_EQ(typeOf(g, "e"), "Bool(*, *, requires_grad=0, device=cpu)");
}

TEST(ShapeAnalysisTest, BinaryBroadcastsKnownSizesAndPromotes) {
  auto g = propagated(R"IR(
graph(%x : Float(*, 3, requires_grad=0, device=cpu),
      %y : Double(4, 1, 1, requires_grad=0, device=cpu),
      %l : Long(*, requires_grad=0, device=cpu),
      %d0 : Double(requires_grad=0, device=cpu),
      %b : Bool(*, requires_grad=0, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %half : float = prim::Constant[value=0.5]()
  %a : Tensor = aten::add(%x, %y, %one)
  %c : Tensor = aten::mul(%l, %d0)
  %e : Tensor = aten::mul(%l, %half)
  %f : Tensor = aten::add(%b, %one, %one)
  %g : Tensor = aten::div(%l, %l)
  %h : Tensor = aten::lt(%x, %y)
  %k : Tensor = aten::add(%d0, %one, %one)
  return (%a, %c, %e, %f, %g, %h, %k)
)IR");
  EXPECT_EQ(typeOf(g, "a"), "Double(4, *, 3, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "c"), "Double(*, requires_grad=0, device=cpu)");  // a 0-dim float tensor lifts an int one
  EXPECT_EQ(typeOf(g, "e"), "Float(*, requires_grad=0, device=cpu)");   // a Python float: the default dtype
  EXPECT_EQ(typeOf(g, "f"), "Long(*, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "g"), "Float(*, requires_grad=0, device=cpu)");  // true division
  EXPECT_EQ(typeOf(g, "h"), "Bool(4, *, 3, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "k"), "Double(requires_grad=0, device=cpu)");
}

TEST(ShapeAnalysisTest, CompleteInputsRunTheOpForExactSizesAndStrides) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %y : Float(3, strides=[1], requires_grad=0, device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %t : Tensor = aten::t(%x)
  %a : Tensor = aten::add(%t, %one, %one)
  %s : Tensor = aten::select(%x, %one, %one)
  %m : Tensor = aten::mm(%x, %t)
  %u : Tensor = aten::unsqueeze(%y, %zero)
  return (%t, %a, %s, %m, %u)
)IR");
  EXPECT_EQ(typeOf(g, "t"), "Float(3, 2, strides=[1, 3], requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "a"), "Float(3, 2, strides=[1, 3], requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "s"), "Float(2, strides=[3], requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "m"), "Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "u"), "Float(1, 3, strides=[3, 1], requires_grad=0, device=cpu)");
}

TEST(ShapeAnalysisTest, OpsThatRaiseOnTheirInputsStayUnrefined) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %m : Tensor = aten::mm(%x, %x)
  return (%m)
)IR");
  // 1.13 says Float(2, 3, ...): mm of 2x3 by 2x3 raises.
  EXPECT_EQ(typeOf(g, "m"), "Tensor");
}

TEST(ShapeAnalysisTest, NumbersTurnedIntoTensorsPromoteByCategory) {
  auto g = propagated(R"IR(
graph(%x : Float(*, requires_grad=0, device=cpu), %n : float, %k : int):
  %t : Tensor = prim::NumToTensor(%n)
  %i : Tensor = prim::NumToTensor(%k)
  %a : Tensor = aten::mul(%x, %t)
  %b : Tensor = aten::mul(%i, %t)
  return (%t, %a, %b)
)IR");
  EXPECT_EQ(typeOf(g, "t"), "Double(requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "a"), "Float(*, requires_grad=0, device=cpu)");
  // Two wrapped numbers: a float one gives the default dtype.
  EXPECT_EQ(typeOf(g, "b"), "Float(requires_grad=0, device=cpu)");
}

// --- reductions and matrix products ----------------------------------------------------------------

TEST(ShapeAnalysisTest, Reductions) {
  auto g = propagated(R"IR(
graph(%x : Float(2, *, 4, requires_grad=0, device=cpu),
      %i : Int(*, *, requires_grad=0, device=cpu),
      %d : int):
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %minus1 : int = prim::Constant[value=-1]()
  %dims : int[] = prim::ListConstruct(%one)
  %some : int[] = prim::ListConstruct(%d)
  %a : Tensor = aten::sum(%x, %dims, %true, %none)
  %b : Tensor = aten::sum(%x, %some, %false, %none)
  %c : Tensor = aten::sum(%i, %none)
  %e : Tensor = aten::mean(%x, %dims, %false, %none)
  %f : Tensor, %g : Tensor = aten::max(%x, %minus1, %false)
  %h : Tensor = aten::argmax(%x, %none, %false)
  %k : Tensor = aten::cumsum(%i, %one, %none)
  %m : Tensor = aten::softmax(%x, %minus1, %none)
  return (%a, %b, %c, %e, %f, %g, %h, %k, %m)
)IR");
  EXPECT_EQ(typeOf(g, "a"), "Float(2, 1, 4, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "b"), "Float(*, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "c"), "Long(requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "e"), "Float(2, 4, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "f"), "Float(2, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "g"), "Long(2, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "h"), "Long(requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "k"), "Long(*, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "m"), "Float(2, *, 4, requires_grad=0, device=cpu)");
}

TEST(ShapeAnalysisTest, MatrixProducts) {
  auto g = propagated(R"IR(
graph(%a : Float(5, *, requires_grad=0, device=cpu),
      %b : Float(*, 7, requires_grad=0, device=cpu),
      %v : Float(*, requires_grad=0, device=cpu),
      %batch : Float(3, 1, 5, *, requires_grad=0, device=cpu),
      %w : Float(7, 4, requires_grad=0, device=cpu)):
  %none : NoneType = prim::Constant()
  %mm : Tensor = aten::mm(%a, %b)
  %mv : Tensor = aten::matmul(%a, %v)
  %vm : Tensor = aten::matmul(%v, %b)
  %bm : Tensor = aten::matmul(%batch, %b)
  %dot : Tensor = aten::matmul(%v, %v)
  %lin : Tensor = aten::linear(%b, %w, %none)
  return (%mm, %mv, %vm, %bm, %dot, %lin)
)IR");
  EXPECT_EQ(typeOf(g, "mm"), "Float(5, 7, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "mv"), "Float(5, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "vm"), "Float(7, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "bm"), "Float(3, 1, 5, 7, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "dot"), "Float(requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "lin"), "Float(*, 7, requires_grad=0, device=cpu)");
}

// --- views, joins, splits -----------------------------------------------------------------------------

TEST(ShapeAnalysisTest, ViewsKeepKnownSizes) {
  auto g = propagated(R"IR(
graph(%x : Float(2, *, 4, requires_grad=0, device=cpu), %n : int):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %minus1 : int = prim::Constant[value=-1]()
  %none : NoneType = prim::Constant()
  %s0 : int = aten::size(%x, %zero)
  %shape : int[] = prim::ListConstruct(%s0, %minus1)
  %v : Tensor = aten::view(%x, %shape)
  %ns : int[] = prim::ListConstruct(%n, %two)
  %r : Tensor = aten::reshape(%x, %ns)
  %u : Tensor = aten::unsqueeze(%x, %minus1)
  %t : Tensor = aten::transpose(%x, %zero, %two)
  %sel : Tensor = aten::select(%x, %two, %one)
  %sl : Tensor = aten::slice(%x, %two, %one, %none, %two)
  %fl : Tensor = aten::flatten(%x, %one, %two)
  %false : bool = prim::Constant[value=0]()
  %sizes : int[] = aten::size(%x)
  %e : Tensor = aten::expand(%x, %sizes, %false)
  return (%v, %r, %u, %t, %sel, %sl, %fl, %e)
)IR");
  EXPECT_EQ(typeOf(g, "v"), "Float(2, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "r"), "Float(*, 2, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "u"), "Float(2, *, 4, 1, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "t"), "Float(4, *, 2, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "sel"), "Float(2, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "sl"), "Float(2, *, 2, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "fl"), "Float(2, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "e"), "Float(2, *, 4, requires_grad=0, device=cpu)");
}

TEST(ShapeAnalysisTest, ListsOfTensorsThroughCatChunkAndUnpack) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 6, strides=[6, 1], requires_grad=0, device=cpu),
      %y : Float(*, 6, requires_grad=0, device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %l : Tensor[] = prim::ListConstruct(%x, %x)
  %c : Tensor = aten::cat(%l, %zero)
  %ly : Tensor[] = prim::ListConstruct(%x, %y)
  %cy : Tensor = aten::cat(%ly, %zero)
  %st : Tensor = aten::stack(%ly, %one)
  %parts : Tensor[] = aten::chunk(%y, %three, %one)
  %p0 : Tensor, %p1 : Tensor, %p2 : Tensor = prim::ListUnpack(%parts)
  %q0 : Tensor, %q1 : Tensor = prim::ConstantChunk[chunks=2, dim=1](%x)
  %item : Tensor = aten::__getitem__(%ly, %one)
  return (%c, %cy, %st, %p0, %p2, %q1, %item)
)IR");
  EXPECT_EQ(typeOf(g, "c"), "Float(4, 6, strides=[6, 1], requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "cy"), "Float(*, 6, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "st"), "Float(2, 2, 6, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "p0"), "Float(*, 2, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "p2"), "Float(*, 2, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "q1"), "Float(2, 3, strides=[6, 1], requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "item"), "Float(*, 6, requires_grad=0, device=cpu)");
}

TEST(ShapeAnalysisTest, ListsSomethingWritesToAreNotFollowed) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 6, strides=[6, 1], requires_grad=0, device=cpu),
      %y : Float(3, strides=[1], requires_grad=0, device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x)
  %appended : Tensor[] = aten::append(%l, %y)
  %c : Tensor = aten::cat(%l, %zero)
  return (%c)
)IR");
  EXPECT_EQ(typeOf(g, "c"), "Tensor");
}

// --- factories and conversions --------------------------------------------------------------------

TEST(ShapeAnalysisTest, FactoriesWithConstantSizes) {
  auto g = propagated(R"IR(
graph(%x : Long(*, *, requires_grad=0, device=cpu), %n : int):
  %none : NoneType = prim::Constant()
  %two : int = prim::Constant[value=2]()
  %three : int = prim::Constant[value=3]()
  %ten : int = prim::Constant[value=10]()
  %f64 : int = prim::Constant[value=7]()
  %fill : float = prim::Constant[value=1.5]()
  %sizes : int[] = prim::ListConstruct(%two, %three)
  %some : int[] = prim::ListConstruct(%n, %three)
  %z : Tensor = aten::zeros(%sizes, %none, %none, %none, %none)
  %o : Tensor = aten::ones(%some, %f64, %none, %none, %none)
  %f : Tensor = aten::full(%sizes, %two, %none, %none, %none, %none)
  %a : Tensor = aten::arange(%two, %ten, %three, %none, %none, %none, %none)
  %zl : Tensor = aten::zeros_like(%x, %none, %none, %none, %none, %none)
  %false : bool = prim::Constant[value=0]()
  %c : Tensor = aten::to(%x, %f64, %false, %false, %none)
  %r : Tensor = aten::rand(%sizes, %none, %none, %none, %none)
  return (%z, %o, %f, %a, %zl, %c, %r)
)IR");
  EXPECT_EQ(typeOf(g, "z"), "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "o"), "Double(*, 3, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "f"), "Long(2, 3, strides=[3, 1], requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "a"), "Long(3, strides=[1], requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "zl"), "Long(*, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "c"), "Double(*, *, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "r"), "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)");
}

// --- control flow -----------------------------------------------------------------------------------

TEST(ShapeAnalysisTest, IfMergesBothBranches) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %y : Float(3, strides=[1], requires_grad=0, device=cpu),
      %c : bool):
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::add(%x, %y, %one)
      -> (%a)
    block1():
      %b : Tensor = aten::mul(%x, %y)
      -> (%b)
  %s : Tensor = prim::If(%c)
    block0():
      -> (%x)
    block1():
      %t : Tensor = aten::unsqueeze(%x, %one)
      -> (%t)
  %w : Tensor = prim::If(%c)
    block0():
      -> (%x)
    block1():
      %p : Tensor = aten::unsqueeze(%y, %one)
      -> (%p)
  return (%r, %s, %w)
)IR");
  EXPECT_EQ(typeOf(g, "r"), kF23);
  EXPECT_EQ(typeOf(g, "s"), "FloatTensor(requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "w"), "Float(*, *, requires_grad=0, device=cpu)");
}

TEST(ShapeAnalysisTest, IfBranchThatRaisesDoesNotWeakenTheOther) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), %c : bool):
  %msg : str = prim::Constant[value="bad"]()
  %none : NoneType = prim::Constant()
  %r : Tensor = prim::If(%c)
    block0():
      prim::RaiseException(%msg, %none)
      %u : Tensor = prim::Uninitialized()
      -> (%u)
    block1():
      %b : Tensor = aten::relu(%x)
      -> (%b)
  return (%r)
)IR");
  // 1.13 merges with the uninitialized value: Tensor.
  EXPECT_EQ(typeOf(g, "r"), kF23);
}

TEST(ShapeAnalysisTest, LoopCarriedTypesReachAFixedPoint) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), %n : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %same : Tensor, %grows : Tensor, %count : int = prim::Loop(%n, %true, %x, %x, %zero)
    block0(%i : int, %a : Tensor, %b : Tensor, %k : int):
      %a2 : Tensor = aten::add(%a, %one, %one)
      %b2 : Tensor = aten::unsqueeze(%b, %zero)
      %k2 : int = aten::add(%k, %one)
      -> (%true, %a2, %b2, %k2)
  return (%same, %grows)
)IR");
  EXPECT_EQ(typeOf(g, "same"), kF23);
  EXPECT_EQ(typeOf(g, "a"), kF23);
  EXPECT_EQ(typeOf(g, "grows"), "FloatTensor(requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "b2"), "FloatTensor(requires_grad=0, device=cpu)");
}

TEST(ShapeAnalysisTest, LoopMergesSizesThatChange) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), %n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %out : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %a : Tensor):
      %l : Tensor[] = prim::ListConstruct(%a, %a)
      %c : Tensor = aten::cat(%l, %zero)
      -> (%true, %c)
  return (%out)
)IR");
  EXPECT_EQ(typeOf(g, "out"), "Float(*, 3, requires_grad=0, device=cpu)");
}

// --- tuples, calls, constants ---------------------------------------------------------------------

TEST(ShapeAnalysisTest, TuplesCarryElementTypes) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %p : (Long(*, requires_grad=0, device=cpu), int)):
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %t : (Tensor, Tensor) = prim::TupleConstruct(%x, %x)
  %a : Tensor, %b : Tensor = prim::TupleUnpack(%t)
  %c : Tensor = prim::TupleIndex(%t, %one)
  %l : Tensor, %k : int = prim::TupleUnpack(%p)
  %d : Tensor = aten::neg(%l)
  return (%t, %b, %c, %d)
)IR");
  EXPECT_EQ(typeOf(g, "t"), std::string("(") + kF23 + ", " + kF23 + ")");
  EXPECT_EQ(typeOf(g, "b"), kF23);
  EXPECT_EQ(typeOf(g, "c"), kF23);
  EXPECT_EQ(typeOf(g, "d"), "Long(*, requires_grad=0, device=cpu)");
}

TEST(ShapeAnalysisTest, TensorConstantsAreComplete) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %k : Tensor = prim::Constant[value={2}]()
  %s : Tensor = aten::mul(%x, %k)
  return (%k, %s)
)IR");
  EXPECT_EQ(typeOf(g, "k"), "Long(requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "s"), kF23);
}

TEST(ShapeAnalysisTest, CallsKeepDeclaredTypesAndMayChangeTheirArguments) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %f : Function = prim::Constant[name="helper"]()
  %r : Tensor = prim::CallFunction(%f, %x)
  %s : Tensor = aten::mul(%x, %one)
  return (%r, %s)
)IR");
  EXPECT_EQ(typeOf(g, "r"), "Tensor");
  // The callee may resize x or make it require grad.
  EXPECT_EQ(typeOf(g, "s"), "FloatTensor(device=cpu)");
}

// A compiled program: `f`'s graph with its tensor inputs given these types.
std::shared_ptr<Graph> compiledGraph(const std::string& source, const std::vector<TypePtr>& input_types) {
  auto cu = compile(source);
  auto graph = cu->findFunction("f")->graph()->copy();
  for (size_t i = 0; i < input_types.size(); ++i) graph->inputs()[i]->setType(input_types[i]);
  propagateShapes(graph);
  return graph;
}

TEST(ShapeAnalysisTest, CallsOfFunctionsThatResizeNothingKeepArgumentShapes) {
  TypePtr f23 = TensorType::createWithRank(ScalarType::Float, Device(DeviceType::CPU), 2, false);
  auto pure = compiledGraph(R"PY(
def g(x: Tensor) -> Tensor:
    return x * 2

def f(x: Tensor) -> Tensor:
    y = g(x)
    return x + 1
)PY",
                            {f23});
  EXPECT_EQ(irStr(*pure->outputs()[0]->type()), "Float(*, *, requires_grad=0, device=cpu)");
  auto resizing = compiledGraph(R"PY(
def g(x: Tensor) -> Tensor:
    return x.unsqueeze_(0)

def f(x: Tensor) -> Tensor:
    y = g(x)
    return x + 1
)PY",
                                {f23});
  // (Any write in the callee may make x require grad, as far as the caller knows.)
  EXPECT_EQ(irStr(*resizing->outputs()[0]->type()), "FloatTensor(device=cpu)");
}

// --- mutation --------------------------------------------------------------------------------------

TEST(ShapeAnalysisTest, InPlaceOpsKeepTheTypeOfWhatTheyWrite) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),
      %y : Long(3, strides=[1], requires_grad=0, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add_(%x, %y, %one)
  %b : Tensor = aten::mul(%x, %one)
  return (%a, %b)
)IR");
  EXPECT_EQ(typeOf(g, "a"), kF23);
  EXPECT_EQ(typeOf(g, "b"), kF23);
}

TEST(ShapeAnalysisTest, ResizedTensorsAndTheirAliasesLoseTheirShapes) {
  auto g = propagated(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %v : Tensor = aten::select(%x, %zero, %one)
  %before : Tensor = aten::mul(%x, %one)
  %u : Tensor = aten::unsqueeze_(%x, %zero)
  %d : int = aten::dim(%x)
  %after : Tensor = aten::neg(%x)
  %sizes : int[] = prim::ListConstruct(%one)
  %fresh : Tensor = aten::zeros(%sizes, %none, %none, %none, %none)
  %other : Tensor = aten::ones_like(%fresh, %none, %none, %none, %none, %none)
  %shaped : Tensor = aten::unsqueeze(%other, %zero)
  return (%v, %before, %u, %after)
)IR");
  EXPECT_EQ(typeOf(g, "x"), "FloatTensor(requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "v"), "FloatTensor(requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "u"), "FloatTensor(requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "after"), "FloatTensor(requires_grad=0, device=cpu)");
  // Flow-insensitive: x's type holds before the resize too.
  EXPECT_EQ(typeOf(g, "before"), "FloatTensor(requires_grad=0, device=cpu)");
  // A tensor that aliases nothing resized keeps what is known of it.
  EXPECT_EQ(typeOf(g, "shaped"), "Float(1, 1, strides=[1, 1], requires_grad=0, device=cpu)");
}

TEST(ShapeAnalysisTest, ListElementsResizedInPlaceAreNotFollowed) {
  auto g = propagated(R"IR(
graph(%x : Float(4, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %zero : int = prim::Constant[value=0]()
  %two : int = prim::Constant[value=2]()
  %parts : Tensor[] = aten::chunk(%x, %two, %zero)
  %e : Tensor = aten::__getitem__(%parts, %zero)
  %r : Tensor = aten::unsqueeze_(%e, %zero)
  %c : Tensor = aten::cat(%parts, %zero)
  return (%c)
)IR");
  EXPECT_EQ(typeOf(g, "c"), "FloatTensor(requires_grad=0, device=cpu)");
}

// --- requires_grad ---------------------------------------------------------------------------------

TEST(ShapeAnalysisTest, RequiresGradFollowsDifferentiableFloatResults) {
  auto g = propagated(R"IR(
graph(%x : Float(*, requires_grad=1, device=cpu),
      %y : Float(*, requires_grad=0, device=cpu),
      %u : Float(*, device=cpu)):
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::gt(%x, %y)
  %false : bool = prim::Constant[value=0]()
  %c : Tensor = aten::argmax(%x, %none, %false)
  %d : Tensor = aten::detach(%x)
  %e : Tensor = aten::zeros_like(%x, %none, %none, %none, %none, %none)
  %f : Tensor = aten::mul(%y, %u)
  return (%a, %b, %c, %d, %e, %f)
)IR");
  EXPECT_EQ(typeOf(g, "a"), "Float(*, requires_grad=1, device=cpu)");
  EXPECT_EQ(typeOf(g, "b"), "Bool(*, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "c"), "Long(requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "d"), "Float(*, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "e"), "Float(*, requires_grad=0, device=cpu)");
  EXPECT_EQ(typeOf(g, "f"), "Float(*, device=cpu)");
}

TEST(ShapeAnalysisTest, InPlaceWriteOfAGradSourceMakesAliasesUnknown) {
  auto g = propagated(R"IR(
graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu),
      %w : Float(3, strides=[1], requires_grad=1, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %before : Tensor = aten::mul(%x, %one)
  %a : Tensor = aten::add_(%x, %w, %one)
  %after : Tensor = aten::mul(%x, %one)
  return (%before, %a, %after)
)IR");
  // Flow-insensitive: x (and a, the same tensor) may or may not require grad.
  EXPECT_EQ(typeOf(g, "x"), "Float(3, strides=[1], device=cpu)");
  EXPECT_EQ(typeOf(g, "a"), "Float(3, strides=[1], device=cpu)");
  EXPECT_EQ(typeOf(g, "after"), "Float(3, strides=[1], device=cpu)");
}

// --- cost ------------------------------------------------------------------------------------------

// Running a 4000x4000 matrix product on stand-ins would take seconds; the
// formula knows the result as well.
TEST(ShapeAnalysisTest, BigInputsUseFormulasNotRuns) {
  auto g = propagated(R"IR(
graph(%x : Float(4000, 4000, strides=[4000, 1], requires_grad=0, device=cpu)):
  %m : Tensor = aten::mm(%x, %x)
  %e : Tensor = aten::exp(%m)
  return (%e)
)IR");
  EXPECT_EQ(typeOf(g, "e"), "Float(4000, 4000, strides=[4000, 1], requires_grad=0, device=cpu)");
}
