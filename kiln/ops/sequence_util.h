#pragma once
// Python's indexing and slicing arithmetic, shared by the list and string
// operators.
#include <cstdint>
#include <limits>
#include <optional>

#include "kiln/util/error.h"

namespace kiln::detail {

// `seq[index]`'s position: negative indices count from the end; out of range
// is an IndexError with Python's text ("list index out of range").
inline size_t checkedIndex(int64_t index, size_t size, const char* what) {
  int64_t n = static_cast<int64_t>(size);
  int64_t i = index < 0 ? index + n : index;
  KILN_CHECK_INDEX(i >= 0 && i < n, what, " index out of range");
  return static_cast<size_t>(i);
}

// The elements of `seq[start:end:step]`: the first position, and how many.
struct SliceRange {
  int64_t start;
  int64_t count;
};

// CPython's PySlice_Unpack and PySlice_AdjustIndices (which 1.13 copies): a
// missing start or end, or the largest int (what `slice(None)` passes), means
// the sequence's edge in the direction of `step`; out-of-range bounds clamp.
inline SliceRange sliceRange(int64_t length, std::optional<int64_t> start_arg, std::optional<int64_t> end_arg,
                             int64_t step) {
  KILN_CHECK(step != 0, "List slice should have non-zero step");
  KILN_CHECK(step != std::numeric_limits<int64_t>::min(), "List slice step is out of bounds");
  auto clamp = [&](std::optional<int64_t> bound, int64_t missing) {
    if (!bound || *bound == std::numeric_limits<int64_t>::max()) return missing;
    int64_t b = *bound;
    if (b < 0) {
      b += length;
      if (b < 0) b = step < 0 ? -1 : 0;
    } else if (b >= length) {
      b = step < 0 ? length - 1 : length;
    }
    return b;
  };
  int64_t start = clamp(start_arg, step < 0 ? length - 1 : 0);
  int64_t end = clamp(end_arg, step < 0 ? -1 : length);
  int64_t count = 0;
  if (step < 0 && end < start) count = (start - end - 1) / -step + 1;
  if (step > 0 && start < end) count = (end - start - 1) / step + 1;
  return {start, count};
}

}  // namespace kiln::detail
