#pragma once
// Connectionist temporal classification loss (Graves et al. 2006) with
// PyTorch 1.13's CPU kernels' semantics: the forward (alpha) recursion in
// log space, and the backward (beta) recursion giving the gradient with
// respect to the log probabilities.
#include <tuple>

#include "kiln/tensor/tensor.h"

namespace kiln {

// log_probs (T, N, C); targets (N, S) padded or the N target sequences
// concatenated (1-D), int64 or int32. Returns (negative log likelihood (N),
// log_alpha (N, T, 2 * max target length + 1)).
std::tuple<Tensor, Tensor> ctcLoss(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                                   IntArrayRef target_lengths, int64_t blank);

// The gradient of the forward's negative log likelihoods (scaled by `grad`,
// one per sample) with respect to log_probs; zero_infinity zeroes the
// samples whose loss is infinite.
Tensor ctcLossBackward(const Tensor& grad, const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                       IntArrayRef target_lengths, const Tensor& neg_log_likelihood, const Tensor& log_alpha,
                       int64_t blank, bool zero_infinity);

}  // namespace kiln
