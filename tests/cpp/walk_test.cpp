#include "kiln/ir/walk.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"

using namespace kiln;

namespace {

// An if whose second branch holds a loop, between two plain nodes.
const char* kNestedText = R"IR(graph(%x : Tensor, %c : bool, %n : int):
  %one : int = prim::Constant[value=1]()
  %b : Tensor = prim::If(%c)
    block0():
      %t : Tensor = aten::neg(%x)
      -> (%t)
    block1():
      %l : Tensor = prim::Loop(%n, %c, %x)
        block0(%i : int, %acc : Tensor):
          %u : Tensor = aten::relu(%acc)
          -> (%c, %u)
      -> (%l)
  %d : Tensor = aten::sigmoid(%b)
  return (%d)
)IR";

std::string label(const Node* n) {
  const std::string& kind = n->kind().toQualString();
  return kind.substr(kind.find("::") + 2);
}

// A block by its owning node and index ("graph" for the top block).
std::string label(const Block* b) {
  const Node* owner = b->owningNode();
  if (!owner) return "graph";
  size_t index = 0;
  while (owner->blocks()[index] != b) ++index;
  return label(owner) + "." + std::to_string(index);
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " ") + p;
  return out;
}

template <typename Root>
std::string nodeOrder(Root&& root, WalkOrder order) {
  std::vector<std::string> seen;
  walkNodes(root, order, [&](const Node* n) { seen.push_back(label(n)); });
  return join(seen);
}

template <typename Root>
std::string blockOrder(Root&& root, WalkOrder order) {
  std::vector<std::string> seen;
  walkBlocks(root, order, [&](const Block* b) { seen.push_back(label(b)); });
  return join(seen);
}

Node* findNode(Graph& g, const char* kind) {
  Node* found = nullptr;
  walkNodes(g, WalkOrder::PreOrder, [&](Node* n) {
    if (label(n) != kind) return WalkResult::advance();
    found = n;
    return WalkResult::interrupt();
  });
  return found;
}

// Replaces the single-output node `n` by its first input and erases it.
void bypassAndErase(Node* n) {
  n->output()->replaceAllUsesWith(n->input(0));
  n->destroy();
}

}  // namespace

TEST(WalkTest, PreOrderVisitsANodeBeforeItsBlocks) {
  auto g = parseIR(kNestedText);
  EXPECT_EQ(nodeOrder(g->block(), WalkOrder::PreOrder), "Constant If neg Loop relu sigmoid");
  EXPECT_EQ(nodeOrder(*g, WalkOrder::PreOrder), "Constant If neg Loop relu sigmoid");
}

TEST(WalkTest, PostOrderVisitsANodeAfterItsBlocks) {
  auto g = parseIR(kNestedText);
  EXPECT_EQ(nodeOrder(g->block(), WalkOrder::PostOrder), "Constant neg relu Loop If sigmoid");
}

TEST(WalkTest, ConstWalksVisitTheSameNodes) {
  auto g = parseIR(kNestedText);
  const Graph& cg = *g;
  EXPECT_EQ(nodeOrder(cg, WalkOrder::PreOrder), "Constant If neg Loop relu sigmoid");
  EXPECT_EQ(nodeOrder(cg.block(), WalkOrder::PostOrder), "Constant neg relu Loop If sigmoid");
  EXPECT_EQ(blockOrder(cg, WalkOrder::PostOrder), "If.0 Loop.0 If.1 graph");
}

TEST(WalkTest, ANodeRootIsVisitedWithWhatIsNestedInIt) {
  auto g = parseIR(kNestedText);
  Node* if_node = findNode(*g, "If");
  ASSERT_NE(if_node, nullptr);
  EXPECT_EQ(nodeOrder(if_node, WalkOrder::PreOrder), "If neg Loop relu");
  EXPECT_EQ(nodeOrder(static_cast<const Node*>(if_node), WalkOrder::PostOrder), "neg relu Loop If");
  EXPECT_EQ(nodeOrder(findNode(*g, "sigmoid"), WalkOrder::PreOrder), "sigmoid");
}

TEST(WalkTest, BlocksInPreAndPostOrder) {
  auto g = parseIR(kNestedText);
  EXPECT_EQ(blockOrder(g->block(), WalkOrder::PreOrder), "graph If.0 If.1 Loop.0");
  EXPECT_EQ(blockOrder(g->block(), WalkOrder::PostOrder), "If.0 Loop.0 If.1 graph");
}

TEST(WalkTest, InterruptEndsTheWalk) {
  auto g = parseIR(kNestedText);
  for (WalkOrder order : {WalkOrder::PreOrder, WalkOrder::PostOrder}) {
    std::vector<std::string> seen;
    WalkResult result = walkNodes(*g, order, [&](Node* n) {
      seen.push_back(label(n));
      return label(n) == "relu" ? WalkResult::interrupt() : WalkResult::advance();
    });
    EXPECT_TRUE(result.wasInterrupted());
    EXPECT_EQ(join(seen), order == WalkOrder::PreOrder ? "Constant If neg Loop relu" : "Constant neg relu");
  }
  // A walk that runs to the end says so.
  EXPECT_FALSE(walkNodes(*g, WalkOrder::PreOrder, [](Node*) { return WalkResult::advance(); }).wasInterrupted());
  EXPECT_FALSE(walkNodes(*g, WalkOrder::PreOrder, [](Node*) {}).wasInterrupted());

  std::vector<std::string> blocks;
  WalkResult result = walkBlocks(*g, WalkOrder::PreOrder, [&](Block* b) {
    blocks.push_back(label(b));
    return label(b) == "If.1" ? WalkResult::interrupt() : WalkResult::advance();
  });
  EXPECT_TRUE(result.wasInterrupted());
  EXPECT_EQ(join(blocks), "graph If.0 If.1");
}

TEST(WalkTest, SkipLeavesOutWhatIsNested) {
  auto g = parseIR(kNestedText);
  std::vector<std::string> seen;
  walkNodes(*g, WalkOrder::PreOrder, [&](Node* n) {
    seen.push_back(label(n));
    return n->kind() == prim::If ? WalkResult::skip() : WalkResult::advance();
  });
  EXPECT_EQ(join(seen), "Constant If sigmoid");

  // In post-order the blocks are walked already: skip is advance.
  seen.clear();
  WalkResult result = walkNodes(*g, WalkOrder::PostOrder, [&](Node* n) {
    seen.push_back(label(n));
    return WalkResult::skip();
  });
  EXPECT_FALSE(result.wasInterrupted());
  EXPECT_EQ(join(seen), "Constant neg relu Loop If sigmoid");

  std::vector<std::string> blocks;
  walkBlocks(*g, WalkOrder::PreOrder, [&](Block* b) {
    blocks.push_back(label(b));
    return label(b) == "If.1" ? WalkResult::skip() : WalkResult::advance();
  });
  EXPECT_EQ(join(blocks), "graph If.0 If.1");
}

TEST(WalkTest, PostOrderVisitorMayEraseTheVisitedNode) {
  auto g = parseIR(kNestedText);
  std::vector<std::string> seen;
  walkNodes(*g, WalkOrder::PostOrder, [&](Node* n) {
    seen.push_back(label(n));
    if (n->kind() != prim::Constant && n->blocks().empty()) bypassAndErase(n);
  });
  EXPECT_EQ(join(seen), "Constant neg relu Loop If sigmoid");
  EXPECT_EQ(nodeOrder(*g, WalkOrder::PreOrder), "Constant If Loop");
  g->lint();
}

TEST(WalkTest, PreOrderVisitorMayEraseTheVisitedNodeAndSkip) {
  auto g = parseIR(kNestedText);
  std::vector<std::string> seen;
  walkNodes(*g, WalkOrder::PreOrder, [&](Node* n) {
    seen.push_back(label(n));
    if (n->kind() != prim::If) return WalkResult::advance();
    n->output()->replaceAllUsesWith(g->inputs()[0]);
    n->destroy();  // with its blocks
    return WalkResult::skip();
  });
  EXPECT_EQ(join(seen), "Constant If sigmoid");
  EXPECT_EQ(nodeOrder(*g, WalkOrder::PreOrder), "Constant sigmoid");
  g->lint();
}

TEST(WalkTest, NodesInsertedBeforeOrJustAfterTheVisitedNodeAreNotVisited) {
  for (WalkOrder order : {WalkOrder::PreOrder, WalkOrder::PostOrder}) {
    auto g = parseIR(kNestedText);
    size_t visits = 0;
    walkNodes(*g, order, [&](Node* n) {
      ++visits;
      if (n->kind() == prim::Constant || !n->blocks().empty()) return;
      // Each visit adds a copy on either side of the node: a walk that
      // visited them would never end.
      g->create(n->kind(), {n->input(0)})->insertBefore(n)->output()->setType(n->output()->type());
      g->create(n->kind(), {n->input(0)})->insertAfter(n)->output()->setType(n->output()->type());
    });
    EXPECT_EQ(visits, 6u);
    EXPECT_EQ(nodeOrder(*g, WalkOrder::PreOrder),
              "Constant If neg neg neg Loop relu relu relu sigmoid sigmoid sigmoid");
    g->lint();
  }
}

TEST(WalkTest, NodesInsertedFurtherOnAreVisited) {
  auto g = parseIR(kNestedText);
  Node* sigmoid = findNode(*g, "sigmoid");
  std::vector<std::string> seen;
  walkNodes(*g, WalkOrder::PreOrder, [&](Node* n) {
    seen.push_back(label(n));
    if (n->kind() == prim::Constant) {
      Node* later = g->create(Symbol::aten("tanh"), {g->inputs()[0]});
      later->output()->setType(g->inputs()[0]->type());
      later->insertBefore(sigmoid);
    }
  });
  EXPECT_EQ(join(seen), "Constant If neg Loop relu tanh sigmoid");
}

TEST(WalkTest, VisitorMayMoveTheVisitedNodeBack) {
  // Hoisting out of blocks, as loop-invariant code motion does: the moved
  // node lands before its enclosing node, which the walk has passed.
  auto g = parseIR(kNestedText);
  std::vector<std::string> seen;
  walkNodes(*g, WalkOrder::PostOrder, [&](Node* n) {
    seen.push_back(label(n));
    if (n->kind() == aten::neg) n->moveBefore(n->owningBlock()->owningNode());
  });
  EXPECT_EQ(join(seen), "Constant neg relu Loop If sigmoid");
  EXPECT_EQ(nodeOrder(*g, WalkOrder::PreOrder), "Constant neg If Loop relu sigmoid");
  g->lint();
}

TEST(WalkTest, BlockVisitorMayRewriteItsBlock) {
  auto g = parseIR(kNestedText);
  // Pre-order: the walk reads the block's nodes after its visitor, so the
  // loop erased from If.1 is not entered.
  std::vector<std::string> seen;
  walkBlocks(*g, WalkOrder::PreOrder, [&](Block* b) {
    seen.push_back(label(b));
    if (label(b) != "If.1") return;
    Node* loop = b->nodes().front();
    b->replaceOutput(0, g->inputs()[0]);
    loop->destroy();
  });
  EXPECT_EQ(join(seen), "graph If.0 If.1");
  EXPECT_EQ(nodeOrder(*g, WalkOrder::PreOrder), "Constant If neg sigmoid");
  g->lint();

  // Post-order: each block gets a node prepended after its nested blocks were walked.
  seen.clear();
  walkBlocks(*g, WalkOrder::PostOrder, [&](Block* b) {
    seen.push_back(label(b));
    Node* c = g->create(prim::Constant);
    c->i_(attr::value, 7);
    c->output()->setType(IntType::get());
    b->prependNode(c);
  });
  EXPECT_EQ(join(seen), "If.0 If.1 graph");
  EXPECT_EQ(nodeOrder(*g, WalkOrder::PreOrder), "Constant Constant If Constant neg Constant sigmoid");
  g->lint();
}
