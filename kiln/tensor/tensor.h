#pragma once
// The tensor: a view (sizes, strides in elements, offset) of a refcounted
// Storage, with a dtype. Copying a Tensor copies the handle, not the data;
// views made by view/select/slice/... share the Storage, so writes through a
// view reach the base.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "kiln/tensor/scalar.h"
#include "kiln/tensor/scalar_type.h"
#include "kiln/tensor/storage.h"
#include "kiln/util/small_vector.h"

namespace kiln {

using DimVector = SmallVector<int64_t, 5>;
using IntArrayRef = ArrayRef<int64_t>;

// Autograd's record of one tensor (its grad, grad_fn, hooks; the concrete
// type lives in kiln/autograd), null for tensors that never required grad,
// so that plain tensors pay one null pointer. The tensor layer knows only
// whether it requires grad.
class AutogradMetaInterface {
 public:
  virtual ~AutogradMetaInterface() = default;
  virtual bool requiresGrad() const = 0;
  virtual void setRequiresGrad(bool value) = 0;
};
// Makes the record for a tensor that starts to require grad; kiln/autograd
// installs its own at load time (the default keeps the flag alone).
using AutogradMetaFactory = std::unique_ptr<AutogradMetaInterface> (*)();
void setAutogradMetaFactory(AutogradMetaFactory factory);

class TensorImpl : public RefCounted {
 public:
  TensorImpl(StoragePtr storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  // Every op result is a new TensorImpl: cached blocks (see small_alloc.h).
  static void* operator new(size_t size);
  static void operator delete(void* p, size_t size);

  const StoragePtr& storage() const { return storage_; }
  ScalarType dtype() const { return dtype_; }
  const DimVector& sizes() const { return sizes_; }
  const DimVector& strides() const { return strides_; }
  int64_t storageOffset() const { return storage_offset_; }
  int64_t numel() const { return numel_; }
  bool isContiguous() const { return is_contiguous_; }

  // A Python number turned into a 0-dim tensor for an op: it takes part in type
  // promotion only by category (PyTorch's "wrapped number").
  bool isWrappedNumber() const { return is_wrapped_number_; }
  void setWrappedNumber(bool value) { is_wrapped_number_ = value; }
  bool requiresGrad() const { return autograd_meta_ && autograd_meta_->requiresGrad(); }
  // Makes the autograd record when it turns requires_grad on.
  void setRequiresGrad(bool value);
  AutogradMetaInterface* autogradMeta() const { return autograd_meta_.get(); }
  void setAutogradMeta(std::unique_ptr<AutogradMetaInterface> meta) { autograd_meta_ = std::move(meta); }

  // Changes the view in place (used by resize_/as_strided_ and by the
  // kernels that allocate outputs).
  void setSizesAndStrides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  void setStorage(StoragePtr storage) { storage_ = std::move(storage); }

 private:
  void refresh();

  StoragePtr storage_;
  int64_t storage_offset_;
  DimVector sizes_;
  DimVector strides_;
  int64_t numel_ = 1;
  ScalarType dtype_;
  bool is_contiguous_ = true;
  bool is_wrapped_number_ = false;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& implPtr() const { return impl_; }
  uint32_t useCount() const { return impl_.useCount(); }
  bool isSame(const Tensor& other) const { return impl_ == other.impl_; }

  ScalarType dtype() const { return impl_->dtype(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  int64_t dim() const { return static_cast<int64_t>(impl_->sizes().size()); }
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  // Dims may be negative (counted from the end), as in Python.
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t numel() const { return impl_->numel(); }
  int64_t storageOffset() const { return impl_->storageOffset(); }
  size_t itemsize() const { return elementSize(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(); }
  bool isContiguous() const { return impl_->isContiguous(); }
  bool isWrappedNumber() const { return impl_->isWrappedNumber(); }
  bool requiresGrad() const { return impl_->requiresGrad(); }
  const StoragePtr& storage() const { return impl_->storage(); }

  // Address of element 0 of this view.
  void* rawData() const {
    return static_cast<char*>(impl_->storage()->data()) + impl_->storageOffset() * static_cast<int64_t>(itemsize());
  }
  template <typename T>
  T* data() const {
    KILN_CHECK(CppTypeToScalarType<T>::value == dtype(), "expected a ", scalarTypeName(CppTypeToScalarType<T>::value),
               " tensor, got ", scalarTypeName(dtype()));
    return static_cast<T*>(rawData());
  }

  // The value of a one-element tensor.
  Scalar item() const;

  std::string toString() const;

 private:
  IntrusivePtr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& out, const Tensor& t);

// Contiguous (row-major) strides for `sizes`.
DimVector contiguousStrides(IntArrayRef sizes);
// Number of elements of a shape; checks for negative sizes.
int64_t shapeNumel(IntArrayRef sizes);
// Wraps a possibly negative dim into [0, rank); `rank` 0 accepts -1 and 0 like PyTorch.
int64_t wrapDim(int64_t dim, int64_t rank);
std::string shapeString(IntArrayRef sizes);

// Allocation.
Tensor empty(IntArrayRef sizes, ScalarType dtype = ScalarType::Float);
Tensor emptyStrided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype);
// A view of `base`'s storage with a new shape.
Tensor makeView(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
// A 0-dim tensor holding a Python number (float64, int64 or bool), marked as a wrapped number.
Tensor scalarToTensor(const Scalar& s);
Tensor scalarToTensor(const Scalar& s, ScalarType dtype);

}  // namespace kiln
