#pragma once
// The inter-op thread pool: forked tasks (torch.jit.fork) and interpreters
// resumed after a `wait` run here. Tasks never block a worker on a future
// (an interpreter suspends instead), so a small pool cannot deadlock.
#include <functional>

namespace kiln {

// Runs `task` on a pool thread. Exceptions escaping a task are a bug in the
// caller; tasks report failures through their futures. The pool has
// max(2, hardware threads) workers; KILN_NUM_INTEROP_THREADS overrides.
void launchTask(std::function<void()> task);

}  // namespace kiln
