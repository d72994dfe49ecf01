// Views, shape operations and layout copies.
#include "kiln/tensor/shape.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/scatter_into.h"

namespace kiln {

namespace {

bool sameSizes(IntArrayRef a, IntArrayRef b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// A view of `self` in self's own storage and dtype.
Tensor viewOf(const Tensor& self, IntArrayRef sizes, IntArrayRef strides) {
  return makeView(self, sizes, strides, self.storageOffset());
}

// Makes `self` take the geometry of `view` (for the in-place view ops).
Tensor& adoptGeometry(Tensor& self, const Tensor& view) {
  self.impl()->setSizesAndStrides(view.sizes(), view.strides(), view.storageOffset());
  return self;
}

DimVector wrapDims(IntArrayRef dims, int64_t rank) {
  DimVector wrapped(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) wrapped[i] = wrapDim(dims[i], rank);
  return wrapped;
}

// Bytes a (sizes, strides) view reaches from its first element, or -1 on overflow.
int64_t extentBytes(IntArrayRef sizes, IntArrayRef strides, int64_t itemsize) {
  int64_t last = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    int64_t step = 0;
    if (__builtin_mul_overflow(strides[i], sizes[i] - 1, &step) || __builtin_add_overflow(last, step, &last)) {
      return -1;
    }
  }
  int64_t bytes = 0;
  if (__builtin_add_overflow(last, int64_t{1}, &last) || __builtin_mul_overflow(last, itemsize, &bytes)) return -1;
  return bytes;
}

DimVector channelsLastStrides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  if (sizes.size() == 4) {
    strides[1] = 1;
    strides[3] = sizes[1];
    strides[2] = strides[3] * sizes[3];
    strides[0] = strides[2] * sizes[2];
  } else {
    strides[1] = 1;
    strides[4] = sizes[1];
    strides[3] = strides[4] * sizes[4];
    strides[2] = strides[3] * sizes[3];
    strides[0] = strides[2] * sizes[2];
  }
  return strides;
}

// The strides a fresh tensor of `self`'s shape gets in `format` (Preserve
// is resolved by the caller).
DimVector stridesFor(const Tensor& self, MemoryFormat format) {
  switch (format) {
    case MemoryFormat::ChannelsLast:
      KILN_CHECK(self.dim() == 4, "required rank 4 tensor to use channels_last format");
      return channelsLastStrides(self.sizes());
    case MemoryFormat::ChannelsLast3d:
      KILN_CHECK(self.dim() == 5, "required rank 5 tensor to use channels_last_3d format");
      return channelsLastStrides(self.sizes());
    default: return contiguousStrides(self.sizes());
  }
}

// Whether `self`'s layout equals the fresh layout of `format` (size-1 dims may have any stride).
bool hasLayout(const Tensor& self, MemoryFormat format) {
  if (format == MemoryFormat::Contiguous) return self.isContiguous();
  DimVector expected = stridesFor(self, format);
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.sizes()[d] != 1 && self.strides()[d] != expected[d]) return false;
  }
  return true;
}

// The dim along which `t` is contiguous (stride 1, size > 1), or -1.
int64_t unitStrideDim(const Tensor& t) {
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    if (t.strides()[d] == 1 && t.sizes()[d] > 1) return d;
  }
  return -1;
}

// One tile of a transposed copy: dst is contiguous along i, src along j.
// Reading src with a stride and writing dst in order keeps both in cache for
// a tile this small.
template <typename T>
void copyTile(T* out, const T* in, int64_t i_begin, int64_t i_end, int64_t j_begin, int64_t j_end, int64_t dst_j,
              int64_t src_i) {
  for (int64_t j = j_begin; j < j_end; ++j) {
    for (int64_t i = i_begin; i < i_end; ++i) out[i + j * dst_j] = in[i * src_i + j];
  }
}

// Copies src into dst (same shape and dtype) when their contiguous dims
// differ, a transpose: element-wise copying would miss the cache on every
// read, so it goes tile by tile instead. Returns false when not applicable.
bool copyTransposed(Tensor& dst, const Tensor& src) {
  constexpr int64_t kTile = 16;
  if (dst.dtype() != src.dtype() || !sameSizes(dst.sizes(), src.sizes()) || dst.numel() < kTile * kTile) {
    return false;
  }
  const int64_t a = unitStrideDim(dst), b = unitStrideDim(src);
  if (a < 0 || b < 0 || a == b) return false;
  const int64_t rank = dst.dim();
  const int64_t size_a = dst.sizes()[a], size_b = dst.sizes()[b];
  const int64_t tiles_a = (size_a + kTile - 1) / kTile, tiles_b = (size_b + kTile - 1) / kTile;
  const int64_t outer = dst.numel() / (size_a * size_b);
  const int64_t dst_b = dst.strides()[b], src_a = src.strides()[a];
  char* const dst_base = static_cast<char*>(dst.rawData());
  const char* const src_base = static_cast<const char*>(src.rawData());
  withElementType(dst.itemsize(), [&](auto tag) {
    using T = decltype(tag);
    parallelFor(0, outer * tiles_a * tiles_b, kGrainSize / (kTile * kTile), [&](int64_t begin, int64_t end) {
      for (int64_t unit = begin; unit < end; ++unit) {
        const int64_t tb = unit % tiles_b, ta = (unit / tiles_b) % tiles_a;
        int64_t rest = unit / (tiles_a * tiles_b);
        // Element offsets of this unit's slice over the dims other than a and b.
        int64_t dst_off = 0, src_off = 0;
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (d == a || d == b) continue;
          const int64_t i = rest % dst.sizes()[d];
          rest /= dst.sizes()[d];
          dst_off += i * dst.strides()[d];
          src_off += i * src.strides()[d];
        }
        copyTile(reinterpret_cast<T*>(dst_base) + dst_off, reinterpret_cast<const T*>(src_base) + src_off, ta * kTile,
                 std::min(size_a, (ta + 1) * kTile), tb * kTile, std::min(size_b, (tb + 1) * kTile), dst_b, src_a);
      }
    });
  });
  return true;
}

// copy_ with the transposed-layout fast path.
Tensor& copyAnyLayout(Tensor& dst, const Tensor& src) {
  if (!copyTransposed(dst, src)) copy_(dst, src);
  return dst;
}

// Zeroes, in every matrix of the last two dims, the columns [begin(i), end(i))
// of row i: the part tril/triu drop.
template <typename Range>
void zeroTriangle(Tensor& self, const Range& columns) {
  const int64_t rank = self.dim();
  const int64_t rows = self.sizes()[rank - 2], cols = self.sizes()[rank - 1];
  const int64_t item = static_cast<int64_t>(self.itemsize());
  const int64_t row_stride = self.strides()[rank - 2] * item, col_stride = self.strides()[rank - 1] * item;
  int64_t batches = 1;
  for (int64_t d = 0; d + 2 < rank; ++d) batches *= self.sizes()[d];
  if (batches == 0 || rows == 0 || cols == 0) return;
  char* base = static_cast<char*>(self.rawData());
  DimVector index(static_cast<size_t>(std::max<int64_t>(rank - 2, 0)), 0);
  for (int64_t b = 0; b < batches; ++b) {
    char* matrix = base;
    for (int64_t d = 0; d + 2 < rank; ++d) matrix += index[d] * self.strides()[d] * item;
    for (int64_t i = 0; i < rows; ++i) {
      auto [begin, end] = columns(i, cols);
      char* row = matrix + i * row_stride;
      if (begin >= end) continue;
      if (col_stride == item) {
        std::memset(row + begin * item, 0, static_cast<size_t>((end - begin) * item));
      } else {
        for (int64_t j = begin; j < end; ++j) std::memset(row + j * col_stride, 0, static_cast<size_t>(item));
      }
    }
    for (int64_t d = rank - 3; d >= 0; --d) {
      if (++index[d] < self.sizes()[d]) break;
      index[d] = 0;
    }
  }
}

void checkTriangleInput(const Tensor& self, const char* op) {
  KILN_CHECK(self.dim() >= 2, op, ": input tensor must have at least 2 dimensions");
}

// Diagonals beyond the matrix act like its edges; clamping keeps i + k from overflowing.
int64_t clampDiagonal(const Tensor& self, int64_t diagonal) {
  const int64_t rows = self.sizes()[self.dim() - 2], cols = self.sizes()[self.dim() - 1];
  return std::clamp<int64_t>(diagonal, -rows - 1, cols);
}

enum class Overlap { None, Full, Partial, TooHard };

// PyTorch's get_overlap_status: exact for dense tensors, "too hard" otherwise.
Overlap overlapStatus(const Tensor& a, const Tensor& b) {
  if (a.isSame(b)) return Overlap::Full;
  if (a.numel() == 0 || b.numel() == 0) return Overlap::None;
  // Storages first: every elementwise op asks, and most operands share none.
  if (a.storage().get() != b.storage().get()) return Overlap::None;
  if (!isNonOverlappingAndDense(a) || !isNonOverlappingAndDense(b)) return Overlap::TooHard;
  const char* a_begin = static_cast<const char*>(a.rawData());
  const char* a_end = a_begin + a.nbytes();
  const char* b_begin = static_cast<const char*>(b.rawData());
  const char* b_end = b_begin + b.nbytes();
  if (a_begin == b_begin && a_end == b_end) {
    return sameSizes(a.strides(), b.strides()) ? Overlap::Full : Overlap::Partial;
  }
  if (a_begin < b_end && b_begin < a_end) return Overlap::Partial;
  return Overlap::None;
}

constexpr const char* kPartialOverlapMessage =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation.";

// A dim's size, with PyTorch's error for 0-dim tensors (which have none).
int64_t sizeAt(const Tensor& self, int64_t dim) {
  KILN_CHECK_INDEX(self.dim() > 0, "Dimension specified as ", dim, " but tensor has no dimensions");
  return self.sizes()[wrapDim(dim, self.dim())];
}

}  // namespace

// ---- Geometry helpers ----

MemoryFormat memoryFormatFromInt(int64_t value) {
  KILN_CHECK(value >= 0 && value <= 3, "unknown memory format ", value);
  return static_cast<MemoryFormat>(value);
}

bool isContiguous(const Tensor& self, MemoryFormat format) {
  switch (format) {
    case MemoryFormat::ChannelsLast: return self.dim() == 4 && hasLayout(self, format);
    case MemoryFormat::ChannelsLast3d: return self.dim() == 5 && hasLayout(self, format);
    default: return self.isContiguous();
  }
}

DimVector inferSize(IntArrayRef shape, int64_t numel) {
  DimVector result(shape);
  int64_t known = 1;
  int64_t infer_dim = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      KILN_CHECK(infer_dim < 0, "only one dimension can be inferred");
      infer_dim = static_cast<int64_t>(d);
    } else {
      KILN_CHECK(shape[d] >= 0, "invalid shape dimension ", shape[d]);
      if (__builtin_mul_overflow(known, shape[d], &known)) known = -1;  // never matches numel
    }
  }
  if (numel == known || (infer_dim >= 0 && known > 0 && numel % known == 0)) {
    if (infer_dim >= 0) {
      KILN_CHECK(known != 0, "cannot reshape tensor of 0 elements into shape ", shapeString(shape),
                 " because the unspecified dimension size -1 can be any value and is ambiguous");
      result[infer_dim] = numel / known;
    }
    return result;
  }
  KILN_ERROR("shape '", shapeString(shape), "' is invalid for input of size ", numel);
}

std::optional<DimVector> computeStride(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes) {
  if (sizes.empty()) return DimVector(new_sizes.size(), 1);
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 0 && sameSizes(sizes, new_sizes)) return DimVector(strides);
  DimVector new_strides(new_sizes.size());
  if (numel == 0) {
    for (int64_t d = static_cast<int64_t>(new_sizes.size()) - 1; d >= 0; --d) {
      new_strides[d] = d == static_cast<int64_t>(new_sizes.size()) - 1
                           ? 1
                           : std::max<int64_t>(new_sizes[d + 1], 1) * new_strides[d + 1];
    }
    return new_strides;
  }
  // Walk the old dims from the innermost, grouping them into chunks that are
  // contiguous with each other; each chunk must hold a whole run of new dims.
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= sizes[tensor_d];
    if (tensor_d == 0 || (sizes[tensor_d - 1] != 1 && strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

bool isNonOverlappingAndDense(const Tensor& t) {
  const int64_t rank = t.dim();
  if (rank == 0) return true;
  IntArrayRef sizes = t.sizes(), strides = t.strides();
  DimVector perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  // Size-0/1 dims last: their strides do not matter.
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    bool a_trivial = sizes[a] < 2, b_trivial = sizes[b] < 2;
    if (a_trivial != b_trivial) return b_trivial;
    return !a_trivial && strides[a] < strides[b];
  });
  int64_t required = 1;
  for (int64_t d : perm) {
    if (sizes[d] < 2) return true;
    if (strides[d] != required) return false;
    required *= sizes[d];
  }
  return true;
}

void assertNoInternalOverlap(const Tensor& t) {
  // Nothing is written to an empty tensor, whatever its strides (numpy gives empty arrays zero strides).
  if (t.numel() == 0 || t.isContiguous() || isNonOverlappingAndDense(t)) return;
  for (int64_t d = 0; d < t.dim(); ++d) {
    KILN_CHECK(!(t.strides()[d] == 0 && t.sizes()[d] > 1),
               "unsupported operation: more than one element of the written-to tensor refers to a single memory "
               "location. Please clone() the tensor before performing the operation.");
  }
}

void assertNoPartialOverlap(const Tensor& a, const Tensor& b) {
  KILN_CHECK(overlapStatus(a, b) != Overlap::Partial, kPartialOverlapMessage);
}

void assertNoOverlap(const Tensor& a, const Tensor& b) {
  Overlap status = overlapStatus(a, b);
  KILN_CHECK(status != Overlap::Partial && status != Overlap::Full, kPartialOverlapMessage);
}

Tensor& resizeOutput(Tensor& out, IntArrayRef sizes) {
  if (sameSizes(out.sizes(), sizes)) return out;
  const int64_t numel = shapeNumel(sizes);
  const int64_t needed = (out.storageOffset() + numel) * static_cast<int64_t>(out.itemsize());
  if (static_cast<size_t>(needed) <= out.storage()->nbytes()) {
    // Like PyTorch's resize_: the storage is kept when it is large enough.
    out.impl()->setSizesAndStrides(sizes, contiguousStrides(sizes), out.storageOffset());
  } else {
    Tensor fresh = empty(sizes, out.dtype());
    out.impl()->setStorage(fresh.storage());
    out.impl()->setSizesAndStrides(fresh.sizes(), fresh.strides(), 0);
  }
  return out;
}

Tensor& writeOut(Tensor& out, const Tensor& result, const char* op, OutDtype rule) {
  KILN_CHECK(rule != OutDtype::Castable || canCast(result.dtype(), out.dtype()), op,
             ": input types can't be cast to the desired output type ", out.dtype());
  KILN_CHECK(rule != OutDtype::Exact || out.dtype() == result.dtype(), op, ": expected out tensor to have dtype ",
             result.dtype(), ", but got ", out.dtype(), " instead");
  resizeOutput(out, result.sizes());
  copy_(out, result);
  return out;
}

// ---- Views ----

Tensor view(const Tensor& self, IntArrayRef size) {
  DimVector sizes = inferSize(size, self.numel());
  auto strides = computeStride(self.sizes(), self.strides(), sizes);
  KILN_CHECK(strides.has_value(),
             "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
             "two contiguous subspaces). Use .reshape(...) instead.");
  return viewOf(self, sizes, *strides);
}

Tensor viewDtype(const Tensor& self, ScalarType dtype) {
  if (self.dtype() == dtype) return self;
  const int64_t old_item = static_cast<int64_t>(self.itemsize());
  const int64_t new_item = static_cast<int64_t>(elementSize(dtype));
  DimVector sizes(self.sizes()), strides(self.strides());
  int64_t offset = self.storageOffset();
  if (old_item != new_item) {
    KILN_CHECK(self.dim() > 0, "self.dim() cannot be 0 to view ", self.dtype(), " as ", dtype,
               " (different element sizes)");
    const size_t last = sizes.size() - 1;
    KILN_CHECK(strides[last] == 1, "self.stride(-1) must be 1 to view ", self.dtype(), " as ", dtype,
               " (different element sizes), but got ", strides[last]);
    if (old_item > new_item) {
      const int64_t ratio = old_item / new_item;
      for (size_t d = 0; d < last; ++d) strides[d] *= ratio;
      sizes[last] *= ratio;
      offset *= ratio;
    } else {
      const int64_t ratio = new_item / old_item;
      KILN_CHECK(sizes[last] % ratio == 0, "self.size(-1) must be divisible by ", ratio, " to view ", self.dtype(),
                 " as ", dtype, " (different element sizes), but got ", sizes[last]);
      KILN_CHECK(offset % ratio == 0, "self.storage_offset() must be divisible by ", ratio, " to view ", self.dtype(),
                 " as ", dtype, " (different element sizes), but got ", offset);
      for (size_t d = 0; d < last; ++d) {
        KILN_CHECK(strides[d] % ratio == 0, "self.stride(", d, ") must be divisible by ", ratio, " to view ",
                   self.dtype(), " as ", dtype, " (different element sizes), but got ", strides[d]);
        strides[d] /= ratio;
      }
      sizes[last] /= ratio;
      offset /= ratio;
    }
  }
  return Tensor(makeIntrusive<TensorImpl>(self.storage(), dtype, sizes, strides, offset));
}

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  DimVector sizes = inferSize(shape, self.numel());
  if (auto strides = computeStride(self.sizes(), self.strides(), sizes)) return viewOf(self, sizes, *strides);
  Tensor copy = clone(self, MemoryFormat::Contiguous);
  return viewOf(copy, sizes, contiguousStrides(sizes));
}

Tensor t(const Tensor& self) {
  KILN_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  return transpose(self, 0, self.dim() < 2 ? 0 : 1);
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  const int64_t rank = self.dim();
  dim0 = wrapDim(dim0, rank);
  dim1 = wrapDim(dim1, rank);
  DimVector sizes(self.sizes()), strides(self.strides());
  if (rank > 0) {
    std::swap(sizes[dim0], sizes[dim1]);
    std::swap(strides[dim0], strides[dim1]);
  }
  return viewOf(self, sizes, strides);
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  const int64_t rank = self.dim();
  KILN_CHECK(static_cast<int64_t>(dims.size()) == rank,
             "permute(): number of dimensions in the tensor input does not match the length of the desired "
             "ordering of dimensions i.e. input.dim() = ",
             rank, " is not equal to len(dims) = ", dims.size());
  DimVector sizes(dims.size()), strides(dims.size());
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrapDim(dims[i], rank);
    KILN_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return viewOf(self, sizes, strides);
}

Tensor numpyT(const Tensor& self) {
  DimVector dims(static_cast<size_t>(self.dim()));
  for (int64_t d = 0; d < self.dim(); ++d) dims[d] = self.dim() - 1 - d;
  return permute(self, dims);
}

Tensor matrixT(const Tensor& self, const char* op) {
  KILN_CHECK(self.dim() != 1, op, " is only supported on matrices or batches of matrices. Got 1-D tensor.");
  // As in PyTorch, a 0-dim tensor is its own transpose.
  return self.dim() == 0 ? self : transpose(self, -2, -1);
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t d1 = wrapDim(dim1, self.dim()), d2 = wrapDim(dim2, self.dim());
  KILN_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t rows = self.sizes()[d1], cols = self.sizes()[d2];
  // A positive offset drops leading columns (dim2), a negative one leading rows (dim1).
  const int64_t skip_rows = offset < 0 ? std::min(-(offset + 1), rows - 1) + 1 : 0;
  const int64_t skip_cols = offset > 0 ? std::min(offset, cols) : 0;
  const int64_t length = std::max<int64_t>(std::min(rows - skip_rows, cols - skip_cols), 0);
  int64_t storage_offset = self.storageOffset();
  if (length > 0) storage_offset += skip_rows * self.strides()[d1] + skip_cols * self.strides()[d2];
  DimVector sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == d1 || d == d2) continue;
    sizes.push_back(self.sizes()[d]);
    strides.push_back(self.strides()[d]);
  }
  sizes.push_back(length);
  strides.push_back(self.strides()[d1] + self.strides()[d2]);
  return makeView(self, sizes, strides, storage_offset);
}

Tensor unfold(const Tensor& self, int64_t dim, int64_t size, int64_t step) {
  dim = wrapDim(dim, self.dim());
  const int64_t extent = self.dim() == 0 ? 1 : self.sizes()[dim];
  KILN_CHECK(size <= extent, "maximum size for tensor at dimension ", dim, " is ", extent, " but size is ", size);
  KILN_CHECK(size >= 0, "size is ", size, " but must be >= 0");
  KILN_CHECK(step > 0, "step is ", step, " but must be > 0");
  DimVector sizes(self.sizes()), strides(self.strides());
  if (self.dim() > 0) {
    sizes[dim] = (sizes[dim] - size) / step + 1;
    strides[dim] *= step;
  }
  sizes.push_back(size);
  strides.push_back(self.dim() == 0 ? 1 : self.strides()[dim]);
  return viewOf(self, sizes, strides);
}

Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  KILN_CHECK(source.size() == destination.size(), "movedim: Invalid source or destination dims: source (",
             shapeString(source), " dims) should contain the same number of dims as destination (",
             shapeString(destination), " dims)");
  const int64_t rank = self.dim();
  DimVector src = wrapDims(source, rank), dst = wrapDims(destination, rank);
  const size_t n = static_cast<size_t>(std::max<int64_t>(rank, 1));
  std::vector<bool> src_used(n, false), dst_used(n, false);
  DimVector order(static_cast<size_t>(rank), -1);
  for (size_t i = 0; i < src.size(); ++i) {
    KILN_CHECK(!src_used[src[i]], "movedim: repeated dim in `source` (", shapeString(source), ")");
    KILN_CHECK(!dst_used[dst[i]], "movedim: repeated dim in `destination` (", shapeString(destination), ")");
    src_used[src[i]] = dst_used[dst[i]] = true;
    if (rank > 0) order[dst[i]] = src[i];
  }
  // The dims not moved keep their relative order in the free positions.
  int64_t next_src = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (order[d] >= 0) continue;
    while (src_used[next_src]) ++next_src;
    order[d] = next_src++;
  }
  return permute(self, order);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  KILN_CHECK_INDEX(self.dim() != 0, "select() cannot be applied to a 0-dim tensor.");
  dim = wrapDim(dim, self.dim());
  const int64_t size = self.sizes()[dim];
  KILN_CHECK_INDEX(index >= -size && index < size, "select(): index ", index, " out of range for tensor of size ",
                   shapeString(self.sizes()), " at dimension ", dim);
  if (index < 0) index += size;
  DimVector sizes(self.sizes()), strides(self.strides());
  const int64_t offset = self.storageOffset() + index * strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return makeView(self, sizes, strides, offset);
}

Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  KILN_CHECK_INDEX(self.dim() != 0, "slice() cannot be applied to a 0-dim tensor.");
  dim = wrapDim(dim, self.dim());
  KILN_CHECK(step > 0, "slice step must be positive");
  const int64_t size = self.sizes()[dim];
  int64_t first = start.value_or(0);
  int64_t last = end.value_or(INT64_MAX);
  if (first < 0) first += size;
  if (last < 0) last += size;
  first = std::clamp<int64_t>(first, 0, size);
  last = std::clamp<int64_t>(last, first, size);
  DimVector sizes(self.sizes()), strides(self.strides());
  const int64_t offset = self.storageOffset() + first * strides[dim];
  const int64_t length = last - first;
  sizes[dim] = length == 0 ? 0 : (length - 1) / step + 1;
  strides[dim] *= step;
  return makeView(self, sizes, strides, offset);
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  KILN_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  KILN_CHECK(length >= 0, "narrow(): length must be non-negative.");
  const int64_t size = self.size(dim);
  // start == size is a valid (empty) position but not a valid dim index.
  if (start != size) start = wrapDim(start, size);
  KILN_CHECK(start <= size - length, "start (", start, ") + length (", length, ") exceeds dimension size (", size,
             ").");
  return slice(self, dim, start, start + length, 1);
}

Tensor expand(const Tensor& self, IntArrayRef size) {
  const int64_t rank = static_cast<int64_t>(size.size());
  const int64_t self_rank = self.dim();
  KILN_CHECK(rank >= self_rank, "expand(", scalarTypeName(self.dtype()), "{", shapeString(self.sizes()),
             "}, size=", shapeString(size), "): the number of sizes provided (", rank,
             ") must be greater or equal to the number of dimensions in the tensor (", self_rank, ")");
  DimVector sizes(size.size()), strides(size.size());
  for (int64_t i = rank - 1; i >= 0; --i) {
    const int64_t d = self_rank - rank + i;
    int64_t cur = d >= 0 ? self.sizes()[d] : 1;
    int64_t stride = d >= 0 ? self.strides()[d] : (i + 1 < rank ? sizes[i + 1] * strides[i + 1] : 1);
    int64_t target = size[i];
    if (target == -1) {
      KILN_CHECK(d >= 0, "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension ", i);
      target = cur;
    }
    KILN_CHECK(target >= 0, "Trying to create tensor with negative dimension ", target, ": ", shapeString(size));
    if (cur != target) {
      KILN_CHECK(cur == 1, "The expanded size of the tensor (", target, ") must match the existing size (", cur,
                 ") at non-singleton dimension ", i, ".  Target sizes: ", shapeString(size),
                 ".  Tensor sizes: ", shapeString(self.sizes()));
      cur = target;
      stride = 0;
    }
    sizes[i] = cur;
    strides[i] = stride;
  }
  return viewOf(self, sizes, strides);
}

Tensor squeeze(const Tensor& self) {
  DimVector sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.sizes()[d] == 1) continue;
    sizes.push_back(self.sizes()[d]);
    strides.push_back(self.strides()[d]);
  }
  return viewOf(self, sizes, strides);
}

Tensor squeeze(const Tensor& self, int64_t dim) {
  dim = wrapDim(dim, self.dim());
  if (self.dim() == 0 || self.sizes()[dim] != 1) return alias(self);
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return viewOf(self, sizes, strides);
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  dim = wrapDim(dim, self.dim() + 1);
  DimVector sizes(self.sizes()), strides(self.strides());
  const int64_t stride = dim >= self.dim() ? 1 : sizes[dim] * strides[dim];
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return viewOf(self, sizes, strides);
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  start_dim = wrapDim(start_dim, self.dim());
  end_dim = wrapDim(end_dim, self.dim());
  KILN_CHECK(start_dim <= end_dim, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (self.dim() == 0) return reshape(self, DimVector{1});
  if (start_dim == end_dim) return self;
  // Not via -1: a zero-size dim elsewhere would make the inferred size ambiguous.
  int64_t flat = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) flat *= self.sizes()[d];
  DimVector sizes;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d < start_dim || d > end_dim) sizes.push_back(self.sizes()[d]);
    if (d == start_dim) sizes.push_back(flat);
  }
  return reshape(self, sizes);
}

Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  dim = wrapDim(dim, self.dim());
  KILN_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  const int64_t size = sizeAt(self, dim);
  DimVector inferred;
  try {
    inferred = inferSize(sizes, size);
  } catch (const Error&) {
    KILN_ERROR("unflatten: Provided sizes ", shapeString(sizes), " don't multiply up to the size of dim ", dim, " (",
               size, ") in the input tensor");
  }
  DimVector shape;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d != dim) shape.push_back(self.sizes()[d]);
    for (size_t j = 0; d == dim && j < inferred.size(); ++j) shape.push_back(inferred[j]);
  }
  return view(self, shape);
}

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  KILN_CHECK_INDEX(self.dim() > 0, "Dimension specified as ", dim, " but tensor has no dimensions");
  dim = wrapDim(dim, self.dim());
  std::vector<Tensor> parts;
  parts.reserve(static_cast<size_t>(self.sizes()[dim]));
  for (int64_t i = 0; i < self.sizes()[dim]; ++i) parts.push_back(select(self, dim, i));
  return parts;
}

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  KILN_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  KILN_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  const int64_t size = self.size(dim);
  KILN_CHECK(split_size > 0 || size == 0, "split_size can only be 0 if dimension size is 0, but got dimension size of ",
             size);
  // At least one piece, also when split_size exceeds the dim (PyTorch keeps that for compatibility).
  const int64_t pieces = (split_size == 0 || size == 0) ? 1 : (size - 1) / split_size + 1;
  std::vector<Tensor> parts;
  parts.reserve(static_cast<size_t>(pieces));
  for (int64_t i = 0; i < pieces; ++i) {
    const int64_t start = i * split_size;
    parts.push_back(narrow(self, dim, start, i + 1 < pieces ? split_size : size - start));
  }
  return parts;
}

std::vector<Tensor> splitWithSizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  KILN_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  const int64_t size = self.size(dim);
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t length : split_sizes) {
    KILN_CHECK(length >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=",
               shapeString(split_sizes));
    parts.push_back(slice(self, dim, start, start + length, 1));
    start += length;
  }
  KILN_CHECK(start == size, "split_with_sizes expects split_sizes to sum exactly to ", size,
             " (input tensor's size at dimension ", wrapDim(dim, self.dim()),
             "), but got split_sizes=", shapeString(split_sizes));
  return parts;
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  KILN_CHECK(self.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  KILN_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  const int64_t size = self.size(dim);
  const int64_t split_size = size == 0 ? 0 : (size - 1) / chunks + 1;
  // An empty dim still gives `chunks` (empty) pieces.
  if (size == 0) return splitWithSizes(self, DimVector(static_cast<size_t>(chunks), 0), dim);
  return split(self, split_size, dim);
}

std::vector<Tensor> tensorSplit(const Tensor& self, int64_t sections, int64_t dim) {
  KILN_CHECK(self.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with ",
             self.dim(), " dims");
  KILN_CHECK(sections > 0, "number of sections must be larger than 0, got ", sections);
  dim = wrapDim(dim, self.dim());
  const int64_t size = self.sizes()[dim];
  const int64_t base = size / sections, extra = size % sections;
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t length = i < extra ? base + 1 : base;
    parts.push_back(slice(self, dim, start, start + length, 1));
    start += length;
  }
  return parts;
}

std::vector<Tensor> tensorSplitIndices(const Tensor& self, IntArrayRef indices, int64_t dim) {
  KILN_CHECK(self.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with ",
             self.dim(), " dims");
  dim = wrapDim(dim, self.dim());
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t end : indices) {
    parts.push_back(slice(self, dim, start, end, 1));
    start = end;
  }
  parts.push_back(slice(self, dim, start, self.sizes()[dim], 1));
  return parts;
}

Tensor asStrided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  const int64_t offset = storage_offset.value_or(self.storageOffset());
  KILN_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  for (int64_t s : stride) {
    KILN_CHECK(s >= 0,
               "as_strided: Negative strides are not supported at the moment, got strides: ", shapeString(stride));
  }
  for (int64_t s : size)
    KILN_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shapeString(size));
  KILN_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  const int64_t item = static_cast<int64_t>(self.itemsize());
  const int64_t extent = extentBytes(size, stride, item);
  if (extent != 0) {
    int64_t needed = -1;
    bool overflow =
        extent < 0 || __builtin_mul_overflow(offset, item, &needed) || __builtin_add_overflow(needed, extent, &needed);
    KILN_CHECK(!overflow && static_cast<size_t>(needed) <= self.storage()->nbytes(), "setStorage: sizes ",
               shapeString(size), ", strides ", shapeString(stride), ", storage offset ", offset, ", and itemsize ",
               item, " requiring a storage size of ", overflow ? -1 : needed, " are out of bounds for storage of size ",
               self.storage()->nbytes());
  }
  return makeView(self, size, stride, offset);
}

Tensor alias(const Tensor& self) { return viewOf(self, self.sizes(), self.strides()); }

Tensor& transpose_(Tensor& self, int64_t dim0, int64_t dim1) {
  return adoptGeometry(self, transpose(self, dim0, dim1));
}
Tensor& t_(Tensor& self) { return adoptGeometry(self, t(self)); }
Tensor& squeeze_(Tensor& self) { return adoptGeometry(self, squeeze(self)); }
Tensor& squeeze_(Tensor& self, int64_t dim) { return adoptGeometry(self, squeeze(self, dim)); }
Tensor& unsqueeze_(Tensor& self, int64_t dim) { return adoptGeometry(self, unsqueeze(self, dim)); }
Tensor& asStrided_(Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  return adoptGeometry(self, asStrided(self, size, stride, storage_offset));
}

// ---- Copies ----

Tensor contiguous(const Tensor& self, MemoryFormat format) {
  // PyTorch asks whether a tensor has the Preserve layout as it asks about
  // Contiguous, and rejects Preserve only when a copy is needed.
  if (hasLayout(self, format == MemoryFormat::Preserve ? MemoryFormat::Contiguous : format)) return self;
  KILN_CHECK(format != MemoryFormat::Preserve, "preserve memory format is unsupported by the contiguous operator");
  return clone(self, format);
}

Tensor clone(const Tensor& self, MemoryFormat format) {
  DimVector strides;
  if (format == MemoryFormat::Preserve) {
    strides = isNonOverlappingAndDense(self) ? DimVector(self.strides()) : contiguousStrides(self.sizes());
  } else {
    strides = stridesFor(self, format);
  }
  Tensor out = emptyStrided(self.sizes(), strides, self.dtype());
  return copyAnyLayout(out, self);
}

Tensor& checkedCopy_(Tensor& self, const Tensor& src) {
  if (self.isSame(src)) return self;
  assertNoInternalOverlap(self);
  assertNoPartialOverlap(self, src);
  if (sameSizes(self.sizes(), src.sizes())) return copyAnyLayout(self, src);
  return copy_(self, expand(src, self.sizes()));
}

Tensor& fillWith_(Tensor& self, const Tensor& value) {
  KILN_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
             " dimensions.");
  return copy_(self, expand(value, self.sizes()));
}

// ---- Shape operations ----

Tensor cat(ArrayRef<Tensor> tensors, int64_t dim) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    KILN_CHECK(tensors[i].dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
  }
  KILN_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  // 1-D empty tensors were once the only empty tensors; they are skipped for compatibility.
  auto skipped = [](const Tensor& t) { return t.dim() == 1 && t.numel() == 0; };
  const ScalarType dtype = resultType(tensors);
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors) {
    if (!skipped(t)) {
      ref = &t;
      break;
    }
  }
  if (ref == nullptr) return empty(DimVector{0}, dtype);
  dim = wrapDim(dim, ref->dim());
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped(t)) continue;
    KILN_CHECK(t.dim() == ref->dim(), "Tensors must have same number of dimensions: got ", ref->dim(), " and ",
               t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      KILN_CHECK(d == dim || t.sizes()[d] == ref->sizes()[d], "Sizes of tensors must match except in dimension ", dim,
                 ". Expected size ", ref->sizes()[d], " but got size ", t.sizes()[d], " for tensor number ", i,
                 " in the list.");
    }
    total += t.sizes()[dim];
  }
  DimVector sizes(ref->sizes());
  sizes[dim] = total;
  Tensor out = empty(sizes, dtype);
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped(t)) continue;
    copy_(narrow(out, dim, offset, t.sizes()[dim]), t);
    offset += t.sizes()[dim];
  }
  return out;
}

Tensor& catOut(ArrayRef<Tensor> tensors, int64_t dim, Tensor& out) {
  return writeOut(out, cat(tensors, dim), "torch.cat()", OutDtype::Castable);
}

Tensor stack(ArrayRef<Tensor> tensors, int64_t dim) {
  KILN_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  dim = wrapDim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    KILN_CHECK(sameSizes(tensors[i].sizes(), tensors[0].sizes()),
               "stack expects each tensor to be equal size, but got ", shapeString(tensors[0].sizes()),
               " at entry 0 and ", shapeString(tensors[i].sizes()), " at entry ", i);
    parts.push_back(unsqueeze(tensors[i], dim));
  }
  return cat(parts, dim);
}

Tensor& stackOut(ArrayRef<Tensor> tensors, int64_t dim, Tensor& out) {
  return writeOut(out, stack(tensors, dim), "torch.stack()", OutDtype::Castable);
}

Tensor repeat(const Tensor& self, IntArrayRef repeats) {
  KILN_CHECK(static_cast<int64_t>(repeats.size()) >= self.dim(),
             "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  const size_t rank = repeats.size();
  const size_t new_dims = rank - static_cast<size_t>(self.dim());
  DimVector padded(new_dims, 1);
  for (int64_t s : self.sizes()) padded.push_back(s);
  DimVector target(rank);
  for (size_t d = 0; d < rank; ++d) target[d] = padded[d] * repeats[d];
  Tensor out = empty(target, self.dtype());
  if (out.numel() == 0) return out;
  // View the result as [r0, s0, r1, s1, ...] and copy the input in with stride 0 over every r.
  Tensor source = expand(self, padded);
  DimVector sizes(2 * rank), out_strides(2 * rank), src_strides(2 * rank);
  for (size_t d = 0; d < rank; ++d) {
    sizes[2 * d] = repeats[d];
    sizes[2 * d + 1] = padded[d];
    out_strides[2 * d] = padded[d] * out.strides()[d];
    out_strides[2 * d + 1] = out.strides()[d];
    src_strides[2 * d] = 0;
    src_strides[2 * d + 1] = source.strides()[d];
  }
  copy_(makeView(out, sizes, out_strides, 0), makeView(source, sizes, src_strides, source.storageOffset()));
  return out;
}

Tensor selectScatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  return scatterInto(self, src, [&](const Tensor& out) { return select(out, dim, index); });
}

Tensor sliceScatter(const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                    std::optional<int64_t> end, int64_t step) {
  return scatterInto(self, src, [&](const Tensor& out) { return slice(out, dim, start, end, step); });
}

Tensor flip(const Tensor& self, IntArrayRef dims) {
  const int64_t rank = self.dim();
  DimVector wrapped = wrapDims(dims, rank);
  std::vector<bool> flipped(static_cast<size_t>(std::max<int64_t>(rank, 1)), false);
  for (int64_t d : wrapped) {
    KILN_CHECK(!flipped[d], "dim ", d, " appears multiple times in the list of dims");
    flipped[d] = true;
  }
  Tensor out = empty(self.sizes(), self.dtype());
  if (out.numel() == 0) return out;
  // A reversed view (negative strides, used only here) copied into a fresh tensor.
  DimVector strides(self.strides());
  int64_t offset = self.storageOffset();
  for (int64_t d = 0; d < rank; ++d) {
    if (!flipped[d]) continue;
    offset += (self.sizes()[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  copy_(out, makeView(self, self.sizes(), strides, offset));
  return out;
}

Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  KILN_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {
    Tensor flat = reshape(self, DimVector{self.numel()});
    return view(roll(flat, shifts, DimVector{0}), self.sizes());
  }
  KILN_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
             ", dims:", dims.size());
  Tensor result = self;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t size = sizeAt(self, dims[i]);
    const int64_t dim = wrapDim(dims[i], self.dim());
    Tensor out = empty(self.sizes(), self.dtype());
    if (self.numel() == 0) return out;
    // Element j moves to (j + shift) mod size: the tail [size - shift, size) comes first.
    const int64_t shift = ((shifts[i] % size) + size) % size;
    copy_(narrow(out, dim, 0, shift), narrow(result, dim, size - shift, shift));
    copy_(narrow(out, dim, shift, size - shift), narrow(result, dim, 0, size - shift));
    result = out;
  }
  return result;
}

Tensor tril(const Tensor& self, int64_t diagonal) {
  checkTriangleInput(self, "tril");
  Tensor out = clone(self, MemoryFormat::Contiguous);
  return tril_(out, diagonal);
}

Tensor triu(const Tensor& self, int64_t diagonal) {
  checkTriangleInput(self, "triu");
  Tensor out = clone(self, MemoryFormat::Contiguous);
  return triu_(out, diagonal);
}

Tensor& tril_(Tensor& self, int64_t diagonal) {
  checkTriangleInput(self, "tril");
  const int64_t k = clampDiagonal(self, diagonal);
  // Row i keeps columns j <= i + k.
  zeroTriangle(self, [k](int64_t i, int64_t cols) {
    return std::pair<int64_t, int64_t>{std::clamp<int64_t>(i + k + 1, 0, cols), cols};
  });
  return self;
}

Tensor& triu_(Tensor& self, int64_t diagonal) {
  checkTriangleInput(self, "triu");
  const int64_t k = clampDiagonal(self, diagonal);
  // Row i keeps columns j >= i + k.
  zeroTriangle(self, [k](int64_t i, int64_t cols) {
    return std::pair<int64_t, int64_t>{0, std::clamp<int64_t>(i + k, 0, cols)};
  });
  return self;
}

}  // namespace kiln
