#include "kiln/tensor/storage.h"

#include <cstdlib>
#include <new>

#include "kiln/tensor/allocation_hook.h"
#include "kiln/util/error.h"
#include "kiln/util/small_alloc.h"

namespace kiln {

namespace {

// Initial-exec: read on every tensor allocation from a shared library.
thread_local StorageAllocationHook* current_hook __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local uint64_t allocation_count __attribute__((tls_model("initial-exec"))) = 0;
thread_local uint64_t allocation_bytes __attribute__((tls_model("initial-exec"))) = 0;

}  // namespace

StorageAllocationHook* storageAllocationHook() { return current_hook; }

StorageAllocationHook* setStorageAllocationHook(StorageAllocationHook* hook) {
  StorageAllocationHook* previous = current_hook;
  current_hook = hook;
  return previous;
}

StorageAllocationCounts storageAllocationCounts() { return {allocation_count, allocation_bytes}; }

Storage::Storage(size_t nbytes) : nbytes_(nbytes) {
  if (StorageAllocationHook* hook = current_hook) {
    HookResult result = hook->allocate(nbytes, data_, release_, context_);
    if (result == HookResult::Planned) return;
    if (result == HookResult::Allocated) {
      ++allocation_count;
      allocation_bytes += nbytes;
      return;
    }
  }
  ++allocation_count;
  allocation_bytes += nbytes;
  try {
    // Empty tensors still get a valid, unique pointer (one cache line).
    data_ = smallAlloc(nbytes);
  } catch (const std::bad_alloc&) {
    KILN_ERROR("out of memory: could not allocate ", nbytes, " bytes");
  }
}

Storage::Storage(void* data, size_t nbytes, Release release, void* context)
    : data_(data), nbytes_(nbytes), release_(release), context_(context) {}

void* Storage::operator new(size_t size) { return smallAlloc(size); }
void Storage::operator delete(void* p, size_t size) { smallFree(p, size); }

Storage::~Storage() {
  if (release_) {
    release_(context_);
  } else {
    smallFree(data_, nbytes_);
  }
}

}  // namespace kiln
