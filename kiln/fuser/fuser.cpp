#include "kiln/fuser/fuser.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace kiln::fuser {
namespace {

// -1: not decided yet (read KILN_FUSION on first use), 0: off, 1: on.
std::atomic<int> fusion_enabled{-1};

std::mutex stats_mutex;
FusionStats stats;

}  // namespace

bool fusionEnabled() {
  int state = fusion_enabled.load(std::memory_order_relaxed);
  if (state < 0) {
    const char* env = std::getenv("KILN_FUSION");
    state = env && std::strcmp(env, "0") == 0 ? 0 : 1;
    int expected = -1;
    fusion_enabled.compare_exchange_strong(expected, state);
    state = fusion_enabled.load();
  }
  return state == 1;
}

void setFusionEnabled(bool enabled) { fusion_enabled.store(enabled ? 1 : 0); }

FusionStats fusionStats() {
  std::lock_guard<std::mutex> lock(stats_mutex);
  return stats;
}

void resetFusionStats() {
  std::lock_guard<std::mutex> lock(stats_mutex);
  stats = FusionStats{};
}

void recordKernelRun() {
  std::lock_guard<std::mutex> lock(stats_mutex);
  ++stats.kernel_runs;
}

void recordFallback(const std::string& why) {
  std::lock_guard<std::mutex> lock(stats_mutex);
  ++stats.fallback_runs;
  ++stats.fallback_reasons[why];
}

}  // namespace kiln::fuser
