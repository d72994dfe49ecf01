#pragma once
// IValue: the interpreter's value, a 16-byte tagged union. Scalars (int,
// float, bool, None, device) are stored unboxed; everything else is one
// refcounted pointer (tensors, strings, lists, tuples, dicts, objects,
// futures, and complex numbers, which do not fit the 8-byte payload).
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/core/device.h"
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
// The "specialized" lists (int[], float[], bool[], Tensor[]) are lists whose
// element type says so; IValue's isIntList()/toIntVector() read them.
struct ListObj : RefCounted {
  ListObj(TypePtr element_type, std::vector<IValue> elements);
  TypePtr element_type;
  std::vector<IValue> elements;
};

struct TupleObj : RefCounted {
  explicit TupleObj(std::vector<IValue> elements, TypePtr type = nullptr);
  std::vector<IValue> elements;
  TypePtr type;  // set for named tuples; otherwise derived from the elements
};

struct ComplexObj : RefCounted {
  explicit ComplexObj(std::complex<double> v) : value(v) {}
  std::complex<double> value;
};

struct DictObj;
struct ObjectObj;
struct FutureObj;

class IValue {
 public:
  enum class Tag : uint8_t {
    None,
    Tensor,
    Double,
    Int,
    Bool,
    Device,
    String,
    List,
    Tuple,
    Dict,
    Object,
    Future,
    Complex
  };

  IValue() : tag_(Tag::None) { payload_.i = 0; }
  IValue(std::nullopt_t) : IValue() {}
  IValue(Tensor t) : tag_(Tag::Tensor) {
    payload_.p = t.implPtr() ? IntrusivePtr<TensorImpl>(t.implPtr()).release() : nullptr;
  }
  IValue(double d) : tag_(Tag::Double) { payload_.d = d; }
  IValue(int64_t i) : tag_(Tag::Int) { payload_.i = i; }
  IValue(int i) : IValue(static_cast<int64_t>(i)) {}
  IValue(bool b) : tag_(Tag::Bool) { payload_.i = b; }
  IValue(Device d) : tag_(Tag::Device) {
    payload_.i = static_cast<int64_t>(d.type) | (static_cast<int64_t>(d.index) << 8);
  }
  IValue(std::complex<double> z) : tag_(Tag::Complex) { payload_.p = makeIntrusive<ComplexObj>(z).release(); }
  IValue(const Scalar& s);
  IValue(std::string s) : tag_(Tag::String) { payload_.p = makeIntrusive<StringObj>(std::move(s)).release(); }
  IValue(const char* s) : IValue(std::string(s)) {}
  IValue(IntrusivePtr<ListObj> list) : tag_(Tag::List) { payload_.p = list.release(); }
  IValue(IntrusivePtr<TupleObj> tuple) : tag_(Tag::Tuple) { payload_.p = tuple.release(); }
  IValue(IntrusivePtr<DictObj> dict);
  IValue(IntrusivePtr<ObjectObj> object);
  IValue(IntrusivePtr<FutureObj> future);
  // Typed lists.
  IValue(const std::vector<int64_t>& v);
  IValue(IntArrayRef v);
  IValue(const std::vector<double>& v);
  IValue(const std::vector<std::complex<double>>& v);
  IValue(const std::vector<bool>& v);
  IValue(const std::vector<std::string>& v);
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

  // A tuple of the values.
  static IValue tuple(std::vector<IValue> elements);
  // A list with an element type.
  static IValue list(TypePtr element_type, std::vector<IValue> elements);

  // Overwrites an int in place (the interpreter's loop counters).
  void setInt(int64_t i) {
    if (tag_ != Tag::Int) *this = IValue(i);
    payload_.i = i;
  }

  Tag tag() const { return tag_; }
  const char* tagName() const;
  bool isNone() const { return tag_ == Tag::None; }
  bool isTensor() const { return tag_ == Tag::Tensor; }
  bool isDouble() const { return tag_ == Tag::Double; }
  bool isInt() const { return tag_ == Tag::Int; }
  bool isBool() const { return tag_ == Tag::Bool; }
  bool isDevice() const { return tag_ == Tag::Device; }
  bool isString() const { return tag_ == Tag::String; }
  bool isList() const { return tag_ == Tag::List; }
  bool isTuple() const { return tag_ == Tag::Tuple; }
  bool isDict() const { return tag_ == Tag::Dict; }
  bool isObject() const { return tag_ == Tag::Object; }
  bool isFuture() const { return tag_ == Tag::Future; }
  bool isComplex() const { return tag_ == Tag::Complex; }
  // A number: int, float, bool or complex (a `Scalar` argument).
  bool isScalar() const { return isDouble() || isInt() || isBool() || isComplex(); }
  bool isIntList() const { return isListOf(TypeKind::Int); }
  bool isDoubleList() const { return isListOf(TypeKind::Float); }
  bool isComplexList() const { return isListOf(TypeKind::Complex); }
  bool isBoolList() const { return isListOf(TypeKind::Bool); }
  bool isTensorList() const { return isListOf(TypeKind::Tensor); }

  // Inline: the interpreter's scalar operators are little more than these.
  Tensor toTensor() const {
    if (tag_ != Tag::Tensor) wrongTag("Tensor");
    return Tensor(IntrusivePtr<TensorImpl>(static_cast<TensorImpl*>(payload_.p)));
  }
  double toDouble() const {
    if (tag_ == Tag::Double) return payload_.d;
    if (tag_ == Tag::Int || tag_ == Tag::Bool) return static_cast<double>(payload_.i);
    wrongTag("float");
  }
  int64_t toInt() const {
    if (tag_ == Tag::Int || tag_ == Tag::Bool) return payload_.i;
    wrongTag("int");
  }
  bool toBool() const {
    if (tag_ == Tag::Bool) return payload_.i != 0;
    wrongTag("bool");
  }
  // A complex, or an int, float or bool as one (TorchScript's implicit widening).
  std::complex<double> toComplexDouble() const {
    if (tag_ == Tag::Complex) return static_cast<const ComplexObj*>(payload_.p)->value;
    if (tag_ == Tag::Double) return payload_.d;
    if (tag_ == Tag::Int || tag_ == Tag::Bool) return static_cast<double>(payload_.i);
    wrongTag("complex");
  }
  Device toDevice() const;
  Scalar toScalar() const;
  const std::string& toStringRef() const;
  ListObj& toListRef() const;
  IntrusivePtr<ListObj> toList() const;
  TupleObj& toTupleRef() const;
  IntrusivePtr<TupleObj> toTuple() const;
  DictObj& toDictRef() const;
  IntrusivePtr<DictObj> toDict() const;
  ObjectObj& toObjectRef() const;
  IntrusivePtr<ObjectObj> toObject() const;
  FutureObj& toFutureRef() const;
  IntrusivePtr<FutureObj> toFuture() const;
  DimVector toDimVector() const;  // an int[] as a shape
  std::vector<int64_t> toIntVector() const;
  std::vector<double> toDoubleVector() const;
  std::vector<std::complex<double>> toComplexVector() const;
  std::vector<bool> toBoolVector() const;
  std::vector<std::string> toStringVector() const;
  std::vector<Tensor> toTensorVector() const;

  // The dynamic type: int, Tensor (refined from the value), List[int], ...
  TypePtr type() const;

  // Python's `is`: same object for pointers, same value for scalars.
  bool isSameIdentity(const IValue& other) const;
  bool is(const IValue& other) const { return isSameIdentity(other); }
  // Python's hash(); raises kiln::Error for unhashable values (lists, dicts, ...).
  static size_t hash(const IValue& v);

  // How the IR printer shows a constant: strings quoted, `torch.device("cpu")`,
  // empty containers annotated. `custom` may print a value itself (returning
  // true), e.g. tensors.
  using Formatter = std::function<bool(std::ostream&, const IValue&)>;
  std::ostream& repr(std::ostream& out, const Formatter& custom = nullptr) const;

 private:
  bool isPointer() const { return tag_ == Tag::Tensor || tag_ >= Tag::String; }
  bool isListOf(TypeKind kind) const;
  [[noreturn]] void wrongTag(const char* expected) const;

  union Payload {
    double d;
    int64_t i;
    RefCounted* p;
  } payload_;
  Tag tag_;
};

static_assert(sizeof(IValue) == 16, "IValue must stay 16 bytes");

// TorchScript's `==`: element-wise for containers, by value for scalars and
// strings (an int never equals a float here, as in 1.13), `bool(a == b)` for
// tensors (one element after broadcasting, else an error), identity for
// objects and futures.
bool operator==(const IValue& a, const IValue& b);
inline bool operator!=(const IValue& a, const IValue& b) { return !(a == b); }

// What `print` shows: strings unquoted, `1.` for integral floats, `cpu` for devices.
std::ostream& operator<<(std::ostream& out, const IValue& v);

// PyTorch 1.13's C++ tensor text (` 1  2  3 [ CPUFloatType{3} ]`), which graphs
// print for small tensor constants.
void printTensorATenStyle(std::ostream& out, const Tensor& t);
// A string literal as the IR and `repr` print it: double quotes, C escapes,
// octal for other bytes (with 1.13's arithmetic for bytes above 0x7f).
void printQuotedString(std::ostream& out, std::string_view s);
// A float as graphs print it: `1.` for integral values below 1e10, else 17
// significant digits.
void printIRDouble(std::ostream& out, double d);
// A complex number as graphs print it: `1.+2.j`, `-3.j`.
void printIRComplex(std::ostream& out, std::complex<double> z);
// A complex number as Python's repr writes it: `(1+2j)`, `3j`, `(nan+infj)`.
void printPythonComplex(std::ostream& out, std::complex<double> z);

// Dict keys hash and compare like TorchScript's: tensors by identity.
struct DictKeyHash {
  size_t operator()(const IValue& key) const;
};
struct DictKeyEqual {
  bool operator()(const IValue& a, const IValue& b) const;
};

// An insertion-ordered dict with static key and value types.
struct DictObj : RefCounted {
  DictObj(TypePtr key_type, TypePtr value_type) : key_type(std::move(key_type)), value_type(std::move(value_type)) {}
  TypePtr key_type;
  TypePtr value_type;

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  bool contains(const IValue& key) const { return index_.count(key) > 0; }
  // The value for `key`, or null.
  const IValue* find(const IValue& key) const;
  IValue* find(const IValue& key);
  // The value for `key`; raises kiln::Error (KeyError) when absent.
  const IValue& at(const IValue& key) const;
  // Adds or overwrites; an overwritten key keeps its position. True when added.
  bool insertOrAssign(IValue key, IValue value);
  // Adds unless present. True when added.
  bool insert(IValue key, IValue value);
  // True when the key was there.
  bool erase(const IValue& key);
  void clear();
  // (key, value) in insertion order.
  const std::vector<std::pair<IValue, IValue>>& items() const { return entries_; }

 private:
  std::vector<std::pair<IValue, IValue>> entries_;
  std::unordered_map<IValue, size_t, DictKeyHash, DictKeyEqual> index_;
};

// An instance of a TorchScript class: one slot per attribute of its type.
// It keeps the compilation unit of its type's methods alive, so that an
// object can always run its methods.
struct ObjectObj : RefCounted {
  explicit ObjectObj(std::shared_ptr<ClassType> type)
      : type(std::move(type)), slots(this->type->numAttributes()), unit(this->type->compilationUnit()) {}
  std::shared_ptr<ClassType> type;
  std::vector<IValue> slots;
  std::shared_ptr<CompilationUnit> unit;

  const IValue& getAttr(std::string_view name) const;
  // Sets an attribute; a name the class does not have yet is added with the value's type.
  void setAttr(std::string_view name, IValue value);
  // The slot (grown to the type's attributes, which may have been added since).
  IValue& slot(size_t index);
};

// A value that becomes available later (torch.jit.fork / wait). Thread-safe.
struct FutureObj : RefCounted {
  explicit FutureObj(TypePtr element_type) : element_type(std::move(element_type)) {}
  TypePtr element_type;

  bool completed() const;
  void markCompleted(IValue value);
  void setError(std::string message);
  // Blocks until completed; raises kiln::Error if the future failed.
  IValue wait();
  // Runs now if completed, else when it completes (on the completing thread).
  void addCallback(std::function<void(FutureObj&)> callback);
  bool hasError() const;
  const std::string& errorMessage() const { return error_; }
  const IValue& value() const { return value_; }

 private:
  void finish(std::unique_lock<std::mutex>& lock);

  mutable std::mutex mutex_;
  std::condition_variable finished_;
  bool completed_ = false;
  bool has_error_ = false;
  IValue value_;
  std::string error_;
  std::vector<std::function<void(FutureObj&)>> callbacks_;
};

inline IValue::IValue(IntrusivePtr<DictObj> dict) : tag_(Tag::Dict) { payload_.p = dict.release(); }
inline IValue::IValue(IntrusivePtr<ObjectObj> object) : tag_(Tag::Object) { payload_.p = object.release(); }
inline IValue::IValue(IntrusivePtr<FutureObj> future) : tag_(Tag::Future) { payload_.p = future.release(); }

}  // namespace kiln

template <>
struct std::hash<kiln::IValue> {
  size_t operator()(const kiln::IValue& v) const { return kiln::IValue::hash(v); }
};
