#pragma once
// Kernel generation: C++ source for one specialization of a kernel graph
// (kernel_spec.h), compiled by kernel_compiler.h. The source is
// self-contained (it opens with the text of kiln/tensor/kernels/kernel_math.h
// and includes nothing): element types, casts with PyTorch's semantics, and
// the pointwise ops written as scalar code in a loop that g++ -O3
// -march=native vectorizes. Transcendental functions are declared `omp
// declare simd`, so the vectorized loop calls the vector variants of kiln's
// vector math (vector_math.h, GNU vector ABI names) in libkiln.
#include <optional>
#include <string>
#include <vector>

#include "kiln/fuser/kernel_spec.h"

namespace kiln {
class Node;

namespace fuser {

// Whether the fusion pass may put `n` in a group: a pointwise op the
// generator can write (by schema), or a constant. Dtypes are not known here
// for certain; inferKernelTypes rejects what turns out unsupported.
bool isFusibleNode(const Node* n);

// The result dtypes of the kernel graph's outputs for these inputs, following
// PyTorch's type promotion (including the tiers of InputKind), or nullopt
// with `why` set when the generator cannot write the kernel for them (an
// unsupported dtype, integer division that could raise, ...).
std::optional<std::vector<ScalarType>> inferKernelTypes(const Graph& kernel_graph,
                                                        const std::vector<KernelInput>& inputs, std::string* why);

// The C++ source of the kernel (exporting kKernelSymbol). `spec.outputs`
// must be what inferKernelTypes returned for `spec.inputs`.
std::string generateKernelSource(const KernelSpec& spec);

}  // namespace fuser
}  // namespace kiln
