#include "kiln/core/type.h"

#include <algorithm>
#include <cctype>
#include <ostream>
#include <sstream>

#include "kiln/core/function.h"
#include "kiln/core/interface_type.h"
#include "kiln/tensor/tensor.h"
#include "kiln/util/error.h"
#include "kiln/util/source_highlight.h"

namespace kiln {

bool operator==(const Type& a, const Type& b) { return &a == &b || a.equals(b); }

std::ostream& operator<<(std::ostream& out, const Type& t) {
  t.print(out);
  return out;
}

std::string irStr(const Type& t) {
  std::ostringstream out;
  t.print(out);
  return out.str();
}

void Type::print(std::ostream& out) const { out << str(); }

TypePtr Type::withContained(std::vector<TypePtr> contained) const {
  KILN_INTERNAL_ASSERT(contained.empty(), "type ", str(), " has no contained types");
  return shared();
}

bool Type::hasFreeVariables() const {
  if (kind_ == TypeKind::Var) return true;
  for (const TypePtr& t : containedTypes()) {
    if (t->hasFreeVariables()) return true;
  }
  return false;
}

namespace {

// The members a union-like type stands for: Optional[T] is T's members plus
// None, Scalar is int, float and complex.
void flattenUnion(const TypePtr& t, std::vector<TypePtr>& out) {
  if (auto u = t->cast<UnionType>()) {
    for (const TypePtr& m : u->members()) flattenUnion(m, out);
  } else if (auto o = t->cast<OptionalType>()) {
    flattenUnion(o->elementType(), out);
    out.push_back(NoneType::get());
  } else if (t->kind() == TypeKind::Number) {
    out.push_back(IntType::get());
    out.push_back(FloatType::get());
    out.push_back(ComplexType::get());
  } else {
    out.push_back(t);
  }
}

bool containsType(const std::vector<TypePtr>& types, const Type& t) {
  return std::any_of(types.begin(), types.end(), [&](const TypePtr& m) { return *m == t; });
}

bool sameMembers(const std::vector<TypePtr>& a, const std::vector<TypePtr>& b) {
  if (a.size() != b.size()) return false;
  return std::all_of(a.begin(), a.end(), [&](const TypePtr& t) { return containsType(b, *t); });
}

bool isNumberMembers(const std::vector<TypePtr>& types) {
  return types.size() == 3 && containsType(types, *IntType::get()) && containsType(types, *FloatType::get()) &&
         containsType(types, *ComplexType::get());
}

// Folds each member into an earlier one it unifies with (right to left, as
// PyTorch does, so the survivors keep their first positions), then sorts by
// kind and spelling.
void standardizeUnion(std::vector<TypePtr>& types) {
  if (types.size() > 1) {
    size_t end = types.size() - 1;
    for (size_t i = types.size() - 1; i > 0; --i) {
      for (size_t j = std::min(i - 1, end);; --j) {
        bool i_none = types[i]->kind() == TypeKind::None, j_none = types[j]->kind() == TypeKind::None;
        std::optional<TypePtr> unified;
        if (i_none == j_none) unified = unifyTypes(types[i], types[j]);
        if (unified) {
          types[j] = *unified;
          types[i] = types[end];
          --end;
          break;
        }
        if (j == 0) break;
      }
    }
    types.erase(types.begin() + static_cast<std::ptrdiff_t>(end) + 1, types.end());
  }
  std::sort(types.begin(), types.end(), [](const TypePtr& a, const TypePtr& b) {
    if (a->kind() != b->kind()) return a->kind() < b->kind();
    return a->str() < b->str();
  });
}

}  // namespace

bool Type::isSubtypeOf(const Type& rhs) const {
  if (rhs.kind() == TypeKind::Any || this == &rhs) return true;
  // A class is a subtype of an interface it implements.
  if (auto* iface = dynamic_cast<const InterfaceType*>(&rhs); iface && kind_ == TypeKind::Class) {
    return iface->isImplementedBy(static_cast<const ClassType&>(*this));
  }
  if (kind_ == rhs.kind() && isSubtypeOfSameKind(rhs)) return true;
  switch (kind_) {
    case TypeKind::Union:
      for (const TypePtr& m : static_cast<const UnionType*>(this)->members()) {
        if (!m->isSubtypeOf(rhs)) return false;
      }
      return true;
    case TypeKind::Optional:
      if (auto u = rhs.cast<UnionType>()) {
        return u->canHoldType(*NoneType::get()) &&
               static_cast<const OptionalType*>(this)->elementType()->isSubtypeOf(rhs);
      }
      return false;
    case TypeKind::None:
      if (rhs.kind() == TypeKind::Optional) return true;
      break;
    default: break;
  }
  if (auto o = rhs.cast<OptionalType>()) return isSubtypeOf(*o->elementType());
  if (auto u = rhs.cast<UnionType>()) return u->canHoldType(*this);
  if (rhs.kind() == TypeKind::Number) {
    return kind_ == TypeKind::Int || kind_ == TypeKind::Float || kind_ == TypeKind::Complex;
  }
  return false;
}

#define KILN_SIMPLE_TYPE_GET(NAME)                            \
  const TypePtr& NAME::get() {                                \
    static const TypePtr instance = std::make_shared<NAME>(); \
    return instance;                                          \
  }
KILN_SIMPLE_TYPE_GET(AnyType)
KILN_SIMPLE_TYPE_GET(IntType)
KILN_SIMPLE_TYPE_GET(FloatType)
KILN_SIMPLE_TYPE_GET(ComplexType)
KILN_SIMPLE_TYPE_GET(BoolType)
KILN_SIMPLE_TYPE_GET(StringType)
KILN_SIMPLE_TYPE_GET(NoneType)
KILN_SIMPLE_TYPE_GET(DeviceObjType)
KILN_SIMPLE_TYPE_GET(GeneratorType)
KILN_SIMPLE_TYPE_GET(StreamObjType)
KILN_SIMPLE_TYPE_GET(CapsuleType)
KILN_SIMPLE_TYPE_GET(NumberType)
#undef KILN_SIMPLE_TYPE_GET

bool NumberType::equals(const Type& other) const {
  if (other.kind() == Kind) return true;
  if (auto u = other.cast<UnionType>()) return isNumberMembers(u->members());
  return false;
}

// --- tensors -----------------------------------------------------------------

VaryingShape VaryingShape::complete(const std::vector<int64_t>& dims) {
  return VaryingShape(std::vector<std::optional<int64_t>>(dims.begin(), dims.end()));
}

bool VaryingShape::isComplete() const {
  if (!dims_) return false;
  return std::all_of(dims_->begin(), dims_->end(), [](const auto& d) { return d.has_value(); });
}

std::optional<std::vector<int64_t>> VaryingShape::concrete() const {
  if (!isComplete()) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& d : *dims_) out.push_back(*d);
  return out;
}

VaryingShape VaryingShape::merge(const VaryingShape& other) const {
  if (!dims_ || !other.dims_ || dims_->size() != other.dims_->size()) return VaryingShape();
  std::vector<std::optional<int64_t>> out(dims_->size());
  for (size_t i = 0; i < out.size(); ++i) {
    if ((*dims_)[i] == (*other.dims_)[i]) out[i] = (*dims_)[i];
  }
  return VaryingShape(std::move(out));
}

TensorType::TensorType(std::optional<ScalarType> dtype, std::optional<Device> device, VaryingShape sizes,
                       VaryingShape strides, std::optional<bool> requires_grad, std::optional<bool> undefined)
    : Type(Kind), dtype_(dtype), device_(device), sizes_(std::move(sizes)), strides_(std::move(strides)),
      requires_grad_(requires_grad), undefined_(undefined) {}

const TypePtr& TensorType::get() {
  static const TypePtr instance = std::make_shared<TensorType>();
  return instance;
}

TypePtr TensorType::create(std::optional<ScalarType> dtype, std::optional<Device> device, VaryingShape sizes,
                           VaryingShape strides, std::optional<bool> requires_grad, std::optional<bool> undefined) {
  return std::make_shared<TensorType>(dtype, device, std::move(sizes), std::move(strides), requires_grad, undefined);
}

TypePtr TensorType::createWithRank(std::optional<ScalarType> dtype, std::optional<Device> device, size_t rank,
                                   std::optional<bool> requires_grad) {
  return create(dtype, device, VaryingShape(rank), VaryingShape(rank), requires_grad);
}

TypePtr TensorType::fromTensor(const Tensor& t) {
  if (!t.defined()) return create(std::nullopt, std::nullopt, {}, {}, std::nullopt, true);
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  return create(t.dtype(), Device(DeviceType::CPU), VaryingShape::complete(sizes), VaryingShape::complete(strides),
                t.requiresGrad(), false);
}

bool TensorType::isComplete() const { return dtype_ && device_ && sizes_.isComplete() && strides_.isComplete(); }

bool TensorType::isRefined() const {
  return dtype_ || device_ || sizes_.size() || strides_.size() || requires_grad_ || undefined_;
}

TypePtr TensorType::withScalarType(std::optional<ScalarType> dtype) const {
  return create(dtype, device_, sizes_, strides_, requires_grad_, undefined_);
}
TypePtr TensorType::withRequiresGrad(std::optional<bool> requires_grad) const {
  return create(dtype_, device_, sizes_, strides_, requires_grad, undefined_);
}
TypePtr TensorType::withDevice(std::optional<Device> device) const {
  return create(dtype_, device, sizes_, strides_, requires_grad_, undefined_);
}
TypePtr TensorType::withSizes(VaryingShape sizes) const {
  VaryingShape strides = sizes.size() ? VaryingShape(*sizes.size()) : VaryingShape();
  return create(dtype_, device_, std::move(sizes), std::move(strides), requires_grad_, undefined_);
}
TypePtr TensorType::withSizesStrides(VaryingShape sizes, VaryingShape strides) const {
  return create(dtype_, device_, std::move(sizes), std::move(strides), requires_grad_, undefined_);
}
TypePtr TensorType::dimensionedOnly() const {
  VaryingShape shape = sizes_.size() ? VaryingShape(*sizes_.size()) : VaryingShape();
  return create(dtype_, device_, shape, shape, requires_grad_, undefined_);
}

TypePtr TensorType::merge(const TensorType& other) const {
  auto same = [](const auto& a, const auto& b) { return a == b ? a : std::nullopt; };
  return create(same(dtype_, other.dtype_), same(device_, other.device_), sizes_.merge(other.sizes_),
                strides_.merge(other.strides_), same(requires_grad_, other.requires_grad_),
                same(undefined_, other.undefined_));
}

bool TensorType::equals(const Type& other) const {
  auto o = other.cast<TensorType>();
  return o && dtype_ == o->dtype_ && device_ == o->device_ && sizes_ == o->sizes_ && strides_ == o->strides_ &&
         requires_grad_ == o->requires_grad_ && undefined_ == o->undefined_;
}

bool TensorType::isSubtypeOfSameKind(const Type& other) const {
  // A tensor type is a subtype of another when it knows everything the other
  // knows: merging them loses nothing the other says.
  const auto& o = static_cast<const TensorType&>(other);
  return merge(o)->equals(o);
}

// PyTorch 1.13's spelling, including its quirks: a dtype without a rank prints
// as `FloatTensor`, strides only when all are known.
void TensorType::print(std::ostream& out) const {
  if (dtype_) {
    out << scalarTypeShortName(*dtype_);
    if (!sizes_.size()) out << "Tensor";
  } else {
    out << "Tensor";
  }
  size_t printed = 0;
  auto separator = [&]() -> const char* { return printed++ > 0 ? ", " : ""; };
  if (auto ndim = sizes_.size()) {
    out << "(";
    for (size_t i = 0; i < *ndim; ++i) {
      out << separator();
      if (sizes_[i]) {
        out << *sizes_[i];
      } else {
        out << "*";
      }
    }
    if (*ndim > 0 && strides_.isComplete() && strides_.size() == ndim) {
      out << ", strides=[";
      for (size_t i = 0; i < *ndim; ++i) out << (i ? ", " : "") << *strides_[i];
      out << "]";
    }
    if (requires_grad_) out << separator() << "requires_grad=" << (*requires_grad_ ? 1 : 0);
    if (device_) out << separator() << "device=" << *device_;
    out << ")";
  } else {
    if (requires_grad_) out << (printed++ ? ", " : "(") << "requires_grad=" << (*requires_grad_ ? 1 : 0);
    if (device_) out << (printed++ ? ", " : "(") << "device=" << *device_;
    if (printed) out << ")";
  }
  if (undefined_ && *undefined_) out << "[Undefined]";
}

// --- containers ----------------------------------------------------------------

bool SingleElementType::equals(const Type& other) const {
  if (other.kind() != kind()) return false;
  return *elem_ == *static_cast<const SingleElementType&>(other).elem_;
}

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
const TypePtr& ListType::ofStrings() {
  static const TypePtr t = create(StringType::get());
  return t;
}
const TypePtr& ListType::ofTensors() {
  static const TypePtr t = create(TensorType::get());
  return t;
}
const TypePtr& ListType::ofOptionalTensors() {
  static const TypePtr t = create(OptionalType::ofTensor());
  return t;
}

void ListType::print(std::ostream& out) const { out << *elem_ << "[]"; }

TypePtr ListType::withContained(std::vector<TypePtr> contained) const { return create(std::move(contained.at(0))); }

TypePtr OptionalType::create(TypePtr elem) {
  TypeKind k = elem->kind();
  if (k != TypeKind::Union && k != TypeKind::Optional && k != TypeKind::None) {
    return std::make_shared<OptionalType>(std::move(elem));
  }
  std::vector<TypePtr> members;
  flattenUnion(elem, members);
  members.erase(
      std::remove_if(members.begin(), members.end(), [](const TypePtr& t) { return t->kind() == TypeKind::None; }),
      members.end());
  if (members.empty()) return std::make_shared<OptionalType>(NoneType::get());
  standardizeUnion(members);
  if (members.size() == 1) return std::make_shared<OptionalType>(members[0]);
  if (isNumberMembers(members)) return std::make_shared<OptionalType>(NumberType::get());
  return std::make_shared<OptionalType>(std::make_shared<UnionType>(std::move(members)));
}

const TypePtr& OptionalType::ofTensor() {
  static const TypePtr t = create(TensorType::get());
  return t;
}

void OptionalType::print(std::ostream& out) const { out << *elem_ << "?"; }

bool OptionalType::equals(const Type& other) const {
  if (auto o = other.cast<OptionalType>()) return *elem_ == *o->elem_;
  if (auto u = other.cast<UnionType>()) {
    std::vector<TypePtr> mine;
    flattenUnion(shared(), mine);
    return sameMembers(mine, u->members());
  }
  return false;
}

bool OptionalType::isSubtypeOfSameKind(const Type& other) const {
  return elem_->isSubtypeOf(*static_cast<const OptionalType&>(other).elem_);
}

TypePtr OptionalType::withContained(std::vector<TypePtr> contained) const { return create(std::move(contained.at(0))); }

void FutureType::print(std::ostream& out) const { out << "Future[" << *elem_ << "]"; }

bool FutureType::isSubtypeOfSameKind(const Type& other) const {
  return elem_->isSubtypeOf(*static_cast<const FutureType&>(other).elem_);
}

TypePtr FutureType::withContained(std::vector<TypePtr> contained) const { return create(std::move(contained.at(0))); }

void RRefType::print(std::ostream& out) const { out << "RRef[" << *elem_ << "]"; }

TypePtr RRefType::withContained(std::vector<TypePtr> contained) const { return create(std::move(contained.at(0))); }

TupleType::TupleType(std::vector<TypePtr> elems, std::optional<std::string> name, std::vector<std::string> field_names)
    : Type(Kind), elems_(std::move(elems)), name_(std::move(name)), field_names_(std::move(field_names)) {
  KILN_INTERNAL_ASSERT(field_names_.empty() || field_names_.size() == elems_.size());
}

TypePtr TupleType::createNamed(std::optional<std::string> qualified_name, std::vector<std::string> field_names,
                               std::vector<TypePtr> elems) {
  KILN_CHECK(field_names.size() == elems.size(), "a named tuple needs one name per field, got ", field_names.size(),
             " names for ", elems.size(), " fields");
  return std::make_shared<TupleType>(std::move(elems), std::move(qualified_name), std::move(field_names));
}

std::string TupleType::str() const {
  if (name_) return *name_;
  std::string s = "(";
  for (size_t i = 0; i < elems_.size(); ++i) s += (i ? ", " : "") + elems_[i]->str();
  return s + ")";
}

std::string TupleType::annotationStr() const {
  if (name_) return *name_;
  if (elems_.empty()) return "Tuple[()]";
  std::string s = "Tuple[";
  for (size_t i = 0; i < elems_.size(); ++i) s += (i ? ", " : "") + elems_[i]->annotationStr();
  return s + "]";
}

void TupleType::print(std::ostream& out) const {
  bool named = isNamed();
  out << (named ? "NamedTuple(" : "(");
  for (size_t i = 0; i < elems_.size(); ++i) {
    if (i) out << ", ";
    if (named && !field_names_.empty()) out << field_names_[i] << " : ";
    out << *elems_[i];
  }
  out << ")";
}

bool TupleType::equals(const Type& other) const {
  auto o = other.cast<TupleType>();
  if (!o || o->elems_.size() != elems_.size() || o->name_ != name_ || o->field_names_ != field_names_) return false;
  for (size_t i = 0; i < elems_.size(); ++i) {
    if (*elems_[i] != *o->elems_[i]) return false;
  }
  return true;
}

bool TupleType::isSubtypeOfSameKind(const Type& other) const {
  // Covariant; a named tuple may stand in for a plain one, not the reverse.
  const auto& o = static_cast<const TupleType&>(other);
  if (o.elems_.size() != elems_.size()) return false;
  if (o.isNamed() && (!isNamed() || o.field_names_ != field_names_)) return false;
  for (size_t i = 0; i < elems_.size(); ++i) {
    if (!elems_[i]->isSubtypeOf(*o.elems_[i])) return false;
  }
  return true;
}

TypePtr TupleType::withContained(std::vector<TypePtr> contained) const {
  return std::make_shared<TupleType>(std::move(contained), name_, field_names_);
}

bool DictType::equals(const Type& other) const {
  auto o = other.cast<DictType>();
  return o && *key_ == *o->key_ && *value_ == *o->value_;
}

TypePtr DictType::withContained(std::vector<TypePtr> contained) const {
  return create(std::move(contained.at(0)), std::move(contained.at(1)));
}

TypePtr UnionType::create(std::vector<TypePtr> types) {
  KILN_CHECK(!types.empty(), "cannot create an empty Union");
  std::vector<TypePtr> members;
  for (const TypePtr& t : types) flattenUnion(t, members);
  standardizeUnion(members);
  if (members.size() == 1) return members[0];
  bool has_none = containsType(members, *NoneType::get());
  if (has_none && members.size() == 2) {
    return OptionalType::create(members[0]->kind() == TypeKind::None ? members[1] : members[0]);
  }
  if (has_none && members.size() == 4) {
    std::vector<TypePtr> rest;
    for (const TypePtr& m : members) {
      if (m->kind() != TypeKind::None) rest.push_back(m);
    }
    if (isNumberMembers(rest)) return OptionalType::create(NumberType::get());
  }
  return std::make_shared<UnionType>(std::move(members));
}

bool UnionType::canHoldType(const Type& t) const {
  if (t.kind() == TypeKind::Number) {
    return canHoldType(*IntType::get()) && canHoldType(*FloatType::get()) && canHoldType(*ComplexType::get());
  }
  return std::any_of(types_.begin(), types_.end(), [&](const TypePtr& m) { return t.isSubtypeOf(*m); });
}

// int, float and complex together print as one `Scalar` (`number`) at the
// end. The separators are PyTorch 1.13's, quirks included: a member after a
// skipped number gets a comma even when nothing precedes it
// (`Union(, str, Scalar)`), and `Scalar` gets one only after such a comma.
std::string UnionType::unionStr(bool annotation) const {
  bool has_number = canHoldType(*NumberType::get());
  auto is_number = [](const TypePtr& t) {
    return t->kind() == TypeKind::Int || t->kind() == TypeKind::Float || t->kind() == TypeKind::Complex;
  };
  std::string s = annotation ? "Union[" : "Union(";
  bool printed = false;
  for (size_t i = 0; i < types_.size(); ++i) {
    if (has_number && is_number(types_[i])) continue;
    if (i > 0) {
      s += ", ";
      printed = true;
    }
    s += annotation ? types_[i]->annotationStr() : types_[i]->str();
  }
  if (has_number) {
    if (printed) s += ", ";
    s += annotation ? NumberType::get()->annotationStr() : NumberType::get()->str();
  }
  return s + (annotation ? "]" : ")");
}

std::string UnionType::str() const { return unionStr(false); }
std::string UnionType::annotationStr() const { return unionStr(true); }

bool UnionType::equals(const Type& other) const {
  if (auto u = other.cast<UnionType>()) return sameMembers(types_, u->types_);
  if (other.kind() == TypeKind::Optional || other.kind() == TypeKind::Number) {
    std::vector<TypePtr> theirs;
    flattenUnion(other.shared(), theirs);
    return sameMembers(types_, theirs);
  }
  return false;
}

TypePtr UnionType::withContained(std::vector<TypePtr> contained) const { return create(std::move(contained)); }

const char* slotKindName(SlotKind kind) {
  switch (kind) {
    case SlotKind::Attribute: return "attribute";
    case SlotKind::Parameter: return "parameter";
    case SlotKind::Buffer: return "buffer";
    case SlotKind::Module: return "module";
  }
  return "attribute";
}

std::optional<SlotKind> slotKindFromName(std::string_view name) {
  for (SlotKind k : {SlotKind::Attribute, SlotKind::Parameter, SlotKind::Buffer, SlotKind::Module}) {
    if (name == slotKindName(k)) return k;
  }
  return std::nullopt;
}

std::string ClassType::unqualifiedName() const {
  auto dot = name_.rfind('.');
  return dot == std::string::npos ? name_ : name_.substr(dot + 1);
}

std::optional<size_t> ClassType::findAttributeSlot(std::string_view name) const {
  for (size_t i = 0; i < attributes_.size(); ++i) {
    if (attributes_[i].name == name) return i;
  }
  return std::nullopt;
}

void ClassType::addMethod(Function* method) { methods_.push_back(method); }

void ClassType::removeMethod(Function* method) {
  methods_.erase(std::remove(methods_.begin(), methods_.end(), method), methods_.end());
}

Function* ClassType::findMethod(std::string_view name) const {
  for (Function* m : methods_) {
    std::string_view qualified = m->name();
    auto dot = qualified.rfind('.');
    if ((dot == std::string_view::npos ? qualified : qualified.substr(dot + 1)) == name) return m;
  }
  return nullptr;
}

size_t ClassType::addAttribute(std::string name, TypePtr type, SlotKind kind) {
  KILN_CHECK(!findAttributeSlot(name), "class '", name_, "' already has an attribute '", name, "'");
  KILN_CHECK(!findConstant(name), "class '", name_, "' already has a constant '", name, "'");
  if (kind == SlotKind::Module) {
    KILN_CHECK(type->cast<ClassType>() && type->cast<ClassType>()->isModule(), "submodule '", name, "' of '", name_,
               "' must have a module type, not ", type->str());
  }
  attributes_.push_back({std::move(name), std::move(type), kind});
  return attributes_.size() - 1;
}

void ClassType::addConstant(std::string name, std::shared_ptr<const IValue> value) {
  KILN_CHECK(!findAttributeSlot(name), "class '", name_, "' already has an attribute '", name, "'");
  KILN_CHECK(!findConstant(name), "class '", name_, "' already has a constant '", name, "'");
  constants_.emplace_back(std::move(name), std::move(value));
}

const IValue* ClassType::findConstant(std::string_view name) const {
  for (const auto& [n, v] : constants_) {
    if (n == name) return v.get();
  }
  return nullptr;
}

bool ClassType::equals(const Type& other) const {
  auto o = other.cast<ClassType>();
  return o && o->name_ == name_;
}

const TypePtr& FunctionType::get() {
  static const TypePtr instance = std::make_shared<FunctionType>();
  return instance;
}

bool FunctionType::equals(const Type& other) const {
  auto o = other.cast<FunctionType>();
  return o && o->name_ == name_;
}

bool VarType::equals(const Type& other) const {
  auto o = other.cast<VarType>();
  return o && o->name_ == name_;
}

// --- unification ----------------------------------------------------------------

std::optional<TypePtr> unifyTypes(const TypePtr& a, const TypePtr& b, bool default_to_union) {
  auto unify = [&]() -> std::optional<TypePtr> {
    if (a->isSubtypeOf(*b)) return b;
    if (b->isSubtypeOf(*a)) return a;
    if (auto ta = a->cast<TensorType>()) {
      if (auto tb = b->cast<TensorType>()) return ta->merge(*tb);
    }
    bool a_none = a->isSubtypeOf(*NoneType::get()), b_none = b->isSubtypeOf(*NoneType::get());
    if (a_none && !b_none) return OptionalType::create(b);
    if (b_none && !a_none) return OptionalType::create(a);
    if (auto oa = a->cast<OptionalType>()) {
      if (auto elem = unifyTypes(oa->elementType(), b)) return OptionalType::create(*elem);
    } else if (auto ob = b->cast<OptionalType>()) {
      if (auto elem = unifyTypes(ob->elementType(), a)) return OptionalType::create(*elem);
    }
    auto tuple_a = a->cast<TupleType>(), tuple_b = b->cast<TupleType>();
    if (tuple_a && tuple_b) {
      if (tuple_a->elements().size() != tuple_b->elements().size()) return std::nullopt;
      std::vector<TypePtr> elems;
      for (size_t i = 0; i < tuple_a->elements().size(); ++i) {
        auto elem = unifyTypes(tuple_a->elements()[i], tuple_b->elements()[i], default_to_union);
        if (!elem) return std::nullopt;
        elems.push_back(*elem);
      }
      return TupleType::create(std::move(elems));
    }
    auto future_a = a->cast<FutureType>(), future_b = b->cast<FutureType>();
    if (future_a && future_b) {
      if (auto elem = unifyTypes(future_a->elementType(), future_b->elementType())) return FutureType::create(*elem);
    }
    // Mutable containers of differently refined tensors unify to unrefined ones.
    TypePtr ua = unshapedType(a), ub = unshapedType(b);
    if (ua->isSubtypeOf(*ub)) return ub;
    if (ub->isSubtypeOf(*ua)) return ua;
    return std::nullopt;
  };
  auto unified = unify();
  if (!unified && default_to_union) return UnionType::create({a, b});
  return unified;
}

TypePtr unshapedType(const TypePtr& t) {
  if (t->kind() == TypeKind::Tensor) return TensorType::get();
  std::vector<TypePtr> contained = t->containedTypes();
  if (contained.empty()) return t;
  for (TypePtr& c : contained) c = unshapedType(c);
  return t->withContained(std::move(contained));
}

// --- annotations ----------------------------------------------------------------

namespace {

class AnnotationParser {
 public:
  explicit AnnotationParser(std::string_view text) : text_(text) {}

  TypePtr parseAll() {
    TypePtr t = parseType();
    skipSpace();
    if (pos_ != text_.size()) fail(pos_, "unexpected text after the type");
    return t;
  }

 private:
  TypePtr parseType() {
    skipSpace();
    size_t start = pos_;
    std::string name = parseDottedName();
    if (name == "Tensor" || name == "torch.Tensor") return TensorType::get();
    if (name == "int") return IntType::get();
    if (name == "float") return FloatType::get();
    if (name == "bool") return BoolType::get();
    if (name == "str") return StringType::get();
    if (name == "complex") return ComplexType::get();
    if (name == "None" || name == "NoneType") return NoneType::get();
    if (name == "Any" || name == "typing.Any") return AnyType::get();
    if (name == "number" || name == "Scalar") return NumberType::get();
    if (name == "Device" || name == "torch.device") return DeviceObjType::get();
    std::string base = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
    if (base == "List" || base == "list") return ListType::create(parseArgs(start, base, 1)[0]);
    if (base == "Optional") return OptionalType::create(parseArgs(start, base, 1)[0]);
    if (base == "Future") return FutureType::create(parseArgs(start, base, 1)[0]);
    if (base == "Dict" || base == "dict") {
      auto args = parseArgs(start, base, 2);
      return DictType::create(args[0], args[1]);
    }
    if (base == "Tuple" || base == "tuple") {
      skipSpace();
      expect('[');
      std::vector<TypePtr> elems;
      skipSpace();
      if (peek() == '(') {  // Tuple[()]
        ++pos_;
        skipSpace();
        expect(')');
      } else {
        elems = parseList();
      }
      skipSpace();
      expect(']');
      return TupleType::create(std::move(elems));
    }
    if (base == "Union") return UnionType::create(parseArgs(start, base, 0));
    fail(start, "unknown type annotation '" + name + "'", pos_);
  }

  // `Name[T, ...]` with exactly `count` arguments (any number when 0).
  std::vector<TypePtr> parseArgs(size_t start, const std::string& name, size_t count) {
    skipSpace();
    expect('[');
    std::vector<TypePtr> args = parseList();
    skipSpace();
    expect(']');
    if (count && args.size() != count) {
      fail(start,
           name + "[...] takes " + std::to_string(count) + " type argument" + (count > 1 ? "s" : "") + ", got " +
               std::to_string(args.size()),
           pos_);
    }
    return args;
  }

  std::vector<TypePtr> parseList() {
    std::vector<TypePtr> out;
    do {
      out.push_back(parseType());
      skipSpace();
    } while (accept(','));
    return out;
  }

  std::string parseDottedName() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    if (pos_ == start) fail(start, "expected a type");
    return std::string(text_.substr(start, pos_ - start));
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(pos_, std::string("expected '") + c + "'");
  }
  [[noreturn]] void fail(size_t start, const std::string& message, size_t end = 0) const {
    throw Error(sourceErrorMessage("type annotation error", text_, start, std::max(end, start + 1), message));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

TypePtr parseTypeAnnotation(std::string_view text) { return AnnotationParser(text).parseAll(); }

}  // namespace kiln
