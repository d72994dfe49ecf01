#include "kiln/core/ivalue.h"

#include <ostream>

namespace kiln {

ListObj::ListObj(TypePtr type, std::vector<IValue> elems) : element_type(std::move(type)), elements(std::move(elems)) {}

IValue::IValue(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Double: tag_ = Tag::Double; payload_.d = s.toDouble(); break;
    case Scalar::Kind::Int: tag_ = Tag::Int; payload_.i = s.toLong(); break;
    case Scalar::Kind::Bool: tag_ = Tag::Bool; payload_.i = s.toBool(); break;
  }
}

namespace {
template <typename Range>
IntrusivePtr<ListObj> makeList(const TypePtr& type, const Range& values) {
  std::vector<IValue> elems;
  elems.reserve(values.size());
  for (const auto& v : values) elems.emplace_back(v);
  return makeIntrusive<ListObj>(type, std::move(elems));
}
}  // namespace

IValue::IValue(const std::vector<int64_t>& v) : IValue(makeList(ListType::ofInts(), v)) {}
IValue::IValue(IntArrayRef v) : IValue(makeList(ListType::ofInts(), v)) {}
IValue::IValue(const std::vector<double>& v) : IValue(makeList(ListType::ofFloats(), v)) {}
IValue::IValue(const std::vector<Tensor>& v) : IValue(makeList(ListType::ofTensors(), v)) {}

const char* IValue::tagName() const {
  switch (tag_) {
    case Tag::None: return "None";
    case Tag::Tensor: return "Tensor";
    case Tag::Double: return "float";
    case Tag::Int: return "int";
    case Tag::Bool: return "bool";
    case Tag::String: return "str";
    case Tag::List: return "list";
    case Tag::Tuple: return "tuple";
  }
  return "?";
}

void IValue::wrongTag(const char* expected) const {
  KILN_ERROR("expected a value of type ", expected, " but got ", tagName());
}

Tensor IValue::toTensor() const {
  if (tag_ != Tag::Tensor) wrongTag("Tensor");
  return Tensor(IntrusivePtr<TensorImpl>(static_cast<TensorImpl*>(payload_.p)));
}
double IValue::toDouble() const {
  if (tag_ == Tag::Double) return payload_.d;
  if (tag_ == Tag::Int || tag_ == Tag::Bool) return static_cast<double>(payload_.i);
  wrongTag("float");
}
int64_t IValue::toInt() const {
  if (tag_ == Tag::Int || tag_ == Tag::Bool) return payload_.i;
  wrongTag("int");
}
bool IValue::toBool() const {
  if (tag_ == Tag::Bool) return payload_.i != 0;
  wrongTag("bool");
}
Scalar IValue::toScalar() const {
  switch (tag_) {
    case Tag::Double: return Scalar(payload_.d);
    case Tag::Int: return Scalar(payload_.i);
    case Tag::Bool: return Scalar(payload_.i != 0);
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

DimVector IValue::toDimVector() const {
  DimVector out;
  if (tag_ == Tag::Int) {  // `int[1]` arguments accept a single int
    out.push_back(payload_.i);
    return out;
  }
  for (const IValue& v : toListRef().elements) out.push_back(v.toInt());
  return out;
}
std::vector<double> IValue::toDoubleVector() const {
  std::vector<double> out;
  for (const IValue& v : toListRef().elements) out.push_back(v.toDouble());
  return out;
}
std::vector<Tensor> IValue::toTensorVector() const {
  std::vector<Tensor> out;
  for (const IValue& v : toListRef().elements) out.push_back(v.toTensor());
  return out;
}

bool IValue::isSameIdentity(const IValue& other) const {
  if (tag_ != other.tag_) return false;
  if (isPointer()) return payload_.p == other.payload_.p;
  if (tag_ == Tag::Double) return payload_.d == other.payload_.d;
  return payload_.i == other.payload_.i;
}

std::ostream& operator<<(std::ostream& out, const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None: return out << "None";
    case IValue::Tag::Tensor: return out << v.toTensor();
    case IValue::Tag::Double: return out << v.toDouble();
    case IValue::Tag::Int: return out << v.toInt();
    case IValue::Tag::Bool: return out << (v.toBool() ? "True" : "False");
    case IValue::Tag::String: return out << v.toStringRef();
    case IValue::Tag::List: {
      out << "[";
      const auto& elems = v.toListRef().elements;
      for (size_t i = 0; i < elems.size(); ++i) out << (i ? ", " : "") << elems[i];
      return out << "]";
    }
    case IValue::Tag::Tuple: {
      out << "(";
      const auto& elems = v.toTupleRef().elements;
      for (size_t i = 0; i < elems.size(); ++i) out << (i ? ", " : "") << elems[i];
      return out << (elems.size() == 1 ? ",)" : ")");
    }
  }
  return out;
}

}  // namespace kiln
