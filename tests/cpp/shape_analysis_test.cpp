// Shape and type propagation (kiln/passes/analysis/shape_analysis.h) on
// compiled programs, whose input types only the C++ API can set. IR in,
// types out (per category of op, for unknown, rank-only and complete input
// types, through control flow, tuples, lists and mutation) is in
// tests/lit/passes/shape_propagation_cases.ir.
#include <gtest/gtest.h>

#include "kiln/api/kiln.h"
#include "kiln/ir/graph.h"
#include "kiln/passes/analysis/shape_analysis.h"

using namespace kiln;

namespace {

// A compiled program: `f`'s graph with its tensor inputs given these types.
std::shared_ptr<Graph> compiledGraph(const std::string& source, const std::vector<TypePtr>& input_types) {
  auto cu = compile(source);
  auto graph = cu->findFunction("f")->graph()->copy();
  for (size_t i = 0; i < input_types.size(); ++i) graph->inputs()[i]->setType(input_types[i]);
  propagateShapes(graph);
  return graph;
}

}  // namespace

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
