#pragma once
// Intra-op parallelism: OpenMP over index ranges above a grain size.
#include <cstdint>
#include <functional>

namespace kiln {

// Elements below which a loop runs on one thread (PyTorch uses the same figure).
constexpr int64_t kGrainSize = 32768;

void setNumThreads(int n);
int getNumThreads();
bool inParallelRegion();

// Calls f(begin, end) on disjoint chunks covering [begin, end), in parallel
// when the range is larger than `grain` and more than one thread is allowed.
void parallelFor(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

}  // namespace kiln
