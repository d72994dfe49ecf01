// The subgraph utilities (merge, unmerge, round trips keep results, types
// and names) and the fusion pass (which groups form in an LSTM cell; the
// graphs the pass makes of IR text, and what never fuses, are in
// tests/lit/fuser/fuse_cases.ir). Fused graphs run as they are (the
// fused-group operator) and with their groups unmerged again, and give the
// original program's results.
#include <gtest/gtest.h>

#include "kiln/api/kiln.h"
#include "kiln/fuser/graph_fuser.h"
#include "kiln/ir/subgraph_utils.h"
#include "kiln/passes/constant_pooling.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/pipeline.h"
#include "kiln/tensor/random.h"
#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::canonicalIR;
using kiln::testing::countNodes;
using kiln::testing::sameResults;

namespace {

Tensor randomFloats(std::vector<int64_t> sizes) { return randn(sizes, ScalarType::Float); }

Node* findNode(Block* block, std::string_view kind) {
  for (Node* n : block->nodes()) {
    if (n->kind().toQualString() == kind) return n;
  }
  return nullptr;
}

std::vector<std::string> names(ArrayRef<Value*> values) {
  std::vector<std::string> out;
  for (Value* v : values) out.push_back(v->debugName());
  return out;
}

// The graph with every group put back, constants pooled again, as text
// with its names.
std::string unmergedText(const std::shared_ptr<Graph>& g) {
  std::function<void(Block*)> unmergeAll = [&](Block* b) {
    for (auto it = b->nodes().begin(); it != b->nodes().end(); ++it) {
      for (Block* inner : it->blocks()) unmergeAll(inner);
      if (it->kind() != prim::FusionGroup) continue;
      Node* group = *it;
      --it;
      unmergeSubgraph(group);
    }
  };
  unmergeAll(g->block());
  constantPooling(g);
  eliminateDeadCode(g);
  g->lint();
  return canonicalIR(g->toString(false), /*keep_names=*/true);
}

const char* kChain = R"IR(
graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu), %s : float):
  %one : int = prim::Constant[value=1]()
  %a : Float(2, 3, device=cpu) = aten::add(%x, %y, %one)
  %b : Float(2, 3, device=cpu) = aten::mul(%a, %s)
  %c : Float(2, 3, device=cpu) = aten::sub(%b, %a, %one)
  return (%c, %a))IR";

// kChain with its node outputs named as written (the parser numbers them).
std::shared_ptr<Graph> namedChain() {
  auto g = parseIR(kChain);
  const char* written[] = {"one", "a", "b", "c"};
  size_t i = 0;
  for (Node* n : g->nodes()) n->output()->setDebugName(written[i++]);
  return g;
}

Stack chainInputs() {
  manualSeed(1);
  return {IValue(randomFloats({2, 3})), IValue(randomFloats({2, 3})), IValue(0.5)};
}

TEST(SubgraphUtils, SingletonHoldsTheNodeWithConstantsCopiedIn) {
  auto g = namedChain();
  Node* group = createSingletonSubgraph(findNode(g->block(), "aten::add"), prim::FusionGroup);
  g->lint();
  Graph& sub = getSubgraph(group);
  EXPECT_EQ(names(group->inputs()), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(names(group->outputs()), (std::vector<std::string>{"a"}));
  EXPECT_EQ(*group->output()->type(), *g->inputs()[0]->type());
  EXPECT_EQ(countNodes(sub.block(), "prim::Constant"), 1u);
  EXPECT_EQ(countNodes(sub.block(), "aten::add"), 1u);
  EXPECT_EQ(names(sub.inputs()), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(sub.outputs()[0]->debugName(), "a");
}

TEST(SubgraphUtils, MergedProducerWithLaterUsersBecomesAnOutput) {
  auto g = namedChain();
  std::string before = canonicalIR(g->toString(false), /*keep_names=*/true);
  std::vector<std::pair<std::string, Value*>> replacements;
  ValueReplaced record = [&](Value* from, Value* to) { replacements.emplace_back(from->debugName(), to); };
  Node* group = createSingletonSubgraph(findNode(g->block(), "aten::mul"), prim::FusionGroup, record);
  mergeNodeIntoSubgraph(findNode(g->block(), "aten::add"), group, record);
  g->lint();
  // Tensors first, scalars after; the merged node's inputs replace its output.
  EXPECT_EQ(names(group->inputs()), (std::vector<std::string>{"x", "y", "s"}));
  EXPECT_EQ(names(group->outputs()), (std::vector<std::string>{"b", "a"}));
  ASSERT_EQ(replacements.size(), 2u);
  EXPECT_EQ(replacements[0].first, "b");
  EXPECT_EQ(replacements[0].second, group->output(0));
  EXPECT_EQ(replacements[1].first, "a");
  EXPECT_EQ(replacements[1].second, group->output(1));
  EXPECT_EQ(findNode(g->block(), "aten::sub")->input(1), group->output(1));
  EXPECT_EQ(g->outputs()[1], group->output(1));

  auto original = parseIR(kChain);
  EXPECT_EQ(unmergedText(g), before);
  EXPECT_TRUE(sameResults(original, g, chainInputs()));
}

TEST(SubgraphUtils, MergingTwoSubgraphsAndUnmergingKeepsTheProgram) {
  auto g = namedChain();
  std::string before = canonicalIR(g->toString(false), /*keep_names=*/true);
  Node* producer = createSingletonSubgraph(findNode(g->block(), "aten::add"), prim::FusionGroup);
  Node* consumer = createSingletonSubgraph(findNode(g->block(), "aten::sub"), prim::FusionGroup);
  mergeNodeIntoSubgraph(findNode(g->block(), "aten::mul"), consumer);
  mergeSubgraphs(consumer, producer);
  g->lint();
  EXPECT_EQ(countNodes(g->block(), "prim::FusionGroup"), 1u);
  Graph& sub = getSubgraph(consumer);
  EXPECT_EQ(countNodes(sub.block(), "aten::add") + countNodes(sub.block(), "aten::mul") +
                countNodes(sub.block(), "aten::sub"),
            3u);
  EXPECT_EQ(names(consumer->inputs()), (std::vector<std::string>{"x", "y", "s"}));
  // %a is returned as well, so it stays an output.
  EXPECT_EQ(consumer->outputs().size(), 2u);
  EXPECT_EQ(unmergedText(g), before);
  EXPECT_TRUE(sameResults(parseIR(kChain), g, chainInputs()));
}

TEST(SubgraphUtils, UnmergeGivesOutputsTheirNamesAndOuterTypes) {
  auto g = parseIR(R"IR(
graph(%x : Float(2, 3, device=cpu)):
  %y : Float(2, 3, device=cpu) = prim::FusionGroup_0(%x)
  return (%y)
with prim::FusionGroup_0 = graph(%p : Tensor):
  %q : Tensor = aten::relu(%p)
  %r : Tensor = aten::neg(%q)
  return (%r))IR");
  g->outputs()[0]->setDebugName("y");
  std::vector<Node*> nodes = unmergeSubgraph(findNode(g->block(), "prim::FusionGroup"));
  g->lint();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(g->outputs()[0], nodes[1]->output());
  EXPECT_EQ(g->outputs()[0]->debugName(), "y");
  EXPECT_EQ(*g->outputs()[0]->type(), *g->inputs()[0]->type());
  EXPECT_EQ(nodes[0]->input(), g->inputs()[0]);
}

// --- the fusion pass ---------------------------------------------------------------------

size_t groupCount(const std::shared_ptr<Graph>& g) { return countNodes(g->block(), "prim::FusionGroup"); }

std::shared_ptr<Graph> fused(const char* ir) {
  auto g = parseIR(ir);
  fuseGraph(g);
  g->lint();
  return g;
}

TEST(GraphFuser, ChainBecomesOneGroup) {
  // The graph after the pass: tests/lit/fuser/fuse_cases.ir.
  auto g = fused(kChain);
  EXPECT_TRUE(sameResults(parseIR(kChain), g, chainInputs(), 1e-6));
  unmergedText(g);
  EXPECT_TRUE(sameResults(parseIR(kChain), g, chainInputs()));
}

TEST(GraphFuser, ConcatAndChunkGroupsKeepResults) {
  // The graph after the pass: tests/lit/fuser/fuse_cases.ir.
  const char* ir = R"IR(
graph(%x : Float(3, 8, device=cpu), %y : Float(3, 8, device=cpu), %b : Float(8, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %s : Float(3, 8, device=cpu) = aten::add(%x, %b, %one)
  %p0 : Float(3, 4, device=cpu), %p1 : Float(3, 4, device=cpu) = prim::ConstantChunk[chunks=2, dim=1](%s)
  %t : Float(3, 4, device=cpu) = aten::tanh(%p0)
  %u : Float(3, 4, device=cpu) = aten::mul(%t, %p1)
  %v : Float(3, 4, device=cpu) = aten::sigmoid(%p1)
  %w : Float(3, 4, device=cpu) = aten::sub(%v, %u, %one)
  %l : Tensor[] = prim::ListConstruct(%u, %w)
  %r : Float(6, 4, device=cpu) = aten::cat(%l, %zero)
  return (%r))IR";
  auto g = fused(ir);
  manualSeed(5);
  Stack inputs{IValue(randomFloats({3, 8})), IValue(randomFloats({3, 8})), IValue(randomFloats({8}))};
  EXPECT_TRUE(sameResults(parseIR(ir), g, inputs, 1e-6));
}

TEST(GraphFuser, InPlaceWriteBetweenOpsIsNotCrossed) {
  // The graph after the pass: tests/lit/fuser/fuse_cases.ir.
  const char* ir = R"IR(
graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %t : Tensor = aten::mul(%x, %y)
  %a : Tensor = aten::add(%t, %x, %one)
  %w : Tensor = aten::add_(%x, %y, %one)
  %b : Tensor = aten::mul(%a, %x)
  %c : Tensor = aten::tanh(%b)
  return (%c))IR";
  auto g = fused(ir);
  manualSeed(2);
  Stack inputs{IValue(randomFloats({2, 3})), IValue(randomFloats({2, 3}))};
  EXPECT_TRUE(sameResults(parseIR(ir), g, inputs, 1e-6));
  unmergedText(g);
  EXPECT_TRUE(sameResults(parseIR(ir), g, inputs));
}

const char* kLstmCell = R"PY(
def cell(x: Tensor, hx: Tensor, cx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor):
    gates = torch.mm(x, w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = torch.sigmoid(ingate)
    forgetgate = torch.sigmoid(forgetgate)
    cellgate = torch.tanh(cellgate)
    outgate = torch.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * torch.tanh(cy)
    return hy, cy
)PY";

TEST(GraphFuser, LstmCellIsOneGroupWithItsChunks) {
  manualSeed(4);
  Stack inputs{IValue(randomFloats({3, 10})),  IValue(randomFloats({3, 20})),  IValue(randomFloats({3, 20})),
               IValue(randomFloats({80, 10})), IValue(randomFloats({80, 20})), IValue(randomFloats({80})),
               IValue(randomFloats({80}))};
  auto unit = compile(kLstmCell);
  auto g = unit->findFunction("cell")->graph()->copy();
  // As the executor specializes a plan to its arguments.
  for (size_t i = 0; i < inputs.size(); ++i) g->inputs()[i]->inferTypeFrom(inputs[i].toTensor());
  runRequiredPasses(g);
  runOptimizationPasses(g);
  auto optimized = g->copy();
  fuseGraph(g);
  g->lint();
  ASSERT_EQ(groupCount(g), 1u) << *g;
  Node* group = findNode(g->block(), "prim::FusionGroup");
  Graph& sub = getSubgraph(group);
  // The products' sum is accumulated before (aten::addmm_, accumulate_products.h):
  // the group chunks it and the two biases.
  EXPECT_EQ(countNodes(g->block(), "aten::addmm_"), 1u) << *g;
  EXPECT_EQ(countNodes(sub.block(), "prim::ConstantChunk"), 3u) << *g;
  EXPECT_EQ(countNodes(sub.block(), "aten::add"), 9u) << *g;
  EXPECT_EQ(countNodes(sub.block(), "aten::sigmoid"), 3u);
  EXPECT_EQ(countNodes(sub.block(), "aten::tanh"), 2u);
  EXPECT_EQ(countNodes(sub.block(), "aten::mul"), 3u);
  EXPECT_EQ(group->outputs().size(), 2u);
  // The chunks read group inputs, one chunk each.
  for (Node* n : sub.nodes()) {
    if (n->kind() != prim::ConstantChunk) continue;
    EXPECT_EQ(n->input()->node(), sub.paramNode());
    EXPECT_EQ(n->input()->uses().size(), 1u);
  }
  EXPECT_EQ(countNodes(g->block(), "aten::broadcast_tensors"), 1u);

  EXPECT_TRUE(sameResults(optimized, g, inputs, 1e-6));
  unmergedText(g);
  EXPECT_TRUE(sameResults(optimized, g, inputs, 1e-6));
}

}  // namespace
