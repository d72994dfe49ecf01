// aten:: registrations of the matrix products, with PyTorch 1.13's schemas.
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/linalg.h"

namespace kiln {
namespace {

KILN_REGISTER_OPS(
    op("aten::mm(Tensor self, Tensor mat2) -> Tensor",
       [](const Tensor& self, const Tensor& mat2) { return mm(self, mat2); })
        .derivative({"self: grad.mm(mat2.t())", "mat2: self.t().mm(grad)"})
        .shape(shapes::mm)
        .traits(OpTrait::Expensive),
    op("aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& mat2, Tensor out) { return mmOut(self, mat2, out); })
        .shape(shapes::mm)
        .traits(OpTrait::Expensive),
    op("aten::bmm(Tensor self, Tensor mat2) -> Tensor",
       [](const Tensor& self, const Tensor& mat2) { return bmm(self, mat2); })
        .derivative({"self: grad.bmm(mat2.transpose(1, 2))", "mat2: self.transpose(1, 2).bmm(grad)"})
        .shape(shapes::bmm)
        .traits(OpTrait::Expensive),
    op("aten::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& mat2, Tensor out) { return bmmOut(self, mat2, out); })
        .shape(shapes::bmm)
        .traits(OpTrait::Expensive),
    op("aten::matmul(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return matmul(self, other); })
        .derivative({"self: _matmul_backward_self(grad, self, other)",
                     "other: _matmul_backward_other(grad, self, other)"})
        .shape(shapes::matmul)
        .traits(OpTrait::Expensive),
    op("aten::matmul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return matmulOut(self, other, out); })
        .shape(shapes::matmul)
        .traits(OpTrait::Expensive),
    op("aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
         return addmm(self, mat1, mat2, beta, alpha);
       })
        .derivative({"self: grad if beta == 1 else grad * beta",
                     "mat1: grad.mm(mat2.t()) if alpha == 1 else grad.mm(mat2.t()) * alpha",
                     "mat2: mat1.t().mm(grad) if alpha == 1 else mat1.t().mm(grad) * alpha"})
        .shape(shapes::addmm)
        .traits(OpTrait::Expensive),
    op("aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
          Tensor out) { return addmmOut(self, mat1, mat2, beta, alpha, out); })
        .shape(shapes::addmm)
        .traits(OpTrait::Expensive),
    op("aten::addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
         return addmmOut(self, mat1, mat2, beta, alpha, self);
       }),
    op("aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
         return baddbmm(self, batch1, batch2, beta, alpha);
       })
        .shape(shapes::baddbmm)
        .traits(OpTrait::Expensive)
        .derivative(
            {"self: grad if beta == 1 else grad * beta",
             "batch1: grad.bmm(batch2.transpose(1, 2)) if alpha == 1 else grad.bmm(batch2.transpose(1, 2)) * alpha",
             "batch2: batch1.transpose(1, 2).bmm(grad) if alpha == 1 else batch1.transpose(1, 2).bmm(grad) * alpha"}),
    op("aten::baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha,
          Tensor out) { return baddbmmOut(self, batch1, batch2, beta, alpha, out); })
        .shape(shapes::baddbmm)
        .traits(OpTrait::Expensive),
    op("aten::baddbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> "
       "Tensor(a!)",
       [](Tensor self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
         return baddbmmOut(self, batch1, batch2, beta, alpha, self);
       }),
    op("aten::mv(Tensor self, Tensor vec) -> Tensor",
       [](const Tensor& self, const Tensor& vec) { return mv(self, vec); })
        .shape(shapes::mv)
        .traits(OpTrait::Expensive)
        .derivative({"self: grad.outer(vec)", "vec: self.t().mv(grad)"}),
    op("aten::mv.out(Tensor self, Tensor vec, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& vec, Tensor out) { return mvOut(self, vec, out); })
        .shape(shapes::mv)
        .traits(OpTrait::Expensive),
    op("aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
         return addmv(self, mat, vec, beta, alpha);
       })
        .shape(shapes::addmv)
        .traits(OpTrait::Expensive)
        .derivative({"self: grad if beta == 1 else grad * beta",
                     "mat: grad.outer(vec) if alpha == 1 else grad.outer(vec) * alpha",
                     "vec: mat.t().mv(grad) if alpha == 1 else mat.t().mv(grad) * alpha"}),
    op("aten::addmv.out(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha,
          Tensor out) { return addmvOut(self, mat, vec, beta, alpha, out); })
        .shape(shapes::addmv)
        .traits(OpTrait::Expensive),
    op("aten::addmv_(Tensor(a!) self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
         return addmvOut(self, mat, vec, beta, alpha, self);
       }),
    op("aten::dot(Tensor self, Tensor tensor) -> Tensor",
       [](const Tensor& self, const Tensor& tensor) { return dot(self, tensor); })
        .shape(shapes::dot)
        .traits(OpTrait::Expensive)
        .derivative({"self: grad * tensor", "tensor: grad * self"}),
    op("aten::dot.out(Tensor self, Tensor tensor, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& tensor, Tensor out) { return dotOut(self, tensor, out); })
        .shape(shapes::dot)
        .traits(OpTrait::Expensive),
    // For real dtypes vdot is dot (there is nothing to conjugate).
    op("aten::vdot(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return dot(self, other); })
        .shape(shapes::dot)
        .traits(OpTrait::Expensive)
        .derivative({"self: grad * other", "other: grad * self"}),
    op("aten::vdot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return dotOut(self, other, out); })
        .shape(shapes::dot)
        .traits(OpTrait::Expensive),
    op("aten::outer(Tensor self, Tensor vec2) -> Tensor",
       [](const Tensor& self, const Tensor& vec2) { return outer(self, vec2); })
        .shape(shapes::outer)
        .traits(OpTrait::Expensive)
        .derivative({"self: grad.mv(vec2)", "vec2: grad.t().mv(self)", "grad_fn: MulBackward0"}),
    op("aten::outer.out(Tensor self, Tensor vec2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& vec2, Tensor out) { return outerOut(self, vec2, out); })
        .shape(shapes::outer)
        .traits(OpTrait::Expensive),
    op("aten::ger(Tensor self, Tensor vec2) -> Tensor",
       [](const Tensor& self, const Tensor& vec2) { return outer(self, vec2); })
        .shape(shapes::outer)
        .aliasOf("aten::outer")
        .traits(OpTrait::Expensive),
    op("aten::ger.out(Tensor self, Tensor vec2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& vec2, Tensor out) { return outerOut(self, vec2, out); })
        .shape(shapes::outer)
        .aliasOf("aten::outer")
        .traits(OpTrait::Expensive),
    op("aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
       [](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
         return linear(input, weight, bias);
       })
        .derivative({"input: grad.matmul(weight)",
                     "weight: grad.reshape(-1, grad.size(-1)).t().mm(input.reshape(-1, input.size(-1)))", "bias: grad"})
        .shape(shapes::linear)
        .traits(OpTrait::Expensive),
    op("aten::linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, Tensor out) {
         return linearOut(input, weight, bias, out);
       })
        .shape(shapes::linear)
        .traits(OpTrait::Expensive), );

}  // namespace
}  // namespace kiln
