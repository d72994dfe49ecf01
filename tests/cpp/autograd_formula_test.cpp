// Derivative formulas (kiln/autograd/formula.h): one formula for several
// inputs ("input, weight, bias: ...") compiles to a single call of the
// backward op per needed-gradient set, with grad_input_mask set to the
// gradients needed.
#include <gtest/gtest.h>

#include "kiln/autograd/formula.h"
#include "kiln/core/operator.h"
#include "kiln/ir/graph.h"

namespace kiln {
namespace {

const autograd::OpDerivative& derivativeOf(const char* name, const char* overload) {
  OperatorPtr op = findOperator(Symbol::fromQualString(name), overload);
  EXPECT_TRUE(op) << name;
  const autograd::OpDerivative* derivative = autograd::derivativeFor(*op);
  EXPECT_TRUE(derivative) << name;
  return *derivative;
}

size_t countNodes(const Graph& graph, const char* kind) {
  size_t n = 0;
  for (const Node* node : graph.nodes()) n += node->kind() == Symbol::fromQualString(kind);
  return n;
}

TEST(AutogradFormulaTest, BatchNormGradientsShareOneBackwardCall) {
  const auto& derivative = derivativeOf("aten::native_batch_norm", "");
  ASSERT_EQ(derivative.formulas().size(), 3u);
  EXPECT_EQ(derivative.nodeName(), "NativeBatchNormBackward0");
  for (uint64_t needed = 1; needed < 8; ++needed) {
    const autograd::CompiledFormula& compiled = derivative.compiled(needed);
    EXPECT_EQ(countNodes(*compiled.graph, "aten::native_batch_norm_backward"), 1u) << needed;
    EXPECT_EQ(compiled.outputs.size(), static_cast<size_t>(__builtin_popcountll(needed)));
  }
}

TEST(AutogradFormulaTest, ConvolutionAndLayerNormGradientsShareOneBackwardCall) {
  const auto& conv = derivativeOf("aten::conv2d", "");
  EXPECT_EQ(countNodes(*conv.compiled(7).graph, "aten::convolution_backward"), 1u);
  EXPECT_EQ(countNodes(*conv.compiled(3).graph, "aten::convolution_backward"), 1u);
  const auto& layer_norm = derivativeOf("aten::native_layer_norm", "");
  EXPECT_EQ(countNodes(*layer_norm.compiled(7).graph, "aten::native_layer_norm_backward"), 1u);
}

TEST(AutogradFormulaTest, ReluUsesThresholdBackward) {
  const auto& relu = derivativeOf("aten::relu", "");
  EXPECT_EQ(relu.nodeName(), "ReluBackward0");
  const Graph& graph = *relu.compiled(1).graph;
  EXPECT_EQ(countNodes(graph, "aten::threshold_backward"), 1u);
  EXPECT_EQ(countNodes(graph, "aten::gt"), 0u);
}

}  // namespace
}  // namespace kiln
