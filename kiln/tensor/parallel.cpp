#include "kiln/tensor/parallel.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>

#include "kiln/util/error.h"

namespace kiln {

namespace {
std::atomic<int> g_num_threads{0};  // 0: not set yet, use OpenMP's default
}

void setNumThreads(int n) {
  KILN_CHECK(n > 0, "set_num_threads expects a positive number of threads, got ", n);
  g_num_threads = n;
  omp_set_num_threads(n);
}

int getNumThreads() {
  int n = g_num_threads.load();
  return n > 0 ? n : omp_get_max_threads();
}

bool inParallelRegion() { return omp_in_parallel(); }

void parallelFor(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (begin >= end) return;
  int64_t range = end - begin;
  int threads = getNumThreads();
  if (threads <= 1 || range <= grain || omp_in_parallel()) {
    f(begin, end);
    return;
  }
  int64_t chunks = std::min<int64_t>(threads, (range + grain - 1) / std::max<int64_t>(grain, 1));
  std::exception_ptr error;
  std::atomic<bool> failed{false};
#pragma omp parallel num_threads(static_cast <int>(chunks))
  {
    int64_t tid = omp_get_thread_num();
    int64_t count = omp_get_num_threads();
    int64_t per = (range + count - 1) / count;
    int64_t lo = begin + tid * per;
    int64_t hi = std::min(end, lo + per);
    if (lo < hi) {
      try {
        f(lo, hi);
      } catch (...) {
        if (!failed.exchange(true)) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace kiln
