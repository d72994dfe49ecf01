// Mutation removal: what the pass returns, and graphs that give the same
// results, or raise alike, with and without the pass. The graphs after the
// pass (what PyTorch 1.13 prints after torch._C._jit_pass_remove_mutation on
// the same IR, except where kiln keeps a write 1.13 wrongly removes) are
// checked in tests/lit/passes/remove_mutation_cases.ir, those of the list
// programs in remove_mutation_cases.py. Tests in RemoveMutationAliasDb need
// the memory-DAG AliasDb.
#include <gtest/gtest.h>

#include "kiln/api/kiln.h"
#include "kiln/passes/remove_mutation.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/random.h"
#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::sameResults;

namespace {

Tensor floats(std::vector<int64_t> sizes) {
  manualSeed(11);
  return randn(sizes, ScalarType::Float);
}

// The pass reports no change to `ir`, which runs alike (the lit file checks
// that the graph is left as it is).
void expectUnchanged(const std::string& ir, const Stack& inputs) {
  auto g = parseIR(ir);
  EXPECT_FALSE(removeMutation(g)) << *g;
  EXPECT_TRUE(sameResults(parseIR(ir), g, inputs));
}

// `ir` gives the same results on `inputs` after the pass (the lit file
// checks the rewritten graph).
void expectRewritten(const std::string& ir, const Stack& inputs) {
  auto after = parseIR(ir);
  removeMutation(after);
  EXPECT_TRUE(sameResults(parseIR(ir), after, inputs)) << *after;
}

}  // namespace

TEST(RemoveMutation, ListAppendAndInsertGrowTheConstruct) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.ir.
  expectRewritten(R"IR(
graph(%a : int, %b : int):
  %m5 : int = prim::Constant[value=-5]()
  %9 : int = prim::Constant[value=9]()
  %l : int[] = prim::ListConstruct(%a)
  %l2 : int[] = aten::append(%l, %b)
  aten::insert(%l, %m5, %9)
  %n : int = aten::len(%l)
  %r : (int[], int) = prim::TupleConstruct(%l, %n)
  return (%r))IR",
                  {IValue(int64_t{1}), IValue(int64_t{2})});
}

TEST(RemoveMutation, ListReadBeforeTheAppendKeepsIt) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.ir.
  // len(l) must see one element; 1.13 keeps the append too.
  expectUnchanged(R"IR(
graph(%a : int, %b : int):
  %l : int[] = prim::ListConstruct(%a)
  %n : int = aten::len(%l)
  %l2 : int[] = aten::append(%l, %b)
  %r : (int, int[]) = prim::TupleConstruct(%n, %l)
  return (%r))IR",
                  {IValue(int64_t{1}), IValue(int64_t{2})});
}

TEST(RemoveMutation, TensorWritesBecomePure) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.ir.
  const char* ir = R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), %v : Float(3, strides=[1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %half : float = prim::Constant[value=0.5]()
  %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::mul(%x, %x)
  %y1 : Tensor = aten::relu_(%y)
  %y2 : Tensor = aten::add_(%y, %v, %half)
  %ry : Tensor = aten::mul(%y, %x)
  %z : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::neg(%x)
  %z1 : Tensor = aten::fill_(%z, %half)
  %rz : Tensor = aten::sub(%z, %x, %1)
  %r : (Tensor, Tensor) = prim::TupleConstruct(%ry, %rz)
  return (%r))IR";
  expectRewritten(ir, {IValue(floats({2, 3})), IValue(floats({3}))});
}

TEST(RemoveMutation, ViewChangesNeedNoTypes) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.ir.
  expectRewritten(R"IR(
graph(%x : Tensor):
  %y : Tensor = aten::neg(%x)
  %y1 : Tensor = aten::t_(%y)
  %r : Tensor = aten::mul(%y, %y)
  return (%r))IR",
                  {IValue(floats({2, 3}))});
}

TEST(RemoveMutation, WritesThePureOpWouldNotReproduceStay) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.ir.
  // 1.13 removes all of these: the pure ops would broadcast w to (4, 2, 3)
  // (add_ raises), give bools (lt_), give floats from an int tensor (add_
  // of 0.5 raises), or promote i to int64 (add_ keeps int32); u's dtype is
  // not known at all.
  const char* ir = R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), %big : Float(4, 2, 3, strides=[6, 3, 1], requires_grad=0, device=cpu), %i : Int(3, strides=[1], requires_grad=0, device=cpu), %l : Long(3, strides=[1], requires_grad=0, device=cpu), %u : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %half : float = prim::Constant[value=0.5]()
  %w : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::neg(%x)
  %w1 : Tensor = aten::add_(%w, %big, %1)
  %s : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::neg(%x)
  %s1 : Tensor = aten::lt_(%s, %0)
  %j : Int(3, strides=[1], requires_grad=0, device=cpu) = aten::neg(%i)
  %j1 : Tensor = aten::add_(%j, %half, %1)
  %k : Int(3, strides=[1], requires_grad=0, device=cpu) = aten::neg(%i)
  %k1 : Tensor = aten::add_(%k, %l, %1)
  %n : Tensor = aten::neg(%u)
  %n1 : Tensor = aten::relu_(%n)
  %r : (Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%w1, %s1, %j1, %k1, %n1)
  return (%r))IR";
  auto g = parseIR(ir);
  EXPECT_FALSE(removeMutation(g)) << *g;
}

TEST(RemoveMutation, IntegralWritesThatKeepTheirTypeBecomePure) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.ir.
  expectRewritten(R"IR(
graph(%i : Int(3, strides=[1], requires_grad=0, device=cpu), %s : Short(1, strides=[1], requires_grad=0, device=cpu)):
  %2 : int = prim::Constant[value=2]()
  %j : Int(3, strides=[1], requires_grad=0, device=cpu) = aten::neg(%i)
  %j1 : Tensor = aten::mul_(%j, %2)
  %j2 : Tensor = aten::add_(%j, %s, %2)
  %r : Tensor = aten::mul(%j, %i)
  return (%r))IR",
                  {IValue(arange(Scalar(int64_t{-1}), Scalar(int64_t{2}), Scalar(int64_t{1}), ScalarType::Int)),
                   IValue(full({1}, Scalar(int64_t{3}), ScalarType::Short))});
}

TEST(RemoveMutation, ValuesOthersCanSeeKeepTheirWrites) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.ir.
  // A graph input, a value read before the write, a view of the value.
  expectUnchanged(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %x1 : Tensor = aten::relu_(%x)
  %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::neg(%x)
  %sum : Tensor = aten::sum(%y, %none)
  %y1 : Tensor = aten::add_(%y, %1, %1)
  %z : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::neg(%x)
  %v : Tensor = aten::t(%z)
  %z1 : Tensor = aten::add_(%z, %1, %1)
  %r : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%sum, %y1, %v, %z1)
  return (%r))IR",
                  {IValue(floats({2, 3}))});
}

namespace {

// Compiles `source` and checks that removing mutation from function `f`
// changes it and keeps its results (tests/lit/passes/remove_mutation_cases.py
// checks that every append is gone).
void expectListProgramPreserved(const std::string& source) {
  auto unit = compile(source);
  auto before = unit->getFunction("f").graph()->copy();
  auto after = before->copy();
  EXPECT_TRUE(removeMutation(after)) << *after;
  EXPECT_TRUE(sameResults(before, after, {IValue(int64_t{3}), IValue(int64_t{4})}));
}

}  // namespace

TEST(RemoveMutation, WritesInBranchesAndLoopsStay) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.ir.
  // The write happens maybe, or many times: it is no part of making the value.
  expectUnchanged(R"IR(
graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu), %c : bool, %n : int, %a : int):
  %1 : int = prim::Constant[value=1]()
  %true : bool = prim::Constant[value=1]()
  %y : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::neg(%x)
  %u : int = prim::If(%c)
    block0():
      %y1 : Tensor = aten::relu_(%y)
      -> (%1)
    block1():
      -> (%1)
  %l : int[] = prim::ListConstruct(%a)
  %w : int = prim::Loop(%n, %true, %a)
    block0(%i : int, %acc : int):
      %l2 : int[] = aten::append(%l, %a)
      -> (%true, %acc)
  %len : int = aten::len(%l)
  %r : Tensor = aten::mul(%y, %y)
  %t : (Tensor, int, int, int) = prim::TupleConstruct(%r, %len, %u, %w)
  return (%t))IR",
                  {IValue(floats({3})), IValue(true), IValue(int64_t{3}), IValue(int64_t{5})});
}

TEST(RemoveMutation, ListProgram) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.py.
  expectListProgramPreserved(R"(
def f(a: int, b: int):
    c = a + b
    l = [a]
    l.append(b)
    l.append(c)
    l.insert(-1, 7)
    return l, len(l)
)");
}

TEST(RemoveMutation, TensorProgram) {
  auto unit = compile(R"(
def f(x):
    y = x * 2
    y.add_(1)
    y.relu_()
    z = torch.zeros_like(x)
    z.fill_(3.0)
    return y + z
)");
  auto before = unit->getFunction("f").graph()->copy();
  Tensor x = floats({4});
  // What shape propagation would say: every tensor here is like x.
  before->inputs()[0]->inferTypeFrom(x);
  for (Node* n : before->nodes()) {
    for (Value* v : n->outputs()) {
      if (v->type()->kind() == TypeKind::Tensor) v->inferTypeFrom(x);
    }
  }
  auto after = before->copy();
  EXPECT_TRUE(removeMutation(after)) << *after;
  EXPECT_EQ(after->toString(false).find("add_"), std::string::npos) << *after;
  EXPECT_TRUE(sameResults(before, after, {IValue(x)}));
}

// --- needing the memory-DAG AliasDb ---------------------------------------------------

TEST(RemoveMutationAliasDb, ReturnedFreshValue) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.ir.
  // As torch._C._jit_pass_remove_mutation: a fresh value may lose its write
  // even when the graph returns it.
  expectRewritten(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::mul(%x, %x)
  %y1 : Tensor = aten::relu_(%y)
  return (%y))IR",
                  {IValue(floats({2, 3}))});
}

TEST(RemoveMutationAliasDb, IfOutputFreshInBothBranches) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.ir.
  // The if's output is made fresh by either branch; the input %x keeps its write.
  expectRewritten(R"IR(
graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu), %c : bool):
  %1 : int = prim::Constant[value=1]()
  %t : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = prim::If(%c)
    block0():
      %p : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::neg(%x)
      -> (%p)
    block1():
      %q : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::exp(%x)
      -> (%q)
  %t1 : Tensor = aten::mul_(%t, %1)
  %x1 : Tensor = aten::tanh_(%x)
  return (%t))IR",
                  {IValue(floats({2, 3})), IValue(true)});
}

TEST(RemoveMutationAliasDb, ListProgramMovesTheConstruct) {
  // The graph after the pass: tests/lit/passes/remove_mutation_cases.py.
  // a + b is computed after the list is made: the construct must move after it.
  expectListProgramPreserved(R"(
def f(a: int, b: int):
    l = [a]
    l.append(a + b)
    return l, len(l)
)");
}
