// AliasDb on seed 001's examples ("Handling Mutability"): views alias their
// input, pure ops make fresh memory, in-place writes are seen through every
// alias, branches may alias either side, graph inputs may alias each other,
// containers hold what is put into them; and node moves that would reorder
// a read and a write of the same memory are refused, where running the
// graph shows the unsafe order computing something else.
#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <unordered_map>

#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/passes/analysis/alias_analysis.h"
#include "kiln/passes/analysis/memory_dag.h"
#include "kiln/passes/common_subexpression_elimination.h"
#include "kiln/passes/constant_propagation.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/runtime/function.h"
#include "kiln/tensor/factory.h"
#include "kiln/util/jit_log.h"

using namespace kiln;

namespace {

// A parsed graph and its values by their names in the text.
struct Parsed {
  std::shared_ptr<Graph> graph = std::make_shared<Graph>();
  std::unordered_map<std::string, Value*> values;

  explicit Parsed(const char* ir) { parseIR(ir, *graph, &values); }
  Value* operator[](const std::string& name) const { return values.at(name); }
  Node* node(const std::string& output_name) const { return values.at(output_name)->node(); }
};

std::vector<std::string> order(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes()) out.push_back(n->kind().toQualString());
  return out;
}

// The graph's output, run on a copy with `input`.
std::string runOn(const std::shared_ptr<Graph>& g, const Tensor& input) {
  GraphFunction fn("f", g->copy());
  std::ostringstream out;
  out << fn({IValue(input.defined() ? input : Tensor())});
  return out.str();
}

}  // namespace

namespace {

std::vector<unsigned> indices(const MemoryLocations& locations) {
  std::vector<unsigned> out;
  locations.forEach([&](unsigned i) { out.push_back(i); });
  return out;
}

}  // namespace

TEST(MemoryDAG, LocationsAreTheLeavesReachedThroughCycles) {
  MemoryDAG dag;
  std::vector<Element*> e;
  for (int i = 0; i < 6; ++i) e.push_back(dag.makeFreshElement(nullptr));
  // 0 -> 1 -> 2 -> 0 (a cycle), 2 -> 3 (a leaf), 4 -> 1, 5 alone.
  dag.makePointerTo(e[0], e[1]);
  dag.makePointerTo(e[1], e[2]);
  dag.makePointerTo(e[2], e[0]);
  dag.makePointerTo(e[2], e[3]);
  dag.makePointerTo(e[4], e[1]);
  for (int i : {4, 0, 1, 2, 3}) EXPECT_EQ(indices(dag.getMemoryLocations(e[i])), std::vector<unsigned>{3}) << i;
  EXPECT_EQ(indices(dag.getMemoryLocations(e[5])), std::vector<unsigned>{5});
  EXPECT_TRUE(dag.mayAlias(e[4], e[2]));
  EXPECT_FALSE(dag.mayAlias(e[4], e[5]));
  // An edge added after a query is seen by the next one.
  dag.makePointerTo(e[0], e[5]);
  EXPECT_EQ(indices(dag.getMemoryLocations(e[4])), (std::vector<unsigned>{3, 5}));
  // Containers: 5 holds 3; what 4 may hold reaches 5's contents.
  dag.addToContainedElements(e[3], e[5]);
  EXPECT_TRUE(dag.mayContainAlias(e[4], e[3]));
  MemoryLocations big;
  big.set(3);
  big.set(700);
  big.set(64);
  EXPECT_EQ(indices(big), (std::vector<unsigned>{3, 64, 700}));
  EXPECT_TRUE(big.test(700));
  EXPECT_FALSE(big.test(701));
}

TEST(AliasAnalysis, ViewsAliasTheirInputAndPureOpsAreFresh) {
  Parsed p(R"IR(
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %shape : int[] = prim::ListConstruct(%2, %2)
  %t : Tensor = aten::mul(%x, %2)
  %v : Tensor = aten::view(%t, %shape)
  %s : Tensor = aten::select(%t, %0, %1)
  %sl : Tensor = aten::slice(%t, %0, %0, %1, %1)
  %u : Tensor = aten::neg(%t)
  return (%v, %s, %sl, %u))IR");
  AliasDb db(p.graph);
  for (const char* view : {"v", "s", "sl"}) {
    EXPECT_TRUE(db.mayAlias(p[view], p["t"])) << view;
    EXPECT_FALSE(db.mayAlias(p[view], p["x"])) << view;
    EXPECT_FALSE(db.mayAlias(p[view], p["u"])) << view;
  }
  EXPECT_TRUE(db.mayAlias(p["v"], p["s"]));  // through their common input
  EXPECT_FALSE(db.mayAlias(p["t"], p["x"]));
  EXPECT_FALSE(db.mayAlias(p["u"], p["t"]));
  EXPECT_FALSE(db.mayAliasWildcard(p["t"]));
  EXPECT_FALSE(db.hasWriters(p["t"]));
  // Numbers never alias.
  EXPECT_FALSE(db.mayAlias(p["0"], p["0"]));
}

TEST(AliasAnalysis, InPlaceWriteIsSeenThroughEveryAlias) {
  Parsed p(R"IR(
graph(%x : Tensor, %y : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %t : Tensor = aten::mul(%x, %1)
  %v : Tensor = aten::select(%t, %0, %0)
  %w : Tensor = aten::add_(%v, %1, %1)
  %u : Tensor = aten::mul(%x, %1)
  return (%t, %u))IR");
  AliasDb db(p.graph);
  EXPECT_TRUE(db.hasWriters(p["t"]));
  EXPECT_TRUE(db.hasWriters(p["v"]));
  EXPECT_TRUE(db.hasWriters(p["w"]));  // add_ returns its self
  EXPECT_FALSE(db.hasWriters(p["u"]));
  EXPECT_FALSE(db.hasWriters(p["x"]));
  EXPECT_TRUE(db.isMutable(p.node("w")));
  EXPECT_FALSE(db.isMutable(p.node("u")));
  EXPECT_TRUE(db.writesToAlias(p.node("w"), {p["t"]}));
  EXPECT_FALSE(db.writesToAlias(p.node("w"), {p["u"], p["x"]}));
  EXPECT_FALSE(db.writesToWildcard(p.node("w")));
  EXPECT_TRUE(db.hasWriters(p.node("v")));
  EXPECT_FALSE(db.hasWriters(p.node("u")));
}

TEST(AliasAnalysis, WriteToAnInputIsAWriteToEveryInput) {
  Parsed p(R"IR(
graph(%a : Tensor, %b : Tensor, %l : int[]):
  %1 : int = prim::Constant[value=1]()
  %w : Tensor = aten::add_(%a, %1, %1)
  %c : Tensor = aten::mul(%b, %1)
  return (%c))IR");
  AliasDb db(p.graph);
  // The caller may pass one tensor as both arguments.
  EXPECT_TRUE(db.mayAlias(p["a"], p["b"]));
  EXPECT_TRUE(db.mayAliasWildcard(p["a"]));
  EXPECT_TRUE(db.writesToWildcard(p.node("w")));
  EXPECT_TRUE(db.hasWriters(p["b"]));
  // A fresh result aliases no input; a list input is no tensor.
  EXPECT_FALSE(db.mayAlias(p["c"], p["b"]));
  EXPECT_FALSE(db.hasWriters(p["c"]));
  EXPECT_FALSE(db.mayAlias(p["l"], p["a"]));
  EXPECT_FALSE(db.hasWriters(p["l"]));
}

// Seed 001's `foo`:
//   c = 2 * b; a += 1
//   if a.max() > 4: r = a[0] else: r = b[0]
//   return c, r
TEST(AliasAnalysis, BranchOutputMayAliasEitherSide) {
  Parsed p(R"IR(
graph(%a : Tensor, %b : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %4 : int = prim::Constant[value=4]()
  %c : Tensor = aten::mul(%b, %2)
  %a2 : Tensor = aten::add_(%a, %1, %1)
  %m : Tensor = aten::max(%a2)
  %gt : Tensor = aten::gt(%m, %4)
  %cond : bool = aten::Bool(%gt)
  %r : Tensor = prim::If(%cond)
    block0():
      %ra : Tensor = aten::select(%a2, %0, %0)
      -> (%ra)
    block1():
      %rb : Tensor = aten::select(%b, %0, %0)
      -> (%rb)
  return (%c, %r))IR");
  AliasDb db(p.graph);
  EXPECT_TRUE(db.mayAlias(p["r"], p["a"]));
  EXPECT_TRUE(db.mayAlias(p["r"], p["b"]));
  EXPECT_TRUE(db.mayAlias(p["r"], p["ra"]));
  EXPECT_TRUE(db.mayAlias(p["a"], p["b"]));
  EXPECT_FALSE(db.mayAlias(p["c"], p["r"]));
  EXPECT_FALSE(db.mayAlias(p["c"], p["a"]));
  EXPECT_TRUE(db.hasWriters(p["r"]));
  EXPECT_FALSE(db.hasWriters(p["c"]));
}

TEST(AliasAnalysis, BranchOfFreshValuesStaysFresh) {
  Parsed p(R"IR(
graph(%x : Tensor, %cond : bool):
  %1 : int = prim::Constant[value=1]()
  %t : Tensor = aten::mul(%x, %1)
  %u : Tensor = aten::neg(%x)
  %r : Tensor = prim::If(%cond)
    block0():
      -> (%t)
    block1():
      -> (%u)
  %w : Tensor = aten::add_(%r, %1, %1)
  %k : Tensor = aten::exp(%x)
  return (%w, %k))IR");
  AliasDb db(p.graph);
  EXPECT_TRUE(db.mayAlias(p["r"], p["t"]));
  EXPECT_TRUE(db.mayAlias(p["r"], p["u"]));
  EXPECT_FALSE(db.mayAlias(p["t"], p["u"]));
  EXPECT_FALSE(db.mayAlias(p["r"], p["x"]));
  EXPECT_FALSE(db.writesToWildcard(p.node("w")));
  EXPECT_TRUE(db.hasWriters(p["t"]));
  EXPECT_TRUE(db.hasWriters(p["u"]));
  EXPECT_FALSE(db.hasWriters(p["k"]));
}

TEST(AliasAnalysis, ListsHoldWhatIsPutIntoThem) {
  Parsed p(R"IR(
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %t : Tensor = aten::mul(%x, %1)
  %u : Tensor = aten::neg(%x)
  %f : Tensor = aten::exp(%x)
  %l : Tensor[] = prim::ListConstruct(%t)
  %e : Tensor = aten::__getitem__(%l, %0)
  %l2 : Tensor[] = aten::append(%l, %u)
  return (%e, %l, %f))IR");
  AliasDb db(p.graph);
  EXPECT_TRUE(db.mayContainAlias(p["l"], p["t"]));
  EXPECT_FALSE(db.mayAlias(p["l"], p["t"]));  // a list is not a tensor
  EXPECT_TRUE(db.mayAlias(p["e"], p["t"]));   // what comes out may be what went in
  EXPECT_TRUE(db.mayAlias(p["e"], p["u"]));   // appended
  EXPECT_TRUE(db.mayAlias(p["e"], p["x"]));   // elements are wildcards: so are inputs
  EXPECT_FALSE(db.mayAlias(p["e"], p["f"]));  // never put in a list
  EXPECT_FALSE(db.mayContainAlias(p["l"], p["f"]));
  EXPECT_TRUE(db.mayAliasWildcard(p["t"]));
  EXPECT_TRUE(db.isMutable(p.node("l2")));
  EXPECT_TRUE(db.writesToAlias(p.node("l2"), {p["l"]}));
  EXPECT_TRUE(db.hasWriters(p["l"]));
  EXPECT_TRUE(db.mayAlias(p["l2"], p["l"]));  // append returns its self
  EXPECT_FALSE(db.hasWriters(p["t"]));
}

TEST(AliasAnalysis, WriteToAnElementIsAWriterOfItsList) {
  Parsed p(R"IR(
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct(%x)
  %e : Tensor = aten::__getitem__(%l, %0)
  %w : Tensor = aten::add_(%e, %1, %1)
  %n : int = aten::len(%l)
  return (%n))IR");
  AliasDb db(p.graph);
  EXPECT_TRUE(db.writesToWildcard(p.node("w")));
  EXPECT_TRUE(db.hasWriters(p["l"]));
}

TEST(AliasAnalysis, ListOnlyReadByCatKeepsItsElementsApart) {
  Parsed p(R"IR(
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %t : Tensor = aten::neg(%x)
  %u : Tensor = aten::exp(%x)
  %l : Tensor[] = prim::ListConstruct(%t, %u)
  %c : Tensor = aten::cat(%l, %0)
  return (%c))IR");
  AliasDb db(p.graph);
  EXPECT_TRUE(db.mayContainAlias(p["l"], p["t"]));
  EXPECT_TRUE(db.mayContainAlias(p["l"], p["u"]));
  EXPECT_FALSE(db.mayAliasWildcard(p["t"]));
  EXPECT_FALSE(db.mayAlias(p["t"], p["u"]));
  EXPECT_FALSE(db.mayAlias(p["c"], p["t"]));
}

TEST(AliasAnalysis, TuplesOfTensorsAndTuplesOfNumbers) {
  Parsed p(R"IR(
graph(%x : Tensor, %n : int):
  %1 : int = prim::Constant[value=1]()
  %t : Tensor = aten::neg(%x)
  %f : Tensor = aten::exp(%x)
  %tup : (Tensor, int) = prim::TupleConstruct(%t, %n)
  %a : Tensor, %b : int = prim::TupleUnpack(%tup)
  %nums : (int, int) = prim::TupleConstruct(%n, %1)
  return (%a, %b, %nums, %f))IR");
  AliasDb db(p.graph);
  EXPECT_TRUE(AliasDb::isMutableType(p["tup"]));
  EXPECT_FALSE(AliasDb::isMutableType(p["nums"]));
  EXPECT_TRUE(db.mayAlias(p["a"], p["t"]));
  EXPECT_TRUE(db.mayContainAlias(p["tup"], p["t"]));
  EXPECT_TRUE(db.mayContainAlias(p["tup"], p["a"]));
  EXPECT_FALSE(db.mayContainAlias(p["tup"], p["f"]));
  EXPECT_FALSE(db.mayAlias(p["a"], p["f"]));
  EXPECT_FALSE(db.mayContainAlias(p["nums"], p["tup"]));
}

TEST(AliasAnalysis, LoopCarriedValuesAliasInitialAndPreviousValues) {
  Parsed p(R"IR(
graph(%x : Tensor, %n : int):
  %1 : int = prim::Constant[value=1]()
  %true : bool = prim::Constant[value=1]()
  %t : Tensor = aten::neg(%x)
  %f : Tensor = aten::exp(%x)
  %r : Tensor = prim::Loop(%n, %true, %t)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::mul(%acc, %1)
      -> (%true, %next)
  %w : Tensor = aten::add_(%r, %1, %1)
  return (%w, %f))IR");
  AliasDb db(p.graph);
  EXPECT_TRUE(db.mayAlias(p["acc"], p["t"]));
  EXPECT_TRUE(db.mayAlias(p["acc"], p["next"]));  // the previous iteration's
  EXPECT_TRUE(db.mayAlias(p["r"], p["next"]));
  EXPECT_TRUE(db.mayAlias(p["r"], p["t"]));  // when the loop runs zero times
  EXPECT_FALSE(db.mayAlias(p["r"], p["f"]));
  EXPECT_TRUE(db.hasWriters(p["t"]));
  EXPECT_FALSE(db.hasWriters(p["f"]));
}

TEST(AliasAnalysis, CallsAndWaitsAreConservative) {
  Parsed p(R"IR(
graph(%x : Tensor, %fut : Future(Tensor)):
  %f : Function = prim::Constant[name="callee"]()
  %t : Tensor = aten::neg(%x)
  %u : Tensor = aten::exp(%x)
  %s : Tensor = aten::sin(%x)
  %r : Tensor = prim::CallFunction(%f, %t)
  %v : Tensor = aten::wait(%fut)
  %fut2 : Future(Tensor) = prim::fork(%f, %s)
  return (%r, %u, %v, %fut2))IR");
  AliasDb db(p.graph);
  // The forked call may keep or write its arguments: they escape.
  EXPECT_TRUE(db.mayAliasWildcard(p["s"]));
  EXPECT_FALSE(db.mayAliasWildcard(p["fut2"]));
  EXPECT_TRUE(db.mayContainAlias(p["fut2"], p["s"]));
  EXPECT_TRUE(db.writesToAlias(p.node("r"), {p["t"]}));
  EXPECT_TRUE(db.mayAliasWildcard(p["t"]));
  EXPECT_TRUE(db.mayAliasWildcard(p["r"]));
  EXPECT_TRUE(db.writesToWildcard(p.node("r")));
  // wait may finish work that writes anything the graph cannot see, not u.
  EXPECT_TRUE(db.writesToWildcard(p.node("v")));
  EXPECT_TRUE(db.writesToAlias(p.node("v"), {p["x"]}));
  EXPECT_FALSE(db.writesToAlias(p.node("v"), {p["u"]}));
  EXPECT_TRUE(AliasDb::mayWrite(p.node("r")));
  EXPECT_TRUE(AliasDb::mayWrite(p.node("v")));
  EXPECT_FALSE(AliasDb::mayWrite(p.node("u")));
}

TEST(AliasAnalysis, MutatorsKeepTheDatabaseCurrent) {
  Parsed p(R"IR(
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %t : Tensor = aten::neg(%x)
  %w : Tensor = aten::add_(%t, %1, %1)
  return (%w))IR");
  AliasDb db(p.graph);
  Graph& g = *p.graph;
  WithInsertPoint guard(p.node("w"));
  Value* fresh = g.insert(aten::exp, {p["x"]});
  // Unknown to the database: it may alias anything, nothing writes it.
  EXPECT_TRUE(db.mayAlias(fresh, p["t"]));
  EXPECT_FALSE(db.hasWriters(fresh));
  db.createValue(fresh);
  EXPECT_FALSE(db.mayAlias(fresh, p["t"]));
  EXPECT_FALSE(db.mayAlias(fresh, p["x"]));

  Value* copy = g.insert(aten::exp, {p["x"]});
  db.copyValueAliasing(p["t"], copy);
  EXPECT_TRUE(db.mayAlias(copy, p["t"]));
  EXPECT_TRUE(db.hasWriters(copy));

  Value* replacement = g.insert(aten::exp, {p["x"]});
  p["t"]->replaceAllUsesWith(replacement);
  db.replaceWithNewValue(p["t"], replacement);
  EXPECT_TRUE(db.mayAlias(replacement, p["w"]));
  EXPECT_FALSE(db.mayAlias(replacement, fresh));
}

TEST(AliasAnalysis, SafeToChangeAliasingOnlyWhenUnwrittenAndNotBothEscaping) {
  Parsed p(R"IR(
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::neg(%x)
  %b : Tensor = aten::neg(%x)
  %c : Tensor = aten::exp(%x)
  %d : Tensor = aten::exp(%x)
  %e : Tensor = aten::sin(%x)
  %w : Tensor = aten::add_(%e, %1, %1)
  %s : Tensor = aten::add(%c, %d, %1)
  return (%a, %b, %s))IR");
  AliasDb db(p.graph);
  EXPECT_FALSE(db.safeToChangeAliasingRelationship({p["a"]}, {p["b"]}));  // both returned
  EXPECT_TRUE(db.safeToChangeAliasingRelationship({p["a"]}, {p["c"]}));
  EXPECT_TRUE(db.safeToChangeAliasingRelationship({p["c"]}, {p["d"]}));
  EXPECT_FALSE(db.safeToChangeAliasingRelationship({p["c"]}, {p["e"]}));  // e is written
}

// --- moving nodes -------------------------------------------------------------------------

namespace {

// `%r` reads `%t`, `%w` writes it; `%q` reads `%u`, which `%w2` writes;
// `%s` uses `%r`.
const char* kReadWriteIR = R"IR(
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %t : Tensor = aten::mul(%x, %1)
  %u : Tensor = aten::mul(%x, %2)
  %r : Tensor = aten::mul(%t, %2)
  %s : Tensor = aten::neg(%r)
  %w : Tensor = aten::add_(%t, %2, %1)
  %f : Tensor = aten::exp(%x)
  %w2 : Tensor = aten::add_(%f, %2, %1)
  %out : Tensor = aten::add(%s, %w, %1)
  %out2 : Tensor = aten::add(%out, %w2, %1)
  return (%out2))IR";

}  // namespace

TEST(AliasAnalysisMoves, ReadIsNotMovedPastAWriteToItsMemory) {
  Parsed p(kReadWriteIR);
  AliasDb db(p.graph);
  auto before = order(*p.graph);
  EXPECT_FALSE(db.couldMoveAfterTopologically(p.node("r"), p.node("w")));
  EXPECT_FALSE(db.moveAfterTopologicallyValid(p.node("r"), p.node("w")));
  EXPECT_FALSE(db.moveBeforeTopologicallyValid(p.node("w"), p.node("r")));
  EXPECT_EQ(order(*p.graph), before);
}

TEST(AliasAnalysisMoves, ReadCarriesTheWriteAfterItAlong) {
  Parsed p(kReadWriteIR);
  AliasDb db(p.graph);
  auto before = order(*p.graph);
  EXPECT_TRUE(db.couldMoveAfterTopologically(p.node("r"), p.node("w2")));
  EXPECT_EQ(order(*p.graph), before);  // the dry run moved nothing
  // %r goes after %w2; its user %s and the write %w, which must stay after
  // the read, come along in their order.
  ASSERT_TRUE(db.moveAfterTopologicallyValid(p.node("r"), p.node("w2")));
  EXPECT_EQ(p.node("w2")->next(), p.node("r"));
  EXPECT_EQ(p.node("r")->next(), p.node("s"));
  EXPECT_EQ(p.node("s")->next(), p.node("w"));
  p.graph->lint();
}

TEST(AliasAnalysisMoves, ReadMovesPastAWriteToOtherMemory) {
  Parsed p(kReadWriteIR);
  AliasDb db(p.graph);
  // %s reads %r, fresh memory nobody writes: it crosses both writes.
  ASSERT_TRUE(db.moveAfterTopologicallyValid(p.node("s"), p.node("w2")));
  EXPECT_EQ(p.node("w2")->next(), p.node("s"));
  EXPECT_EQ(p.node("r")->next(), p.node("w"));
  // The write %w2 moves before the read %r of other memory.
  ASSERT_TRUE(db.moveBeforeTopologicallyValid(p.node("w2"), p.node("r")));
  EXPECT_EQ(p.node("w2")->next(), p.node("r"));
  // %f is %w2's input: it came along, before it.
  EXPECT_EQ(p.node("f")->next(), p.node("w2"));
  p.graph->lint();
}

TEST(AliasAnalysisMoves, DependenciesAreDraggedAlong) {
  Parsed p(R"IR(
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::neg(%x)
  %b : Tensor = aten::exp(%a)
  %c : Tensor = aten::sin(%x)
  %d : Tensor = aten::cos(%x)
  %e : Tensor = aten::add(%b, %d, %1)
  return (%e, %c))IR");
  AliasDb db(p.graph);
  // %a after %d: %b uses %a, so it comes along, after %a.
  ASSERT_TRUE(db.moveAfterTopologicallyValid(p.node("a"), p.node("d")));
  EXPECT_EQ(order(*p.graph), (std::vector<std::string>{"prim::Constant", "aten::sin", "aten::cos", "aten::neg",
                                                       "aten::exp", "aten::add"}));
  p.graph->lint();
  // %e before %c: what %e uses comes along, before it.
  ASSERT_TRUE(db.moveBeforeTopologicallyValid(p.node("e"), p.node("c")));
  EXPECT_EQ(order(*p.graph), (std::vector<std::string>{"prim::Constant", "aten::cos", "aten::neg", "aten::exp",
                                                       "aten::add", "aten::sin"}));
  p.graph->lint();
}

TEST(AliasAnalysisMoves, MovingToTheOtherSideLeavesDependentsBehind) {
  Parsed p(R"IR(
graph(%x : Tensor):
  %n : Tensor = aten::neg(%x)
  %m : Tensor = aten::exp(%n)
  %o : Tensor = aten::sin(%x)
  return (%m, %o))IR");
  AliasDb db(p.graph);
  // %m uses %n: %n cannot go after it...
  EXPECT_FALSE(db.moveAfterTopologicallyValid(p.node("n"), p.node("m")));
  // ...but can go right before %o, with %m moved past %o (1.13's example).
  ASSERT_TRUE(db.moveBeforeTopologicallyValid(p.node("n"), p.node("o")));
  EXPECT_EQ(order(*p.graph), (std::vector<std::string>{"aten::neg", "aten::sin", "aten::exp"}));
  p.graph->lint();
}

TEST(AliasAnalysisMoves, NothingMovesAcrossSideEffects) {
  Parsed p(R"IR(
graph(%x : Tensor):
  %a : Tensor = aten::neg(%x)
   = prim::Print(%x)
  %b : Tensor = aten::exp(%x)
  return (%a, %b))IR");
  AliasDb db(p.graph);
  EXPECT_FALSE(db.moveAfterTopologicallyValid(p.node("a"), p.node("b")));
  EXPECT_FALSE(db.moveBeforeTopologicallyValid(p.node("b"), p.node("a")));
}

TEST(AliasAnalysisMoves, NodesInOtherBlocksDoNotMove) {
  Parsed p(R"IR(
graph(%x : Tensor, %c : bool):
  %a : Tensor = aten::neg(%x)
  %r : Tensor = prim::If(%c)
    block0():
      %b : Tensor = aten::exp(%x)
      -> (%b)
    block1():
      -> (%x)
  return (%a, %r))IR");
  AliasDb db(p.graph);
  EXPECT_FALSE(db.moveAfterTopologicallyValid(p.node("a"), p.node("b")));
  ASSERT_TRUE(db.moveAfterTopologicallyValid(p.node("a"), p.node("r")));
  EXPECT_EQ(p.node("r")->next(), p.node("a"));
}

TEST(AliasAnalysisMoves, WriteInsideABlockOrdersTheEnclosingNode) {
  Parsed p(R"IR(
graph(%x : Tensor, %c : bool):
  %1 : int = prim::Constant[value=1]()
  %t : Tensor = aten::neg(%x)
  %r : Tensor = aten::mul(%t, %1)
   = prim::If(%c)
    block0():
      %w : Tensor = aten::add_(%t, %1, %1)
      -> ()
    block1():
      -> ()
  %z : Tensor = aten::exp(%x)
  return (%r, %t, %z))IR");
  AliasDb db(p.graph);
  Node* branch = p.node("z")->prev();
  EXPECT_FALSE(db.moveAfterTopologicallyValid(p.node("r"), branch));
  // Past %z, the if comes along, still after the read.
  ASSERT_TRUE(db.moveAfterTopologicallyValid(p.node("r"), p.node("z")));
  EXPECT_EQ(p.node("z")->next(), p.node("r"));
  EXPECT_EQ(p.node("r")->next(), branch);
  p.graph->lint();
}

TEST(AliasAnalysisMoves, UnsafeReorderingChangesTheResult) {
  // r = t * 2 reads t; then t.add_(10). Moving the read after the write
  // would make r = (x + 10) * 2.
  const char* ir = R"IR(
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %10 : int = prim::Constant[value=10]()
  %t : Tensor = aten::mul(%x, %1)
  %r : Tensor = aten::mul(%t, %2)
  %w : Tensor = aten::add_(%t, %10, %1)
  return (%r))IR";
  Tensor input = ones({2});
  Parsed original(ir);
  const std::string expected = runOn(original.graph, input);

  Parsed guarded(ir);
  AliasDb db(guarded.graph);
  EXPECT_FALSE(db.moveAfterTopologicallyValid(guarded.node("r"), guarded.node("w")));
  EXPECT_EQ(runOn(guarded.graph, input), expected);

  Parsed unsafe(ir);
  unsafe.node("r")->moveAfter(unsafe.node("w"));
  unsafe.graph->lint();  // still a valid graph: only the memory order broke
  EXPECT_NE(runOn(unsafe.graph, input), expected);

  // Had `t` been fresh memory nothing writes, the same move is allowed and harmless.
  const char* safe_ir = R"IR(
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %10 : int = prim::Constant[value=10]()
  %t : Tensor = aten::mul(%x, %1)
  %u : Tensor = aten::mul(%x, %1)
  %r : Tensor = aten::mul(%t, %2)
  %w : Tensor = aten::add_(%u, %10, %1)
  %o : Tensor = aten::add(%r, %w, %1)
  return (%o))IR";
  Parsed safe(safe_ir);
  const std::string safe_expected = runOn(safe.graph, input);
  AliasDb safe_db(safe.graph);
  ASSERT_TRUE(safe_db.moveAfterTopologicallyValid(safe.node("r"), safe.node("w")));
  EXPECT_EQ(safe.node("w")->next(), safe.node("r"));
  EXPECT_EQ(runOn(safe.graph, input), safe_expected);
}

TEST(AliasAnalysis, LogsItselfAtDebugLevel) {
  Parsed p(R"IR(
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %t : Tensor = aten::neg(%x)
  %w : Tensor = aten::add_(%t, %1, %1)
  %l : Tensor[] = prim::ListConstruct(%x)
  return (%w, %l))IR");
  std::ostringstream log;
  setJitLogStream(&log);
  setJitLogLevels(">alias_analysis");
  AliasDb db(p.graph);
  setJitLogLevels("");
  setJitLogStream(nullptr);
  const std::string text = log.str();
  EXPECT_NE(text.find("[DEBUG alias_analysis.cpp:"), std::string::npos) << text;
  EXPECT_NE(text.find("%x points to: WILDCARD for type Tensor"), std::string::npos) << text;
  EXPECT_NE(text.find("contains: WILDCARD for type Tensor"), std::string::npos) << text;
  EXPECT_NE(text.find("aten::add_ writes to %"), std::string::npos) << text;
  EXPECT_EQ(db.toString(), db.toString());
}

namespace {

// A random straight-line program over 4-element tensors: fresh results,
// views, in-place writes and reads, repeats of earlier nodes; a random
// half of the tensors (all, when `return_all`) returned in one tuple.
std::shared_ptr<Graph> randomProgram(std::mt19937& rng, bool return_all = true) {
  auto g = std::make_shared<Graph>();
  Value* x = g->addInput("x");
  x->setType(TensorType::get());
  WithInsertPoint guard(g->block());
  Value* two = g->insertConstant(int64_t{2});
  Value* shape = g->insertConstant(IValue(std::vector<int64_t>{4}));
  std::vector<Value*> tensors{x, g->insert(aten::mul, {x, two})};
  auto pick = [&] { return tensors[std::uniform_int_distribution<size_t>(0, tensors.size() - 1)(rng)]; };
  for (int i = 0; i < 10; ++i) {
    Value* a = pick();
    Value* b = pick();
    switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
      case 0: tensors.push_back(g->insert(aten::mul, {a, two})); break;
      case 5: {
        Node* earlier = a->node();
        if (earlier->kind() == prim::Param) continue;
        tensors.push_back(
            g->insertNode(g->createClone(earlier, [](const Value* v) { return const_cast<Value*>(v); }))->output());
        break;
      }
      case 1: tensors.push_back(g->insert(aten::add, {a, b})); break;
      case 2: tensors.push_back(g->insert(aten::view, {a, shape})); break;
      case 3: tensors.push_back(g->insert(Symbol::aten("add_"), {a, b})); break;
      default: tensors.push_back(g->insert(Symbol::aten("mul_"), {a, two})); break;
    }
  }
  std::vector<Value*> returned;
  for (Value* t : tensors) {
    if (return_all || std::uniform_int_distribution<int>(0, 1)(rng)) returned.push_back(t);
  }
  g->registerOutput(g->insertNode(g->createTuple(returned))->output());
  return g;
}

std::string runOnCounting(const std::shared_ptr<Graph>& g) { return runOn(g, arange(0, 4, 1, ScalarType::Float)); }

}  // namespace

TEST(AliasAnalysisMoves, RandomMovesKeepResults) {
  std::mt19937 rng(1234);
  int moved = 0, refused = 0, unsafe_changes = 0;
  for (int program = 0; program < 100; ++program) {
    auto original = randomProgram(rng);
    const std::string expected = runOnCounting(original);
    std::vector<Node*> nodes;
    for (Node* n : original->nodes()) nodes.push_back(n);
    for (int trial = 0; trial < 10; ++trial) {
      auto index = std::uniform_int_distribution<size_t>(0, nodes.size() - 2);  // never the tuple
      size_t from = index(rng), to = index(rng);
      bool after = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
      std::unordered_map<const Value*, Value*> map;
      auto g = original->copy(map);
      auto copied = [&](Node* n) { return n->outputs().empty() ? nullptr : map.at(n->output())->node(); };
      Node* n = copied(nodes[from]);
      Node* point = copied(nodes[to]);
      if (!n || !point) continue;
      AliasDb db(g);
      bool ok = after ? db.moveAfterTopologicallyValid(n, point) : db.moveBeforeTopologicallyValid(n, point);
      if (ok) {
        ++moved;
        g->lint();
        EXPECT_EQ(runOnCounting(g), expected) << "moving " << *n << (after ? "after " : "before ") << *point << "\n"
                                              << *original << "\n"
                                              << *g;
      } else {
        ++refused;
        // The same move without the analysis: when the graph is still well
        // formed, it often computes something else.
        auto unsafe = original->copy(map);
        Node* un = copied(nodes[from]);
        Node* up = copied(nodes[to]);
        after ? un->moveAfter(up) : un->moveBefore(up);
        try {
          unsafe->lint();
        } catch (const Error&) {
          continue;
        }
        unsafe_changes += runOnCounting(unsafe) != expected;
      }
    }
  }
  EXPECT_GT(moved, 50);
  EXPECT_GT(refused, 50);
  EXPECT_GT(unsafe_changes, 5);  // the refusals guard real hazards
}

TEST(AliasAwarePasses, RandomProgramsKeepResults) {
  std::mt19937 rng(99);
  int merged = 0, removed = 0;
  for (int program = 0; program < 150; ++program) {
    auto original = randomProgram(rng, /*return_all=*/false);
    const std::string expected = runOnCounting(original);
    auto count = [](const Graph& g) { return std::distance(g.nodes().begin(), g.nodes().end()); };
    auto cse = original->copy();
    merged += eliminateCommonSubexpression(cse);
    cse->lint();
    EXPECT_EQ(runOnCounting(cse), expected) << "cse\n" << *original << "\n" << *cse;
    auto dce = original->copy();
    eliminateDeadCode(dce);
    dce->lint();
    removed += count(*dce) < count(*original);
    EXPECT_EQ(runOnCounting(dce), expected) << "dce\n" << *original << "\n" << *dce;
    auto all = original->copy();
    eliminateCommonSubexpression(all);
    constantPropagation(all);
    eliminateDeadCode(all);
    EXPECT_EQ(runOnCounting(all), expected) << "all\n" << *original << "\n" << *all;
  }
  // The programs give the passes work.
  EXPECT_GT(merged, 20);
  EXPECT_GT(removed, 20);
}
