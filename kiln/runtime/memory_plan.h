#pragma once
// Static memory plans for executions whose shapes are known (issue 19):
// after a warm-up run, one run is recorded: every tensor memory request the
// executing thread makes (Storage(nbytes)), in order, with when each block
// is freed. Blocks freed before the run ends are intermediates; those still
// alive (outputs, values kept in module state or caches) escape and are
// never planned. The intermediates get offsets in one arena so that blocks
// whose lifetimes overlap never overlap in memory (assignArenaOffsets), and
// later runs serve the same requests from the arena: a steady-state run
// allocates only its outputs. As PyTorch's Static Runtime MemoryPlanner,
// but on storages rather than values, so views, aliases and values inside
// lists and tuples need no analysis: a block lives as long as its storage.
//
// Safety does not rest on the recording repeating itself. A replayed run
// checks each request against the recorded sequence (same index, same
// size) and each allocation and free of a planned block against the
// recorded order of events; at the first difference it stops serving from
// the arena for the rest of the run (blocks already served stay valid) and
// the next run records again (a few times, then the plan gives up). An
// arena block still alive when its run ends keeps the arena to itself:
// the planner takes a fresh arena for the next run. Each execution takes
// an arena of its own, so threads running the same plan never share one.
//
// KILN_MEMORY_PLAN=0 (or setMemoryPlanning(false), Python
// kiln._C._set_memory_planning(False)) turns planning off.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace kiln {

// Whether executors plan memory for shape-specialized plans (default on,
// KILN_MEMORY_PLAN=0 in the environment turns it off).
void setMemoryPlanning(bool enabled);
bool memoryPlanning();

// One block to place: its size and its lifetime in event time, both ends
// included. Two blocks conflict when their lifetimes overlap.
struct PlannedBlock {
  size_t nbytes = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct ArenaLayout {
  std::vector<size_t> offsets;  // per block, multiples of 64
  size_t total = 0;             // bytes the arena needs
};

// Offsets such that conflicting blocks never share a byte, placing the
// largest blocks first at the lowest offset that fits (greedy by size).
ArenaLayout assignArenaOffsets(const std::vector<PlannedBlock>& blocks);

// Process-wide counts, for tests and benchmarks.
struct MemoryPlanStats {
  uint64_t plans = 0;         // plans built from a recording
  uint64_t planned_runs = 0;  // runs served from an arena to the end
  uint64_t deviations = 0;    // runs that left their plan
  uint64_t given_up = 0;      // planners that stopped planning
  uint64_t arena_bytes = 0;   // bytes of the plans built
};
MemoryPlanStats memoryPlanStats();

// The plan of one execution plan (one specialized graph). Thread-safe.
class MemoryPlanner {
 public:
  MemoryPlanner();
  ~MemoryPlanner();
  MemoryPlanner(const MemoryPlanner&) = delete;
  MemoryPlanner& operator=(const MemoryPlanner&) = delete;

  // Runs one execution (`body`, on this thread) under the plan: plain,
  // recorded or served from an arena, as the planner's state says.
  void run(const std::function<void()>& body);

  // The arena size of the current plan (0: none yet, or given up).
  size_t arenaBytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
