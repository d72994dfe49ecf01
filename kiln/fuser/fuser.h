#pragma once
// The fuser's switches and counters.
//
// Fusion is on by default; KILN_FUSION=0 in the environment turns it off,
// and setFusionEnabled overrides both (Python: kiln._C._jit_set_fusion_enabled).
// A plan compiled while fusion is off stays unfused.
#include <cstdint>
#include <map>
#include <string>

namespace kiln::fuser {

bool fusionEnabled();
void setFusionEnabled(bool enabled);

struct FusionStats {
  int64_t kernel_runs = 0;    // group calls that ran a generated kernel
  int64_t fallback_runs = 0;  // group calls that interpreted the subgraph
  // Why groups fell back, with how many calls each reason caused.
  std::map<std::string, int64_t> fallback_reasons;
};
FusionStats fusionStats();
void resetFusionStats();
// Called by the fused-group operator.
void recordKernelRun();
void recordFallback(const std::string& why);

}  // namespace kiln::fuser
