#pragma once
// Allocation of small blocks (tensor data, TensorImpl, Storage) through a
// per-thread cache. An interpreter running small tensors allocates and frees
// the same few sizes for every instruction; reusing blocks from a free list
// is several times cheaper than malloc's aligned path. All blocks are
// 64-byte aligned; sizes above kSmallAllocMax go to the system, except large
// ones, which a process-wide cache keeps for reuse (large_alloc_cache.h).
#include <cstddef>

namespace kiln {

constexpr size_t kSmallAllocAlignment = 64;
constexpr size_t kSmallAllocMax = 1024;

// Never returns null (throws std::bad_alloc). `nbytes` may be zero.
void* smallAlloc(size_t nbytes);
// `nbytes` must be the size the block was allocated with.
void smallFree(void* block, size_t nbytes) noexcept;

}  // namespace kiln
