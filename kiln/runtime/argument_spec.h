#pragma once
// ArgumentSpec: what the graph executor specializes a graph to (as
// PyTorch's graph executor does): for every tensor among the inputs, directly or inside
// tuples, whether it is defined, its dtype, rank, device and requires_grad;
// for every other input, whether it is None (optionals). Equal specs share
// one execution plan.
//
// Beyond 1.13's legacy ArgumentSpec it also records the tensors' sizes and
// strides, kept apart from the rest: the executor compiles plans for the
// first few shapes it sees (complete types: `Float(3, 4, strides=[4, 1])`)
// and one rank-level plan for any other shape, as the profiling executor
// specializes to the shapes it profiled.
#include <cstdint>

#include "kiln/core/ivalue.h"
#include "kiln/util/small_vector.h"

namespace kiln {

class ArgumentSpec {
 public:
  ArgumentSpec(const IValue* inputs, size_t num_inputs);

  // `declared` (a graph input's type) refined with what this spec saw for
  // input `i`: `Tensor` becomes `Float(*, *, requires_grad=0, device=cpu)`,
  // or with `with_shapes` `Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)`.
  TypePtr refinedInputType(size_t i, const TypePtr& declared, bool with_shapes = false) const;

  // Whether input `i` is None.
  bool isNone(size_t i) const;
  // Whether, in grad mode, a tensor input (or a tensor attribute of an
  // object input: a module's parameter) requires grad: the plan must record
  // gradients.
  bool requiresGrad() const { return requires_grad_; }

  // The rank-level facts: equality and hash ignore sizes and strides.
  size_t hashCode() const { return hash_; }
  friend bool operator==(const ArgumentSpec& a, const ArgumentSpec& b) {
    return a.hash_ == b.hash_ && a.entries_ == b.entries_;
  }
  // Whether the tensors also have the same sizes and strides.
  bool sameShapes(const ArgumentSpec& other) const {
    return shape_hash_ == other.shape_hash_ && shapes_ == other.shapes_;
  }

 private:
  void add(const IValue& v);
  TypePtr refine(const TypePtr& declared, size_t& cursor, size_t& shape_cursor, bool with_shapes) const;

  // One entry per input, tuples flattened after a header entry. Each entry
  // is a kind in the low bits and the tensor facts above them.
  SmallVector<uint32_t, 8> entries_;
  SmallVector<uint32_t, 8> input_starts_;
  SmallVector<uint32_t, 8> shape_starts_;
  // Each defined tensor's sizes, then its strides, in entry order.
  SmallVector<int64_t, 16> shapes_;
  size_t hash_ = 0;
  size_t shape_hash_ = 0;
  bool grad_enabled_ = true;
  bool requires_grad_ = false;
};

struct ArgumentSpecHash {
  size_t operator()(const ArgumentSpec& spec) const { return spec.hashCode(); }
};

}  // namespace kiln
