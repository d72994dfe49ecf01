#include "kiln/tensor/type_promotion.h"

namespace kiln {

namespace {

// PyTorch's combine_categories: the higher tier wins unless the lower tier is
// of a higher category (a float scalar with an int tensor gives a float).
ScalarType combineCategories(ScalarType higher, ScalarType lower) {
  if (isComplexType(higher)) return higher;
  // A complex lower tier keeps a floating higher tier's precision (float64
  // tensor * 1j is complex128); an integral higher tier takes the complex type.
  if (isComplexType(lower)) return isFloatingType(higher) ? toComplexType(higher) : lower;
  if (isFloatingType(higher)) return higher;
  if (higher == ScalarType::Bool || isFloatingType(lower)) {
    if (higher == ScalarType::Undefined) return lower;
    if (lower == ScalarType::Undefined) return higher;
    return promoteTypes(higher, lower);
  }
  if (higher != ScalarType::Undefined) return higher;
  return lower;
}

}  // namespace

ScalarType resultType(ArrayRef<PromotionOperand> operands) {
  ScalarType tiers[3] = {ScalarType::Undefined, ScalarType::Undefined, ScalarType::Undefined};
  for (const PromotionOperand& op : operands) {
    ScalarType dtype = op.dtype;
    if (op.tier == PromotionTier::WrappedNumber && isFloatingType(dtype)) dtype = defaultFloatType();
    if (op.tier == PromotionTier::WrappedNumber && isComplexType(dtype)) dtype = ScalarType::ComplexFloat;
    ScalarType& tier = tiers[static_cast<int>(op.tier)];
    tier = tier == ScalarType::Undefined ? dtype : promoteTypes(tier, dtype);
  }
  return combineCategories(tiers[0], combineCategories(tiers[1], tiers[2]));
}

}  // namespace kiln
