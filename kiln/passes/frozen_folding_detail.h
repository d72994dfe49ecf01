#pragma once
// Private to the frozen-graph folding passes (fold_frozen_*.cpp): the
// questions they all ask about a convolution or linear node and its constant
// operands. In a frozen graph (kiln::freeze) weights are prim::Constant
// tensors, so a node whose operands after the first are all constants can
// be rewritten at compile time into a cheaper one.
#include <functional>
#include <memory>
#include <optional>

#include "kiln/ir/graph.h"

namespace kiln::detail {

// aten::conv1d/conv2d/conv3d (either overload), and aten::_convolution and
// aten::convolution whose `transposed` is a constant false: the
// convolutions whose weight has the output channels in dim 0, so a
// per-output-channel affine map after them folds into weight and bias.
bool isFoldableConvolution(const Node* n);
// Whether `user` is the only node reading the values of `v`: its other uses
// only ask for its shape, dtype or device (aten::dim, aten::size,
// aten::numel, prim::shape, prim::dtype, prim::device), which folding into
// the node producing `v` keeps. (BatchNorm2d checks `input.dim()` before
// its batch_norm; PyTorch folds that dim away, kiln keeps the check.)
bool soleValueUse(const Value* v, const Node* user);
// Whether every input of `n` but the first is a prim::Constant (PyTorch's
// nonConstantParameters, negated).
bool operandsAreConstant(const Node* n);
// The tensor a prim::Constant holds; nullopt for anything else (None too).
std::optional<Tensor> constantTensor(const Value* v);
// Whether `t` is a float or double tensor: folding rounds once where the
// unfolded graph rounds twice, which only floating-point weights tolerate.
bool isFloatingTensor(const Tensor& t);
// aten::batch_norm (torch's one overload: input, weight, bias, running_mean,
// running_var, training, momentum, eps, cudnn_enabled).
bool isBatchNorm(const Node* n);

// The weight and bias of an op computing `x @ weight^T + bias` per output
// channel (dim 0 of weight: convolutions, linear) followed by `bn`.
struct FoldedWeightAndBias {
  Tensor weight;
  Tensor bias;
};
// For `bn` in eval mode with constant operands (a constant false training,
// a float eps, running stats, and weight and bias or None) whose tensors
// are one-dimensional with weight.size(0) entries of weight's floating
// dtype, as is `bias` (a constant tensor, or None for zeros): the new
// weight and bias, as PyTorch 1.13 computes them. nullopt otherwise.
std::optional<FoldedWeightAndBias> foldBatchNorm(const Node* bn, const Tensor& weight, const Value* bias);

// The constant second operand of a binary op applied to a convolution's
// result (`conv(x) + c`, `conv(x) * c`), as a tensor of `shape` (whose
// element count is weight.size(0)) in weight's dtype, when applying the op
// per output channel instead changes nothing but rounding: a number (int
// or float), or a tensor whose dims are all 1 but dim 1, which is 1 or
// weight.size(0), of no more dims than weight, and which does not promote
// the result beyond weight's dtype. nullopt otherwise.
std::optional<Tensor> channelOperand(const Value* operand, const Tensor& weight, IntArrayRef shape);

// The frame of the convolution folding passes: for each node `op` that
// `matches`, whose first input a foldable convolution computes for `op`
// alone (soleValueUse), with the convolution's operands constant and its
// weight a constant tensor, `fold(conv, op, weight)` rewrites the
// convolution's weight and bias, or returns false where it cannot. A folded
// node's uses then read the convolution, and the node goes. Returns whether
// anything folded.
bool foldIntoConvolutions(const std::shared_ptr<Graph>& graph, const std::function<bool(const Node*)>& matches,
                          const std::function<bool(Node* conv, const Node* op, const Tensor& weight)>& fold);

// The constant bias of a foldable convolution of `weight`, when it is one:
// zeros for None, else a 1-dim constant tensor of weight's dtype and
// weight.size(0) entries; nullopt otherwise.
std::optional<Tensor> constantConvolutionBias(const Node* conv, const Tensor& weight);

// A prim::Constant of `t` inserted before `before`, named after `base` with
// `suffix` (PyTorch's `%self.conv.weight_fused_bn`).
Value* insertFoldedConstant(const Tensor& t, Node* before, const Value* base, const char* suffix);

}  // namespace kiln::detail
