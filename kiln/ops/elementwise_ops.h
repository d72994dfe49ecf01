#pragma once
// Declaring a pointwise operator by one element expression: the expression
// is both the eager kernel (compiled here, vectorized by the compiler) and,
// as its text, the element expression the fuser writes into generated
// kernels, so that the two cannot drift apart and give the same bits. The
// expression is C++ over the schema's argument names and the element type
// `T`, written with the helpers of kiln/tensor/kernels/kernel_math.h:
//
//   KILN_REGISTER_OPS(KILN_FLOAT_UNARY_OPS("silu", self / ((T)1 + m_exp(-self))));
//
// declares aten::silu, aten::silu_ and aten::silu.out with their shape rule
// and pointwise description. See docs/operators.md, "Adding an operator".
#include "kiln/core/op_registration.h"
#include "kiln/ops/pointwise_spec.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/kernels/elementwise.h"

// The element function of an expression over `self`.
#define KILN_UNARY_ELEMENT(...) []<typename T>(T self) -> T { return __VA_ARGS__; }

// aten::name, aten::name_ and aten::name.out of a unary op on floating
// tensors (the result keeps self's dtype; other dtypes raise, as PyTorch's
// kernels do), computing the expression given after the name.
#define KILN_FLOAT_UNARY_OPS(name, ...)                                                                             \
  ::kiln::op("aten::" name "(Tensor self) -> Tensor",                                                               \
             [](const ::kiln::Tensor& self) {                                                                       \
               return ::kiln::kernels::floatElementwise(name, self, ::kiln::Tensor(),                               \
                                                        KILN_UNARY_ELEMENT(__VA_ARGS__));                           \
             })                                                                                                     \
      .shape(::kiln::shapes::sameDtype)                                                                             \
      .pointwise(::kiln::elementwiseFromCpp(::kiln::pointwise::TypeRule::Promote,                                   \
                                            ::kiln::pointwise::DtypeSet::Floating, #__VA_ARGS__, {"self"})),        \
      ::kiln::op("aten::" name "_(Tensor(a!) self) -> Tensor(a!)",                                                  \
                 [](::kiln::Tensor self) {                                                                          \
                   ::kiln::kernels::floatElementwise(name, self, self, KILN_UNARY_ELEMENT(__VA_ARGS__));            \
                   return self;                                                                                     \
                 }),                                                                                                \
      ::kiln::op("aten::" name ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", [](const ::kiln::Tensor& self, \
                                                                                        ::kiln::Tensor out) {       \
        ::kiln::kernels::floatElementwise(name, self, out, KILN_UNARY_ELEMENT(__VA_ARGS__));                        \
        return out;                                                                                                 \
      }).shape(::kiln::shapes::sameDtype)
