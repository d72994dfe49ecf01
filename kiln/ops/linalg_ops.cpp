// aten:: registrations of the matrix products, with PyTorch 1.13's schemas.
#include "kiln/core/op_registration.h"
#include "kiln/tensor/linalg.h"

namespace kiln {
namespace {

KILN_REGISTER_OPS(
    op("aten::mm(Tensor self, Tensor mat2) -> Tensor",
       [](const Tensor& self, const Tensor& mat2) { return mm(self, mat2); }),
    op("aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& mat2, Tensor out) { return mmOut(self, mat2, out); }),
    op("aten::bmm(Tensor self, Tensor mat2) -> Tensor",
       [](const Tensor& self, const Tensor& mat2) { return bmm(self, mat2); }),
    op("aten::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& mat2, Tensor out) { return bmmOut(self, mat2, out); }),
    op("aten::matmul(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return matmul(self, other); }),
    op("aten::matmul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return matmulOut(self, other, out); }),
    op("aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
         return addmm(self, mat1, mat2, beta, alpha);
       }),
    op("aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
          Tensor out) { return addmmOut(self, mat1, mat2, beta, alpha, out); }),
    op("aten::addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
         return addmmOut(self, mat1, mat2, beta, alpha, self);
       }),
    op("aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
         return baddbmm(self, batch1, batch2, beta, alpha);
       }),
    op("aten::baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, "
       "Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha,
          Tensor out) { return baddbmmOut(self, batch1, batch2, beta, alpha, out); }),
    op("aten::baddbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> "
       "Tensor(a!)",
       [](Tensor self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
         return baddbmmOut(self, batch1, batch2, beta, alpha, self);
       }),
    op("aten::mv(Tensor self, Tensor vec) -> Tensor",
       [](const Tensor& self, const Tensor& vec) { return mv(self, vec); }),
    op("aten::mv.out(Tensor self, Tensor vec, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& vec, Tensor out) { return mvOut(self, vec, out); }),
    op("aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
         return addmv(self, mat, vec, beta, alpha);
       }),
    op("aten::addmv.out(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> "
       "Tensor(a!)",
       [](const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha,
          Tensor out) { return addmvOut(self, mat, vec, beta, alpha, out); }),
    op("aten::addmv_(Tensor(a!) self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
         return addmvOut(self, mat, vec, beta, alpha, self);
       }),
    op("aten::dot(Tensor self, Tensor tensor) -> Tensor",
       [](const Tensor& self, const Tensor& tensor) { return dot(self, tensor); }),
    op("aten::dot.out(Tensor self, Tensor tensor, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& tensor, Tensor out) { return dotOut(self, tensor, out); }),
    // For real dtypes vdot is dot (there is nothing to conjugate).
    op("aten::vdot(Tensor self, Tensor other) -> Tensor",
       [](const Tensor& self, const Tensor& other) { return dot(self, other); }),
    op("aten::vdot.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, Tensor out) { return dotOut(self, other, out); }),
    op("aten::outer(Tensor self, Tensor vec2) -> Tensor",
       [](const Tensor& self, const Tensor& vec2) { return outer(self, vec2); }),
    op("aten::outer.out(Tensor self, Tensor vec2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& vec2, Tensor out) { return outerOut(self, vec2, out); }),
    op("aten::ger(Tensor self, Tensor vec2) -> Tensor",
       [](const Tensor& self, const Tensor& vec2) { return outer(self, vec2); })
        .aliasOf("aten::outer"),
    op("aten::ger.out(Tensor self, Tensor vec2, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& vec2, Tensor out) { return outerOut(self, vec2, out); })
        .aliasOf("aten::outer"),
    op("aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
       [](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
         return linear(input, weight, bias);
       }),
    op("aten::linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, Tensor out) {
         return linearOut(input, weight, bias, out);
       }), );

}  // namespace
}  // namespace kiln
