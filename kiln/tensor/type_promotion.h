#pragma once
// PyTorch's type promotion (result_type), over dtypes and how each operand
// takes part, with no tensors: the one function that the TensorIterator, the
// fuser's type inference and the shape analysis all call.
#include "kiln/tensor/scalar_type.h"
#include "kiln/util/array_ref.h"

namespace kiln {

// The tier of an operand in promotion: dimensioned tensors beat 0-dim ones,
// which beat wrapped numbers (Python numbers turned into 0-dim tensors),
// unless the lower tier is of a higher category (bool < integer < float).
enum class PromotionTier : uint8_t { Dimensioned, ZeroDim, WrappedNumber };

struct PromotionOperand {
  ScalarType dtype;
  PromotionTier tier;
};

// The dtype PyTorch computes in for these operands. A floating wrapped number
// counts as the default float dtype, whatever its own dtype. Undefined when
// there are no operands.
ScalarType resultType(ArrayRef<PromotionOperand> operands);

}  // namespace kiln
