// Which set of vec_kernels.cpp's kernels runs: AVX-512 where the CPU has it
// (and KILN_DISABLE_AVX512 is not set), else the library's own level.
#include <cstdlib>
#include <cstring>

#include "kiln/tensor/kernels/vec_kernels.h"

namespace kiln::kernels {

extern const VecKernelSet kDefaultVecKernels;  // vec_kernels.cpp
#if KILN_HAVE_AVX2
extern const VecKernelSet kAvx512VecKernels;  // vec_kernels_avx512.cpp
#endif

namespace {

#if KILN_HAVE_AVX2
bool cpuHasAvx512() {
  // vec_kernels_avx512.cpp is built for x86-64-v4: F, DQ, BW, VL and CD.
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd");
}
#endif

bool avx512Disabled() {
  const char* value = std::getenv("KILN_DISABLE_AVX512");
  return value && *value && std::strcmp(value, "0") != 0;
}

#if KILN_HAVE_AVX2
// Lines shorter than four 512-bit vectors run the AVX2 row kernels: at 512
// bits they are mostly a partial vector, and the AVX-512 unit running them
// at AVX2 width measured 1.03-1.17x slower than the AVX2 unit on lines of
// 4 to 16 floats.
template <typename T>
constexpr int64_t kAvx512MinLine = 4 * 64 / static_cast<int64_t>(sizeof(T));

template <typename T>
void softmaxRowsAvx512(const T* x, T* y, int64_t lines, int64_t n, bool log) {
  (n < kAvx512MinLine<T> ? kDefaultVecKernels : kAvx512VecKernels).template of<T>().softmaxRows(x, y, lines, n, log);
}

template <typename T>
void logsumexpRowsAvx512(const T* x, T* y, int64_t lines, int64_t n) {
  (n < kAvx512MinLine<T> ? kDefaultVecKernels : kAvx512VecKernels).template of<T>().logsumexpRows(x, y, lines, n);
}

// The AVX-512 set leaves null the kernels that are no faster at that width;
// the AVX2 ones run there.
template <typename T>
void fillFrom(VecKernels<T>& set, const VecKernels<T>& fallback) {
  auto fill = [](auto& entry, auto other) {
    if (!entry) entry = other;
  };
  fill(set.sum, fallback.sum);
  fill(set.exp, fallback.exp);
  fill(set.log, fallback.log);
  fill(set.softmaxRows, fallback.softmaxRows);
  fill(set.softmaxColumns, fallback.softmaxColumns);
  fill(set.logsumexpRows, fallback.logsumexpRows);
  fill(set.logsumexpColumns, fallback.logsumexpColumns);
}

const VecKernelSet* avx512Kernels() {
  static const VecKernelSet set = [] {
    VecKernelSet s = kAvx512VecKernels;
    if (s.f32.softmaxRows) s.f32.softmaxRows = &softmaxRowsAvx512<float>;
    if (s.f64.softmaxRows) s.f64.softmaxRows = &softmaxRowsAvx512<double>;
    if (s.f32.logsumexpRows) s.f32.logsumexpRows = &logsumexpRowsAvx512<float>;
    if (s.f64.logsumexpRows) s.f64.logsumexpRows = &logsumexpRowsAvx512<double>;
    fillFrom(s.f32, kDefaultVecKernels.f32);
    fillFrom(s.f64, kDefaultVecKernels.f64);
    return s;
  }();
  return &set;
}
#endif

}  // namespace

const VecKernelSet* vecKernelSet(VecIsa isa) {
  if (isa == kDefaultVecKernels.isa) return &kDefaultVecKernels;
#if KILN_HAVE_AVX2
  static const bool has_avx512 = cpuHasAvx512();
  if (isa == VecIsa::Avx512 && has_avx512) return avx512Kernels();
#endif
  return nullptr;
}

namespace detail {

std::atomic<const VecKernelSet*> current_vec_kernels{nullptr};

const VecKernelSet* chooseVecKernels() {
  const VecKernelSet* set = vecKernelSet(avx512Disabled() ? VecIsa::Avx2 : VecIsa::Avx512);
  if (!set) set = &kDefaultVecKernels;
  const VecKernelSet* expected = nullptr;
  // A concurrent setVecIsa wins.
  return current_vec_kernels.compare_exchange_strong(expected, set) ? set : expected;
}

}  // namespace detail

VecIsa vecIsa() {
  const VecKernelSet* set = detail::current_vec_kernels.load();
  return (set ? set : detail::chooseVecKernels())->isa;
}

VecIsa setVecIsa(VecIsa isa) {
  const VecKernelSet* set = nullptr;
  for (int i = static_cast<int>(isa); i >= 0 && !set; --i) set = vecKernelSet(static_cast<VecIsa>(i));
  if (!set) set = &kDefaultVecKernels;
  detail::current_vec_kernels.store(set);
  return set->isa;
}

const char* vecIsaName(VecIsa isa) {
  switch (isa) {
    case VecIsa::Avx512: return "avx512";
    case VecIsa::Avx2: return "avx2";
    case VecIsa::Portable: break;
  }
  return "portable";
}

}  // namespace kiln::kernels
