#pragma once
// The elementwise loop engine (PyTorch's TensorIterator, reduced to what kiln
// needs). Given outputs and inputs it
//   - broadcasts the input shapes and checks or allocates the outputs,
//   - computes the common dtype with PyTorch's result_type rules and casts
//     inputs to it (a cheap copy for the 0-dim wrapped numbers of scalar ops),
//   - orders dims so the innermost loop walks memory in order, and merges
//     dims that are contiguous for every operand, so most loops become one
//     flat 1-D loop,
//   - runs a 1-D inner loop over the result, split across threads.
// Kernels see only byte pointers and byte strides; kernels/loops.h turns a
// scalar lambda into such a loop with contiguous fast paths.
#include <functional>

#include "kiln/tensor/parallel.h"
#include "kiln/tensor/tensor.h"

namespace kiln {

// PyTorch's result_type over tensors (dim > 0 beat 0-dim, which beat wrapped
// numbers, unless a lower tier has a higher category: bool < int < float).
ScalarType resultType(ArrayRef<Tensor> tensors);
ScalarType resultType(const Tensor& a, const Tensor& b);
ScalarType resultType(const Tensor& a, const Scalar& b);
// Whether a value of type `from` may be written to an output of type `to`
// (PyTorch's canCast: no float->int, no int->bool narrowing by category).
bool canCast(ScalarType from, ScalarType to);
// The broadcast shape of two shapes, or an error naming both and `op`.
DimVector broadcastShapes(IntArrayRef a, IntArrayRef b, const char* op = nullptr);

class TensorIter {
 public:
  static constexpr int kMaxOperands = 6;
  // The inner loop: data pointers and byte strides of every operand (outputs
  // first), and the element count.
  using Loop = std::function<void(char** data, const int64_t* strides, int64_t n)>;

  explicit TensorIter(const char* op_name) : op_name_(op_name) {}

  // An output; an undefined tensor is allocated with the broadcast shape.
  TensorIter& addOutput(const Tensor& out);
  TensorIter& addInput(const Tensor& in);
  // Cast inputs to the common dtype (default on).
  TensorIter& promoteInputs(bool value) {
    promote_inputs_ = value;
    return *this;
  }
  // Compute in this dtype instead of the common dtype (inputs are cast to it).
  TensorIter& computeDtype(ScalarType dtype) {
    compute_dtype_ = dtype;
    return *this;
  }
  // Allocated outputs get this dtype instead of the compute dtype (bool for comparisons).
  TensorIter& outputDtype(ScalarType dtype) {
    output_dtype_ = dtype;
    return *this;
  }
  // Integer inputs compute in the default float dtype (true division, sqrt of ints).
  TensorIter& promoteIntegerToFloat(bool value) {
    int_to_float_ = value;
    return *this;
  }
  // Outputs may have fewer elements than the loop (reductions give outputs
  // stride 0 along reduced dims); the loop then never runs in parallel.
  TensorIter& allowOutputBroadcast(bool value) {
    output_broadcast_ = value;
    return *this;
  }
  // Keep existing outputs' dtype unchecked (copy_ writes any dtype to any dtype).
  TensorIter& checkOutputCast(bool value) {
    check_output_cast_ = value;
    return *this;
  }
  // PyTorch's memory-overlap checks (default on): an existing output may not
  // have elements that share memory (an expanded tensor), nor share only part
  // of its memory with an input. Off for ops PyTorch does not check (fill_,
  // the index ops) and for internal loops that write through restrided views.
  TensorIter& checkMemOverlap(bool value) {
    check_mem_overlap_ = value;
    return *this;
  }
  TensorIter& build();

  int noutputs() const { return noutputs_; }
  int ntensors() const { return ntensors_; }
  int64_t numel() const { return numel_; }
  int64_t ndim() const { return static_cast<int64_t>(shape_.size()); }
  // The shape of the loop after reordering/merging (innermost first).
  IntArrayRef loopShape() const { return shape_; }
  const int64_t* loopStrides(int op) const { return strides_[op].data(); }
  char* dataPtr(int op) const { return static_cast<char*>(operands_[op].tensor.rawData()); }
  ScalarType computeDtype() const { return compute_dtype_; }
  ScalarType dtype(int op) const { return operands_[op].tensor.dtype(); }
  // The result; call after forEach to finish outputs that were computed in a temporary.
  Tensor output(int i = 0);
  IntArrayRef broadcastShape() const { return broadcast_shape_; }

  // Runs `loop` over every element, in parallel above `grain` elements.
  void forEach(const Loop& loop, int64_t grain = kGrainSize);
  // Runs `loop` over the linear element range [begin, end) on this thread.
  void serialRange(const Loop& loop, int64_t begin, int64_t end);
  // Whether every operand is contiguous in loop order (one flat loop).
  bool isContiguous() const;

 private:
  struct Operand {
    Tensor tensor;    // what the loop reads or writes
    Tensor original;  // the user's output when `tensor` is a temporary of another dtype
    bool is_output = false;
  };

  void checkMemOverlaps() const;
  void computeTypes();
  void computeShape();
  void reorderAndCoalesce();
  bool coalesceDense();

  const char* op_name_;
  Operand operands_[kMaxOperands];
  int ntensors_ = 0;
  int noutputs_ = 0;
  bool promote_inputs_ = true;
  bool int_to_float_ = false;
  bool output_broadcast_ = false;
  bool check_output_cast_ = true;
  bool check_mem_overlap_ = true;
  ScalarType compute_dtype_ = ScalarType::Undefined;
  ScalarType output_dtype_ = ScalarType::Undefined;
  int64_t numel_ = 0;
  DimVector broadcast_shape_;
  DimVector shape_;                  // loop shape, innermost dim first
  DimVector strides_[kMaxOperands];  // byte strides in loop order
};

}  // namespace kiln
