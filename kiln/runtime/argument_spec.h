#pragma once
// ArgumentSpec: what the graph executor specializes a graph to (seed 001,
// "Graph Executor"): for every tensor among the inputs, directly or inside
// tuples, whether it is defined, its dtype, rank, device and requires_grad;
// for every other input, whether it is None (optionals). Equal specs share
// one execution plan.
#include <cstdint>

#include "kiln/core/ivalue.h"
#include "kiln/util/small_vector.h"

namespace kiln {

class ArgumentSpec {
 public:
  ArgumentSpec(const IValue* inputs, size_t num_inputs);

  // `declared` (a graph input's type) refined with what this spec saw for
  // input `i`: `Tensor` becomes `Float(*, *, requires_grad=0, device=cpu)`.
  TypePtr refinedInputType(size_t i, const TypePtr& declared) const;

  size_t hashCode() const { return hash_; }
  friend bool operator==(const ArgumentSpec& a, const ArgumentSpec& b) {
    return a.hash_ == b.hash_ && a.entries_ == b.entries_;
  }

 private:
  void add(const IValue& v);
  TypePtr refine(const TypePtr& declared, size_t& cursor) const;

  // One entry per input, tuples flattened after a header entry. Each entry
  // is a kind in the low bits and the tensor facts above them.
  SmallVector<uint32_t, 8> entries_;
  SmallVector<uint32_t, 8> input_starts_;
  size_t hash_ = 0;
};

struct ArgumentSpecHash {
  size_t operator()(const ArgumentSpec& spec) const { return spec.hashCode(); }
};

}  // namespace kiln
