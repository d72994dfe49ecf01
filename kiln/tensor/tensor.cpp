#include "kiln/tensor/tensor.h"

#include <ostream>
#include <sstream>

#include "kiln/tensor/half.h"
#include "kiln/util/small_alloc.h"

namespace kiln {

void* TensorImpl::operator new(size_t size) { return smallAlloc(size); }
void TensorImpl::operator delete(void* p, size_t size) { smallFree(p, size); }

namespace {

// Before kiln/autograd installs its record: the flag alone.
class RequiresGradFlag final : public AutogradMetaInterface {
 public:
  bool requiresGrad() const override { return requires_grad_; }
  void setRequiresGrad(bool value) override { requires_grad_ = value; }

 private:
  bool requires_grad_ = false;
};

std::unique_ptr<AutogradMetaInterface> makeRequiresGradFlag() { return std::make_unique<RequiresGradFlag>(); }

AutogradMetaFactory autograd_meta_factory = &makeRequiresGradFlag;

}  // namespace

void setAutogradMetaFactory(AutogradMetaFactory factory) { autograd_meta_factory = factory; }

void TensorImpl::setRequiresGrad(bool value) {
  if (!autograd_meta_) {
    if (!value) return;
    autograd_meta_ = autograd_meta_factory();
  }
  autograd_meta_->setRequiresGrad(value);
}

TensorImpl::TensorImpl(StoragePtr storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)), storage_offset_(storage_offset), sizes_(sizes), strides_(strides), dtype_(dtype) {
  refresh();
}

void TensorImpl::setSizesAndStrides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  sizes_ = DimVector(sizes);
  strides_ = DimVector(strides);
  storage_offset_ = storage_offset;
  refresh();
}

void TensorImpl::refresh() {
  KILN_INTERNAL_ASSERT(sizes_.size() == strides_.size());
  numel_ = 1;
  for (int64_t s : sizes_) numel_ *= s;
  // PyTorch's definition: dims of size 1 may have any stride; empty tensors are contiguous.
  is_contiguous_ = true;
  if (numel_ != 0) {
    int64_t expected = 1;
    for (size_t i = sizes_.size(); i-- > 0;) {
      if (sizes_[i] == 1) continue;
      if (strides_[i] != expected) {
        is_contiguous_ = false;
        break;
      }
      expected *= sizes_[i];
    }
  }
}

int64_t wrapDim(int64_t dim, int64_t rank) {
  int64_t effective = rank <= 0 ? 1 : rank;
  KILN_CHECK_INDEX(dim >= -effective && dim < effective, "Dimension out of range (expected to be in range of [",
                   -effective, ", ", effective - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + effective : dim;
}

int64_t Tensor::size(int64_t d) const {
  KILN_CHECK_INDEX(dim() > 0, "Dimension specified as ", d, " but tensor has no dimensions");
  return sizes()[wrapDim(d, dim())];
}
int64_t Tensor::stride(int64_t d) const {
  KILN_CHECK_INDEX(dim() > 0, "Dimension specified as ", d, " but tensor has no dimensions");
  return strides()[wrapDim(d, dim())];
}

Scalar Tensor::item() const {
  KILN_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  // The reduced floats are storage types, outside the dispatch below.
  if (dtype() == ScalarType::Half) return Scalar(static_cast<float>(*static_cast<const Half*>(rawData())));
  if (dtype() == ScalarType::BFloat16) return Scalar(static_cast<float>(*static_cast<const BFloat16*>(rawData())));
  if (dtype() == ScalarType::ComplexFloat) return Scalar(*static_cast<const std::complex<float>*>(rawData()));
  if (dtype() == ScalarType::ComplexDouble) return Scalar(*static_cast<const std::complex<double>*>(rawData()));
  return KILN_DISPATCH_ALL_TYPES_AND_BOOL(dtype(), "item", [&]() -> Scalar {
    scalar_t v = *static_cast<const scalar_t*>(rawData());
    if constexpr (std::is_floating_point_v<scalar_t>) {
      return Scalar(static_cast<double>(v));
    } else if constexpr (std::is_same_v<scalar_t, bool>) {
      return Scalar(v);
    } else {
      return Scalar(static_cast<int64_t>(v));
    }
  });
}

DimVector contiguousStrides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return strides;
}

int64_t shapeNumel(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    KILN_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shapeString(sizes));
    n *= s;
  }
  return n;
}

std::string shapeString(IntArrayRef sizes) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < sizes.size(); ++i) out << (i ? ", " : "") << sizes[i];
  out << "]";
  return out.str();
}

Tensor empty(IntArrayRef sizes, ScalarType dtype) {
  int64_t n = shapeNumel(sizes);
  auto storage = makeIntrusive<Storage>(static_cast<size_t>(n) * elementSize(dtype));
  DimVector strides = contiguousStrides(sizes);
  return Tensor(makeIntrusive<TensorImpl>(std::move(storage), dtype, sizes, strides, 0));
}

Tensor emptyStrided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype) {
  KILN_CHECK(sizes.size() == strides.size(), "empty_strided: sizes ", shapeString(sizes), " and strides ",
             shapeString(strides), " differ in length");
  shapeNumel(sizes);
  int64_t extent = 1;  // elements needed to hold the furthest element
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) {
      extent = 0;
      break;
    }
    KILN_CHECK(strides[i] >= 0, "empty_strided: negative strides are not supported");
    extent += (sizes[i] - 1) * strides[i];
  }
  auto storage = makeIntrusive<Storage>(static_cast<size_t>(extent) * elementSize(dtype));
  return Tensor(makeIntrusive<TensorImpl>(std::move(storage), dtype, sizes, strides, 0));
}

Tensor makeView(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  // A view of a tensor that requires grad gets its grad_fn from autograd,
  // which records the op that made it; the view itself starts plain.
  return Tensor(makeIntrusive<TensorImpl>(base.storage(), base.dtype(), sizes, strides, storage_offset));
}

Tensor scalarToTensor(const Scalar& s, ScalarType dtype) {
  Tensor t = empty({}, dtype);
  KILN_DISPATCH_SWITCH(
      dtype, "scalar_tensor",
      KILN_FLOATING_CASES([&] { *static_cast<scalar_t*>(t.rawData()) = s.to<scalar_t>(); })
          KILN_INTEGRAL_CASES([&] { *static_cast<scalar_t*>(t.rawData()) = s.to<scalar_t>(); })
              KILN_COMPLEX_CASES([&] { *static_cast<scalar_t*>(t.rawData()) = s.to<scalar_t>(); })
                  KILN_DISPATCH_CASE(Bool, bool, [&] { *static_cast<scalar_t*>(t.rawData()) = s.toBool(); }));
  return t;
}

Tensor scalarToTensor(const Scalar& s) {
  Tensor t = scalarToTensor(s, s.type());
  t.impl()->setWrappedNumber(true);
  return t;
}

}  // namespace kiln
