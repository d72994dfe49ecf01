#pragma once
// kiln's door to oneDNN (internal to kiln/tensor/kernels): float32
// convolution and pooling over plain (ncw, nchw, ncdhw) buffers. One CPU
// engine for the process; primitives are built once per shape and
// parameters and kept, so repeated calls only execute. oneDNN runs on
// OpenMP, kiln's runtime, with kiln's thread count (kiln/tensor/parallel.h).
// Each entry point returns false when oneDNN has no implementation for the
// case (the caller then runs kiln's own kernel); it never throws.
#include <cstdint>
#include <vector>

namespace kiln::detail {

struct DnnlConvParams {
  bool transposed = false;
  int64_t groups = 1;
  // Sizes as torch has them: src (N, C, spatial...), weight as torch lays it
  // out ((OC, C/g, k...) or, transposed, (C, OC/g, k...)), dst (N, OC, ...).
  std::vector<int64_t> src, weight, dst;
  std::vector<int64_t> stride, dilation, pad_l, pad_r;
  bool has_bias = false;
};

// dst = conv(src, weight) + bias over contiguous float32 buffers.
bool dnnlConvolution(const DnnlConvParams& p, const float* src, const float* weight, const float* bias, float* dst);

enum class DnnlPool { Max, AvgIncludePad, AvgExcludePad };

struct DnnlPoolParams {
  DnnlPool kind = DnnlPool::Max;
  std::vector<int64_t> src, dst;  // (N, C, spatial...)
  std::vector<int64_t> kernel, stride, dilation, pad_l, pad_r;
};

bool dnnlPooling(const DnnlPoolParams& p, const float* src, float* dst);

// How many primitives the glue has built (its cache's misses), for tests.
int64_t dnnlPrimitivesBuilt();

}  // namespace kiln::detail
