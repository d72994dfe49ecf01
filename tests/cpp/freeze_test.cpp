// kiln::freeze and kiln::freezeModule (kiln/api/freeze.h) from C++: modules
// built with the Module API, frozen; what stays an attribute, what becomes
// a constant, and the errors. (tests/python/test_freeze.py compares with
// torch.jit.freeze.)
#include <gtest/gtest.h>

#include "kiln/api/kiln.h"
#include "kiln/ir/graph.h"
#include "kiln/ir/ir_parser.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/reduce.h"

#include "pass_test_util.h"

using namespace kiln;
using kiln::testing::countNodes;
using kiln::testing::errorOf;

namespace {

double sumOf(const IValue& v) { return sum(v.toTensor()).item().toDouble(); }

// Net: forward(x) = sub(x) * scale + bias, with sub(x) = x * w + version,
// and a helper that writes `scale`.
Module makeNet() {
  Module sub("Sub");
  sub.register_parameter("w", full({3}, Scalar(2.0), ScalarType::Float));
  sub.register_attribute("version", IntType::get(), IValue(int64_t{1}));
  sub.define("def forward(self, x: Tensor) -> Tensor:\n    return x * self.w + self.version\n");
  Module unused("Unused");
  unused.register_parameter("w", ones({3}));
  Module net("Net");
  net.register_module("sub", sub);
  net.register_module("unused", unused);
  net.register_buffer("bias", full({3}, Scalar(0.5), ScalarType::Float));
  net.register_attribute("scale", FloatType::get(), IValue(3.0));
  net.define(R"PY(
def forward(self, x: Tensor) -> Tensor:
    y = self.sub(x) * self.scale
    if self.training:
        y = y * 0.0
    return y + self.bias

def helper(self, x: Tensor) -> Tensor:
    self.scale = self.scale + 1.0
    return x * self.scale
)PY");
  return net;
}

}  // namespace

TEST(Freeze, FoldsAttributesIntoConstants) {
  Module net = makeNet();
  net.eval();
  Module frozen = freeze(net);
  IValue x(ones({3}));
  // (1 * 2 + 1) * 3 + 0.5 = 9.5 per element
  EXPECT_DOUBLE_EQ(sumOf(frozen.forward({x})), 28.5);
  EXPECT_DOUBLE_EQ(sumOf(net.forward({x})), 28.5);
  auto graph = frozen.get_method("forward").graph();
  EXPECT_EQ(countNodes(graph->block(), "prim::GetAttr"), 0u) << *graph;
  EXPECT_EQ(countNodes(graph->block(), "prim::CallMethod"), 0u) << *graph;
  EXPECT_EQ(countNodes(graph->block(), "prim::If"), 0u) << *graph;
  EXPECT_TRUE(frozen.parameters().empty());
  EXPECT_TRUE(frozen.buffers().empty());
  EXPECT_TRUE(frozen.children().empty());
  EXPECT_FALSE(frozen.hasattr("training"));
  EXPECT_FALSE(frozen.find_method("helper"));
  // The original keeps everything.
  EXPECT_EQ(net.parameters().size(), 2u);
  EXPECT_TRUE(net.find_method("helper"));
  EXPECT_NE(net.type().get(), frozen.type().get());
  // Constants share the module's tensors, as torch's do.
  Module(net.attr("sub").toObject()).attr("w").toTensor().data<float>()[0] = 10.0f;
  EXPECT_DOUBLE_EQ(sumOf(frozen.forward({x})), 28.5 + 24.0);
}

TEST(Freeze, KeepsPreservedAndWrittenAttributes) {
  Module net = makeNet();
  net.eval();
  Module frozen = freeze(net, std::vector<std::string>{"helper", "sub.version"});
  ASSERT_TRUE(frozen.find_method("helper"));
  EXPECT_TRUE(frozen.hasattr("scale"));  // written by helper
  EXPECT_TRUE(frozen.hasattr("sub"));
  Module sub(frozen.attr("sub").toObject());
  EXPECT_TRUE(sub.hasattr("version"));
  EXPECT_FALSE(sub.hasattr("w"));
  EXPECT_TRUE(sub.parameters().empty());
  IValue x(ones({3}));
  EXPECT_DOUBLE_EQ(sumOf(frozen.run_method("helper", {x})), 12.0);
  EXPECT_DOUBLE_EQ(frozen.attr("scale").toDouble(), 4.0);
  EXPECT_DOUBLE_EQ(net.attr("scale").toDouble(), 3.0);
  sub.setattr("version", IValue(int64_t{2}));
  // (1 * 2 + 2) * 4 + 0.5
  EXPECT_DOUBLE_EQ(sumOf(frozen.forward({x})), 16.5 * 3);
  auto graph = frozen.get_method("forward").graph();
  EXPECT_EQ(countNodes(graph->block(), "prim::GetAttr"), 3u) << *graph;  // sub, version, scale
}

TEST(Freeze, InPlaceWritesKeepTheAttribute) {
  Module m("Counter");
  m.register_buffer("seen", zeros({1}));
  m.register_buffer("k", ones({1}));
  m.define(R"PY(
def forward(self, x: Tensor) -> Tensor:
    s = self.seen
    s.add_(1.0)
    x.add_(1.0)
    return x + self.seen + self.k
)PY");
  m.eval();
  Module frozen = freeze(m);
  EXPECT_TRUE(frozen.hasattr("seen"));
  EXPECT_FALSE(frozen.hasattr("k"));  // a write to the input is not a write to k
  EXPECT_DOUBLE_EQ(sumOf(frozen.forward({IValue(zeros({1}))})), 3.0);
  EXPECT_DOUBLE_EQ(sumOf(frozen.forward({IValue(zeros({1}))})), 4.0);
}

TEST(Freeze, FreezeModuleKeepsParametersInTrainingMode) {
  Module net = makeNet();
  Module frozen = freezeModule(net);
  EXPECT_EQ(frozen.parameters().size(), 1u);  // sub.w
  EXPECT_EQ(frozen.buffers().size(), 1u);     // bias
  EXPECT_TRUE(frozen.hasattr("training"));
  EXPECT_DOUBLE_EQ(sumOf(frozen.forward({IValue(ones({3}))})), 1.5);
}

TEST(Freeze, Errors) {
  Module net = makeNet();
  EXPECT_NE(errorOf([&] { freeze(net); }).find("Freezing is currently only implemented for modules in eval mode"),
            std::string::npos);
  net.eval();
  EXPECT_NE(errorOf([&] { freeze(net, std::vector<std::string>{"nope"}); }).find("Unknown name: nope"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { freeze(net, std::vector<std::string>{"sub.nope"}); }).find("Unknown name: sub.nope"),
            std::string::npos);

  Module selfish("Selfish");
  selfish.create_method("forward", parseIR("graph(%self : Tensor):\n  return (%self)\n"));
  selfish.eval();
  EXPECT_NE(errorOf([&] { freeze(selfish); }).find("attempted to freeze a module that returns itself"),
            std::string::npos);
}
