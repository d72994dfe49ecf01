#include "kiln/tensor/iterator.h"

#include <algorithm>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/loop_dims.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/shape.h"
#include "kiln/tensor/type_promotion.h"
#include "kiln/util/small_vector.h"

namespace kiln {

namespace {

enum class Category { Undefined, Bool, Integral, Floating, Complex };

Category categoryOf(ScalarType t) {
  if (t == ScalarType::Undefined) return Category::Undefined;
  if (t == ScalarType::Bool) return Category::Bool;
  if (isFloatingType(t)) return Category::Floating;
  if (isComplexType(t)) return Category::Complex;
  return Category::Integral;
}

}  // namespace

ScalarType resultType(ArrayRef<Tensor> tensors) {
  SmallVector<PromotionOperand, 4> operands;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    const PromotionTier tier = t.isWrappedNumber() ? PromotionTier::WrappedNumber
                               : t.dim() == 0      ? PromotionTier::ZeroDim
                                                   : PromotionTier::Dimensioned;
    operands.push_back({t.dtype(), tier});
  }
  return resultType(ArrayRef<PromotionOperand>(operands.data(), operands.size()));
}

ScalarType resultType(const Tensor& a, const Tensor& b) {
  const Tensor both[] = {a, b};
  return resultType(ArrayRef<Tensor>(both, 2));
}

ScalarType resultType(const Tensor& a, const Scalar& b) { return resultType(a, scalarToTensor(b)); }

bool canCast(ScalarType from, ScalarType to) {
  Category f = categoryOf(from), t = categoryOf(to);
  if (f == Category::Complex && t != Category::Complex) return false;
  if (f == Category::Floating && t != Category::Floating && t != Category::Complex) return false;
  if (f != Category::Bool && t == Category::Bool) return false;
  return true;
}

DimVector broadcastShapes(IntArrayRef a, IntArrayRef b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  DimVector result(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) {
      result[i] = da;
    } else if (da == 1) {
      result[i] = db;
    } else {
      KILN_ERROR(op ? op : "broadcast", ": the size of tensor a (", da, ") must match the size of tensor b (", db,
                 ") at non-singleton dimension ", i, " (shapes ", shapeString(a), " and ", shapeString(b), ")");
    }
  }
  return result;
}

TensorIter& TensorIter::addOutput(const Tensor& out) {
  KILN_INTERNAL_ASSERT(noutputs_ == ntensors_, "outputs must be added before inputs");
  KILN_INTERNAL_ASSERT(ntensors_ < kMaxOperands);
  operands_[ntensors_].tensor = out;
  operands_[ntensors_].is_output = true;
  ++ntensors_;
  ++noutputs_;
  return *this;
}

TensorIter& TensorIter::addInput(const Tensor& in) {
  KILN_INTERNAL_ASSERT(ntensors_ < kMaxOperands);
  KILN_CHECK(in.defined(), op_name_, ": expected a defined tensor as input ", ntensors_ - noutputs_);
  operands_[ntensors_].tensor = in;
  ++ntensors_;
  return *this;
}

TensorIter& TensorIter::build() {
  checkMemOverlaps();
  computeShape();
  computeTypes();
  reorderAndCoalesce();
  return *this;
}

void TensorIter::checkMemOverlaps() const {
  // Reductions write each output element many times by design.
  if (!check_mem_overlap_ || output_broadcast_) return;
  for (int i = 0; i < noutputs_; ++i) {
    const Tensor& out = operands_[i].tensor;
    if (!out.defined()) continue;
    assertNoInternalOverlap(out);
    for (int j = noutputs_; j < ntensors_; ++j) assertNoPartialOverlap(out, operands_[j].tensor);
  }
}

void TensorIter::computeShape() {
  broadcast_shape_.clear();
  bool first = true;
  for (int i = noutputs_; i < ntensors_; ++i) {
    IntArrayRef s = operands_[i].tensor.sizes();
    broadcast_shape_ = first ? DimVector(s) : broadcastShapes(broadcast_shape_, s, op_name_);
    first = false;
  }
  for (int i = 0; i < noutputs_; ++i) {
    Tensor& out = operands_[i].tensor;
    if (!out.defined()) continue;
    if (first) {
      broadcast_shape_ = DimVector(out.sizes());
      first = false;
      continue;
    }
    if (output_broadcast_) {
      KILN_INTERNAL_ASSERT(out.dim() == static_cast<int64_t>(broadcast_shape_.size()));
      continue;
    }
    IntArrayRef s = out.sizes();
    bool same = s.size() == broadcast_shape_.size() && std::equal(s.begin(), s.end(), broadcast_shape_.begin());
    if (!same) {
      // An empty out= tensor is resized, as PyTorch does; anything else is an error.
      KILN_CHECK(out.numel() == 0, op_name_, ": output with shape ", shapeString(s),
                 " doesn't match the broadcast shape ", shapeString(broadcast_shape_));
      Tensor fresh = empty(broadcast_shape_, out.dtype());
      out.impl()->setStorage(fresh.storage());
      out.impl()->setSizesAndStrides(fresh.sizes(), fresh.strides(), 0);
    }
  }
  numel_ = 1;
  for (int64_t s : broadcast_shape_) numel_ *= s;
}

void TensorIter::computeTypes() {
  if (compute_dtype_ == ScalarType::Undefined) {
    bool same_dtype = ntensors_ > noutputs_;
    for (int i = noutputs_ + 1; i < ntensors_ && same_dtype; ++i) {
      same_dtype = operands_[i].tensor.dtype() == operands_[noutputs_].tensor.dtype();
    }
    if (same_dtype) {
      // One dtype among the inputs: promotion has nothing to decide.
      compute_dtype_ = operands_[noutputs_].tensor.dtype();
    } else if (promote_inputs_) {
      Tensor inputs[kMaxOperands];
      for (int i = noutputs_; i < ntensors_; ++i) inputs[i - noutputs_] = operands_[i].tensor;
      compute_dtype_ = resultType(ArrayRef<Tensor>(inputs, static_cast<size_t>(ntensors_ - noutputs_)));
      if (compute_dtype_ == ScalarType::Undefined && noutputs_ > 0 && operands_[0].tensor.defined()) {
        compute_dtype_ = operands_[0].tensor.dtype();
      }
    } else if (ntensors_ > noutputs_) {
      compute_dtype_ = operands_[noutputs_].tensor.dtype();
    } else {
      compute_dtype_ = operands_[0].tensor.dtype();
    }
  }
  if (int_to_float_ && !isFloatingType(compute_dtype_) && !isComplexType(compute_dtype_))
    compute_dtype_ = defaultFloatType();
  if (promote_inputs_) {
    for (int i = noutputs_; i < ntensors_; ++i) {
      Tensor& in = operands_[i].tensor;
      if (in.dtype() == compute_dtype_) continue;
      // A 0-dim operand (often a Python number) converts by value: much
      // cheaper than a copy kernel, which matters for small tensors.
      in = in.dim() == 0 ? scalarToTensor(in.item(), compute_dtype_) : to(in, compute_dtype_);
    }
  }
  ScalarType out_dtype = output_dtype_ == ScalarType::Undefined ? compute_dtype_ : output_dtype_;
  for (int i = 0; i < noutputs_; ++i) {
    Operand& op = operands_[i];
    if (!op.tensor.defined() || op.tensor.dtype() == out_dtype || !promote_inputs_) continue;
    KILN_CHECK(!check_output_cast_ || canCast(out_dtype, op.tensor.dtype()), op_name_, ": result type ", out_dtype,
               " can't be cast to the desired output type ", op.tensor.dtype());
    // Compute into a temporary of the right dtype; output() copies it back.
    op.original = op.tensor;
    op.tensor = Tensor();
  }
  output_dtype_ = out_dtype;
}

bool TensorIter::coalesceDense() {
  // Every defined operand contiguous over the whole broadcast shape, or a
  // 0-dim scalar: the loop is one flat dim. The common case for small
  // tensors, where the general reordering below costs more than the kernel.
  if (output_broadcast_ || broadcast_shape_.empty()) return false;
  for (int op = 0; op < ntensors_; ++op) {
    const Tensor& t = operands_[op].tensor;
    if (!t.defined() || t.dim() == 0) continue;
    IntArrayRef sizes = t.sizes();
    if (!t.isContiguous() || sizes.size() != broadcast_shape_.size() ||
        !std::equal(sizes.begin(), sizes.end(), broadcast_shape_.begin())) {
      return false;
    }
  }
  for (int op = 0; op < noutputs_; ++op) {
    if (!operands_[op].tensor.defined()) operands_[op].tensor = empty(broadcast_shape_, output_dtype_);
  }
  shape_.assign(1, numel_);
  for (int op = 0; op < ntensors_; ++op) {
    const Tensor& t = operands_[op].tensor;
    strides_[op].assign(1, t.dim() == 0 ? 0 : static_cast<int64_t>(t.itemsize()));
  }
  return true;
}

void TensorIter::reorderAndCoalesce() {
  if (coalesceDense()) return;
  const size_t ndim = broadcast_shape_.size();
  // Element strides of every operand over the broadcast dims (0 where broadcast).
  DimVector full_strides[kMaxOperands];
  for (int op = 0; op < ntensors_; ++op) {
    const Tensor& t = operands_[op].tensor;
    full_strides[op].assign(ndim, 0);
    if (!t.defined()) continue;
    size_t offset = ndim - static_cast<size_t>(t.dim());
    for (size_t d = 0; d < static_cast<size_t>(t.dim()); ++d) {
      full_strides[op][d + offset] = (t.sizes()[d] == 1 && broadcast_shape_[d + offset] != 1) ? 0 : t.strides()[d];
    }
  }
  // perm[i] is the broadcast dim walked at loop depth i (0 = innermost).
  // Outputs not allocated yet have zero strides: they do not take part.
  const DimVector perm = loopDimOrder(broadcast_shape_, full_strides, ntensors_, output_broadcast_ ? noutputs_ : 0);
  // Allocate outputs dense in loop order, so they follow the inputs' layout.
  for (int op = 0; op < noutputs_; ++op) {
    Operand& o = operands_[op];
    if (o.tensor.defined()) continue;
    DimVector strides(ndim);
    int64_t acc = 1;
    for (size_t i = 0; i < ndim; ++i) {
      strides[perm[i]] = acc;
      acc *= std::max<int64_t>(broadcast_shape_[perm[i]], 1);
    }
    o.tensor = emptyStrided(broadcast_shape_, strides, output_dtype_);
    full_strides[op] = strides;
    for (size_t d = 0; d < ndim; ++d) {
      if (broadcast_shape_[d] == 1) full_strides[op][d] = 0;
    }
  }
  // Loop-order byte strides, then merge dims that are contiguous for all operands.
  shape_.resize(ndim);
  for (int op = 0; op < ntensors_; ++op) {
    strides_[op].resize(ndim);
    int64_t item = static_cast<int64_t>(operands_[op].tensor.itemsize());
    for (size_t i = 0; i < ndim; ++i) strides_[op][i] = full_strides[op][perm[i]] * item;
  }
  for (size_t i = 0; i < ndim; ++i) shape_[i] = broadcast_shape_[perm[i]];
  coalesceLoopDims(shape_, strides_, ntensors_);
}

bool TensorIter::isContiguous() const {
  if (shape_.size() != 1) return false;
  for (int op = 0; op < ntensors_; ++op) {
    if (strides_[op][0] != static_cast<int64_t>(operands_[op].tensor.itemsize())) return false;
  }
  return true;
}

void TensorIter::serialRange(const Loop& loop, int64_t begin, int64_t end) {
  if (begin >= end) return;
  const size_t ndim = shape_.size();
  int64_t index[16];
  KILN_CHECK(ndim <= 16, op_name_, ": tensors of more than 16 dims are not supported");
  int64_t linear = begin;
  for (size_t d = 0; d < ndim; ++d) {
    index[d] = linear % shape_[d];
    linear /= shape_[d];
  }
  char* base[kMaxOperands];
  char* ptrs[kMaxOperands];
  int64_t inner[kMaxOperands];
  for (int op = 0; op < ntensors_; ++op) {
    base[op] = dataPtr(op);
    inner[op] = strides_[op][0];
  }
  int64_t pos = begin;
  while (pos < end) {
    for (int op = 0; op < ntensors_; ++op) {
      char* p = base[op];
      for (size_t d = 0; d < ndim; ++d) p += index[d] * strides_[op][d];
      ptrs[op] = p;
    }
    int64_t n = std::min(shape_[0] - index[0], end - pos);
    loop(ptrs, inner, n);
    pos += n;
    index[0] += n;
    for (size_t d = 0; d + 1 < ndim && index[d] == shape_[d]; ++d) {
      index[d] = 0;
      ++index[d + 1];
    }
  }
}

void TensorIter::forEach(const Loop& loop, int64_t grain) {
  if (numel_ == 0) return;
  if (output_broadcast_ || numel_ <= grain) {
    serialRange(loop, 0, numel_);
    return;
  }
  parallelFor(0, numel_, grain, [&](int64_t begin, int64_t end) { serialRange(loop, begin, end); });
}

Tensor TensorIter::output(int i) {
  Operand& op = operands_[i];
  if (op.original.defined()) {
    copy_(op.original, op.tensor);
    return op.original;
  }
  return op.tensor;
}

}  // namespace kiln
