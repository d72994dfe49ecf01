// Complex numbers: the complex dtypes and their promotion, complex Scalars and
// IValues, and the complex tensor kernels (arithmetic, views, abs/angle,
// transcendental functions, conversions).
#include <gtest/gtest.h>

#include <complex>
#include <sstream>

#include "kiln/core/ivalue.h"
#include "kiln/tensor/complex.h"
#include "kiln/tensor/copy.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/pointwise.h"

using namespace kiln;

namespace {

using C64 = std::complex<float>;
using C128 = std::complex<double>;

Tensor complexTensor(std::initializer_list<C64> values) {
  Tensor t = empty({static_cast<int64_t>(values.size())}, ScalarType::ComplexFloat);
  C64* p = t.data<C64>();
  for (C64 v : values) *p++ = v;
  return t;
}

}  // namespace

TEST(Complex, DtypesAndPromotion) {
  EXPECT_EQ(elementSize(ScalarType::ComplexFloat), 8u);
  EXPECT_EQ(elementSize(ScalarType::ComplexDouble), 16u);
  EXPECT_EQ(scalarTypeName(ScalarType::ComplexFloat), "complex64");
  EXPECT_EQ(scalarTypeFromName("complex128"), ScalarType::ComplexDouble);
  EXPECT_EQ(scalarTypeFromInt(9), ScalarType::ComplexFloat);
  EXPECT_EQ(promoteTypes(ScalarType::ComplexFloat, ScalarType::Double), ScalarType::ComplexDouble);
  EXPECT_EQ(promoteTypes(ScalarType::Long, ScalarType::ComplexFloat), ScalarType::ComplexFloat);
  EXPECT_EQ(promoteTypes(ScalarType::ComplexFloat, ScalarType::ComplexDouble), ScalarType::ComplexDouble);
  EXPECT_EQ(toRealValueType(ScalarType::ComplexDouble), ScalarType::Double);
}

TEST(Complex, ScalarAndIValue) {
  Scalar s(C128(1.5, -2));
  EXPECT_TRUE(s.isComplex());
  EXPECT_EQ(s.type(), ScalarType::ComplexDouble);
  EXPECT_EQ((-s).toComplexDouble(), C128(-1.5, 2));
  IValue v(C128(1.5, -2));
  EXPECT_TRUE(v.isComplex());
  EXPECT_TRUE(v.isScalar());
  EXPECT_EQ(v.type()->str(), "complex");
  EXPECT_EQ(v, IValue(C128(1.5, -2)));
  EXPECT_NE(v, IValue(1.5));
  EXPECT_EQ(IValue(2.0).toComplexDouble(), C128(2, 0));
  std::ostringstream out;
  out << v << " " << IValue(C128(0, 1e20)) << " " << IValue(C128(-0.0, 3));
  EXPECT_EQ(out.str(), "1.5-2.j 0.+1e+20j 0.+3.j");
  EXPECT_EQ(IValue::hash(v), IValue::hash(IValue(C128(1.5, -2))));
}

TEST(Complex, Arithmetic) {
  Tensor a = complexTensor({{1, 2}, {-3, 0.5f}});
  Tensor b = complexTensor({{0, 1}, {2, -1}});
  Tensor sum = add(a, b, Scalar(1));
  EXPECT_EQ(sum.dtype(), ScalarType::ComplexFloat);
  EXPECT_EQ(sum.data<C64>()[0], C64(1, 3));
  Tensor prod = mul(a, b);
  EXPECT_EQ(prod.data<C64>()[0], C64(1, 2) * C64(0, 1));
  Tensor quot = div(a, b, std::nullopt);
  EXPECT_NEAR(std::abs(quot.data<C64>()[1] - C64(-3, 0.5f) / C64(2, -1)), 0, 1e-6);
  // A real tensor promotes to complex; a complex number makes a float tensor complex64.
  Tensor real_t = empty({2}, ScalarType::Double);
  real_t.data<double>()[0] = 2;
  real_t.data<double>()[1] = -1;
  EXPECT_EQ(mul(a, real_t).dtype(), ScalarType::ComplexDouble);
  Tensor eq_t = eq(a, a);
  EXPECT_EQ(eq_t.dtype(), ScalarType::Bool);
  EXPECT_TRUE(eq_t.data<bool>()[0] && eq_t.data<bool>()[1]);
}

TEST(Complex, ViewsAndParts) {
  Tensor a = complexTensor({{1, 2}, {-3, 4}});
  Tensor re = real(a), im = imag(a);
  EXPECT_EQ(re.dtype(), ScalarType::Float);
  EXPECT_EQ(im.strides()[0], 2);
  EXPECT_EQ(im.data<float>()[0], 2.0f);  // the first imaginary part
  EXPECT_EQ(im.data<float>()[2], 4.0f);  // the second, two floats on
  Tensor pairs = viewAsReal(a);
  EXPECT_EQ(pairs.dim(), 2);
  EXPECT_EQ(pairs.sizes()[1], 2);
  Tensor back = viewAsComplex(contiguous(pairs));
  EXPECT_EQ(back.dtype(), ScalarType::ComplexFloat);
  EXPECT_EQ(back.data<C64>()[1], C64(-3, 4));
  // Writing through a view changes the complex tensor.
  fill_(re, Scalar(7.0));
  EXPECT_EQ(a.data<C64>()[1], C64(7, 4));
  Tensor magnitude = complexAbs(a);
  EXPECT_EQ(magnitude.dtype(), ScalarType::Float);
  EXPECT_FLOAT_EQ(magnitude.data<float>()[1], std::abs(C64(7, 4)));
  EXPECT_FLOAT_EQ(complexAngle(a).data<float>()[1], std::arg(C64(7, 4)));
  EXPECT_EQ(conj(a).data<C64>()[0], C64(7, -2));
  EXPECT_THROW(imag(empty({2}, ScalarType::Float)), Error);
}

TEST(Complex, FunctionsAndConversions) {
  Tensor a = complexTensor({{0.5f, -1}, {2, 0.25f}});
  Tensor e = complexUnary("exp", a);
  EXPECT_NEAR(std::abs(e.data<C64>()[0] - std::exp(C64(0.5f, -1))), 0, 1e-6);
  EXPECT_THROW(complexUnary("erf", a), Error);
  Tensor wide = to(a, ScalarType::ComplexDouble);
  EXPECT_EQ(wide.data<C128>()[1], C128(2, 0.25));
  Tensor real_part = to(a, ScalarType::Double);
  EXPECT_EQ(real_part.data<double>()[0], 0.5);
  Tensor from_real = to(real_part, ScalarType::ComplexFloat);
  EXPECT_EQ(from_real.data<C64>()[1], C64(2, 0));
  EXPECT_EQ(scalarToTensor(Scalar(C128(1, 2))).dtype(), ScalarType::ComplexDouble);
  Tensor one = complexTensor({{3, -4}});
  EXPECT_EQ(one.item().toComplexDouble(), C128(3, -4));
  Tensor parts = complexFromParts(real_part, real_part);
  EXPECT_EQ(parts.dtype(), ScalarType::ComplexDouble);
  EXPECT_EQ(parts.data<C128>()[0], C128(0.5, 0.5));
}
