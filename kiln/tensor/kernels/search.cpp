// searchsorted, bincount, histc and unique over slices (search.h). These
// are index computations over a contiguous copy of their input, element by
// element as torch's CPU kernels run them (so ties, NaNs and rounding at bin
// edges come out the same); they run serially, their cost being one pass or
// one sort.
#include "kiln/tensor/search.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/index.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/reduce.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

// Half and bfloat16 are compared as float32: exact, and the kernels need no
// arithmetic on the storage types.
ScalarType comparisonType(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::BFloat16 ? ScalarType::Float : t;
}

// Whether the first n-1 sizes of the sequences and the values agree.
bool leadingDimsMatch(const Tensor& boundaries, const Tensor& values) {
  if (boundaries.dim() != values.dim()) return false;
  for (int64_t d = 0; d + 1 < boundaries.dim(); ++d) {
    if (boundaries.size(d) != values.size(d)) return false;
  }
  return true;
}

// torch's lower/upper bound over [0, n): the first position whose element is
// not < (right: not <=) the value. `at(i)` reads the i-th smallest element.
template <typename T, typename At>
int64_t bound(T value, int64_t n, bool right, const At& at) {
  int64_t start = 0, end = n;
  while (start < end) {
    const int64_t mid = start + ((end - start) >> 1);
    const T element = at(mid);
    const bool before = right ? !(element > value) : !(element >= value);
    if (before) {
      start = mid + 1;
    } else {
      end = mid;
    }
  }
  return start;
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    const std::optional<std::string>& side, const std::optional<Tensor>& sorter) {
  if (side) {
    KILN_CHECK(*side == "left" || *side == "right", "torch.searchsorted(): side can only be 'left' or 'right' but got ",
               *side);
    KILN_CHECK(!right || *side == "right",
               "torch.searchsorted(): side and right can't be set to opposites, got side of ", *side,
               " while right was True");
    right = *side == "right";
  }
  const bool sorted_by = sorter && sorter->defined();
  if (sorted_by) {
    KILN_CHECK(sorter->sizes() == sorted_sequence.sizes(),
               "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor ",
               shapeString(sorted_sequence.sizes()), "and got sorter tensor ", shapeString(sorter->sizes()));
    KILN_CHECK(sorter->dtype() == ScalarType::Long,
               "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype ",
               scalarTypeShortName(sorter->dtype()));
  }
  KILN_CHECK(values.dim() > 0 || sorted_sequence.dim() == 1,
             "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we "
             "got boundaries tensor dim(",
             sorted_sequence.dim(), ") and input value's dim(", values.dim(), ") numel(", values.numel(), ")");
  KILN_CHECK(sorted_sequence.dim() != 0,
             "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
  KILN_CHECK(sorted_sequence.dim() == 1 || leadingDimsMatch(sorted_sequence, values),
             "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
             "tensor and input value tensor must match, but we got boundaries tensor ",
             shapeString(sorted_sequence.sizes()), " and input value tensor ", shapeString(values.sizes()));

  const ScalarType common = comparisonType(resultType(sorted_sequence, values));
  const Tensor seq = contiguous(to(sorted_sequence, common));
  const Tensor vals = contiguous(to(values, common));
  const Tensor order = sorted_by ? contiguous(*sorter) : Tensor();
  const int64_t length = seq.size(-1);
  const int64_t row_count = sorted_sequence.dim() == 1 ? 1 : seq.numel() / std::max<int64_t>(length, 1);
  const int64_t per_row = sorted_sequence.dim() == 1 ? vals.numel() : (vals.dim() ? vals.size(-1) : 1);
  if (sorted_by) {
    const int64_t* o = order.data<int64_t>();
    for (int64_t i = 0; i < order.numel(); ++i) {
      KILN_CHECK_INDEX(o[i] >= 0 && o[i] < length, "torch.searchsorted(): sorter index ", o[i],
                       " is out of bounds for a sequence of length ", length);
    }
  }

  Tensor result = empty(values.sizes(), ScalarType::Long);
  int64_t* out = result.data<int64_t>();
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(common, "searchsorted", [&] {
    using T = scalar_t;
    const T* s = seq.data<T>();
    const T* v = vals.data<T>();
    const int64_t* o = sorted_by ? order.data<int64_t>() : nullptr;
    for (int64_t i = 0; i < vals.numel(); ++i) {
      const int64_t row = row_count == 1 ? 0 : i / per_row;
      const T* line = s + row * length;
      const int64_t* line_order = o ? o + row * length : nullptr;
      out[i] = line_order ? bound(v[i], length, right, [&](int64_t k) { return line[line_order[k]]; })
                          : bound(v[i], length, right, [&](int64_t k) { return line[k]; });
    }
  });
  return out_int32 ? to(result, ScalarType::Int) : result;
}

Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  KILN_CHECK(minlength >= 0, "minlength should be >= 0");
  KILN_CHECK(isIntegralType(self.dtype(), false), "\"bincount_cpu\" not implemented for '",
             scalarTypeShortName(self.dtype()), "'");
  if (self.dim() == 1 && self.numel() == 0) return zeros({minlength}, ScalarType::Long);
  const Tensor input = contiguous(to(self, ScalarType::Long));
  const int64_t* in = input.data<int64_t>();
  const int64_t* smallest = std::min_element(in, in + input.numel());
  KILN_CHECK(self.dim() == 1 && *smallest >= 0, "bincount only supports 1-d non-negative integral inputs.");
  const bool weighted = weights && weights->defined();
  KILN_CHECK(!weighted || (weights->dim() == 1 && weights->size(0) == self.size(0)),
             "weights should be 1-d and have the same length as input");
  const int64_t bins = std::max(*std::max_element(in, in + input.numel()) + 1, minlength);
  if (!weighted) {
    Tensor counts = zeros({bins}, ScalarType::Long);
    int64_t* c = counts.data<int64_t>();
    for (int64_t i = 0; i < input.numel(); ++i) ++c[in[i]];
    return counts;
  }
  // torch sums float32 weights in float32 and every other dtype in float64.
  const ScalarType sum_type = weights->dtype() == ScalarType::Float ? ScalarType::Float : ScalarType::Double;
  const Tensor w = contiguous(to(*weights, sum_type));
  Tensor sums = zeros({bins}, sum_type);
  KILN_DISPATCH_FLOATING_TYPES(sum_type, "bincount", [&] {
    const scalar_t* wp = w.data<scalar_t>();
    scalar_t* out = sums.data<scalar_t>();
    for (int64_t i = 0; i < input.numel(); ++i) out[in[i]] += wp[i];
  });
  return sums;
}

Tensor histc(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  KILN_CHECK(self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double,
             "\"histogram_cpu\" not implemented for '", scalarTypeShortName(self.dtype()), "'");
  KILN_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  double leftmost = min.toDouble(), rightmost = max.toDouble();
  if (leftmost == rightmost && self.numel() > 0) {
    leftmost = kiln::min(self).item().toDouble();
    rightmost = kiln::max(self).item().toDouble();
  }
  if (leftmost == rightmost) {
    leftmost -= 1;
    rightmost += 1;
  }
  KILN_CHECK(std::isfinite(leftmost) && std::isfinite(rightmost), "torch.histc: range of [", leftmost, ", ", rightmost,
             "] is not finite");
  KILN_CHECK(leftmost < rightmost, "torch.histc: max must be larger than min");
  Tensor hist = zeros({bins}, self.dtype());
  const Tensor input = contiguous(self);
  KILN_DISPATCH_FLOATING_TYPES(self.dtype(), "histc", [&] {
    using T = scalar_t;
    // The outer edges in self's dtype, and the bin of an element by linear
    // interpolation between them in that dtype, as torch computes it.
    const T left = static_cast<T>(leftmost), right = static_cast<T>(rightmost);
    const T* in = input.data<T>();
    T* out = hist.data<T>();
    for (int64_t i = 0; i < input.numel(); ++i) {
      const T x = in[i];
      // Outside the edges, or NaN (torch's index would be undefined): not counted.
      if (!(x >= left && x <= right)) continue;
      int64_t pos = static_cast<int64_t>((x - left) * static_cast<T>(bins) / (right - left));
      // The last edge belongs to the last bin.
      pos = std::min(pos, bins - 1);
      out[pos] += T(1);
    }
  });
  return hist;
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& self, std::optional<int64_t> dim, bool consecutive,
                                          bool return_inverse, bool return_counts) {
  // Slices as rows: [count, width] over a contiguous copy with `dim` moved first.
  Tensor rows;
  int64_t count = 0, width = 1;
  if (dim) {
    const int64_t d = wrapDim(*dim, self.dim());
    count = self.size(d);
    const int64_t zero_dims = std::count(self.sizes().begin(), self.sizes().end(), int64_t{0});
    if (count == 0) {
      KILN_CHECK(zero_dims == 1, "Number of zero sized dimensions is more than one, so unique cannot be applied ");
      return {contiguous(self), empty({0}, ScalarType::Long), empty({0}, ScalarType::Long)};
    }
    KILN_CHECK(zero_dims == 0, "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
    rows = contiguous(movedim(self, DimVector{d}, DimVector{0}));
    width = self.numel() / count;
    rows = reshape(rows, DimVector{count, width});
  } else {
    count = self.numel();
    rows = reshape(contiguous(self), DimVector{count, 1});
  }
  const Tensor keys = contiguous(to(rows, comparisonType(self.dtype())));

  // `order` lists the rows in the order groups are formed: as they come, or
  // sorted lexicographically with torch's std::sort comparator (whose steps
  // std::sort takes the same way here, so even NaN rows land where torch's do).
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::vector<int64_t> group_of(static_cast<size_t>(count));
  std::vector<int64_t> representatives, counts;
  KILN_DISPATCH_ALL_TYPES_AND_BOOL(keys.dtype(), "unique", [&] {
    using T = scalar_t;
    const T* k = keys.data<T>();
    auto row = [&](int64_t r) { return k + r * width; };
    if (!consecutive) {
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const T* ra = row(a);
        const T* rb = row(b);
        for (int64_t i = 0; i < width; ++i) {
          if (ra[i] < rb[i]) return true;
          if (ra[i] > rb[i]) return false;
        }
        return false;
      });
    }
    // A row joins the current group when it equals the group's first row
    // element for element (NaN equals nothing, as in torch).
    for (int64_t r : order) {
      const bool same = !representatives.empty() && std::equal(row(r), row(r) + width, row(representatives.back()));
      if (!same) {
        representatives.push_back(r);
        counts.push_back(0);
      }
      ++counts.back();
      group_of[static_cast<size_t>(r)] = static_cast<int64_t>(representatives.size()) - 1;
    }
  });

  auto longTensor = [](const std::vector<int64_t>& v) {
    Tensor t = empty({static_cast<int64_t>(v.size())}, ScalarType::Long);
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return t;
  };
  const Tensor picked = indexSelect(rows, 0, longTensor(representatives));
  if (!dim) {
    return {reshape(picked, DimVector{picked.size(0)}),
            return_inverse ? reshape(longTensor(group_of), self.sizes()) : empty({0}, ScalarType::Long),
            return_counts ? longTensor(counts) : empty({0}, ScalarType::Long)};
  }
  const int64_t d = wrapDim(*dim, self.dim());
  DimVector moved_sizes{picked.size(0)};
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i != d) moved_sizes.push_back(self.size(i));
  }
  Tensor values = contiguous(movedim(reshape(picked, moved_sizes), DimVector{0}, DimVector{d}));
  return {values, longTensor(group_of), longTensor(counts)};
}

}  // namespace kiln
