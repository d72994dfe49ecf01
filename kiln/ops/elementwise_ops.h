#pragma once
// Declaring a pointwise operator by one element expression: the expression
// is both the eager kernel (compiled here, vectorized by the compiler) and,
// as its text, the element expression the fuser writes into generated
// kernels, so that the two cannot drift apart and give the same bits. The
// expression is C++ over the schema's argument names and the element type
// `T`, written with the helpers of kiln/tensor/kernels/kernel_math.h:
//
//   KILN_REGISTER_OPS(KILN_FLOAT_UNARY_OPS("silu", ({"self: grad * ..."}), self / ((T)1 + m_exp(-self))));
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
// kernels do), computing the expression given after the name, with the
// functional form's derivative formulas (a parenthesized list, used by the
// in-place form too).
#define KILN_FLOAT_UNARY_OPS(name, formula, ...)                                                                    \
  ::kiln::op("aten::" name "(Tensor self) -> Tensor",                                                               \
             [](const ::kiln::Tensor& self) {                                                                       \
               return ::kiln::kernels::floatElementwise(name, self, ::kiln::Tensor(),                               \
                                                        KILN_UNARY_ELEMENT(__VA_ARGS__));                           \
             })                                                                                                     \
      .shape(::kiln::shapes::sameDtype)                                                                             \
      .pointwise(::kiln::elementwiseFromCpp(::kiln::pointwise::TypeRule::Promote,                                   \
                                            ::kiln::pointwise::DtypeSet::Floating, #__VA_ARGS__, {"self"}))         \
      .derivative(KILN_PP_UNPAREN formula),                                                                         \
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

// Ops with number parameters besides self (elu's alpha, hardtanh's bounds):
// `params` is the parenthesized list of their names, as in the schema, and
// the expression reads them converted to T. `sig` is the schema text after
// `Tensor self` (", Scalar alpha=1"), `kname` the name in dtype errors
// ("elu" for selu), `dtypes` a kernels::ParamDtypes.
#define KILN_PP_CAT_(a, b) a##b
#define KILN_PP_CAT(a, b) KILN_PP_CAT_(a, b)
#define KILN_PP_COUNT_(a, b, c, n, ...) n
#define KILN_PP_COUNT(...) KILN_PP_COUNT_(__VA_ARGS__, 3, 2, 1, 0)
#define KILN_PP_MAP1(m, a) m(a)
#define KILN_PP_MAP2(m, a, b) m(a), m(b)
#define KILN_PP_MAP3(m, a, b, c) m(a), m(b), m(c)
#define KILN_PP_MAP_(m, ...) KILN_PP_CAT(KILN_PP_MAP, KILN_PP_COUNT(__VA_ARGS__))(m, __VA_ARGS__)
#define KILN_PP_UNPAREN(...) __VA_ARGS__
#define KILN_PP_MAP(m, list) KILN_PP_MAP_(m, KILN_PP_UNPAREN list)

#define KILN_SCALAR_PARAM(p) const ::kiln::Scalar& p##_param
#define KILN_CONVERT_PARAM(p) p = ::kiln::kernels::paramAs<T>(p##_param)
// `make<T>()` of kernels::paramElementwise.
#define KILN_PARAM_ELEMENT(params, ...)              \
  [&]<typename T>() {                                \
    const T KILN_PP_MAP(KILN_CONVERT_PARAM, params); \
    return [=](T self) -> T { return __VA_ARGS__; }; \
  }

#define KILN_PARAM_FUNCTIONAL_OP(name, sig, kname, dtypes, params, ...)                                   \
  ::kiln::op("aten::" name "(Tensor self" sig ") -> Tensor",                                              \
             [](const ::kiln::Tensor& self, KILN_PP_MAP(KILN_SCALAR_PARAM, params)) {                     \
               return ::kiln::kernels::paramElementwise<dtypes>(kname, self, ::kiln::Tensor(),            \
                                                                KILN_PARAM_ELEMENT(params, __VA_ARGS__)); \
             })                                                                                           \
      .shape(::kiln::shapes::sameDtype)                                                                   \
      .pointwise(::kiln::elementwiseFromCpp(::kiln::pointwise::TypeRule::Promote,                         \
                                            ::kiln::pointwise::DtypeSet::Floating, #__VA_ARGS__, #params))
#define KILN_PARAM_INPLACE_OP(name, sig, kname, dtypes, params, ...)                                                  \
  ::kiln::op("aten::" name "_(Tensor(a!) self" sig ") -> Tensor(a!)",                                                 \
             [](::kiln::Tensor self, KILN_PP_MAP(KILN_SCALAR_PARAM, params)) {                                        \
               ::kiln::kernels::paramElementwise<dtypes>(kname, self, self, KILN_PARAM_ELEMENT(params, __VA_ARGS__)); \
               return self;                                                                                           \
             })
#define KILN_PARAM_OUT_OP(name, sig, kname, dtypes, params, ...)                                                     \
  ::kiln::op("aten::" name ".out(Tensor self" sig ", *, Tensor(a!) out) -> Tensor(a!)",                              \
             [](const ::kiln::Tensor& self, KILN_PP_MAP(KILN_SCALAR_PARAM, params), ::kiln::Tensor out) {            \
               ::kiln::kernels::paramElementwise<dtypes>(kname, self, out, KILN_PARAM_ELEMENT(params, __VA_ARGS__)); \
               return out;                                                                                           \
             })                                                                                                      \
      .shape(::kiln::shapes::sameDtype)
// The functional, in-place and out= forms.
#define KILN_PARAM_OPS(name, sig, kname, dtypes, params, ...)               \
  KILN_PARAM_FUNCTIONAL_OP(name, sig, kname, dtypes, params, __VA_ARGS__),  \
      KILN_PARAM_INPLACE_OP(name, sig, kname, dtypes, params, __VA_ARGS__), \
      KILN_PARAM_OUT_OP(name, sig, kname, dtypes, params, __VA_ARGS__)
