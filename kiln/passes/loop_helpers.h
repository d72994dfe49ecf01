#pragma once
// Questions the loop passes (unrolling, batching a loop's products, copying
// its weights) ask about `prim::Loop` nodes and the values around them, and
// the type they give the tensors they make.
#include <memory>
#include <vector>

namespace kiln {

class Block;
class Node;
class Type;
class Value;
class VaryingShape;

// `for i in range(n)`: a loop whose conditions, before the first iteration
// and after each, are the constant true, so it runs exactly n times.
bool isForLoop(const Node* n);

// Whether `v` is computed before `loop`, not in one of its blocks at any depth.
bool definedOutside(const Value* v, const Node* loop);

// The loops under `block` (for-loops only when `for_only`), inner ones
// before the loops around them.
void collectLoops(Block* block, bool for_only, std::vector<Node*>& loops);

// A contiguous tensor of `sizes` (strides known where all sizes are), with
// `dtype_of`'s dtype and `device_of`'s device and requires_grad (either may
// be a non-tensor value: then those are unknown).
std::shared_ptr<const Type> contiguousTensorType(const VaryingShape& sizes, const Value* dtype_of,
                                                 const Value* device_of);

}  // namespace kiln
