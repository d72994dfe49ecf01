#pragma once
// Compiles generated kernel source into a shared object with the system
// compiler and loads it. Kernels are cached in memory (per process) and on
// disk under $XDG_CACHE_HOME/kiln/kernels (or ~/.cache/kiln/kernels), keyed
// by a hash of the source, the compiler command and its version, so a second
// process with the same kernels compiles nothing. A cache file that does not
// load (truncated, corrupt) is removed and rebuilt. Writes are atomic
// (temporary file, then rename), so processes sharing the cache never see a
// half-written kernel. Thread-safe.
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/fuser/kernel_spec.h"

namespace kiln::fuser {

struct CompiledKernel {
  FusedKernelFn fn = nullptr;  // null when compilation failed
  std::string error;           // the compiler's message when it failed
};

// The kernel for `source`: from memory, from the disk cache, or compiled now.
// Never throws for a failed compilation: returns fn == nullptr and the reason.
CompiledKernel compileKernel(const std::string& source);

struct KernelCacheStats {
  int64_t compiled = 0;        // sources compiled by the system compiler in this process
  int64_t disk_hits = 0;       // loaded from the disk cache
  int64_t memory_hits = 0;     // found already loaded in this process
  int64_t failures = 0;        // compilations that failed
  double compile_seconds = 0;  // total wall time spent compiling
};
KernelCacheStats kernelCacheStats();
void resetKernelCacheStats();

// The folder of the disk cache (created on first use). KILN_KERNEL_CACHE
// overrides it; an empty KILN_KERNEL_CACHE turns the disk cache off.
std::string kernelCacheDir();
// The compiler command (KILN_CXX, else CXX, else c++) and flags used.
std::string kernelCompileCommand();

namespace detail {
// For tests: forgets the kernels loaded in this process (they stay mapped),
// so the next compileKernel of a source goes to the disk cache as a new
// process would.
void clearKernelMemoryCache();
// For tests: where the disk cache keeps the kernel of `source` ("" when the
// disk cache is off).
std::string kernelCachePath(const std::string& source);
// For tests: the first line of `words --version`, remembered in `cache_dir`
// (when not empty) for as long as the compiler's files do not change.
std::string compilerVersion(const std::vector<std::string>& words, const std::string& cache_dir);
}  // namespace detail

}  // namespace kiln::fuser
