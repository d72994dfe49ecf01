#include "kiln/runtime/memory_plan.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>
#include <numeric>
#include <string>

#include "kiln/tensor/allocation_hook.h"
#include "kiln/util/error.h"
#include "kiln/util/large_alloc_cache.h"
#include "kiln/util/small_alloc.h"

namespace kiln {

namespace {

constexpr size_t kAlignment = 64;
constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
// Recordings a planner makes before it gives up on a graph whose runs
// keep differing (data-dependent control flow, changing thread counts).
constexpr int kMaxRecordings = 4;
// Beyond this many requests per run, planning (quadratic) costs more than it saves.
constexpr size_t kMaxRequests = 20000;

size_t blockBytes(size_t nbytes) {
  nbytes = std::max<size_t>(nbytes, 1);
  return (nbytes + kAlignment - 1) / kAlignment * kAlignment;
}

bool planningFromEnvironment() {
  const char* env = std::getenv("KILN_MEMORY_PLAN");
  return !(env && std::string(env) == "0");
}

std::atomic<bool> planning_enabled{planningFromEnvironment()};

struct Counters {
  std::atomic<uint64_t> plans{0}, planned_runs{0}, deviations{0}, given_up{0}, arena_bytes{0};
};
Counters& counters() {
  static Counters* c = new Counters();
  return *c;
}

// What a recording taught: immutable, shared by the planner and its arenas.
struct Plan {
  struct Request {
    size_t nbytes;
    int32_t slot;  // -1: the block escapes its run; allocate it as usual
  };
  std::vector<Request> requests;  // every request of a run, in order
  std::vector<uint32_t> events;   // allocations (slot * 2) and frees (slot * 2 + 1) of planned blocks, in order
  std::vector<size_t> offsets;    // per slot
  size_t total = 0;
};

uint32_t allocationEvent(int32_t slot) { return static_cast<uint32_t>(slot) * 2; }
uint32_t freeEvent(int32_t slot) { return static_cast<uint32_t>(slot) * 2 + 1; }

class Arena;
struct SlotRef {
  Arena* arena;
  int32_t slot;
};

// The memory of one execution of a plan. Reference counted: the execution
// (or the planner's pool of idle arenas) holds one reference and every live
// block it served holds one, so a block that outlives its run keeps the
// memory valid while the planner moves on to a fresh arena.
class Arena {
 public:
  explicit Arena(std::shared_ptr<const Plan> plan) : plan_(std::move(plan)) {
    base_ = static_cast<char*>(smallAlloc(plan_->total));
    slots_.reserve(plan_->offsets.size());
    for (size_t i = 0; i < plan_->offsets.size(); ++i) slots_.push_back({this, static_cast<int32_t>(i)});
  }
  ~Arena() { smallFree(base_, plan_->total); }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  const std::shared_ptr<const Plan>& plan() const { return plan_; }

  // Ready for a run; only called while nothing else references the arena.
  void reset() {
    cursor_.store(0, std::memory_order_relaxed);
    deviated_.store(false, std::memory_order_relaxed);
  }

  // Whether `event` is the next one the plan expects; the first unexpected
  // event ends serving for this run. A free may come from another thread:
  // the exchange orders it before the allocation that reuses its bytes.
  bool advance(uint32_t event) {
    uint32_t at = cursor_.load(std::memory_order_acquire);
    const auto& events = plan_->events;
    if (!deviated_.load(std::memory_order_acquire) && at < events.size() && events[at] == event &&
        cursor_.compare_exchange_strong(at, at + 1, std::memory_order_acq_rel)) {
      return true;
    }
    deviated_.store(true, std::memory_order_release);
    return false;
  }
  void markDeviated() { deviated_.store(true, std::memory_order_release); }
  bool deviated() const { return deviated_.load(std::memory_order_acquire); }
  // The run so far matched the plan's events, all of them.
  bool followedPlan() const { return !deviated() && cursor_.load(std::memory_order_acquire) == plan_->events.size(); }

  void* serve(int32_t slot, Storage::Release& release, void*& context) {
    refs_.fetch_add(1, std::memory_order_relaxed);
    release = &Arena::releaseBlock;
    context = &slots_[static_cast<size_t>(slot)];
    return base_ + plan_->offsets[static_cast<size_t>(slot)];
  }

  bool onlyOwner() const { return refs_.load(std::memory_order_acquire) == 1; }
  void unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  static void releaseBlock(void* context) {
    auto* ref = static_cast<SlotRef*>(context);
    Arena* arena = ref->arena;
    arena->advance(freeEvent(ref->slot));
    arena->unref();
  }

  std::shared_ptr<const Plan> plan_;
  char* base_ = nullptr;
  std::vector<SlotRef> slots_;
  std::atomic<int64_t> refs_{1};
  std::atomic<uint32_t> cursor_{0};
  std::atomic<bool> deviated_{false};
};

class ReplayHook final : public StorageAllocationHook {
 public:
  explicit ReplayHook(Arena& arena) : arena_(arena), plan_(*arena.plan()) {}

  HookResult allocate(size_t nbytes, void*& data, Storage::Release& release, void*& context) override {
    size_t k = next_++;
    if (arena_.deviated()) return HookResult::NotHandled;
    if (k >= plan_.requests.size() || plan_.requests[k].nbytes != nbytes) {
      arena_.markDeviated();
      return HookResult::NotHandled;
    }
    int32_t slot = plan_.requests[k].slot;
    if (slot < 0 || !arena_.advance(allocationEvent(slot))) return HookResult::NotHandled;
    data = arena_.serve(slot, release, context);
    return HookResult::Planned;
  }

  size_t requests() const { return next_; }

 private:
  Arena& arena_;
  const Plan& plan_;
  size_t next_ = 0;
};

// One recorded run: every request, with the event times of its allocation
// and its free (kNever while alive). Frees may come from any thread.
struct Recording {
  std::mutex mutex;
  bool finished = false;
  bool overflow = false;
  uint64_t clock = 0;
  std::vector<PlannedBlock> blocks;
};

struct RecordedBlock {
  std::shared_ptr<Recording> recording;
  size_t index;
  void* data;
  size_t nbytes;
};

class RecordHook final : public StorageAllocationHook {
 public:
  explicit RecordHook(std::shared_ptr<Recording> recording) : recording_(std::move(recording)) {}

  HookResult allocate(size_t nbytes, void*& data, Storage::Release& release, void*& context) override {
    Recording& r = *recording_;
    {
      std::lock_guard lock(r.mutex);
      if (r.blocks.size() >= kMaxRequests) {
        r.overflow = true;
        return HookResult::NotHandled;
      }
    }
    void* memory = nullptr;
    RecordedBlock* block = nullptr;
    try {
      memory = smallAlloc(nbytes);
      block = new RecordedBlock{recording_, 0, memory, nbytes};
    } catch (const std::bad_alloc&) {
      smallFree(memory, nbytes);
      KILN_ERROR("out of memory: could not allocate ", nbytes, " bytes");
    }
    {
      std::lock_guard lock(r.mutex);
      block->index = r.blocks.size();
      r.blocks.push_back({nbytes, r.clock++, kNever});
    }
    data = memory;
    release = &RecordHook::releaseBlock;
    context = block;
    return HookResult::Allocated;
  }

 private:
  static void releaseBlock(void* context) {
    std::unique_ptr<RecordedBlock> block(static_cast<RecordedBlock*>(context));
    smallFree(block->data, block->nbytes);
    Recording& r = *block->recording;
    std::lock_guard lock(r.mutex);
    if (!r.finished) r.blocks[block->index].end = r.clock++;
  }

  std::shared_ptr<Recording> recording_;
};

// Null when the run had no intermediates (nothing to plan) or too many requests.
std::shared_ptr<const Plan> buildPlan(const Recording& r) {
  if (r.overflow) return nullptr;
  auto plan = std::make_shared<Plan>();
  std::vector<PlannedBlock> planned;
  plan->requests.reserve(r.blocks.size());
  for (const PlannedBlock& b : r.blocks) {
    int32_t slot = -1;
    if (b.end != kNever) {
      slot = static_cast<int32_t>(planned.size());
      planned.push_back(b);
    }
    plan->requests.push_back({b.nbytes, slot});
  }
  if (planned.empty()) return nullptr;
  std::vector<std::pair<uint64_t, uint32_t>> timed;
  timed.reserve(planned.size() * 2);
  for (size_t i = 0; i < planned.size(); ++i) {
    timed.emplace_back(planned[i].begin, allocationEvent(static_cast<int32_t>(i)));
    timed.emplace_back(planned[i].end, freeEvent(static_cast<int32_t>(i)));
  }
  std::sort(timed.begin(), timed.end());
  plan->events.reserve(timed.size());
  for (const auto& [time, event] : timed) plan->events.push_back(event);
  ArenaLayout layout = assignArenaOffsets(planned);
  plan->offsets = std::move(layout.offsets);
  plan->total = layout.total;
  return plan;
}

// Allocations made while a planner runs plain belong to nobody's plan: an
// enclosing execution's plan must not see them come and go.
struct HookScope {
  explicit HookScope(StorageAllocationHook* hook) : previous(setStorageAllocationHook(hook)) {}
  ~HookScope() { setStorageAllocationHook(previous); }
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;
  StorageAllocationHook* previous;
};

}  // namespace

void setMemoryPlanning(bool enabled) { planning_enabled = enabled; }
bool memoryPlanning() { return planning_enabled; }

MemoryPlanStats memoryPlanStats() {
  Counters& c = counters();
  return {c.plans.load(), c.planned_runs.load(), c.deviations.load(), c.given_up.load(), c.arena_bytes.load()};
}

ArenaLayout assignArenaOffsets(const std::vector<PlannedBlock>& blocks) {
  ArenaLayout layout;
  const size_t n = blocks.size();
  layout.offsets.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    size_t sa = blockBytes(blocks[a].nbytes), sb = blockBytes(blocks[b].nbytes);
    return sa != sb ? sa > sb : blocks[a].begin < blocks[b].begin;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> taken;  // [first byte, past the last) of conflicting placed blocks
  for (size_t i : order) {
    const PlannedBlock& block = blocks[i];
    const size_t size = blockBytes(block.nbytes);
    taken.clear();
    for (size_t j : placed) {
      if (blocks[j].begin <= block.end && block.begin <= blocks[j].end) {
        taken.emplace_back(layout.offsets[j], layout.offsets[j] + blockBytes(blocks[j].nbytes));
      }
    }
    std::sort(taken.begin(), taken.end());
    // The smallest gap that fits, else the end of the conflicting blocks.
    size_t best = kNever, best_gap = kNever, cursor = 0;
    for (const auto& [first, last] : taken) {
      if (first > cursor && first - cursor >= size && first - cursor < best_gap) {
        best = cursor;
        best_gap = first - cursor;
      }
      cursor = std::max(cursor, last);
    }
    if (best == kNever) best = cursor;
    layout.offsets[i] = best;
    layout.total = std::max(layout.total, best + size);
    placed.push_back(i);
  }
  return layout;
}

struct MemoryPlanner::Impl {
  enum class State { Warmup, Record, Ready, Off };

  std::mutex mutex;
  State state = State::Warmup;
  std::atomic<bool> off{false};  // state == Off, read without the lock
  int recordings = 0;
  bool recording_now = false;
  std::shared_ptr<const Plan> plan;
  std::vector<Arena*> idle;  // arenas of `plan` that no run uses

  ~Impl() { dropIdle(); }

  void dropIdle() {
    for (Arena* a : idle) a->unref();
    idle.clear();
  }

  // After a run that left the plan: record again, or give up.
  void replan() {
    plan.reset();
    dropIdle();
    if (recordings >= kMaxRecordings) {
      state = State::Off;
      off = true;
      ++counters().given_up;
    } else {
      state = State::Record;
    }
  }

  void runRecorded(const std::function<void()>& body);
  void runReplayed(Arena* arena, const std::shared_ptr<const Plan>& plan, const std::function<void()>& body);
};

void MemoryPlanner::Impl::runRecorded(const std::function<void()>& body) {
  auto recording = std::make_shared<Recording>();
  bool ok = false;
  {
    RecordHook hook(recording);
    HookScope scope(&hook);
    try {
      body();
      ok = true;
    } catch (...) {
      std::lock_guard lock(mutex);
      recording_now = false;
      ++recordings;
      if (recordings >= kMaxRecordings && state == State::Record) replan();
      throw;
    }
  }
  {
    std::lock_guard lock(recording->mutex);
    recording->finished = true;
  }
  std::shared_ptr<const Plan> built = ok ? buildPlan(*recording) : nullptr;
  std::lock_guard lock(mutex);
  recording_now = false;
  ++recordings;
  if (state != State::Record) return;
  if (built) {
    plan = std::move(built);
    state = State::Ready;
    ++counters().plans;
    counters().arena_bytes += plan->total;
    // The blocks the unplanned runs freed (into the allocator's cache, and
    // into malloc's heap, which keeps freed pages resident) are the ones
    // the arena now stands in for: return them, or they add to its size.
    releaseLargeAllocCache();
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
  } else {
    state = State::Off;  // nothing to plan
    off = true;
  }
}

void MemoryPlanner::Impl::runReplayed(Arena* arena, const std::shared_ptr<const Plan>& used,
                                      const std::function<void()>& body) {
  if (!arena) arena = new Arena(used);
  arena->reset();
  bool ok = false;
  size_t requests = 0;
  try {
    ReplayHook hook(*arena);
    HookScope scope(&hook);
    try {
      body();
      ok = true;
    } catch (...) {
      requests = hook.requests();
      throw;
    }
    requests = hook.requests();
  } catch (...) {
    // An error path allocates differently: no reason to record again.
    std::lock_guard lock(mutex);
    if (arena->onlyOwner() && plan == used) {
      idle.push_back(arena);
    } else {
      arena->unref();
    }
    throw;
  }
  bool followed = ok && arena->followedPlan() && requests == used->requests.size();
  std::lock_guard lock(mutex);
  if (followed) {
    ++counters().planned_runs;
    // This run took no large block from the allocator's cache: what sits
    // there through two such runs is not this graph's, and may be no one's.
    ageLargeAllocCache();
  } else {
    ++counters().deviations;
    if (plan == used && state == State::Ready) replan();
  }
  // A block that escaped this run keeps the arena to itself.
  if (arena->onlyOwner() && plan == used) {
    idle.push_back(arena);
  } else {
    arena->unref();
  }
}

MemoryPlanner::MemoryPlanner() : impl_(std::make_unique<Impl>()) {}
MemoryPlanner::~MemoryPlanner() = default;

size_t MemoryPlanner::arenaBytes() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->plan ? impl_->plan->total : 0;
}

void MemoryPlanner::run(const std::function<void()>& body) {
  Impl& p = *impl_;
  if (!memoryPlanning() || p.off.load(std::memory_order_relaxed)) {
    HookScope scope(nullptr);
    body();
    return;
  }
  enum class Mode { Plain, Record, Replay } mode = Mode::Plain;
  Arena* arena = nullptr;
  std::shared_ptr<const Plan> plan;
  {
    std::lock_guard lock(p.mutex);
    switch (p.state) {
      case Impl::State::Warmup: p.state = Impl::State::Record; break;  // caches and compiled kernels settle first
      case Impl::State::Record:
        if (!p.recording_now) {
          p.recording_now = true;
          mode = Mode::Record;
        }
        break;
      case Impl::State::Ready:
        mode = Mode::Replay;
        plan = p.plan;
        if (!p.idle.empty()) {
          arena = p.idle.back();
          p.idle.pop_back();
        }
        break;
      case Impl::State::Off: break;
    }
  }
  switch (mode) {
    case Mode::Plain: {
      HookScope scope(nullptr);
      body();
      return;
    }
    case Mode::Record: p.runRecorded(body); return;
    case Mode::Replay: p.runReplayed(arena, plan, body); return;
  }
}

}  // namespace kiln
