#include <gtest/gtest.h>

#include <algorithm>

#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/ir/schema_match.h"

using namespace kiln;

namespace {

// Operators only these tests use, registered at run time the way a shared
// library loaded later would add them.
void registerTestOps() {
  static bool done = [] {
    auto noop = [](Stack&) {};
    registerOperator(parseSchema("test::pick(int a, int b=3) -> int"), noop);
    registerOperator(parseSchema("test::pick.float(float a, float b) -> float"), noop);
    registerOperator(parseSchema("test::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)"), noop);
    registerOperator(parseSchema("test::first.t(t[] self) -> t"), noop);
    registerOperator(parseSchema("test::two(Tensor a) -> (Tensor, Tensor)"), noop);
    registerOperator(parseSchema("test::conv(Tensor a, int[2] stride=1) -> Tensor"), noop);
    return true;
  }();
  (void)done;
}

std::string lintError(const Graph& g) {
  try {
    g.lint();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

const char* kIfLoopText = R"IR(graph(%x : Tensor,
      %n : int,
      %c : bool):
  %3 : int = prim::Constant[value=1]()
  %4 : Tensor = prim::If(%c)
    block0():
      %5 : Tensor = aten::add(%x, %x, %3)
      -> (%5)
    block1():
      -> (%x)
  %6 : Tensor = prim::Loop(%n, %c, %4)
    block0(%i : int, %acc : Tensor):
      %9 : Tensor = aten::add(%acc, %x, %3)
      -> (%c, %9)
   = prim::Print(%6)
  return (%6)
)IR";

}  // namespace

TEST(Graph, BuildsAndPrintsLikePyTorch) {
  auto g = std::make_shared<Graph>();
  Value* x = g->addInput("x");
  Value* y = g->addInput("y");
  Value* sum = g->insert(aten::add, {x, y});
  g->registerOutput(sum);
  g->lint();
  EXPECT_EQ(g->toString(),
            "graph(%x : Tensor,\n"
            "      %y : Tensor):\n"
            "  %2 : int = prim::Constant[value=1]()\n"
            "  %3 : Tensor = aten::add(%x, %y, %2)\n"
            "  return (%3)\n");
  EXPECT_EQ(sum->node()->schema().overloadName(), "Tensor");
}

TEST(Graph, InputAndOutputEditingKeepsUseLists) {
  auto g = std::make_shared<Graph>();
  Value* a = g->addInput("a");
  Value* b = g->addInput("b");
  Node* n = g->insertNode(g->create(Symbol::fromQualString("test::f"), {a, b, a}, 2));
  EXPECT_EQ(a->uses().size(), 2u);
  n->insertInput(0, b);  // b, a, b, a
  EXPECT_EQ(n->inputs()[3], a);
  for (const Use& u : a->uses()) EXPECT_EQ(n->inputs()[u.offset], a);
  n->removeInput(1);  // b, b, a
  for (Value* v : {a, b}) {
    for (const Use& u : v->uses()) EXPECT_EQ(n->inputs()[u.offset], v);
  }
  EXPECT_EQ(b->uses().size(), 2u);
  n->replaceInputWith(b, a);
  EXPECT_FALSE(b->hasUses());
  EXPECT_EQ(a->uses().size(), 3u);
  n->replaceInput(2, b);
  EXPECT_EQ(b->uses().size(), 1u);
  EXPECT_EQ(b->uses()[0].offset, 2u);
  n->permuteInputs({2, 0, 1});  // b, a, a
  EXPECT_EQ(n->inputs()[0], b);
  EXPECT_EQ(b->uses()[0].offset, 0u);
  g->registerOutput(n->output(1));
  EXPECT_EQ(n->output(1)->offset(), 1u);
  n->eraseOutput(0);
  EXPECT_EQ(n->output(0)->offset(), 0u);
  Value* inserted = n->insertOutput(0);
  EXPECT_EQ(n->output(1)->offset(), 1u);
  EXPECT_EQ(inserted->offset(), 0u);
  g->lint();
  Value* c = g->insertInput(1, "c");
  EXPECT_EQ(g->inputs()[1], c);
  EXPECT_EQ(g->inputs()[2], b);
  g->eraseInput(1);
  g->lint();
}

TEST(Graph, ReplaceAllUsesAndDestroy) {
  auto g = parseIR(kIfLoopText);
  g->lint();
  Value* x = g->inputs()[0];
  Node* add_in_if = g->nodes().front()->next()->blocks()[0]->nodes().front();
  ASSERT_EQ(add_in_if->kind(), aten::add);
  Value* fresh = g->addInput("fresh");
  x->replaceAllUsesWith(fresh);
  EXPECT_FALSE(x->hasUses());
  EXPECT_EQ(add_in_if->input(0), fresh);
  g->lint();
  g->eraseInput(0);
  // Destroying the node that prints removes its use of the loop's result.
  Node* print = g->returnNode()->prev();
  ASSERT_EQ(print->kind(), prim::Print);
  Value* loop_out = print->input(0);
  EXPECT_EQ(loop_out->uses().size(), 2u);
  print->destroy();
  EXPECT_EQ(loop_out->uses().size(), 1u);
  g->lint();
}

TEST(Graph, ReplaceUsesAfterAndDominatedBy) {
  auto g = parseIR(R"IR(graph(%a : Tensor, %b : Tensor):
  %2 : Tensor = test::f(%a)
  %3 : Tensor = test::g(%a)
  %4 : Tensor = prim::If(%b)
    block0():
      %5 : Tensor = test::h(%a)
      -> (%5)
    block1():
      -> (%a)
  return (%4)
)IR");
  Value* a = g->inputs()[0];
  Node* f = g->nodes().front();
  Node* gnode = f->next();
  Node* if_node = gnode->next();
  Value* b = g->inputs()[1];
  a->replaceAllUsesAfterNodeWith(gnode, b);
  EXPECT_EQ(f->input(), a);
  EXPECT_EQ(gnode->input(), a);
  EXPECT_EQ(if_node->blocks()[0]->nodes().front()->input(), b);
  EXPECT_EQ(if_node->blocks()[1]->outputs()[0], b);
  b->replaceAllUsesDominatedByNodeWith(if_node->blocks()[0]->nodes().front(), a);  // nothing after it there
  b->replaceAllUsesDominatedByNodeWith(f, a);
  EXPECT_EQ(if_node->input(), a);
  g->lint();
}

TEST(Graph, InsertionPointsAndGuard) {
  auto g = std::make_shared<Graph>();
  Value* x = g->addInput("x");
  Node* last = g->insertNode(g->create(Symbol::fromQualString("test::last"), {x}));
  {
    WithInsertPoint guard(last);
    g->insertNode(g->create(Symbol::fromQualString("test::first"), {x}));
    EXPECT_EQ(g->insertPoint(), last);
  }
  EXPECT_EQ(g->insertPoint(), g->returnNode());
  g->insertNode(g->create(Symbol::fromQualString("test::end"), {x}));
  std::vector<std::string> kinds;
  for (Node* n : g->nodes()) kinds.push_back(n->kind().toQualString());
  EXPECT_EQ(kinds, (std::vector<std::string>{"test::first", "test::last", "test::end"}));
  // moveBefore / moveAfter / insertAfter
  Node* first = g->nodes().front();
  first->moveAfter(g->nodes().back());
  EXPECT_EQ(g->nodes().back(), first);
  first->moveBefore(last);
  EXPECT_EQ(g->nodes().front(), first);
  Node* extra = g->create(Symbol::fromQualString("test::extra"), {x});
  extra->insertAfter(g->paramNode());
  EXPECT_EQ(g->nodes().front(), extra);
  g->lint();
  // A guard whose point was destroyed leaves the insertion point valid.
  {
    Node* doomed = g->insertNode(g->create(Symbol::fromQualString("test::doomed"), 0));
    WithInsertPoint guard(doomed);
    doomed->destroy();
  }
  EXPECT_TRUE(g->insertPoint()->inBlockList());
}

TEST(Graph, BlocksAddAndErase) {
  auto g = parseIR(kIfLoopText);
  Node* if_node = g->nodes().front()->next();
  ASSERT_EQ(if_node->kind(), prim::If);
  Block* extra = if_node->addBlock();
  extra->registerOutput(g->inputs()[0]);
  EXPECT_TRUE(contains(lintError(*g), "prim::If needs 2 blocks"));
  if_node->eraseBlock(2);
  g->lint();
  EXPECT_EQ(if_node->blocks().size(), 2u);
}

TEST(Graph, IsBeforeAndAfterAcrossBlocksAndManyInserts) {
  auto g = parseIR(kIfLoopText);
  Node* constant = g->nodes().front();
  Node* if_node = constant->next();
  Node* loop = if_node->next();
  Node* in_if = if_node->blocks()[0]->nodes().front();
  Node* in_loop = loop->blocks()[0]->nodes().front();
  EXPECT_TRUE(constant->isBefore(if_node));
  EXPECT_TRUE(in_if->isBefore(loop));
  EXPECT_TRUE(in_loop->isAfter(in_if));
  EXPECT_TRUE(constant->isBefore(in_loop));
  EXPECT_FALSE(in_if->isBefore(if_node));  // nested in it: neither before nor after
  EXPECT_FALSE(in_if->isAfter(if_node));
  EXPECT_FALSE(loop->isBefore(loop));
  // Thousands of inserts at one point force the block to renumber; the
  // order must stay exact.
  Value* x = g->inputs()[0];
  std::vector<Node*> inserted;
  {
    WithInsertPoint guard(if_node);
    for (int i = 0; i < 5000; ++i) inserted.push_back(g->insertNode(g->create(Symbol::fromQualString("test::n"), {x})));
  }
  for (int i = 0; i < 3000; ++i) {
    Node* n = g->create(Symbol::fromQualString("test::front"), {x});
    g->prependNode(n);
    inserted.insert(inserted.begin(), n);
  }
  for (size_t i = 1; i < inserted.size(); i += 97) EXPECT_TRUE(inserted[i - 1]->isBefore(inserted[i]));
  for (size_t i = 0; i < inserted.size(); i += 101) {
    EXPECT_TRUE(inserted[i]->isBefore(in_loop));
    EXPECT_TRUE(inserted[i]->isBefore(if_node));
  }
  g->lint();
}

TEST(Graph, CopyKeepsTextAndMapsValues) {
  auto g = parseIR(kIfLoopText);
  std::unordered_map<const Value*, Value*> map;
  GraphPtr copy = g->copy(map);
  copy->lint();
  EXPECT_EQ(copy->toString(), g->toString());
  EXPECT_EQ(map.at(g->inputs()[1]), copy->inputs()[1]);
  EXPECT_EQ(map.at(g->outputs()[0]), copy->outputs()[0]);
  EXPECT_EQ(map.at(g->outputs()[0])->owningGraph(), copy.get());
  // Blocks clone into other graphs; values from outside come from the map.
  auto h = std::make_shared<Graph>();
  Value* hx = h->addInput("x");
  Value* hn = h->addInput("n");
  Value* hc = h->addInput("c");
  Node* loop = std::next(g->nodes().begin(), 2).operator*();
  ASSERT_EQ(loop->kind(), prim::Loop);
  Node* clone = h->createClone(loop, [&](const Value* v) -> Value* {
    if (v == g->inputs()[0]) return hx;
    if (v == g->inputs()[1]) return hn;
    if (v == g->inputs()[2]) return hc;
    return h->insertConstant(int64_t{1});
  });
  h->insertNode(clone);
  h->registerOutput(clone->output());
  h->lint();
}

TEST(Graph, SubgraphAttributesCopyDeeplyAndPrintAsSections) {
  auto sub = parseIR("graph(%a : Tensor):\n  %1 : Tensor = aten::relu(%a)\n  return (%1)\n");
  auto g = std::make_shared<Graph>();
  Value* x = g->addInput("x");
  Node* group = g->insertNode(g->create(prim::FusionGroup, {x}));
  group->g_(attr::Subgraph, sub);
  group->i_(Symbol::attr("tag"), 7);
  g->registerOutput(group->output());
  const std::string text =
      "graph(%x : Tensor):\n"
      "  %1 : Tensor = prim::FusionGroup_0[tag=7](%x)\n"
      "  return (%1)\n"
      "with prim::FusionGroup_0 = graph(%a : Tensor):\n"
      "  %1 : Tensor = aten::relu(%a)\n"
      "  return (%1)\n";
  EXPECT_EQ(g->toString(), text);
  GraphPtr copy = g->copy();
  EXPECT_NE(copy->nodes().front()->g(attr::Subgraph).get(), sub.get());
  EXPECT_EQ(copy->toString(), text);
  auto parsed = parseIR(text);
  EXPECT_EQ(parsed->toString(), text);
  EXPECT_EQ(parsed->nodes().front()->kind(), prim::FusionGroup);
}

TEST(Graph, InsertGraphInlines) {
  auto callee = parseIR(
      "graph(%a : Tensor, %b : Tensor):\n  %2 : int = prim::Constant[value=1]()\n"
      "  %3 : Tensor = aten::add(%a, %b, %2)\n  return (%3)\n");
  auto g = std::make_shared<Graph>();
  Value* x = g->addInput("x");
  auto outs = g->insertGraph(*callee, {x, x});
  g->registerOutput(outs.at(0));
  g->lint();
  EXPECT_EQ(g->nodes().back()->kind(), aten::add);
}

TEST(Graph, DebugNamesUniqueLikePyTorch) {
  // The sequences PyTorch 1.13 produces for the same calls.
  auto g = std::make_shared<Graph>();
  std::vector<Value*> v;
  for (int i = 0; i < 8; ++i) v.push_back(g->addInput());
  v[0]->setDebugName("x");
  v[1]->setDebugName("x");
  EXPECT_EQ(v[0]->debugName(), "x.1");
  EXPECT_EQ(v[1]->debugName(), "x");
  v[2]->setDebugName("x");
  EXPECT_EQ(v[1]->debugName(), "x.3");
  v[3]->setDebugName("x.1");
  EXPECT_EQ(v[0]->debugName(), "x.5");
  EXPECT_EQ(v[3]->debugName(), "x.1");
  v[4]->setDebugName("y.5");
  v[5]->setDebugName("y.5");
  EXPECT_EQ(v[4]->debugName(), "y.6");
  v[6]->setDebugName("y");
  v[7]->setDebugName("y");
  EXPECT_EQ(v[6]->debugName(), "y.8");
  EXPECT_EQ(v[7]->debugNameBase(), "y");
  EXPECT_EQ(v[4]->debugNameBase(), "y");
  EXPECT_THROW(v[0]->setDebugName("12"), Error);
  v[0]->setDebugName("");
  EXPECT_EQ(v[0]->debugName(), std::to_string(v[0]->unique()));
  g->lint();
}

TEST(Graph, AttributesOfEveryKind) {
  auto g = std::make_shared<Graph>();
  Node* n = g->insertNode(g->create(Symbol::fromQualString("test::attrs"), 0));
  auto a = [](const char* s) { return Symbol::attr(s); };
  n->f_(a("f"), 1.5)->fs_(a("fs"), {1.0, 0.5, 1e20})->i_(a("i"), -3)->is_(a("is"), {1, 2});
  n->s_(a("s"), "a\"b\n")->ss_(a("ss"), {"x", "y"})->ty_(a("ty"), ListType::ofInts());
  n->tys_(a("tys"), {IntType::get(), OptionalType::ofTensor()})->ival_(a("ival"), IValue(std::vector<int64_t>{}));
  n->t_(a("t"), scalarToTensor(Scalar(2.5), ScalarType::Float))
      ->ts_(a("ts"), {})
      ->g_(a("g"), std::make_shared<Graph>());
  EXPECT_EQ(n->kindOf(a("fs")), AttributeKind::fs);
  EXPECT_EQ(n->i(a("i")), -3);
  EXPECT_EQ(n->ss(a("ss"))[1], "y");
  EXPECT_THROW(n->i(a("f")), Error);
  EXPECT_THROW(n->i(a("missing")), Error);
  EXPECT_THROW(n->i_(Symbol::aten("x"), 1), Error);
  std::ostringstream out;
  out << *n;
  EXPECT_EQ(out.str(),
            " = test::attrs[f=1.5, fs=[1., 0.5, 1e+20], i=-3, is=[1, 2], s=\"a\\\"b\\n\", ss=[\"x\", \"y\"], "
            "ty=int[], tys=[int, Tensor?], ival=annotate(List[int], []), t={2.5}, ts=[<Tensors>], g=<Graph>]()\n");
  n->removeAttribute(a("g"));
  EXPECT_FALSE(n->hasAttribute(a("g")));
  n->i_(a("i"), 4);  // overwrite keeps the position
  EXPECT_EQ(n->attributeNames()[2], a("i"));
}

TEST(Graph, SourceRangesPrintAsComments) {
  auto g = std::make_shared<Graph>();
  Value* x = g->addInput("x");
  auto source = std::make_shared<Source>("def f(x):\n    return x.relu()\n", "f.py", 10);
  Node* n = g->insertNode(g->create(aten::relu, {x}));
  n->setSourceRange(SourceRange(source, 21, 29));
  g->registerOutput(n->output());
  EXPECT_TRUE(contains(g->toString(), "aten::relu(%x) # f.py:11:11\n"));
  EXPECT_FALSE(contains(g->toString(false), "#"));
  EXPECT_TRUE(contains(n->sourceRange().errorMessage("bad"), "f.py, line 11, column 12: bad\n    return x.relu()\n"));
}

TEST(Graph, ScopesPrintAfterInputs) {
  auto g = std::make_shared<Graph>();
  Value* x = g->addInput("x");
  g->pushScope("__module.encoder");
  g->pushScope("__module.encoder.layer");
  Node* n = g->insertNode(g->create(aten::relu, {x}));
  g->popScope();
  g->popScope();
  g->registerOutput(n->output());
  EXPECT_EQ(n->scopeName(), "__module.encoder/__module.encoder.layer");
  std::string text = g->toString();
  EXPECT_TRUE(contains(text, "aten::relu(%x), scope: __module.encoder/__module.encoder.layer\n"));
  EXPECT_EQ(parseIR(text)->toString(), text);
}

TEST(Lint, CatchesBrokenInvariants) {
  {
    auto g = parseIR(kIfLoopText);
    // Use before definition: move the constant after its users.
    Node* constant = g->nodes().front();
    constant->moveBefore(g->returnNode());
    EXPECT_TRUE(contains(lintError(*g), "where it is not defined")) << lintError(*g);
  }
  {
    // A value used after its block ended.
    auto g = parseIR(kIfLoopText);
    Node* if_node = g->nodes().front()->next();
    Value* inner = if_node->blocks()[0]->nodes().front()->output();
    g->registerOutput(inner);
    EXPECT_TRUE(contains(lintError(*g), "where it is not defined"));
  }
  {
    auto g = parseIR(kIfLoopText);
    g->create(Symbol::fromQualString("test::orphan"));
    EXPECT_TRUE(contains(lintError(*g), "created but is not in any block"));
  }
  {
    auto g = parseIR(kIfLoopText);
    Node* if_node = g->nodes().front()->next();
    if_node->blocks()[1]->registerOutput(g->inputs()[0]);
    EXPECT_TRUE(contains(lintError(*g), "a block of prim::If returns 2 values but the node has 1 outputs"));
  }
  {
    auto g = parseIR(kIfLoopText);
    Node* loop = std::next(g->nodes().begin(), 2).operator*();
    loop->blocks()[0]->eraseInput(0);
    EXPECT_TRUE(contains(lintError(*g), "the body of prim::Loop"));
  }
  {
    auto g = parseIR(kIfLoopText);
    Node* loop = std::next(g->nodes().begin(), 2).operator*();
    loop->addOutput();
    EXPECT_TRUE(contains(lintError(*g), "prim::Loop has 1 carried inputs but 2 outputs"));
  }
  {
    auto g = parseIR("graph(%a : Tensor):\n  %1 : int = prim::Constant(%a)\n  return (%1)\n");
    EXPECT_TRUE(contains(lintError(*g), "prim::Constant has no inputs"));
  }
  {
    // A node moved into its own block would use values before they exist.
    auto g = parseIR(kIfLoopText);
    Node* if_node = g->nodes().front()->next();
    Node* loop = if_node->next();
    loop->moveBefore(if_node->blocks()[0]->returnNode());
    EXPECT_NE(lintError(*g), "");
  }
}

TEST(Schema, NodeOverloadResolutionFromInputTypes) {
  registerTestOps();
  auto g = parseIR(R"IR(graph(%i : int, %f : float, %l : float[], %t : Tensor):
  %4 : int = test::pick(%i, %i)
  %5 : float = test::pick(%f, %f)
  %6 : Tensor = test::pick(%t, %t)
  %7 : float[] = test::append(%l, %f)
  %8 = test::first(%l)
  %9 : Tensor = test::append(%l, %t)
  return (%4, %5, %6, %7, %8)
)IR");
  std::vector<Node*> nodes(g->nodes().begin(), g->nodes().end());
  EXPECT_EQ(nodes[0]->schema().overloadName(), "");
  EXPECT_EQ(nodes[1]->schema().overloadName(), "float");
  EXPECT_EQ(nodes[2]->maybeSchema(), nullptr);
  EXPECT_THROW(nodes[2]->schema(), Error);
  EXPECT_EQ(nodes[3]->schema().overloadName(), "t");
  // An unannotated output takes the schema's declared type, as in PyTorch.
  EXPECT_EQ(irStr(*nodes[4]->output()->type()), "t");
  EXPECT_EQ(nodes[5]->maybeSchema(), nullptr);  // t matched to float, then Tensor
  EXPECT_EQ(nodes[0]->namedInput("b"), g->inputs()[0]);
  // Changing an input's type changes the choice.
  g->inputs()[0]->setType(FloatType::get());
  EXPECT_EQ(nodes[0]->schema().overloadName(), "float");
  g->inputs()[0]->setType(StringType::get());
  EXPECT_EQ(nodes[0]->maybeSchema(), nullptr);
  TypeEnv env;
  EXPECT_FALSE(matchTypeVariables(parseSchema("test::x(t[] a) -> t").arguments()[0].type, ListType::ofInts(), env));
  EXPECT_EQ(irStr(*evalTypeVariables(parseSchema("test::x(t a) -> Dict(str, t)").returns()[0].type, env)),
            "Dict(str, int)");
}

TEST(Schema, ParsedOutputTypesAreCheckedAgainstTheSchema) {
  registerTestOps();
  try {
    parseIR("graph(%i : int):\n  %1 : str = test::pick(%i, %i)\n  return (%1)\n");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "annotated type str does not match the schema's type int")) << e.what();
  }
}

TEST(Schema, GraphInsertMatchesSchemasAndInsertsConstants) {
  registerTestOps();
  auto g = std::make_shared<Graph>();
  Value* t = g->addInput("t");
  Value* picked = g->insert(Symbol::fromQualString("test::pick"), {4});
  EXPECT_EQ(picked->type()->kind(), TypeKind::Int);
  EXPECT_EQ(toIValue(picked->node()->input(1))->toInt(), 3);  // the default
  Value* fpicked = g->insert(Symbol::fromQualString("test::pick"), {1.5}, {{"b", IValue(2.5)}});
  EXPECT_EQ(fpicked->node()->schema().overloadName(), "float");
  Value* conv = g->insert(Symbol::fromQualString("test::conv"), {t, 2});
  EXPECT_EQ(toIValue(conv->node()->input(1))->toIntVector(), (std::vector<int64_t>{2, 2}));
  Value* pair = g->insert(Symbol::fromQualString("test::two"), {t});
  EXPECT_EQ(irStr(*pair->type()), "(Tensor, Tensor)");
  EXPECT_EQ(pair->node()->kind(), prim::TupleConstruct);
  Value* list =
      g->insert(Symbol::fromQualString("test::append"), {g->insertConstant(IValue(std::vector<double>{1.0})), 2.0});
  EXPECT_EQ(irStr(*list->type()), "float[]");
  g->registerOutput(list);
  g->lint();
  try {
    g->insert(Symbol::fromQualString("test::pick"), {"no"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "no overload of test::pick accepts these arguments")) << e.what();
    EXPECT_TRUE(contains(e.what(), "test::pick.float(float a, float b) -> float")) << e.what();
  }
  EXPECT_THROW(g->insert(Symbol::fromQualString("test::nonexistent"), {1}), Error);
  EXPECT_THROW(g->insert(Symbol::fromQualString("test::pick"), {1}, {{"zz", IValue(1)}}), Error);
}

TEST(Schema, GetReadsConstantInputsByName) {
  registerTestOps();
  auto g = std::make_shared<Graph>();
  Value* t = g->addInput("t");
  Value* conv = g->insert(Symbol::fromQualString("test::conv"), {t});
  Node* n = conv->node();
  EXPECT_TRUE(n->isConstant(Symbol::attr("stride")));
  EXPECT_FALSE(n->isConstant(Symbol::attr("a")));
  EXPECT_EQ(*n->get<std::vector<int64_t>>(Symbol::attr("stride")), (std::vector<int64_t>{1, 1}));
  EXPECT_THROW(n->get(Symbol::attr("nope")), Error);
}

TEST(Constants, InsertAndReadBack) {
  auto g = std::make_shared<Graph>();
  std::vector<IValue> values = {IValue(int64_t{3}),
                                IValue(2.5),
                                IValue(true),
                                IValue("s"),
                                IValue(),
                                IValue(Device(DeviceType::CUDA, 1)),
                                IValue(std::vector<int64_t>{1, 2}),
                                IValue::tuple({IValue(1), IValue("x")})};
  for (const IValue& v : values) {
    Value* c = g->insertConstant(v);
    g->registerOutput(c);
    auto back = toIValue(c);
    ASSERT_TRUE(back);
    EXPECT_TRUE(*back == v) << v;
  }
  EXPECT_EQ(g->toString(),
            "graph():\n"
            "  %0 : int = prim::Constant[value=3]()\n"
            "  %1 : float = prim::Constant[value=2.5]()\n"
            "  %2 : bool = prim::Constant[value=1]()\n"
            "  %3 : str = prim::Constant[value=\"s\"]()\n"
            "  %4 : NoneType = prim::Constant()\n"
            "  %5 : Device = prim::Constant[value=\"cuda:1\"]()\n"
            "  %6 : int[] = prim::Constant[value=[1, 2]]()\n"
            "  %7 : (int, str) = prim::Constant[value=(1, \"x\")]()\n"
            "  return (%0, %1, %2, %3, %4, %5, %6, %7)\n");
  auto reparsed = parseIR(g->toString());
  EXPECT_EQ(reparsed->toString(), g->toString());
  for (size_t i = 0; i < values.size(); ++i) EXPECT_TRUE(*toIValue(reparsed->outputs()[i]) == values[i]);
}

TEST(IRParser, RoundTripsCanonicalText) {
  const char* texts[] = {
      kIfLoopText,
      "graph(%a : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
      "      %b : Float(*, *, device=cpu),\n"
      "      %c : Long(requires_grad=1, device=cpu),\n"
      "      %d : Tensor(2, *),\n"
      "      %e : FloatTensor(device=cpu),\n"
      "      %f : (int, str)?[],\n"
      "      %g : Dict(str, Tensor),\n"
      "      %h : Union(float, int, str),\n"
      "      %i : NamedTuple(x : int, y : Tensor),\n"
      "      %j : __torch__.Mod,\n"
      "      %k : Future[int],\n"
      "      %l : Any):\n"
      "  return (%a)\n",
      "graph():\n"
      "  %0 : float = prim::Constant[value=-0.]()\n"
      "  %1 : float = prim::Constant[value=1.0000000000000001e-05]()\n"
      "  %2 : float = prim::Constant[value=inf]()\n"
      "  %3 : float = prim::Constant[value=-inf]()\n"
      "  %4 : Tensor = prim::Constant[value={1.5}]()\n"
      "  %5 : Dict(str, int) = prim::Constant[value={\"a\": 1, \"b\": 2}]()\n"
      "  %6 : int[][] = prim::Constant[value=[[1, 2], [3]]]()\n"
      "  %7 : Device = prim::Constant[value=torch.device(\"cpu\")]()\n"
      "  %8 : (int, bool, NoneType) = prim::Constant[value=(1, True, None)]()\n"
      "  %9 : int[] = prim::Constant[value=annotate(List[int], [])]()\n"
      "  %10 : Dict(str, int) = prim::Constant[value=annotate(Dict[str, int],{})]()\n"
      "  %11 : str = prim::Constant[value=\"\\0)+\\/.)\\001\\n\\\\\"]()\n"
      "   = prim::Print(%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11)\n"
      "  return ()\n",
  };
  for (const char* text : texts) {
    auto g = parseIR(text);
    g->lint();
    EXPECT_EQ(g->toString(), text);
  }
}

TEST(IRParser, RenumbersLikePyTorch) {
  auto g = parseIR(R"IR(graph(%x.1 : Tensor, %5 : int):
  %y.3 : Tensor = aten::relu(%x.1) # a.py:1:2
  %z : Tensor, %w : Tensor = prim::TupleUnpack(%y.3)
  return (%w)
)IR");
  EXPECT_EQ(g->toString(),
            "graph(%x.1 : Tensor,\n"
            "      %1 : int):\n"
            "  %2 : Tensor = aten::relu(%x.1)\n"
            "  %3 : Tensor, %4 : Tensor = prim::TupleUnpack(%2)\n"
            "  return (%4)\n");
}

TEST(IRParser, AttributeQuirksOfPyTorch) {
  // PyTorch reads `[]` as None and integral text as int even for float
  // outputs; kiln reads them the same way. `None` (which PyTorch cannot read)
  // is the value None, as the printer writes it.
  auto g = parseIR(
      "graph():\n  %0 : Tensor = test::a[x=[], y=None, z=2500000000000000, w=[int, float], v=[None]]()\n"
      "  return (%0)\n");
  Node* n = g->nodes().front();
  EXPECT_EQ(n->kindOf(Symbol::attr("x")), AttributeKind::ival);
  EXPECT_TRUE(n->ival(Symbol::attr("x")).isNone());
  EXPECT_TRUE(n->ival(Symbol::attr("y")).isNone());
  EXPECT_EQ(n->kindOf(Symbol::attr("z")), AttributeKind::i);
  EXPECT_EQ(n->kindOf(Symbol::attr("w")), AttributeKind::tys);
  EXPECT_EQ(g->toString(),
            "graph():\n  %0 : Tensor = test::a[x=None, y=None, z=2500000000000000, w=[int, float], v=[None]]()\n"
            "  return (%0)\n");
}

TEST(IRParser, ZeroOutputNodesAndNestedBlocks) {
  auto g = parseIR(R"IR(graph(%c : bool):
   = prim::If(%c)
    block0():
       = prim::If(%c)
        block0():
          -> ()
        block1():
          -> ()
      -> ()
    block1():
      -> ()
  return ()
)IR");
  g->lint();
  Node* outer = g->nodes().front();
  EXPECT_EQ(outer->outputs().size(), 0u);
  EXPECT_EQ(outer->blocks()[0]->nodes().front()->blocks().size(), 2u);
}

TEST(IRParser, ErrorsPointAtTheText) {
  struct Case {
    const char* text;
    const char* message;
    const char* where;
  };
  const Case cases[] = {
      {"graph(%a : Tensor):\n  %1 : Tensor = aten::relu(%b)\n  return (%1)\n", "no value named %b",
       "line 2, column 28"},
      {"graph(%a : Tensr):\n  return (%a)\n", "unknown type 'Tensr'", "line 1, column 12"},
      {"graph(%a : Tensor):\n  %1 : Tensor = aten::relu(%a\n  return (%1)\n", "expected ')'", "line 3, column 3"},
      {"graph(%a : Tensor):\n  %1 : Tensor = relu(%a)\n  return (%1)\n", "expected '::'", "line 2, column 21"},
      {"graph(%a : Tensor):\n  %1 : int = prim::Constant[value=\"abc]()\n  return (%1)\n", "unterminated string",
       "line 2, column 35"},
      {"graph(%a : Tensor):\n  %1 : int = prim::Constant[value=99999999999999999999]()\n  return (%1)\n",
       "out of range", "line 2, column 35"},
      {"graph(%a : Tensor):\n  %1 : Tensor = prim::If(%a)\n    block0():\n      -> (%a)\n",
       "expected a statement or 'return'", "line 5, column 1"},
      {"graph(%a : Tensor):\n  return (%a)\ntrailing", "unexpected 'trailing'", "line 3, column 1"},
      {"graph(%a : Float(2, 3, strides=[1])):\n  return (%a)\n", "has 1 strides", "line 1, column 17"},
      {"graph(%a : Tensor):\n  %1 : Tensor = prim::Constant[value=<Tensor>]()\n  return (%1)\n",
       "needs an output type with known sizes", "line 2, column 32"},
      {"graph(%a : Tensor):\n  %1 : str = prim::Constant[value=\"\\q\"]()\n  return (%1)\n", "unknown escape",
       "line 2, column 36"},
      {"graph(%a : Tensor) $\n", "unexpected character '$'", "line 1, column 20"},
  };
  for (const Case& c : cases) {
    try {
      parseIR(c.text);
      ADD_FAILURE() << "expected an error for:\n" << c.text;
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_TRUE(contains(msg, c.message)) << msg;
      EXPECT_TRUE(contains(msg, c.where)) << msg;
      EXPECT_TRUE(contains(msg, "^")) << msg;
    }
  }
}

TEST(IRParser, NestingDepthIsBounded) {
  std::string deep = "graph(%a : ";
  for (int i = 0; i < 5000; ++i) deep += "(";
  EXPECT_THROW(parseIR(deep), Error);
  std::string literal = "graph():\n  %0 : int = prim::Constant[value=";
  for (int i = 0; i < 5000; ++i) literal += "(";
  EXPECT_THROW(parseIR(literal), Error);
}
