// PyTorch 1.13's copying forms of the view operators (diagonal_copy,
// permute_copy, ..., what functionalization turns views into), the internal
// names of views and stack (_reshape_alias, _unsafe_view, _stack), the
// functional forms of zero_ and fill_, is_same_size, the view
// operators' backward operators (select_backward, slice_backward,
// diagonal_backward, index_select_backward, gather_backward,
// masked_select_backward, trace_backward) and a few compositions torch
// writes over other operators (addr, addbmm, concatenate, sum_to_size;
// linalg_matmul, linalg_diagonal and linalg_vecdot are in linalg_more_ops.cpp).
//
// Each is composed of other operators through runOperator
// (kiln/ops/composite.h): a copy is its view operator, run on the same
// arguments, then a contiguous clone; a backward operator scatters the
// gradient into zeros with the matching *_scatter or index operator. Autograd
// records the inner operators, so their gradients (and second derivatives)
// are those operators' own.
#include <string>
#include <vector>

#include "kiln/core/op_registration.h"
#include "kiln/ops/composite.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using composite::callTensor;
using Dims = std::vector<int64_t>;

Tensor contiguousClone(const Tensor& t) {
  return callTensor("aten::clone", "", {t, static_cast<int64_t>(MemoryFormat::Contiguous)});
}

// The kernel of `view`'s copying form: the view operator runs on the
// arguments as they are on the stack (the schemas agree), then each result
// is cloned. With `out`, the last argument is the out= tensor (or list).
Operation copyOfView(const char* view, const char* overload, bool out) {
  return [view, overload, out](Stack& stack) {
    IValue destination;
    if (out) {
      destination = std::move(stack.back());
      stack.pop_back();
    }
    const OperatorPtr op = findOperator(Symbol::fromQualString(view), overload);
    KILN_INTERNAL_ASSERT(op, "no operator ", view, ".", overload);
    const size_t base = stack.size() - op->schema().arguments().size();
    runOperator(*op, stack);
    IValue result = std::move(stack.back());
    stack.resize(base);
    if (result.isTensor()) {
      Tensor copy = contiguousClone(result.toTensor());
      if (!out) {
        stack.emplace_back(std::move(copy));
        return;
      }
      Tensor target = destination.toTensor();
      stack.emplace_back(writeOut(target, copy, view));
      return;
    }
    std::vector<Tensor> copies;
    for (const Tensor& part : result.toTensorVector()) copies.push_back(contiguousClone(part));
    if (!out) {
      stack.emplace_back(copies);
      return;
    }
    std::vector<Tensor> targets = destination.toTensorVector();
    KILN_CHECK(targets.size() == copies.size(), view, ": expected ", copies.size(), " out tensors, got ",
               targets.size());
    for (size_t i = 0; i < copies.size(); ++i) writeOut(targets[i], copies[i], view);
  };
}

// ---- The view operators' backward operators: the gradient scattered into zeros ----

Tensor zerosOf(IntArrayRef sizes, const Tensor& like) { return zeros(sizes, like.dtype()); }

Tensor selectBackward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t index) {
  return callTensor("aten::select_scatter", "", {zerosOf(sizes, grad), grad, dim, index});
}

Tensor sliceBackward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return callTensor("aten::slice_scatter", "", {zerosOf(sizes, grad), grad, dim, start, end, step});
}

Tensor diagonalBackward(const Tensor& grad, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2) {
  return callTensor("aten::diagonal_scatter", "", {zerosOf(sizes, grad), grad, offset, dim1, dim2});
}

Tensor indexSelectBackward(const Tensor& grad, IntArrayRef sizes, int64_t dim, const Tensor& index) {
  return callTensor("aten::index_add", "", {zerosOf(sizes, grad), dim, index, grad, int64_t{1}});
}

Tensor gatherBackward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index, bool) {
  return callTensor("aten::scatter_add", "", {zerosOf(self.sizes(), grad), dim, index, grad});
}

// The gradient of masked_select: grad's elements where mask (broadcast with input) is set.
Tensor maskedSelectBackward(const Tensor& grad, const Tensor& input, const Tensor& mask) {
  return callTensor("aten::masked_scatter", "",
                    {zerosOf(broadcastShapes(input.sizes(), mask.sizes()), grad), mask, grad});
}

Tensor traceBackward(const Tensor& grad, IntArrayRef sizes) {
  KILN_CHECK(sizes.size() == 2, "expected matrix input");
  Tensor diagonal = callTensor("aten::expand", "", {grad, IValue(Dims{std::min(sizes[0], sizes[1])}), false});
  return diagonalBackward(diagonal, sizes, 0, 0, 1);
}

// ---- Compositions ----

// beta * self + alpha * product, where beta == 0 ignores self (NaN included),
// as torch's addmm family does; self must broadcast to the product's shape.
Tensor scaledSum(const Tensor& self, const Tensor& product, const Scalar& beta, const Scalar& alpha) {
  expand(self, product.sizes());  // raises unless self broadcasts to the product
  Tensor scaled = callTensor("aten::mul", "Scalar", {product, alpha});
  if (!beta.isComplex() && beta.toDouble() == 0) return scaled;
  return callTensor("aten::add", "Tensor", {callTensor("aten::mul", "Scalar", {self, beta}), scaled, int64_t{1}});
}

Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  KILN_CHECK(vec1.dim() == 1 && vec2.dim() == 1, "addr: Expected 1-D argument vec", vec1.dim() == 1 ? 2 : 1,
             ", but got ", vec1.dim() == 1 ? vec2.dim() : vec1.dim(), "-D");
  return scaledSum(self, callTensor("aten::outer", "", {vec1, vec2}), beta, alpha);
}

// The sum of the batch's products as one matrix product: [n, b*k] @ [b*k, m].
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  KILN_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  KILN_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  KILN_CHECK(batch1.size(0) == batch2.size(0), "batch1 and batch2 must have same number of batches, got ",
             batch1.size(0), " and ", batch2.size(0));
  KILN_CHECK(batch1.size(2) == batch2.size(1), "Incompatible matrix sizes for bmm (", batch1.size(1), "x",
             batch1.size(2), " and ", batch2.size(1), "x", batch2.size(2), ")");
  const int64_t b = batch1.size(0), n = batch1.size(1), k = batch1.size(2), m = batch2.size(2);
  Tensor left = callTensor("aten::reshape", "",
                           {callTensor("aten::permute", "", {batch1, IValue(Dims{1, 0, 2})}), IValue(Dims{n, b * k})});
  Tensor right = callTensor("aten::reshape", "", {batch2, IValue(Dims{b * k, m})});
  return scaledSum(self, callTensor("aten::mm", "", {left, right}), beta, alpha);
}

// self = f(self, ...): the composition, copied into self (a recorded copy_).
Tensor& assign(Tensor& self, const Tensor& value) {
  callTensor("aten::copy_", "", {self, value, false});
  return self;
}

// The sum of self's broadcast dims: self reduced to `size`, which must expand to self's shape.
Tensor sumToSize(const Tensor& self, IntArrayRef size) {
  const int64_t lead = self.dim() - static_cast<int64_t>(size.size());
  bool expandable = lead >= 0;
  Dims summed;
  for (int64_t d = 0; expandable && d < self.dim(); ++d) {
    if (d < lead) {
      summed.push_back(d);
      continue;
    }
    const int64_t want = size[static_cast<size_t>(d - lead)];
    expandable = want == self.size(d) || want == 1;
    if (want == 1 && self.size(d) != 1) summed.push_back(d);
  }
  KILN_CHECK(expandable, "size {", shapeString(size), "} is not expandable to size {", shapeString(self.sizes()), "}.");
  if (summed.empty()) return self;
  Tensor reduced = callTensor("aten::sum", "dim_IntList", {self, IValue(summed), true, IValue()});
  return callTensor("aten::reshape", "", {reduced, IValue(size)});
}

Tensor& intoOut(Tensor& out, const Tensor& result, const char* op) { return writeOut(out, result, op); }

// The functional forms of zero_ and fill_: a copy of self so filled.
Tensor filledLike(const Tensor& self, const Scalar& value) { return full(self.sizes(), value, self.dtype()); }

Tensor filledLike(const Tensor& self, const Tensor& value) {
  KILN_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ", value.dim(),
             " dimensions.");
  return filledLike(self, value.item());
}

}  // namespace

KILN_REGISTER_OPS(
    // Copies of views.
    stackOp("aten::alias_copy(Tensor self) -> Tensor", copyOfView("aten::alias", "", false)),
    stackOp("aten::alias_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", copyOfView("aten::alias", "", true)),
    stackOp("aten::as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> "
            "Tensor",
            copyOfView("aten::as_strided", "", false)),
    stackOp("aten::as_strided_copy.out(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None, *, "
            "Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::as_strided", "", true)),
    stackOp("aten::detach_copy(Tensor self) -> Tensor", copyOfView("aten::detach", "", false)),
    stackOp("aten::detach_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::detach", "", true)),
    stackOp("aten::diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor",
            copyOfView("aten::diagonal", "", false)),
    stackOp("aten::diagonal_copy.out(Tensor self, int offset=0, int dim1=0, int dim2=1, *, Tensor(a!) out) -> "
            "Tensor(a!)",
            copyOfView("aten::diagonal", "", true)),
    stackOp("aten::expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor",
            copyOfView("aten::expand", "", false)),
    stackOp("aten::expand_copy.out(Tensor self, SymInt[] size, *, bool implicit=False, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::expand", "", true)),
    stackOp("aten::permute_copy(Tensor self, int[] dims) -> Tensor", copyOfView("aten::permute", "", false)),
    stackOp("aten::permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::permute", "", true)),
    stackOp("aten::select_copy.int(Tensor self, int dim, int index) -> Tensor",
            copyOfView("aten::select", "int", false)),
    stackOp("aten::select_copy.int_out(Tensor self, int dim, int index, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::select", "int", true)),
    stackOp("aten::slice_copy.Tensor(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> "
            "Tensor",
            copyOfView("aten::slice", "Tensor", false)),
    stackOp("aten::slice_copy.Tensor_out(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt "
            "step=1, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::slice", "Tensor", true)),
    stackOp("aten::split_copy.Tensor(Tensor self, int split_size, int dim=0) -> Tensor[]",
            copyOfView("aten::split", "Tensor", false)),
    stackOp("aten::split_copy.Tensor_out(Tensor self, int split_size, int dim=0, *, Tensor(a!)[] out) -> ()",
            copyOfView("aten::split", "Tensor", true)),
    stackOp("aten::split_with_sizes_copy(Tensor self, int[] split_sizes, int dim=0) -> Tensor[]",
            copyOfView("aten::split_with_sizes", "", false)),
    stackOp("aten::split_with_sizes_copy.out(Tensor self, int[] split_sizes, int dim=0, *, Tensor(a!)[] out) -> ()",
            copyOfView("aten::split_with_sizes", "", true)),
    stackOp("aten::squeeze_copy(Tensor self) -> Tensor", copyOfView("aten::squeeze", "", false)),
    stackOp("aten::squeeze_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::squeeze", "", true)),
    stackOp("aten::squeeze_copy.dim(Tensor self, int dim) -> Tensor", copyOfView("aten::squeeze", "dim", false)),
    stackOp("aten::squeeze_copy.dim_out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::squeeze", "dim", true)),
    stackOp("aten::t_copy(Tensor self) -> Tensor", copyOfView("aten::t", "", false)),
    stackOp("aten::t_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", copyOfView("aten::t", "", true)),
    stackOp("aten::transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor",
            copyOfView("aten::transpose", "int", false)),
    stackOp("aten::transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::transpose", "int", true)),
    stackOp("aten::unbind_copy.int(Tensor self, int dim=0) -> Tensor[]", copyOfView("aten::unbind", "int", false)),
    stackOp("aten::unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()",
            copyOfView("aten::unbind", "int", true)),
    stackOp("aten::unfold_copy(Tensor self, int dimension, int size, int step) -> Tensor",
            copyOfView("aten::unfold", "", false)),
    stackOp("aten::unfold_copy.out(Tensor self, int dimension, int size, int step, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::unfold", "", true)),
    stackOp("aten::unsqueeze_copy(Tensor self, int dim) -> Tensor", copyOfView("aten::unsqueeze", "", false)),
    stackOp("aten::unsqueeze_copy.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::unsqueeze", "", true)),
    stackOp("aten::view_copy(Tensor self, SymInt[] size) -> Tensor", copyOfView("aten::view", "", false)),
    stackOp("aten::view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::view", "", true)),
    stackOp("aten::view_copy.dtype(Tensor self, ScalarType dtype) -> Tensor", copyOfView("aten::view", "dtype", false)),
    stackOp("aten::view_copy.dtype_out(Tensor self, ScalarType dtype, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::view", "dtype", true)),

    stackOp("aten::view_as_real_copy(Tensor self) -> Tensor", copyOfView("aten::view_as_real", "", false)),
    stackOp("aten::view_as_real_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::view_as_real", "", true)),
    stackOp("aten::view_as_complex_copy(Tensor self) -> Tensor", copyOfView("aten::view_as_complex", "", false)),
    stackOp("aten::view_as_complex_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::view_as_complex", "", true)),
    // The internal view and stack names torch's decompositions use.
    op("aten::_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> Tensor(a)",
       [](const Tensor& self, IntArrayRef size, IntArrayRef stride) {
         return callTensor("aten::as_strided", "", {self, IValue(size), IValue(stride), IValue()});
       }),
    stackOp("aten::_reshape_alias_copy(Tensor self, SymInt[] size, SymInt[] stride) -> Tensor",
            copyOfView("aten::_reshape_alias", "", false)),
    stackOp("aten::_reshape_alias_copy.out(Tensor self, SymInt[] size, SymInt[] stride, *, Tensor(a!) out) -> "
            "Tensor(a!)",
            copyOfView("aten::_reshape_alias", "", true)),
    stackOp("aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor", copyOfView("aten::view", "", false)),
    stackOp("aten::_unsafe_view.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
            copyOfView("aten::view", "", true)),
    op("aten::_stack(Tensor[] tensors, int dim=0) -> Tensor",
       [](const std::vector<Tensor>& tensors, int64_t dim) {
         return callTensor("aten::stack", "", {tensors, dim});
       }),
    op("aten::_stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, int64_t dim, Tensor out) {
         return intoOut(out, callTensor("aten::stack", "", {tensors, dim}), "_stack");
       }),
    op("aten::zero(Tensor self) -> Tensor", [](const Tensor& self) { return filledLike(self, Scalar(int64_t{0})); })
        .shape(shapes::likeSelf)
        .derivative({"self: torch.zeros_like(grad)"}),
    op("aten::zero.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return intoOut(out, filledLike(self, Scalar(int64_t{0})), "zero"); }),
    op("aten::fill.Scalar(Tensor self, Scalar value) -> Tensor",
       [](const Tensor& self, const Scalar& value) { return filledLike(self, value); })
        .shape(shapes::likeSelf)
        .derivative({"self: torch.zeros_like(grad)"}),
    op("aten::fill.Scalar_out(Tensor self, Scalar value, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Scalar& value, Tensor out) {
         return intoOut(out, filledLike(self, value), "fill");
       }),
    op("aten::fill.Tensor(Tensor self, Tensor value) -> Tensor",
       [](const Tensor& self, const Tensor& value) { return filledLike(self, value); })
        .shape(shapes::likeSelf)
        .derivative({"self: torch.zeros_like(grad)", "value: grad.sum()"}),
    op("aten::fill.Tensor_out(Tensor self, Tensor value, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& value, Tensor out) {
         return intoOut(out, filledLike(self, value), "fill");
       }),
    op("aten::is_same_size(Tensor self, Tensor other) -> bool",
       [](const Tensor& self, const Tensor& other) { return self.sizes() == other.sizes(); }),

    // Backward operators of the views.
    op("aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, int index) -> Tensor", selectBackward),
    op("aten::select_backward.out(Tensor grad_output, SymInt[] input_sizes, int dim, int index, *, Tensor(a!) out) "
       "-> Tensor(a!)",
       [](const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t index, Tensor out) {
         return intoOut(out, selectBackward(grad, sizes, dim, index), "select_backward");
       }),
    op("aten::slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt "
       "step) -> Tensor",
       sliceBackward),
    op("aten::slice_backward.out(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt "
       "step, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t start, int64_t end, int64_t step, Tensor out) {
         return intoOut(out, sliceBackward(grad, sizes, dim, start, end, step), "slice_backward");
       }),
    op("aten::diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor",
       diagonalBackward),
    op("aten::diagonal_backward.out(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2, *, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& grad, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2, Tensor out) {
         return intoOut(out, diagonalBackward(grad, sizes, offset, dim1, dim2), "diagonal_backward");
       }),
    op("aten::index_select_backward(Tensor grad, int[] self_sizes, int dim, Tensor index) -> Tensor",
       indexSelectBackward),
    op("aten::gather_backward(Tensor grad, Tensor self, int dim, Tensor index, bool sparse_grad) -> Tensor",
       gatherBackward),
    op("aten::masked_select_backward(Tensor grad, Tensor input, Tensor mask) -> Tensor", maskedSelectBackward),
    op("aten::trace_backward(Tensor grad, int[] sizes) -> Tensor", traceBackward),

    // Compositions.
    op("aten::addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", addr)
        .shape(shapes::addr),
    op("aten::addr.out(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha,
          Tensor out) { return intoOut(out, addr(self, vec1, vec2, beta, alpha), "addr"); }),
    op("aten::addr_(Tensor(a!) self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
         return assign(self, addr(self, vec1, vec2, beta, alpha));
       }),
    op("aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", addbmm)
        .shape(shapes::addbmm),
    op("aten::addbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) "
       "out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha,
          Tensor out) { return intoOut(out, addbmm(self, batch1, batch2, beta, alpha), "addbmm"); }),
    op("aten::addbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
         return assign(self, addbmm(self, batch1, batch2, beta, alpha));
       }),
    op("aten::concatenate(Tensor[] tensors, int dim=0) -> Tensor",
       [](const std::vector<Tensor>& tensors, int64_t dim) {
         return callTensor("aten::cat", "", {tensors, dim});
       }),
    op("aten::concatenate.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
       [](const std::vector<Tensor>& tensors, int64_t dim, Tensor out) {
         return intoOut(out, callTensor("aten::cat", "", {tensors, dim}), "concatenate");
       }),
    op("aten::sum_to_size(Tensor self, int[] size) -> Tensor", sumToSize), );

}  // namespace kiln
