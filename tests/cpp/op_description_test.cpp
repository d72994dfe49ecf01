// Properties of the operator descriptions as a whole (kiln/core/op_description.h).
#include <gtest/gtest.h>

#include <string>

#include "kiln/core/op_description.h"
#include "kiln/core/operator.h"

namespace kiln {
namespace {

bool hasTensorResult(const FunctionSchema& schema) {
  for (const Argument& result : schema.returns()) {
    TypePtr type = result.type;
    if (auto list = type->cast<ListType>()) type = list->elementType();
    if (auto optional = type->cast<OptionalType>()) type = optional->elementType();
    if (type->kind() == TypeKind::Tensor) return true;
  }
  return false;
}

// A shape rule describes tensor results (shapes::OutputFacts); on an
// overload without one (the list or string form of an op's name) it would
// only be a rule that never applies.
TEST(OpDescriptions, ShapeRulesOnlyOnOverloadsWithTensorResults) {
  std::string misplaced;
  for (const OperatorPtr& op : getAllOperators()) {
    if (op->description().shape && !hasTensorResult(op->schema())) misplaced += "\n  " + op->schema().str();
  }
  EXPECT_TRUE(misplaced.empty()) << "shape rules on overloads without a tensor result:" << misplaced;
}

bool sameArgumentTypes(const FunctionSchema& a, const FunctionSchema& b) {
  if (a.arguments().size() != b.arguments().size()) return false;
  for (size_t i = 0; i < a.arguments().size(); ++i) {
    if (*a.arguments()[i].type != *b.arguments()[i].type) return false;
  }
  return true;
}

// RemoveMutation turns `x.f_(args)` into `f(x, args)` only where f's shape
// rule proves the result keeps x's dtype; an in-place op whose functional
// form has no rule would never be rewritten.
TEST(OpDescriptions, FunctionalFormsOfInPlaceOpsHaveShapeRules) {
  std::string missing;
  size_t checked = 0;
  for (const OperatorPtr& op : getAllOperators()) {
    const FunctionSchema& schema = op->schema();
    const std::string& name = schema.name();
    if (name.rfind("aten::", 0) != 0 || name.size() < 2 || name.back() != '_' || name.substr(name.size() - 2) == "__") {
      continue;
    }
    if (schema.arguments().empty() || !schema.arguments()[0].isOutOrInPlace()) continue;
    if (schema.arguments()[0].type->kind() != TypeKind::Tensor) continue;  // lists need no types
    Symbol pure = Symbol::fromQualString(name.substr(0, name.size() - 1));
    for (const OperatorPtr& candidate : getAllOperatorsFor(pure)) {
      const FunctionSchema& functional = candidate->schema();
      if (!sameArgumentTypes(functional, schema)) continue;
      ++checked;
      if (!candidate->description().shape) missing += "\n  " + functional.str();
    }
  }
  EXPECT_GT(checked, 150u);  // the in-place ops kiln has
  EXPECT_TRUE(missing.empty()) << "functional forms of in-place ops without a shape rule:" << missing;
}

}  // namespace
}  // namespace kiln
