// Element expressions with number parameters (kiln/ops/elementwise_ops.h's
// KILN_PARAM_OPS): the spec's template and the parameters' roles.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/core/function_schema.h"
#include "kiln/core/operator.h"
#include "kiln/ops/pointwise_spec.h"

namespace kiln {
namespace {

TEST(PointwiseParams, ParametersAreReadInTheComputeType) {
  auto spec = elementwiseFromCpp(pointwise::TypeRule::Promote, pointwise::DtypeSet::Floating,
                                 "self <= (T)0 ? m_exp(self * scale) - (T)1 : self * alpha_2", "(scale, alpha_2)");
  EXPECT_EQ(spec->expr, "$self <= ($T)0 ? m_exp($self * (($T)$scale)) - ($T)1 : $self * (($T)$alpha_2)");
  EXPECT_EQ(spec->params, (std::vector<std::string>{"scale", "alpha_2"}));
  EXPECT_NE(spec->check, nullptr);
}

TEST(PointwiseParams, DeclaredOpsHaveParamRoles) {
  const OperatorPtr op = findOperator(Symbol::fromQualString("aten::elu"), "");
  ASSERT_NE(op, nullptr);
  const PointwiseSpec* spec = op->description().pointwise.get();
  ASSERT_NE(spec, nullptr);
  const auto& args = op->schema().arguments();
  EXPECT_EQ(pointwise::argRole(args[0], *spec), pointwise::ArgRole::Operand);
  for (size_t i = 1; i < args.size(); ++i) EXPECT_EQ(pointwise::argRole(args[i], *spec), pointwise::ArgRole::Param);
}

}  // namespace
}  // namespace kiln
