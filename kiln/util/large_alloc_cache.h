#pragma once
// The process-wide cache of large freed blocks behind smallAlloc/smallFree
// (small_alloc.h). Fresh memory for a large tensor costs a page fault per
// page on first touch (glibc maps big blocks and unmaps them when freed),
// which can cost more than the computation writing it: about 3 ms per 16 MB
// here. Blocks of at least kLargeAllocMin bytes are rounded up to
// kLargeAllocGranule and, when freed, kept for the next request of the same
// rounded size (most recently freed first), up to a total byte limit; above
// it the least recently freed blocks go back to the system. The limit is
// KILN_ALLOC_CACHE_MB (MiB, read once; default 256; 0 turns the cache off).
// Blocks that sit unused through two calls of ageLargeAllocCache() go back
// to the system too: a memory plan's steady state asks for no large block,
// so what is freed after its plan was built (a dropped module's weights, a
// warm-up's temporaries) would otherwise stay resident for good.
// Thread-safe (one mutex: these allocations are rare next to their cost).
#include <cstddef>

namespace kiln {

constexpr size_t kLargeAllocMin = size_t{1} << 20;
constexpr size_t kLargeAllocGranule = size_t{64} << 10;

// The limit in bytes, and the bytes cached now.
size_t largeAllocCacheLimit();
size_t largeAllocCachedBytes();
// Changes the limit, returning what the cache holds beyond it to the system
// (0 empties and disables the cache).
void setLargeAllocCacheLimit(size_t bytes);
// Returns every cached block to the system, keeping the limit (a memory plan
// that now serves the blocks' former contents calls it once).
void releaseLargeAllocCache();
// Marks a point of steady state (a memory plan's replayed run calls it):
// blocks freed before the previous mark and not reused since are returned.
void ageLargeAllocCache() noexcept;

}  // namespace kiln
