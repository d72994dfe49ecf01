// The eager kernels written over Vec<T> (see vec_kernels.h): the sum of a
// contiguous run, softmax, log_softmax and logsumexp along contiguous lines
// or along an inner dim, and exp and log over an array. This file is
// compiled for AVX2 (or portably) and, included by vec_kernels_avx512.cpp,
// again for AVX-512.
//
// Include nothing else here but the standard library's constants: an inline
// function of another header, compiled in the AVX-512 unit, could be the
// copy the linker keeps for the whole library. vec.h keeps its own in a
// namespace per instruction set, the kernels below have internal linkage,
// and a test (VecKernelsAvx512SharesNoSymbols, CMakeLists.txt) checks that
// the AVX-512 unit defines nothing else.
#include <limits>

#include "kiln/tensor/kernels/vec.h"
#include "kiln/tensor/kernels/vec_kernels.h"

namespace kiln::kernels {
inline namespace KILN_VEC_NAMESPACE {
namespace {

template <typename T>
constexpr T kInf = std::numeric_limits<T>::infinity();

// The next narrower form after Vec<T>, for the lines along an inner dim
// that are left over when lines go Vec<T>::kSize at a time.
template <typename T>
struct NarrowerOf {
  using type = Lane<T>;
};
#if KILN_VEC_AVX512
template <>
struct NarrowerOf<float> {
  using type = Packed<Avx2FloatOps>;
};
template <>
struct NarrowerOf<double> {
  using type = Packed<Avx2DoubleOps>;
};
#endif
template <typename T>
using Narrower = typename NarrowerOf<T>::type;

// The vector type of exp passes over contiguous lines: AVX2 width even in
// the AVX-512 kernels. AVX-512's exp is two calls to the AVX2 function, and
// the extracts, joins and spills around them made the pass 1.03-1.06x
// slower at 512 bits; at 256 it is the AVX2 kernel's pass, so the sum of
// exps is the same bits at both widths. The max and scaling passes around
// it are what AVX-512 speeds up. (Lines shorter than four 512-bit vectors
// gain nothing and run the AVX2 kernels, see vec_isa.cpp.)
template <typename V>
struct ExpPassOf {
  using type = V;
};
#if KILN_VEC_AVX512
template <>
struct ExpPassOf<Packed<Avx512FloatOps>> {
  using type = Packed<Avx2FloatOps>;
};
template <>
struct ExpPassOf<Packed<Avx512DoubleOps>> {
  using type = Packed<Avx2DoubleOps>;
};
#endif
template <typename V>
using ExpPass = typename ExpPassOf<V>::type;

// y[i] = f(x[i]) for i < n, a vector at a time; the last one partial.
template <typename V, typename T, typename F>
void mapLine(const T* x, T* y, int64_t n, const F& f) {
  int64_t i = 0;
  for (; i + V::kSize <= n; i += V::kSize) f(V::load(x + i)).store(y + i);
  if (i < n) f(V::loadPartial(x + i, n - i, T(0))).storePartial(y + i, n - i);
}

template <typename T>
void expArray(const T* x, T* y, int64_t n) {
  mapLine<Vec<T>>(x, y, n, [](auto v) { return v.exp(); });
}

template <typename T>
void logArray(const T* x, T* y, int64_t n) {
  mapLine<Vec<T>>(x, y, n, [](auto v) { return v.log(); });
}

// Long runs accumulate in kChains vectors (enough to hide the add latency),
// combined as a tree.
template <typename V, typename T>
T sumOf(const T* p, int64_t n) {
  constexpr int64_t kChains = 8;
  V acc = V::broadcast(0);
  int64_t i = 0;
  if (n >= kChains * V::kSize) {
    V chains[kChains];
    for (V& c : chains) c = V::broadcast(0);
    for (; i + kChains * V::kSize <= n; i += kChains * V::kSize) {
      for (int64_t k = 0; k < kChains; ++k) chains[k] = chains[k] + V::load(p + i + k * V::kSize);
    }
    for (int64_t width = kChains / 2; width > 0; width /= 2) {
      for (int64_t k = 0; k < width; ++k) chains[k] = chains[k] + chains[k + width];
    }
    acc = chains[0];
  }
  for (; i + V::kSize <= n; i += V::kSize) acc = acc + V::load(p + i);
  if (i < n) acc = acc + V::loadPartial(p + i, n - i, T(0));
  return acc.sum();
}

template <typename T>
T sum(const T* p, int64_t n) {
  return sumOf<Vec<T>>(p, n);
}

// ---------------------------------------------------------------------------
// Contiguous lines: the line's max, then exp(x - max) and its sum, so
// nothing overflows.

// May miss a NaN, which is harmless here: a NaN anywhere in a line still
// reaches the sum of exps and so every result of the line.
template <typename V, typename T>
T lineMax(const T* x, int64_t n) {
  V acc = V::broadcast(-kInf<T>);
  int64_t i = 0;
  for (; i + V::kSize <= n; i += V::kSize) acc = V::max(acc, V::load(x + i));
  if (i < n) acc = V::max(acc, V::loadPartial(x + i, n - i, -kInf<T>));
  return acc.reduceMax();
}

// The sum of exp(x - shift); the exps are also written to `y` when it is not
// null. The lanes past the end of a partial vector hold -inf, whose exp adds
// 0 (unless shift is -inf or NaN, and then every exp of the line is NaN).
template <typename V, typename T>
T lineSumExp(const T* x, T* y, int64_t n, T shift) {
  const V vshift = V::broadcast(shift);
  V acc = V::broadcast(0);
  int64_t i = 0;
  for (; i + V::kSize <= n; i += V::kSize) {
    const V e = (V::load(x + i) - vshift).exp();
    if (y) e.store(y + i);
    acc = acc + e;
  }
  if (i < n) {
    const V e = (V::loadPartial(x + i, n - i, -kInf<T>) - vshift).exp();
    if (y) e.storePartial(y + i, n - i);
    acc = acc + e;
  }
  return acc.sum();
}

template <typename V, typename T>
void softmaxLine(const T* x, T* y, int64_t n, bool log) {
  const T m = lineMax<V>(x, n);
  if (log) {
    // (x - max) - log(sum), in that order: folding max into the shift first
    // would round away the low bits of results far below max.
    const V vm = V::broadcast(m);
    const V log_sum = V::broadcast(std::log(lineSumExp<ExpPass<V>>(x, static_cast<T*>(nullptr), n, m)));
    mapLine<V>(x, y, n, [&](V v) { return (v - vm) - log_sum; });
  } else {
    const V scale = V::broadcast(T(1) / lineSumExp<ExpPass<V>>(x, y, n, m));
    mapLine<V>(y, y, n, [&](V v) { return v * scale; });
  }
}

template <typename T>
void softmaxRows(const T* x, T* y, int64_t lines, int64_t n, bool log) {
  for (int64_t l = 0; l < lines; ++l) softmaxLine<Vec<T>>(x + l * n, y + l * n, n, log);
}

// logsumexp shifts by the max, except that an infinite max shifts by 0: a line
// of -inf then gives -inf, and one with +inf gives +inf (PyTorch's rule).
template <typename T>
T finiteShift(T max) {
  return max == kInf<T> || max == -kInf<T> ? T(0) : max;
}

template <typename T>
void logsumexpRows(const T* x, T* y, int64_t lines, int64_t n) {
  using V = Vec<T>;
  for (int64_t l = 0; l < lines; ++l) {
    const T* line = x + l * n;
    const T m = finiteShift(lineMax<V>(line, n));
    y[l] = std::log(lineSumExp<ExpPass<V>>(line, static_cast<T*>(nullptr), n, m)) + m;
  }
}

// ---------------------------------------------------------------------------
// Lines along an inner dim: V::kSize neighbouring lines at once, so that
// each lane walks its own line in order and the result of a line does not
// depend on the width. The lines start at x (and y), have n elements,
// `stride` apart.

template <typename V, typename T>
V linesMax(const T* x, int64_t n, int64_t stride) {
  V m = V::broadcast(-kInf<T>);
  for (int64_t i = 0; i < n; ++i) m = V::max(m, V::load(x + i * stride));
  return m;
}

// The sums of exp(x - shift); the exps are also written to `y` when it is not null.
template <typename V, typename T>
V linesSumExp(const T* x, T* y, int64_t n, int64_t stride, V shift) {
  V s = V::broadcast(0);
  for (int64_t i = 0; i < n; ++i) {
    const V e = (V::load(x + i * stride) - shift).exp();
    if (y) e.store(y + i * stride);
    s = s + e;
  }
  return s;
}

template <typename V, typename T>
void softmaxLines(const T* x, T* y, int64_t n, int64_t stride, bool log) {
  const V m = linesMax<V>(x, n, stride);
  const V s = linesSumExp<V>(x, log ? nullptr : y, n, stride, m);
  if (log) {
    const V log_sum = s.log();
    for (int64_t i = 0; i < n; ++i) ((V::load(x + i * stride) - m) - log_sum).store(y + i * stride);
  } else {
    const V scale = V::broadcast(1) / s;
    for (int64_t i = 0; i < n; ++i) (V::load(y + i * stride) * scale).store(y + i * stride);
  }
}

template <typename V>
V finiteShifts(V max) {
  typename V::value_type lanes[V::kSize];
  max.store(lanes);
  for (auto& m : lanes) m = finiteShift(m);
  return V::load(lanes);
}

// group(V{}, b, j) for the lines j..j+V::kSize of each block b < blocks, V
// being the widest vector type that fits. The widest is a Wide of 256 bytes
// (four cache lines of each element row): against 128 bytes it ran softmax
// along dim 0 of [4096, 1024] floats in 0.65 of the time, logsumexp in 0.8;
// 512 bytes gained a little more there but lost where fewer lines are left
// over (inner dims of 64 to 200).
template <typename T, typename Group>
void forEachLineGroup(int64_t blocks, int64_t inner, const Group& group) {
  constexpr int64_t kWideBytes = 256;
  using V = Vec<T>;
  using N = Narrower<T>;
  using W = Wide<V, static_cast<int>(kWideBytes / (V::kSize * static_cast<int64_t>(sizeof(T))))>;
  for (int64_t b = 0; b < blocks; ++b) {
    int64_t j = 0;
    for (; j + W::kSize <= inner; j += W::kSize) group(W{}, b, j);
    for (; j + V::kSize <= inner; j += V::kSize) group(V{}, b, j);
    if constexpr (N::kSize > 1) {
      for (; j + N::kSize <= inner; j += N::kSize) group(N{}, b, j);
    }
    for (; j < inner; ++j) group(Lane<T>{}, b, j);
  }
}

template <typename T>
void softmaxColumns(const T* x, T* y, int64_t blocks, int64_t n, int64_t inner, bool log) {
  forEachLineGroup<T>(blocks, inner, [&](auto vec, int64_t b, int64_t j) {
    const int64_t start = b * n * inner + j;
    softmaxLines<decltype(vec)>(x + start, y + start, n, inner, log);
  });
}

template <typename T>
void logsumexpColumns(const T* x, T* y, int64_t blocks, int64_t n, int64_t inner) {
  forEachLineGroup<T>(blocks, inner, [&](auto vec, int64_t b, int64_t j) {
    using V = decltype(vec);
    const T* start = x + b * n * inner + j;
    const V m = finiteShifts(linesMax<V>(start, n, inner));
    (linesSumExp<V, T>(start, nullptr, n, inner, m).log() + m).store(y + b * inner + j);
  });
}

#if KILN_VEC_AVX512
constexpr VecIsa kIsa = VecIsa::Avx512;
// The kernels that measured no faster at 512 bits on a Zen 5 (AVX-512 with
// full-width units) are not compiled here, and AVX-512 CPUs run their AVX2
// form (docs/PERFORMANCE.md, "Vector width"): sums stream from memory at
// the same speed (and ran 1.1-1.25x slower on runs of 20 to 100 elements),
// and lines along an inner dim spend their time in exp, which is AVX2's at
// either width (ratios 0.8 to 1.19 over five shapes).
constexpr bool kAllKernels = false;
#elif KILN_HAVE_AVX2
constexpr VecIsa kIsa = VecIsa::Avx2;
constexpr bool kAllKernels = true;
#else
constexpr VecIsa kIsa = VecIsa::Portable;
constexpr bool kAllKernels = true;
#endif

template <typename T>
constexpr VecKernels<T> kernelsOf() {
  VecKernels<T> k{};
  k.exp = &expArray<T>;
  k.log = &logArray<T>;
  k.softmaxRows = &softmaxRows<T>;
  k.logsumexpRows = &logsumexpRows<T>;
  if constexpr (kAllKernels) {
    k.sum = &sum<T>;
    k.softmaxColumns = &softmaxColumns<T>;
    k.logsumexpColumns = &logsumexpColumns<T>;
  }
  return k;
}

}  // namespace
}  // namespace KILN_VEC_NAMESPACE

#ifdef KILN_VEC_KERNELS_AVX512
extern const VecKernelSet kAvx512VecKernels;
const VecKernelSet kAvx512VecKernels = {kIsa, kernelsOf<float>(), kernelsOf<double>()};
#else
extern const VecKernelSet kDefaultVecKernels;
const VecKernelSet kDefaultVecKernels = {kIsa, kernelsOf<float>(), kernelsOf<double>()};
#endif

}  // namespace kiln::kernels
