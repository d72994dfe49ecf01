// PLACEHOLDER (replaced by the kernel compiler work).
#include "kiln/fuser/kernel_compiler.h"

namespace kiln::fuser {

CompiledKernel compileKernel(const std::string&) { return {nullptr, "the kernel compiler is not implemented yet"}; }
KernelCacheStats kernelCacheStats() { return {}; }
void resetKernelCacheStats() {}
std::string kernelCacheDir() { return {}; }
std::string kernelCompileCommand() { return {}; }

}  // namespace kiln::fuser
