#pragma once
// Random tensors and the seedable generator behind them.
//
// The generator is counter based (Philox 4x32-10): a draw of n values
// reserves a range of counters, and the value at index i is a pure function
// of (seed, counter), so results depend on the seed and the sequence of draws
// but never on the number of threads. manualSeed(s) makes everything drawn
// after it reproducible. The streams are kiln's own, not torch's.
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>

#include "kiln/tensor/tensor.h"

namespace kiln {

// The four 32-bit words Philox4x32-10 gives for a 64-bit key and counter.
std::array<uint32_t, 4> philox(uint64_t key, uint64_t counter);

class Generator {
 public:
  // torch's default seed, so an unseeded process starts the same way every run.
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;

  struct Draw {
    uint64_t key;
    uint64_t counter;  // the first of the reserved counters
  };

  explicit Generator(uint64_t seed = kDefaultSeed) : seed_(seed) {}

  // Restarts the stream of `seed`.
  void manualSeed(uint64_t seed);
  uint64_t initialSeed() const;
  // Reserves `count` consecutive counters.
  Draw reserve(uint64_t count);

 private:
  mutable std::mutex mutex_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The process-wide generator the random ops draw from.
Generator& defaultGenerator();
void manualSeed(uint64_t seed);

// In-place fills (floating dtypes for uniform_/normal_).
Tensor& uniform_(Tensor& self, double from = 0, double to = 1);
Tensor& normal_(Tensor& self, double mean = 0, double std = 1);
// Integers in [from, to); without `to`, up to the dtype's largest value
// (2^mantissa bits for floating dtypes).
Tensor& random_(Tensor& self, int64_t from, std::optional<int64_t> to);
// Integers in [0, dtype max] (floating dtypes: [0, 2^mantissa bits]).
Tensor& random_(Tensor& self);

Tensor rand(IntArrayRef sizes, ScalarType dtype);
Tensor randn(IntArrayRef sizes, ScalarType dtype);
// Integers in [low, high) in `dtype`.
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, ScalarType dtype);
// A random permutation of 0 .. n-1.
Tensor randperm(int64_t n, ScalarType dtype);

}  // namespace kiln
