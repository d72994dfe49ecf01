#pragma once
// The scatter-into-a-view operators (select_scatter, slice_scatter,
// diagonal_scatter, as_strided_scatter): a copy of self with one view of the
// copy set to src, which must have that view's sizes.
#include <algorithm>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/shape.h"

namespace kiln {

// `part(out)` is the view of the copy `out` that takes src.
template <typename Part>
Tensor scatterInto(const Tensor& self, const Tensor& src, const Part& part) {
  Tensor out = clone(self, MemoryFormat::Preserve);
  Tensor target = part(out);
  IntArrayRef want = target.sizes(), got = src.sizes();
  KILN_CHECK(want.size() == got.size() && std::equal(want.begin(), want.end(), got.begin()),
             "expected src to have a size equal to the slice of self. src size = ", shapeString(got),
             ", slice size = ", shapeString(want));
  copy_(target, src);
  return out;
}

}  // namespace kiln
