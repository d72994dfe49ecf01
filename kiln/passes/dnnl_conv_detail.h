#pragma once
// Private to the optimize_for_inference passes (fuse_dnnl_convolution.cpp,
// dnnl_blocked_layout.cpp, prepack_dnnl_weights.cpp): reading and writing
// the constant operands of a kiln::conv2d_fused node.
#include <optional>
#include <string>

#include "kiln/ir/graph.h"
#include "kiln/tensor/blocked_conv.h"

namespace kiln::detail {

// kiln::conv2d_fused's operands, in schema order.
enum FusedConvInput : size_t {
  kFusedInput,
  kFusedWeight,
  kFusedBias,
  kFusedResidual,
  kFusedWeightSize,
  kFusedStride,
  kFusedPadding,
  kFusedDilation,
  kFusedGroups,
  kFusedInBlock,
  kFusedOutBlock,
  kFusedActivation,
  kFusedAlpha,
  kFusedBeta,
  kFusedInputCount
};

Symbol conv2dFusedSymbol();
bool isConv2dFused(const Node* n);

// The parameters of a kiln::conv2d_fused whose operands after the input,
// the bias and the residual are constants; nullopt otherwise.
std::optional<FusedConv2dParams> fusedConvParams(const Node* n);

// Replaces operand `i` of `n` with a constant inserted before `n`.
void setConstantInput(Node* n, size_t i, const IValue& value);

// What the fusion passes (fuse_dnnl_convolution.h, fuse_conv_post_ops.h)
// recognise after a convolution.

// The single node using `v`, if there is one use.
Node* onlyUser(const Value* v);

// `add(v, other, 1)` or `add(other, v, 1)` (and `v.add_(other)`) of two
// tensors: the other tensor; nullptr for anything else.
Value* addedOperand(Node* add, const Value* v);

struct Activation {
  std::string name;  // as FusedConv2dParams::activation
  double alpha = 0, beta = 0;
};

// `n` as an eltwise post-op on its first input.
std::optional<Activation> activationOf(const Node* n);

}  // namespace kiln::detail
