// The operators the batch_mm pass (kiln/passes/batch_mm.h) puts in graphs:
//   prim::MMTreeReduce(L_1, ..., L_n, R_1, ..., R_n) = L_1 @ R_1 + ... + L_n @ R_n
//   prim::MMBatchSide[side=0](S, O_1, ..., O_n)     = S @ O_1, ..., S @ O_n
//   prim::MMBatchSide[side=1](S, O_1, ..., O_n)     = O_1 @ S, ..., O_n @ S
// When the operands have one shape and dtype, each is a single matrix
// product of concatenated operands; otherwise they compute product by
// product exactly as the graph they replaced (broadcasting sums, raising
// where it raised).
#include "kiln/core/op_registration.h"
#include "kiln/ir/graph.h"
#include "kiln/tensor/linalg.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/tensor/shape.h"

namespace kiln {

namespace {

std::vector<Tensor> popTensors(Stack& stack, size_t n) {
  std::vector<Tensor> out;
  out.reserve(n);
  for (auto it = stack.end() - static_cast<ptrdiff_t>(n); it != stack.end(); ++it) out.push_back(it->toTensor());
  stack.resize(stack.size() - n);
  return out;
}

bool sameShapeAndDtype(ArrayRef<Tensor> tensors) {
  for (const Tensor& t : tensors) {
    if (t.sizes() != tensors[0].sizes() || t.dtype() != tensors[0].dtype()) return false;
  }
  return true;
}

// Matrices stored transposed (column-major) concatenate faster as their
// transposes.
bool allTransposed(ArrayRef<Tensor> tensors) {
  for (const Tensor& t : tensors) {
    if (t.dim() != 2 || t.stride(0) != 1 || t.stride(1) != t.size(0)) return false;
  }
  return true;
}

Tensor concat(ArrayRef<Tensor> tensors, int64_t dim) {
  if (!allTransposed(tensors)) return cat(tensors, dim);
  std::vector<Tensor> transposed;
  for (const Tensor& t : tensors) transposed.push_back(kiln::t(t));
  return kiln::t(cat(transposed, 1 - dim));
}

// 1.13's measurements of when one wide product beats several narrow ones.
bool fastForReduce(const Tensor& lhs, const Tensor& rhs) {
  int64_t l = lhs.size(0);
  int64_t m = lhs.size(1);
  int64_t r = rhs.size(1);
  return m < 512 || (l < 256 && r < 256) || (l > 256 && r > 256);
}

Tensor mmTreeReduce(const std::vector<Tensor>& inputs) {
  size_t n = inputs.size() / 2;
  ArrayRef<Tensor> lhs(inputs.data(), n);
  ArrayRef<Tensor> rhs(inputs.data() + n, n);
  if (sameShapeAndDtype(lhs) && sameShapeAndDtype(rhs) && lhs[0].dim() == 2 && rhs[0].dim() == 2 &&
      fastForReduce(lhs[0], rhs[0])) {
    return mm(concat(lhs, 1), concat(rhs, 0));
  }
  Tensor sum = mm(lhs[0], rhs[0]);
  for (size_t i = 1; i < n; ++i) sum = add(sum, mm(lhs[i], rhs[i]));
  return sum;
}

// 1.13's measurement of when the concatenated operand is still cheap.
constexpr int64_t kMaxBatchSideElements = 1024 * 2048;

void mmBatchSide(Stack& stack, size_t n, bool side_is_lhs) {
  std::vector<Tensor> others = popTensors(stack, n);
  Tensor side = stack.back().toTensor();
  stack.pop_back();
  const Tensor& first = others[0];
  if (sameShapeAndDtype(others) && first.dim() == 2 && first.numel() > 0 && first.numel() <= kMaxBatchSideElements) {
    int64_t dim = side_is_lhs ? 1 : 0;
    Tensor product = side_is_lhs ? mm(side, cat(others, dim)) : mm(cat(others, dim), side);
    int64_t width = first.size(dim);
    for (size_t i = 0; i < n; ++i) stack.emplace_back(narrow(product, dim, static_cast<int64_t>(i) * width, width));
    return;
  }
  for (const Tensor& other : others) stack.emplace_back(side_is_lhs ? mm(side, other) : mm(other, side));
}

KILN_REGISTER_SCRIPT_OPS(nodeOp("prim::MMTreeReduce(...) -> Tensor",
                                [](const Node& node) -> Operation {
                                  size_t count = node.inputs().size();
                                  KILN_CHECK(count > 0 && count % 2 == 0,
                                             "prim::MMTreeReduce takes pairs of matrices, got ", count, " inputs");
                                  return [count](Stack& stack) {
                                    stack.emplace_back(mmTreeReduce(popTensors(stack, count)));
                                  };
                                }),
                         nodeOp("prim::MMBatchSide", [](const Node& node) -> Operation {
                           size_t count = node.inputs().size();
                           KILN_CHECK(count >= 2 && node.outputs().size() == count - 1,
                                      "prim::MMBatchSide takes a shared matrix and one more input per output");
                           int64_t side = node.i(Symbol::attr("side"));
                           KILN_CHECK(side == 0 || side == 1,
                                      "prim::MMBatchSide: side must be 0 (lhs) or 1 (rhs), not ", side);
                           return [count, side](Stack& stack) { mmBatchSide(stack, count - 1, side == 0); };
                         }), );

}  // namespace

}  // namespace kiln
