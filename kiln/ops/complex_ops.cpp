// TorchScript's operators on complex numbers: arithmetic, comparison, the
// `cmath` functions, `complex(...)` and the conversions between complex
// numbers and tensors. PyTorch 1.13 computes them with C++'s std::complex
// (c10::complex forwards to it), so kiln calls the same functions and gets the
// same special values (Python's cmath raises on some of them instead).
#include <cmath>
#include <complex>

#include "kiln/core/ivalue.h"
#include "kiln/core/op_registration.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/complex.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace detail {
template <>
struct ArgFrom<std::complex<double>> {
  static std::complex<double> get(const IValue& v) { return v.toComplexDouble(); }
};
}  // namespace detail

namespace {

using Complex = std::complex<double>;

// Kernels return IValue: a std::complex converts to both Scalar and IValue.
IValue box(Complex z) { return IValue(z); }

// `Tensor -> complex`: the one element of a tensor (TorchScript's
// `complex(t)` and its implicit conversion).
Complex tensorToComplex(const Tensor& t, const char* what) {
  KILN_CHECK(t.numel() == 1, what, ": a Tensor with ", t.numel(), " elements cannot be converted to Scalar");
  return t.item().toComplexDouble();
}

Complex polar(double r, double theta) { return Complex(r * std::cos(theta), r * std::sin(theta)); }

}  // namespace

#define KILN_COMPLEX_BINARY(name, expr)                                                                          \
  op("aten::" name ".complex(complex a, complex b) -> complex", [](Complex a, Complex b) { return box(expr); }), \
      op("aten::" name ".int_complex(int a, complex b) -> complex",                                              \
         [](int64_t x, Complex b) {                                                                              \
           const Complex a(static_cast<double>(x));                                                              \
           return box(expr);                                                                                     \
         }),                                                                                                     \
      op("aten::" name ".complex_int(complex a, int b) -> complex",                                              \
         [](Complex a, int64_t y) {                                                                              \
           const Complex b(static_cast<double>(y));                                                              \
           return box(expr);                                                                                     \
         }),                                                                                                     \
      op("aten::" name ".float_complex(float a, complex b) -> complex",                                          \
         [](double x, Complex b) {                                                                               \
           const Complex a(x);                                                                                   \
           return box(expr);                                                                                     \
         }),                                                                                                     \
      op("aten::" name ".complex_float(complex a, float b) -> complex", [](Complex a, double y) {                \
        const Complex b(y);                                                                                      \
        return box(expr);                                                                                        \
      })

#define KILN_COMPLEX_COMPARE(name, expr)                                                                 \
  op("aten::" name ".complex(complex a, complex b) -> bool", [](Complex a, Complex b) { return expr; }), \
      op("aten::" name ".float_complex(float a, complex b) -> bool",                                     \
         [](double x, Complex b) {                                                                       \
           const Complex a(x);                                                                           \
           return expr;                                                                                  \
         }),                                                                                             \
      op("aten::" name ".complex_float(complex a, float b) -> bool", [](Complex a, double y) {           \
        const Complex b(y);                                                                              \
        return expr;                                                                                     \
      })

#define KILN_COMPLEX_UNARY(name, fn) \
  op("aten::" name ".complex(complex a) -> complex", [](Complex a) { return box(fn(a)); })

#define KILN_COMPLEX_CONSTRUCTOR(overload, A, B, a_to_double, b_to_double) \
  op("aten::Complex." overload, [](A x, B y) { return box(Complex(a_to_double(x), b_to_double(y))); })
#define KILN_REAL(v) static_cast<double>(v)
#define KILN_TENSOR_REAL(t) tensorToComplex(t, "complex").real()

KILN_REGISTER_SCRIPT_OPS(
    KILN_COMPLEX_BINARY("add", a + b), KILN_COMPLEX_BINARY("sub", a - b), KILN_COMPLEX_BINARY("mul", a* b),
    op("aten::div.complex(complex a, complex b) -> complex", [](Complex a, Complex b) { return box(a / b); }),
    KILN_COMPLEX_COMPARE("eq", a == b), KILN_COMPLEX_COMPARE("ne", a != b),
    op("aten::neg.complex(complex a) -> complex", [](Complex a) { return box(-a); }),
    op("prim::abs.complex(complex a) -> float", [](Complex a) { return std::abs(a); }),
    op("aten::angle.complex(complex a) -> float", [](Complex a) { return std::arg(a); }),
    op("aten::isnan.complex(complex a) -> bool",
       [](Complex a) { return std::isnan(a.real()) || std::isnan(a.imag()); }),
    op("aten::isinf.complex(complex a) -> bool",
       [](Complex a) { return std::isinf(a.real()) || std::isinf(a.imag()); }),
    op("aten::isfinite.complex(complex a) -> bool",
       [](Complex a) { return std::isfinite(a.real()) && std::isfinite(a.imag()); }),
    KILN_COMPLEX_UNARY("exp", std::exp), KILN_COMPLEX_UNARY("log", std::log), KILN_COMPLEX_UNARY("log10", std::log10),
    KILN_COMPLEX_UNARY("sqrt", std::sqrt), KILN_COMPLEX_UNARY("sin", std::sin), KILN_COMPLEX_UNARY("cos", std::cos),
    KILN_COMPLEX_UNARY("tan", std::tan), KILN_COMPLEX_UNARY("asin", std::asin), KILN_COMPLEX_UNARY("acos", std::acos),
    KILN_COMPLEX_UNARY("atan", std::atan), KILN_COMPLEX_UNARY("sinh", std::sinh), KILN_COMPLEX_UNARY("cosh", std::cosh),
    KILN_COMPLEX_UNARY("tanh", std::tanh), KILN_COMPLEX_UNARY("asinh", std::asinh),
    KILN_COMPLEX_UNARY("acosh", std::acosh), KILN_COMPLEX_UNARY("atanh", std::atanh),
    // log(a, base), each operand int, float or complex.
    op("aten::log.complex_complex(complex a, complex b) -> complex",
       [](Complex a, Complex b) { return box(std::log(a) / std::log(b)); }),
    op("aten::log.int_complex(int a, complex b) -> complex",
       [](int64_t a, Complex b) { return box(std::log(Complex(static_cast<double>(a))) / std::log(b)); }),
    op("aten::log.complex_int(complex a, int b) -> complex",
       [](Complex a, int64_t b) { return box(std::log(a) / std::log(Complex(static_cast<double>(b)))); }),
    op("aten::log.float_complex(float a, complex b) -> complex",
       [](double a, Complex b) { return box(std::log(Complex(a)) / std::log(b)); }),
    op("aten::log.complex_float(complex a, float b) -> complex",
       [](Complex a, double b) { return box(std::log(a) / std::log(Complex(b))); }),
    op("aten::pow.complex(complex a, complex b) -> complex", [](Complex a, Complex b) { return box(std::pow(a, b)); }),
    op("aten::pow.float_complex(float a, complex b) -> complex",
       [](double a, Complex b) { return box(std::pow(Complex(a), b)); }),
    op("aten::pow.complex_float(complex a, float b) -> complex",
       [](Complex a, double b) { return box(std::pow(a, Complex(b))); }),
    // cmath.rect
    op("aten::polar.int(int a, int b) -> complex",
       [](int64_t a, int64_t b) { return box(polar(static_cast<double>(a), static_cast<double>(b))); }),
    op("aten::polar.float(float a, float b) -> complex", [](double a, double b) { return box(polar(a, b)); }),
    op("aten::polar.int_float(int a, float b) -> complex",
       [](int64_t a, double b) { return box(polar(static_cast<double>(a), b)); }),
    op("aten::polar.float_int(float a, int b) -> complex",
       [](double a, int64_t b) { return box(polar(a, static_cast<double>(b))); }),
    op("aten::sum.complex(complex[] self) -> complex",
       [](const IValue& self) {
         Complex sum = 0;
         for (const IValue& e : self.toListRef().elements) sum += e.toComplexDouble();
         return box(sum);
       }),

    // complex(x) and complex(real, imag). A tensor argument gives its one element.
    op("aten::Complex.Scalar(Scalar a) -> complex", [](const Scalar& a) { return box(a.toComplexDouble()); }),
    op("aten::Complex.Tensor_Tensor(Tensor a, Tensor b) -> complex",
       [](const Tensor& a, const Tensor& b) {
         return box(Complex(tensorToComplex(a, "complex").real(), tensorToComplex(b, "complex").real()));
       }),
    KILN_COMPLEX_CONSTRUCTOR("int_bool(int x, bool y) -> complex", int64_t, bool, KILN_REAL, KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("bool_int(bool x, int y) -> complex", bool, int64_t, KILN_REAL, KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("float_bool(float x, bool y) -> complex", double, bool, KILN_REAL, KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("bool_float(bool x, float y) -> complex", bool, double, KILN_REAL, KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("float_int(float x, int y) -> complex", double, int64_t, KILN_REAL, KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("int_float(int x, float y) -> complex", int64_t, double, KILN_REAL, KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("int_int(int x, int y) -> complex", int64_t, int64_t, KILN_REAL, KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("bool_bool(bool x, bool y) -> complex", bool, bool, KILN_REAL, KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("float_float(float x, float y) -> complex", double, double, KILN_REAL, KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("Tensor_float(Tensor x, float y) -> complex", const Tensor&, double, KILN_TENSOR_REAL,
                             KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("float_Tensor(float x, Tensor y) -> complex", double, const Tensor&, KILN_REAL,
                             KILN_TENSOR_REAL),
    KILN_COMPLEX_CONSTRUCTOR("Tensor_int(Tensor x, int y) -> complex", const Tensor&, int64_t, KILN_TENSOR_REAL,
                             KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("int_Tensor(int x, Tensor y) -> complex", int64_t, const Tensor&, KILN_REAL,
                             KILN_TENSOR_REAL),
    KILN_COMPLEX_CONSTRUCTOR("Tensor_bool(Tensor x, bool y) -> complex", const Tensor&, bool, KILN_TENSOR_REAL,
                             KILN_REAL),
    KILN_COMPLEX_CONSTRUCTOR("bool_Tensor(bool x, Tensor y) -> complex", bool, const Tensor&, KILN_REAL,
                             KILN_TENSOR_REAL),
    op("aten::ComplexImplicit(Tensor a) -> complex",
       [](const Tensor& a) { return box(tensorToComplex(a, "ComplexImplicit")); }), );
#undef KILN_TENSOR_REAL
#undef KILN_REAL
#undef KILN_COMPLEX_CONSTRUCTOR

}  // namespace kiln

// Complex tensors.
namespace kiln {

namespace {
// real and imag: views in the real dtype of a complex tensor (real of a real tensor is itself).
std::vector<shapes::OutputFacts> realPart(const shapes::Args& a) {
  const TensorType* t = a.tensor("self");
  if (!t) return {};
  std::optional<ScalarType> dtype = t->scalarType();
  if (dtype && isComplexType(*dtype)) dtype = toRealValueType(*dtype);
  return {shapes::tensorOut(dtype, t->sizes())};
}

// An out= form: the result resized into `out` (which must hold its dtype exactly).
Tensor copyToOut(const Tensor& result, Tensor out) {
  KILN_CHECK(out.dtype() == result.dtype(), "Expected out tensor to have dtype ", scalarTypeName(result.dtype()),
             ", but got ", scalarTypeName(out.dtype()), " instead");
  resizeOutput(out, result.sizes());
  copy_(out, result);
  return out;
}
}  // namespace

KILN_REGISTER_OPS(
    op("aten::real(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return real(self); })
        .shape(realPart)
        .derivative({"self: torch.real(grad)", "grad_fn: SelectBackward0"}),
    op("aten::imag(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return imag(self); })
        .shape(realPart)
        .derivative({"self: torch.complex(torch.zeros_like(grad), torch.real(grad))", "grad_fn: SelectBackward0"}),
    op("aten::view_as_real(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return viewAsReal(self); })
        .derivative({"self: torch.view_as_complex(grad.contiguous())"}),
    op("aten::view_as_complex(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return viewAsComplex(self); })
        .derivative({"self: torch.view_as_real(grad.contiguous())"}),
    // kiln has no lazy conjugate bit: conj copies, and resolve_conj has nothing to resolve.
    op("aten::conj(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return conj(self); })
        .derivative({"self: grad.conj()", "grad_fn: ConjBackward0"}),
    op("aten::_conj(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return conj(self); })
        .derivative({"self: grad.conj()", "grad_fn: ConjBackward0"}),
    op("aten::conj_physical(Tensor self) -> Tensor", [](const Tensor& self) { return conj(self); })
        .derivative({"self: grad.conj()"}),
    op("aten::conj_physical.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& self, Tensor out) { return copyToOut(conj(self), out); }),
    op("aten::resolve_conj(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return self; })
        .derivative({"self: grad", "grad_fn: AliasBackward0"}),
    op("aten::resolve_neg(Tensor(a) self) -> Tensor(a)", [](const Tensor& self) { return self; })
        .derivative({"self: grad", "grad_fn: AliasBackward0"}),
    op("aten::complex(Tensor real, Tensor imag) -> Tensor",
       [](const Tensor& re, const Tensor& im) { return complexFromParts(re, im); })
        .derivative({"real: torch.real(grad)", "imag: torch.imag(grad)"}),
    op("aten::complex.out(Tensor real, Tensor imag, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& re, const Tensor& im, Tensor out) { return copyToOut(complexFromParts(re, im), out); }),
    op("aten::polar(Tensor abs, Tensor angle) -> Tensor",
       [](const Tensor& abs, const Tensor& angle) { return polar(abs, angle); })
        // d polar / d abs = e^(i angle) = result / abs; d / d angle = i result.
        .derivative({"abs: torch.real(grad.conj() * (result / abs))",
                     "angle: torch.real(grad.conj() * torch.complex(-torch.imag(result), torch.real(result)))"}),
    op("aten::polar.out(Tensor abs, Tensor angle, *, Tensor(a!) out) -> Tensor(a!)",
       [](const Tensor& abs, const Tensor& angle, Tensor out) { return copyToOut(polar(abs, angle), out); }), );

KILN_REGISTER_SCRIPT_OPS(
    op("aten::tensor.complex(complex t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> "
       "Tensor",
       [](Complex t, std::optional<ScalarType> dtype, const IValue&, bool) {
         Tensor out = scalarToTensor(Scalar(t), ScalarType::ComplexFloat);
         return dtype ? to(out, *dtype) : out;
       }),
    op("aten::as_tensor.complex(complex t, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
       [](Complex t, std::optional<ScalarType> dtype, const IValue&) {
         Tensor out = scalarToTensor(Scalar(t), ScalarType::ComplexFloat);
         return dtype ? to(out, *dtype) : out;
       }), );

}  // namespace kiln
