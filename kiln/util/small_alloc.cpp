#include "kiln/util/small_alloc.h"

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "kiln/util/large_alloc_cache.h"

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

// Freed large blocks, oldest first. A few hundred at most (limit /
// kLargeAllocMin), so linear scans are cheaper than the page faults they save.
class LargeBlockCache {
 public:
  LargeBlockCache() : limit_(limitFromEnvironment()) {}

  void* take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = blocks_.size(); i-- > 0;) {
      if (blocks_[i].nbytes == rounded) {
        void* p = blocks_[i].data;
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        cached_ -= rounded;
        return p;
      }
    }
    return nullptr;
  }

  // Keeps `block` unless it alone exceeds the limit; returns the least
  // recently freed blocks beyond the limit to the system.
  void put(void* block, size_t rounded) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (rounded > limit_) {
      std::free(block);
      return;
    }
    try {
      blocks_.push_back({block, rounded, generation_});
    } catch (const std::bad_alloc&) {
      std::free(block);
      return;
    }
    cached_ += rounded;
    evictBeyondLimit();
  }

  void setLimit(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    limit_ = bytes;
    evictBeyondLimit();
  }

  void age() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    ++generation_;
    size_t kept = 0;
    for (const Block& b : blocks_) {
      if (generation_ - b.generation >= 2) {
        std::free(b.data);
        cached_ -= b.nbytes;
      } else {
        blocks_[kept++] = b;
      }
    }
    blocks_.resize(kept);
  }

  void releaseAll() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Block& b : blocks_) std::free(b.data);
    blocks_.clear();
    cached_ = 0;
  }

  size_t limit() {
    std::lock_guard<std::mutex> lock(mutex_);
    return limit_;
  }

  size_t cached() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }

 private:
  struct Block {
    void* data;
    size_t nbytes;
    uint64_t generation;  // age() calls before it was freed
  };

  static size_t limitFromEnvironment() {
    constexpr size_t kDefaultMiB = 256;
    size_t mib = kDefaultMiB;
    if (const char* env = std::getenv("KILN_ALLOC_CACHE_MB")) {
      try {
        size_t parsed = 0;
        unsigned long long value = std::stoull(env, &parsed);
        if (env[parsed] == '\0') mib = static_cast<size_t>(value);
      } catch (const std::exception&) {
        // Not a number: the default.
      }
    }
    return mib > (SIZE_MAX >> 20) ? SIZE_MAX : mib << 20;
  }

  void evictBeyondLimit() noexcept {
    size_t n = 0;
    for (; cached_ > limit_; ++n) {
      std::free(blocks_[n].data);
      cached_ -= blocks_[n].nbytes;
    }
    blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(n));
  }

  std::mutex mutex_;
  size_t limit_;
  size_t cached_ = 0;
  uint64_t generation_ = 0;
  std::vector<Block> blocks_;
};

// Never destroyed: tensors may be freed during static destruction, after a
// static cache would be gone.
LargeBlockCache& largeBlockCache() {
  static LargeBlockCache* cache = new LargeBlockCache();
  return *cache;
}

// Large sizes rounded to the granule, so that tensors of nearly equal sizes
// share blocks.
size_t roundUpLarge(size_t rounded) {
  return (rounded + kLargeAllocGranule - 1) / kLargeAllocGranule * kLargeAllocGranule;
}

}  // namespace

size_t largeAllocCacheLimit() { return largeBlockCache().limit(); }
size_t largeAllocCachedBytes() { return largeBlockCache().cached(); }
void setLargeAllocCacheLimit(size_t bytes) { largeBlockCache().setLimit(bytes); }
void releaseLargeAllocCache() { largeBlockCache().releaseAll(); }
void ageLargeAllocCache() noexcept { largeBlockCache().age(); }

void* smallAlloc(size_t nbytes) {
  // No block this big can exist, and rounding it up would overflow.
  if (nbytes > SIZE_MAX / 2) throw std::bad_alloc();
  size_t rounded = roundUp(nbytes);
  if (rounded >= kLargeAllocMin) {
    rounded = roundUpLarge(rounded);
    if (void* p = largeBlockCache().take(rounded)) return p;
    try {
      return systemAlloc(rounded);
    } catch (const std::bad_alloc&) {
      // The cached blocks may be what the system is missing.
      largeBlockCache().releaseAll();
      return systemAlloc(rounded);
    }
  }
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
  if (rounded >= kLargeAllocMin) {
    largeBlockCache().put(block, roundUpLarge(rounded));
    return;
  }
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
