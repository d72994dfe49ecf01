#include "kiln/tensor/complex.h"

#include <cmath>
#include <complex>
#include <string_view>

#include "kiln/tensor/copy.h"
#include "kiln/tensor/kernels/loops.h"

namespace kiln {

namespace {

void checkComplex(const Tensor& t, const char* name) {
  KILN_CHECK(t.defined(), name, ": expected a defined tensor");
  KILN_CHECK(isComplexType(t.dtype()), name, " is only supported for complex tensors, got ", scalarTypeName(t.dtype()));
}

// A view of `t`'s storage as its real dtype: sizes and strides of `t` (in
// real elements), then `extra` appended (viewAsReal's last dim of 2).
Tensor realStorageView(const Tensor& t, int64_t part, bool with_pair_dim) {
  DimVector sizes(t.sizes().begin(), t.sizes().end());
  DimVector strides;
  for (int64_t s : t.strides()) strides.push_back(s * 2);
  if (with_pair_dim) {
    sizes.push_back(2);
    strides.push_back(1);
  }
  return Tensor(
      makeIntrusive<TensorImpl>(t.storage(), toRealValueType(t.dtype()), sizes, strides, t.storageOffset() * 2 + part));
}

// out = f(t) elementwise, the result in `out_dtype`.
template <typename Body>
Tensor mapComplex(const char* name, const Tensor& t, ScalarType out_dtype, const Body& body) {
  TensorIter iter(name);
  iter.addOutput(Tensor()).addInput(t).promoteInputs(false).outputDtype(out_dtype).checkOutputCast(false).build();
  KILN_DISPATCH_COMPLEX_TYPES(t.dtype(), name, [&] { body.template operator()<scalar_t>(iter); });
  return iter.output();
}

template <typename T>
T sigmoid(T z) {
  return T(1) / (T(1) + std::exp(-z));
}

template <typename T>
T rsqrt(T z) {
  return T(1) / std::sqrt(z);
}

template <typename T>
T reciprocal(T z) {
  return T(1) / z;
}

}  // namespace

Tensor real(const Tensor& t) {
  KILN_CHECK(t.defined(), "real: expected a defined tensor");
  if (!isComplexType(t.dtype())) return t;
  return realStorageView(t, 0, false);
}

Tensor imag(const Tensor& t) {
  KILN_CHECK(t.defined(), "imag: expected a defined tensor");
  KILN_CHECK(isComplexType(t.dtype()), "imag is not implemented for tensors with non-complex dtypes.");
  return realStorageView(t, 1, false);
}

Tensor viewAsReal(const Tensor& t) {
  KILN_CHECK(t.defined() && isComplexType(t.dtype()), "view_as_real is only supported for complex tensors");
  return realStorageView(t, 0, true);
}

Tensor viewAsComplex(const Tensor& t) {
  KILN_CHECK(t.defined(), "view_as_complex: expected a defined tensor");
  KILN_CHECK(t.dtype() == ScalarType::Float || t.dtype() == ScalarType::Double,
             "view_as_complex is only supported for float and double tensors, but got a tensor of scalar type: ",
             scalarTypeShortName(t.dtype()));
  KILN_CHECK(t.dim() != 0, "Input tensor must have one or more dimensions");
  KILN_CHECK(t.sizes().back() == 2, "Tensor must have a last dimension of size 2");
  KILN_CHECK(t.strides().back() == 1, "Tensor must have a last dimension with stride 1");
  DimVector sizes(t.sizes().begin(), t.sizes().end() - 1);
  DimVector strides;
  for (size_t d = 0; d + 1 < static_cast<size_t>(t.dim()); ++d) {
    KILN_CHECK(t.strides()[d] % 2 == 0, "Tensor must have a stride divisible by 2 for all but last dimension");
    strides.push_back(t.strides()[d] / 2);
  }
  KILN_CHECK(t.storageOffset() % 2 == 0, "Tensor must have a storage_offset divisible by 2");
  return Tensor(
      makeIntrusive<TensorImpl>(t.storage(), toComplexType(t.dtype()), sizes, strides, t.storageOffset() / 2));
}

Tensor conj(const Tensor& t) {
  KILN_CHECK(t.defined(), "conj: expected a defined tensor");
  if (!isComplexType(t.dtype())) return t;
  return mapComplex("conj", t, t.dtype(), [&]<typename C>(TensorIter& iter) {
    kernels::cpuKernel<C, C>(iter, [](C z) { return std::conj(z); });
  });
}

Tensor complexAbs(const Tensor& t) {
  checkComplex(t, "abs");
  return mapComplex("abs", t, toRealValueType(t.dtype()), [&]<typename C>(TensorIter& iter) {
    kernels::cpuKernel<typename C::value_type, C>(iter, [](C z) { return std::abs(z); });
  });
}

Tensor complexAngle(const Tensor& t) {
  checkComplex(t, "angle");
  return mapComplex("angle", t, toRealValueType(t.dtype()), [&]<typename C>(TensorIter& iter) {
    kernels::cpuKernel<typename C::value_type, C>(iter, [](C z) { return std::arg(z); });
  });
}

namespace {

template <typename MakeFn>
Tensor fromParts(const char* name, const Tensor& a, const Tensor& b, const MakeFn& make) {
  KILN_CHECK(a.defined() && b.defined(), name, ": expected defined tensors");
  KILN_CHECK(a.dtype() == b.dtype(), "Expected object of scalar type ", scalarTypeShortName(a.dtype()),
             " but got scalar type ", scalarTypeShortName(b.dtype()), " for second argument");
  KILN_CHECK(a.dtype() == ScalarType::Float || a.dtype() == ScalarType::Double,
             "Expected both inputs to be Float or Double tensors but got ", scalarTypeShortName(a.dtype()), " and ",
             scalarTypeShortName(b.dtype()));
  TensorIter iter(name);
  iter.addOutput(Tensor())
      .addInput(a)
      .addInput(b)
      .promoteInputs(false)
      .outputDtype(toComplexType(a.dtype()))
      .checkOutputCast(false)
      .build();
  KILN_DISPATCH_FLOATING_TYPES(a.dtype(), name, [&] {
    kernels::cpuKernel<std::complex<scalar_t>, scalar_t, scalar_t>(iter,
                                                                   [&](scalar_t x, scalar_t y) { return make(x, y); });
  });
  return iter.output();
}

}  // namespace

Tensor complexFromParts(const Tensor& real, const Tensor& imag) {
  return fromParts("complex", real, imag, [](auto x, auto y) { return std::complex<decltype(x)>(x, y); });
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  return fromParts("polar", abs, angle, [](auto r, auto theta) {
    return std::complex<decltype(r)>(r * std::cos(theta), r * std::sin(theta));
  });
}

namespace {

struct ComplexFunction {
  const char* name;
  std::complex<float> (*f32)(std::complex<float>);
  std::complex<double> (*f64)(std::complex<double>);
};

#define KILN_COMPLEX_FN(name, fn)                                                                   \
  ComplexFunction {                                                                                 \
    name, [](std::complex<float> z) { return fn(z); }, [](std::complex<double> z) { return fn(z); } \
  }

const ComplexFunction kFunctions[] = {
    KILN_COMPLEX_FN("exp", std::exp),
    KILN_COMPLEX_FN("log", std::log),
    KILN_COMPLEX_FN("log10", std::log10),
    KILN_COMPLEX_FN("sqrt", std::sqrt),
    KILN_COMPLEX_FN("sin", std::sin),
    KILN_COMPLEX_FN("cos", std::cos),
    KILN_COMPLEX_FN("tan", std::tan),
    KILN_COMPLEX_FN("asin", std::asin),
    KILN_COMPLEX_FN("acos", std::acos),
    KILN_COMPLEX_FN("atan", std::atan),
    KILN_COMPLEX_FN("sinh", std::sinh),
    KILN_COMPLEX_FN("cosh", std::cosh),
    KILN_COMPLEX_FN("tanh", std::tanh),
    KILN_COMPLEX_FN("asinh", std::asinh),
    KILN_COMPLEX_FN("acosh", std::acosh),
    KILN_COMPLEX_FN("atanh", std::atanh),
    KILN_COMPLEX_FN("sigmoid", sigmoid),
    KILN_COMPLEX_FN("rsqrt", rsqrt),
    KILN_COMPLEX_FN("reciprocal", reciprocal),
    KILN_COMPLEX_FN("neg", std::negate<>()),
    KILN_COMPLEX_FN("conj_physical", std::conj),
};
#undef KILN_COMPLEX_FN

const ComplexFunction* findFunction(std::string_view name) {
  if (!name.empty() && name.back() == '_') name.remove_suffix(1);
  for (const ComplexFunction& f : kFunctions) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

template <typename C>
C (*pick(const ComplexFunction& f))
(C) {
  if constexpr (std::is_same_v<C, std::complex<float>>) {
    return f.f32;
  } else {
    return f.f64;
  }
}

}  // namespace

bool isComplexUnary(const char* name) { return findFunction(name) != nullptr; }

void complexUnaryKernel(TensorIter& iter, const char* name) {
  const ComplexFunction* f = findFunction(name);
  KILN_CHECK(f, name, ": not implemented for '", scalarTypeShortName(iter.computeDtype()), "'");
  KILN_DISPATCH_COMPLEX_TYPES(iter.computeDtype(), name, [&] {
    kernels::cpuKernel<scalar_t, scalar_t>(iter, [fn = pick<scalar_t>(*f)](scalar_t z) { return fn(z); });
  });
}

Tensor complexUnary(const char* name, const Tensor& t) {
  checkComplex(t, name);
  TensorIter iter(name);
  iter.addOutput(Tensor()).addInput(t).build();
  complexUnaryKernel(iter, name);
  return iter.output();
}

}  // namespace kiln
