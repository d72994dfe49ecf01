// TorchScript's operators on Python numbers and the scalar conversions, with
// PyTorch 1.13's schemas and results: arithmetic, comparisons, bitwise ops,
// min/max, divmod, int/float/bool conversions (of numbers, strings and
// one-element tensors), NumToTensor, tensor properties (prim::dtype, ...),
// devices, identity and optional unwrapping, range-loop helpers and
// warnings. See number_ops.h for how C++ (not Python) semantics shape the
// results. Division by zero and other Python exceptions raise kiln::Error
// with Python's exception name in the message, as 1.13 does.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>

#include "kiln/ir/graph.h"
#include "kiln/ir/rewrite.h"
#include "kiln/ops/fold_rules.h"
#include "kiln/ops/number_ops.h"
#include "kiln/ops/shape_rules.h"
#include "kiln/tensor/iterator.h"
#include "kiln/tensor/shape.h"

namespace kiln {
namespace {

using number::truncDiv;
using number::truncMod;
using number::truncToInt;
using number::wrapAdd;
using number::wrapMul;
using number::wrapNeg;
using number::wrapSub;

void checkIntDivisor(int64_t b) { KILN_CHECK(b != 0, "ZeroDivisionError: integer division or modulo by zero"); }

// Keeps `a * b` a rounded product: PyTorch's build does not fuse it into a
// later addition, so kiln must not either (-march=x86-64-v3 has FMA).
double roundedProduct(double a, double b) {
  double p = a * b;
  asm("" : "+x"(p));
  return p;
}

// The arithmetic of PyTorch's number operators. Overloads on int64_t and
// double give each operator's int and float forms.
namespace py {

int64_t add(int64_t a, int64_t b) { return wrapAdd(a, b); }
double add(double a, double b) { return a + b; }
int64_t sub(int64_t a, int64_t b) { return wrapSub(a, b); }
double sub(double a, double b) { return a - b; }
int64_t mul(int64_t a, int64_t b) { return wrapMul(a, b); }
double mul(double a, double b) { return a * b; }
// True division: always a float.
double div(double a, double b) { return a / b; }

// Rounds toward negative infinity, as Python's // does.
int64_t floordiv(int64_t a, int64_t b) {
  KILN_CHECK(b != 0, "division by 0");
  int64_t q = truncDiv(a, b);
  if ((a > 0) != (b > 0) && truncMod(a, b) != 0) q -= 1;
  return q;
}
double floordiv(double a, double b) { return std::floor(a / b); }

// Takes the sign of the divisor, as Python's % does (PyTorch's formula,
// overflow included).
int64_t remainder(int64_t a, int64_t b) {
  checkIntDivisor(b);
  return truncMod(wrapAdd(b, truncMod(a, b)), b);
}
double remainder(double a, double b) { return std::fmod(b + std::fmod(a, b), b); }

// `a ** b` in TorchScript: a float even for two ints.
double pow(double a, double b) {
  KILN_CHECK(!(a == 0.0 && b < 0.0), "0.0 cannot be raised to a negative power");
  return std::pow(a, b);
}
double powInts(int64_t a, int64_t b) { return pow(static_cast<double>(a), static_cast<double>(b)); }
// The Scalar overload skips the zero check: 0 ** -1 is inf there.
double powUnchecked(double a, double b) { return std::pow(a, b); }

template <typename T>
bool eq(T a, T b) {
  return a == b;
}
template <typename T>
bool ne(T a, T b) {
  return a != b;
}
template <typename T>
bool lt(T a, T b) {
  return a < b;
}
template <typename T>
bool le(T a, T b) {
  return a <= b;
}
template <typename T>
bool gt(T a, T b) {
  return a > b;
}
template <typename T>
bool ge(T a, T b) {
  return a >= b;
}
// Python's min/max of two numbers; a NaN first operand loses, as in PyTorch.
template <typename T>
T min(T a, T b) {
  return a < b ? a : b;
}
template <typename T>
T max(T a, T b) {
  return a > b ? a : b;
}

std::tuple<int64_t, int64_t> divmod(int64_t a, int64_t b) {
  checkIntDivisor(b);
  int64_t q = truncDiv(a, b);
  int64_t r = truncMod(a, b);
  if (r != 0 && (a < 0) != (b < 0)) {
    q -= 1;
    r += b;
  }
  return {q, r};
}
std::tuple<double, double> divmod(double a, double b) {
  KILN_CHECK(b != 0, "ZeroDivisionError: float divmod()");
  double rem = std::fmod(a, b);
  if (rem != 0 && (a < 0) != (b < 0)) rem += b;
  return {(a - rem) / b, rem};
}

// `a << b` and `a >> b` as x86 computes them: the count is taken mod 64.
int64_t lshift(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) << (b & 63)); }
int64_t rshift(int64_t a, int64_t b) { return a >> (b & 63); }

}  // namespace py

// PyTorch declares the operands of the mixed divmod overloads as C++ `int`
// and `float`, so they are narrowed to 32 bits first; the quotient is a
// checked floor of a float32 division.
template <typename A, typename B>
std::tuple<double, double> divmodNarrowed(A a, B b) {
  KILN_CHECK(b != 0, "ZeroDivisionError: float divmod()");
  double quot = static_cast<double>(number::integralFloatToInt(std::floor(a / b)));
  double rem = a - roundedProduct(quot, b);
  return {quot, rem};
}

// PyTorch's checked conversion of a float to an integer type whose range is
// [lowest, highest]: NaN, infinities and values outside it raise.
int64_t checkedToInt(double d, double lowest, double highest, const char* type_name) {
  KILN_CHECK(d >= lowest && d <= highest, "value cannot be converted to type ", type_name, " without overflow");
  return truncToInt(d);
}

// `int(x)` of a tensor element (Tensor.item<int64_t>()).
int64_t tensorToInt(const Tensor& t) {
  Scalar s = t.item();
  if (!s.isFloatingPoint()) return s.toLong();
  return checkedToInt(s.toDouble(), -0x1p63, 0x1p63, "int64_t");
}

// Tensor.is_nonzero(): the truth of a one-element tensor.
bool isNonzero(const Tensor& t) {
  KILN_CHECK(t.numel() != 0, "Boolean value of Tensor with no values is ambiguous");
  KILN_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  return t.item().toBool();
}

// A tensor passed where TorchScript expects a number (IntImplicit & co.).
void checkImplicitTensorToNumber(const Tensor& t, bool to_int) {
  KILN_CHECK(!t.requiresGrad(), "Cannot input a tensor that requires grad as a scalar argument");
  KILN_CHECK(t.dim() == 0, "Cannot input a tensor of dimension other than 0 as a scalar argument");
  KILN_CHECK(!to_int || isIntegralType(t.dtype(), false), "Cannot input a tensor of type ",
             scalarTypeShortName(t.dtype()), " as an integral argument");
}

// int("...") and float("..."): C's number syntax (leading whitespace, a
// sign; hex floats, inf and nan for floats) spanning the whole string.
int64_t parseInt(const std::string& s) {
  size_t end = 0;
  int64_t value = 0;
  try {
    value = std::stoll(s, &end);
  } catch (const std::logic_error&) {
    end = std::string::npos;
  }
  KILN_CHECK(end == s.size(), "invalid literal for int() with base 10: '", s, "'");
  return value;
}
double parseFloat(const std::string& s) {
  size_t end = 0;
  double value = 0;
  try {
    value = std::stod(s, &end);
  } catch (const std::logic_error&) {
    end = std::string::npos;
  }
  KILN_CHECK(end == s.size(), "could not convert string to float: '", s, "'");
  return value;
}

// The number of iterations of range(lo, hi, step), with PyTorch's int64
// wrapping.
int64_t rangeLength(int64_t lo, int64_t hi, int64_t step) {
  KILN_CHECK(step != 0, "range() arg 3 must not be zero");
  if (step > 0 && lo < hi) return wrapAdd(1, wrapSub(wrapSub(hi, 1), lo) / step);
  if (step < 0 && lo > hi) return wrapAdd(1, wrapSub(wrapSub(lo, 1), hi) / wrapNeg(step));
  return 0;
}

KILN_REGISTER_OPS(
    KILN_NUMBER_BINARY_OPS("aten::add", "", "int", "float", "Scalar", py::add, py::add, .fold(folds::addOrSubZero)),
    KILN_NUMBER_BINARY_OPS("aten::sub", "", "int", "float", "Scalar", py::sub, py::sub, .fold(folds::addOrSubZero)),
    KILN_NUMBER_BINARY_OPS("aten::mul", "", "int", "float", "Scalar", py::mul, py::mul, .fold(folds::mulByOne)),
    KILN_NUMBER_INT_FLOAT_OPS("aten::div", ".int", ".float", "float", "float", py::div, py::div),
    KILN_NUMBER_SCALAR_OP("aten::div", "float", py::div, py::div),
    KILN_NUMBER_BINARY_OPS("aten::floordiv", "", "int", "float", "Scalar", py::floordiv, py::floordiv,
                           .fold(folds::floorDivByOne)),
    KILN_NUMBER_BINARY_OPS("aten::remainder", "", "int", "float", "Scalar", py::remainder, py::remainder),
    KILN_NUMBER_INT_FLOAT_OPS("aten::pow", ".int", ".float", "float", "float", py::powInts, py::pow),
    KILN_NUMBER_MIXED_OPS("aten::pow", "float", py::pow),
    KILN_NUMBER_SCALAR_OP("aten::pow.Scalar_Scalar", "float", py::powUnchecked, py::powUnchecked),
    // PyTorch's kernel pushes the float power despite the `int` in its schema.
    op("aten::pow.int_to_int(int a, int b) -> int", [](int64_t a, int64_t b) { return py::powInts(a, b); }),
    op("aten::__round_to_zero_floordiv.int(int a, int b) -> int",
       [](int64_t a, int64_t b) {
         checkIntDivisor(b);
         return truncDiv(a, b);
       }),
    op("aten::divmod.int(int x, int y) -> (int, int)", [](int64_t a, int64_t b) { return py::divmod(a, b); }),
    op("aten::divmod.float(float x, float y) -> (float, float)", [](double a, double b) { return py::divmod(a, b); }),
    op("aten::divmod.int_float(int x, float y) -> (float, float)",
       [](int64_t a, double b) { return divmodNarrowed(static_cast<int32_t>(a), static_cast<float>(b)); }),
    op("aten::divmod.float_int(float x, int y) -> (float, float)",
       [](double a, int64_t b) { return divmodNarrowed(static_cast<float>(a), static_cast<int32_t>(b)); }), );

// Unary minus and abs; their Scalar forms pass results through C++ int/float.
namespace py {
int64_t neg(int64_t a) { return wrapNeg(a); }
double neg(double a) { return -a; }
int64_t abs(int64_t a) { return a < 0 ? wrapNeg(a) : a; }
double abs(double a) { return std::fabs(a); }
}  // namespace py

KILN_REGISTER_OPS(KILN_NUMBER_UNARY_OPS("aten::neg", "int", "float", int, float, py::neg),
                  KILN_NUMBER_UNARY_OPS("prim::abs", "int", "float", int, float, py::abs), );

KILN_REGISTER_OPS(
    KILN_NUMBER_BINARY_OPS("aten::eq", "", "bool", "bool", "bool", py::eq, py::eq, .fold(folds::equalToItself)),
    KILN_NUMBER_BINARY_OPS("aten::ne", "", "bool", "bool", "bool", py::ne, py::ne, .fold(folds::equalToItself)),
    KILN_NUMBER_BINARY_OPS("aten::lt", "", "bool", "bool", "bool", py::lt, py::lt),
    KILN_NUMBER_BINARY_OPS("aten::le", "", "bool", "bool", "bool", py::le, py::le),
    KILN_NUMBER_BINARY_OPS("aten::gt", "", "bool", "bool", "bool", py::gt, py::gt),
    KILN_NUMBER_BINARY_OPS("aten::ge", "", "bool", "bool", "bool", py::ge, py::ge),
    op("aten::eq.bool(bool a, bool b) -> bool", [](bool a, bool b) { return a == b; }).fold(folds::equalToItself),
    op("aten::ne.bool(bool a, bool b) -> bool", [](bool a, bool b) { return a != b; }).fold(folds::equalToItself),
    KILN_NUMBER_BINARY_OPS("prim::min", "", "int", "float", "Scalar", py::min, py::min),
    KILN_NUMBER_BINARY_OPS("prim::max", "", "int", "float", "Scalar", py::max, py::max),

    op("aten::__and__.bool(bool a, bool b) -> bool", [](bool a, bool b) { return a && b; }),
    op("aten::__or__.bool(bool a, bool b) -> bool", [](bool a, bool b) { return a || b; }),
    op("aten::__xor__.bool(bool a, bool b) -> bool", [](bool a, bool b) { return a != b; }),
    op("aten::__and__.int(int a, int b) -> int", [](int64_t a, int64_t b) { return a & b; }),
    op("aten::__or__.int(int a, int b) -> int", [](int64_t a, int64_t b) { return a | b; }),
    op("aten::__xor__.int(int a, int b) -> int", [](int64_t a, int64_t b) { return a ^ b; }),
    op("aten::__lshift__.int(int a, int b) -> int", [](int64_t a, int64_t b) { return py::lshift(a, b); }),
    op("aten::__rshift__.int(int a, int b) -> int", [](int64_t a, int64_t b) { return py::rshift(a, b); }),
    op("aten::__not__(bool self) -> bool", [](bool a) { return !a; }), );

// Conversions: bool(x), int(x), float(x) and the implicit tensor -> number
// conversions TorchScript inserts.
KILN_REGISTER_SCRIPT_OPS(op("aten::Bool.Tensor(Tensor a) -> bool", [](const Tensor& a) { return isNonzero(a); }),
                         op("aten::Bool.int(int a) -> bool", [](int64_t a) { return a != 0; }),
                         op("aten::Bool.float(float a) -> bool", [](double a) { return a != 0; }),

                         op("aten::Int.Tensor(Tensor a) -> int", [](const Tensor& a) { return tensorToInt(a); }),
                         op("aten::Int.bool(bool a) -> int", [](bool a) { return static_cast<int64_t>(a); }),
                         op("aten::Int.float(float a) -> int", [](double a) { return truncToInt(a); }),
                         // A float Scalar goes through a checked conversion to C++ int (32 bits).
                         op("aten::Int.Scalar(Scalar a) -> int",
                            [](const Scalar& a) {
                              KILN_CHECK(!a.isComplex() || a.toComplexDouble().imag() == 0,
                                         "value cannot be converted to type int without overflow");
                              if (!a.isFloatingPoint() && !a.isComplex()) return a.toLong();
                              return checkedToInt(a.toDouble(), std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max(), "int");
                            })
                             .fold(folds::conversionToOwnType),
                         op("aten::Int.str(str a) -> int", [](const std::string& a) { return parseInt(a); }),

                         op("aten::Float.Tensor(Tensor a) -> float",
                            [](const Tensor& a) { return a.item().toDouble(); }),
                         op("aten::Float.Scalar(Scalar a) -> float", [](const Scalar& a) { return a.toDouble(); })
                             .fold(folds::conversionToOwnType),
                         // PyTorch converts through a C++ float here: float32 precision.
                         op("aten::Float.int(int a) -> float",
                            [](int64_t a) { return static_cast<double>(static_cast<float>(a)); }),
                         op("aten::Float.bool(bool a) -> float", [](bool a) { return a ? 1.0 : 0.0; }),
                         op("aten::Float.str(str a) -> float", [](const std::string& a) { return parseFloat(a); }),

                         // `t.item()`: a Python number of the tensor's kind (bool, int or float).
                         op("aten::item(Tensor self) -> Scalar", [](const Tensor& self) { return self.item(); }),
                         op("aten::ScalarImplicit(Tensor a) -> Scalar",
                            [](const Tensor& a) {
                              checkImplicitTensorToNumber(a, false);
                              return a.item();
                            }),
                         op("aten::IntImplicit(Tensor a) -> int",
                            [](const Tensor& a) {
                              checkImplicitTensorToNumber(a, true);
                              return a.item().toLong();
                            }),
                         op("aten::FloatImplicit(Tensor a) -> float",
                            [](const Tensor& a) {
                              checkImplicitTensorToNumber(a, false);
                              return a.item().toDouble();
                            }),
                         // A plain 0-dim tensor, not a wrapped number: it promotes as a tensor.
                         op("prim::NumToTensor.Scalar(Scalar a) -> Tensor",
                            [](const Scalar& a) {
                              if (a.isComplex()) return scalarToTensor(a, ScalarType::ComplexDouble);
                              return a.isFloatingPoint() ? scalarToTensor(a, ScalarType::Double)
                                                         : scalarToTensor(a.toLong(), ScalarType::Long);
                            })
                             .traits(OpTrait::NeverRequiresGrad),
                         op("prim::NumToTensor.bool(bool a) -> Tensor", [](bool a) {
                           return scalarToTensor(Scalar(a), ScalarType::Bool);
                         }).traits(OpTrait::NeverRequiresGrad), );

// Tensor properties. kiln tensors are dense, strided, CPU and unnamed.
#define KILN_NOT_A_TENSOR_KIND(kind) op("prim::is_" kind "(Tensor a) -> bool", [](const Tensor&) { return false; })

KILN_REGISTER_OPS(
    op("prim::dtype(Tensor a) -> int", [](const Tensor& a) { return static_cast<int64_t>(a.dtype()); }),
    op("prim::device(Tensor a) -> Device", [](const Tensor&) { return IValue(Device(DeviceType::CPU)); }),
    // torch.strided is layout 0.
    op("prim::layout(Tensor a) -> Layout", [](const Tensor&) { return int64_t{0}; }),
    op("prim::requires_grad(Tensor a) -> bool", [](const Tensor& a) { return a.requiresGrad(); }),
    // prim::grad (`x.grad`) is autograd's: kiln/autograd/script_ops.cpp.
    op("prim::name(Tensor a) -> str?", [](const Tensor&) { return IValue(); }),
    // The same data without autograd: a view that does not require grad.
    op("prim::data(Tensor(a) a) -> Tensor(a)",
       [](const Tensor& a) {
         Tensor data = makeView(a, a.sizes(), a.strides(), a.storageOffset());
         data.impl()->setRequiresGrad(false);
         return data;
       })
        .shape(shapes::alias)
        .traits(OpTrait::NeverRequiresGrad),
    op("prim::is_cpu(Tensor a) -> bool", [](const Tensor&) { return true; }), KILN_NOT_A_TENSOR_KIND("cuda"),
    KILN_NOT_A_TENSOR_KIND("xpu"), KILN_NOT_A_TENSOR_KIND("sparse"), KILN_NOT_A_TENSOR_KIND("sparse_csr"),
    KILN_NOT_A_TENSOR_KIND("mkldnn"), KILN_NOT_A_TENSOR_KIND("mps"), KILN_NOT_A_TENSOR_KIND("vulkan"),
    KILN_NOT_A_TENSOR_KIND("ipu"), KILN_NOT_A_TENSOR_KIND("quantized"), KILN_NOT_A_TENSOR_KIND("meta"),
    KILN_NOT_A_TENSOR_KIND("ort"), KILN_NOT_A_TENSOR_KIND("nested"),

    op("aten::element_size(Tensor self) -> int",
       [](const Tensor& self) { return static_cast<int64_t>(self.itemsize()); }),
    op("aten::is_floating_point(Tensor self) -> bool", [](const Tensor& self) { return isFloatingType(self.dtype()); }),
    op("aten::is_signed(Tensor self) -> bool", [](const Tensor& self) { return isSignedType(self.dtype()); }),
    op("aten::is_complex(Tensor self) -> bool", [](const Tensor& self) { return isComplexType(self.dtype()); }),
    op("aten::is_nonzero(Tensor self) -> bool", [](const Tensor& self) { return isNonzero(self); }),
    op("aten::is_contiguous(Tensor self) -> bool", [](const Tensor& self) { return self.isContiguous(); }),
    op("aten::is_contiguous.memory_format(Tensor self, MemoryFormat memory_format) -> bool",
       [](const Tensor& self, int64_t memory_format) {
         return isContiguous(self, memoryFormatFromInt(memory_format));
       }),
    op("aten::storage_offset(Tensor self) -> int", [](const Tensor& self) { return self.storageOffset(); }),
    op("aten::is_conj(Tensor self) -> bool", [](const Tensor&) { return false; }),
    op("aten::is_neg(Tensor self) -> bool", [](const Tensor&) { return false; }),
    // -1: a CPU tensor.
    op("aten::get_device(Tensor self) -> int", [](const Tensor&) { return int64_t{-1}; }), );

#undef KILN_NOT_A_TENSOR_KIND

// dtype arithmetic (dtypes are ints in graphs).
KILN_REGISTER_OPS(
    op("aten::promote_types(ScalarType type1, ScalarType type2) -> ScalarType",
       [](ScalarType a, ScalarType b) { return static_cast<int64_t>(promoteTypes(a, b)); }),
    op("aten::can_cast(ScalarType from, ScalarType to) -> bool",
       [](ScalarType from, ScalarType to) { return canCast(from, to); }),
    // Python numbers take part as wrapped numbers, which promote only by category.
    op("aten::result_type.Tensor(Tensor tensor, Tensor other) -> ScalarType",
       [](const Tensor& tensor, const Tensor& other) { return static_cast<int64_t>(resultType(tensor, other)); }),
    op("aten::result_type.Scalar(Tensor tensor, Scalar other) -> ScalarType",
       [](const Tensor& tensor, const Scalar& other) { return static_cast<int64_t>(resultType(tensor, other)); }),
    op("aten::result_type.Scalar_Tensor(Scalar scalar, Tensor tensor) -> ScalarType",
       [](const Scalar& scalar, const Tensor& tensor) { return static_cast<int64_t>(resultType(tensor, scalar)); }),
    // Two Python numbers: int64 unless either is a float (then the default dtype).
    op("aten::result_type.Scalar_Scalar(Scalar scalar1, Scalar scalar2) -> ScalarType", [](const Scalar& a,
                                                                                           const Scalar& b) {
      return static_cast<int64_t>(a.isFloatingPoint() || b.isFloatingPoint() ? defaultFloatType() : ScalarType::Long);
    }), );

// Devices.
KILN_REGISTER_OPS(op("aten::device(str a) -> Device", [](const std::string& a) { return IValue(Device::parse(a)); }),
                  stackOp("aten::eq.device(Device a, Device b) -> bool",
                          [](Stack& stack) {
                            bool equal = stack[stack.size() - 2].toDevice() == stack.back().toDevice();
                            stack.pop_back();
                            stack.back() = equal;
                          }),
                  stackOp("aten::ne.device(Device a, Device b) -> bool",
                          [](Stack& stack) {
                            bool differ = stack[stack.size() - 2].toDevice() != stack.back().toDevice();
                            stack.pop_back();
                            stack.back() = differ;
                          }),
                  // None for a device without an index ("cpu", "cuda").
                  stackOp("prim::index(Device self) -> int?",
                          [](Stack& stack) {
                            Device d = stack.back().toDevice();
                            stack.back() = d.index < 0 ? IValue() : IValue(static_cast<int64_t>(d.index));
                          }),
                  stackOp("prim::type(Device self) -> str", [](Stack& stack) {
                    Device d = stack.back().toDevice();
                    stack.back() = Device(d.type).str();
                  }), );

// `is` and `is not` between two bools are `==` and `!=`.
bool identityOfBoolsAsEquality(Node* n) {
  if (n->inputs().size() != 2 || n->input(0)->type()->kind() != TypeKind::Bool ||
      n->input(1)->type()->kind() != TypeKind::Bool) {
    return false;
  }
  return replaceWithCall(n, n->kind() == aten::__is__ ? aten::eq : aten::ne, n->inputs().vec());
}

// Identity, optionals, the helpers of for-range loops, and warnings.
KILN_REGISTER_OPS(
    op("aten::__is__(t1 self, t2 obj) -> bool", [](const IValue& self, const IValue& obj) { return self.is(obj); })
        .normalize(identityOfBoolsAsEquality),
    op("aten::__isnot__(t1 self, t2 obj) -> bool", [](const IValue& self, const IValue& obj) { return !self.is(obj); })
        .normalize(identityOfBoolsAsEquality),
    // The compiler proved the value is not None: nothing to do.
    stackOp("prim::unchecked_unwrap_optional(t(a)? optional) -> t(a)", [](Stack&) {}),
    stackOp("aten::_unwrap_optional(t(a)? optional) -> t(a)",
            [](Stack& stack) { KILN_CHECK(!stack.back().isNone(), "Unwrapping null optional"); }),
    op("aten::__range_length(int lo, int hi, int step) -> int",
       [](int64_t lo, int64_t hi, int64_t step) { return rangeLength(lo, hi, step); }),
    op("aten::__derive_index(int index, int start, int step) -> int",
       [](int64_t index, int64_t start, int64_t step) { return wrapAdd(start, wrapMul(index, step)); }),
    // Compiled code is scripted by definition; the compiler folds `if` on it.
    op("aten::is_scripting() -> bool", [] { return true; }),
    // torch._C._get_tracing_state(): compiled code runs untraced.
    op("aten::_get_tracing_state() -> bool", [] { return false; }),
    // torch._C._infer_size: the broadcast of two shapes.
    op("aten::_infer_size(int[] a, int[] b) -> int[]",
       [](IntArrayRef a, IntArrayRef b) { return broadcastShapes(a, b, "_infer_size"); }),
    // What Python's default warning handler shows, without the source location.
    op("aten::warn(str message, int stacklevel=2) -> ()",
       [](const std::string& message, int64_t) { std::cerr << "UserWarning: " << message << std::endl; }), );

}  // namespace
}  // namespace kiln
