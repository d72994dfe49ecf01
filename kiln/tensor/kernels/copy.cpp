#include "kiln/tensor/copy.h"

#include <cstring>

#include "kiln/tensor/half.h"
#include "kiln/tensor/kernels/loops.h"

namespace kiln {

namespace {

template <typename T>
constexpr bool kIsReduced = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
constexpr bool kIsComplex = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

template <typename To, typename From>
To convert(From v) {
  if constexpr (kIsComplex<From> && kIsComplex<To>) {
    return To(static_cast<typename To::value_type>(v.real()), static_cast<typename To::value_type>(v.imag()));
  } else if constexpr (kIsComplex<From>) {
    // Into a real type: the real part (PyTorch warns that the imaginary part is discarded).
    if constexpr (std::is_same_v<To, bool>) {
      return v != From(0);
    } else {
      return convert<To>(v.real());
    }
  } else if constexpr (kIsComplex<To>) {
    return To(static_cast<typename To::value_type>(convert<double>(v)));
  } else if constexpr (kIsReduced<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (kIsReduced<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else {
    return static_cast<To>(v);
  }
}

// Every dtype a tensor can be stored in, including the reduced floats.
#define KILN_DISPATCH_STORAGE_TYPES(TYPE, NAME, ...)                                                               \
  KILN_DISPATCH_SWITCH(TYPE, NAME,                                                                                 \
                       KILN_FLOATING_CASES(__VA_ARGS__) KILN_INTEGRAL_CASES(__VA_ARGS__)                           \
                           KILN_DISPATCH_CASE(Bool, bool, __VA_ARGS__) KILN_DISPATCH_CASE(Half, Half, __VA_ARGS__) \
                               KILN_DISPATCH_CASE(BFloat16, BFloat16, __VA_ARGS__) KILN_COMPLEX_CASES(__VA_ARGS__))

}  // namespace

Tensor& copy_(Tensor& dst, const Tensor& src) {
  KILN_CHECK(dst.defined() && src.defined(), "copy_: undefined tensor");
  if (dst.numel() == 0) return dst;
  if (dst.isSame(src)) return dst;
  // Same dtype, both contiguous, same shape: one memcpy.
  if (dst.dtype() == src.dtype() && dst.isContiguous() && src.isContiguous() && dst.numel() == src.numel() &&
      dst.dim() == src.dim() && std::equal(dst.sizes().begin(), dst.sizes().end(), src.sizes().begin())) {
    std::memmove(dst.rawData(), src.rawData(), dst.nbytes());
    return dst;
  }
  // src broadcasts to dst's shape (never the other way round).
  DimVector shape = broadcastShapes(dst.sizes(), src.sizes(), "copy_");
  KILN_CHECK(IntArrayRef(shape) == dst.sizes(), "copy_: source of shape ", shapeString(src.sizes()),
             " can't be broadcast to the destination's shape ", shapeString(dst.sizes()));
  Tensor source = src;
  if (IntArrayRef(src.sizes()) != dst.sizes()) {
    DimVector strides(shape.size(), 0);
    size_t offset = shape.size() - static_cast<size_t>(src.dim());
    for (size_t d = 0; d < static_cast<size_t>(src.dim()); ++d) {
      strides[d + offset] = src.sizes()[d] == 1 ? 0 : src.strides()[d];
    }
    source = makeView(src, shape, strides, src.storageOffset());
  }
  // The internal copy: the copy_ op checks overlaps itself (checkedCopy_),
  // and out= results of ops PyTorch does not check land here too.
  TensorIter iter("copy_");
  iter.addOutput(dst).addInput(source).promoteInputs(false).checkOutputCast(false).checkMemOverlap(false).build();
  KILN_DISPATCH_STORAGE_TYPES(dst.dtype(), "copy_", [&] {
    using to_t = scalar_t;
    KILN_DISPATCH_STORAGE_TYPES(source.dtype(), "copy_", [&] {
      kernels::cpuKernel<to_t, scalar_t>(iter, [](scalar_t v) { return convert<to_t>(v); });
    });
  });
  return dst;
}

Tensor to(const Tensor& t, ScalarType dtype, bool copy) {
  if (t.dtype() == dtype && !copy) return t;
  Tensor out = empty(t.sizes(), dtype);
  copy_(out, t);
  return out;
}

Tensor contiguous(const Tensor& t) {
  if (t.isContiguous()) return t;
  return clone(t);
}

Tensor clone(const Tensor& t) {
  Tensor out = empty(t.sizes(), t.dtype());
  copy_(out, t);
  return out;
}

}  // namespace kiln
