// Reductions over dims (sum, mean, prod, max/min with indices, amax/amin,
// argmax/argmin, all/any, norm) and the elementwise max/min of two tensors.
//
// Every reduction runs through one engine. The input's dims are split into
// kept dims (one output each) and reduced dims, each sorted outermost-first by
// input stride and merged where contiguous, so transposed and sliced inputs
// walk memory in order. Then
//   - "inner": the innermost dim is reduced: each output reduces runs of the
//     innermost dim (contiguous runs in multi-accumulator loops),
//   - "vertical": the innermost dim is kept and contiguous: a block of
//     adjacent outputs accumulates whole input rows at a time, vectorized
//     across the outputs.
// The runs (inner) or rows (vertical) of one output are combined pairwise, so
// float sums stay accurate over millions of elements, as PyTorch's cascade
// sum does. Outputs are split across threads; a reduction with fewer outputs
// than threads splits its rows instead and merges the partial results in order.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/tensor/complex.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/kernels/loops.h"
#include "kiln/tensor/kernels/reduce_utils.h"
#include "kiln/tensor/kernels/vec_kernels.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/reduce.h"

namespace kiln {
namespace {

using detail::DimMask;

// ---------------------------------------------------------------------------
// Geometry

struct LoopDim {
  int64_t size;
  int64_t in;   // input stride, elements
  int64_t out;  // output stride, elements (kept dims only)
};
using LoopDims = SmallVector<LoopDim, 8>;

struct Geometry {
  LoopDims kept;     // outermost first; never empty
  LoopDims reduced;  // outermost first; never empty
  int64_t outputs = 1;
  int64_t reduce_size = 1;
};

void sortAndMerge(LoopDims& dims, bool match_out) {
  std::stable_sort(dims.begin(), dims.end(), [](const LoopDim& a, const LoopDim& b) { return a.in > b.in; });
  LoopDims merged;
  for (const LoopDim& d : dims) {
    if (!merged.empty()) {
      LoopDim& prev = merged.back();
      if (prev.in == d.in * d.size && (!match_out || prev.out == d.out * d.size)) {
        prev = {prev.size * d.size, d.in, d.out};
        continue;
      }
    }
    merged.push_back(d);
  }
  if (merged.empty()) merged.push_back({1, 0, 0});
  dims = std::move(merged);
}

// `out_strides` are the strides of the keepdim-shaped output.
Geometry makeGeometry(const Tensor& in, const DimMask& mask, IntArrayRef out_strides) {
  Geometry g;
  for (int64_t d = 0; d < in.dim(); ++d) {
    const bool reduced = mask.test(static_cast<size_t>(d));
    const int64_t size = in.sizes()[d];
    (reduced ? g.reduce_size : g.outputs) *= size;
    if (size != 1) (reduced ? g.reduced : g.kept).push_back({size, in.strides()[d], out_strides[d]});
  }
  sortAndMerge(g.kept, true);
  sortAndMerge(g.reduced, false);
  if (g.reduce_size == 0) g.reduced = LoopDims{{0, 1, 0}};
  return g;
}

// Input and output offsets of linear index `i` over the first `ndim` of `dims`.
// (No division for the outermost dim: the common one-dim case needs none.)
std::pair<int64_t, int64_t> offsetsOf(const LoopDims& dims, size_t ndim, int64_t i) {
  int64_t in = 0, out = 0;
  for (size_t k = ndim; k-- > 1;) {
    const int64_t idx = i % dims[k].size;
    i /= dims[k].size;
    in += idx * dims[k].in;
    out += idx * dims[k].out;
  }
  if (ndim > 0) {
    in += i * dims[0].in;
    out += i * dims[0].out;
  }
  return {in, out};
}

// Walks the input offsets of consecutive linear indices over the first `ndim` of `dims`.
class DimCounter {
 public:
  DimCounter(const LoopDims& dims, size_t ndim, int64_t linear) : dims_(dims), ndim_(ndim), index_(ndim, 0) {
    for (size_t k = ndim; k-- > 0;) {
      index_[k] = k == 0 ? linear : linear % dims[k].size;
      linear = k == 0 ? 0 : linear / dims[k].size;
      offset_ += index_[k] * dims[k].in;
    }
  }
  int64_t offset() const { return offset_; }
  void next() {
    for (size_t k = ndim_; k-- > 0;) {
      offset_ += dims_[k].in;
      if (++index_[k] < dims_[k].size) return;
      offset_ -= index_[k] * dims_[k].in;
      index_[k] = 0;
    }
  }

 private:
  const LoopDims& dims_;
  size_t ndim_;
  DimVector index_;
  int64_t offset_ = 0;
};

// ---------------------------------------------------------------------------
// The engine. A reducer R provides
//   in_t, acc_t; acc_t identity(); step(acc_t&, in_t x, int64_t index);
//   merge(acc_t&, const acc_t&); store(int64_t out_offset, const acc_t&, int64_t count).
// `index` is the element's position in the reduced space: along the reduced
// dim for the reducers that report indices (they reduce one dim only).

constexpr int64_t kSegment = 16384;     // elements of a run reduced before pairwise combining
constexpr int64_t kVerticalWidth = 64;  // outputs a vertical block accumulates together
constexpr int64_t kVerticalLeaf = 16;   // rows a vertical block accumulates before pairwise combining

// Contiguous runs accumulate into kChains vectors' worth of independent
// accumulators (enough to hide the add latency), then the remainder into one
// vector's worth, then combine them as a tree.
constexpr int64_t kChains = 8;
template <typename A>
constexpr int64_t kVectorLanes = std::max<int64_t>(1, 32 / static_cast<int64_t>(sizeof(A)));

// A reducer may bring its own routine for contiguous runs.
template <typename R>
concept HasContiguousRun = requires(const R& r, typename R::acc_t& acc, const typename R::in_t* p) {
  r.accumulateContiguous(acc, p, int64_t{0}, int64_t{0});
};

template <typename R>
void accumulateRun(const R& r, typename R::acc_t& acc, const typename R::in_t* p, int64_t n, int64_t stride,
                   int64_t index) {
  if constexpr (HasContiguousRun<R>) {
    if (stride == 1) {
      r.accumulateContiguous(acc, p, n, index);
      return;
    }
  }
  using A = typename R::acc_t;
  constexpr int64_t V = kVectorLanes<A>;
  constexpr int64_t L = kChains * V;
  int64_t i = 0;
  if (stride == 1 && n >= V) {
    A lanes[L];
    for (A& lane : lanes) lane = r.identity();
    for (; i + L <= n; i += L) {
      for (int64_t j = 0; j < L; ++j) r.step(lanes[j], p[i + j], index + i + j);
    }
    for (; i + V <= n; i += V) {
      for (int64_t j = 0; j < V; ++j) r.step(lanes[j], p[i + j], index + i + j);
    }
    for (int64_t width = L / 2; width > 0; width /= 2) {
      for (int64_t j = 0; j < width; ++j) r.merge(lanes[j], lanes[j + width]);
    }
    r.merge(acc, lanes[0]);
  }
  for (; i < n; ++i) r.step(acc, p[i * stride], index + i);
}

// Reduces rows [lo, hi) into `acc` in leaves of `leaf_rows`, combined pairwise.
template <typename Acc, typename Leaf, typename Merge>
void pairwise(Acc& acc, int64_t task, int64_t lo, int64_t hi, int64_t leaf_rows, const Acc& identity, const Leaf& leaf,
              const Merge& merge) {
  if (hi - lo <= leaf_rows) {
    if (hi > lo) leaf(task, acc, lo, hi);
    return;
  }
  const int64_t leaves = (hi - lo + leaf_rows - 1) / leaf_rows;
  const int64_t mid = lo + leaves / 2 * leaf_rows;
  pairwise(acc, task, lo, mid, leaf_rows, identity, leaf, merge);
  Acc right = identity;
  pairwise(right, task, mid, hi, leaf_rows, identity, leaf, merge);
  merge(acc, right);
}

// Runs `tasks` independent reductions of `rows` rows of `row_elems` elements each.
template <typename Acc, typename Leaf, typename Merge, typename Store>
void drive(int64_t tasks, int64_t rows, int64_t row_elems, int64_t leaf_rows, const Acc& identity, const Leaf& leaf,
           const Merge& merge, const Store& store) {
  const int64_t task_elems = std::max<int64_t>(1, rows * row_elems);
  const bool split_rows = tasks < getNumThreads() && task_elems > kGrainSize && !inParallelRegion();
  if (!split_rows) {
    parallelFor(0, tasks, std::max<int64_t>(1, kGrainSize / task_elems), [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        Acc acc = identity;
        pairwise(acc, t, 0, rows, leaf_rows, identity, leaf, merge);
        store(t, acc);
      }
    });
    return;
  }
  const int64_t grain = std::max(leaf_rows, kGrainSize / std::max<int64_t>(1, row_elems));
  for (int64_t t = 0; t < tasks; ++t) {
    std::mutex mutex;
    std::vector<std::pair<int64_t, Acc>> parts;
    parallelFor(0, rows, grain, [&](int64_t begin, int64_t end) {
      Acc acc = identity;
      pairwise(acc, t, begin, end, leaf_rows, identity, leaf, merge);
      std::lock_guard<std::mutex> lock(mutex);
      parts.emplace_back(begin, acc);
    });
    std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    Acc acc = parts.front().second;
    for (size_t i = 1; i < parts.size(); ++i) merge(acc, parts[i].second);
    store(t, acc);
  }
}

template <typename R>
void reduceInner(const Geometry& g, const typename R::in_t* data, const R& r) {
  using A = typename R::acc_t;
  const LoopDim& run = g.reduced.back();
  const size_t outer_reduced = g.reduced.size() - 1;
  const int64_t pieces = (run.size + kSegment - 1) / kSegment;  // segments per run
  const int64_t segments = run.size == 0 ? 0 : g.reduce_size / run.size * pieces;
  const int64_t segment_len = std::min(run.size, kSegment);
  auto leaf = [&](int64_t task, A& acc, int64_t lo, int64_t hi) {
    const typename R::in_t* base = data + offsetsOf(g.kept, g.kept.size(), task).first;
    int64_t row_index = pieces == 1 ? lo : lo / pieces;
    int64_t piece = pieces == 1 ? 0 : lo % pieces;
    DimCounter row(g.reduced, outer_reduced, row_index);
    for (int64_t s = lo; s < hi; ++s) {
      const int64_t start = piece * kSegment;
      accumulateRun(r, acc, base + row.offset() + start * run.in, std::min(kSegment, run.size - start), run.in,
                    row_index * run.size + start);
      if (++piece == pieces) {
        piece = 0;
        ++row_index;
        row.next();
      }
    }
  };
  auto merge = [&](A& a, const A& b) { r.merge(a, b); };
  auto store = [&](int64_t task, const A& acc) {
    r.store(offsetsOf(g.kept, g.kept.size(), task).second, acc, g.reduce_size);
  };
  drive(g.outputs, segments, segment_len, std::max<int64_t>(1, kSegment / std::max<int64_t>(1, segment_len)),
        r.identity(), leaf, merge, store);
}

template <typename R>
void reduceVertical(const Geometry& g, const typename R::in_t* data, const R& r) {
  using A = typename R::acc_t;
  using Block = std::array<A, kVerticalWidth>;
  const LoopDim& col = g.kept.back();
  const size_t outer_kept = g.kept.size() - 1;
  const int64_t chunks = (col.size + kVerticalWidth - 1) / kVerticalWidth;
  Block identity;
  identity.fill(r.identity());
  auto leaf = [&](int64_t task, Block& acc, int64_t lo, int64_t hi) {
    const int64_t c0 = task % chunks * kVerticalWidth;
    const int64_t w = std::min(kVerticalWidth, col.size - c0);
    const typename R::in_t* base = data + offsetsOf(g.kept, outer_kept, task / chunks).first + c0;
    DimCounter row(g.reduced, g.reduced.size(), lo);
    for (int64_t i = lo; i < hi; ++i, row.next()) {
      const typename R::in_t* p = base + row.offset();
      if (w == kVerticalWidth) {
        for (int64_t j = 0; j < kVerticalWidth; ++j) r.step(acc[j], p[j], i);
      } else {
        for (int64_t j = 0; j < w; ++j) r.step(acc[j], p[j], i);
      }
    }
  };
  auto merge = [&](Block& a, const Block& b) {
    for (int64_t j = 0; j < kVerticalWidth; ++j) r.merge(a[j], b[j]);
  };
  auto store = [&](int64_t task, const Block& acc) {
    const int64_t c0 = task % chunks * kVerticalWidth;
    const int64_t w = std::min(kVerticalWidth, col.size - c0);
    const int64_t out = offsetsOf(g.kept, outer_kept, task / chunks).second + c0 * col.out;
    for (int64_t j = 0; j < w; ++j) r.store(out + j * col.out, acc[j], g.reduce_size);
  };
  drive(g.outputs / col.size * chunks, g.reduce_size, std::min(kVerticalWidth, col.size), kVerticalLeaf, identity, leaf,
        merge, store);
}

// Reduces `in` over `mask` into `out`, a contiguous tensor of the keepdim shape.
template <typename R>
void runReduction(const Tensor& in, const DimMask& mask, const Tensor& out, const R& r) {
  if (out.numel() == 0) return;
  Geometry g = makeGeometry(in, mask, out.strides());
  const auto* data = static_cast<const typename R::in_t*>(in.rawData());
  if (g.kept.back().in == 1 && g.reduced.back().in != 1 && g.reduce_size > 0) {
    reduceVertical(g, data, r);
  } else {
    reduceInner(g, data, r);
  }
}

// ---------------------------------------------------------------------------
// Reducers

template <typename T, typename A, bool kMean = false>
struct SumOp {
  using in_t = T;
  using acc_t = A;
  A* out;
  static A identity() { return A(0); }
  static void step(A& a, T x, int64_t) { merge(a, static_cast<A>(x)); }
  static void accumulateContiguous(A& a, const T* p, int64_t n,
                                   int64_t) requires(std::is_floating_point_v<T>&& std::is_same_v<T, A>) {
    a += kernels::vecKernels<T>().sum(p, n);
  }
  static void merge(A& a, const A& b) {
    if constexpr (std::is_same_v<A, bool>) {
      a = a || b;
    } else {
      a += b;
    }
  }
  void store(int64_t offset, const A& a, int64_t count) const {
    if constexpr (kMean) {
      out[offset] = a / static_cast<A>(count);
    } else {
      out[offset] = a;
    }
  }
};

template <typename T, typename A>
struct ProdOp {
  using in_t = T;
  using acc_t = A;
  A* out;
  static A identity() { return A(1); }
  static void step(A& a, T x, int64_t) { merge(a, static_cast<A>(x)); }
  static void merge(A& a, const A& b) {
    if constexpr (std::is_same_v<A, bool>) {
      a = a && b;
    } else {
      a *= b;
    }
  }
  void store(int64_t offset, const A& a, int64_t) const { out[offset] = a; }
};

// The larger (kMax) or smaller of a and x, where NaN beats every number.
template <bool kMax, typename T>
T pick(T a, T x) {
  if constexpr (std::is_floating_point_v<T>) {
    // The comparison picks x when x is NaN (and compiles to maxps/minps);
    // a NaN already in `a` is kept by the test after it.
    const T m = kMax ? (a > x ? a : x) : (a < x ? a : x);
    return std::isnan(a) ? a : m;
  } else {
    return kMax ? std::max(a, x) : std::min(a, x);
  }
}

template <bool kMax, typename T>
T extremumIdentity() {
  if constexpr (std::is_floating_point_v<T>) {
    return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  } else {
    return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
}

template <typename T, bool kMax>
struct ExtremumOp {
  using in_t = T;
  using acc_t = T;
  T* out;
  static T identity() { return extremumIdentity<kMax, T>(); }
  static void step(T& a, T x, int64_t) { a = pick<kMax>(a, x); }
  static void merge(T& a, const T& b) { a = pick<kMax>(a, b); }
  void store(int64_t offset, const T& a, int64_t) const { out[offset] = a; }
};

// The first i with match(p[i]), or n; tested in blocks, so the tests vectorize.
template <typename T, typename Match>
int64_t findFirst(const T* p, int64_t n, const Match& match) {
  constexpr int64_t kBlock = 32;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    int hits = 0;
    for (int64_t j = 0; j < kBlock; ++j) hits += match(p[i + j]) ? 1 : 0;
    if (hits) break;
  }
  for (; i < n && !match(p[i]); ++i) {
  }
  return i;
}

template <typename T>
struct ValueIndex {
  T value;
  int64_t index;
};

// Value and index of the extremum; NaN beats numbers, ties go to the lower index.
template <typename T, bool kMax>
struct ArgExtremumOp {
  using in_t = T;
  using acc_t = ValueIndex<T>;
  T* values;  // may be null
  int64_t* indices;
  static acc_t identity() { return {extremumIdentity<kMax, T>(), std::numeric_limits<int64_t>::max()}; }
  static bool better(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x)) return !std::isnan(y);
    }
    return kMax ? x > y : x < y;
  }
  static void step(acc_t& a, T x, int64_t index) { merge(a, {x, index}); }
  static void merge(acc_t& a, const acc_t& b) {
    if (better(b.value, a.value) || (!better(a.value, b.value) && b.index < a.index)) a = b;
  }
  // Two vectorizable passes beat one branchy one: the extremum, then where it first is.
  static void accumulateContiguous(acc_t& a, const T* p, int64_t n, int64_t index) {
    if (n == 0) return;
    T value = extremumIdentity<kMax, T>();
    accumulateRun(ExtremumOp<T, kMax>{nullptr}, value, p, n, 1, 0);
    int64_t i;
    if constexpr (std::is_floating_point_v<T>) {
      i = std::isnan(value) ? findFirst(p, n, [](T x) { return std::isnan(x); })
                            : findFirst(p, n, [value](T x) { return x == value; });
    } else {
      i = findFirst(p, n, [value](T x) { return x == value; });
    }
    merge(a, {value, index + i});
  }
  void store(int64_t offset, const acc_t& a, int64_t) const {
    if (values) values[offset] = a.value;
    indices[offset] = a.index;
  }
};

template <typename T, bool kAll>
struct AllAnyOp {
  using in_t = T;
  using acc_t = uint8_t;
  uint8_t* out;  // bool or uint8 storage: 0 or 1
  static uint8_t identity() { return kAll ? 1 : 0; }
  static void step(uint8_t& a, T x, int64_t) { merge(a, x != T(0)); }
  static void merge(uint8_t& a, const uint8_t& b) {
    if constexpr (kAll) {
      a &= b;
    } else {
      a |= b;
    }
  }
  void store(int64_t offset, const uint8_t& a, int64_t) const { out[offset] = a; }
};

enum class NormKind { Zero, One, Two, Inf, NegInf, General };

template <typename T, NormKind K>
struct NormOp {
  using in_t = T;
  using acc_t = T;
  T* out;
  T p;
  static T identity() { return K == NormKind::NegInf ? std::numeric_limits<T>::infinity() : T(0); }
  void step(T& a, T x, int64_t) const {
    const T m = std::abs(x);
    if constexpr (K == NormKind::Zero) {
      a += x != T(0) ? T(1) : T(0);
    } else if constexpr (K == NormKind::One) {
      a += m;
    } else if constexpr (K == NormKind::Two) {
      a += x * x;
    } else if constexpr (K == NormKind::General) {
      a += std::pow(m, p);
    } else {
      merge(a, m);
    }
  }
  static void merge(T& a, const T& b) {
    if constexpr (K == NormKind::Inf || K == NormKind::NegInf) {
      a = pick<K == NormKind::Inf>(a, b);
    } else {
      a += b;
    }
  }
  // The norm of nothing is 0 for every p, as in PyTorch.
  void store(int64_t offset, const T& a, int64_t count) const {
    if (count == 0) {
      out[offset] = T(0);
    } else if constexpr (K == NormKind::Two) {
      out[offset] = std::sqrt(a);
    } else if constexpr (K == NormKind::General) {
      out[offset] = std::pow(a, T(1) / p);
    } else {
      out[offset] = a;
    }
  }
};

// ---------------------------------------------------------------------------
// Ops

Tensor keepdimResult(const Tensor& self, const DimMask& mask, ScalarType dtype) {
  return empty(detail::reducedShape(self.sizes(), mask, true), dtype);
}

// The dtype sum and prod give when none is asked for.
ScalarType accumulateDtype(const Tensor& self) {
  return isIntegralType(self.dtype(), true) ? ScalarType::Long : self.dtype();
}

enum class Accumulate { Sum, Mean, Prod };

// sum, mean and prod in `dtype`. Integer inputs accumulating in int64 are read
// as they are; any other dtype change converts the input first, as PyTorch does.
Tensor accumulate(const char* op, Accumulate kind, const Tensor& self, const DimMask& mask, bool keepdim,
                  ScalarType dtype) {
  if (isComplexType(dtype)) {
    // Sums and means of complex numbers reduce the real and imaginary parts
    // separately, with the real kernels (and their pairwise accuracy).
    KILN_CHECK(kind != Accumulate::Prod, op, ": not implemented for '", scalarTypeShortName(dtype), "'");
    const Tensor in = to(self, dtype);
    const ScalarType part = toRealValueType(dtype);
    return complexFromParts(accumulate(op, kind, real(in), mask, keepdim, part),
                            accumulate(op, kind, imag(in), mask, keepdim, part));
  }
  const bool widen = isIntegralType(self.dtype(), true) && dtype == ScalarType::Long;
  const Tensor in = widen ? self : to(self, dtype);
  Tensor out = keepdimResult(self, mask, dtype);
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(in.dtype(), op, [&] {
    using T = scalar_t;
    auto run = [&](auto acc_tag) {
      using A = decltype(acc_tag);
      A* data = out.data<A>();
      switch (kind) {
        case Accumulate::Sum: runReduction(in, mask, out, SumOp<T, A>{data}); break;
        case Accumulate::Prod: runReduction(in, mask, out, ProdOp<T, A>{data}); break;
        case Accumulate::Mean:
          if constexpr (std::is_floating_point_v<A>) runReduction(in, mask, out, SumOp<T, A, true>{data});
          break;
      }
    };
    if constexpr (!std::is_floating_point_v<T>) {
      if (in.dtype() != dtype) return run(int64_t());
    }
    run(T());
  });
  return detail::dropReducedDims(out, mask, keepdim);
}

Tensor sumImpl(const Tensor& self, OptionalDims dims, bool keepdim, OptionalDtype dtype, const Tensor* out) {
  DimMask mask = detail::reductionMask(dims, self.dim());
  return accumulate("sum", Accumulate::Sum, self, mask, keepdim,
                    detail::reductionDtype(dtype, out, accumulateDtype(self)));
}

Tensor meanImpl(const Tensor& self, OptionalDims dims, bool keepdim, OptionalDtype dtype, const Tensor* out) {
  if (dtype) {
    KILN_CHECK(isFloatingType(*dtype) || isComplexType(*dtype),
               "mean(): could not infer output dtype. Optional dtype must be either a ",
               "floating point or complex dtype. Got: ", scalarTypeShortName(*dtype));
  } else {
    KILN_CHECK(isFloatingType(self.dtype()) || isComplexType(self.dtype()),
               "mean(): could not infer output dtype. Input dtype must be either a ",
               "floating point or complex dtype. Got: ", scalarTypeShortName(self.dtype()));
  }
  ScalarType compute = detail::reductionDtype(dtype, out, self.dtype());
  KILN_CHECK(isFloatingType(compute) || isComplexType(compute), "mean(): result type ",
             scalarTypeShortName(self.dtype()), " can't be cast to the desired output type ",
             scalarTypeShortName(compute));
  DimMask mask = detail::reductionMask(dims, self.dim());
  return accumulate("mean", Accumulate::Mean, self, mask, keepdim, compute);
}

Tensor prodImpl(const Tensor& self, std::optional<int64_t> dim, bool keepdim, OptionalDtype dtype, const Tensor* out) {
  DimMask mask = detail::reductionMask(dim, self.dim());
  return accumulate("prod", Accumulate::Prod, self, mask, keepdim,
                    detail::reductionDtype(dtype, out, accumulateDtype(self)));
}

template <bool kMax>
Tensor extremum(const char* op, const Tensor& self, IntArrayRef dims, bool keepdim) {
  DimMask mask = detail::reductionMask(dims, self.dim());
  detail::checkReducible(op, self, mask, !dims.empty());
  Tensor out = keepdimResult(self, mask, self.dtype());
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(
      self.dtype(), op, [&] { runReduction(self, mask, out, ExtremumOp<scalar_t, kMax>{out.data<scalar_t>()}); });
  return detail::dropReducedDims(out, mask, keepdim);
}

// Values (when `with_values`) and indices of the extremum along `dim`, or
// over the flattened tensor when `dim` is absent.
template <bool kMax>
std::tuple<Tensor, Tensor> argExtremum(const char* op, const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                       bool with_values) {
  DimMask mask = detail::reductionMask(dim, self.dim());
  KILN_CHECK_INDEX(dim || self.numel() != 0, op, "(): Expected reduction dim to be specified for input.numel() == 0.");
  detail::checkReducible(op, self, mask, dim.has_value());
  Tensor values = with_values ? keepdimResult(self, mask, self.dtype()) : Tensor();
  Tensor indices = keepdimResult(self, mask, ScalarType::Long);
  // Flat indices count in row-major order, whatever the input's layout.
  Tensor in = self, target = indices;
  DimMask in_mask = mask;
  if (!dim) {
    const Tensor flat = contiguous(self);
    const int64_t numel = flat.numel(), one = 1;
    in = makeView(flat, IntArrayRef(numel), IntArrayRef(one), flat.storageOffset());
    target = makeView(indices, IntArrayRef(one), IntArrayRef(one), indices.storageOffset());
    in_mask = DimMask(1);
  }
  auto body = [&](auto tag) {
    using T = decltype(tag);
    ArgExtremumOp<T, kMax> r{with_values ? values.data<T>() : nullptr, indices.data<int64_t>()};
    runReduction(in, in_mask, target, r);
  };
  if (with_values) {
    KILN_DISPATCH_ALL_TYPES_AND_BOOL(self.dtype(), op, [&] { body(scalar_t()); });
  } else {
    KILN_DISPATCH_ALL_TYPES(self.dtype(), op, [&] { body(scalar_t()); });
  }
  return {with_values ? detail::dropReducedDims(values, mask, keepdim) : Tensor(),
          detail::dropReducedDims(indices, mask, keepdim)};
}

template <bool kAll>
Tensor allAny(const char* op, const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  DimMask mask = detail::reductionMask(dim, self.dim());
  Tensor out = keepdimResult(self, mask, self.dtype() == ScalarType::Byte ? ScalarType::Byte : ScalarType::Bool);
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(self.dtype(), op, [&] {
    runReduction(self, mask, out, AllAnyOp<scalar_t, kAll>{static_cast<uint8_t*>(out.rawData())});
  });
  return detail::dropReducedDims(out, mask, keepdim);
}

// all/any with out=: a bool or uint8 out; a uint8 out makes PyTorch 1.13 convert
// the input to uint8 first (so 0.5 counts as false), and kiln does the same.
Tensor allAnyOutInput(const char* op, const Tensor& self, const Tensor& out) {
  KILN_CHECK(out.dtype() == ScalarType::Bool || out.dtype() == ScalarType::Byte, op,
             " only supports bool tensor for result, got: ", scalarTypeShortName(out.dtype()));
  return out.dtype() == ScalarType::Byte ? to(self, ScalarType::Byte) : self;
}

Tensor normImpl(const Tensor& self, const std::optional<Scalar>& p, OptionalDims dims, bool keepdim,
                OptionalDtype dtype) {
  // With a dtype the input is converted first, so integer and bool inputs are fine.
  if (dtype) {
    KILN_CHECK(isFloatingType(*dtype), "norm(): the desired output dtype should be either floating point or ",
               "complex. Got ", scalarTypeShortName(*dtype), " instead.");
  } else {
    KILN_CHECK(isFloatingType(self.dtype()), "norm(): input dtype should be either floating point or complex. Got ",
               scalarTypeShortName(self.dtype()), " instead.");
  }
  DimMask mask = detail::reductionMask(dims, self.dim());
  const Tensor in = dtype ? to(self, *dtype) : self;
  Tensor out = keepdimResult(in, mask, in.dtype());
  const double order = p ? p->toDouble() : 2.0;
  KILN_DISPATCH_FLOATING_TYPES(in.dtype(), "norm", [&] {
    using T = scalar_t;
    T* data = out.data<T>();
    const T tp = static_cast<T>(order);
    if (order == 0) {
      runReduction(in, mask, out, NormOp<T, NormKind::Zero>{data, tp});
    } else if (order == 1) {
      runReduction(in, mask, out, NormOp<T, NormKind::One>{data, tp});
    } else if (order == 2) {
      runReduction(in, mask, out, NormOp<T, NormKind::Two>{data, tp});
    } else if (std::isinf(order)) {
      if (order > 0) {
        runReduction(in, mask, out, NormOp<T, NormKind::Inf>{data, tp});
      } else {
        runReduction(in, mask, out, NormOp<T, NormKind::NegInf>{data, tp});
      }
    } else {
      runReduction(in, mask, out, NormOp<T, NormKind::General>{data, tp});
    }
  });
  return detail::dropReducedDims(out, mask, keepdim);
}

template <bool kMax>
Tensor binaryExtremum(const char* op, const Tensor& self, const Tensor& other, const Tensor& out) {
  TensorIter iter(op);
  iter.addOutput(out).addInput(self).addInput(other).build();
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.computeDtype(), op, [&] {
    kernels::cpuKernel<scalar_t, scalar_t, scalar_t>(iter, [](scalar_t a, scalar_t b) { return pick<kMax>(a, b); });
  });
  return iter.output();
}

}  // namespace

Tensor sum(const Tensor& self, OptionalDims dims, bool keepdim, OptionalDtype dtype) {
  return sumImpl(self, dims, keepdim, dtype, nullptr);
}

Tensor& sumOut(const Tensor& self, OptionalDims dims, bool keepdim, OptionalDtype dtype, Tensor& out) {
  return detail::assignOut(out, sumImpl(self, dims, keepdim, dtype, &out));
}

Tensor mean(const Tensor& self, OptionalDims dims, bool keepdim, OptionalDtype dtype) {
  return meanImpl(self, dims, keepdim, dtype, nullptr);
}

Tensor& meanOut(const Tensor& self, OptionalDims dims, bool keepdim, OptionalDtype dtype, Tensor& out) {
  return detail::assignOut(out, meanImpl(self, dims, keepdim, dtype, &out));
}

Tensor prod(const Tensor& self, std::optional<int64_t> dim, bool keepdim, OptionalDtype dtype) {
  return prodImpl(self, dim, keepdim, dtype, nullptr);
}

Tensor& prodOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, OptionalDtype dtype, Tensor& out) {
  return detail::assignOut(out, prodImpl(self, dim, keepdim, dtype, &out));
}

Tensor max(const Tensor& self) { return extremum<true>("max", self, {}, false); }
Tensor min(const Tensor& self) { return extremum<false>("min", self, {}, false); }

std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim) {
  return argExtremum<true>("max", self, dim, keepdim, true);
}

std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim) {
  return argExtremum<false>("min", self, dim, keepdim, true);
}

std::tuple<Tensor&, Tensor&> maxOut(const Tensor& self, int64_t dim, bool keepdim, Tensor& values, Tensor& indices) {
  detail::checkOutDtype(values, self.dtype());
  detail::checkOutDtype(indices, ScalarType::Long);
  auto [v, i] = max(self, dim, keepdim);
  return {detail::assignOut(values, v), detail::assignOut(indices, i)};
}

std::tuple<Tensor&, Tensor&> minOut(const Tensor& self, int64_t dim, bool keepdim, Tensor& values, Tensor& indices) {
  detail::checkOutDtype(values, self.dtype());
  detail::checkOutDtype(indices, ScalarType::Long);
  auto [v, i] = min(self, dim, keepdim);
  return {detail::assignOut(values, v), detail::assignOut(indices, i)};
}

Tensor max(const Tensor& self, const Tensor& other) { return binaryExtremum<true>("max", self, other, Tensor()); }
Tensor min(const Tensor& self, const Tensor& other) { return binaryExtremum<false>("min", self, other, Tensor()); }

Tensor& maxOut(const Tensor& self, const Tensor& other, Tensor& out) {
  binaryExtremum<true>("max", self, other, out);
  return out;
}

Tensor& minOut(const Tensor& self, const Tensor& other, Tensor& out) {
  binaryExtremum<false>("min", self, other, out);
  return out;
}

Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return std::get<1>(argExtremum<true>("argmax", self, dim, keepdim, false));
}

Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return std::get<1>(argExtremum<false>("argmin", self, dim, keepdim, false));
}

Tensor& argmaxOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out) {
  detail::checkOutDtype(out, ScalarType::Long);
  return detail::assignOut(out, argmax(self, dim, keepdim));
}

Tensor& argminOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out) {
  detail::checkOutDtype(out, ScalarType::Long);
  return detail::assignOut(out, argmin(self, dim, keepdim));
}

Tensor amax(const Tensor& self, IntArrayRef dims, bool keepdim) { return extremum<true>("amax", self, dims, keepdim); }
Tensor amin(const Tensor& self, IntArrayRef dims, bool keepdim) { return extremum<false>("amin", self, dims, keepdim); }

Tensor& amaxOut(const Tensor& self, IntArrayRef dims, bool keepdim, Tensor& out) {
  KILN_CHECK(out.dtype() == self.dtype(), "Expected the dtype for input and out to match, but got ",
             scalarTypeShortName(self.dtype()), " for input's dtype and ", scalarTypeShortName(out.dtype()),
             " for out's dtype.");
  return detail::assignOut(out, amax(self, dims, keepdim));
}

Tensor& aminOut(const Tensor& self, IntArrayRef dims, bool keepdim, Tensor& out) {
  KILN_CHECK(out.dtype() == self.dtype(), "Expected the dtype for input and out to match, but got ",
             scalarTypeShortName(self.dtype()), " for input's dtype and ", scalarTypeShortName(out.dtype()),
             " for out's dtype.");
  return detail::assignOut(out, amin(self, dims, keepdim));
}

Tensor all(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return allAny<true>("all", self, dim, keepdim);
}

Tensor any(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return allAny<false>("any", self, dim, keepdim);
}

Tensor& allOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out) {
  return detail::assignOut(out, all(allAnyOutInput("all", self, out), dim, keepdim));
}

Tensor& anyOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, Tensor& out) {
  return detail::assignOut(out, any(allAnyOutInput("any", self, out), dim, keepdim));
}

Tensor norm(const Tensor& self, const std::optional<Scalar>& p, OptionalDims dims, bool keepdim, OptionalDtype dtype) {
  return normImpl(self, p, dims, keepdim, dtype);
}

Tensor& normOut(const Tensor& self, const std::optional<Scalar>& p, OptionalDims dims, bool keepdim,
                OptionalDtype dtype, Tensor& out) {
  KILN_CHECK(isFloatingType(out.dtype()), "norm(): the output dtype should be either floating point or complex. Got ",
             scalarTypeShortName(out.dtype()), " instead.");
  return detail::assignOut(out, normImpl(self, p, dims, keepdim, dtype));
}

}  // namespace kiln
