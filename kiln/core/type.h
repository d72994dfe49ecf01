#pragma once
// TorchScript's static types. Types are immutable and shared; singletons for
// the simple ones (IntType::get()), factories for the composite ones.
// Printing follows PyTorch 1.13: `int[]`, `Tensor?`, `(Tensor, int)`, `Dict(str, Tensor)`.
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

enum class TypeKind {
  Any,
  Tensor,
  Int,
  Float,
  Bool,
  String,
  None,
  Number,  // Scalar in schemas: int, float or bool
  Device,
  Generator,
  List,
  Optional,
  Tuple,
  Dict,
  Future,
  Var,  // a type variable of a schema (`t`, `t[]`)
};

class Type;
using TypePtr = std::shared_ptr<const Type>;

class Type : public std::enable_shared_from_this<Type> {
 public:
  explicit Type(TypeKind kind) : kind_(kind) {}
  virtual ~Type() = default;
  TypeKind kind() const { return kind_; }
  virtual std::string str() const = 0;
  virtual bool equals(const Type& other) const { return kind_ == other.kind_; }
  // Whether a value of this type may be used where `other` is expected.
  virtual bool isSubtypeOf(const Type& other) const;
  virtual std::vector<TypePtr> containedTypes() const { return {}; }
  template <typename T>
  const T* cast() const {
    return kind_ == T::Kind ? static_cast<const T*>(this) : nullptr;
  }

 private:
  TypeKind kind_;
};

bool operator==(const Type& a, const Type& b);

#define KILN_SIMPLE_TYPE(NAME, KIND, TEXT)                         \
  class NAME : public Type {                                       \
   public:                                                         \
    static constexpr TypeKind Kind = TypeKind::KIND;               \
    NAME() : Type(Kind) {}                                         \
    std::string str() const override { return TEXT; }              \
    static const TypePtr& get();                                   \
  };
KILN_SIMPLE_TYPE(AnyType, Any, "Any")
KILN_SIMPLE_TYPE(TensorType, Tensor, "Tensor")
KILN_SIMPLE_TYPE(IntType, Int, "int")
KILN_SIMPLE_TYPE(FloatType, Float, "float")
KILN_SIMPLE_TYPE(BoolType, Bool, "bool")
KILN_SIMPLE_TYPE(StringType, String, "str")
KILN_SIMPLE_TYPE(NoneType, None, "NoneType")
KILN_SIMPLE_TYPE(NumberType, Number, "Scalar")
KILN_SIMPLE_TYPE(DeviceObjType, Device, "Device")
KILN_SIMPLE_TYPE(GeneratorType, Generator, "Generator")
#undef KILN_SIMPLE_TYPE

class ListType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::List;
  explicit ListType(TypePtr elem) : Type(Kind), elem_(std::move(elem)) {}
  static TypePtr create(TypePtr elem) { return std::make_shared<ListType>(std::move(elem)); }
  static const TypePtr& ofInts();
  static const TypePtr& ofFloats();
  static const TypePtr& ofBools();
  static const TypePtr& ofTensors();
  const TypePtr& elementType() const { return elem_; }
  std::string str() const override { return elem_->str() + "[]"; }
  bool equals(const Type& other) const override;
  bool isSubtypeOf(const Type& other) const override;
  std::vector<TypePtr> containedTypes() const override { return {elem_}; }

 private:
  TypePtr elem_;
};

class OptionalType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Optional;
  explicit OptionalType(TypePtr elem) : Type(Kind), elem_(std::move(elem)) {}
  static TypePtr create(TypePtr elem) { return std::make_shared<OptionalType>(std::move(elem)); }
  const TypePtr& elementType() const { return elem_; }
  std::string str() const override { return elem_->str() + "?"; }
  bool equals(const Type& other) const override;
  bool isSubtypeOf(const Type& other) const override;
  std::vector<TypePtr> containedTypes() const override { return {elem_}; }

 private:
  TypePtr elem_;
};

class TupleType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Tuple;
  explicit TupleType(std::vector<TypePtr> elems) : Type(Kind), elems_(std::move(elems)) {}
  static TypePtr create(std::vector<TypePtr> elems) { return std::make_shared<TupleType>(std::move(elems)); }
  const std::vector<TypePtr>& elements() const { return elems_; }
  std::string str() const override;
  bool equals(const Type& other) const override;
  bool isSubtypeOf(const Type& other) const override;
  std::vector<TypePtr> containedTypes() const override { return elems_; }

 private:
  std::vector<TypePtr> elems_;
};

class DictType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Dict;
  DictType(TypePtr key, TypePtr value) : Type(Kind), key_(std::move(key)), value_(std::move(value)) {}
  static TypePtr create(TypePtr key, TypePtr value) { return std::make_shared<DictType>(std::move(key), std::move(value)); }
  const TypePtr& keyType() const { return key_; }
  const TypePtr& valueType() const { return value_; }
  std::string str() const override { return "Dict(" + key_->str() + ", " + value_->str() + ")"; }
  bool equals(const Type& other) const override;
  std::vector<TypePtr> containedTypes() const override { return {key_, value_}; }

 private:
  TypePtr key_, value_;
};

class FutureType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Future;
  explicit FutureType(TypePtr elem) : Type(Kind), elem_(std::move(elem)) {}
  static TypePtr create(TypePtr elem) { return std::make_shared<FutureType>(std::move(elem)); }
  const TypePtr& elementType() const { return elem_; }
  std::string str() const override { return "Future(" + elem_->str() + ")"; }
  bool equals(const Type& other) const override;
  std::vector<TypePtr> containedTypes() const override { return {elem_}; }

 private:
  TypePtr elem_;
};

// A schema's type variable: `t` in `aten::append.t(t[](a!) self, t(c -> *) el)`.
class VarType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Var;
  explicit VarType(std::string name) : Type(Kind), name_(std::move(name)) {}
  static TypePtr create(std::string name) { return std::make_shared<VarType>(std::move(name)); }
  const std::string& name() const { return name_; }
  std::string str() const override { return name_; }
  bool equals(const Type& other) const override;

 private:
  std::string name_;
};

}  // namespace kiln
