#pragma once
// What kiln knows of an operator besides its schema and kernel, declared
// with the operator (op_registration.h) and read by every layer that needs
// it: shape analysis reads `shape` and `traits`, the fuser reads
// `pointwise`, NormalizeOps reads `alias_of` and `normalize`, the peephole
// passes read `fold`, and autodiff will read `derivative`. No pass or fuser file keeps a table keyed by op name.
//
// The model is MLIR's ODS (an op definition carries its traits and
// interfaces) and ATen's native_functions.yaml with derivatives.yaml. The
// types that the slots point to live in the layers that define them
// (kiln/ops/shape_rules.h, kiln/ops/pointwise_spec.h); this header only
// names them, so that it stays cheap to include.
#include <memory>
#include <vector>

#include "kiln/core/symbol.h"

namespace kiln {

class Node;
class Value;
namespace shapes {
class Args;
struct OutputFacts;
}  // namespace shapes
struct PointwiseSpec;
struct DerivativeSpec;

// The dtype and sizes of an operator's results, from what is known of its
// arguments (kiln/ops/shape_rules.h).
using ShapeRule = std::vector<shapes::OutputFacts> (*)(const shapes::Args& args);

// Rewrites a node of this operator into its canonical form in place of it
// (NormalizeOps); returns whether it did.
using NormalizeRule = bool (*)(Node* node);

// What a node simplifies to without running it (MLIR's fold).
struct FoldResult {
  // What the node's output equals: one of its inputs, a constant the rule
  // inserted before the node, or the node's own output when the rule
  // rewrote the node in place (merging the constants of a chain). Null: no
  // simplification.
  Value* value = nullptr;
  // The operator itself returns this very tensor (type_as of a tensor that
  // already has the type), so using it changes no aliasing. Otherwise a
  // tensor result is a new tensor equal to `value`, and a pass uses `value`
  // only where alias analysis says nobody can tell the two apart.
  bool same_tensor = false;
};

// The fold of a node of this operator (kiln/ops/fold_rules.h). A rule checks
// the types itself: the value it gives has the output's type, for tensors
// its dtype and sizes as the values' refined types say, so passes apply
// the folds of tensor ops only where shape analysis refined the types.
using FoldRule = FoldResult (*)(Node* node);

// Properties that passes ask about an operator, beyond its schema.
enum class OpTrait : uint32_t {
  None = 0,
  // Makes a fresh tensor from its arguments' values alone (zeros, arange,
  // ...): shape analysis knows its result without running it.
  Factory = 1u << 0,
  // Its results never require grad, whatever its inputs (factories, detach).
  NeverRequiresGrad = 1u << 1,
  // Only `self` carries requires_grad to the result (to, type_as, *_as).
  OnlySelfRequiresGrad = 1u << 2,
  // The result's size depends on the input's values (nonzero, unique, ...).
  ValueDependentShape = 1u << 3,
  // Costly enough that shape analysis computes its result from the formula
  // rather than running it on known inputs (matrix products).
  Expensive = 1u << 4,
};
constexpr OpTrait operator|(OpTrait a, OpTrait b) {
  return static_cast<OpTrait>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
constexpr bool hasTrait(OpTrait set, OpTrait t) { return (static_cast<uint32_t>(set) & static_cast<uint32_t>(t)) != 0; }

struct OpDescription {
  // Dtype and shape of the results; null where shape analysis knows none.
  ShapeRule shape = nullptr;
  // For pointwise ops: how one element is typed and computed; the fuser
  // generates kernels from it and the eager kernel computes the same
  // expression (kiln/tensor/kernels/kernel_math.h).
  std::shared_ptr<const PointwiseSpec> pointwise;
  // For an alias (aten::absolute), the operator it is another name of
  // (aten::abs): NormalizeOps rewrites its calls into calls of that one.
  Symbol alias_of;
  // A rewrite into a canonical form beyond renaming (rsub into sub).
  NormalizeRule normalize = nullptr;
  // An algebraic simplification (`x * 1` is x), for the peephole passes.
  FoldRule fold = nullptr;
  OpTrait traits = OpTrait::None;
  // Reserved for autodiff: the derivative formula of each differentiable input.
  std::shared_ptr<const DerivativeSpec> derivative;

  bool has(OpTrait t) const { return hasTrait(traits, t); }
};

}  // namespace kiln
