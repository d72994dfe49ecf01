#pragma once
// What runs kiln's parallel work: the thread count, the OpenMP runtime, and
// which OpenBLAS build is loaded. For users (kiln.parallel_info(), as torch's
// torch.__config__.parallel_info()) and for benchmarks that report it.
#include <string>

namespace kiln {

// A few lines of text, one fact per line.
std::string parallelInfo();

// True when the OpenBLAS in this process runs its own pthreads rather than
// OpenMP: its threads and kiln's OpenMP team then compete for the cores.
bool blasHasOwnThreadPool();

}  // namespace kiln
