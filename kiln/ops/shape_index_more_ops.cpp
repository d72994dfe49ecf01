// PyTorch 1.13's remaining shape, index and product operators.
//
// Most are compositions in torch (CompositeImplicitAutograd): repeat_interleave,
// hsplit/vsplit/dsplit, rot90, diag, diagflat, take_along_dim, meshgrid,
// cartesian_prod, combinations, block_diag, kron, inner, cross, linalg_cross,
// einsum, chain_matmul, linalg_multi_dot, trapezoid, trapz,
// cumulative_trapezoid and vander (linalg_vander is in linalg_more_ops.cpp). kiln composes them the same
// way, every inner operator called through runOperator (kiln/ops/composite.h),
// so autograd records the inner operators and the gradients are theirs
// (tests/python/test_autograd_coverage.py lists them as COMPOSITE). The inner
// operators are views, index_select/gather, cat, cumprod and bmm: the
// compositions cost what torch's do.
//
// The scatter-like operators (diag_embed, diagonal_scatter,
// as_strided_scatter, fill_diagonal_, and index_copy, masked_scatter, put,
// index_reduce, scatter_reduce, whose kernels are in
// kiln/tensor/kernels/index.cpp) have derivative formulas; the integer ones
// (repeat_interleave of a repeats tensor, one_hot) need none.
#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/op_registration.h"
#include "kiln/ir/graph.h"
#include "kiln/ops/composite.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/index.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/scalar_type_names.h"
#include "kiln/tensor/scatter_into.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using OptInt = std::optional<int64_t>;
using Dims = std::vector<int64_t>;

// The inner operators of the compositions, recorded by autograd.
namespace rec {

using composite::call;
using composite::callTensor;

Tensor reshape(const Tensor& t, Dims shape) { return callTensor("aten::reshape", "", {t, IValue(shape)}); }
Tensor permute(const Tensor& t, Dims dims) { return callTensor("aten::permute", "", {t, IValue(dims)}); }
Tensor unsqueeze(const Tensor& t, int64_t dim) { return callTensor("aten::unsqueeze", "", {t, dim}); }
Tensor expand(const Tensor& t, Dims size) { return callTensor("aten::expand", "", {t, IValue(size), false}); }
Tensor flip(const Tensor& t, Dims dims) { return callTensor("aten::flip", "", {t, IValue(dims)}); }
Tensor transpose(const Tensor& t, int64_t a, int64_t b) { return callTensor("aten::transpose", "int", {t, a, b}); }
Tensor movedim(const Tensor& t, int64_t from, int64_t to) { return callTensor("aten::movedim", "int", {t, from, to}); }
Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  return callTensor("aten::select", "int", {t, dim, index});
}
Tensor slice(const Tensor& t, int64_t dim, OptInt start, OptInt end) {
  return callTensor("aten::slice", "Tensor",
                    {t, dim, start ? IValue(*start) : IValue(), end ? IValue(*end) : IValue(), int64_t{1}});
}
Tensor diagonal(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  return callTensor("aten::diagonal", "", {t, offset, dim1, dim2});
}
Tensor alias(const Tensor& t) { return callTensor("aten::alias", "", {t}); }
Tensor clone(const Tensor& t) {
  return callTensor("aten::clone", "", {t, static_cast<int64_t>(MemoryFormat::Contiguous)});
}
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) { return callTensor("aten::cat", "", {tensors, dim}); }
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) { return callTensor("aten::stack", "", {tensors, dim}); }
Tensor mul(const Tensor& a, const Tensor& b) { return callTensor("aten::mul", "Tensor", {a, b}); }
Tensor mul(const Tensor& a, double b) { return callTensor("aten::mul", "Scalar", {a, b}); }
Tensor add(const Tensor& a, const Tensor& b) { return callTensor("aten::add", "Tensor", {a, b, int64_t{1}}); }
Tensor sub(const Tensor& a, const Tensor& b) { return callTensor("aten::sub", "Tensor", {a, b, int64_t{1}}); }
Tensor sum(const Tensor& t, Dims dims, bool keepdim) {
  return callTensor("aten::sum", "dim_IntList", {t, IValue(dims), keepdim, IValue()});
}
Tensor cumsum(const Tensor& t, int64_t dim) { return callTensor("aten::cumsum", "", {t, dim, IValue()}); }
Tensor cumprod(const Tensor& t, int64_t dim) { return callTensor("aten::cumprod", "", {t, dim, IValue()}); }
Tensor mm(const Tensor& a, const Tensor& b) { return callTensor("aten::mm", "", {a, b}); }
Tensor bmm(const Tensor& a, const Tensor& b) { return callTensor("aten::bmm", "", {a, b}); }
Tensor tensordot(const Tensor& a, const Tensor& b, Dims dims_a, Dims dims_b) {
  return callTensor("aten::tensordot", "", {a, b, IValue(dims_a), IValue(dims_b)});
}
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  return callTensor("aten::gather", "", {t, dim, index, false});
}
Tensor indexSelect(const Tensor& t, int64_t dim, const Tensor& index) {
  return callTensor("aten::index_select", "", {t, dim, index});
}
Tensor maskedSelect(const Tensor& t, const Tensor& mask) { return callTensor("aten::masked_select", "", {t, mask}); }
Tensor pad(const Tensor& t, Dims pad) { return callTensor("aten::constant_pad_nd", "", {t, IValue(pad), int64_t{0}}); }
Tensor diagEmbed(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  return callTensor("aten::diag_embed", "", {t, offset, dim1, dim2});
}
std::vector<Tensor> tensorSplit(const Tensor& t, const IValue& sections_or_indices, int64_t dim) {
  const char* overload = sections_or_indices.isInt() ? "sections" : "indices";
  return call("aten::tensor_split", overload, {t, sections_or_indices, dim}).at(0).toTensorVector();
}

}  // namespace rec

Dims dimsOf(IntArrayRef sizes) { return Dims(sizes.begin(), sizes.end()); }

Tensor longTensor(std::initializer_list<int64_t> values) {
  Tensor t = empty({static_cast<int64_t>(values.size())}, ScalarType::Long);
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return t;
}

// ---- repeat_interleave ----

// repeat_interleave(repeats): each position i repeated repeats[i] times, in
// repeats' integer dtype.
Tensor repeatPositions(const Tensor& repeats, OptInt output_size) {
  KILN_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  KILN_CHECK(repeats.dtype() == ScalarType::Long || repeats.dtype() == ScalarType::Int,
             "\"repeat_interleave_cpu\" not implemented for '", scalarTypeShortName(repeats.dtype()), "'");
  Tensor counts = to(contiguous(repeats), ScalarType::Long);
  const int64_t* count = counts.data<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < counts.numel(); ++i) {
    KILN_CHECK(count[i] >= 0, "repeats can not be negative");
    total += count[i];
  }
  KILN_CHECK(!output_size || *output_size == total, "allocated size does not match required size");
  Tensor positions = empty({total}, ScalarType::Long);
  int64_t* out = positions.data<int64_t>();
  for (int64_t i = 0; i < counts.numel(); ++i) out = std::fill_n(out, count[i], i);
  return to(positions, repeats.dtype());
}

// Each slice of self along dim repeated: an index_select of the positions,
// as torch composes it (its gradient is index_select's).
Tensor repeatInterleave(const Tensor& self, const Tensor& repeats, OptInt dim, OptInt output_size) {
  KILN_CHECK_INDEX(!dim || self.dim() > 0, "Dimension specified as ", dim.value_or(0), " but tensor has no dimensions");
  Tensor input = dim ? self : rec::reshape(self, {-1});
  const int64_t d = dim ? wrapDim(*dim, self.dim()) : 0;
  const int64_t size = input.size(d);
  Tensor counts = repeats;
  if (repeats.dim() == 0 || (repeats.dim() == 1 && repeats.size(0) == 1)) {
    counts = expand(reshape(repeats, {1}), {size});
  } else if (repeats.dim() == 1) {
    KILN_CHECK(repeats.size(0) == size, "repeats must have the same size as input along dim");
  }
  return rec::indexSelect(input, d, repeatPositions(counts, output_size));
}

Tensor repeatInterleaveInt(const Tensor& self, int64_t repeats, OptInt dim, OptInt output_size) {
  return repeatInterleave(self, longTensor({repeats}), dim, output_size);
}

// ---- hsplit / vsplit / dsplit: tensor_split along dim 1 (0 for 1-D), 0, 2 ----

struct DirectionalSplit {
  const char* name;
  int64_t min_dims;
  int64_t dim(const Tensor& self) const {
    if (min_dims == 1) return self.dim() == 1 ? 0 : 1;
    return min_dims == 2 ? 0 : 2;
  }
};

constexpr DirectionalSplit kHsplit{"hsplit", 1}, kVsplit{"vsplit", 2}, kDsplit{"dsplit", 3};

std::vector<Tensor> directionalSplit(const Tensor& self, const IValue& sections_or_indices,
                                     const DirectionalSplit& split) {
  KILN_CHECK(self.dim() >= split.min_dims, "torch.", split.name, " requires a tensor with at least ", split.min_dims,
             " dimension, but got a tensor with ", self.dim(), " dimensions!");
  const int64_t dim = split.dim(self);
  if (sections_or_indices.isInt()) {
    const int64_t sections = sections_or_indices.toInt();
    // sections == 0 is tensor_split's error.
    KILN_CHECK(sections == 0 || self.size(dim) % sections == 0, "torch.", split.name,
               " attempted to split along dimension ", dim, ", but the size of the dimension ", self.size(dim),
               " is not divisible by the split_size ", sections, "!");
  }
  return rec::tensorSplit(self, sections_or_indices, dim);
}

// ---- rot90 ----

Tensor rot90(const Tensor& self, int64_t k, IntArrayRef dims) {
  const int64_t rank = self.dim();
  KILN_CHECK(dims.size() == 2, "expected total rotation dims == 2, but got dims = ", dims.size());
  KILN_CHECK(rank >= 2, "expected total dims >= 2, but got total dims = ", rank);
  KILN_CHECK(dims[0] != dims[1] && std::abs(dims[0] - dims[1]) != rank,
             "expected rotation dims to be different, but got dim0 = ", dims[0], " and dim1 = ", dims[1]);
  KILN_CHECK(dims[0] < rank && dims[0] >= -rank, "Rotation dim0 out of range, dim0 = ", dims[0]);
  KILN_CHECK(dims[1] < rank && dims[1] >= -rank, "Rotation dim1 out of range, dim1 = ", dims[1]);
  switch (((k % 4) + 4) % 4) {
    case 1: return rec::transpose(rec::flip(self, {dims[1]}), dims[0], dims[1]);
    case 2: return rec::flip(self, {dims[0], dims[1]});
    case 3: return rec::transpose(rec::flip(self, {dims[0]}), dims[0], dims[1]);
    default: return rec::clone(self);
  }
}

// ---- Diagonals ----

// A matrix (or batch) with self on its offset diagonal over dims dim1, dim2 of the result.
Tensor diagEmbed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  KILN_CHECK(self.dim() >= 1, "diag_embed(): expected a tensor with at least one dimension");
  const int64_t rank = self.dim() + 1;
  const int64_t d1 = wrapDim(dim1, rank), d2 = wrapDim(dim2, rank);
  KILN_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t n = self.size(-1) + std::abs(offset);
  Dims sizes = dimsOf(self.sizes());
  sizes.pop_back();
  sizes.insert(sizes.begin() + std::min(d1, d2), n);
  sizes.insert(sizes.begin() + std::max(d1, d2), n);
  Tensor out = zeros(sizes, self.dtype());
  copy_(diagonal(out, offset, d1, d2), self);
  return out;
}

Tensor diag(const Tensor& self, int64_t offset) {
  KILN_CHECK(self.dim() == 1 || self.dim() == 2, "matrix or a vector expected");
  if (self.dim() == 1) return rec::diagEmbed(self, offset, 0, 1);
  return rec::clone(rec::diagonal(self, offset, 0, 1));
}

Tensor diagflat(const Tensor& self, int64_t offset) { return diag(rec::reshape(self, {-1}), offset); }

Tensor diagonalScatter(const Tensor& self, const Tensor& src, int64_t offset, int64_t dim1, int64_t dim2) {
  return scatterInto(self, src, [&](const Tensor& out) { return diagonal(out, offset, dim1, dim2); });
}

Tensor asStridedScatter(const Tensor& self, const Tensor& src, IntArrayRef size, IntArrayRef stride,
                        OptInt storage_offset) {
  return scatterInto(self, src, [&](const Tensor& out) { return asStrided(out, size, stride, storage_offset); });
}

// torch's fill_diagonal_: the main diagonal of a square tensor (every dim
// the same size) or of a matrix; `wrap` continues a tall matrix's diagonal
// every width + 1 rows.
Tensor& fillDiagonal_(Tensor& self, const Scalar& value, bool wrap) {
  const int64_t rank = self.dim();
  KILN_CHECK(rank >= 2, "dimensions must larger than 1");
  const int64_t height = self.size(0), width = self.size(1);
  if (rank > 2) {
    for (int64_t d = 1; d < rank; ++d) {
      KILN_CHECK(self.size(d) == height, "all dimensions of input must be of equal length");
    }
  }
  int64_t step = 0;
  for (int64_t d = 0; d < rank; ++d) step += self.stride(d);
  const int64_t length = std::min(height, width);
  Tensor main_diagonal = asStrided(self, {length}, {step}, self.storageOffset());
  fill_(main_diagonal, value);
  if (wrap && rank == 2 && height > width + 1) {
    const int64_t wrapped = (self.numel() + width) / (width + 1) - length;
    Tensor rest = asStrided(self, {wrapped}, {step}, self.storageOffset() + self.stride(0) * (width + 1));
    fill_(rest, value);
  }
  return self;
}

// ---- Index copies (kernels in kiln/tensor/kernels/index.cpp): the
// out-of-place forms work on a copy of self ----

Tensor indexCopy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  Tensor out = clone(self, MemoryFormat::Preserve);
  return indexCopy_(out, dim, index, source);
}

// self and mask broadcast together.
Tensor maskedScatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  Tensor out = clone(expand(self, broadcastShapes(self.sizes(), mask.sizes())), MemoryFormat::Contiguous);
  return maskedScatter_(out, mask, source);
}

Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  Tensor out = clone(self, MemoryFormat::Contiguous);
  return put_(out, index, source, accumulate);
}

Tensor indexReduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   const std::string& reduce, bool include_self) {
  Tensor out = clone(self, MemoryFormat::Contiguous);
  return indexReduce_(out, dim, index, source, reduce, include_self);
}

Tensor scatterReduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                     bool include_self) {
  Tensor out = clone(self, MemoryFormat::Contiguous);
  return scatterReduce_(out, dim, index, src, reduce, include_self);
}

// The gradients of index_reduce and scatter_reduce (torch 1.13's
// index_reduce_backward and scatter_reduce_backward), as formula text, one
// template for both: OP is the operator, SRC its source argument, ADD, TAKE
// and CLEAR its index_add / index_select / index_fill(0) counterparts.
// `counts` is how many values each result element combines; sum passes the
// gradient through; amax/amin share it evenly among the values equal to the
// result; prod divides the result by each value, recomputing where a value
// is its element's only zero. Without include_self, self's elements that
// receive values get no gradient.
// clang-format off
#define KILN_REDUCE_COUNTS(ADD, SRC)                                                       \
  "(torch.ones_like(grad) if include_self else torch.zeros_like(grad))." ADD              \
  "(dim, index, torch.ones_like(" SRC ")).clamp_min(1)"
#define KILN_REDUCE_SRC_IS_RESULT(TAKE, SRC)                                               \
  "(" SRC " == result." TAKE "(dim, index)).type_as(grad)"
#define KILN_REDUCE_TIES(ADD, TAKE, SRC)                                                   \
  "(self == result).type_as(grad)." ADD "(dim, index, " KILN_REDUCE_SRC_IS_RESULT(TAKE, SRC) ")"
#define KILN_REDUCE_SELF(OP, ADD, TAKE, SRC)                                               \
  "(grad * self.masked_fill(self == 0, 1)." OP "(dim, index, " SRC ", reduce, "            \
  "include_self=include_self) / self.masked_fill(self == 0, 1) if reduce == 'prod' "      \
  "else (grad / " KILN_REDUCE_COUNTS(ADD, SRC) " if reduce == 'mean' "                     \
  "else (grad if reduce == 'sum' "                                                         \
  "else (self == result).type_as(grad) * grad / " KILN_REDUCE_TIES(ADD, TAKE, SRC) ")))"
#define KILN_REDUCE_SINGLE_ZERO(ADD, TAKE, SRC)                                            \
  "((" SRC " == 0) & (torch.zeros_like(self)." ADD "(dim, index, (" SRC " == 0)"          \
  ".type_as(self))." TAKE "(dim, index) == 1))"
#define KILN_REDUCE_SELF_GRAD(OP, ADD, TAKE, CLEAR, SRC)                                   \
  "self: (" KILN_REDUCE_SELF(OP, ADD, TAKE, SRC) ")." CLEAR " if not include_self "       \
  "else " KILN_REDUCE_SELF(OP, ADD, TAKE, SRC)
#define KILN_REDUCE_SRC_GRAD(OP, ADD, TAKE, SRC)                                           \
  SRC ": torch.where(" KILN_REDUCE_SINGLE_ZERO(ADD, TAKE, SRC) ", (grad * self." OP        \
  "(dim, index, " SRC ".masked_fill(" KILN_REDUCE_SINGLE_ZERO(ADD, TAKE, SRC) ", 1), "     \
  "'prod', include_self=include_self))." TAKE "(dim, index), (grad * result)." TAKE       \
  "(dim, index) / " SRC ".masked_fill(" SRC " == 0, 1)) if reduce == 'prod' "              \
  "else (grad." TAKE "(dim, index) / (" KILN_REDUCE_COUNTS(ADD, SRC) ")." TAKE             \
  "(dim, index) if reduce == 'mean' "                                                      \
  "else (grad." TAKE "(dim, index) if reduce == 'sum' "                                    \
  "else " KILN_REDUCE_SRC_IS_RESULT(TAKE, SRC) " * (grad / " KILN_REDUCE_TIES(ADD, TAKE, SRC) ")." TAKE \
  "(dim, index)))"
// clang-format on

constexpr const char* kIndexReduceSelfGrad =
    KILN_REDUCE_SELF_GRAD("index_reduce", "index_add", "index_select", "index_fill(dim, index, 0)", "source");
constexpr const char* kIndexReduceSourceGrad =
    KILN_REDUCE_SRC_GRAD("index_reduce", "index_add", "index_select", "source");
constexpr const char* kScatterReduceSelfGrad =
    KILN_REDUCE_SELF_GRAD("scatter_reduce", "scatter_add", "gather", "scatter(dim, index, 0)", "src");
constexpr const char* kScatterReduceSrcGrad = KILN_REDUCE_SRC_GRAD("scatter_reduce", "scatter_add", "gather", "src");

#undef KILN_REDUCE_COUNTS
#undef KILN_REDUCE_SRC_IS_RESULT
#undef KILN_REDUCE_TIES
#undef KILN_REDUCE_SELF
#undef KILN_REDUCE_SINGLE_ZERO
#undef KILN_REDUCE_SELF_GRAD
#undef KILN_REDUCE_SRC_GRAD

// ---- take_along_dim ----

Tensor takeAlongDim(const Tensor& self, const Tensor& indices, OptInt dim) {
  if (!dim) return rec::gather(rec::reshape(self, {-1}), 0, rec::reshape(indices, {-1}));
  KILN_CHECK(self.dim() == indices.dim(),
             "torch.take_along_dim(): input and indices should have the same number of dimensions, but got ",
             self.dim(), " dimensions for input, and ", indices.dim(), " dimensions for indices");
  KILN_CHECK(indices.dtype() == ScalarType::Long, "torch.take_along_dim(): dtype of indices should be Long but got ",
             scalarTypeShortName(indices.dtype()));
  const int64_t d = wrapDim(*dim, self.dim());
  // Both broadcast to one shape except along dim, where each keeps its size.
  Dims self_sizes = dimsOf(self.sizes());
  self_sizes[d] = indices.size(d);
  Dims shape = dimsOf(broadcastShapes(self_sizes, indices.sizes()));
  Tensor index = rec::expand(indices, shape);
  shape[d] = self.size(d);
  return rec::gather(rec::expand(self, shape), d, index);
}

// ---- one_hot ----

Tensor oneHot(const Tensor& self, int64_t num_classes) {
  KILN_CHECK(self.dtype() == ScalarType::Long, "one_hot is only applicable to index tensor.");
  Dims shape = dimsOf(self.sizes());
  if (self.numel() == 0) {
    KILN_CHECK(num_classes > 0, "Can not infer total number of classes from empty tensor.");
    shape.push_back(num_classes);
    return empty(shape, ScalarType::Long);
  }
  Tensor values = contiguous(self);
  const int64_t* v = values.data<int64_t>();
  const auto [lo, hi] = std::minmax_element(v, v + values.numel());
  KILN_CHECK(*lo >= 0, "Class values must be non-negative.");
  if (num_classes == -1) {
    num_classes = *hi + 1;
  } else {
    KILN_CHECK(num_classes > *hi, "Class values must be smaller than num_classes.");
  }
  shape.push_back(num_classes);
  Tensor out = zeros(shape, ScalarType::Long);
  return scatter_(out, -1, unsqueeze(self, -1), Scalar(int64_t{1}));
}

// ---- Grids and products of vectors ----

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing) {
  KILN_CHECK(!tensors.empty(), "meshgrid expects a non-empty TensorList");
  for (const Tensor& t : tensors) {
    KILN_CHECK(t.dim() <= 1, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ", t);
    KILN_CHECK(t.dtype() == tensors[0].dtype(), "meshgrid expects all tensors to have the same dtype");
  }
  KILN_CHECK(indexing == "ij" || indexing == "xy",
             "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ", indexing);
  // 'xy' is 'ij' with the first two inputs and outputs swapped.
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  std::vector<Tensor> inputs = tensors;
  if (swap) std::swap(inputs[0], inputs[1]);
  Dims shape;
  for (const Tensor& t : inputs) shape.push_back(t.numel());
  std::vector<Tensor> grids;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Dims view(inputs.size(), 1);
    view[i] = shape[i];
    grids.push_back(rec::expand(rec::reshape(inputs[i], view), shape));
  }
  if (swap) std::swap(grids[0], grids[1]);
  return grids;
}

void checkVectors(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) {
    KILN_CHECK(t.dim() == 1, "Expect a 1D vector, but got shape ", shapeString(t.sizes()));
  }
}

Tensor cartesianProd(const std::vector<Tensor>& tensors) {
  checkVectors(tensors);
  // One vector is its own product: torch hands it back, kiln an alias of it.
  if (tensors.size() == 1) return rec::alias(tensors[0]);
  std::vector<Tensor> columns;
  for (const Tensor& grid : meshgrid(tensors, "ij")) columns.push_back(rec::reshape(grid, {-1}));
  return rec::stack(columns, 1);
}

// The index tuples of an r-dim grid of side n that are strictly increasing
// (non-decreasing with replacement): the combinations' positions.
Tensor combinationMask(int64_t n, int64_t r, bool with_replacement) {
  Tensor mask = empty(Dims(static_cast<size_t>(r), n), ScalarType::Bool);
  bool* m = mask.data<bool>();
  std::vector<int64_t> digits(static_cast<size_t>(r), 0);
  for (int64_t flat = 0; flat < mask.numel(); ++flat) {
    bool keep = true;
    for (size_t k = 1; k < digits.size() && keep; ++k) {
      keep = with_replacement ? digits[k - 1] <= digits[k] : digits[k - 1] < digits[k];
    }
    m[flat] = keep;
    for (int64_t k = r - 1; k >= 0 && ++digits[static_cast<size_t>(k)] == n; --k) digits[static_cast<size_t>(k)] = 0;
  }
  return mask;
}

Tensor combinations(const Tensor& self, int64_t r, bool with_replacement) {
  KILN_CHECK(self.dim() == 1, "Expect a 1D vector, but got shape ", shapeString(self.sizes()));
  KILN_CHECK(r >= 0, "Expect a non-negative number, but got ", r);
  if (r == 0) return empty({0}, self.dtype());
  Tensor mask = combinationMask(self.numel(), r, with_replacement);
  std::vector<Tensor> columns;
  for (const Tensor& grid : meshgrid(std::vector<Tensor>(static_cast<size_t>(r), self), "ij")) {
    columns.push_back(rec::maskedSelect(grid, mask));
  }
  return rec::stack(columns, 1);
}

// The blocks padded with zeros to the full width and stacked: cat promotes
// to the common dtype, and the gradient is the pads' and cat's.
Tensor blockDiag(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> blocks;
  int64_t width = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    KILN_CHECK(t.dim() <= 2, "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input ", i, " has ",
               t.dim(), " dimensions");
    blocks.push_back(t.dim() == 2 ? t : rec::reshape(t, {1, t.dim() == 0 ? 1 : t.size(0)}));
    width += blocks.back().size(1);
  }
  if (blocks.empty()) return empty({1, 0}, ScalarType::Float);
  int64_t column = 0;
  for (Tensor& block : blocks) {
    const int64_t cols = block.size(1);
    block = rec::pad(block, {column, width - column - cols});
    column += cols;
  }
  return rec::cat(blocks, 0);
}

Tensor kron(const Tensor& self, const Tensor& other) {
  const int64_t rank = std::max(self.dim(), other.dim());
  const int64_t pad_self = rank - self.dim(), pad_other = rank - other.dim();
  // self's dims at even positions, other's at odd ones: their product is the
  // Kronecker product once adjacent pairs are merged.
  Dims self_view(static_cast<size_t>(2 * rank), 1), other_view(static_cast<size_t>(2 * rank), 1),
      result(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t a = d >= pad_self ? self.size(d - pad_self) : 1;
    const int64_t b = d >= pad_other ? other.size(d - pad_other) : 1;
    self_view[static_cast<size_t>(2 * d)] = a;
    other_view[static_cast<size_t>(2 * d + 1)] = b;
    result[static_cast<size_t>(d)] = a * b;
  }
  return rec::reshape(rec::mul(rec::reshape(self, self_view), rec::reshape(other, other_view)), result);
}

Tensor inner(const Tensor& self, const Tensor& other) {
  if (self.dim() == 0 || other.dim() == 0) return rec::mul(self, other);
  KILN_CHECK(self.size(-1) == other.size(-1),
             "inner() the last dimension must match on both input tensors but got shapes ", shapeString(self.sizes()),
             " and ", shapeString(other.sizes()));
  return rec::tensordot(self, other, {-1}, {-1});
}

// ---- cross ----

Tensor linalgCross(const Tensor& self, const Tensor& other, int64_t dim) {
  KILN_CHECK(self.dim() == other.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  const int64_t d = wrapDim(dim, self.dim());
  KILN_CHECK(self.size(d) == 3 && other.size(d) == 3, "linalg.cross: inputs dimension ", dim,
             " must have length 3. Got ", self.size(d), " and ", other.size(d));
  KILN_CHECK(self.dtype() == other.dtype(), "expected scalar type ", scalarTypeShortName(self.dtype()), " but found ",
             scalarTypeShortName(other.dtype()));
  for (int64_t k = 0; k < self.dim(); ++k) {
    const int64_t a = self.size(k), b = other.size(k);
    KILN_CHECK(a == b || a == 1 || b == 1, "The size of tensor a (", a, ") must match the size of tensor b (", b,
               ") at non-singleton dimension ", k);
  }
  // result[k] = self[k+1] other[k+2] - self[k+2] other[k+1] (indices mod 3).
  Tensor next = longTensor({1, 2, 0}), after = longTensor({2, 0, 1});
  return rec::sub(rec::mul(rec::indexSelect(self, d, next), rec::indexSelect(other, d, after)),
                  rec::mul(rec::indexSelect(self, d, after), rec::indexSelect(other, d, next)));
}

// torch.cross without dim: the first dim of size 3 (1.13's deprecated default).
Tensor cross(const Tensor& self, const Tensor& other, OptInt dim) {
  if (dim) return linalgCross(self, other, *dim);
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (self.size(d) == 3) return linalgCross(self, other, d);
  }
  KILN_ERROR("no dimension of size 3 in input");
}

// ---- Matrix chains ----

// The cheapest order of a chain of matrix products (the classic dynamic
// program over split points): split[i][j] is where the product of matrices
// i..j divides.
std::vector<std::vector<size_t>> chainOrder(const std::vector<Tensor>& matrices) {
  const size_t n = matrices.size();
  std::vector<int64_t> p(n + 1);
  for (size_t i = 0; i < n; ++i) p[i] = matrices[i].size(0);
  p[n] = matrices[n - 1].size(1);
  std::vector<std::vector<int64_t>> cost(n, std::vector<int64_t>(n, 0));
  std::vector<std::vector<size_t>> split(n, std::vector<size_t>(n, 0));
  for (size_t len = 1; len < n; ++len) {
    for (size_t i = 0; i + len < n; ++i) {
      const size_t j = i + len;
      cost[i][j] = std::numeric_limits<int64_t>::max();
      for (size_t k = i; k < j; ++k) {
        const int64_t c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1];
        if (c < cost[i][j]) {
          cost[i][j] = c;
          split[i][j] = k;
        }
      }
    }
  }
  return split;
}

Tensor chainProduct(const std::vector<Tensor>& matrices, const std::vector<std::vector<size_t>>& split, size_t i,
                    size_t j) {
  if (i == j) return matrices[i];
  const size_t k = split[i][j];
  return rec::mm(chainProduct(matrices, split, i, k), chainProduct(matrices, split, k + 1, j));
}

Tensor multiDot(const std::vector<Tensor>& tensors) {
  const size_t n = tensors.size();
  KILN_CHECK(n >= 2, "multi_dot(): expected at least 2 tensors but got ", n);
  const Tensor &first = tensors.front(), &last = tensors.back();
  KILN_CHECK(first.dim() == 1 || first.dim() == 2, "multi_dot(): the first tensor must be 1D or 2D but got ",
             first.dim(), "D");
  KILN_CHECK(last.dim() == 1 || last.dim() == 2, "multi_dot(): the last tensor must be 1D or 2D but got ", last.dim(),
             "D");
  for (size_t i = 1; i + 1 < n; ++i) {
    KILN_CHECK(tensors[i].dim() == 2, "multi_dot(): tensor ", i, " must be 2D but got ", tensors[i].dim(), "D");
  }
  for (size_t i = 1; i < n; ++i) {
    KILN_CHECK(tensors[i].dtype() == first.dtype(),
               "multi_dot(): all tensors must have be the same dtype but tensor 0 is ",
               scalarTypeCppName(first.dtype()), " and tensor ", i, " ", scalarTypeCppName(tensors[i].dtype()));
  }
  // A leading vector is a row, a trailing one a column.
  std::vector<Tensor> matrices = tensors;
  if (first.dim() == 1) matrices.front() = rec::unsqueeze(first, 0);
  if (last.dim() == 1) matrices.back() = rec::unsqueeze(last, 1);
  for (size_t i = 0; i + 1 < n; ++i) {
    KILN_CHECK(matrices[i].size(1) == matrices[i + 1].size(0), "multi_dot(): tensors ", i, " and ", i + 1,
               " with shapes ", shapeString(tensors[i].sizes()), " and ", shapeString(tensors[i + 1].sizes()),
               " cannot be multiplied");
  }
  Tensor result = chainProduct(matrices, chainOrder(matrices), 0, n - 1);
  Dims shape;
  if (first.dim() == 2) shape.push_back(first.size(0));
  if (last.dim() == 2) shape.push_back(last.size(1));
  return shape.size() == 2 ? result : rec::reshape(result, shape);
}

Tensor chainMatmul(const std::vector<Tensor>& matrices) {
  KILN_CHECK(!matrices.empty(), "chain_matmul(): Expected one or more matrices");
  for (const Tensor& m : matrices) {
    KILN_CHECK(m.dim() == 2, "Tensor dimension is ", m.dim(), ", expected 2 instead.");
  }
  if (matrices.size() == 1) return rec::clone(matrices[0]);
  return multiDot(matrices);
}

// ---- einsum ----

// The 52 subscripts, 'A'..'Z' then 'a'..'z' (the implicit output's order).
constexpr int kNumLabels = 52;
constexpr int kEllipsis = -1;

bool isLabel(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
int labelOf(char c) { return c <= 'Z' ? c - 'A' : c - 'a' + 26; }
char labelChar(int label) { return static_cast<char>(label < 26 ? 'A' + label : 'a' + label - 26); }

// One side of an equation term: its labels, kEllipsis where "..." stands.
using Term = std::vector<int>;

// Reads "..." at equation[i] (the caller saw a '.'), else fails with `where`'s message.
void readEllipsis(std::string_view equation, size_t& i, Term& term, const std::string& where) {
  const bool seen = std::find(term.begin(), term.end(), kEllipsis) != term.end();
  KILN_CHECK(!seen, "einsum(): found '.' for ", where, " for which an ellipsis was already found");
  KILN_CHECK(equation.substr(i, 3) == "...", "einsum(): found '.' for ", where, " that is not part of any ellipsis");
  term.push_back(kEllipsis);
  i += 2;
}

std::vector<Term> parseInputs(std::string_view lhs, size_t num_operands) {
  std::vector<Term> terms(1);
  for (size_t i = 0; i < lhs.size(); ++i) {
    const char c = lhs[i];
    if (c == ' ') continue;
    if (c == ',') {
      KILN_CHECK(terms.size() < num_operands, "einsum(): fewer operands were provided than specified in the equation");
      terms.emplace_back();
    } else if (c == '.') {
      readEllipsis(lhs, i, terms.back(), "operand " + std::to_string(terms.size() - 1));
    } else {
      KILN_CHECK(isLabel(c), "einsum(): invalid subscript given at index ", i,
                 " in the equation string, subscripts must be in [a-zA-Z]");
      terms.back().push_back(labelOf(c));
    }
  }
  KILN_CHECK(terms.size() == num_operands, "einsum(): more operands were provided than specified in the equation");
  return terms;
}

Term parseOutput(std::string_view rhs, size_t offset, const std::array<int, kNumLabels>& label_count) {
  Term out;
  std::array<bool, kNumLabels> seen{};
  for (size_t i = 0; i < rhs.size(); ++i) {
    const char c = rhs[i];
    if (c == ' ') continue;
    if (c == '.') {
      readEllipsis(rhs, i, out, "output");
      continue;
    }
    KILN_CHECK(isLabel(c), "einsum(): invalid subscript given at index ", offset + i,
               " in the equation string, subscripts must be in [a-zA-Z]");
    const int label = labelOf(c);
    KILN_CHECK(label_count[static_cast<size_t>(label)] > 0, "einsum(): output subscript ", c,
               " does not appear in the equation for any input operand");
    KILN_CHECK(!seen[static_cast<size_t>(label)], "einsum(): output subscript ", c,
               " appears more than once in the output");
    seen[static_cast<size_t>(label)] = true;
    out.push_back(label);
  }
  return out;
}

// (a * b).sum(sum_dims, keepdim=True) for a and b of one rank, as one bmm:
// the dims both have are the batch, the summed ones the contraction, the
// rest belong to one side. Size-1 dims of both stay size 1.
Tensor sumProductPair(const Tensor& a, const Tensor& b, const Dims& sum_dims) {
  const int64_t rank = a.dim();
  std::vector<bool> summed(static_cast<size_t>(rank), false);
  for (int64_t d : sum_dims) summed[static_cast<size_t>(d)] = true;
  Dims batch, left, right, rest;
  int64_t batch_size = 1, left_size = 1, right_size = 1, sum_size = 1;
  for (int64_t d = 0; d < rank; ++d) {
    const bool in_a = a.size(d) != 1, in_b = b.size(d) != 1;
    if (summed[static_cast<size_t>(d)]) {
      sum_size *= a.size(d);
    } else if (in_a && in_b) {
      batch.push_back(d);
      batch_size *= a.size(d);
    } else if (in_a) {
      left.push_back(d);
      left_size *= a.size(d);
    } else if (in_b) {
      right.push_back(d);
      right_size *= b.size(d);
    } else {
      rest.push_back(d);
    }
  }
  auto order = [](std::initializer_list<const Dims*> parts) {
    Dims out;
    for (const Dims* part : parts) out.insert(out.end(), part->begin(), part->end());
    return out;
  };
  Dims a_order = order({&batch, &left, &sum_dims, &right, &rest});
  Dims b_order = order({&batch, &sum_dims, &right, &left, &rest});
  Tensor a3 = rec::reshape(rec::permute(a, a_order), {batch_size, left_size, sum_size});
  Tensor b3 = rec::reshape(rec::permute(b, b_order), {batch_size, sum_size, right_size});
  Tensor product = rec::bmm(a3, b3);
  // Back to rank dims: batch, left, right, then size 1 for the summed and the rest.
  Dims result_order = order({&batch, &left, &right, &sum_dims, &rest});
  Dims sizes;
  for (int64_t d : result_order) {
    const bool gone = summed[static_cast<size_t>(d)] || std::find(rest.begin(), rest.end(), d) != rest.end();
    sizes.push_back(gone ? 1 : std::max(a.size(d), b.size(d)));
  }
  Dims inverse(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) inverse[static_cast<size_t>(result_order[static_cast<size_t>(k)])] = k;
  return rec::permute(rec::reshape(product, sizes), inverse);
}

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  KILN_CHECK(!operands.empty(), "einsum(): must provide at least one operand");
  const size_t arrow = equation.find("->");
  const std::string_view eq(equation);
  std::vector<Term> terms = parseInputs(eq.substr(0, arrow), operands.size());

  // Each operand's dims against its subscripts; the ellipsis covers the rest.
  int64_t ellipsis_dims = 0;
  bool any_ellipsis = false;
  std::array<int, kNumLabels> label_count{};
  for (size_t i = 0; i < terms.size(); ++i) {
    const bool has_ellipsis = std::find(terms[i].begin(), terms[i].end(), kEllipsis) != terms[i].end();
    const int64_t labels = static_cast<int64_t>(terms[i].size()) - (has_ellipsis ? 1 : 0);
    const int64_t rank = operands[i].dim();
    if (has_ellipsis) {
      KILN_CHECK(labels <= rank, "einsum(): the number of subscripts in the equation (", labels,
                 ") is more than the number of dimensions (", rank, ") for operand ", i);
      ellipsis_dims = std::max(ellipsis_dims, rank - labels);
      any_ellipsis = true;
    } else {
      KILN_CHECK(labels == rank, "einsum(): the number of subscripts in the equation (", labels,
                 ") does not match the number of dimensions (", rank, ") for operand ", i,
                 " and no ellipsis was given");
    }
    for (int label : terms[i]) {
      if (label != kEllipsis) ++label_count[static_cast<size_t>(label)];
    }
  }

  Term output;
  if (arrow != std::string::npos) {
    output = parseOutput(eq.substr(arrow + 2), arrow + 2, label_count);
  } else {
    // Implicit: the ellipsis dims, then the labels seen once, in label order.
    if (any_ellipsis) output.push_back(kEllipsis);
    for (int label = 0; label < kNumLabels; ++label) {
      if (label_count[static_cast<size_t>(label)] == 1) output.push_back(label);
    }
  }

  // The common layout: the output's dims, then the summed labels, then the
  // ellipsis dims when the output drops them (they are summed too).
  std::array<int64_t, kNumLabels> position{};
  position.fill(-1);
  int64_t ellipsis_start = -1, rank = 0;
  for (int label : output) {
    if (label == kEllipsis) {
      ellipsis_start = rank;
      rank += ellipsis_dims;
    } else {
      position[static_cast<size_t>(label)] = rank++;
    }
  }
  const int64_t out_rank = rank;
  for (int label = 0; label < kNumLabels; ++label) {
    if (label_count[static_cast<size_t>(label)] > 0 && position[static_cast<size_t>(label)] < 0) {
      position[static_cast<size_t>(label)] = rank++;
    }
  }
  if (ellipsis_start < 0) {
    ellipsis_start = rank;
    rank += ellipsis_dims;
  }

  // Every operand as a view of rank `rank`: repeated subscripts become
  // diagonals, absent dims size 1.
  std::vector<Tensor> views;
  std::vector<std::vector<bool>> has(operands.size(), std::vector<bool>(static_cast<size_t>(rank), false));
  for (size_t i = 0; i < operands.size(); ++i) {
    Tensor t = operands[i];
    Dims dim_at(static_cast<size_t>(rank), -1);
    int64_t next = 0;
    const int64_t labels = static_cast<int64_t>(terms[i].size()) -
                           (std::find(terms[i].begin(), terms[i].end(), kEllipsis) != terms[i].end() ? 1 : 0);
    for (int label : terms[i]) {
      if (label == kEllipsis) {
        const int64_t covered = operands[i].dim() - labels;
        for (int64_t k = 0; k < covered; ++k) {
          dim_at[static_cast<size_t>(ellipsis_start + ellipsis_dims - covered + k)] = next++;
        }
        continue;
      }
      int64_t& first = dim_at[static_cast<size_t>(position[static_cast<size_t>(label)])];
      if (first < 0) {
        first = next++;
        continue;
      }
      KILN_CHECK(t.size(next) == t.size(first), "einsum(): subscript ", labelChar(label), " is repeated for operand ",
                 i, " but the sizes don't match, ", t.size(next), " != ", t.size(first));
      // The diagonal replaces the first occurrence; the dims after this one move down by one.
      t = rec::movedim(rec::diagonal(t, 0, first, next), -1, first);
    }
    Dims order, sizes;
    for (int64_t p = 0; p < rank; ++p) {
      const int64_t d = dim_at[static_cast<size_t>(p)];
      if (d >= 0) order.push_back(d);
      sizes.push_back(d >= 0 ? t.size(d) : 1);
      has[i][static_cast<size_t>(p)] = d >= 0 && t.size(d) != 1;
    }
    views.push_back(rec::reshape(rec::permute(t, order), sizes));
  }

  // Sizes agree or are 1 (broadcast).
  Dims size(static_cast<size_t>(rank), 1);
  for (size_t i = 0; i < views.size(); ++i) {
    for (int64_t p = 0; p < rank; ++p) {
      const int64_t s = views[i].size(p);
      int64_t& seen = size[static_cast<size_t>(p)];
      if (s == 1 || s == seen) continue;
      if (seen == 1) {
        seen = s;
        continue;
      }
      const bool is_ellipsis = p >= ellipsis_start && p < ellipsis_start + ellipsis_dims;
      KILN_CHECK(is_ellipsis, "einsum(): subscript ",
                 labelChar(static_cast<int>(std::find(position.begin(), position.end(), p) - position.begin())),
                 " has size ", s, " for operand ", i, " which does not broadcast with previously seen size ", seen);
      KILN_ERROR("einsum(): operands do not broadcast with remapped shapes (original->remapped)");
    }
  }

  // Left to right: a summed dim goes once no later operand has it.
  Tensor result = views[0];
  for (size_t i = 1; i < views.size(); ++i) {
    Tensor other = views[i];
    Dims pair_sum, result_only, other_only;
    for (int64_t p = out_rank; p < rank; ++p) {
      bool later = false;
      for (size_t j = i + 1; j < views.size() && !later; ++j) later = has[j][static_cast<size_t>(p)];
      if (later) continue;
      const bool in_result = result.size(p) != 1, in_other = other.size(p) != 1;
      if (in_result && in_other) {
        pair_sum.push_back(p);
      } else if (in_result) {
        result_only.push_back(p);
      } else if (in_other) {
        other_only.push_back(p);
      }
    }
    if (!result_only.empty()) result = rec::sum(result, result_only, true);
    if (!other_only.empty()) other = rec::sum(other, other_only, true);
    result = sumProductPair(result, other, pair_sum);
  }
  if (rank == out_rank) return result;
  if (views.size() > 1) {
    // The summed dims are size 1 by now.
    return rec::reshape(result, Dims(result.sizes().begin(), result.sizes().begin() + out_rank));
  }
  Dims summed(static_cast<size_t>(rank - out_rank));
  std::iota(summed.begin(), summed.end(), out_rank);
  return rec::sum(result, summed, false);
}

// einsum's sublist form, einsum(a, [0, 1], b, [1, 2], [0, 2]): the equation
// spelled from the subscript numbers (0-25 for 'A'-'Z', 26-51 for 'a'-'z'),
// an operand and its list at a time, then the output's list if one is left.
void einsumSublist(Stack& stack, size_t num_inputs) {
  const std::vector<IValue> args(stack.end() - static_cast<std::ptrdiff_t>(num_inputs), stack.end());
  stack.resize(stack.size() - num_inputs);
  auto spell = [](const IValue& list) {
    std::string subscripts;
    for (int64_t n : list.toDimVector()) {
      KILN_CHECK(n >= 0 && n < kNumLabels,
                 "einsum(): subscript in subscript list is not within the valid range [0, 52)");
      subscripts += labelChar(static_cast<int>(n));
    }
    return subscripts;
  };
  std::string equation;
  std::vector<Tensor> operands;
  size_t i = 0;
  for (; i + 1 < args.size(); i += 2) {
    if (i > 0) equation += ',';
    operands.push_back(args[i].toTensor());
    equation += spell(args[i + 1]);
  }
  if (i < args.size()) equation += "->" + spell(args[i]);
  stack.emplace_back(einsum(equation, operands));
}

// ---- Integration ----

void checkNotBool(const Tensor& t, const char* message) { KILN_CHECK(t.dtype() != ScalarType::Bool, message); }

Tensor zerosExcept(const Tensor& y, int64_t dim) {
  Dims sizes = dimsOf(y.sizes());
  sizes.erase(sizes.begin() + dim);
  return zeros(sizes, y.dtype());
}

// y's neighbours summed: y[1:] + y[:-1] along dim.
Tensor neighbourSums(const Tensor& y, int64_t dim) {
  return rec::add(rec::slice(y, dim, 1, std::nullopt), rec::slice(y, dim, 0, -1));
}

// The spacing of x along y's dim: x's differences, x viewed to broadcast with y.
Tensor spacing(const Tensor& y, const Tensor& x, int64_t dim, const char* name) {
  Tensor xv = x;
  if (x.dim() == 1) {
    KILN_CHECK(x.size(0) == y.size(dim), name, ": There must be one `x` value for each sample point");
    Dims shape(static_cast<size_t>(y.dim()), 1);
    shape[static_cast<size_t>(dim)] = x.size(0);
    xv = rec::reshape(x, shape);
  } else if (x.dim() < y.dim()) {
    Dims shape(static_cast<size_t>(y.dim() - x.dim()), 1);
    shape.insert(shape.end(), x.sizes().begin(), x.sizes().end());
    xv = rec::reshape(x, shape);
  }
  return rec::sub(rec::slice(xv, dim, 1, std::nullopt), rec::slice(xv, dim, 0, -1));
}

double realSpacing(const Scalar& dx, const char* name) {
  KILN_CHECK(!dx.isComplex() && !dx.isBoolean(), name, ": Currently, we only support dx as a real number.");
  return dx.toDouble();
}

Tensor trapezoidX(const Tensor& y, const Tensor& x, int64_t dim) {
  const int64_t d = wrapDim(dim, y.dim());
  if (y.size(d) == 0) return zerosExcept(y, d);
  KILN_CHECK(y.dtype() != ScalarType::Bool && x.dtype() != ScalarType::Bool,
             "trapezoid: received a bool input for `x` or `y`, but bool is not supported");
  Tensor dx = spacing(y, x, d, "trapezoid");
  return rec::mul(rec::sum(rec::mul(dx, neighbourSums(y, d)), {d}, false), 0.5);
}

Tensor trapezoidDx(const Tensor& y, double dx, int64_t dim) {
  const int64_t d = wrapDim(dim, y.dim());
  if (y.size(d) == 0) return zerosExcept(y, d);
  checkNotBool(y, "trapezoid: received a bool input for `y`, but bool is not supported");
  Tensor ends = rec::add(rec::select(y, d, 0), rec::select(y, d, -1));
  return rec::mul(rec::sub(rec::sum(y, {d}, false), rec::mul(ends, 0.5)), dx);
}

Tensor cumulativeTrapezoidX(const Tensor& y, const Tensor& x, int64_t dim) {
  const int64_t d = wrapDim(dim, y.dim());
  KILN_CHECK(y.dtype() != ScalarType::Bool && x.dtype() != ScalarType::Bool,
             "cumulative_trapezoid: received a bool input for `x` or `y`, but bool is not supported");
  Tensor dx = spacing(y, x, d, "cumulative_trapezoid");
  return rec::cumsum(rec::mul(rec::mul(dx, 0.5), neighbourSums(y, d)), d);
}

Tensor cumulativeTrapezoidDx(const Tensor& y, const Scalar& dx, int64_t dim) {
  const double step = realSpacing(dx, "cumulative_trapezoid");
  const int64_t d = wrapDim(dim, y.dim());
  checkNotBool(y, "cumulative_trapezoid: received a bool input for `y`, but bool is not supported");
  return rec::cumsum(rec::mul(neighbourSums(y, d), step / 2.), d);
}

// ---- Vandermonde matrices: cumulative products of the repeated x ----

Tensor vander(const Tensor& x, OptInt N, bool increasing) {
  KILN_CHECK(x.dim() == 1, "x must be a one-dimensional tensor.");
  const int64_t n = N.value_or(x.size(0));
  KILN_CHECK(n >= 0, "N must be non-negative.");
  const ScalarType dtype = promoteTypes(x.dtype(), ScalarType::Long);
  if (n == 0) return empty({x.size(0), 0}, dtype);
  Tensor powers = rec::cumprod(
      rec::cat({ones({x.size(0), 1}, dtype), rec::expand(rec::unsqueeze(x, 1), {x.size(0), n - 1})}, 1), 1);
  return increasing ? powers : rec::flip(powers, {1});
}

// out= forms: the result written to out, whose dtype it must match.
Tensor& intoOut(Tensor& out, const Tensor& result, const char* op) { return writeOut(out, result, op); }

}  // namespace

KILN_REGISTER_OPS(
    // repeat_interleave.
    op("aten::repeat_interleave.Tensor(Tensor repeats, *, int? output_size=None) -> Tensor",
       [](const Tensor& repeats, OptInt output_size) { return repeatPositions(repeats, output_size); }),
    op("aten::repeat_interleave.Tensor_out(Tensor repeats, *, int? output_size=None, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& repeats, OptInt output_size, Tensor out) {
         return intoOut(out, repeatPositions(repeats, output_size), "repeat_interleave");
       }),
    op("aten::repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, int? output_size=None) -> "
       "Tensor",
       repeatInterleave),
    op("aten::repeat_interleave.self_int(Tensor self, int repeats, int? dim=None, *, int? output_size=None) -> Tensor",
       repeatInterleaveInt),

    // hsplit / vsplit / dsplit.
    op("aten::hsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]",
       [](const Tensor& self, int64_t sections) { return directionalSplit(self, sections, kHsplit); }),
    op("aten::hsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]",
       [](const Tensor& self, IntArrayRef indices) { return directionalSplit(self, IValue(indices), kHsplit); }),
    op("aten::vsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]",
       [](const Tensor& self, int64_t sections) { return directionalSplit(self, sections, kVsplit); }),
    op("aten::vsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]",
       [](const Tensor& self, IntArrayRef indices) { return directionalSplit(self, IValue(indices), kVsplit); }),
    op("aten::dsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]",
       [](const Tensor& self, int64_t sections) { return directionalSplit(self, sections, kDsplit); }),
    op("aten::dsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]",
       [](const Tensor& self, IntArrayRef indices) { return directionalSplit(self, IValue(indices), kDsplit); }),

    // rot90 and the diagonals.
    op("aten::rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor", rot90),
    op("aten::rot90.out(Tensor self, int k=1, int[] dims=[0, 1], *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t k, IntArrayRef dims, Tensor out) {
         return intoOut(out, rot90(self, k, dims), "rot90");
       }),
    op("aten::diag(Tensor self, int diagonal=0) -> Tensor", diag),
    op("aten::diag.out(Tensor self, int diagonal=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t offset, Tensor out) { return intoOut(out, diag(self, offset), "diag"); }),
    op("aten::diagflat(Tensor self, int offset=0) -> Tensor", diagflat),
    op("aten::diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor", diagEmbed)
        .derivative({"self: grad.diagonal(offset, dim1, dim2)"}),
    op("aten::diag_embed.out(Tensor self, int offset=0, int dim1=-2, int dim2=-1, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2, Tensor out) {
         return intoOut(out, diagEmbed(self, offset, dim1, dim2), "diag_embed");
       }),
    op("aten::diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor",
       diagonalScatter)
        .shape(shapes::likeSelf)
        .derivative({"self: grad.diagonal_scatter(torch.zeros_like(src), offset, dim1, dim2)",
                     "src: grad.diagonal(offset, dim1, dim2)"}),
    op("aten::diagonal_scatter.out(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1, *, Tensor(a!) out) "
       "-> Tensor(a!)",
       [](const Tensor& self, const Tensor& src, int64_t offset, int64_t dim1, int64_t dim2, Tensor out) {
         return intoOut(out, diagonalScatter(self, src, offset, dim1, dim2), "diagonal_scatter");
       }),
    op("aten::as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? "
       "storage_offset=None) -> Tensor",
       asStridedScatter)
        .shape(shapes::likeSelf)
        .derivative({"self: grad.contiguous().as_strided_scatter(torch.zeros_like(src), size, stride, storage_offset)",
                     "src: grad.contiguous().as_strided(size, stride, storage_offset)"}),
    op("aten::as_strided_scatter.out(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? "
       "storage_offset=None, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& src, IntArrayRef size, IntArrayRef stride, OptInt offset, Tensor out) {
         return intoOut(out, asStridedScatter(self, src, size, stride, offset), "as_strided_scatter");
       }),
    op("aten::fill_diagonal_(Tensor(a!) self, Scalar fill_value, bool wrap=False) -> Tensor(a!)",
       [](Tensor self, const Scalar& value, bool wrap) { return fillDiagonal_(self, value, wrap); })
        .derivative({"self: grad.clone().fill_diagonal_(0, wrap)"}),

    // Index copies and reductions.
    op("aten::index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor", indexCopy)
        .shape(shapes::likeSelf)
        .derivative({"self: grad.index_fill(dim, index, 0)",
                     "source: grad.index_select(dim, index) if source.dim() > 0 else grad.index_select(dim, "
                     "index).reshape(source.size())"}),
    op("aten::index_copy.out(Tensor self, int dim, Tensor index, Tensor source, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, Tensor out) {
         return intoOut(out, indexCopy(self, dim, index, source), "index_copy");
       }),
    op("aten::index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)",
       [](Tensor self, int64_t dim, const Tensor& index, const Tensor& source) {
         return indexCopy_(self, dim, index, source);
       }),
    op("aten::masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor", maskedScatter)
        .shape(shapes::maskedFill)
        .derivative({"self: grad.masked_fill(mask, 0)",
                     "source: torch.constant_pad_nd(grad.masked_select(mask), [0, source.numel() - "
                     "grad.masked_select(mask).numel()]).reshape(source.size())"}),
    op("aten::masked_scatter.out(Tensor self, Tensor mask, Tensor source, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& mask, const Tensor& source, Tensor out) {
         return intoOut(out, maskedScatter(self, mask, source), "masked_scatter");
       }),
    op("aten::masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)",
       [](Tensor self, const Tensor& mask, const Tensor& source) { return maskedScatter_(self, mask, source); }),
    op("aten::put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor", put)
        .shape(shapes::likeSelf)
        .derivative({"self: grad if accumulate else grad.put(index, torch.zeros_like(source), False)",
                     "source: grad.take(index).reshape(source.size())"}),
    op("aten::put.out(Tensor self, Tensor index, Tensor source, bool accumulate=False, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate, Tensor out) {
         return intoOut(out, put(self, index, source, accumulate), "put");
       }),
    op("aten::put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> Tensor(a!)",
       [](Tensor self, const Tensor& index, const Tensor& source, bool accumulate) {
         return put_(self, index, source, accumulate);
       }),
    op("aten::index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) "
       "-> Tensor",
       indexReduce)
        .shape(shapes::likeSelf)
        .derivative({kIndexReduceSelfGrad, kIndexReduceSourceGrad}),
    op("aten::index_reduce.out(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool "
       "include_self=True, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
          bool include_self, Tensor out) {
         return intoOut(out, indexReduce(self, dim, index, source, reduce, include_self), "index_reduce");
       }),
    op("aten::index_reduce_(Tensor(a!) self, int dim, Tensor index, Tensor source, str reduce, *, bool "
       "include_self=True) -> Tensor(a!)",
       [](Tensor self, int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
          bool include_self) { return indexReduce_(self, dim, index, source, reduce, include_self); }),
    op("aten::scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool "
       "include_self=True) "
       "-> Tensor",
       scatterReduce)
        .shape(shapes::likeSelf)
        .derivative({kScatterReduceSelfGrad, kScatterReduceSrcGrad}),
    op("aten::scatter_reduce.two_out(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool "
       "include_self=True, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
          bool include_self, Tensor out) {
         return intoOut(out, scatterReduce(self, dim, index, src, reduce, include_self), "scatter_reduce");
       }),
    op("aten::scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, *, bool "
       "include_self=True) -> Tensor(a!)",
       [](Tensor self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
          bool include_self) { return scatterReduce_(self, dim, index, src, reduce, include_self); }),
    op("aten::take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor", takeAlongDim),
    op("aten::take_along_dim.out(Tensor self, Tensor indices, int? dim=None, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& indices, OptInt dim, Tensor out) {
         return intoOut(out, takeAlongDim(self, indices, dim), "take_along_dim");
       }),
    op("aten::one_hot(Tensor self, int num_classes=-1) -> Tensor", oneHot),

    // Grids and products.
    op("aten::meshgrid(Tensor[] tensors) -> Tensor[]",
       [](const std::vector<Tensor>& tensors) { return meshgrid(tensors, "ij"); }),
    op("aten::meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]", meshgrid),
    op("aten::cartesian_prod(Tensor[] tensors) -> Tensor", cartesianProd),
    op("aten::combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor", combinations),
    op("aten::block_diag(Tensor[] tensors) -> Tensor", blockDiag),
    op("aten::block_diag.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, Tensor out) { return intoOut(out, blockDiag(tensors), "block_diag"); }),
    op("aten::kron(Tensor self, Tensor other) -> Tensor", kron),
    op("aten::kron.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return intoOut(out, kron(self, other), "kron"); }),
    op("aten::inner(Tensor self, Tensor other) -> Tensor", inner),
    op("aten::inner.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return intoOut(out, inner(self, other), "inner"); }),
    op("aten::cross(Tensor self, Tensor other, int? dim=None) -> Tensor", cross),
    op("aten::cross.out(Tensor self, Tensor other, int? dim=None, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, OptInt dim, Tensor out) {
         return intoOut(out, cross(self, other, dim), "cross");
       }),
    op("aten::linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor", linalgCross),
    op("aten::linalg_cross.out(Tensor self, Tensor other, *, int dim=-1, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, int64_t dim, Tensor out) {
         return intoOut(out, linalgCross(self, other, dim), "linalg_cross");
       }),
    op("aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
       [](const std::string& equation, const std::vector<Tensor>& tensors, const std::optional<DimVector>&) {
         return einsum(equation, tensors);
       }),
    op("aten::chain_matmul(Tensor[] matrices) -> Tensor", chainMatmul),
    op("aten::chain_matmul.out(Tensor[] matrices, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& matrices, Tensor out) {
         return intoOut(out, chainMatmul(matrices), "chain_matmul");
       }),
    op("aten::linalg_multi_dot(Tensor[] tensors) -> Tensor", multiDot),
    op("aten::linalg_multi_dot.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, Tensor out) { return intoOut(out, multiDot(tensors), "multi_dot"); }),

    // Integration.
    op("aten::trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor", trapezoidX),
    op("aten::trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor",
       [](const Tensor& y, const Scalar& dx, int64_t dim) {
         return trapezoidDx(y, realSpacing(dx, "trapezoid"), dim);
       }),
    op("aten::trapz.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor", trapezoidX),
    op("aten::trapz.dx(Tensor y, *, float dx=1., int dim=-1) -> Tensor", trapezoidDx),
    op("aten::cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor", cumulativeTrapezoidX),
    op("aten::cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor", cumulativeTrapezoidDx),

    // Vandermonde matrices.
    op("aten::vander(Tensor x, int? N=None, bool increasing=False) -> Tensor", vander), );

// A variadic schema: its operation is made per node, which knows its input count.
KILN_REGISTER_SCRIPT_OPS(nodeOp("aten::einsum.sublist(Tensor a, ...) -> Tensor", [](const Node& node) -> Operation {
                           const size_t num_inputs = node.inputs().size();
                           return [num_inputs](Stack& stack) { einsumSublist(stack, num_inputs); };
                         }), );

}  // namespace kiln
