#pragma once
// Turning a scalar lambda into a TensorIter loop. Only kernel .cpp files
// include this. The contiguous case (every stride = element size) and the
// "one operand is a broadcast scalar" case get their own plain loops, which
// the compiler vectorizes; everything else walks byte strides.
//
//   cpuKernel<float, float, float>(iter, [](float a, float b) { return a + b; });
//
// The template arguments are the output type followed by the input types.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kiln/tensor/iterator.h"
#include "kiln/tensor/scalar_convert.h"

namespace kiln::kernels {

template <typename Out, typename In, typename F>
void unaryLoop(char** data, const int64_t* strides, int64_t n, const F& f) {
  Out* out = reinterpret_cast<Out*>(data[0]);
  const In* in = reinterpret_cast<const In*>(data[1]);
  if (strides[0] == sizeof(Out) && strides[1] == sizeof(In)) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
  } else if (strides[0] == sizeof(Out) && strides[1] == 0) {
    const Out v = f(in[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
  } else {
    char* o = data[0];
    const char* a = data[1];
    for (int64_t i = 0; i < n; ++i, o += strides[0], a += strides[1]) {
      *reinterpret_cast<Out*>(o) = f(*reinterpret_cast<const In*>(a));
    }
  }
}

template <typename Out, typename A, typename B, typename F>
void binaryLoop(char** data, const int64_t* strides, int64_t n, const F& f) {
  Out* out = reinterpret_cast<Out*>(data[0]);
  const A* a = reinterpret_cast<const A*>(data[1]);
  const B* b = reinterpret_cast<const B*>(data[2]);
  if (strides[0] == sizeof(Out)) {
    if (strides[1] == sizeof(A) && strides[2] == sizeof(B)) {
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
      return;
    }
    if (strides[1] == sizeof(A) && strides[2] == 0) {
      const B bv = *b;
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], bv);
      return;
    }
    if (strides[1] == 0 && strides[2] == sizeof(B)) {
      const A av = *a;
      for (int64_t i = 0; i < n; ++i) out[i] = f(av, b[i]);
      return;
    }
  }
  char* o = data[0];
  const char* pa = data[1];
  const char* pb = data[2];
  for (int64_t i = 0; i < n; ++i, o += strides[0], pa += strides[1], pb += strides[2]) {
    *reinterpret_cast<Out*>(o) = f(*reinterpret_cast<const A*>(pa), *reinterpret_cast<const B*>(pb));
  }
}

template <typename Out, typename A, typename B, typename C, typename F>
void ternaryLoop(char** data, const int64_t* strides, int64_t n, const F& f) {
  if (strides[0] == sizeof(Out) && strides[1] == sizeof(A) && strides[2] == sizeof(B) && strides[3] == sizeof(C)) {
    Out* out = reinterpret_cast<Out*>(data[0]);
    const A* a = reinterpret_cast<const A*>(data[1]);
    const B* b = reinterpret_cast<const B*>(data[2]);
    const C* c = reinterpret_cast<const C*>(data[3]);
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i], c[i]);
    return;
  }
  char* o = data[0];
  const char* pa = data[1];
  const char* pb = data[2];
  const char* pc = data[3];
  for (int64_t i = 0; i < n; ++i, o += strides[0], pa += strides[1], pb += strides[2], pc += strides[3]) {
    *reinterpret_cast<Out*>(o) =
        f(*reinterpret_cast<const A*>(pa), *reinterpret_cast<const B*>(pb), *reinterpret_cast<const C*>(pc));
  }
}

// Runs a scalar function over the iterator; arity picks the loop.
template <typename Out, typename... In, typename F>
void cpuKernel(TensorIter& iter, const F& f) {
  if constexpr (sizeof...(In) == 1) {
    iter.forEach([&](char** data, const int64_t* strides, int64_t n) { unaryLoop<Out, In...>(data, strides, n, f); });
  } else if constexpr (sizeof...(In) == 2) {
    iter.forEach([&](char** data, const int64_t* strides, int64_t n) { binaryLoop<Out, In...>(data, strides, n, f); });
  } else {
    static_assert(sizeof...(In) == 3, "cpuKernel supports 1 to 3 inputs");
    iter.forEach([&](char** data, const int64_t* strides, int64_t n) { ternaryLoop<Out, In...>(data, strides, n, f); });
  }
}

template <size_t Size>
struct UnsignedOfSize;
template <>
struct UnsignedOfSize<1> {
  using type = uint8_t;
};
template <>
struct UnsignedOfSize<2> {
  using type = uint16_t;
};
template <>
struct UnsignedOfSize<4> {
  using type = uint32_t;
};
template <>
struct UnsignedOfSize<8> {
  using type = uint64_t;
};

// c ? a : b by masking bits: the compiler vectorizes it, where the branch it
// makes of `?:` mispredicts on every other element of a random mask.
template <typename T>
T select(bool c, T a, T b) {
  using Bits = typename UnsignedOfSize<sizeof(T)>::type;
  const auto mask = static_cast<Bits>(Bits(0) - Bits(c));
  return std::bit_cast<T>(static_cast<Bits>((std::bit_cast<Bits>(a) & mask) | (std::bit_cast<Bits>(b) & ~mask)));
}

// A number argument (alpha, a clamp bound, ...) in a kernel's element type,
// with PyTorch's overflow check (kiln/tensor/scalar_convert.h). `op` is
// unused: PyTorch's message does not name the op.
template <typename T>
T checkedScalarTo(const Scalar& s, const char* op) {
  return ::kiln::checkedScalarTo<T>(s);
}

// out= of ops whose result PyTorch does not cast (neg, floor, clamp, where,
// ...): `out` must already have the result dtype.
inline void checkExactOutDtype(const Tensor& out, ScalarType dtype, const char* op) {
  KILN_CHECK(!out.defined() || out.dtype() == dtype, op, ": Found dtype ", out.dtype(), " but expected ", dtype,
             " for the out= tensor");
}

}  // namespace kiln::kernels
