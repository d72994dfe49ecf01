// More of PyTorch 1.13's shape operators, which torch composes of others
// (CompositeImplicitAutograd): broadcast_to, fliplr, flipud, atleast_1d/2d/3d,
// hstack, vstack, dstack, column_stack, row_stack and tile. kiln composes
// them the same way, each inner operator called through runOperator
// (kiln/ops/composite.h), so autograd records the inner operators and their
// gradients are the inner operators' (tests/python/test_autograd_coverage.py
// lists them as COMPOSITE). The inner operators are views, cat and repeat:
// the compositions cost what torch's do.
#include <string>
#include <vector>

#include "kiln/core/op_registration.h"
#include "kiln/ops/composite.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using composite::callTensor;

Tensor unsqueezed(const Tensor& t, int64_t dim) { return callTensor("aten::unsqueeze", "", {t, dim}); }
Tensor reshaped(const Tensor& t, std::vector<int64_t> shape) {
  return callTensor("aten::reshape", "", {t, IValue(shape)});
}

Tensor atleast1d(const Tensor& t) { return t.dim() == 0 ? reshaped(t, {1}) : t; }

Tensor atleast2d(const Tensor& t) {
  if (t.dim() == 0) return reshaped(t, {1, 1});
  if (t.dim() == 1) return unsqueezed(t, 0);
  return t;
}

Tensor atleast3d(const Tensor& t) {
  if (t.dim() == 0) return reshaped(t, {1, 1, 1});
  if (t.dim() == 1) return unsqueezed(unsqueezed(t, 0), -1);
  if (t.dim() == 2) return unsqueezed(t, -1);
  return t;
}

template <typename F>
std::vector<Tensor> each(const std::vector<Tensor>& tensors, F f) {
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(f(t));
  return out;
}

Tensor catOf(const std::vector<Tensor>& tensors, int64_t dim) {
  return callTensor("aten::cat", "", {IValue(tensors), dim});
}

Tensor hstack(const std::vector<Tensor>& tensors) {
  KILN_CHECK(!tensors.empty(), "hstack expects a non-empty TensorList");
  std::vector<Tensor> rs = each(tensors, atleast1d);
  return catOf(rs, rs[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(const std::vector<Tensor>& tensors) {
  KILN_CHECK(!tensors.empty(), "vstack expects a non-empty TensorList");
  return catOf(each(tensors, atleast2d), 0);
}

Tensor dstack(const std::vector<Tensor>& tensors) {
  KILN_CHECK(!tensors.empty(), "dstack expects a non-empty TensorList");
  return catOf(each(tensors, atleast3d), 2);
}

Tensor columnStack(const std::vector<Tensor>& tensors) {
  KILN_CHECK(!tensors.empty(), "column_stack expects a non-empty TensorList");
  return catOf(each(tensors,
                    [](const Tensor& t) {
                      if (t.dim() <= 1) return reshaped(t, {t.numel(), 1});
                      return t;
                    }),
               1);
}

Tensor flipDims(const Tensor& self, std::vector<int64_t> dims) {
  return callTensor("aten::flip", "", {self, IValue(dims)});
}

Tensor fliplr(const Tensor& self) {
  KILN_CHECK(self.dim() >= 2, "Input must be >= 2-d.");
  return flipDims(self, {1});
}

Tensor flipud(const Tensor& self) {
  KILN_CHECK(self.dim() >= 1, "Input must be >= 1-d.");
  return flipDims(self, {0});
}

// tile: repeat, with dims padded with leading ones to self's rank.
Tensor tile(const Tensor& self, IntArrayRef dims) {
  std::vector<int64_t> reps(dims.begin(), dims.end());
  if (static_cast<int64_t>(reps.size()) < self.dim()) reps.insert(reps.begin(), self.dim() - reps.size(), 1);
  return callTensor("aten::repeat", "", {self, IValue(reps)});
}

Tensor broadcastTo(const Tensor& self, IntArrayRef size) {
  return callTensor("aten::expand", "", {self, IValue(size), false});
}

Tensor& stackOut(Tensor& out, const Tensor& result, const char* name) {
  return writeOut(out, result, name, OutDtype::Castable);
}

}  // namespace

KILN_REGISTER_OPS(
    op("aten::broadcast_to(Tensor(a) self, int[] size) -> Tensor(a)",
       [](const Tensor& self, IntArrayRef size) { return broadcastTo(self, size); }),
    op("aten::fliplr(Tensor self) -> Tensor", [](const Tensor& self) { return fliplr(self); }),
    op("aten::flipud(Tensor self) -> Tensor", [](const Tensor& self) { return flipud(self); }),
    op("aten::atleast_1d(Tensor self) -> Tensor", [](const Tensor& self) { return atleast1d(self); }),
    op("aten::atleast_1d.Sequence(Tensor[] tensors) -> Tensor[]",
       [](const std::vector<Tensor>& tensors) { return each(tensors, atleast1d); }),
    op("aten::atleast_2d(Tensor self) -> Tensor", [](const Tensor& self) { return atleast2d(self); }),
    op("aten::atleast_2d.Sequence(Tensor[] tensors) -> Tensor[]",
       [](const std::vector<Tensor>& tensors) { return each(tensors, atleast2d); }),
    op("aten::atleast_3d(Tensor self) -> Tensor", [](const Tensor& self) { return atleast3d(self); }),
    op("aten::atleast_3d.Sequence(Tensor[] tensors) -> Tensor[]",
       [](const std::vector<Tensor>& tensors) { return each(tensors, atleast3d); }),
    op("aten::hstack(Tensor[] tensors) -> Tensor", [](const std::vector<Tensor>& tensors) { return hstack(tensors); }),
    op("aten::hstack.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, Tensor out) { return stackOut(out, hstack(tensors), "hstack"); }),
    op("aten::vstack(Tensor[] tensors) -> Tensor", [](const std::vector<Tensor>& tensors) { return vstack(tensors); }),
    op("aten::vstack.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, Tensor out) { return stackOut(out, vstack(tensors), "vstack"); }),
    op("aten::row_stack(Tensor[] tensors) -> Tensor",
       [](const std::vector<Tensor>& tensors) { return vstack(tensors); }),
    op("aten::row_stack.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, Tensor out) { return stackOut(out, vstack(tensors), "row_stack"); }),
    op("aten::dstack(Tensor[] tensors) -> Tensor", [](const std::vector<Tensor>& tensors) { return dstack(tensors); }),
    op("aten::dstack.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, Tensor out) { return stackOut(out, dstack(tensors), "dstack"); }),
    op("aten::column_stack(Tensor[] tensors) -> Tensor",
       [](const std::vector<Tensor>& tensors) { return columnStack(tensors); }),
    op("aten::column_stack.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, Tensor out) {
         return stackOut(out, columnStack(tensors), "column_stack");
       }),
    op("aten::tile(Tensor self, int[] dims) -> Tensor",
       [](const Tensor& self, IntArrayRef dims) { return tile(self, dims); }), );

}  // namespace kiln
