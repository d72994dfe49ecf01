#include "kiln/core/ivalue.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>

#include "kiln/tensor/copy.h"

namespace kiln {

ListObj::ListObj(TypePtr type, std::vector<IValue> elems) : element_type(std::move(type)), elements(std::move(elems)) {}
TupleObj::TupleObj(std::vector<IValue> elems, TypePtr t) : elements(std::move(elems)), type(std::move(t)) {}

IValue::IValue(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Double:
      tag_ = Tag::Double;
      payload_.d = s.toDouble();
      break;
    case Scalar::Kind::Int:
      tag_ = Tag::Int;
      payload_.i = s.toLong();
      break;
    case Scalar::Kind::Bool:
      tag_ = Tag::Bool;
      payload_.i = s.toBool();
      break;
    case Scalar::Kind::Complex:
      tag_ = Tag::Complex;
      payload_.p = makeIntrusive<ComplexObj>(s.toComplexDouble()).release();
      break;
  }
}

namespace {
template <typename Range>
IntrusivePtr<ListObj> makeList(const TypePtr& element_type, const Range& values) {
  std::vector<IValue> elems;
  elems.reserve(values.size());
  for (const auto& v : values) elems.emplace_back(v);
  return makeIntrusive<ListObj>(element_type, std::move(elems));
}
}  // namespace

IValue::IValue(const std::vector<int64_t>& v) : IValue(makeList(IntType::get(), v)) {}
IValue::IValue(IntArrayRef v) : IValue(makeList(IntType::get(), v)) {}
IValue::IValue(const std::vector<double>& v) : IValue(makeList(FloatType::get(), v)) {}
IValue::IValue(const std::vector<std::complex<double>>& v) : IValue(makeList(ComplexType::get(), v)) {}
IValue::IValue(const std::vector<std::string>& v) : IValue(makeList(StringType::get(), v)) {}
IValue::IValue(const std::vector<Tensor>& v) : IValue(makeList(TensorType::get(), v)) {}
// Starts as None: the assignment below swaps the old value out and destroys it.
IValue::IValue(const std::vector<bool>& v) : IValue() {
  std::vector<IValue> elems;
  for (bool b : v) elems.emplace_back(b);
  *this = IValue(makeIntrusive<ListObj>(BoolType::get(), std::move(elems)));
}

IValue IValue::tuple(std::vector<IValue> elements) { return IValue(makeIntrusive<TupleObj>(std::move(elements))); }

IValue IValue::list(TypePtr element_type, std::vector<IValue> elements) {
  return IValue(makeIntrusive<ListObj>(std::move(element_type), std::move(elements)));
}

const char* IValue::tagName() const {
  switch (tag_) {
    case Tag::None: return "None";
    case Tag::Tensor: return "Tensor";
    case Tag::Double: return "float";
    case Tag::Int: return "int";
    case Tag::Bool: return "bool";
    case Tag::Device: return "Device";
    case Tag::String: return "str";
    case Tag::List: return "list";
    case Tag::Tuple: return "tuple";
    case Tag::Dict: return "dict";
    case Tag::Object: return "object";
    case Tag::Future: return "Future";
    case Tag::Complex: return "complex";
  }
  return "?";
}

void IValue::wrongTag(const char* expected) const {
  KILN_ERROR("expected a value of type ", expected, " but got ", tagName());
}

bool IValue::isListOf(TypeKind kind) const { return isList() && toListRef().element_type->kind() == kind; }

Device IValue::toDevice() const {
  if (tag_ != Tag::Device) wrongTag("Device");
  return Device(static_cast<DeviceType>(payload_.i & 0xff), static_cast<int8_t>(payload_.i >> 8));
}
Scalar IValue::toScalar() const {
  switch (tag_) {
    case Tag::Double: return Scalar(payload_.d);
    case Tag::Int: return Scalar(payload_.i);
    case Tag::Bool: return Scalar(payload_.i != 0);
    case Tag::Complex: return Scalar(toComplexDouble());
    case Tag::Tensor: return toTensor().item();
    default: wrongTag("Scalar");
  }
}
const std::string& IValue::toStringRef() const {
  if (tag_ != Tag::String) wrongTag("str");
  return static_cast<StringObj*>(payload_.p)->value;
}
ListObj& IValue::toListRef() const {
  if (tag_ != Tag::List) wrongTag("list");
  return *static_cast<ListObj*>(payload_.p);
}
IntrusivePtr<ListObj> IValue::toList() const { return IntrusivePtr<ListObj>(&toListRef()); }
TupleObj& IValue::toTupleRef() const {
  if (tag_ != Tag::Tuple) wrongTag("tuple");
  return *static_cast<TupleObj*>(payload_.p);
}
IntrusivePtr<TupleObj> IValue::toTuple() const { return IntrusivePtr<TupleObj>(&toTupleRef()); }
DictObj& IValue::toDictRef() const {
  if (tag_ != Tag::Dict) wrongTag("dict");
  return *static_cast<DictObj*>(payload_.p);
}
IntrusivePtr<DictObj> IValue::toDict() const { return IntrusivePtr<DictObj>(&toDictRef()); }
ObjectObj& IValue::toObjectRef() const {
  if (tag_ != Tag::Object) wrongTag("object");
  return *static_cast<ObjectObj*>(payload_.p);
}
IntrusivePtr<ObjectObj> IValue::toObject() const { return IntrusivePtr<ObjectObj>(&toObjectRef()); }
FutureObj& IValue::toFutureRef() const {
  if (tag_ != Tag::Future) wrongTag("Future");
  return *static_cast<FutureObj*>(payload_.p);
}
IntrusivePtr<FutureObj> IValue::toFuture() const { return IntrusivePtr<FutureObj>(&toFutureRef()); }

DimVector IValue::toDimVector() const {
  DimVector out;
  if (tag_ == Tag::Int) {  // `int[1]` arguments accept a single int
    out.push_back(payload_.i);
    return out;
  }
  for (const IValue& v : toListRef().elements) out.push_back(v.toInt());
  return out;
}
std::vector<int64_t> IValue::toIntVector() const {
  std::vector<int64_t> out;
  for (const IValue& v : toListRef().elements) out.push_back(v.toInt());
  return out;
}
std::vector<double> IValue::toDoubleVector() const {
  std::vector<double> out;
  for (const IValue& v : toListRef().elements) out.push_back(v.toDouble());
  return out;
}
std::vector<std::complex<double>> IValue::toComplexVector() const {
  std::vector<std::complex<double>> out;
  for (const IValue& v : toListRef().elements) out.push_back(v.toComplexDouble());
  return out;
}
std::vector<bool> IValue::toBoolVector() const {
  std::vector<bool> out;
  for (const IValue& v : toListRef().elements) out.push_back(v.toBool());
  return out;
}
std::vector<std::string> IValue::toStringVector() const {
  std::vector<std::string> out;
  for (const IValue& v : toListRef().elements) out.push_back(v.toStringRef());
  return out;
}
std::vector<Tensor> IValue::toTensorVector() const {
  std::vector<Tensor> out;
  for (const IValue& v : toListRef().elements) out.push_back(v.toTensor());
  return out;
}

TypePtr IValue::type() const {
  switch (tag_) {
    case Tag::None: return NoneType::get();
    case Tag::Tensor: return TensorType::fromTensor(toTensor());
    case Tag::Double: return FloatType::get();
    case Tag::Int: return IntType::get();
    case Tag::Bool: return BoolType::get();
    case Tag::Device: return DeviceObjType::get();
    case Tag::String: return StringType::get();
    case Tag::List: return ListType::create(toListRef().element_type);
    case Tag::Tuple: {
      const TupleObj& t = toTupleRef();
      if (t.type) return t.type;
      std::vector<TypePtr> elems;
      for (const IValue& e : t.elements) elems.push_back(e.type());
      return TupleType::create(std::move(elems));
    }
    case Tag::Dict: return DictType::create(toDictRef().key_type, toDictRef().value_type);
    case Tag::Object: return toObjectRef().type;
    case Tag::Future: return FutureType::create(toFutureRef().element_type);
    case Tag::Complex: return ComplexType::get();
  }
  return AnyType::get();
}

bool IValue::isSameIdentity(const IValue& other) const {
  if (tag_ != other.tag_) return false;
  if (tag_ == Tag::Complex) return toComplexDouble() == other.toComplexDouble();
  if (isPointer()) return payload_.p == other.payload_.p;
  if (tag_ == Tag::Double) return payload_.d == other.payload_.d;
  return payload_.i == other.payload_.i;
}

namespace {

size_t combineHash(size_t seed, size_t h) { return seed ^ (h + 0x9e3779b9 + (seed << 6) + (seed >> 2)); }

// `bool(a == b)` for tensors: only one-element tensors have a truth value.
bool tensorsEqual(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  int64_t n = std::max(a.numel(), b.numel());
  KILN_CHECK(a.numel() == 1 && b.numel() == 1, "Boolean value of Tensor with ",
             n == 0 ? "no values" : "more than one value", " is ambiguous");
  Scalar x = a.item(), y = b.item();
  if (x.isComplex() || y.isComplex()) return x.toComplexDouble() == y.toComplexDouble();
  if (x.isFloatingPoint() || y.isFloatingPoint()) return x.toDouble() == y.toDouble();
  return x.toLong() == y.toLong();
}

// Inside containers identity implies equality (Python's `x is y or x == y`).
bool elementsEqual(const std::vector<IValue>& a, const std::vector<IValue>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is(b[i]) && a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

size_t IValue::hash(const IValue& v) {
  switch (v.tag_) {
    case Tag::None: return 0;
    case Tag::Bool: return std::hash<bool>()(v.payload_.i != 0);
    case Tag::Double: return std::hash<double>()(v.payload_.d);
    case Tag::Complex: {
      const std::complex<double> z = v.toComplexDouble();
      return combineHash(std::hash<double>()(z.real()), std::hash<double>()(z.imag()));
    }
    case Tag::Int: return std::hash<int64_t>()(v.payload_.i);
    case Tag::Device: return std::hash<int64_t>()(v.payload_.i);
    case Tag::Tensor: return std::hash<const void*>()(v.payload_.p);  // Tensor.__hash__ is id()
    case Tag::String: return std::hash<std::string>()(v.toStringRef());
    case Tag::Tuple: {
      size_t seed = 0;
      for (const IValue& e : v.toTupleRef().elements) seed = combineHash(seed, hash(e));
      return seed;
    }
    default: KILN_ERROR("unhashable type: '", v.type()->annotationStr(), "'");
  }
}

bool operator==(const IValue& a, const IValue& b) {
  switch (a.tag()) {
    case IValue::Tag::None: return b.isNone();
    case IValue::Tag::Tensor: return b.isTensor() && tensorsEqual(a.toTensor(), b.toTensor());
    case IValue::Tag::Double: return b.isDouble() && a.toDouble() == b.toDouble();
    case IValue::Tag::Complex: return b.isComplex() && a.toComplexDouble() == b.toComplexDouble();
    case IValue::Tag::Int: return b.isInt() && a.toInt() == b.toInt();
    case IValue::Tag::Bool: return b.isBool() && a.toBool() == b.toBool();
    case IValue::Tag::Device: return b.isDevice() && a.toDevice() == b.toDevice();
    case IValue::Tag::String: return b.isString() && a.toStringRef() == b.toStringRef();
    case IValue::Tag::List: return b.isList() && elementsEqual(a.toListRef().elements, b.toListRef().elements);
    case IValue::Tag::Tuple: return b.isTuple() && elementsEqual(a.toTupleRef().elements, b.toTupleRef().elements);
    case IValue::Tag::Dict: {
      if (!b.isDict()) return false;
      const DictObj& x = a.toDictRef();
      const DictObj& y = b.toDictRef();
      if (x.size() != y.size()) return false;
      for (const auto& [key, value] : x.items()) {
        const IValue* other = y.find(key);
        if (!other || (!value.is(*other) && value != *other)) return false;
      }
      return true;
    }
    case IValue::Tag::Object:
    case IValue::Tag::Future: return a.is(b);
  }
  return false;
}

size_t DictKeyHash::operator()(const IValue& key) const {
  switch (key.tag()) {
    case IValue::Tag::Int:
    case IValue::Tag::String:
    case IValue::Tag::Double:
    case IValue::Tag::Complex:
    case IValue::Tag::Bool:
    case IValue::Tag::Tensor:
    case IValue::Tag::Device:
    case IValue::Tag::None:
    case IValue::Tag::Tuple: return IValue::hash(key);
    default: KILN_ERROR("can't use a value of type ", key.tagName(), " as a dict key");
  }
}

bool DictKeyEqual::operator()(const IValue& a, const IValue& b) const {
  if (a.isTensor() && b.isTensor()) return a.is(b);
  return a == b;
}

// --- printing ---------------------------------------------------------------------

void printQuotedString(std::ostream& out, std::string_view s) {
  out << '"';
  for (char c : s) {
    switch (c) {
      case '\\': out << "\\\\"; break;
      case '\'': out << "\\'"; break;
      case '"': out << "\\\""; break;
      case '\a': out << "\\a"; break;
      case '\b': out << "\\b"; break;
      case '\f': out << "\\f"; break;
      case '\n': out << "\\n"; break;
      case '\r': out << "\\r"; break;
      case '\t': out << "\\t"; break;
      case '\v': out << "\\v"; break;
      default:
        if (c > 0x1f && c < 0x7f) {
          out << c;
        } else {
          // Three "octal digits" computed on the signed char, as PyTorch 1.13
          // does: bytes above 0x7f come out as characters below '0'. The IR
          // parser reads them back.
          int v = static_cast<signed char>(c);
          char buf[4] = "000";
          buf[2] = static_cast<char>(buf[2] + v % 8);
          v /= 8;
          buf[1] = static_cast<char>(buf[1] + v % 8);
          v /= 8;
          buf[0] = static_cast<char>(buf[0] + v);
          out << '\\' << buf;
        }
    }
  }
  out << '"';
}

namespace {

void printMaxPrecision(std::ostream& out, double d) {
  auto precision = out.precision();
  out << std::setprecision(std::numeric_limits<double>::max_digits10) << d << std::setprecision(precision);
}

// `print`'s float: integral values in int64 range as `2.`, others with 17 digits.
void printPlainDouble(std::ostream& out, double d) {
  int c = std::fpclassify(d);
  if ((c == FP_NORMAL || c == FP_ZERO) && std::fabs(d) < 9.2233720368547758e18) {
    auto i = static_cast<int64_t>(d);
    if (static_cast<double>(i) == d) {
      out << i << ".";
      return;
    }
  }
  printMaxPrecision(out, d);
}

template <typename Elements, typename Print>
void printSequence(std::ostream& out, const Elements& elements, const char* open, const char* close, Print print) {
  out << open;
  bool first = true;
  for (const auto& e : elements) {
    if (!first) out << ", ";
    first = false;
    print(e);
  }
  out << close;
}

}  // namespace

void printIRDouble(std::ostream& out, double d) {
  int c = std::fpclassify(d);
  if ((c == FP_NORMAL || c == FP_ZERO) && std::fabs(d) < 1e10) {
    auto i = static_cast<int64_t>(d);
    if (static_cast<double>(i) == d) {
      if (i == 0 && std::signbit(d)) out << "-";
      out << i << ".";
      return;
    }
  }
  printMaxPrecision(out, d);
}

namespace {
// c10's double text, which complex numbers use for both parts: `2.` for
// integral values below 1e10 (no sign on -0.), else 17 significant digits.
void printC10Double(std::ostream& out, double d) {
  int c = std::fpclassify(d);
  if ((c == FP_NORMAL || c == FP_ZERO) && std::fabs(d) < 1e10) {
    auto i = static_cast<int64_t>(d);
    if (static_cast<double>(i) == d) {
      out << i << ".";
      return;
    }
  }
  printMaxPrecision(out, d);
}
}  // namespace

void printIRComplex(std::ostream& out, std::complex<double> z) {
  printC10Double(out, z.real());
  out << (z.imag() >= 0 ? "+" : "-");
  printC10Double(out, std::fabs(z.imag()));
  out << "j";
}

void printPythonComplex(std::ostream& out, std::complex<double> z) {
  // Python's repr: shortest round-trip digits, `(re+imj)` unless the real
  // part is +0.
  auto part = [](double d) {
    if (std::isnan(d)) return std::string("nan");
    if (std::isinf(d)) return std::string(d > 0 ? "inf" : "-inf");
    char buf[32];
    for (int precision = 1; precision <= 17; ++precision) {
      std::snprintf(buf, sizeof buf, "%.*g", precision, d);
      if (std::strtod(buf, nullptr) == d) break;
    }
    return std::string(buf);
  };
  const bool bare = z.real() == 0 && !std::signbit(z.real());
  if (bare) {
    out << part(z.imag()) << "j";
    return;
  }
  const double im = z.imag();
  out << "(" << part(z.real()) << (im >= 0 || std::isnan(im) ? "+" : "-") << part(std::isnan(im) ? im : std::fabs(im))
      << "j)";
}

std::ostream& operator<<(std::ostream& out, const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::Complex: printIRComplex(out, v.toComplexDouble()); return out;
    case IValue::Tag::None: return out << "None";
    case IValue::Tag::Tensor: printTensorATenStyle(out, v.toTensor()); return out;
    case IValue::Tag::Double: printPlainDouble(out, v.toDouble()); return out;
    case IValue::Tag::Int: return out << v.toInt();
    case IValue::Tag::Bool: return out << (v.toBool() ? "True" : "False");
    case IValue::Tag::Device: return out << v.toDevice();
    case IValue::Tag::String: return out << v.toStringRef();
    case IValue::Tag::List:
      printSequence(out, v.toListRef().elements, "[", "]", [&](const IValue& e) { out << e; });
      return out;
    case IValue::Tag::Tuple: {
      const auto& elems = v.toTupleRef().elements;
      printSequence(out, elems, "(", elems.size() == 1 ? ",)" : ")", [&](const IValue& e) { out << e; });
      return out;
    }
    case IValue::Tag::Dict:
      printSequence(out, v.toDictRef().items(), "{", "}",
                    [&](const auto& kv) { out << kv.first << ": " << kv.second; });
      return out;
    case IValue::Tag::Object:
      return out << "<" << v.toObjectRef().type->name() << " object at " << static_cast<const void*>(&v.toObjectRef())
                 << ">";
    case IValue::Tag::Future: return out << "Future";
  }
  return out;
}

namespace {
// A list's or dict's type cannot be read off its elements when it is empty or
// its element type is a union: such constants print as `annotate(T, ...)`.
bool elementTypeInferable(const TypePtr& t) {
  TypeKind k = t->kind();
  return k != TypeKind::Union && k != TypeKind::Optional && k != TypeKind::Number && k != TypeKind::Any;
}
}  // namespace

std::ostream& IValue::repr(std::ostream& out, const Formatter& custom) const {
  if (custom && custom(out, *this)) return out;
  auto recurse = [&](const IValue& e) { e.repr(out, custom); };
  switch (tag_) {
    case Tag::Double: printIRDouble(out, toDouble()); return out;
    case Tag::String: printQuotedString(out, toStringRef()); return out;
    case Tag::Device:
      out << "torch.device(";
      printQuotedString(out, toDevice().str());
      return out << ")";
    case Tag::List: {
      const ListObj& list = toListRef();
      bool annotate = list.elements.empty() || !elementTypeInferable(list.element_type);
      if (annotate) out << "annotate(" << ListType::create(list.element_type)->annotationStr() << ", ";
      printSequence(out, list.elements, "[", "]", recurse);
      return out << (annotate ? ")" : "");
    }
    case Tag::Tuple: {
      const auto& elems = toTupleRef().elements;
      printSequence(out, elems, "(", elems.size() == 1 ? ",)" : ")", recurse);
      return out;
    }
    case Tag::Dict: {
      const DictObj& dict = toDictRef();
      bool annotate = dict.empty() || !elementTypeInferable(dict.value_type);
      if (annotate) out << "annotate(" << DictType::create(dict.key_type, dict.value_type)->annotationStr() << ",";
      printSequence(out, dict.items(), "{", "}", [&](const auto& kv) {
        kv.first.repr(out, custom);
        out << ": ";
        kv.second.repr(out, custom);
      });
      return out << (annotate ? ")" : "");
    }
    default: return out << *this;
  }
}

// --- PyTorch's C++ tensor text --------------------------------------------------

namespace {

struct ATenFormat {
  double scale = 1;
  int width = 0;
  enum class Style { Default, Fixed, Scientific } style = Style::Default;
};

void applyStyle(std::ostream& out, const ATenFormat& f) {
  switch (f.style) {
    case ATenFormat::Style::Default: out << std::defaultfloat << std::setprecision(6); break;
    case ATenFormat::Style::Fixed: out << std::fixed << std::setprecision(4); break;
    case ATenFormat::Style::Scientific: out << std::scientific << std::setprecision(4); break;
  }
}

// The column width and notation for a set of values, ATen's __printFormat
// (including its comparison of the signed value against the magnitude).
ATenFormat chooseFormat(const double* p, int64_t n) {
  ATenFormat f;
  if (n == 0) {
    f.width = 0;
    return f;
  }
  bool int_mode = true;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(p[i]) && p[i] != std::ceil(p[i])) {
      int_mode = false;
      break;
    }
  }
  int64_t offset = 0;
  while (offset < n && !std::isfinite(p[offset])) ++offset;
  double exp_min = 1, exp_max = 1;
  if (offset < n) {
    exp_min = exp_max = std::fabs(p[offset]);
    for (int64_t i = offset; i < n; ++i) {
      double z = std::fabs(p[i]);
      if (std::isfinite(z)) {
        if (z < exp_min) exp_min = z;
        if (p[i] > exp_max) exp_max = z;
      }
    }
    exp_min = exp_min != 0 ? std::floor(std::log10(exp_min)) + 1 : 1;
    exp_max = exp_max != 0 ? std::floor(std::log10(exp_max)) + 1 : 1;
  }
  if (int_mode) {
    if (exp_max > 9) {
      f.width = 11;
      f.style = ATenFormat::Style::Scientific;
    } else {
      f.width = static_cast<int>(exp_max) + 1;
    }
  } else if (exp_max - exp_min > 4) {
    f.width = 11;
    if (std::fabs(exp_max) > 99 || std::fabs(exp_min) > 99) f.width += 1;
    f.style = ATenFormat::Style::Scientific;
  } else if (exp_max > 5 || exp_max < 0) {
    f.width = 7;
    f.scale = std::pow(10, exp_max - 1);
    f.style = ATenFormat::Style::Fixed;
  } else {
    f.width = exp_max == 0 ? 7 : static_cast<int>(exp_max) + 6;
    f.style = ATenFormat::Style::Fixed;
  }
  return f;
}

void printScale(std::ostream& out, double scale) {
  out << std::defaultfloat << std::setprecision(6) << scale << " *\n";
}

void printIndent(std::ostream& out, int64_t indent) { out << std::string(static_cast<size_t>(indent), ' '); }

void printMatrix(std::ostream& out, const double* p, int64_t rows, int64_t cols, int64_t indent) {
  const int64_t linesize = 80;
  ATenFormat f = chooseFormat(p, rows * cols);
  applyStyle(out, f);
  printIndent(out, indent);
  int64_t per_line = (linesize - indent) / (f.width + 1);
  for (int64_t first = 0, last; first < cols; first = last + 1) {
    last = first + per_line <= cols ? first + per_line - 1 : cols - 1;
    if (per_line < cols) {
      if (first != 0) out << "\n";
      out << "Columns " << first + 1 << " to " << last + 1;
      printIndent(out, indent);
    }
    if (f.scale != 1) {
      printScale(out, f.scale);
      applyStyle(out, f);
      printIndent(out, indent);
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = first; c <= last; ++c) {
        out << std::setw(f.width) << p[r * cols + c] / f.scale;
        if (c == last) {
          out << "\n";
          if (r != rows - 1) {
            printIndent(out, indent);
            if (f.scale != 1) out << " ";
          }
        } else {
          out << " ";
        }
      }
    }
  }
}

}  // namespace

void printTensorATenStyle(std::ostream& out, const Tensor& t) {
  if (!t.defined()) {
    out << "[ Tensor (undefined) ]";
    return;
  }
  std::ios_base::fmtflags flags = out.flags();
  std::streamsize precision = out.precision();
  Tensor d = contiguous(to(t, ScalarType::Double));
  const double* p = static_cast<const double*>(d.rawData());
  int64_t n = t.numel();
  std::string type_name = "CPU" + std::string(scalarTypeShortName(t.dtype())) + "Type";
  if (t.dim() == 0) {
    out << std::defaultfloat << p[0] << "\n[ " << type_name << "{}";
  } else if (t.dim() == 1) {
    if (n > 0) {
      ATenFormat f = chooseFormat(p, n);
      if (f.scale != 1) printScale(out, f.scale);
      applyStyle(out, f);
      for (int64_t i = 0; i < n; ++i) out << std::setw(f.width) << p[i] / f.scale << "\n";
    }
    out << "[ " << type_name << "{" << t.size(0) << "}";
  } else if (t.dim() == 2) {
    if (n > 0) printMatrix(out, p, t.size(0), t.size(1), 0);
    out << "[ " << type_name << "{" << t.size(0) << "," << t.size(1) << "}";
  } else {
    if (n > 0) {
      // One matrix per index of the leading dims, headed `(i,j,.,.) = `;
      // ATen counts with the first index varying fastest.
      int64_t rows = t.size(-2), cols = t.size(-1);
      int64_t outer = n / (rows * cols);
      std::vector<int64_t> counter(static_cast<size_t>(t.dim() - 2), 0);
      for (int64_t m = 0; m < outer; ++m) {
        if (m) out << "\n";
        out << "(";
        int64_t offset = 0;
        for (size_t i = 0; i < counter.size(); ++i) {
          out << counter[i] + 1 << ",";
          offset = offset * t.size(static_cast<int64_t>(i)) + counter[i];
        }
        out << ".,.) = \n";
        printMatrix(out, p + offset * rows * cols, rows, cols, 1);
        for (size_t i = 0; i < counter.size(); ++i) {
          if (++counter[i] < t.size(static_cast<int64_t>(i))) break;
          counter[i] = 0;
        }
      }
    }
    out << "[ " << type_name << "{" << t.size(0);
    for (int64_t i = 1; i < t.dim(); ++i) out << "," << t.size(i);
    out << "}";
  }
  out << " ]";
  out.flags(flags);
  out.precision(precision);
}

// --- dicts, objects, futures ---------------------------------------------------------

const IValue* DictObj::find(const IValue& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

IValue* DictObj::find(const IValue& key) {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const IValue& DictObj::at(const IValue& key) const {
  const IValue* v = find(key);
  if (!v) {
    std::ostringstream k;
    key.repr(k);
    KILN_ERROR("KeyError: ", k.str());
  }
  return *v;
}

bool DictObj::insertOrAssign(IValue key, IValue value) {
  if (IValue* existing = find(key)) {
    *existing = std::move(value);
    return false;
  }
  index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
  return true;
}

bool DictObj::insert(IValue key, IValue value) {
  if (contains(key)) return false;
  index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
  return true;
}

bool DictObj::erase(const IValue& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  size_t position = it->second;
  index_.erase(it);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(position));
  for (auto& [k, i] : index_) {
    if (i > position) --i;
  }
  return true;
}

void DictObj::clear() {
  entries_.clear();
  index_.clear();
}

const IValue& ObjectObj::getAttr(std::string_view name) const {
  auto slot = type->findAttributeSlot(name);
  KILN_CHECK(slot && *slot < slots.size(), "'", type->name(), "' object has no attribute '", name, "'");
  return slots[*slot];
}

void ObjectObj::setAttr(std::string_view name, IValue value) {
  auto slot = type->findAttributeSlot(name);
  if (!slot) slot = type->addAttribute(std::string(name), value.type());
  if (*slot >= slots.size()) slots.resize(*slot + 1);
  slots[*slot] = std::move(value);
}

IValue& ObjectObj::slot(size_t index) {
  if (index >= slots.size()) slots.resize(type->numAttributes() > index ? type->numAttributes() : index + 1);
  return slots[index];
}

bool FutureObj::completed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_;
}

bool FutureObj::hasError() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return has_error_;
}

void FutureObj::markCompleted(IValue value) {
  std::unique_lock<std::mutex> lock(mutex_);
  KILN_CHECK(!completed_, "a Future was completed twice");
  value_ = std::move(value);
  finish(lock);
}

void FutureObj::setError(std::string message) {
  std::unique_lock<std::mutex> lock(mutex_);
  KILN_CHECK(!completed_, "a Future was completed twice");
  has_error_ = true;
  error_ = std::move(message);
  finish(lock);
}

void FutureObj::finish(std::unique_lock<std::mutex>& lock) {
  completed_ = true;
  std::vector<std::function<void(FutureObj&)>> callbacks = std::move(callbacks_);
  callbacks_.clear();
  lock.unlock();
  finished_.notify_all();
  for (auto& cb : callbacks) cb(*this);
}

IValue FutureObj::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return completed_; });
  KILN_CHECK(!has_error_, error_);
  return value_;
}

void FutureObj::addCallback(std::function<void(FutureObj&)> callback) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!completed_) {
    callbacks_.push_back(std::move(callback));
    return;
  }
  lock.unlock();
  callback(*this);
}

}  // namespace kiln
