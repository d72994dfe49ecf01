// Gather/scatter kernels and advanced indexing.
//
// Every op here reduces to one of two loops over a TensorIter whose operands
// are (destination, source, int64 index):
//   gather:  out[i] = src[i + index[i] * stride]
//   scatter: dst[i + index[i] * stride] (op)= src[i]
// where the indexed operand is a restrided view of the indexed tensor: its
// indexed dim has stride 0, so the iterator walks every other dim normally
// and the loop adds the index's offset.
#include "kiln/tensor/index.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/loops.h"
#include "kiln/tensor/shape.h"

namespace kiln {

namespace {

// The first out-of-range index any thread met (kernels cannot throw inside a parallel region).
class BadIndex {
 public:
  void record(int64_t value) {
    if (!seen_.exchange(true)) value_.store(value);
  }
  bool seen() const { return seen_.load(); }
  int64_t value() const { return value_.load(); }

 private:
  std::atomic<bool> seen_{false};
  std::atomic<int64_t> value_{0};
};

// The index values a loop accepts: lo <= k < hi, negative ones wrapping by
// `wrap`. Trusted indices are precomputed offsets that need no check.
struct IndexBounds {
  int64_t lo = INT64_MIN, hi = INT64_MAX, wrap = 0;

  static IndexBounds checked(int64_t size, bool wrap_negative) {
    return {wrap_negative ? -size : 0, size, wrap_negative ? size : 0};
  }
  static IndexBounds trusted() { return {}; }

  // The index to use, or false when it is out of range.
  bool resolve(int64_t& k) const {
    if (k < lo || k >= hi) return false;
    if (k < 0) k += wrap;
    return true;
  }
};

// Operands: 0 = out, 1 = src (restrided), 2 = int64 index. `stride` is in bytes.
void gatherLoop(TensorIter& iter, int64_t stride, IndexBounds bounds, BadIndex& bad) {
  withElementType(elementSize(iter.dtype(0)), [&](auto tag) {
    using T = decltype(tag);
    iter.forEach([&, bounds](char** data, const int64_t* strides, int64_t n) {
      char* out = data[0];
      const char* src = data[1];
      const char* idx = data[2];
      if (strides[2] == 0) {
        // One index for the whole run (a row of the result): a strided copy.
        int64_t k = *reinterpret_cast<const int64_t*>(idx);
        const int64_t original = k;
        if (!bounds.resolve(k)) return bad.record(original);
        src += k * stride;
        if (strides[0] == sizeof(T) && strides[1] == sizeof(T)) {
          std::memcpy(out, src, static_cast<size_t>(n) * sizeof(T));
          return;
        }
        for (int64_t i = 0; i < n; ++i) {
          *reinterpret_cast<T*>(out + i * strides[0]) = *reinterpret_cast<const T*>(src + i * strides[1]);
        }
        return;
      }
      if (strides[0] == sizeof(T) && strides[2] == sizeof(int64_t)) {
        // Locals, so the loop keeps them in registers across the stores.
        T* o = reinterpret_cast<T*>(out);
        const int64_t* ks = reinterpret_cast<const int64_t*>(idx);
        const int64_t src_step = strides[1], index_step = stride;
        const IndexBounds b = bounds;
        for (int64_t i = 0; i < n; ++i) {
          int64_t k = ks[i];
          if (!b.resolve(k)) {
            bad.record(ks[i]);
            continue;
          }
          o[i] = *reinterpret_cast<const T*>(src + i * src_step + k * index_step);
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        int64_t k = *reinterpret_cast<const int64_t*>(idx + i * strides[2]);
        const int64_t original = k;
        if (!bounds.resolve(k)) {
          bad.record(original);
          continue;
        }
        *reinterpret_cast<T*>(out + i * strides[0]) = *reinterpret_cast<const T*>(src + i * strides[1] + k * stride);
      }
    });
  });
}

// The scatter reductions; bool adds as `or` and multiplies as `and`.
template <typename T>
T product(T x, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return x && v;
  } else {
    return static_cast<T>(x * v);
  }
}
template <typename T>
T sumScaled(T x, T v, T alpha) {
  if constexpr (std::is_same_v<T, bool>) {
    return x || (alpha && v);
  } else {
    return static_cast<T>(x + alpha * v);
  }
}

// Operands: 0 = dst (restrided), 1 = src, 2 = int64 index. Reductions (and
// scatters that may hit one element twice and must be deterministic) run
// serially.
void scatterLoop(TensorIter& iter, int64_t stride, IndexBounds bounds, ScatterReduce reduce, const Scalar& alpha,
                 bool serial, BadIndex& bad) {
  auto run = [&](const TensorIter::Loop& loop) {
    if (serial) {
      iter.serialRange(loop, 0, iter.numel());
    } else {
      iter.forEach(loop);
    }
  };
  auto loopWith = [&](auto tag, auto combine) {
    using T = decltype(tag);
    run([&, bounds](char** data, const int64_t* strides, int64_t n) {
      char* dst = data[0];
      const char* src = data[1];
      const char* idx = data[2];
      if (strides[2] == 0) {
        // One index for the whole run (a row of the destination): a strided update.
        int64_t k = *reinterpret_cast<const int64_t*>(idx);
        const int64_t original = k;
        if (!bounds.resolve(k)) return bad.record(original);
        T* d = reinterpret_cast<T*>(dst + k * stride);
        const T* v = reinterpret_cast<const T*>(src);
        if (strides[0] == sizeof(T) && strides[1] == sizeof(T)) {
          for (int64_t i = 0; i < n; ++i) d[i] = combine(d[i], v[i]);
        } else if (strides[0] == sizeof(T) && strides[1] == 0) {
          for (int64_t i = 0; i < n; ++i) d[i] = combine(d[i], *v);
        } else {
          const int64_t ds = strides[0] / static_cast<int64_t>(sizeof(T)),
                        vs = strides[1] / static_cast<int64_t>(sizeof(T));
          for (int64_t i = 0; i < n; ++i) d[i * ds] = combine(d[i * ds], v[i * vs]);
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        int64_t k = *reinterpret_cast<const int64_t*>(idx + i * strides[2]);
        const int64_t original = k;
        if (!bounds.resolve(k)) {
          bad.record(original);
          continue;
        }
        T* d = reinterpret_cast<T*>(dst + i * strides[0] + k * stride);
        *d = combine(*d, *reinterpret_cast<const T*>(src + i * strides[1]));
      }
    });
  };
  if (reduce == ScatterReduce::None) {
    withElementType(elementSize(iter.dtype(0)), [&](auto tag) {
      using T = decltype(tag);
      loopWith(tag, [](T, T v) { return v; });
    });
    return;
  }
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(iter.dtype(0), "scatter", [&] {
    const scalar_t a = checkedScalarTo<scalar_t>(alpha);
    if (reduce == ScatterReduce::Multiply) {
      loopWith(scalar_t{}, [](scalar_t x, scalar_t v) { return product(x, v); });
    } else if (a == scalar_t(1)) {
      loopWith(scalar_t{}, [](scalar_t x, scalar_t v) { return sumScaled(x, v, scalar_t(1)); });
    } else {
      loopWith(scalar_t{}, [a](scalar_t x, scalar_t v) { return sumScaled(x, v, a); });
    }
  });
}

// A number to write into `self`, as a 0-dim tensor of its dtype (checked for overflow).
Tensor fillValueOf(const Scalar& value, const Tensor& self) {
  checkScalarFits(value, self.dtype());
  return scalarToTensor(value, self.dtype());
}

// `out` is a restrided view that may repeat elements by design: the callers
// check the user's tensor themselves where PyTorch does.
TensorIter& buildIter(TensorIter& iter, const Tensor& out, const Tensor& src, const Tensor& index) {
  return iter.addOutput(out).addInput(src).addInput(index).promoteInputs(false).checkMemOverlap(false).build();
}

// A 0-dim tensor as a 1-element 1-D view (gather/scatter treat them alike).
Tensor atLeast1d(const Tensor& t) {
  if (t.dim() > 0) return t;
  return makeView(t, DimVector{1}, DimVector{1}, t.storageOffset());
}

// `t` over `sizes` with its own strides, except stride 0 along `dim`.
Tensor restride(const Tensor& t, IntArrayRef sizes, int64_t dim) {
  DimVector strides(t.strides());
  strides[dim] = 0;
  return makeView(t, sizes, strides, t.storageOffset());
}

// A 1-D index as a view of `rank` dims that varies only along `dim`.
Tensor alongDim(const Tensor& index, int64_t rank, int64_t dim) {
  DimVector sizes(static_cast<size_t>(rank), 1), strides(static_cast<size_t>(rank), 0);
  sizes[dim] = index.numel();
  strides[dim] = index.dim() == 0 ? 0 : index.strides()[0];
  return makeView(index, sizes, strides, index.storageOffset());
}

int64_t strideBytes(const Tensor& t, int64_t dim) { return t.strides()[dim] * static_cast<int64_t>(t.itemsize()); }

void checkIndexDtype(const Tensor& index, const char* op) {
  KILN_CHECK(index.dtype() == ScalarType::Long, op, "(): Expected dtype int64 for index");
}

// PyTorch's gather/scatter shape rules; 0-dim tensors count as 1-D.
void checkGatherShapes(const Tensor& self, int64_t dim, const Tensor& index) {
  const Tensor s = atLeast1d(self), i = atLeast1d(index);
  KILN_CHECK(i.dim() == s.dim(), "Index tensor must have the same number of dimensions as input tensor");
  for (int64_t d = 0; d < s.dim(); ++d) {
    KILN_CHECK(d == dim || i.sizes()[d] <= s.sizes()[d], "Size does not match at dimension ", d, " expected index ",
               shapeString(index.sizes()), " to be smaller than self ", shapeString(self.sizes()),
               " apart from dimension ", dim);
  }
}

void checkScatterShapes(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src) {
  const Tensor s = atLeast1d(self), i = atLeast1d(index);
  KILN_CHECK(i.dim() == s.dim(), "Index tensor must have the same number of dimensions as self tensor");
  const Tensor source = src ? atLeast1d(*src) : Tensor();
  KILN_CHECK(!src || source.dim() == s.dim(), "Index tensor must have the same number of dimensions as src tensor");
  bool wrong = false;
  for (int64_t d = 0; d < s.dim(); ++d) {
    wrong = wrong || (d != dim && i.sizes()[d] > s.sizes()[d]) || (src && i.sizes()[d] > source.sizes()[d]);
  }
  KILN_CHECK(!wrong, "Expected index ", shapeString(index.sizes()), " to be smaller than self ",
             shapeString(self.sizes()), " apart from dimension ", dim, src ? " and to be smaller size than src " : "",
             src ? shapeString(src->sizes()) : "");
}

void throwIfBad(const BadIndex& bad, int64_t dim, int64_t size) {
  KILN_CHECK(!bad.seen(), "index ", bad.value(), " is out of bounds for dimension ", dim, " with size ", size);
}

// The scatter family on checked arguments: self[... index ...] (op)= src.
Tensor& scatterImpl(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce) {
  if (index.numel() == 0) return self;
  assertNoInternalOverlap(self);
  Tensor s = atLeast1d(self), i = atLeast1d(index);
  TensorIter iter("scatter");
  buildIter(iter, restride(s, i.sizes(), dim), makeView(src, i.sizes(), atLeast1d(src).strides(), src.storageOffset()),
            i);
  BadIndex bad;
  scatterLoop(iter, strideBytes(s, dim), IndexBounds::checked(s.sizes()[dim], false), reduce, 1,
              reduce != ScatterReduce::None, bad);
  throwIfBad(bad, dim, s.sizes()[dim]);
  return self;
}

// Checks the index of the index_* ops (index_select, index_add, index_fill): a vector.
Tensor vectorIndex(const Tensor& index, const char* op, bool allow_int32) {
  KILN_CHECK_INDEX(index.dim() <= 1, op, "(): Index is supposed to be a vector");
  if (allow_int32) {
    KILN_CHECK(index.dtype() == ScalarType::Long || index.dtype() == ScalarType::Int, op,
               "(): Expected dtype int32 or int64 for index");
  } else {
    KILN_CHECK_INDEX(index.dtype() == ScalarType::Long, op, "(): Expected dtype int64 for index.");
  }
  return atLeast1d(to(index, ScalarType::Long));
}

// Advanced indexing, prepared: `src` is self restrided to the result's shape
// (stride 0 over the broadcast index dims) and `offsets` the element offset
// of every index position, shaped to broadcast against the result.
struct AdvancedIndex {
  Tensor src;
  Tensor offsets;
  DimVector result_shape;
};

std::string tooManyIndices(int64_t rank, size_t got) {
  return detail::str("too many indices for tensor of dimension ", rank, " (got ", got, ")");
}

bool isMask(const Tensor& t) { return t.dtype() == ScalarType::Bool || t.dtype() == ScalarType::Byte; }

// A mask indexing self's dims [start, start + mask.dim()) must match their sizes.
void checkMaskShape(const Tensor& self, int64_t start, const Tensor& mask) {
  KILN_CHECK_INDEX(start + mask.dim() <= self.dim(),
                   tooManyIndices(self.dim(), static_cast<size_t>(start + mask.dim())));
  for (int64_t j = 0; j < mask.dim(); ++j) {
    KILN_CHECK_INDEX(mask.sizes()[j] == self.sizes()[start + j], "The shape of the mask ", shapeString(mask.sizes()),
                     " at index ", j, " does not match the shape of the indexed tensor ", shapeString(self.sizes()),
                     " at index ", start + j);
  }
}

// The indexed dims of an advanced index: `count` dims of `base` from `first`
// replaced by `shape`, with each position's element offset in `offsets`.
struct IndexedDims {
  Tensor base;
  int64_t first = 0;
  int64_t count = 0;
  DimVector shape;
  Tensor offsets;  // int64, contiguous, of `shape`
};

// One mask at dims [first, first + mask.dim()): the offsets of its set
// elements, in row-major order, without materializing their coordinates.
IndexedDims maskOffsets(const Tensor& self, int64_t first, const Tensor& mask) {
  checkMaskShape(self, first, mask);
  const Tensor m = contiguous(to(mask, ScalarType::Bool));
  const bool* set = m.data<bool>();
  const int64_t n = m.numel(), k = m.dim();
  IndexedDims dims{self, first, k, DimVector{std::count(set, set + n, true)}, Tensor()};
  dims.offsets = empty(dims.shape, ScalarType::Long);
  int64_t* off = dims.offsets.data<int64_t>();
  DimVector coord(static_cast<size_t>(k), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (set[i]) *off++ = offset;
    // Advance the row-major coordinate, keeping the offset in step.
    for (int64_t d = k - 1; d >= 0; --d) {
      const int64_t stride = self.strides()[first + d];
      if (++coord[d] < m.sizes()[d]) {
        offset += stride;
        break;
      }
      offset -= (coord[d] - 1) * stride;
      coord[d] = 0;
    }
  }
  return dims;
}

// Index tensors (masks expanded to their coordinates) broadcast together.
IndexedDims indexOffsets(const Tensor& self, ArrayRef<Tensor> raw) {
  const int64_t rank = self.dim();
  std::vector<Tensor> indices;
  for (const Tensor& idx : raw) {
    if (!idx.defined()) {
      indices.emplace_back();
    } else if (isMask(idx)) {
      checkMaskShape(self, static_cast<int64_t>(indices.size()), idx);
      Tensor coords = nonzero(idx);
      for (int64_t j = 0; j < idx.dim(); ++j) indices.push_back(select(coords, 1, j));
    } else {
      KILN_CHECK_INDEX(idx.dtype() == ScalarType::Long, "tensors used as indices must be long, byte or bool tensors");
      indices.push_back(idx);
    }
  }
  indices.resize(static_cast<size_t>(rank));

  IndexedDims result;
  std::vector<int64_t> dims;  // the indexed dims, in order
  std::string shapes;
  bool mismatch = false;
  for (int64_t d = 0; d < rank; ++d) {
    const Tensor& idx = indices[d];
    if (!idx.defined()) continue;
    shapes += (dims.empty() ? "" : ", ") + shapeString(idx.sizes());
    if (dims.empty()) {
      result.shape = DimVector(idx.sizes());
    } else if (!mismatch) {
      try {
        result.shape = broadcastShapes(result.shape, idx.sizes());
      } catch (const Error&) {
        mismatch = true;
      }
    }
    dims.push_back(d);
  }
  KILN_CHECK_INDEX(!mismatch, "shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes);
  KILN_CHECK_INDEX(!dims.empty(), "index(): at least one index must be a tensor");

  // Adjacent indexed dims stay in place; otherwise they move to the front.
  result.base = self;
  result.first = dims.front();
  result.count = static_cast<int64_t>(dims.size());
  if (dims.back() - dims.front() + 1 != result.count) {
    DimVector order(dims.begin(), dims.end());
    for (int64_t d = 0; d < rank; ++d) {
      if (!indices[d].defined()) order.push_back(d);
    }
    result.base = permute(self, order);
    result.first = 0;
  }

  result.offsets = empty(result.shape, ScalarType::Long);
  int64_t* off = result.offsets.data<int64_t>();
  const int64_t n = result.offsets.numel();
  std::fill(off, off + n, int64_t{0});
  for (int64_t j = 0; j < result.count; ++j) {
    const int64_t dim = result.first + j;
    const int64_t size = result.base.sizes()[dim], stride = result.base.strides()[dim];
    Tensor expanded = contiguous(expand(indices[dims[j]], result.shape));
    const int64_t* values = expanded.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = values[i];
      KILN_CHECK_INDEX(k >= -size && k < size, "index ", k, " is out of bounds for dimension ", dim, " with size ",
                       size);
      off[i] += (k < 0 ? k + size : k) * stride;
    }
  }
  return result;
}

AdvancedIndex makeAdvancedIndex(const Tensor& self, ArrayRef<Tensor> raw) {
  KILN_CHECK_INDEX(static_cast<int64_t>(raw.size()) <= self.dim(), tooManyIndices(self.dim(), raw.size()));
  // A lone mask (x[mask], x[:, mask]) needs no coordinates.
  int64_t defined = 0, first = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i].defined() && defined++ == 0) first = static_cast<int64_t>(i);
  }
  const bool lone_mask = defined == 1 && isMask(raw[first]) && raw[first].dim() > 0;
  const IndexedDims dims = lone_mask ? maskOffsets(self, first, raw[first]) : indexOffsets(self, raw);

  AdvancedIndex result;
  DimVector src_strides, offset_sizes, offset_strides;
  const DimVector index_strides = contiguousStrides(dims.shape);
  const Tensor& base = dims.base;
  for (int64_t d = 0; d < base.dim(); ++d) {
    if (d < dims.first || d >= dims.first + dims.count) {
      result.result_shape.push_back(base.sizes()[d]);
      src_strides.push_back(base.strides()[d]);
      offset_sizes.push_back(1);
      offset_strides.push_back(0);
    }
    if (d == dims.first) {
      for (size_t j = 0; j < dims.shape.size(); ++j) {
        result.result_shape.push_back(dims.shape[j]);
        src_strides.push_back(0);
        offset_sizes.push_back(dims.shape[j]);
        offset_strides.push_back(index_strides[j]);
      }
    }
  }
  result.src = makeView(base, result.result_shape, src_strides, base.storageOffset());
  result.offsets = makeView(dims.offsets, offset_sizes, offset_strides, 0);
  return result;
}

// PyTorch runs index_put_ with one mask (the other indices None) and a
// one-element value as masked_fill_, which neither checks the value's dtype nor
// overlap; the mask is returned shaped to broadcast against self.
std::optional<Tensor> fillMask(const Tensor& self, ArrayRef<Tensor> indices, const Tensor& values) {
  if (values.numel() != 1) return std::nullopt;
  Tensor mask;
  int64_t before = 0;  // full slices before the mask
  for (const Tensor& idx : indices) {
    if (!idx.defined()) {
      before += mask.defined() ? 0 : 1;
      continue;
    }
    if (mask.defined() || !isMask(idx)) return std::nullopt;
    mask = idx;
  }
  if (!mask.defined()) return std::nullopt;
  checkMaskShape(self, before, mask);
  DimVector sizes(mask.sizes()), strides(mask.strides());
  for (int64_t d = before + mask.dim(); d < self.dim(); ++d) {
    sizes.push_back(1);
    strides.push_back(0);
  }
  return makeView(mask, sizes, strides, mask.storageOffset());
}

}  // namespace

ScatterReduce scatterReduceFromString(const std::string& reduce) {
  if (reduce == "add") return ScatterReduce::Add;
  if (reduce == "multiply") return ScatterReduce::Multiply;
  KILN_ERROR("reduce argument must be either add or multiply.");
}

Tensor indexSelect(const Tensor& self, int64_t dim, const Tensor& index) {
  Tensor idx = vectorIndex(index, "index_select", /*allow_int32=*/true);
  dim = wrapDim(dim, self.dim());
  Tensor s = atLeast1d(self);
  DimVector sizes(s.sizes());
  sizes[dim] = idx.numel();
  Tensor out = empty(sizes, self.dtype());
  TensorIter iter("index_select");
  buildIter(iter, out, restride(s, sizes, dim), alongDim(idx, s.dim(), dim));
  BadIndex bad;
  gatherLoop(iter, strideBytes(s, dim), IndexBounds::checked(s.sizes()[dim], false), bad);
  KILN_CHECK_INDEX(!bad.seen(), "index out of range in self");
  // A 0-dim self stays 0-dim whatever the index's length (every index is 0).
  return self.dim() == 0 ? clone(self, MemoryFormat::Contiguous) : out;
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  checkIndexDtype(index, "gather");
  dim = wrapDim(dim, self.dim());
  Tensor out = empty(index.sizes(), self.dtype());
  if (index.numel() == 0) return out;
  checkGatherShapes(self, dim, index);
  Tensor s = atLeast1d(self), i = atLeast1d(index);
  TensorIter iter("gather");
  buildIter(iter, atLeast1d(out), restride(s, i.sizes(), dim), i);
  BadIndex bad;
  gatherLoop(iter, strideBytes(s, dim), IndexBounds::checked(s.sizes()[dim], false), bad);
  throwIfBad(bad, dim, s.sizes()[dim]);
  return out;
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce) {
  checkIndexDtype(index, "scatter");
  KILN_CHECK(self.dtype() == src.dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
  dim = wrapDim(dim, self.dim());
  if (index.numel() == 0) return self;
  checkScatterShapes(self, dim, index, &src);
  return scatterImpl(self, dim, index, src, reduce);
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, ScatterReduce reduce) {
  checkIndexDtype(index, "scatter");
  dim = wrapDim(dim, self.dim());
  if (index.numel() == 0) return self;
  checkScatterShapes(self, dim, index, nullptr);
  Tensor v = fillValueOf(value, self);
  return scatterImpl(self, dim, index, expand(v, index.sizes()), reduce);
}

Tensor& scatterAdd_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_(self, dim, index, src, ScatterReduce::Add);
}

Tensor& indexAdd_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  dim = wrapDim(dim, self.dim());
  Tensor idx = vectorIndex(index, "index_add_", /*allow_int32=*/true);
  KILN_CHECK(self.dtype() == source.dtype(), "index_add_(): self (", self.dtype(), ") and source (", source.dtype(),
             ") must have the same scalar type");
  KILN_CHECK(dim == 0 || dim < source.dim(), "index_add_(): Indexing dim ", dim, " is out of bounds of tensor");
  Tensor s = atLeast1d(self), src = atLeast1d(source);
  KILN_CHECK(idx.numel() == src.sizes()[dim], "index_add_(): Number of indices (", idx.numel(),
             ") should be equal to source.size(dim): (", src.sizes()[dim], "), for dim: ", dim);
  KILN_CHECK(src.dim() == s.dim(), "index_add_(): source (", shapeString(source.sizes()), ") and self (",
             shapeString(self.sizes()), ") must have the same number of dimensions");
  for (int64_t d = 0; d < s.dim(); ++d) {
    KILN_CHECK(d == dim || src.sizes()[d] == s.sizes()[d], "index_add_(): source ", shapeString(source.sizes()),
               " and self ", shapeString(self.sizes()), " must match in every dimension but ", dim);
  }
  assertNoInternalOverlap(self);
  if (idx.numel() == 0) return self;
  TensorIter iter("index_add_");
  buildIter(iter, restride(s, src.sizes(), dim), src, alongDim(idx, s.dim(), dim));
  BadIndex bad;
  scatterLoop(iter, strideBytes(s, dim), IndexBounds::checked(s.sizes()[dim], false), ScatterReduce::Add, alpha,
              /*serial=*/true, bad);
  KILN_CHECK_INDEX(!bad.seen(), "index out of range in self");
  return self;
}

Tensor& indexFill_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  Tensor idx = vectorIndex(index, "index_fill_", /*allow_int32=*/false);
  dim = wrapDim(dim, self.dim());
  // PyTorch only warns (deprecated) on an expanded self.
  if (idx.numel() == 0) return self;
  Tensor s = atLeast1d(self);
  DimVector sizes(s.sizes());
  sizes[dim] = idx.numel();
  TensorIter iter("index_fill_");
  buildIter(iter, restride(s, sizes, dim), expand(fillValueOf(value, self), sizes), alongDim(idx, s.dim(), dim));
  BadIndex bad;
  scatterLoop(iter, strideBytes(s, dim), IndexBounds::checked(s.sizes()[dim], true), ScatterReduce::None, 1, false,
              bad);
  KILN_CHECK_INDEX(!bad.seen(), "index ", bad.value(), " is out of bounds for dimension ", dim, " with size ",
                   s.sizes()[dim]);
  return self;
}

Tensor take(const Tensor& self, const Tensor& index) {
  KILN_CHECK(index.dtype() == ScalarType::Long, "take(): Expected a long tensor for index, but got ", index.dtype());
  const Tensor indices[] = {index};
  return kiln::index(reshape(self, DimVector{self.numel()}), ArrayRef<Tensor>(indices, 1));
}

Tensor& maskedFill_(Tensor& self, const Tensor& mask, const Scalar& value) {
  KILN_CHECK(mask.dtype() == ScalarType::Bool || mask.dtype() == ScalarType::Byte,
             "masked_fill_ only supports boolean masks, but got mask with dtype ", mask.dtype());
  // PyTorch only warns (deprecated) on an expanded self.
  assertNoPartialOverlap(self, mask);
  if (mask.dtype() == ScalarType::Byte) {
    const Tensor bytes = contiguous(mask);
    const uint8_t* p = bytes.data<uint8_t>();
    KILN_CHECK(std::all_of(p, p + bytes.numel(), [](uint8_t v) { return v <= 1; }),
               "Mask tensor can take 0 and 1 values only");
  }
  Tensor m = expand(to(mask, ScalarType::Bool), self.sizes());
  TensorIter iter("masked_fill_");
  iter.addOutput(self).addInput(self).addInput(m).promoteInputs(false).checkMemOverlap(false).build();
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(self.dtype(), "masked_fill_", [&] {
    const scalar_t v = checkedScalarTo<scalar_t>(value);
    kernels::cpuKernel<scalar_t, scalar_t, bool>(iter, [v](scalar_t x, bool set) { return set ? v : x; });
  });
  return self;
}

Tensor maskedFill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  Tensor out =
      clone(expand(self, broadcastShapes(self.sizes(), mask.sizes(), "masked_fill")), MemoryFormat::Contiguous);
  return maskedFill_(out, mask, value);
}

Scalar maskedFillValue(const Tensor& value) {
  KILN_CHECK(value.dim() == 0, "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
             value.dim(), " dimension(s).");
  return value.item();
}

Tensor maskedSelect(const Tensor& self, const Tensor& mask) {
  KILN_CHECK(mask.dtype() == ScalarType::Bool || mask.dtype() == ScalarType::Byte,
             "masked_select: expected BoolTensor or ByteTensor for mask");
  DimVector shape = broadcastShapes(self.sizes(), mask.sizes(), "masked_select");
  if (shape.empty()) shape.push_back(1);
  const Tensor m[] = {expand(mask, shape)};
  return kiln::index(expand(self, shape), ArrayRef<Tensor>(m, 1));
}

Tensor nonzero(const Tensor& self) {
  const int64_t rank = self.dim();
  Tensor c = contiguous(self);
  const int64_t n = c.numel();
  int64_t count = 0;
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(c.dtype(), "nonzero", [&] {
    const scalar_t* p = static_cast<const scalar_t*>(c.rawData());
    for (int64_t i = 0; i < n; ++i) count += p[i] != scalar_t(0);
  });
  Tensor out = empty(DimVector{count, rank}, ScalarType::Long);
  if (count == 0) return out;
  int64_t* o = out.data<int64_t>();
  DimVector coord(static_cast<size_t>(rank), 0);
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(c.dtype(), "nonzero", [&] {
    const scalar_t* p = static_cast<const scalar_t*>(c.rawData());
    for (int64_t i = 0; i < n; ++i) {
      if (p[i] != scalar_t(0)) {
        std::copy(coord.begin(), coord.end(), o);
        o += rank;
      }
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++coord[d] < c.sizes()[d]) break;
        coord[d] = 0;
      }
    }
  });
  return out;
}

Tensor index(const Tensor& self, ArrayRef<Tensor> indices) {
  AdvancedIndex ai = makeAdvancedIndex(self, indices);
  Tensor out = empty(ai.result_shape, self.dtype());
  TensorIter iter("index");
  buildIter(iter, out, ai.src, ai.offsets);
  BadIndex unused;
  gatherLoop(iter, static_cast<int64_t>(self.itemsize()), IndexBounds::trusted(), unused);
  return out;
}

Tensor& indexPut_(Tensor& self, ArrayRef<Tensor> indices, const Tensor& values, bool accumulate) {
  if (!accumulate) {
    if (auto mask = fillMask(self, indices, values)) return maskedFill_(self, *mask, values.item());
  }
  KILN_CHECK(values.dtype() == self.dtype(), "Index put requires the source and destination dtypes match, got ",
             self.dtype(), " for the destination and ", values.dtype(), " for the source.");
  // PyTorch only warns (deprecated) on an expanded self.
  assertNoOverlap(self, values);
  for (const Tensor& idx : indices) {
    if (idx.defined()) assertNoOverlap(self, idx);
  }
  AdvancedIndex ai = makeAdvancedIndex(self, indices);
  bool fits = values.dim() <= static_cast<int64_t>(ai.result_shape.size());
  for (int64_t d = 1; fits && d <= values.dim(); ++d) {
    const int64_t v = values.sizes()[values.dim() - d], r = ai.result_shape[ai.result_shape.size() - d];
    fits = v == r || v == 1;
  }
  KILN_CHECK(fits, "shape mismatch: value tensor of shape ", shapeString(values.sizes()),
             " cannot be broadcast to indexing result of shape ", shapeString(ai.result_shape));
  TensorIter iter("index_put_");
  buildIter(iter, ai.src, expand(values, ai.result_shape), expand(ai.offsets, ai.result_shape));
  BadIndex unused;
  scatterLoop(iter, static_cast<int64_t>(self.itemsize()), IndexBounds::trusted(),
              accumulate ? ScatterReduce::Add : ScatterReduce::None, 1, /*serial=*/accumulate, unused);
  return self;
}

// ---- index_copy, masked_scatter, put, index_reduce, scatter_reduce ----

namespace {

// A shape with `dim` left out, as torch's index_copy_ messages print it ("3 4").
std::string slicedSizes(IntArrayRef sizes, int64_t dim) {
  std::string out;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (d == dim) continue;
    if (!out.empty()) out += ' ';
    out += std::to_string(sizes[d]);
  }
  return out;
}

// The indices of an int64 `index` checked against [0, size).
void checkIndexRange(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  Tensor positions = contiguous(index);
  const int64_t* p = positions.data<int64_t>();
  for (int64_t i = 0; i < positions.numel(); ++i) {
    KILN_CHECK_INDEX(p[i] >= 0 && p[i] < size, op, "index ", p[i], " is out of bounds for dimension ", dim,
                     " with size ", size);
  }
}

enum class ReduceKind { Sum, Prod, Mean, Amax, Amin };

template <typename T>
T reduceIdentity(ReduceKind kind) {
  using Limits = std::numeric_limits<T>;
  switch (kind) {
    case ReduceKind::Prod: return T(1);
    case ReduceKind::Amax: return Limits::has_infinity ? -Limits::infinity() : Limits::lowest();
    case ReduceKind::Amin: return Limits::has_infinity ? Limits::infinity() : Limits::max();
    default: return T(0);
  }
}

// amax/amin propagate NaN, as torch's do.
template <typename T>
T combine(ReduceKind kind, T a, T b) {
  switch (kind) {
    case ReduceKind::Prod: return a * b;
    case ReduceKind::Amax: return (a != a || a > b) ? a : b;
    case ReduceKind::Amin: return (a != a || a < b) ? a : b;
    default: return a + b;
  }
}

// A sum over n values; torch rounds integer means down.
template <typename T>
T meanOf(T sum, int64_t n) {
  if constexpr (std::is_integral_v<T>) {
    const int64_t value = static_cast<int64_t>(sum);
    int64_t q = value / n;
    if (value % n != 0 && value < 0) --q;
    return static_cast<T>(q);
  } else {
    return static_cast<T>(sum / static_cast<T>(n));
  }
}

// Combines values into elements of a contiguous `out`: for_each(visit)
// calls visit(element, value) for every (destination, value) pair. Without
// include_self an element that receives values starts from the identity;
// mean divides by how many values an element combined (plus its own).
template <typename T, typename ForEach>
void reduceInto(T* out, int64_t numel, ReduceKind kind, bool include_self, const ForEach& for_each) {
  std::vector<int64_t> counts(static_cast<size_t>(numel), 0);
  for_each([&](int64_t element, T) { ++counts[static_cast<size_t>(element)]; });
  if (!include_self) {
    for (int64_t e = 0; e < numel; ++e) {
      if (counts[static_cast<size_t>(e)] > 0) out[e] = reduceIdentity<T>(kind);
    }
  }
  for_each([&](int64_t element, T value) { out[element] = combine(kind, out[element], value); });
  if (kind != ReduceKind::Mean) return;
  for (int64_t e = 0; e < numel; ++e) {
    const int64_t n = counts[static_cast<size_t>(e)] + (include_self ? 1 : 0);
    if (counts[static_cast<size_t>(e)] > 0) out[e] = meanOf(out[e], n);
  }
}

// Runs `body(out)` on self's elements when they are laid out row-major, else
// on a contiguous copy written back.
template <typename F>
Tensor& onContiguous(Tensor& self, const F& body) {
  Tensor out = self.isContiguous() ? self : contiguous(self);
  body(out);
  if (!out.isSame(self)) copy_(self, out);
  return self;
}

}  // namespace

Tensor& indexCopy_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  const char* op = "index_copy_(): ";
  const int64_t d = wrapDim(dim, self.dim());
  KILN_CHECK_INDEX(index.dim() < 2, op, "Index should have dimension 1 or 0 (got ", index.dim(), ")");
  const int64_t count = index.numel();
  if (source.dim() == 0) {
    KILN_CHECK_INDEX(count == 1, op, "When source is scalar, index should have one element (got ", count, ")");
  } else {
    KILN_CHECK_INDEX(self.dim() == 0 || source.dim() == self.dim(), op,
                     "When source and destination are not scalars, their dimensionality must match. Source "
                     "dimensionality (",
                     source.dim(), "), destination dimensionality (", self.dim(), ")");
  }
  KILN_CHECK(index.dtype() == ScalarType::Long, op, "Expected a long tensor for index, but got ",
             scalarTypeShortName(index.dtype()));
  KILN_CHECK(self.dtype() == source.dtype(), op, "self and source expected to have the same dtype, but got (self) ",
             scalarTypeShortName(self.dtype()), " and (source) ", scalarTypeShortName(source.dtype()));
  if (self.dim() > 0 && source.dim() > 0) {
    KILN_CHECK(slicedSizes(self.sizes(), d) == slicedSizes(source.sizes(), d), op,
               "Source/destination tensor must have same slice shapes. Destination slice shape: ",
               slicedSizes(self.sizes(), d), " at dimension ", d,
               " and source slice shape: ", slicedSizes(source.sizes(), d), " at dimension 0.");
    KILN_CHECK_INDEX(count == source.size(d), op, "Number of indices (", count,
                     ") should be equal to source.size(dim) (", source.size(d), ")");
  }
  checkIndexRange(index, self.dim() == 0 ? 1 : self.size(d), d, op);
  if (self.dim() == 0) return copy_(self, reshape(source, {}));
  // self[:, ..., index] = source: advanced indexing along dim.
  std::vector<Tensor> indices(static_cast<size_t>(d));
  indices.push_back(reshape(index, {-1}));
  return indexPut_(self, indices, source.dim() == 0 ? reshape(source, {1}) : source, false);
}

Tensor& maskedScatter_(Tensor& self, const Tensor& mask, const Tensor& source) {
  KILN_CHECK(mask.dtype() == ScalarType::Bool || mask.dtype() == ScalarType::Byte,
             "masked_scatter_ only supports boolean masks, but got mask with dtype ",
             scalarTypeShortName(mask.dtype()));
  KILN_CHECK(self.dtype() == source.dtype(), "masked_scatter: expected self and source to have same dtypes but got",
             scalarTypeShortName(self.dtype()), " and ", scalarTypeShortName(source.dtype()));
  // torch fills self's set elements in memory order (its iterator walks
  // self's layout): the row-major order of self with its dims sorted by
  // decreasing stride.
  DimVector order(static_cast<size_t>(self.dim()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return self.stride(a) > self.stride(b); });
  Tensor target = permute(self, order);
  Tensor set = contiguous(permute(to(expand(mask, self.sizes()), ScalarType::Bool), order));
  const bool* s = set.data<bool>();
  const int64_t count = std::count(s, s + set.numel(), true);
  KILN_CHECK(source.numel() >= count, "Number of elements of source < number of ones in mask");
  if (count == 0) return self;
  // The set positions take source's leading elements.
  std::vector<Tensor> indices{set};
  indexPut_(target, indices, narrow(reshape(source, {-1}), 0, 0, count), false);
  return self;
}

Tensor& put_(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  KILN_CHECK(index.dtype() == ScalarType::Long, "put_(): Expected a long tensor for index, but got ",
             scalarTypeShortName(index.dtype()));
  KILN_CHECK(self.dtype() == source.dtype(),
             "put_(): self and source expected to have the same dtype, but got self.dtype = ",
             scalarTypeShortName(self.dtype()), " and source.dtype = ", scalarTypeShortName(source.dtype()));
  KILN_CHECK_INDEX(source.numel() == index.numel(),
                   "put_(): Expected source and index to have the same number of elements, but got source.numel() = ",
                   source.numel(), ", index.numel() = ", index.numel());
  const int64_t numel = self.numel();
  Tensor positions = reshape(contiguous(index), {-1});
  const int64_t* p = positions.data<int64_t>();
  for (int64_t i = 0; i < positions.numel(); ++i) {
    KILN_CHECK_INDEX(p[i] >= -numel && p[i] < numel, "out of range: tried to access index ", p[i], " on a tensor of ",
                     numel, " elements.");
  }
  if (index.numel() == 0) return self;
  // The positions count self's elements in row-major order.
  return onContiguous(self, [&](Tensor& out) {
    Tensor flat = reshape(out, {-1});
    std::vector<Tensor> indices{positions};
    indexPut_(flat, indices, reshape(source, {-1}), accumulate);
  });
}

Tensor& indexReduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                     bool include_self) {
  const char* op = "index_reduce_(): ";
  const ReduceKind kind = reduce == "prod"   ? ReduceKind::Prod
                          : reduce == "mean" ? ReduceKind::Mean
                          : reduce == "amax" ? ReduceKind::Amax
                                             : ReduceKind::Amin;
  KILN_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
             "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got ", reduce, ".");
  const int64_t d = wrapDim(dim, self.dim());
  KILN_CHECK_INDEX(index.dim() < 2, op, "Index should have dimension 1 or 0 (got ", index.dim(), ")");
  KILN_CHECK(index.dtype() == ScalarType::Long || index.dtype() == ScalarType::Int, op,
             "Expected index to be of dtype int32 or int64, but got ", scalarTypeShortName(index.dtype()));
  KILN_CHECK(self.dtype() == source.dtype(), op, "self and source expected to have the same dtype, but got (self) ",
             scalarTypeShortName(self.dtype()), " and (source) ", scalarTypeShortName(source.dtype()));
  KILN_CHECK(self.dim() == source.dim() || (self.dim() <= 1 && source.dim() <= 1), op,
             "Expected self and source to have the same number of dimensions, but got ", self.dim(), " and ",
             source.dim());
  const int64_t count = index.numel(), source_count = source.dim() == 0 ? 1 : source.size(d);
  KILN_CHECK_INDEX(count == source_count, op, "Number of indices (", count, ") should be equal to source.size(dim) (",
                   source_count, ")");
  KILN_CHECK(
      self.dim() <= 1 || slicedSizes(self.sizes(), d) == slicedSizes(source.sizes(), d), op,
      "Source/destination tensor must have same slice shapes. Destination slice shape: ", slicedSizes(self.sizes(), d),
      " at dimension ", d, " and source slice shape: ", slicedSizes(source.sizes(), d), " at dimension 0.");
  const int64_t size = self.dim() == 0 ? 1 : self.size(d);
  Tensor positions = to(contiguous(reshape(index, {-1})), ScalarType::Long);
  checkIndexRange(positions, size, d, op);
  // self as [outer, size, inner] along dim: source slice i goes into slice index[i].
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= self.size(k);
  for (int64_t k = d + 1; k < self.dim(); ++k) inner *= self.size(k);
  Tensor src = contiguous(source, MemoryFormat::Contiguous);
  const int64_t* pos = positions.data<int64_t>();
  return onContiguous(self, [&](Tensor& out) {
    KILN_DISPATCH_ALL_TYPES(self.dtype(), "index_reduce", [&] {
      const scalar_t* s = src.data<scalar_t>();
      reduceInto(out.data<scalar_t>(), out.numel(), kind, include_self, [&](const auto& visit) {
        for (int64_t a = 0; a < outer; ++a) {
          for (int64_t i = 0; i < count; ++i) {
            for (int64_t b = 0; b < inner; ++b) visit((a * size + pos[i]) * inner + b, s[(a * count + i) * inner + b]);
          }
        }
      });
    });
  });
}

Tensor& scatterReduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                       bool include_self) {
  KILN_CHECK(reduce == "sum" || reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
             "reduce argument must be either sum, prod, mean, amax or amin.");
  const ReduceKind kind = reduce == "sum"    ? ReduceKind::Sum
                          : reduce == "prod" ? ReduceKind::Prod
                          : reduce == "mean" ? ReduceKind::Mean
                          : reduce == "amax" ? ReduceKind::Amax
                                             : ReduceKind::Amin;
  const int64_t d = wrapDim(dim, self.dim());
  checkIndexDtype(index, "scatter");
  KILN_CHECK(self.dtype() == src.dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
  if (index.numel() == 0) return self;
  checkScatterShapes(self, d, index, &src);
  // Every dim as 1-D at least: a 0-dim tensor is one element along dim 0.
  const Tensor idx = contiguous(atLeast1d(index)), source = atLeast1d(src);
  const int64_t rank = idx.dim(), size = atLeast1d(self).size(d);
  const int64_t* positions = idx.data<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i) {
    KILN_CHECK(positions[i] >= 0 && positions[i] < size, "index ", positions[i], " is out of bounds for dimension ", d,
               " with size ", size);
  }
  return onContiguous(self, [&](Tensor& out) {
    const DimVector out_strides = contiguousStrides(atLeast1d(out).sizes());
    KILN_DISPATCH_ALL_TYPES(self.dtype(), "scatter_reduce", [&] {
      const scalar_t* s = source.data<scalar_t>();
      reduceInto(out.data<scalar_t>(), out.numel(), kind, include_self, [&](const auto& visit) {
        // Walks index's elements in row-major order; src has its own strides.
        DimVector at(static_cast<size_t>(rank), 0);
        for (int64_t i = 0; i < idx.numel(); ++i) {
          int64_t dst = 0, from = 0;
          for (int64_t k = 0; k < rank; ++k) {
            dst += (k == d ? positions[i] : at[k]) * out_strides[k];
            from += at[k] * source.strides()[k];
          }
          visit(dst, s[from]);
          for (int64_t k = rank - 1; k >= 0 && ++at[k] == idx.size(k); --k) at[k] = 0;
        }
      });
    });
  });
}

}  // namespace kiln
