#pragma once
// kiln's door to oneDNN (internal to kiln/tensor/kernels): float32
// convolution and pooling over plain (ncw, nchw, ncdhw) buffers. One CPU
// engine for the process; primitives are built once per shape and
// parameters and kept, so repeated calls only execute. oneDNN runs on
// OpenMP, kiln's runtime, with kiln's thread count (kiln/tensor/parallel.h).
// Each entry point returns false when oneDNN has no implementation for the
// case (the caller then runs kiln's own kernel); it never throws.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace dnnl {
struct engine;
struct stream;
}  // namespace dnnl

namespace kiln::detail {

// The process's one oneDNN CPU engine, and this thread's stream on it.
dnnl::engine& dnnlEngine();
dnnl::stream& dnnlThreadStream();
// oneDNN's OpenMP runtime reads the calling thread's OpenMP setting, both
// when it builds a primitive (its jit kernels split the work for that many
// threads, for good) and when it runs one. This sets it to `threads`.
void useKilnThreadsForDnnl(int threads);

// The threads a oneDNN primitive doing `work` (multiply-adds, or elements
// touched) is built and run with: kiln's count, or 1 below a grain where a
// fork and join of the team costs more than the split saves (small
// convolutions and reorders of late CNN stages and 1-d networks are
// slower on two threads than on one otherwise). Primitives are cached by
// this count too, so a change of kiln.set_num_threads takes effect.
int dnnlThreadsFor(double work);

// Work below which oneDNN runs on one thread: multiply-adds of a
// convolution, elements of a reorder or pooling window.
constexpr double kDnnlSerialMacs = 1 << 19;
constexpr double kDnnlSerialElements = 1 << 16;

struct KeyHash {
  size_t operator()(const std::vector<int64_t>& key) const {
    size_t h = 0xcbf29ce484222325ull;
    for (int64_t v : key) h = (h ^ static_cast<size_t>(v)) * 0x100000001b3ull;
    return h;
  }
};

// What oneDNN built (primitives, converted weights) by the parameters that
// determine it, shared between threads. Bounded: a program that keeps
// changing shapes clears it rather than growing without end.
template <typename Entry, size_t Capacity = 512>
class PrimitiveCache {
 public:
  template <typename Make>
  std::shared_ptr<const Entry> get(const std::vector<int64_t>& key, const Make& make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = entries_.find(key);
      if (it != entries_.end()) return it->second;
    }
    auto entry = std::make_shared<const Entry>(make());
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= Capacity) entries_.clear();
    entries_.emplace(key, entry);
    return entry;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::vector<int64_t>, std::shared_ptr<const Entry>, KeyHash> entries_;
};

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
