#include "kiln/core/type.h"

namespace kiln {

bool operator==(const Type& a, const Type& b) { return a.equals(b); }

bool Type::isSubtypeOf(const Type& other) const {
  if (other.kind() == TypeKind::Any) return true;
  if (other.kind() == TypeKind::Optional) {
    return kind_ == TypeKind::None || isSubtypeOf(*static_cast<const OptionalType&>(other).elementType());
  }
  if (other.kind() == TypeKind::Number) {
    return kind_ == TypeKind::Int || kind_ == TypeKind::Float || kind_ == TypeKind::Number;
  }
  return equals(other);
}

#define KILN_SIMPLE_TYPE_GET(NAME)                                      \
  const TypePtr& NAME::get() {                                          \
    static const TypePtr instance = std::make_shared<NAME>();           \
    return instance;                                                    \
  }
KILN_SIMPLE_TYPE_GET(AnyType)
KILN_SIMPLE_TYPE_GET(TensorType)
KILN_SIMPLE_TYPE_GET(IntType)
KILN_SIMPLE_TYPE_GET(FloatType)
KILN_SIMPLE_TYPE_GET(BoolType)
KILN_SIMPLE_TYPE_GET(StringType)
KILN_SIMPLE_TYPE_GET(NoneType)
KILN_SIMPLE_TYPE_GET(NumberType)
KILN_SIMPLE_TYPE_GET(DeviceObjType)
KILN_SIMPLE_TYPE_GET(GeneratorType)
#undef KILN_SIMPLE_TYPE_GET

const TypePtr& ListType::ofInts() {
  static const TypePtr t = create(IntType::get());
  return t;
}
const TypePtr& ListType::ofFloats() {
  static const TypePtr t = create(FloatType::get());
  return t;
}
const TypePtr& ListType::ofBools() {
  static const TypePtr t = create(BoolType::get());
  return t;
}
const TypePtr& ListType::ofTensors() {
  static const TypePtr t = create(TensorType::get());
  return t;
}

bool ListType::equals(const Type& other) const {
  auto o = other.cast<ListType>();
  return o && *elem_ == *o->elem_;
}

bool ListType::isSubtypeOf(const Type& other) const {
  // Lists are invariant, as in TorchScript.
  if (other.kind() == TypeKind::List) return equals(other);
  return Type::isSubtypeOf(other);
}

bool OptionalType::equals(const Type& other) const {
  auto o = other.cast<OptionalType>();
  return o && *elem_ == *o->elem_;
}

bool OptionalType::isSubtypeOf(const Type& other) const {
  if (auto o = other.cast<OptionalType>()) return elem_->isSubtypeOf(*o->elem_);
  return other.kind() == TypeKind::Any;
}

std::string TupleType::str() const {
  std::string s = "(";
  for (size_t i = 0; i < elems_.size(); ++i) {
    if (i) s += ", ";
    s += elems_[i]->str();
  }
  return s + ")";
}

bool TupleType::equals(const Type& other) const {
  auto o = other.cast<TupleType>();
  if (!o || o->elems_.size() != elems_.size()) return false;
  for (size_t i = 0; i < elems_.size(); ++i) {
    if (!(*elems_[i] == *o->elems_[i])) return false;
  }
  return true;
}

bool TupleType::isSubtypeOf(const Type& other) const {
  // Tuples are covariant.
  if (auto o = other.cast<TupleType>()) {
    if (o->elems_.size() != elems_.size()) return false;
    for (size_t i = 0; i < elems_.size(); ++i) {
      if (!elems_[i]->isSubtypeOf(*o->elems_[i])) return false;
    }
    return true;
  }
  return Type::isSubtypeOf(other);
}

bool DictType::equals(const Type& other) const {
  auto o = other.cast<DictType>();
  return o && *key_ == *o->key_ && *value_ == *o->value_;
}

bool FutureType::equals(const Type& other) const {
  auto o = other.cast<FutureType>();
  return o && *elem_ == *o->elem_;
}

bool VarType::equals(const Type& other) const {
  auto o = other.cast<VarType>();
  return o && o->name_ == name_;
}

}  // namespace kiln
