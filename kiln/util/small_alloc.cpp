#include "kiln/util/small_alloc.h"

#include <cstdlib>
#include <new>

namespace kiln {

namespace {

constexpr size_t kClasses = kSmallAllocMax / kSmallAllocAlignment;
constexpr size_t kBlocksPerClass = 32;

size_t roundUp(size_t nbytes) {
  size_t rounded = (nbytes + kSmallAllocAlignment - 1) / kSmallAllocAlignment * kSmallAllocAlignment;
  return rounded == 0 ? kSmallAllocAlignment : rounded;
}

void* systemAlloc(size_t rounded) {
  void* p = std::aligned_alloc(kSmallAllocAlignment, rounded);
  if (!p) throw std::bad_alloc();
  return p;
}

// Free lists per size class. Blocks freed on a thread join that thread's
// lists, whichever thread allocated them.
struct BlockCache {
  void* blocks[kClasses][kBlocksPerClass];
  size_t counts[kClasses] = {};

  ~BlockCache() {
    for (size_t c = 0; c < kClasses; ++c) {
      for (size_t i = 0; i < counts[c]; ++i) std::free(blocks[c][i]);
    }
  }
};

// The hot path reads one initial-exec pointer: a thread_local object with a
// destructor would cost a __tls_get_addr call per allocation in a shared
// library. The owner below frees the cache when the thread exits; after
// that the thread allocates from the system.
thread_local BlockCache* current_cache __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local bool cache_gone __attribute__((tls_model("initial-exec"))) = false;

struct CacheOwner {
  BlockCache* cache = nullptr;
  ~CacheOwner() {
    current_cache = nullptr;
    cache_gone = true;
    delete cache;
  }
};
thread_local CacheOwner cache_owner;

BlockCache* threadCache() {
  BlockCache* cache = current_cache;
  if (__builtin_expect(cache != nullptr, 1)) return cache;
  if (cache_gone) return nullptr;
  cache_owner.cache = new BlockCache();
  current_cache = cache_owner.cache;
  return current_cache;
}

}  // namespace

void* smallAlloc(size_t nbytes) {
  size_t rounded = roundUp(nbytes);
  if (rounded <= kSmallAllocMax) {
    if (BlockCache* cache = threadCache()) {
      size_t c = rounded / kSmallAllocAlignment - 1;
      if (cache->counts[c] > 0) return cache->blocks[c][--cache->counts[c]];
    }
  }
  return systemAlloc(rounded);
}

void smallFree(void* block, size_t nbytes) noexcept {
  if (!block) return;
  size_t rounded = roundUp(nbytes);
  if (rounded <= kSmallAllocMax) {
    if (BlockCache* cache = threadCache()) {
      size_t c = rounded / kSmallAllocAlignment - 1;
      if (cache->counts[c] < kBlocksPerClass) {
        cache->blocks[c][cache->counts[c]++] = block;
        return;
      }
    }
  }
  std::free(block);
}

}  // namespace kiln
