#pragma once
// The start of every generated kernel (private to kiln/fuser/codegen.cpp):
// the text of kiln/tensor/kernels/kernel_math.h, embedded by the build
// (CMakeLists.txt writes it into a generated source file), so that fused
// kernels compute with exactly the helpers the eager kernels compile.
#include <string_view>

namespace kiln::fuser::detail {

extern const std::string_view kKernelPrelude;

}  // namespace kiln::fuser::detail
