#pragma once
// The eager kernels written over Vec<T> (vec.h), compiled once per vector
// width: vec_kernels.cpp for AVX2 (the library's own level, x86-64-v3) and
// again, in vec_kernels_avx512.cpp, with AVX-512 flags. The library runs on
// machines with AVX2 only; vecKernels<T>() gives the AVX-512 set where the
// CPU has avx512f (checked once), unless the environment says
// KILN_DISABLE_AVX512=1 or setVecIsa chose otherwise.
//
// The AVX-512 set holds only the kernels that measured faster at that width
// (see vec_kernels.cpp); for the others it runs the AVX2 ones. Both sets
// compute every element's exp and log, and softmax, log_softmax and
// logsumexp, to the same bits; a kernel that sums in vector lanes may round
// differently at another width.
#include <atomic>
#include <cstdint>

namespace kiln::kernels {

// Portable: Lane<T>, in a build not for x86-64-v3.
enum class VecIsa : uint8_t { Portable, Avx2, Avx512 };

template <typename T>
struct VecKernels {
  // The sum of p[0, n).
  T (*sum)(const T* p, int64_t n);
  // y[i] = exp(x[i]) (log(x[i])) for i < n: the vector math at this width.
  void (*exp)(const T* x, T* y, int64_t n);
  void (*log)(const T* x, T* y, int64_t n);
  // softmax, or log_softmax when `log`, of `lines` contiguous lines of n
  // elements each, one after the other.
  void (*softmaxRows)(const T* x, T* y, int64_t lines, int64_t n, bool log);
  // The same along the middle dim of `blocks` contiguous [n, inner] blocks:
  // each block holds `inner` lines, their elements `inner` apart.
  void (*softmaxColumns)(const T* x, T* y, int64_t blocks, int64_t n, int64_t inner, bool log);
  // y[l] = logsumexp of line l (of `lines` contiguous lines of n elements).
  void (*logsumexpRows)(const T* x, T* y, int64_t lines, int64_t n);
  // y[b * inner + j] = logsumexp of line j of block b, as in softmaxColumns.
  void (*logsumexpColumns)(const T* x, T* y, int64_t blocks, int64_t n, int64_t inner);
};

struct VecKernelSet {
  VecIsa isa;
  VecKernels<float> f32;
  VecKernels<double> f64;

  // The kernels of T (float or double).
  template <typename T>
  const VecKernels<T>& of() const {
    if constexpr (sizeof(T) == sizeof(float)) {
      return f32;
    } else {
      return f64;
    }
  }
};

// The kernels for `isa`, or null where this build or this CPU has none.
const VecKernelSet* vecKernelSet(VecIsa isa);
// The instruction set the eager kernels use now.
VecIsa vecIsa();
// Makes the eager kernels use `isa`, or the widest below it that this build
// and CPU have; returns the one chosen. For tests and benchmarks.
VecIsa setVecIsa(VecIsa isa);
// "avx512", "avx2" or "portable".
const char* vecIsaName(VecIsa isa);

namespace detail {
extern std::atomic<const VecKernelSet*> current_vec_kernels;
const VecKernelSet* chooseVecKernels();
}  // namespace detail

template <typename T>
const VecKernels<T>& vecKernels() {
  const VecKernelSet* set = detail::current_vec_kernels.load(std::memory_order_relaxed);
  if (!set) set = detail::chooseVecKernels();
  if constexpr (sizeof(T) == sizeof(float)) {
    return set->f32;
  } else {
    return set->f64;
  }
}

}  // namespace kiln::kernels
