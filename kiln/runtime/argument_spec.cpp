#include "kiln/runtime/argument_spec.h"

#include "kiln/ops/prim_ops.h"

namespace kiln {

namespace {

// Entry kinds (low 3 bits).
constexpr uint32_t kOther = 0;
constexpr uint32_t kNone = 1;
constexpr uint32_t kTensor = 2;
constexpr uint32_t kUndefinedTensor = 3;
constexpr uint32_t kTuple = 4;  // followed by its elements; arity in the high bits

// Outside grad mode nothing is recorded, so requires_grad does not count
// (1.13's ArgumentSpec `with_grad`).
uint32_t tensorEntry(const Tensor& t, bool grad_enabled) {
  if (!t.defined()) return kUndefinedTensor;
  uint32_t dtype = static_cast<uint32_t>(t.dtype()) & 0xff;
  uint32_t rank = static_cast<uint32_t>(t.dim()) & 0xff;
  uint32_t requires_grad = grad_enabled && t.requiresGrad() ? 1 : 0;
  return kTensor | (requires_grad << 3) | (dtype << 4) | (rank << 12);
}

// Whether an object (a module) holds a tensor that requires grad, in its
// own attributes or its submodules': its parameters are read by GetAttr,
// not passed in, and their gradients must be recorded all the same.
bool objectRequiresGrad(const ObjectObj& object, int depth) {
  if (depth > 16) return false;
  for (const IValue& slot : object.slots) {
    if (slot.isTensor()) {
      if (slot.toTensor().defined() && slot.toTensor().requiresGrad()) return true;
    } else if (slot.isObject() && objectRequiresGrad(slot.toObjectRef(), depth + 1)) {
      return true;
    }
  }
  return false;
}

bool listRequiresGrad(const IValue& list) {
  for (const IValue& e : list.toListRef().elements) {
    if (e.isTensor() && e.toTensor().defined() && e.toTensor().requiresGrad()) return true;
  }
  return false;
}

}  // namespace

ArgumentSpec::ArgumentSpec(const IValue* inputs, size_t num_inputs) : grad_enabled_(isGradEnabled()) {
  for (size_t i = 0; i < num_inputs; ++i) {
    input_starts_.push_back(static_cast<uint32_t>(entries_.size()));
    shape_starts_.push_back(static_cast<uint32_t>(shapes_.size()));
    add(inputs[i]);
  }
  size_t h = num_inputs;
  for (uint32_t e : entries_) h = h * 1000003u ^ e;
  hash_ = h;
  for (int64_t d : shapes_) h = h * 1000003u ^ static_cast<size_t>(d);
  shape_hash_ = h;
}

void ArgumentSpec::add(const IValue& v) {
  if (v.isTensor()) {
    const Tensor& t = v.toTensor();
    entries_.push_back(tensorEntry(t, grad_enabled_));
    if ((entries_.back() >> 3) & 1) requires_grad_ = true;
    if (t.defined()) {
      for (int64_t d : t.sizes()) shapes_.push_back(d);
      for (int64_t d : t.strides()) shapes_.push_back(d);
    }
  } else if (v.isNone()) {
    entries_.push_back(kNone);
  } else if (v.isTuple()) {
    const auto& elements = v.toTupleRef().elements;
    entries_.push_back(kTuple | static_cast<uint32_t>(elements.size() << 3));
    for (const IValue& e : elements) add(e);
  } else if (grad_enabled_ &&
             ((v.isObject() && objectRequiresGrad(v.toObjectRef(), 0)) || (v.isTensorList() && listRequiresGrad(v)))) {
    entries_.push_back(kOther | (1u << 3));
    requires_grad_ = true;
  } else {
    entries_.push_back(kOther);
  }
}

bool ArgumentSpec::isNone(size_t i) const { return (entries_[input_starts_[i]] & 7) == kNone; }

TypePtr ArgumentSpec::refinedInputType(size_t i, const TypePtr& declared, bool with_shapes) const {
  size_t cursor = input_starts_[i];
  size_t shape_cursor = shape_starts_[i];
  return refine(declared, cursor, shape_cursor, with_shapes);
}

TypePtr ArgumentSpec::refine(const TypePtr& declared, size_t& cursor, size_t& shape_cursor, bool with_shapes) const {
  uint32_t entry = entries_[cursor++];
  // A value given for an Optional parameter specializes it to the element
  // type (1.13's SPECIALIZE_OPTIONAL); None keeps the Optional.
  const TypePtr& type = (entry & 7) != kNone && declared->kind() == TypeKind::Optional
                            ? declared->cast<OptionalType>()->getElementType()
                            : declared;
  switch (entry & 7) {
    case kTensor: {
      size_t rank = (entry >> 12) & 0xff;
      const int64_t* sizes = shapes_.data() + shape_cursor;
      shape_cursor += 2 * rank;
      if (type->kind() != TypeKind::Tensor) return type;
      auto dtype = static_cast<ScalarType>((entry >> 4) & 0xff);
      bool requires_grad = ((entry >> 3) & 1) != 0;
      if (!with_shapes) return TensorType::createWithRank(dtype, Device(DeviceType::CPU), rank, requires_grad);
      std::vector<int64_t> size_list(sizes, sizes + rank), stride_list(sizes + rank, sizes + 2 * rank);
      return TensorType::create(dtype, Device(DeviceType::CPU), VaryingShape::complete(size_list),
                                VaryingShape::complete(stride_list), requires_grad);
    }
    case kTuple: {
      size_t arity = entry >> 3;
      auto tuple = type->cast<TupleType>();
      if (!tuple || tuple->elements().size() != arity) {
        for (size_t k = 0; k < arity; ++k) refine(type, cursor, shape_cursor, with_shapes);  // skip the elements
        return type;
      }
      std::vector<TypePtr> elements;
      for (size_t k = 0; k < arity; ++k) {
        elements.push_back(refine(tuple->elements()[k], cursor, shape_cursor, with_shapes));
      }
      return tuple->withContained(std::move(elements));
    }
    default: return type;
  }
}

}  // namespace kiln
