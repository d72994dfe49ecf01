// The peephole pass: what it returns, and graphs and programs that give the
// same results with and without it. The graphs after the pass (what PyTorch
// 1.13 prints after torch._C._jit_pass_peephole(g, False) on the same IR,
// except where kiln deliberately differs) are checked in
// tests/lit/passes/peephole_cases.ir, peephole_without_shapes_cases.ir and
// peephole_list_idioms_cases.ir. Tests in PeepholeAliasDb need the
// memory-DAG AliasDb (the placeholder on main answers "may alias" and
// "cannot move").
#include <gtest/gtest.h>

#include "kiln/api/kiln.h"
#include "kiln/passes/peephole.h"
#include "kiln/passes/peephole_list_idioms.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/random.h"
#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::sameResults;

namespace {

Tensor floats(std::vector<int64_t> sizes) {
  manualSeed(7);
  return randn(sizes, ScalarType::Float);
}

// The graph gives the same results before and after the pass on each input set.
void expectPreserved(const std::string& ir, const std::vector<Stack>& input_sets) {
  auto before = parseIR(ir);
  auto after = parseIR(ir);
  peepholeOptimize(after);
  after->lint();
  for (const Stack& inputs : input_sets) EXPECT_TRUE(sameResults(before, after, inputs)) << *after;
}

}  // namespace

TEST(Peephole, DisabledShapePeepholesTrustNoRefinement) {
  // The graphs without and with the shape peepholes: tests/lit/passes/peephole_without_shapes_cases.ir.
  auto g = parseIR(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %false : bool = prim::Constant[value=0]()
  %d : int = aten::dim(%x)
  %s : int[] = aten::size(%x)
  %e : Tensor = aten::expand(%x, %s, %false)
  %t : Tensor = aten::type_as(%e, %y)
  %r : (int, Tensor) = prim::TupleConstruct(%d, %t)
  return (%r))IR");
  EXPECT_FALSE(peepholeOptimize(g, /*disable_shape_peepholes=*/true));
  EXPECT_TRUE(peepholeOptimize(g));
}

TEST(Peephole, ReportsNoChange) {
  // The graph after the pass: tests/lit/passes/peephole_cases.ir.
  auto g = parseIR(R"IR(
graph(%x : Tensor, %n : int):
  %y : Tensor = aten::relu(%x)
  %m : int = aten::mul(%n, %n)
  %r : (Tensor, int) = prim::TupleConstruct(%y, %m)
  return (%r))IR");
  EXPECT_FALSE(peepholeOptimize(g));
}

TEST(Peephole, DoubleTransposeOnlyOfAtMostTwoDimensions) {
  // The graph after the pass: tests/lit/passes/peephole_cases.ir.
  expectPreserved(R"IR(
graph(%u : Tensor):
  %a : Tensor = aten::t(%u)
  %b : Tensor = aten::t(%a)
  return (%b))IR",
                  {{IValue(floats({2, 3, 4}))}, {IValue(floats({2, 3}))}});
}

TEST(Peephole, GradSumToSize) {
  // (The op is not registered in kiln, so dead code elimination may keep
  // the node; what matters is who reads its result.)
  auto g = parseIR(R"IR(
graph(%x : Tensor, %s : int[], %t : int[]):
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::_grad_sum_to_size(%x, %none)
  %b : Tensor = aten::_grad_sum_to_size(%x, %s)
  %c : Tensor = aten::_grad_sum_to_size(%b, %t)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%a, %c)
  return (%r))IR");
  EXPECT_TRUE(peepholeOptimize(g));
  Node* tuple = g->outputs()[0]->node();
  EXPECT_EQ(tuple->input(0), g->inputs()[0]) << *g;
  Node* outer = tuple->input(1)->node();
  EXPECT_EQ(outer->input(0), g->inputs()[0]) << *g;
  EXPECT_EQ(outer->input(1), g->inputs()[2]) << *g;
}

TEST(Peephole, ChunkBecomesConstantChunk) {
  // The graph after the pass: tests/lit/passes/peephole_cases.ir.
  const char* ir = R"IR(
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %3 : int = prim::Constant[value=3]()
  %chunks : Tensor[] = aten::chunk(%x, %3, %1)
  %a : Tensor, %b : Tensor, %c : Tensor = prim::ListUnpack(%chunks)
  %first : Tensor = aten::__getitem__(%chunks, %0)
  %s : Tensor = aten::add(%a, %first, %1)
  %r : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%s, %b, %c)
  return (%r))IR";
  // 6 columns: three chunks; 2: two chunks, so the unpack raises either way.
  expectPreserved(ir, {{IValue(floats({2, 6}))}, {IValue(floats({4, 7}))}, {IValue(floats({2, 2}))}});
}

TEST(Peephole, IntArithmetic) {
  // The graph after the pass: tests/lit/passes/peephole_cases.ir.
  const char* ir = R"IR(
graph(%i : int, %j : int):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %5 : int = prim::Constant[value=5]()
  %max : int = prim::Constant[value=9223372036854775807]()
  %a : int = aten::add(%0, %i)
  %b : int = aten::mul(%a, %1)
  %c : int = aten::floordiv(%b, %1)
  %d : int = aten::add(%c, %max)
  %e : int = aten::add(%d, %5)
  %f : int = aten::sub(%e, %j)
  %g : int = aten::sub(%f, %0)
  %r : (int, int) = prim::TupleConstruct(%e, %g)
  return (%r))IR";
  expectPreserved(ir, {{IValue(int64_t{3}), IValue(int64_t{-8})}, {IValue(int64_t{-20}), IValue(int64_t{0})}});
}

TEST(Peephole, EqualityWithItself) {
  // The graph after the pass: tests/lit/passes/peephole_cases.ir.
  // f == f is False for NaN, so only ints, bools and their lists fold.
  const char* ir = R"IR(
graph(%i : int, %f : float, %l : int[], %fl : float[]):
  %a : bool = aten::eq(%i, %i)
  %b : bool = aten::ne(%l, %l)
  %c : bool = aten::eq(%f, %f)
  %d : bool = aten::eq(%fl, %fl)
  %r : (bool, bool, bool, bool) = prim::TupleConstruct(%a, %b, %c, %d)
  return (%r))IR";
  std::vector<IValue> nans = {IValue(std::nan(""))};
  expectPreserved(ir, {{IValue(int64_t{1}), IValue(std::nan("")), IValue::list(IntType::get(), {}),
                        IValue::list(FloatType::get(), nans)}});
}

TEST(Peephole, TensorPlusZeroOfFreshValues) {
  // The graph after the pass: tests/lit/passes/peephole_cases.ir.
  // The sums are made and used in the graph, never written.
  const char* ir = R"IR(
graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu), %i : Long(2, strides=[1], requires_grad=0, device=cpu)):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %f1 : float = prim::Constant[value=1.]()
  %y : Float(2, strides=[1], requires_grad=0, device=cpu) = aten::neg(%x)
  %a : Tensor = aten::sub(%y, %0, %1)
  %ra : Tensor = aten::mul(%a, %a)
  %j : Long(2, strides=[1], requires_grad=0, device=cpu) = aten::neg(%i)
  %b : Tensor = aten::mul(%j, %f1)
  %rb : Tensor = aten::mul(%b, %b)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%ra, %rb)
  return (%r))IR";
  Tensor longs = arange(Scalar(int64_t{0}), Scalar(int64_t{2}), Scalar(int64_t{1}), ScalarType::Long);
  expectPreserved(ir, {{IValue(floats({2})), IValue(longs)}});
}

TEST(Peephole, ListIdiomsKeepResults) {
  // The graph after the pass (and dead code elimination): tests/lit/passes/peephole_list_idioms_cases.ir.
  const char* ir = R"IR(
graph(%a : int, %b : int):
  %m1 : int = prim::Constant[value=-1]()
  %1 : int = prim::Constant[value=1]()
  %3 : int = prim::Constant[value=3]()
  %l : int[] = prim::ListConstruct(%a, %b, %a)
  %l2 : int[] = prim::ListConstruct(%b)
  %cat : int[] = aten::add(%l, %l2)
  %sl : int[] = aten::slice(%cat, %1, %3, %1)
  %x : int = aten::__getitem__(%sl, %m1)
  %n : int = aten::len(%cat)
  %p : int, %q : int = prim::ListUnpack(%sl)
  %out : int = aten::__getitem__(%l2, %3)
  %r : (int[], int, int, int, int) = prim::TupleConstruct(%sl, %x, %n, %q, %out)
  return (%r))IR";
  auto g = parseIR(ir);
  EXPECT_TRUE(peepholeOptimizeListIdioms(g));
  // Index 3 of a one-element list raises, with or without the pass.
  expectPreserved(ir, {{IValue(int64_t{4}), IValue(int64_t{5})}});
}

TEST(Peephole, ListWithWritersStays) {
  const char* ir = R"IR(
graph(%a : int, %b : int):
  %0 : int = prim::Constant[value=0]()
  %l : int[] = prim::ListConstruct(%a)
  %x : int[] = aten::append(%l, %b)
  %n : int = aten::len(%l)
  %e : int = aten::__getitem__(%l, %0)
  %r : (int, int) = prim::TupleConstruct(%n, %e)
  return (%r))IR";
  auto g = parseIR(ir);
  EXPECT_FALSE(peepholeOptimizeListIdioms(g));
  expectPreserved(ir, {{IValue(int64_t{4}), IValue(int64_t{5})}});
}

// --- whole programs -----------------------------------------------------------------

namespace {

// Compiles `source`, gives the inputs of function `name` the types of
// `inputs` (as the executor does when it specializes), and checks the
// results with and without the peephole pass.
void expectProgramPreserved(const std::string& source, const std::string& name, const Stack& inputs) {
  auto unit = compile(source);
  auto before = unit->getFunction(name).graph()->copy();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].isTensor()) before->inputs()[i]->inferTypeFrom(inputs[i].toTensor());
  }
  auto after = before->copy();
  EXPECT_TRUE(peepholeOptimize(after)) << *after;
  after->lint();
  EXPECT_TRUE(sameResults(before, after, inputs)) << *after;
}

}  // namespace

TEST(Peephole, LstmCellProgram) {
  expectProgramPreserved(
      R"(
def cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh):
    gates = x.mm(w_ih.t()) + hx.mm(w_hh.t()) + b_ih + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = torch.sigmoid(ingate)
    forgetgate = torch.sigmoid(forgetgate)
    cellgate = torch.tanh(cellgate)
    outgate = torch.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * torch.tanh(cy)
    return hy, cy
)",
      "cell",
      {IValue(floats({3, 5})), IValue(floats({3, 4})), IValue(floats({3, 4})), IValue(floats({16, 5})),
       IValue(floats({16, 4})), IValue(floats({16})), IValue(floats({16}))});
}

TEST(Peephole, ShapesListsAndIntsProgram) {
  expectProgramPreserved(R"(
def f(x, n: int):
    a = x.dim() + n * 1 + 0
    s = x.size()
    b = len(s) + x.size(-1)
    l = [a, b, n]
    c = l[0] + len(l) + l[-1]
    d = {'a': a, 'b': b}
    e = d['a'] + len(d)
    y = x.expand(x.size())
    return a, b, c, e, x.t().t() + y, x.is_floating_point()
)",
                         "f", {IValue(floats({2, 3})), IValue(int64_t{5})});
}

// --- needing the memory-DAG AliasDb ---------------------------------------------------

TEST(PeepholeAliasDb, TensorPlusZeroWrittenLaterStays) {
  // The graph after the pass: tests/lit/passes/peephole_cases.ir.
  // y = x + 0 is a copy: writing to x afterwards must not change y.
  const char* ir = R"IR(
graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %n : Float(2, strides=[1], requires_grad=0, device=cpu) = aten::neg(%x)
  %y : Tensor = aten::add(%n, %0, %1)
  %w : Tensor = aten::add_(%n, %1, %1)
  %r : Tensor = aten::mul(%y, %w)
  return (%r))IR";
  expectPreserved(ir, {{IValue(floats({2}))}});
}
