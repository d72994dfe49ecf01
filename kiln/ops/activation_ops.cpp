// Activation functions declared by their element expression
// (elementwise_ops.h): each line is the whole operator, eager, scripted,
// shape-propagated and fusible, with PyTorch 1.13's schemas and formulas.
#include "kiln/ops/elementwise_ops.h"

namespace kiln {
namespace {

KILN_REGISTER_OPS(
    // x * sigmoid(x), computed as PyTorch does: x / (1 + e^-x).
    KILN_FLOAT_UNARY_OPS("silu", self / ((T)1 + m_exp(-self))),
    // x * tanh(softplus(x)).
    KILN_FLOAT_UNARY_OPS("mish", self* k_tanh(m_log1p(m_exp(self)))), );

}  // namespace
}  // namespace kiln
