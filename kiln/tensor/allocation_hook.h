#pragma once
// A per-thread hook that tensor memory (Storage(nbytes)) asks first, and
// per-thread counters of the allocations that went to the allocator. The
// runtime's static memory plans (kiln/runtime/memory_plan.h) install a hook
// for the duration of one execution so that intermediates are placed in a
// preplanned arena; the counters let tests prove that a steady-state run
// allocates nothing but its outputs.
#include <cstddef>
#include <cstdint>

#include "kiln/tensor/storage.h"

namespace kiln {

enum class HookResult {
  NotHandled,  // allocate as usual
  Planned,     // served from preplanned memory (not counted)
  Allocated,   // the hook allocated fresh memory itself (counted)
};

class StorageAllocationHook {
 public:
  virtual ~StorageAllocationHook() = default;
  // May serve a request for `nbytes` by setting `data` and a `release`
  // callback (with its `context`) that the storage calls when it dies.
  virtual HookResult allocate(size_t nbytes, void*& data, Storage::Release& release, void*& context) = 0;
};

// The calling thread's hook (null: none). Setting returns the previous one.
StorageAllocationHook* storageAllocationHook();
StorageAllocationHook* setStorageAllocationHook(StorageAllocationHook* hook);

// Tensor memory requests the calling thread sent to the allocator (not
// served by a memory plan) since it started, and their bytes.
struct StorageAllocationCounts {
  uint64_t count = 0;
  uint64_t bytes = 0;
};
StorageAllocationCounts storageAllocationCounts();

}  // namespace kiln
