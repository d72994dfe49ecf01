#pragma once
// kiln's own Winograd convolution, F(4x4, 3x3), for 3x3 stride-1 groups-1
// convolutions on activations blocked by 8 channels (nChw8c: the layout
// kiln's frozen graphs use where oneDNN runs at AVX2). oneDNN 2.6's Winograd
// is AVX-512 only; at AVX2 both kiln and torch would otherwise run the same
// oneDNN direct kernels. Each 4x4 output tile costs 36 multiply-adds per
// channel pair instead of 144: an input transform per 6x6 tile, one GEMM
// per transform point (tiles x Cin times Cin x Cout, kiln's micro-kernel),
// and an output transform that applies the bias, the residual and ReLU or
// hardtanh. The transformed weights (36/9 = 4 times the plain ones) are
// made once per weight and kept. KILN_WINOGRAD=0 turns it off.
#include <optional>

#include "kiln/tensor/blocked_conv.h"
#include "kiln/tensor/tensor.h"

namespace kiln::detail {

// Whether kiln's Winograd can run the convolution `p` describes (any image
// size): 3x3, stride 1, dilation 1, groups 1, blocked by 8 or 16 (the same
// in and out), an activation of none, relu or hardtanh, in an AVX2 build,
// not turned off.
bool winogradApplies(const FusedConv2dParams& p);

// Whether fusedConv2d may run it, for some image size (blocked by 8, at
// most 128x128 channels): its weight then keeps torch's layout
// (prepackConv2dWeight).
bool winogradMayRun(const FusedConv2dParams& p);

// Whether fusedConv2d runs it for an input of (n, C, h, w): where it
// measured faster than oneDNN (blocked by 8, on images of 16 tiles or more).
bool winogradChosen(const FusedConv2dParams& p, int64_t n, int64_t h, int64_t w);

// act(conv(input, weight) + bias + residual) with `input` (and `residual`)
// blocked by p.in_block, `weight` torch's (OC, C, 3, 3). `cache_weight`: the weight
// is a constant whose transform may be kept (keyed by its address).
Tensor winogradConv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                      const std::optional<Tensor>& residual, const FusedConv2dParams& p, bool cache_weight);

// The transformed weights kept (count and bytes), for tests.
int64_t winogradCachedWeights();

}  // namespace kiln::detail
