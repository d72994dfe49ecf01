#pragma once
// TorchScript's static types. Types are immutable and shared (class types
// excepted: their attributes grow while a class is compiled); singletons for
// the simple ones (IntType::get()), factories for the composite ones.
//
// Three spellings, as in PyTorch 1.13:
//   str()            `int[]`, `Tensor?`, `(Tensor, int)`, `Dict(str, Tensor)`, `Future(int)`
//   operator<<       the IR text: str() plus tensor refinements
//                    (`Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)`),
//                    `NamedTuple(x : int)`, `Future[int]`
//   annotationStr()  Python annotations: `List[int]`, `Optional[Tensor]`, `Tuple[int, str]`
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/device.h"
#include "kiln/tensor/scalar_type.h"

namespace kiln {

class Tensor;
class Function;

// The order is PyTorch 1.13's: a Union's members are sorted by it, which
// decides how `Union(float, int, str)` prints.
enum class TypeKind {
  Any,
  Tensor,
  Tuple,
  List,
  Dict,
  Number,  // `Scalar` in schemas: int, float or complex
  Float,
  Complex,
  Future,
  RRef,
  Int,
  None,
  String,
  Generator,
  Bool,
  Optional,
  Var,  // a type variable of a schema (`t`, `t[]`)
  Device,
  Stream,
  Function,
  Class,
  Capsule,
  Union,
};

class Type;
using TypePtr = std::shared_ptr<const Type>;

class Type : public std::enable_shared_from_this<Type> {
 public:
  explicit Type(TypeKind kind) : kind_(kind) {}
  virtual ~Type() = default;
  TypeKind kind() const { return kind_; }
  virtual std::string str() const = 0;
  virtual std::string annotationStr() const { return str(); }
  // The IR spelling (operator<<); differs from str() for refined tensors,
  // named tuples, futures and the containers holding them.
  virtual void print(std::ostream& out) const;
  virtual bool equals(const Type& other) const { return kind_ == other.kind_; }
  // Whether a value of this type may be used where `other` is expected.
  bool isSubtypeOf(const Type& other) const;
  bool isSubtypeOf(const TypePtr& other) const { return isSubtypeOf(*other); }
  virtual std::vector<TypePtr> containedTypes() const { return {}; }
  // This type with its contained types replaced (same count as containedTypes()).
  virtual TypePtr withContained(std::vector<TypePtr> contained) const;
  // Whether a schema type variable occurs in this type.
  bool hasFreeVariables() const;
  TypePtr shared() const { return shared_from_this(); }

  template <typename T>
  const T* cast() const {
    return kind_ == T::Kind ? static_cast<const T*>(this) : nullptr;
  }
  template <typename T>
  bool isa() const {
    return kind_ == T::Kind;
  }

 protected:
  virtual bool isSubtypeOfSameKind(const Type& other) const { return equals(other); }

 private:
  TypeKind kind_;
};

bool operator==(const Type& a, const Type& b);
inline bool operator!=(const Type& a, const Type& b) { return !(a == b); }
std::ostream& operator<<(std::ostream& out, const Type& t);
// The IR spelling as a string.
std::string irStr(const Type& t);

#define KILN_SIMPLE_TYPE(NAME, KIND, TEXT)            \
  class NAME : public Type {                          \
   public:                                            \
    static constexpr TypeKind Kind = TypeKind::KIND;  \
    NAME() : Type(Kind) {}                            \
    std::string str() const override { return TEXT; } \
    static const TypePtr& get();                      \
  };
KILN_SIMPLE_TYPE(AnyType, Any, "Any")
KILN_SIMPLE_TYPE(IntType, Int, "int")
KILN_SIMPLE_TYPE(FloatType, Float, "float")
KILN_SIMPLE_TYPE(ComplexType, Complex, "complex")
KILN_SIMPLE_TYPE(BoolType, Bool, "bool")
KILN_SIMPLE_TYPE(StringType, String, "str")
KILN_SIMPLE_TYPE(NoneType, None, "NoneType")
KILN_SIMPLE_TYPE(DeviceObjType, Device, "Device")
KILN_SIMPLE_TYPE(GeneratorType, Generator, "Generator")
KILN_SIMPLE_TYPE(StreamObjType, Stream, "Stream")
KILN_SIMPLE_TYPE(CapsuleType, Capsule, "Capsule")
#undef KILN_SIMPLE_TYPE

class NumberType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Number;
  NumberType() : Type(Kind) {}
  std::string str() const override { return "Scalar"; }
  std::string annotationStr() const override { return "number"; }
  bool equals(const Type& other) const override;
  static const TypePtr& get();
};

// Per-dimension facts about a tensor: unknown rank (nullopt), or a rank with
// each entry known or not.
class VaryingShape {
 public:
  VaryingShape() = default;
  explicit VaryingShape(size_t rank) : dims_(std::vector<std::optional<int64_t>>(rank)) {}
  explicit VaryingShape(std::vector<std::optional<int64_t>> dims) : dims_(std::move(dims)) {}
  static VaryingShape complete(const std::vector<int64_t>& dims);

  std::optional<size_t> size() const { return dims_ ? std::optional<size_t>(dims_->size()) : std::nullopt; }
  const std::optional<int64_t>& operator[](size_t i) const { return (*dims_)[i]; }
  const std::optional<std::vector<std::optional<int64_t>>>& dims() const { return dims_; }
  bool isComplete() const;
  // The values when every one is known.
  std::optional<std::vector<int64_t>> concrete() const;
  friend bool operator==(const VaryingShape& a, const VaryingShape& b) { return a.dims_ == b.dims_; }
  // What both agree on: unequal entries (or ranks) become unknown.
  VaryingShape merge(const VaryingShape& other) const;

 private:
  std::optional<std::vector<std::optional<int64_t>>> dims_;
};

// A tensor, optionally refined with what is known statically.
class TensorType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Tensor;
  TensorType() : Type(Kind) {}
  TensorType(std::optional<ScalarType> dtype, std::optional<Device> device, VaryingShape sizes, VaryingShape strides,
             std::optional<bool> requires_grad, std::optional<bool> undefined = std::nullopt);
  // The unrefined `Tensor`.
  static const TypePtr& get();
  static TypePtr create(std::optional<ScalarType> dtype, std::optional<Device> device, VaryingShape sizes,
                        VaryingShape strides, std::optional<bool> requires_grad,
                        std::optional<bool> undefined = std::nullopt);
  // Dtype, device, rank and requires_grad known; sizes and strides not (`Float(*, *)`).
  static TypePtr createWithRank(std::optional<ScalarType> dtype, std::optional<Device> device, size_t rank,
                                std::optional<bool> requires_grad);
  // Everything known, from a value.
  static TypePtr fromTensor(const Tensor& t);

  std::optional<ScalarType> scalarType() const { return dtype_; }
  std::optional<Device> device() const { return device_; }
  std::optional<bool> requiresGrad() const { return requires_grad_; }
  std::optional<bool> undefined() const { return undefined_; }
  const VaryingShape& sizes() const { return sizes_; }
  const VaryingShape& strides() const { return strides_; }
  std::optional<size_t> dim() const { return sizes_.size(); }
  bool isComplete() const;
  bool isRefined() const;

  TypePtr withScalarType(std::optional<ScalarType> dtype) const;
  TypePtr withRequiresGrad(std::optional<bool> requires_grad) const;
  TypePtr withDevice(std::optional<Device> device) const;
  TypePtr withSizes(VaryingShape sizes) const;  // strides become unknown
  TypePtr withSizesStrides(VaryingShape sizes, VaryingShape strides) const;
  // Keeps dtype, device, rank and requires_grad; drops sizes and strides.
  TypePtr dimensionedOnly() const;
  // The facts both types share.
  TypePtr merge(const TensorType& other) const;

  std::string str() const override { return "Tensor"; }
  void print(std::ostream& out) const override;
  bool equals(const Type& other) const override;

 protected:
  bool isSubtypeOfSameKind(const Type& other) const override;

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  VaryingShape sizes_;
  VaryingShape strides_;
  std::optional<bool> requires_grad_;
  std::optional<bool> undefined_;
};

// Types with one contained type.
class SingleElementType : public Type {
 public:
  SingleElementType(TypeKind kind, TypePtr elem) : Type(kind), elem_(std::move(elem)) {}
  const TypePtr& elementType() const { return elem_; }
  const TypePtr& getElementType() const { return elem_; }
  bool equals(const Type& other) const override;
  std::vector<TypePtr> containedTypes() const override { return {elem_}; }

 protected:
  TypePtr elem_;
};

class ListType : public SingleElementType {
 public:
  static constexpr TypeKind Kind = TypeKind::List;
  explicit ListType(TypePtr elem) : SingleElementType(Kind, std::move(elem)) {}
  static TypePtr create(TypePtr elem) { return std::make_shared<ListType>(std::move(elem)); }
  static const TypePtr& ofInts();
  static const TypePtr& ofFloats();
  static const TypePtr& ofBools();
  static const TypePtr& ofStrings();
  static const TypePtr& ofTensors();
  static const TypePtr& ofOptionalTensors();
  std::string str() const override { return elem_->str() + "[]"; }
  std::string annotationStr() const override { return "List[" + elem_->annotationStr() + "]"; }
  void print(std::ostream& out) const override;
  TypePtr withContained(std::vector<TypePtr> contained) const override;
};

class OptionalType : public SingleElementType {
 public:
  static constexpr TypeKind Kind = TypeKind::Optional;
  explicit OptionalType(TypePtr elem) : SingleElementType(Kind, std::move(elem)) {}
  // Optional[Optional[T]] is Optional[T]; Optional[Union[A, None, B]] is Optional[Union[A, B]].
  static TypePtr create(TypePtr elem);
  static const TypePtr& ofTensor();
  std::string str() const override { return elem_->str() + "?"; }
  std::string annotationStr() const override { return "Optional[" + elem_->annotationStr() + "]"; }
  void print(std::ostream& out) const override;
  bool equals(const Type& other) const override;
  TypePtr withContained(std::vector<TypePtr> contained) const override;

 protected:
  bool isSubtypeOfSameKind(const Type& other) const override;
};

class FutureType : public SingleElementType {
 public:
  static constexpr TypeKind Kind = TypeKind::Future;
  explicit FutureType(TypePtr elem) : SingleElementType(Kind, std::move(elem)) {}
  static TypePtr create(TypePtr elem) { return std::make_shared<FutureType>(std::move(elem)); }
  std::string str() const override { return "Future(" + elem_->str() + ")"; }
  std::string annotationStr() const override { return "Future[" + elem_->annotationStr() + "]"; }
  void print(std::ostream& out) const override;
  TypePtr withContained(std::vector<TypePtr> contained) const override;

 protected:
  bool isSubtypeOfSameKind(const Type& other) const override;
};

class RRefType : public SingleElementType {
 public:
  static constexpr TypeKind Kind = TypeKind::RRef;
  explicit RRefType(TypePtr elem) : SingleElementType(Kind, std::move(elem)) {}
  static TypePtr create(TypePtr elem) { return std::make_shared<RRefType>(std::move(elem)); }
  std::string str() const override { return "RRef(" + elem_->str() + ")"; }
  std::string annotationStr() const override { return "RRef[" + elem_->annotationStr() + "]"; }
  void print(std::ostream& out) const override;
  TypePtr withContained(std::vector<TypePtr> contained) const override;
};

// A tuple; a named tuple also has a qualified name and field names.
class TupleType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Tuple;
  explicit TupleType(std::vector<TypePtr> elems, std::optional<std::string> name = std::nullopt,
                     std::vector<std::string> field_names = {});
  static TypePtr create(std::vector<TypePtr> elems) { return std::make_shared<TupleType>(std::move(elems)); }
  static TypePtr createNamed(std::optional<std::string> qualified_name, std::vector<std::string> field_names,
                             std::vector<TypePtr> elems);
  const std::vector<TypePtr>& elements() const { return elems_; }
  bool isNamed() const { return !field_names_.empty() || name_.has_value(); }
  const std::optional<std::string>& name() const { return name_; }
  const std::vector<std::string>& fieldNames() const { return field_names_; }
  std::string str() const override;
  std::string annotationStr() const override;
  void print(std::ostream& out) const override;
  bool equals(const Type& other) const override;
  std::vector<TypePtr> containedTypes() const override { return elems_; }
  TypePtr withContained(std::vector<TypePtr> contained) const override;

 protected:
  bool isSubtypeOfSameKind(const Type& other) const override;

 private:
  std::vector<TypePtr> elems_;
  std::optional<std::string> name_;
  std::vector<std::string> field_names_;
};

class DictType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Dict;
  DictType(TypePtr key, TypePtr value) : Type(Kind), key_(std::move(key)), value_(std::move(value)) {}
  static TypePtr create(TypePtr key, TypePtr value) {
    return std::make_shared<DictType>(std::move(key), std::move(value));
  }
  const TypePtr& keyType() const { return key_; }
  const TypePtr& valueType() const { return value_; }
  std::string str() const override { return "Dict(" + key_->str() + ", " + value_->str() + ")"; }
  std::string annotationStr() const override {
    return "Dict[" + key_->annotationStr() + ", " + value_->annotationStr() + "]";
  }
  bool equals(const Type& other) const override;
  std::vector<TypePtr> containedTypes() const override { return {key_, value_}; }
  TypePtr withContained(std::vector<TypePtr> contained) const override;

 private:
  TypePtr key_, value_;
};

// Union[A, B, ...]: flattened, deduplicated (subtypes folded into their
// supertypes) and sorted, so equal unions print alike.
class UnionType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Union;
  explicit UnionType(std::vector<TypePtr> standardized) : Type(Kind), types_(std::move(standardized)) {}
  // Returns an OptionalType for {T, None}, and the type itself when only one remains.
  static TypePtr create(std::vector<TypePtr> types);
  const std::vector<TypePtr>& members() const { return types_; }
  bool canHoldType(const Type& t) const;
  std::string str() const override;
  std::string annotationStr() const override;
  bool equals(const Type& other) const override;
  std::vector<TypePtr> containedTypes() const override { return types_; }
  TypePtr withContained(std::vector<TypePtr> contained) const override;

 private:
  std::string unionStr(bool annotation) const;
  std::vector<TypePtr> types_;
};

class CompilationUnit;
class IValue;

// A TorchScript class: a qualified name (`__torch__.Foo`), its attributes,
// constants and methods. Attributes are added while the class is compiled
// (or, for modules, while a module is built), so the type is mutable.
//
// A module type (is_module) is what torch.nn.Module instances script to:
// its attributes say what they hold (parameter, buffer, submodule or plain
// attribute), and a ModuleList/ModuleDict type is iterable (its submodules
// are attributes "0".."n-1" or named by their keys, iterated by unrolling).
//
// Methods are owned by the compilation unit that compiled them; the type
// names them and knows that unit weakly (objects keep it alive). When the
// unit goes, it takes its methods off the type.
enum class SlotKind { Attribute, Parameter, Buffer, Module };
const char* slotKindName(SlotKind kind);
std::optional<SlotKind> slotKindFromName(std::string_view name);

enum class IterableKind { None, List, Dict };

class ClassType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Class;
  explicit ClassType(std::string qualified_name, bool is_module = false, IterableKind iterable = IterableKind::None)
      : Type(Kind), name_(std::move(qualified_name)), is_module_(is_module), iterable_(iterable) {}
  static std::shared_ptr<ClassType> create(std::string qualified_name, bool is_module = false,
                                           IterableKind iterable = IterableKind::None) {
    return std::make_shared<ClassType>(std::move(qualified_name), is_module, iterable);
  }
  const std::string& name() const { return name_; }
  // The name without its `__torch__.` prefix and module path (`Foo`).
  std::string unqualifiedName() const;
  bool isModule() const { return is_module_; }
  IterableKind iterableKind() const { return iterable_; }

  size_t numAttributes() const { return attributes_.size(); }
  const std::string& attributeName(size_t slot) const { return attributes_[slot].name; }
  const TypePtr& attributeType(size_t slot) const { return attributes_[slot].type; }
  SlotKind attributeKind(size_t slot) const { return attributes_[slot].kind; }
  std::optional<size_t> findAttributeSlot(std::string_view name) const;
  bool hasAttribute(std::string_view name) const { return findAttributeSlot(name).has_value(); }
  // Raises naming the class when the name is taken (by an attribute or a constant).
  size_t addAttribute(std::string name, TypePtr type, SlotKind kind = SlotKind::Attribute);
  // The type of an attribute set later (an Optional attribute refined, ...).
  void setAttributeType(size_t slot, TypePtr type) { attributes_[slot].type = std::move(type); }

  // Constants (`__constants__`, Final): `self.name` is the value itself.
  // (IValue is defined by ivalue.h, which includes this header.)
  void addConstant(std::string name, std::shared_ptr<const IValue> value);
  const IValue* findConstant(std::string_view name) const;
  const std::vector<std::pair<std::string, std::shared_ptr<const IValue>>>& constants() const { return constants_; }

  // Methods are owned by their compilation unit; the type only names them.
  void addMethod(Function* method);
  void removeMethod(Function* method);
  Function* findMethod(std::string_view name) const;
  const std::vector<Function*>& methods() const { return methods_; }
  void setCompilationUnit(std::weak_ptr<CompilationUnit> unit) { unit_ = std::move(unit); }
  // The unit holding the methods; null when it is gone (or there is none).
  std::shared_ptr<CompilationUnit> compilationUnit() const { return unit_.lock(); }

  std::string str() const override { return name_; }
  bool equals(const Type& other) const override;

 private:
  struct Attribute {
    std::string name;
    TypePtr type;
    SlotKind kind;
  };
  std::string name_;
  bool is_module_;
  IterableKind iterable_;
  std::vector<Attribute> attributes_;
  std::vector<std::pair<std::string, std::shared_ptr<const IValue>>> constants_;
  std::vector<Function*> methods_;
  std::weak_ptr<CompilationUnit> unit_;
};
using ClassTypePtr = std::shared_ptr<ClassType>;

// A TorchScript function used as a value (prim::Constant of a callee for
// prim::CallFunction). Graphs compiled from source hold the callee itself,
// so calls across compilation units resolve; graphs parsed from IR text only
// name it, and the runtime finds it by name.
class FunctionType : public Type {
 public:
  static constexpr TypeKind Kind = TypeKind::Function;
  explicit FunctionType(std::string qualified_name = "", std::shared_ptr<Function> function = nullptr)
      : Type(Kind), name_(std::move(qualified_name)), function_(std::move(function)) {}
  static const TypePtr& get();
  static TypePtr create(std::string qualified_name, std::shared_ptr<Function> function = nullptr) {
    return std::make_shared<FunctionType>(std::move(qualified_name), std::move(function));
  }
  const std::string& name() const { return name_; }
  const std::shared_ptr<Function>& function() const { return function_; }
  std::string str() const override { return "Function"; }
  bool equals(const Type& other) const override;

 private:
  std::string name_;
  std::shared_ptr<Function> function_;
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

// The least type both are subtypes of, PyTorch 1.13's rules: a subtype
// relation, merged tensor refinements, Optional for None, element-wise for
// tuples and futures; nullopt when there is none (or a Union with
// `default_to_union`).
std::optional<TypePtr> unifyTypes(const TypePtr& a, const TypePtr& b, bool default_to_union = false);
// `t` with every tensor refinement dropped (Float(2)[] -> Tensor[]).
TypePtr unshapedType(const TypePtr& t);

// Parses a Python annotation: `int`, `List[int]`, `Optional[Tensor]`,
// `Tuple[int, str]`, `Tuple[()]`, `Dict[str, Tensor]`, `Union[int, str]`,
// `Future[T]`, `Any`, `torch.Tensor`. Errors name the column with a caret.
TypePtr parseTypeAnnotation(std::string_view text);

}  // namespace kiln
