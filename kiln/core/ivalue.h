#pragma once
// IValue: the interpreter's value, a 16-byte tagged union. Scalars (int,
// float, bool, None) are stored unboxed; everything else is one refcounted
// pointer (tensors, strings, lists, tuples, dicts).
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "kiln/core/type.h"
#include "kiln/tensor/tensor.h"

namespace kiln {

class IValue;
using Stack = std::vector<IValue>;

struct StringObj : RefCounted {
  explicit StringObj(std::string s) : value(std::move(s)) {}
  std::string value;
};

// A TorchScript list: the elements plus the static element type (what
// `int[]` vs `Tensor[]` is at run time). Mutable and shared: aliasing matters.
struct ListObj : RefCounted {
  ListObj(TypePtr element_type, std::vector<IValue> elements);
  TypePtr element_type;
  std::vector<IValue> elements;
};

struct TupleObj : RefCounted {
  explicit TupleObj(std::vector<IValue> elements) : elements(std::move(elements)) {}
  std::vector<IValue> elements;
};

class IValue {
 public:
  enum class Tag : uint8_t { None, Tensor, Double, Int, Bool, String, List, Tuple };

  IValue() : tag_(Tag::None) { payload_.i = 0; }
  IValue(std::nullopt_t) : IValue() {}
  IValue(Tensor t) : tag_(Tag::Tensor) { payload_.p = t.implPtr() ? IntrusivePtr<TensorImpl>(t.implPtr()).release() : nullptr; }
  IValue(double d) : tag_(Tag::Double) { payload_.d = d; }
  IValue(int64_t i) : tag_(Tag::Int) { payload_.i = i; }
  IValue(int i) : IValue(static_cast<int64_t>(i)) {}
  IValue(bool b) : tag_(Tag::Bool) { payload_.i = b; }
  IValue(const Scalar& s);
  IValue(std::string s) : tag_(Tag::String) { payload_.p = makeIntrusive<StringObj>(std::move(s)).release(); }
  IValue(const char* s) : IValue(std::string(s)) {}
  IValue(IntrusivePtr<ListObj> list) : tag_(Tag::List) { payload_.p = list.release(); }
  IValue(IntrusivePtr<TupleObj> tuple) : tag_(Tag::Tuple) { payload_.p = tuple.release(); }
  // Typed lists.
  IValue(const std::vector<int64_t>& v);
  IValue(IntArrayRef v);
  IValue(const std::vector<double>& v);
  IValue(const std::vector<Tensor>& v);

  IValue(const IValue& other) : payload_(other.payload_), tag_(other.tag_) {
    if (isPointer() && payload_.p) payload_.p->incref();
  }
  IValue(IValue&& other) noexcept : payload_(other.payload_), tag_(other.tag_) {
    other.tag_ = Tag::None;
    other.payload_.i = 0;
  }
  IValue& operator=(IValue other) noexcept {
    std::swap(payload_, other.payload_);
    std::swap(tag_, other.tag_);
    return *this;
  }
  ~IValue() {
    if (isPointer() && payload_.p) payload_.p->decref();
  }

  Tag tag() const { return tag_; }
  const char* tagName() const;
  bool isNone() const { return tag_ == Tag::None; }
  bool isTensor() const { return tag_ == Tag::Tensor; }
  bool isDouble() const { return tag_ == Tag::Double; }
  bool isInt() const { return tag_ == Tag::Int; }
  bool isBool() const { return tag_ == Tag::Bool; }
  bool isString() const { return tag_ == Tag::String; }
  bool isList() const { return tag_ == Tag::List; }
  bool isTuple() const { return tag_ == Tag::Tuple; }
  bool isScalar() const { return isDouble() || isInt() || isBool(); }

  Tensor toTensor() const;
  double toDouble() const;
  int64_t toInt() const;
  bool toBool() const;
  Scalar toScalar() const;
  const std::string& toStringRef() const;
  ListObj& toListRef() const;
  IntrusivePtr<ListObj> toList() const;
  TupleObj& toTupleRef() const;
  IntrusivePtr<TupleObj> toTuple() const;
  DimVector toDimVector() const;  // an int[] as a shape
  std::vector<double> toDoubleVector() const;
  std::vector<Tensor> toTensorVector() const;

  // Python's `is`: same object for pointers, same value for scalars.
  bool isSameIdentity(const IValue& other) const;

 private:
  bool isPointer() const { return tag_ == Tag::Tensor || tag_ >= Tag::String; }
  [[noreturn]] void wrongTag(const char* expected) const;

  union Payload {
    double d;
    int64_t i;
    RefCounted* p;
  } payload_;
  Tag tag_;
};

static_assert(sizeof(IValue) == 16, "IValue must stay 16 bytes");

std::ostream& operator<<(std::ostream& out, const IValue& v);

}  // namespace kiln
