#pragma once
// The contract between the fused-group operator (fusion_group_op.cpp), which
// prepares operands at run time, and the kernel generator (codegen.h), which
// writes C++ for one specialization of a group.
//
// A *kernel graph* is a fusion group's subgraph with chunks and concats taken
// out: its inputs are tensors (one per operand; each chunk piece is an input
// of its own) and scalars (int, float, bool: Python numbers passed to the
// kernel as arguments); its nodes are constants and the pointwise ops that
// isFusibleNode accepts; its outputs are tensors, each computed over the
// whole loop.
//
// The generated function has C linkage and this signature (FusedKernelFn):
//
//   void kiln_fused_kernel(int64_t begin, int64_t end,
//                          char* const* data,        // outputs first, then tensor inputs
//                          const int64_t* sizes,     // loop sizes, outermost first, ndim of them
//                          const int64_t* strides,   // ELEMENT strides, operand-major:
//                                                    //   strides[k * ndim + d]
//                          const KernelScalar* scalars);  // scalar inputs, in input order
//
// It computes the elements whose linear index (row-major over `sizes`) lies
// in [begin, end). The caller splits the range across threads, so the kernel
// itself is single-threaded and may be called concurrently on disjoint ranges.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/tensor/scalar_type.h"

namespace kiln {
class Graph;

namespace fuser {

// A scalar argument as the kernel receives it: int and bool inputs as `i`
// (bool is 0 or 1), float inputs as `f`.
union KernelScalar {
  int64_t i;
  double f;
};

using FusedKernelFn = void (*)(int64_t begin, int64_t end, char* const* data, const int64_t* sizes,
                               const int64_t* strides, const KernelScalar* scalars);

// The C symbol every generated kernel exports.
inline constexpr const char* kKernelSymbol = "kiln_fused_kernel";

// What type promotion needs to know of an input (PyTorch's result_type tiers).
enum class InputKind : uint8_t {
  Tensor,         // a tensor with at least one dimension
  ZeroDimTensor,  // a 0-dim tensor: loses to dimensioned tensors of the same category
  Scalar,         // a Python number (wrapped number): int, float or bool
};

struct KernelInput {
  InputKind kind = InputKind::Tensor;
  // Tensor dtype; for a Scalar input Long (int), Double (float) or Bool.
  ScalarType dtype = ScalarType::Float;
};

// How one tensor operand is walked by the loop.
enum class OperandLayout : uint8_t {
  Contiguous,  // dense in loop order: linear index i is element i
  Broadcast,   // one element for the whole loop (all strides 0)
  Strided,     // anything else: the kernel reads `strides`
};

struct KernelSpec {
  std::shared_ptr<Graph> graph;     // the kernel graph (not modified)
  std::vector<KernelInput> inputs;  // one per graph input
  std::vector<ScalarType> outputs;  // output dtypes, as inferKernelTypes gave them
  int ndim = 1;                     // loop rank (>= 1; 0-dim loops are passed as [1])
  // Outputs first, then the tensor inputs in input order. When every operand
  // is Contiguous or Broadcast the kernel can be one flat loop.
  std::vector<OperandLayout> layouts;
};

}  // namespace fuser
}  // namespace kiln
