// aten:: registrations of the pointwise tensor ops, with PyTorch 1.13's schemas.
#include "kiln/core/op_registration.h"
#include "kiln/tensor/pointwise.h"

namespace kiln {
namespace {

KILN_REGISTER_OPS(
    op("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Tensor& other, const Scalar& alpha) { return add(self, other, alpha); }),
    op("aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
       [](const Tensor& self, const Scalar& other, const Scalar& alpha) {
         return add(self, scalarToTensor(other), alpha);
       }),
    op("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Tensor& other, const Scalar& alpha) { return add_(self, other, alpha); }),
    op("aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
       [](Tensor self, const Scalar& other, const Scalar& alpha) {
         return add_(self, scalarToTensor(other), alpha);
       }),
    op("aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor out) {
         return addOut(self, other, alpha, out);
       }), );

}  // namespace
}  // namespace kiln
