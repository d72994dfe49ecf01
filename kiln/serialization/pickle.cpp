#include "kiln/serialization/pickle.h"

#include <algorithm>
#include <bit>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "kiln/tensor/scalar_type_names.h"

namespace kiln {
namespace {

// The opcodes kiln reads and writes (Python's Lib/pickle.py names them).
namespace op {
constexpr uint8_t MARK = '(';
constexpr uint8_t STOP = '.';
constexpr uint8_t POP = '0';
constexpr uint8_t POP_MARK = '1';
constexpr uint8_t DUP = '2';
constexpr uint8_t BININT = 'J';
constexpr uint8_t BININT1 = 'K';
constexpr uint8_t BININT2 = 'M';
constexpr uint8_t NONE = 'N';
constexpr uint8_t PERSID = 'P';
constexpr uint8_t BINPERSID = 'Q';
constexpr uint8_t REDUCE = 'R';
constexpr uint8_t BINUNICODE = 'X';
constexpr uint8_t APPEND = 'a';
constexpr uint8_t BUILD = 'b';
constexpr uint8_t GLOBAL = 'c';
constexpr uint8_t DICT = 'd';
constexpr uint8_t EMPTY_DICT = '}';
constexpr uint8_t APPENDS = 'e';
constexpr uint8_t GET = 'g';
constexpr uint8_t BINGET = 'h';
constexpr uint8_t LONG_BINGET = 'j';
constexpr uint8_t LIST = 'l';
constexpr uint8_t EMPTY_LIST = ']';
constexpr uint8_t PUT = 'p';
constexpr uint8_t BINPUT = 'q';
constexpr uint8_t LONG_BINPUT = 'r';
constexpr uint8_t SETITEM = 's';
constexpr uint8_t TUPLE = 't';
constexpr uint8_t EMPTY_TUPLE = ')';
constexpr uint8_t SETITEMS = 'u';
constexpr uint8_t BINFLOAT = 'G';
constexpr uint8_t BINBYTES = 'B';
constexpr uint8_t SHORT_BINBYTES = 'C';
constexpr uint8_t PROTO = 0x80;
constexpr uint8_t NEWOBJ = 0x81;
constexpr uint8_t TUPLE1 = 0x85;
constexpr uint8_t TUPLE2 = 0x86;
constexpr uint8_t TUPLE3 = 0x87;
constexpr uint8_t NEWTRUE = 0x88;
constexpr uint8_t NEWFALSE = 0x89;
constexpr uint8_t LONG1 = 0x8a;
constexpr uint8_t LONG4 = 0x8b;
constexpr uint8_t SHORT_BINUNICODE = 0x8c;
constexpr uint8_t BINUNICODE8 = 0x8d;
constexpr uint8_t BINBYTES8 = 0x8e;
constexpr uint8_t EMPTY_SET = 0x8f;
constexpr uint8_t ADDITEMS = 0x90;
constexpr uint8_t FROZENSET = 0x91;
constexpr uint8_t STACK_GLOBAL = 0x93;
constexpr uint8_t MEMOIZE = 0x94;
constexpr uint8_t FRAME = 0x95;
}  // namespace op

const char* opName(uint8_t code) {
  switch (code) {
    case op::MARK: return "MARK";
    case op::STOP: return "STOP";
    case op::POP: return "POP";
    case op::POP_MARK: return "POP_MARK";
    case op::DUP: return "DUP";
    case op::BININT: return "BININT";
    case op::BININT1: return "BININT1";
    case op::BININT2: return "BININT2";
    case op::NONE: return "NONE";
    case op::PERSID: return "PERSID";
    case op::BINPERSID: return "BINPERSID";
    case op::REDUCE: return "REDUCE";
    case op::BINUNICODE: return "BINUNICODE";
    case op::APPEND: return "APPEND";
    case op::BUILD: return "BUILD";
    case op::GLOBAL: return "GLOBAL";
    case op::DICT: return "DICT";
    case op::EMPTY_DICT: return "EMPTY_DICT";
    case op::APPENDS: return "APPENDS";
    case op::GET: return "GET";
    case op::BINGET: return "BINGET";
    case op::LONG_BINGET: return "LONG_BINGET";
    case op::LIST: return "LIST";
    case op::EMPTY_LIST: return "EMPTY_LIST";
    case op::PUT: return "PUT";
    case op::BINPUT: return "BINPUT";
    case op::LONG_BINPUT: return "LONG_BINPUT";
    case op::SETITEM: return "SETITEM";
    case op::TUPLE: return "TUPLE";
    case op::EMPTY_TUPLE: return "EMPTY_TUPLE";
    case op::SETITEMS: return "SETITEMS";
    case op::BINFLOAT: return "BINFLOAT";
    case op::BINBYTES: return "BINBYTES";
    case op::SHORT_BINBYTES: return "SHORT_BINBYTES";
    case op::PROTO: return "PROTO";
    case op::NEWOBJ: return "NEWOBJ";
    case op::TUPLE1: return "TUPLE1";
    case op::TUPLE2: return "TUPLE2";
    case op::TUPLE3: return "TUPLE3";
    case op::NEWTRUE: return "NEWTRUE";
    case op::NEWFALSE: return "NEWFALSE";
    case op::LONG1: return "LONG1";
    case op::LONG4: return "LONG4";
    case op::SHORT_BINUNICODE: return "SHORT_BINUNICODE";
    case op::BINUNICODE8: return "BINUNICODE8";
    case op::BINBYTES8: return "BINBYTES8";
    case op::EMPTY_SET: return "EMPTY_SET";
    case op::ADDITEMS: return "ADDITEMS";
    case op::FROZENSET: return "FROZENSET";
    case op::STACK_GLOBAL: return "STACK_GLOBAL";
    case op::MEMOIZE: return "MEMOIZE";
    case op::FRAME: return "FRAME";
    default: return nullptr;
  }
}

const char* opLabel(uint8_t code) {
  const char* name = opName(code);
  return name ? name : "?";
}

// Text from the pickle in an error message: bounded, with other bytes escaped.
std::string printable(std::string_view text, size_t limit = 80) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < limit; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static const char* digits = "0123456789abcdef";
      out += "\\x";
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  if (text.size() > limit) out += "...";
  return out;
}

// torch.<Name>Storage, the storage classes persistent ids name.
std::optional<ScalarType> storageDtype(std::string_view name) {
  static const ScalarType kTypes[] = {ScalarType::Byte,     ScalarType::Char,         ScalarType::Short,
                                      ScalarType::Int,      ScalarType::Long,         ScalarType::Half,
                                      ScalarType::Float,    ScalarType::Double,       ScalarType::Bool,
                                      ScalarType::BFloat16, ScalarType::ComplexFloat, ScalarType::ComplexDouble};
  for (ScalarType t : kTypes) {
    std::string_view short_name = scalarTypeShortName(t);
    if (name.size() == short_name.size() + 7 && name.substr(0, short_name.size()) == short_name &&
        name.substr(short_name.size()) == "Storage") {
      return t;
    }
  }
  return std::nullopt;
}

bool isContainer(const IValue& v) { return v.isList() || v.isTuple() || v.isDict() || v.isObject(); }

const void* containerPtr(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::List: return &v.toListRef();
    case IValue::Tag::Tuple: return &v.toTupleRef();
    case IValue::Tag::Dict: return &v.toDictRef();
    case IValue::Tag::Object: return &v.toObjectRef();
    default: return nullptr;
  }
}

size_t childCount(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::List: return v.toListRef().elements.size();
    case IValue::Tag::Tuple: return v.toTupleRef().elements.size();
    case IValue::Tag::Dict: return 2 * v.toDictRef().size();
    case IValue::Tag::Object: return v.toObjectRef().slots.size();
    default: return 0;
  }
}

const IValue& childAt(const IValue& v, size_t i) {
  switch (v.tag()) {
    case IValue::Tag::List: return v.toListRef().elements[i];
    case IValue::Tag::Tuple: return v.toTupleRef().elements[i];
    case IValue::Tag::Dict: {
      const auto& entry = v.toDictRef().items()[i / 2];
      return i % 2 ? entry.second : entry.first;
    }
    default: return v.toObjectRef().slots[i];
  }
}

// The type a value contributes to its container's element type; lists,
// dicts and tuples ask `container_type`.
template <typename TypeOf>
TypePtr staticTypeOf(const IValue& v, const TypeOf& container_type) {
  switch (v.tag()) {
    case IValue::Tag::Tensor: return TensorType::get();
    case IValue::Tag::List:
    case IValue::Tag::Dict:
    case IValue::Tag::Tuple: return container_type(v);
    default: return v.type();
  }
}

// The type of a tuple as an element. Tuples holding tuples or other
// containers count as Any: the types of nested tuples would be trees that
// a pickle can share exponentially (t2 = (t1, t1), ...).
TypePtr tupleElementType(const TupleObj& t) {
  if (t.type) return t.type;
  std::vector<TypePtr> elems;
  for (const IValue& e : t.elements) {
    if (isContainer(e)) return AnyType::get();
    elems.push_back(e.isTensor() ? TensorType::get() : e.type());
  }
  return TupleType::create(std::move(elems));
}

template <typename Range, typename TypeOf>
TypePtr commonType(const Range& values, const TypeOf& type_of) {
  TypePtr common;
  for (const IValue& v : values) {
    TypePtr t = type_of(v);
    if (!common) {
      common = std::move(t);
    } else if (*common != *t) {
      std::optional<TypePtr> unified = unifyTypes(common, t);
      if (!unified) return AnyType::get();
      common = std::move(*unified);
    }
  }
  return common ? common : AnyType::get();
}

// A view over the keys or the values of a dict's items, for commonType.
struct DictSide {
  const std::vector<std::pair<IValue, IValue>>& items;
  bool keys;
  struct Iterator {
    std::vector<std::pair<IValue, IValue>>::const_iterator it;
    bool keys;
    const IValue& operator*() const { return keys ? it->first : it->second; }
    Iterator& operator++() {
      ++it;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return it != o.it; }
  };
  Iterator begin() const { return {items.begin(), keys}; }
  Iterator end() const { return {items.end(), keys}; }
};

// Whether a value may be an element of a container tagged with type `t`.
// Shallow: nested containers carry (or get) their own types.
bool valueFits(const IValue& v, const Type& t) {
  switch (t.kind()) {
    case TypeKind::Int: return v.isInt();
    case TypeKind::Float: return v.isDouble();
    case TypeKind::Bool: return v.isBool();
    case TypeKind::String: return v.isString();
    case TypeKind::Tensor: return v.isTensor();
    case TypeKind::None: return v.isNone();
    case TypeKind::Device: return v.isDevice();
    case TypeKind::Number: return v.isInt() || v.isDouble() || v.isBool();
    case TypeKind::List: return v.isList();
    case TypeKind::Dict: return v.isDict();
    case TypeKind::Tuple:
      return v.isTuple() && v.toTupleRef().elements.size() == static_cast<const TupleType&>(t).elements().size();
    case TypeKind::Class: return v.isObject();
    case TypeKind::Optional: return v.isNone() || valueFits(v, *static_cast<const OptionalType&>(t).elementType());
    case TypeKind::Union:
      for (const TypePtr& member : static_cast<const UnionType&>(t).members()) {
        if (valueFits(v, *member)) return true;
      }
      return false;
    default: return true;
  }
}

// a * b and a + b for non-negative int64, or nullopt on overflow.
std::optional<int64_t> mulChecked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> addChecked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// --- unpickler -----------------------------------------------------------------

class Unpickler {
 public:
  Unpickler(std::string_view data, const UnpickleOptions& options) : data_(data), options_(options) {}

  IValue run(size_t* end) {
    try {
      for (;;) {
        op_pos_ = pos_;
        op_ = 0;
        KILN_CHECK(pos_ < data_.size(), "unexpected end of data: the pickle has no STOP");
        op_ = readU8();
        if (op_ == op::STOP) break;
        step();
      }
      IValue result = finish();
      if (end) *end = pos_;
      return result;
    } catch (const Error& e) {
      teardown(nullptr);
      std::string where =
          op_ == 0 ? detail::str("at byte ", op_pos_) : detail::str("opcode ", opLabel(op_), " at byte ", op_pos_);
      throw Error(detail::str("unpickler: ", e.what(), " (", where, ")"));
    } catch (...) {
      teardown(nullptr);
      throw;
    }
  }

 private:
  // A stack entry: a value, or one of the things a pickle names before it
  // uses them (a global to call, a class, an object between NEWOBJ and
  // BUILD), which may not end up inside a value.
  enum class Kind : uint8_t { Value, Callable, Class, Object };
  struct Item {
    Kind kind = Kind::Value;
    uint32_t index = 0;  // into callables_, class_names_ or objects_
    IValue value;
  };
  enum class Callable : uint8_t {
    OrderedDict,
    RebuildTensor,
    RebuildParameter,
    BuildList,
    RestoreTypeTag,
    Device,
    Size,
    Set,
    Complex,
  };
  struct CallableGlobal {
    Callable kind;
    std::string name;
    TypePtr element_type;  // BuildList
  };
  struct PendingObject {
    uint32_t class_index;
    bool built = false;
    IValue value;
  };

  // --- reading ---

  size_t left() const { return data_.size() - pos_; }
  void need(uint64_t n) {
    KILN_CHECK(n <= left(), "unexpected end of data: ", opLabel(op_), " needs ", n, " more bytes, ", left(), " left");
  }
  uint8_t readU8() {
    need(1);
    return static_cast<uint8_t>(data_[pos_++]);
  }
  uint64_t readLittle(size_t n) {
    need(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
    pos_ += n;
    return v;
  }
  std::string_view readBytes(uint64_t n) {
    need(n);
    std::string_view out = data_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  // A protocol 0 argument: the bytes up to the next newline.
  std::string_view readLine() {
    size_t nl = data_.find('\n', pos_);
    KILN_CHECK(nl != std::string_view::npos, "unexpected end of data: ", opLabel(op_), " needs a line ending in \\n");
    std::string_view out = data_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return out;
  }
  uint32_t readDecimalLine() {
    std::string_view line = readLine();
    KILN_CHECK(!line.empty() && line.size() <= 10, "bad memo key '", printable(line), "'");
    uint64_t v = 0;
    for (char c : line) {
      KILN_CHECK(c >= '0' && c <= '9', "bad memo key '", printable(line), "'");
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    KILN_CHECK(v <= std::numeric_limits<uint32_t>::max(), "memo key ", v, " is too large");
    return static_cast<uint32_t>(v);
  }
  // LONG1/LONG4: little-endian two's complement of any length; kiln's ints are 64 bits.
  int64_t decodeLong(std::string_view bytes) {
    if (bytes.empty()) return 0;
    size_t n = std::min<size_t>(bytes.size(), 8);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
    bool negative = static_cast<uint8_t>(bytes[n - 1]) & 0x80;
    if (n < 8 && negative) v |= ~uint64_t{0} << (8 * n);
    for (size_t i = 8; i < bytes.size(); ++i) {
      // Longer encodings fit only when the extra bytes merely extend the sign.
      KILN_CHECK(static_cast<uint8_t>(bytes[i]) == (negative ? 0xff : 0x00), "integer does not fit in 64 bits (",
                 bytes.size(), " bytes)");
    }
    return static_cast<int64_t>(v);
  }

  // --- the stack ---

  size_t frameBase() const { return marks_.empty() ? 0 : marks_.back(); }
  void needItems(size_t n) {
    KILN_CHECK(stack_.size() - frameBase() >= n, "stack underflow: ", opLabel(op_), " needs ", n, " value",
               n == 1 ? "" : "s", ", found ", stack_.size() - frameBase());
  }
  void push(IValue v) { stack_.push_back(Item{Kind::Value, 0, std::move(v)}); }
  std::string describe(const Item& item) const {
    switch (item.kind) {
      case Kind::Value: return item.value.tagName();
      case Kind::Callable: return "global '" + printable(callables_[item.index].name) + "'";
      case Kind::Class: return "class '" + printable(class_names_[item.index]) + "'";
      case Kind::Object:
        return "object of class '" + printable(class_names_[objects_[item.index].class_index]) + "' before its BUILD";
    }
    return "?";
  }
  // An item as a value: globals, classes and unbuilt objects are not values.
  IValue toValue(Item item) const {
    if (item.kind == Kind::Value) return std::move(item.value);
    if (item.kind == Kind::Object && objects_[item.index].built) return objects_[item.index].value;
    KILN_ERROR(describe(item), " used as a value");
  }
  Item popItem() {
    needItems(1);
    Item item = std::move(stack_.back());
    stack_.pop_back();
    return item;
  }
  IValue popValue() { return toValue(popItem()); }
  // The value on top of the stack, in place (the list APPEND adds to, ...).
  IValue& topValue() {
    needItems(1);
    Item& item = stack_.back();
    KILN_CHECK(item.kind == Kind::Value, describe(item), " used as a value");
    return item.value;
  }
  // Everything above the innermost MARK, which goes.
  std::vector<IValue> popMark() {
    KILN_CHECK(!marks_.empty(), opLabel(op_), " without a MARK");
    size_t base = marks_.back();
    marks_.pop_back();
    std::vector<IValue> values;
    values.reserve(stack_.size() - base);
    for (size_t i = base; i < stack_.size(); ++i) values.push_back(toValue(std::move(stack_[i])));
    stack_.resize(base);
    return values;
  }
  std::vector<IValue> popValues(size_t n) {
    needItems(n);
    std::vector<IValue> values;
    for (size_t i = stack_.size() - n; i < stack_.size(); ++i) values.push_back(toValue(std::move(stack_[i])));
    stack_.resize(stack_.size() - n);
    return values;
  }

  // --- containers ---

  IValue newList(std::vector<IValue> elements) {
    auto list = makeIntrusive<ListObj>(AnyType::get(), std::move(elements));
    untyped_.insert(list.get());
    IValue v(std::move(list));
    created_.push_back(v);
    return v;
  }
  IValue newDict() {
    auto dict = makeIntrusive<DictObj>(AnyType::get(), AnyType::get());
    untyped_.insert(dict.get());
    IValue v(std::move(dict));
    created_.push_back(v);
    return v;
  }
  // What hashing a value costs: strings hash every byte, and tuples every
  // part, as often as it is shared (t2 = (t1, t1) hashes t1 twice).
  uint64_t hashCost(const IValue& v) const {
    if (v.isString()) return v.toStringRef().size() + 1;
    return v.isTuple() ? extentOf(v).second : 1;
  }
  const std::pair<uint32_t, uint64_t>& extentOf(const IValue& tuple) const {
    auto it = tuple_extent_.find(&tuple.toTupleRef());
    KILN_INTERNAL_ASSERT(it != tuple_extent_.end(), "a tuple the unpickler did not make");
    return it->second;
  }
  IValue newTuple(std::vector<IValue> elements) {
    // Tuples are hashed and compared recursively as dict keys while the
    // pickle is read, so their depth and hashing cost are bounded as they
    // are made (lists and dicts are unhashable, which ends the recursion).
    uint32_t height = 1;
    uint64_t cost = 1;
    for (const IValue& e : elements) {
      if (e.isTuple()) height = std::max(height, extentOf(e).first + 1);
      cost = std::min<uint64_t>(cost + hashCost(e), uint64_t{1} << 62);
    }
    KILN_CHECK(height <= options_.max_depth, "tuples nested deeper than ", options_.max_depth);
    auto tuple = makeIntrusive<TupleObj>(std::move(elements));
    tuple_extent_[tuple.get()] = {height, cost};
    IValue v(std::move(tuple));
    created_.push_back(v);
    return v;
  }
  void checkKey(const IValue& key) {
    // Python caches a string's hash; kiln hashes keys again at every
    // insertion, so all the hashing one pickle asks for is bounded by its size.
    hash_work_ += hashCost(key);
    KILN_CHECK(hash_work_ <= kHashBudgetBase + kHashBudgetPerByte * data_.size(),
               "dict keys too large to hash (strings and tuples counted as often as they are used)");
  }
  void setItems(DictObj& dict, std::vector<IValue>& kv) {
    KILN_CHECK(kv.size() % 2 == 0, opLabel(op_), " with a key but no value");
    for (size_t i = 0; i < kv.size(); i += 2) {
      checkKey(kv[i]);
      dict.insertOrAssign(std::move(kv[i]), std::move(kv[i + 1]));
    }
  }
  ListObj& listOf(IValue& v) {
    KILN_CHECK(v.isList(), opLabel(op_), " needs a list, found ", v.tagName());
    return v.toListRef();
  }
  DictObj& dictOf(IValue& v) {
    KILN_CHECK(v.isDict(), opLabel(op_), " needs a dict, found ", v.tagName());
    return v.toDictRef();
  }

  // --- memo ---

  void memoPut(uint64_t key) {
    needItems(1);
    memo_[key] = stack_.back();
  }
  void memoGet(uint64_t key) {
    auto it = memo_.find(key);
    KILN_CHECK(it != memo_.end(), "memo key ", key, " was never stored");
    Item item = it->second;
    if (item.kind == Kind::Object && objects_[item.index].built)
      item = Item{Kind::Value, 0, objects_[item.index].value};
    stack_.push_back(std::move(item));
  }

  // --- globals ---

  void pushCallable(Callable kind, std::string name, TypePtr element_type = nullptr) {
    callables_.push_back(CallableGlobal{kind, std::move(name), std::move(element_type)});
    stack_.push_back(Item{Kind::Callable, static_cast<uint32_t>(callables_.size() - 1), IValue()});
  }

  // The allowlist. Nothing here imports or calls anything: each name stands
  // for a value or for a fixed kiln function of its arguments.
  void pushGlobal(std::string_view module, std::string_view name) {
    KILN_CHECK(module.size() <= kMaxNameBytes && name.size() <= kMaxNameBytes, "global name of ",
               module.size() + name.size(), " bytes is too long");
    std::string qualified = std::string(module) + "." + std::string(name);
    if (module == "collections" && name == "OrderedDict") return pushCallable(Callable::OrderedDict, qualified);
    if (module == "torch._utils") {
      if (name == "_rebuild_tensor_v2") return pushCallable(Callable::RebuildTensor, qualified);
      if (name == "_rebuild_parameter") return pushCallable(Callable::RebuildParameter, qualified);
    }
    if (module == "torch.jit._pickle") {
      if (name == "build_intlist") return pushCallable(Callable::BuildList, qualified, IntType::get());
      if (name == "build_doublelist") return pushCallable(Callable::BuildList, qualified, FloatType::get());
      if (name == "build_boollist") return pushCallable(Callable::BuildList, qualified, BoolType::get());
      if (name == "build_tensorlist") return pushCallable(Callable::BuildList, qualified, TensorType::get());
      if (name == "restore_type_tag") return pushCallable(Callable::RestoreTypeTag, qualified);
    }
    if (module == "torch") {
      if (name == "device") return pushCallable(Callable::Device, qualified);
      if (name == "Size") return pushCallable(Callable::Size, qualified);
      // Storage classes (in persistent ids) and dtypes are values: the
      // dtype's number, as TorchScript carries dtypes.
      if (auto dtype = storageDtype(name)) return push(IValue(static_cast<int64_t>(*dtype)));
      if (auto dtype = scalarTypeFromPythonName(name)) return push(IValue(static_cast<int64_t>(*dtype)));
    }
    if ((module == "builtins" || module == "__builtin__") && (name == "set" || name == "frozenset")) {
      return pushCallable(Callable::Set, qualified);
    }
    // A complex number, as torch pickles one: builtins.complex((real, imag)).
    if ((module == "builtins" || module == "__builtin__") && name == "complex") {
      return pushCallable(Callable::Complex, qualified);
    }
    if (module == "__torch__" || module.substr(0, 10) == "__torch__.") {
      KILN_CHECK(options_.load_object, "global '", printable(qualified),
                 "' is a script class, and nothing was given to build its objects");
      class_names_.push_back(std::move(qualified));
      stack_.push_back(Item{Kind::Class, static_cast<uint32_t>(class_names_.size() - 1), IValue()});
      return;
    }
    KILN_ERROR("global '", printable(qualified),
               "' is not allowed: kiln builds only torch's tensor, storage, dtype and container globals and "
               "script classes (docs/serialization.md)");
  }

  // --- REDUCE, NEWOBJ, BUILD ---

  static const std::vector<IValue>& tupleArgs(const IValue& args) {
    KILN_CHECK(args.isTuple(), "arguments must be a tuple, found ", args.tagName());
    return args.toTupleRef().elements;
  }
  void checkArity(const CallableGlobal& g, const std::vector<IValue>& args, size_t lo, size_t hi) {
    KILN_CHECK(args.size() >= lo && args.size() <= hi, printable(g.name), " takes ", lo,
               lo == hi ? std::string() : detail::str(" to ", hi), " argument", hi == 1 ? "" : "s", ", got ",
               args.size());
  }
  static std::vector<int64_t> intsOf(const IValue& v, const char* what) {
    const std::vector<IValue>* elems = nullptr;
    if (v.isTuple()) elems = &v.toTupleRef().elements;
    if (v.isList()) elems = &v.toListRef().elements;
    KILN_CHECK(elems, what, " must be a tuple of ints, found ", v.tagName());
    std::vector<int64_t> out;
    for (const IValue& e : *elems) {
      KILN_CHECK(e.isInt(), what, " must be a tuple of ints, found a ", e.tagName());
      out.push_back(e.toInt());
    }
    return out;
  }

  void reduce() {
    IValue args_value = popValue();
    Item callee = popItem();
    if (callee.kind == Kind::Class) {
      KILN_ERROR("class '", printable(class_names_[callee.index]), "' is built with NEWOBJ and BUILD, not REDUCE");
    }
    KILN_CHECK(callee.kind == Kind::Callable, "REDUCE calls a global, found ", describe(callee));
    const CallableGlobal& g = callables_[callee.index];
    const std::vector<IValue>& args = tupleArgs(args_value);
    switch (g.kind) {
      case Callable::OrderedDict: checkArity(g, args, 0, 0); return push(newDict());
      case Callable::RebuildTensor: checkArity(g, args, 6, 7); return push(rebuildTensor(args));
      case Callable::RebuildParameter: {
        checkArity(g, args, 3, 3);
        KILN_CHECK(args[0].isTensor(), "_rebuild_parameter expects a tensor, found ", args[0].tagName());
        KILN_CHECK(args[1].isBool(), "_rebuild_parameter expects requires_grad as a bool, found ", args[1].tagName());
        // A new tensor over the same data, so the requires_grad of a tensor
        // the memo also holds does not change.
        const TensorImpl& data = *args[0].toTensor().impl();
        auto param =
            makeIntrusive<TensorImpl>(data.storage(), data.dtype(), data.sizes(), data.strides(), data.storageOffset());
        param->setRequiresGrad(args[1].toBool());
        return push(IValue(Tensor(std::move(param))));
      }
      case Callable::BuildList: {
        checkArity(g, args, 1, 1);
        // The elements are checked against the type at the end, when the
        // list can no longer change.
        IValue list = args[0];
        ListObj& l = listOf(list);
        l.element_type = g.element_type;
        untyped_.erase(&l);
        return push(std::move(list));
      }
      case Callable::RestoreTypeTag: {
        checkArity(g, args, 2, 2);
        KILN_CHECK(args[1].isString(), "restore_type_tag expects a type string, found ", args[1].tagName());
        IValue container = args[0];
        restoreTypeTag(container, args[1].toStringRef());
        return push(std::move(container));
      }
      case Callable::Device: {
        checkArity(g, args, 1, 2);
        KILN_CHECK(args[0].isString() && args[0].toStringRef().size() <= 64, "torch.device expects a device name");
        Device d = Device::parse(args[0].toStringRef());
        if (args.size() == 2 && !args[1].isNone()) {
          KILN_CHECK(args[1].isInt() && args[1].toInt() >= 0 && args[1].toInt() <= std::numeric_limits<int8_t>::max(),
                     "torch.device expects a device index");
          d.index = static_cast<int8_t>(args[1].toInt());
        }
        return push(IValue(d));
      }
      case Callable::Size: {
        checkArity(g, args, 1, 1);
        intsOf(args[0], "torch.Size");
        KILN_CHECK(args[0].isTuple(), "torch.Size expects a tuple");
        return push(args[0]);
      }
      case Callable::Set: {
        // set([...]) as Python's protocol 2 writes it: the list becomes the
        // set, without a copy that a memoized list could multiply.
        checkArity(g, args, 0, 1);
        if (args.empty()) return push(newList({}));
        KILN_CHECK(args[0].isList(), "set expects a list, found ", args[0].tagName());
        return push(args[0]);
      }
      case Callable::Complex: {
        checkArity(g, args, 2, 2);
        KILN_CHECK(args[0].isDouble() && args[1].isDouble(), "complex expects two floats, found ", args[0].tagName(),
                   " and ", args[1].tagName());
        return push(IValue(std::complex<double>(args[0].toDouble(), args[1].toDouble())));
      }
    }
  }

  IValue rebuildTensor(const std::vector<IValue>& args) {
    KILN_CHECK(args[0].isTensor() && storage_tensors_.count(args[0].toTensor().impl()),
               "_rebuild_tensor_v2 expects a storage (a persistent id) first, found ", args[0].tagName());
    const Tensor& storage = args[0].toTensor();
    KILN_CHECK(args[1].isInt() && args[1].toInt() >= 0, "_rebuild_tensor_v2 expects a storage offset >= 0");
    int64_t offset = args[1].toInt();
    std::vector<int64_t> sizes = intsOf(args[2], "the tensor's size");
    std::vector<int64_t> strides = intsOf(args[3], "the tensor's stride");
    KILN_CHECK(sizes.size() <= kMaxDims, "tensor of ", sizes.size(), " dims (kiln reads up to ", kMaxDims, ")");
    KILN_CHECK(sizes.size() == strides.size(), "the tensor has ", sizes.size(), " sizes but ", strides.size(),
               " strides");
    KILN_CHECK(args[4].isBool(), "_rebuild_tensor_v2 expects requires_grad as a bool, found ", args[4].tagName());
    // The view must lie inside its storage.
    int64_t numel = 1;
    std::optional<int64_t> last = offset;
    for (size_t d = 0; d < sizes.size(); ++d) {
      KILN_CHECK(sizes[d] >= 0 && strides[d] >= 0, "the tensor has a negative size or stride: size ",
                 shapeString(sizes), ", stride ", shapeString(strides));
      std::optional<int64_t> n = mulChecked(numel, sizes[d]);
      KILN_CHECK(n, "the tensor's size ", shapeString(sizes), " overflows");
      numel = *n;
      if (last && sizes[d] > 0) {
        std::optional<int64_t> step = mulChecked(sizes[d] - 1, strides[d]);
        last = step ? addChecked(*last, *step) : std::nullopt;
      }
    }
    int64_t storage_numel = storage.numel();
    if (numel > 0) {
      KILN_CHECK(last && *last < storage_numel, "the tensor (offset ", offset, ", size ", shapeString(sizes),
                 ", stride ", shapeString(strides), ") reaches past its storage of ", storage_numel, " elements");
    } else {
      KILN_CHECK(offset <= storage_numel, "the tensor's offset ", offset, " is past its storage of ", storage_numel,
                 " elements");
    }
    auto impl =
        makeIntrusive<TensorImpl>(storage.storage(), storage.dtype(), IntArrayRef(sizes), IntArrayRef(strides), offset);
    impl->setRequiresGrad(args[4].toBool());
    return IValue(Tensor(std::move(impl)));
  }

  void restoreTypeTag(IValue& container, const std::string& text) {
    KILN_CHECK(text.size() <= kMaxTypeTagBytes, "type tag of ", text.size(), " bytes is too long");
    TypePtr& type = type_cache_[text];
    if (!type) {
      // The annotation parser recurses per bracket.
      int depth = 0;
      for (char c : text) {
        depth += c == '[' ? 1 : c == ']' ? -1 : 0;
        KILN_CHECK(depth <= 100, "type tag '", printable(text), "' is nested too deeply");
      }
      type = options_.resolve_type ? options_.resolve_type(text) : parseTypeAnnotation(text);
      KILN_CHECK(type, "type tag '", printable(text), "' did not resolve");
    }
    if (container.isList()) {
      auto list_type = type->cast<ListType>();
      KILN_CHECK(list_type, "restore_type_tag: a list tagged '", printable(text), "'");
      ListObj& l = container.toListRef();
      l.element_type = list_type->elementType();
      untyped_.erase(&l);
    } else if (container.isDict()) {
      auto dict_type = type->cast<DictType>();
      KILN_CHECK(dict_type, "restore_type_tag: a dict tagged '", printable(text), "'");
      DictObj& d = container.toDictRef();
      d.key_type = dict_type->keyType();
      d.value_type = dict_type->valueType();
      untyped_.erase(&d);
    } else {
      KILN_ERROR("restore_type_tag expects a list or a dict, found ", container.tagName());
    }
  }

  void newObject() {
    IValue args = popValue();
    tupleArgs(args);
    Item cls = popItem();
    KILN_CHECK(cls.kind == Kind::Class, "NEWOBJ needs a script class, found ", describe(cls));
    objects_.push_back(PendingObject{cls.index, false, IValue()});
    stack_.push_back(Item{Kind::Object, static_cast<uint32_t>(objects_.size() - 1), IValue()});
  }

  void build() {
    IValue state = popValue();
    needItems(1);
    Item& target = stack_.back();
    if (target.kind == Kind::Object && !objects_[target.index].built) {
      PendingObject& object = objects_[target.index];
      // The caller may keep the state (to run __setstate__ after the whole
      // pickle is read): it is settled and kept like the result.
      if (isContainer(state)) kept_states_.push_back(state);
      IValue value = options_.load_object(class_names_[object.class_index], std::move(state));
      if (isContainer(value)) created_.push_back(value);
      object.built = true;
      object.value = value;
      target = Item{Kind::Value, 0, std::move(value)};
      return;
    }
    KILN_CHECK(target.kind == Kind::Value, "BUILD on ", describe(target));
    // An OrderedDict's attributes (a state dict's _metadata) have no place
    // in a kiln dict; they are read and dropped.
    KILN_CHECK(target.value.isDict(), "BUILD on a ", target.value.tagName());
    KILN_CHECK(state.isDict() || state.isNone(), "BUILD on a dict with a ", state.tagName(), " state");
  }

  IValue persistentLoad(const IValue& pid) {
    KILN_CHECK(pid.isTuple() && pid.toTupleRef().elements.size() == 5,
               "persistent id must be ('storage', storage type, key, location, numel), found ",
               pid.isTuple() ? detail::str("a tuple of ", pid.toTupleRef().elements.size()) : pid.tagName());
    const std::vector<IValue>& id = pid.toTupleRef().elements;
    KILN_CHECK(id[0].isString() && id[0].toStringRef() == "storage",
               "persistent id of an unknown kind (expected "
               "'storage')");
    KILN_CHECK(id[1].isInt(), "persistent id without a storage type");
    ScalarType dtype = scalarTypeFromInt(id[1].toInt());
    KILN_CHECK(dtype != ScalarType::Undefined && storageDtype(detail::str(scalarTypeShortName(dtype), "Storage")),
               "persistent id with an unknown storage type ", id[1].toInt());
    KILN_CHECK(id[2].isString() && id[2].toStringRef().size() <= kMaxNameBytes, "persistent id without a key");
    KILN_CHECK(id[3].isString() && id[3].toStringRef().size() <= kMaxNameBytes, "persistent id without a location");
    KILN_CHECK(id[4].isInt() && id[4].toInt() >= 0, "persistent id without an element count");
    const std::string& key = id[2].toStringRef();
    int64_t numel = id[4].toInt();
    std::optional<int64_t> nbytes = mulChecked(numel, static_cast<int64_t>(elementSize(dtype)));
    KILN_CHECK(nbytes, "storage '", printable(key), "' of ", numel, " elements is too large");
    StoragePtr& storage = storages_[key];
    if (!storage) {
      KILN_CHECK(options_.load_storage, "the pickle refers to storage '", printable(key),
                 "', and nothing was given to load storages");
      storage = options_.load_storage(key, dtype, numel, id[3].toStringRef());
      KILN_CHECK(storage, "storage '", printable(key), "' did not load");
    }
    KILN_CHECK(storage->nbytes() >= static_cast<uint64_t>(*nbytes), "storage '", printable(key), "' has ",
               storage->nbytes(), " bytes, fewer than its ", numel, " elements of ", scalarTypeName(dtype), " need");
    int64_t sizes[] = {numel}, strides[] = {1};
    Tensor t(makeIntrusive<TensorImpl>(storage, dtype, IntArrayRef(sizes, 1), IntArrayRef(strides, 1), 0));
    storage_tensors_.insert(t.impl());
    storage_views_.push_back(t);
    return IValue(t);
  }

  // --- the opcodes ---

  void step() {
    switch (op_) {
      case op::PROTO: {
        uint8_t version = readU8();
        KILN_CHECK(version >= 2 && version <= 5, "pickle protocol ", int(version), " (kiln reads protocols 2 to 5)");
        return;
      }
      case op::FRAME: {
        // Frames only group opcodes for buffered reading; the data is all here.
        uint64_t n = readLittle(8);
        KILN_CHECK(n <= left(), "frame of ", n, " bytes, but ", left(), " left");
        return;
      }
      case op::MARK: marks_.push_back(stack_.size()); return;
      case op::POP:
        if (stack_.size() > frameBase()) {
          stack_.pop_back();
        } else {
          popMark();  // Python's POP drops an empty mark too.
        }
        return;
      case op::POP_MARK: popMark(); return;
      case op::DUP:
        needItems(1);
        stack_.push_back(stack_.back());
        return;
      case op::NONE: return push(IValue());
      case op::NEWTRUE: return push(IValue(true));
      case op::NEWFALSE: return push(IValue(false));
      case op::BININT1: return push(IValue(static_cast<int64_t>(readU8())));
      case op::BININT2: return push(IValue(static_cast<int64_t>(readLittle(2))));
      case op::BININT: return push(IValue(static_cast<int64_t>(static_cast<int32_t>(readLittle(4)))));
      case op::LONG1: {
        size_t n = readU8();
        return push(IValue(decodeLong(readBytes(n))));
      }
      case op::LONG4: {
        int32_t n = static_cast<int32_t>(readLittle(4));
        KILN_CHECK(n >= 0, "LONG4 with a negative length");
        return push(IValue(decodeLong(readBytes(static_cast<uint64_t>(n)))));
      }
      case op::BINFLOAT: {
        // Big-endian, unlike every other number in a pickle.
        need(8);
        uint64_t bits = 0;
        for (size_t i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<uint8_t>(data_[pos_ + i]);
        pos_ += 8;
        return push(IValue(std::bit_cast<double>(bits)));
      }
      case op::SHORT_BINUNICODE:
      case op::SHORT_BINBYTES: return push(IValue(std::string(readBytes(readU8()))));
      case op::BINUNICODE:
      case op::BINBYTES: return push(IValue(std::string(readBytes(readLittle(4)))));
      case op::BINUNICODE8:
      case op::BINBYTES8: return push(IValue(std::string(readBytes(readLittle(8)))));
      case op::EMPTY_TUPLE: return push(newTuple({}));
      case op::TUPLE: return push(newTuple(popMark()));
      case op::TUPLE1: return push(newTuple(popValues(1)));
      case op::TUPLE2: return push(newTuple(popValues(2)));
      case op::TUPLE3: return push(newTuple(popValues(3)));
      case op::EMPTY_LIST:
      case op::EMPTY_SET: return push(newList({}));
      case op::LIST:
      case op::FROZENSET: return push(newList(popMark()));
      case op::APPEND: {
        IValue v = popValue();
        listOf(topValue()).elements.push_back(std::move(v));
        return;
      }
      case op::APPENDS:
      case op::ADDITEMS: {
        std::vector<IValue> values = popMark();
        auto& elements = listOf(topValue()).elements;
        elements.insert(elements.end(), std::make_move_iterator(values.begin()), std::make_move_iterator(values.end()));
        return;
      }
      case op::EMPTY_DICT: return push(newDict());
      case op::DICT: {
        std::vector<IValue> kv = popMark();
        IValue d = newDict();
        setItems(d.toDictRef(), kv);
        return push(std::move(d));
      }
      case op::SETITEM: {
        std::vector<IValue> kv = popValues(2);
        setItems(dictOf(topValue()), kv);
        return;
      }
      case op::SETITEMS: {
        std::vector<IValue> kv = popMark();
        setItems(dictOf(topValue()), kv);
        return;
      }
      case op::BINPUT: return memoPut(readU8());
      case op::LONG_BINPUT: return memoPut(readLittle(4));
      case op::PUT: return memoPut(readDecimalLine());
      case op::MEMOIZE: return memoPut(memo_.size());
      case op::BINGET: return memoGet(readU8());
      case op::LONG_BINGET: return memoGet(readLittle(4));
      case op::GET: return memoGet(readDecimalLine());
      case op::GLOBAL: {
        std::string_view module = readLine();
        std::string_view name = readLine();
        return pushGlobal(module, name);
      }
      case op::STACK_GLOBAL: {
        std::vector<IValue> names = popValues(2);
        KILN_CHECK(names[0].isString() && names[1].isString(), "STACK_GLOBAL needs two strings");
        return pushGlobal(names[0].toStringRef(), names[1].toStringRef());
      }
      case op::REDUCE: return reduce();
      case op::NEWOBJ: return newObject();
      case op::BUILD: return build();
      case op::BINPERSID: {
        IValue pid = popValue();
        return push(persistentLoad(pid));
      }
      case op::PERSID: return push(persistentLoad(IValue(std::string(readLine()))));
      default: {
        static const char* digits = "0123456789abcdef";
        char hex[3] = {digits[op_ >> 4], digits[op_ & 15], 0};
        KILN_ERROR("unknown opcode 0x", hex, " ('", printable(std::string_view(data_.data() + op_pos_, 1)), "')");
      }
    }
  }

  // --- the end ---

  IValue finish() {
    KILN_CHECK(marks_.empty(), "STOP inside a MARK");
    KILN_CHECK(stack_.size() == 1, "the pickle leaves ", stack_.size(), " values on the stack (expected 1)");
    IValue result = popValue();
    std::unordered_set<const void*> reachable;
    for (const IValue& state : kept_states_) settle(state, reachable);
    settle(result, reachable);
    teardown(&reachable);
    return result;
  }

  // Walks the result once, without recursion: rejects values that contain
  // themselves (they would never be freed) or nest deeper than max_depth,
  // and gives the lists and dicts nothing tagged their element types, inner
  // ones first.
  void settle(const IValue& root, std::unordered_set<const void*>& reachable) {
    if (!isContainer(root)) return;
    constexpr uint32_t kOpen = 0;  // on the walk's path
    std::unordered_map<const void*, uint32_t> heights;
    std::unordered_map<const void*, TypePtr> types;  // of settled lists, dicts and tuples
    auto container_type = [&](const IValue& v) -> TypePtr { return types.at(containerPtr(v)); };
    auto type_of = [&](const IValue& v) { return staticTypeOf(v, container_type); };
    struct Frame {
      IValue node;
      size_t next;
      uint32_t height;
    };
    std::vector<Frame> path;
    path.push_back(Frame{root, 0, 1});
    heights[containerPtr(root)] = kOpen;
    while (!path.empty()) {
      Frame& top = path.back();
      if (top.next < childCount(top.node)) {
        IValue child = childAt(top.node, top.next++);
        if (!isContainer(child)) continue;
        auto it = heights.find(containerPtr(child));
        if (it != heights.end()) {
          KILN_CHECK(it->second != kOpen, "the value contains itself (a ", child.tagName(), ")");
          KILN_CHECK(path.size() + it->second <= options_.max_depth, "containers nested deeper than ",
                     options_.max_depth);
          top.height = std::max(top.height, it->second + 1);
          continue;
        }
        KILN_CHECK(path.size() < options_.max_depth, "containers nested deeper than ", options_.max_depth);
        heights[containerPtr(child)] = kOpen;
        path.push_back(Frame{std::move(child), 0, 1});
        continue;
      }
      const void* ptr = containerPtr(top.node);
      if (top.node.isList()) {
        ListObj& l = top.node.toListRef();
        if (untyped_.count(ptr)) {
          l.element_type = commonType(l.elements, type_of);
        } else {
          for (const IValue& e : l.elements) {
            KILN_CHECK(valueFits(e, *l.element_type), "a ", e.tagName(), " in a list tagged ",
                       ListType::create(l.element_type)->annotationStr());
          }
        }
        types[ptr] = ListType::create(l.element_type);
      } else if (top.node.isDict()) {
        DictObj& d = top.node.toDictRef();
        if (untyped_.count(ptr)) {
          d.key_type = commonType(DictSide{d.items(), true}, type_of);
          d.value_type = commonType(DictSide{d.items(), false}, type_of);
        } else {
          for (const auto& [k, v] : d.items()) {
            KILN_CHECK(valueFits(k, *d.key_type) && valueFits(v, *d.value_type), "an entry (", k.tagName(), ", ",
                       v.tagName(), ") in a dict tagged ", DictType::create(d.key_type, d.value_type)->annotationStr());
          }
        }
        types[ptr] = DictType::create(d.key_type, d.value_type);
      } else if (top.node.isTuple()) {
        types[ptr] = tupleElementType(top.node.toTupleRef());
      }
      uint32_t height = top.height;
      heights[ptr] = height;
      reachable.insert(ptr);
      path.pop_back();
      if (!path.empty()) path.back().height = std::max(path.back().height, height + 1);
    }
  }

  // Empties the containers this pickle made that are not part of the result
  // (all of them when it failed), so that no chain of them is freed
  // recursively and no cycle among them outlives the call.
  void teardown(const std::unordered_set<const void*>* keep) {
    for (IValue& v : created_) {
      if (keep && keep->count(containerPtr(v))) continue;
      switch (v.tag()) {
        case IValue::Tag::List: v.toListRef().elements.clear(); break;
        case IValue::Tag::Tuple: v.toTupleRef().elements.clear(); break;
        case IValue::Tag::Dict: v.toDictRef().clear(); break;
        case IValue::Tag::Object: v.toObjectRef().slots.clear(); break;
        default: break;
      }
    }
    stack_.clear();
    kept_states_.clear();
    memo_.clear();
    for (PendingObject& o : objects_) o.value = IValue();
    created_.clear();
  }

  // Bounds on what a pickle may ask for more than once through the memo, so
  // that the work stays in proportion to its size.
  static constexpr uint64_t kHashBudgetBase = uint64_t{1} << 20;
  static constexpr uint64_t kHashBudgetPerByte = 16;
  static constexpr size_t kMaxNameBytes = 1024;  // global names, storage keys, locations
  static constexpr size_t kMaxTypeTagBytes = 4096;
  static constexpr size_t kMaxDims = 64;
  uint64_t hash_work_ = 0;

  std::string_view data_;
  const UnpickleOptions& options_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  uint8_t op_ = 0;

  std::vector<Item> stack_;
  std::vector<IValue> kept_states_;  // what BUILD handed to load_object
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Item> memo_;
  std::vector<CallableGlobal> callables_;
  std::vector<std::string> class_names_;
  std::vector<PendingObject> objects_;
  std::unordered_map<std::string, TypePtr> type_cache_;
  std::unordered_map<std::string, StoragePtr> storages_;
  // The tensors persistent ids became: _rebuild_tensor_v2 takes only these.
  std::unordered_set<const TensorImpl*> storage_tensors_;
  std::vector<Tensor> storage_views_;
  // Every list, dict, tuple and object made, for teardown; the lists and
  // dicts whose element types are still to be inferred; each tuple's
  // height and hash cost.
  std::vector<IValue> created_;
  std::unordered_set<const void*> untyped_;
  std::unordered_map<const void*, std::pair<uint32_t, uint64_t>> tuple_extent_;  // (height, hash cost)
};

// --- pickler -------------------------------------------------------------------

bool isUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<uint8_t>(s[i]);
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (size_t k = 1; k <= n; ++k) {
      auto cc = static_cast<uint8_t>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms and code points past U+10FFFF; surrogates pass, as
    // Python's pickle reads strings with 'surrogatepass'.
    static const uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff) return false;
    i += n + 1;
  }
  return true;
}

class Pickler {
 public:
  explicit Pickler(const PickleOptions& options) : options_(options) {}

  PickleResult run(const IValue& value) {
    out_ += "\x80\x02";
    if (options_.root_ordered_dict && value.isDict()) {
      writeDict(value, /*ordered=*/true);
    } else {
      write(value);
    }
    out_ += static_cast<char>(op::STOP);
    return PickleResult{std::move(out_), std::move(storages_)};
  }

 private:
  struct DepthGuard {
    explicit DepthGuard(Pickler& p) : p(p) {
      KILN_CHECK(++p.depth_ <= p.options_.max_depth, "pickle: the value is nested deeper than ", p.options_.max_depth,
                 " (or contains itself)");
    }
    ~DepthGuard() { --p.depth_; }
    Pickler& p;
  };

  void opcode(uint8_t code) { out_ += static_cast<char>(code); }
  void little(uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  uint32_t put() {
    KILN_CHECK(next_memo_ < std::numeric_limits<uint32_t>::max(), "pickle: too many values to memoize");
    uint32_t id = next_memo_++;
    if (id <= 0xff) {
      opcode(op::BINPUT);
      little(id, 1);
    } else {
      opcode(op::LONG_BINPUT);
      little(id, 4);
    }
    return id;
  }
  void get(uint32_t id) {
    if (id <= 0xff) {
      opcode(op::BINGET);
      little(id, 1);
    } else {
      opcode(op::LONG_BINGET);
      little(id, 4);
    }
  }
  // Values memoized by identity: written once, then fetched from the memo.
  bool getMemoized(const void* ptr) {
    auto it = memo_.find(ptr);
    if (it == memo_.end()) return false;
    get(it->second);
    return true;
  }

  void writeInt(int64_t n) {
    // torch's C++ pickler's choice; its unpickler reads LONG1 of 8 bytes only.
    if (n >= 0 && n <= 0xff) {
      opcode(op::BININT1);
      little(static_cast<uint64_t>(n), 1);
    } else if (n >= 0 && n <= 0xffff) {
      opcode(op::BININT2);
      little(static_cast<uint64_t>(n), 2);
    } else if (n >= std::numeric_limits<int32_t>::min() && n <= std::numeric_limits<int32_t>::max()) {
      opcode(op::BININT);
      little(static_cast<uint32_t>(static_cast<int32_t>(n)), 4);
    } else {
      opcode(op::LONG1);
      little(8, 1);
      little(static_cast<uint64_t>(n), 8);
    }
  }
  void writeDouble(double d) {
    opcode(op::BINFLOAT);
    uint64_t bits = std::bit_cast<uint64_t>(d);
    for (int i = 7; i >= 0; --i) out_ += static_cast<char>((bits >> (8 * i)) & 0xff);
  }
  // A string of the value: by identity first, since hashing the same long
  // string at every use would cost its length each time. (The value, and so
  // the string, lives as long as the pickling.)
  void writeStringValue(const std::string& s) {
    if (getMemoized(&s)) return;
    writeString(s);
    memo_[&s] = strings_.at(s);
  }
  void writeString(const std::string& s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) return get(it->second);
    KILN_CHECK(isUtf8(s), "pickle: string '", printable(s), "' is not UTF-8, which Python cannot read");
    KILN_CHECK(s.size() <= std::numeric_limits<uint32_t>::max(), "pickle: string of ", s.size(), " bytes is too long");
    opcode(op::BINUNICODE);
    little(s.size(), 4);
    out_ += s;
    strings_[s] = put();
  }
  void writeGlobal(const std::string& module, const std::string& name) {
    std::string key = module + "\n" + name + "\n";
    auto it = globals_.find(key);
    if (it != globals_.end()) return get(it->second);
    opcode(op::GLOBAL);
    out_ += key;
    globals_[key] = put();
  }
  void writeIntTuple(IntArrayRef values) {
    if (values.size() == 0) return opcode(op::EMPTY_TUPLE);
    if (values.size() > 3) opcode(op::MARK);
    for (int64_t v : values) writeInt(v);
    static const uint8_t kTupleN[] = {0, op::TUPLE1, op::TUPLE2, op::TUPLE3};
    opcode(values.size() > 3 ? op::TUPLE : kTupleN[values.size()]);
  }

  void write(const IValue& v) {
    // Containers count, as the unpickler counts them.
    std::optional<DepthGuard> guard;
    if (isContainer(v)) guard.emplace(*this);
    switch (v.tag()) {
      case IValue::Tag::None: return opcode(op::NONE);
      case IValue::Tag::Bool: return opcode(v.toBool() ? op::NEWTRUE : op::NEWFALSE);
      case IValue::Tag::Int: return writeInt(v.toInt());
      case IValue::Tag::Double: return writeDouble(v.toDouble());
      case IValue::Tag::String: return writeStringValue(v.toStringRef());
      case IValue::Tag::Tensor: return writeTensor(v.toTensor());
      case IValue::Tag::Tuple: return writeTuple(v);
      case IValue::Tag::List: return writeList(v);
      case IValue::Tag::Dict: return writeDict(v, /*ordered=*/false);
      case IValue::Tag::Object: return writeObject(v);
      case IValue::Tag::Device: return writeDevice(v.toDevice());
      case IValue::Tag::Future: KILN_ERROR("pickle: cannot pickle a Future");
      case IValue::Tag::Complex: return writeComplex(v.toComplexDouble());
    }
  }

  // As torch writes one: builtins.complex applied to (real, imag).
  void writeComplex(std::complex<double> z) {
    writeGlobal("builtins", "complex");
    writeDouble(z.real());
    writeDouble(z.imag());
    opcode(op::TUPLE2);
    opcode(op::REDUCE);
  }

  void writeTuple(const IValue& v) {
    const TupleObj& t = v.toTupleRef();
    if (getMemoized(&t)) return;
    size_t n = t.elements.size();
    if (n == 0) return opcode(op::EMPTY_TUPLE);
    if (n > 3) opcode(op::MARK);
    for (const IValue& e : t.elements) write(e);
    // A tuple reached again through its own elements (via a list or dict,
    // which are memoized first) is in the memo now: drop what was written
    // and fetch it, as Python's pickler does.
    auto it = memo_.find(&t);
    if (it != memo_.end()) {
      if (n > 3) {
        opcode(op::POP_MARK);
      } else {
        for (size_t i = 0; i < n; ++i) opcode(op::POP);
      }
      return get(it->second);
    }
    static const uint8_t kTupleN[] = {0, op::TUPLE1, op::TUPLE2, op::TUPLE3};
    opcode(n > 3 ? op::TUPLE : kTupleN[n]);
    memo_[&t] = put();
  }

  // Python's batching: APPEND for one item, MARK ... APPENDS per 1000.
  template <typename WriteItem>
  void writeBatches(size_t n, uint8_t one, uint8_t many, const WriteItem& write_item) {
    for (size_t start = 0; start < n; start += kBatch) {
      size_t end = std::min(n, start + kBatch);
      if (end - start > 1) opcode(op::MARK);
      for (size_t i = start; i < end; ++i) write_item(i);
      opcode(end - start > 1 ? many : one);
    }
  }

  void writeList(const IValue& v) {
    const ListObj& l = v.toListRef();
    if (getMemoized(&l)) return;
    if (options_.type_tags) {
      // torch.jit.save's form: the list inside a call that gives it its
      // type; memoized after it, as torch's C++ pickler does.
      const char* builder = nullptr;
      switch (l.element_type->kind()) {
        case TypeKind::Int: builder = "build_intlist"; break;
        case TypeKind::Float: builder = "build_doublelist"; break;
        case TypeKind::Bool: builder = "build_boollist"; break;
        case TypeKind::Tensor: builder = "build_tensorlist"; break;
        default: break;
      }
      writeGlobal("torch.jit._pickle", builder ? builder : "restore_type_tag");
      if (builder) opcode(op::MARK);
      opcode(op::EMPTY_LIST);
      opcode(op::MARK);
      for (const IValue& e : l.elements) write(e);
      opcode(op::APPENDS);
      if (builder) {
        opcode(op::TUPLE);
      } else {
        writeString(ListType::create(l.element_type)->annotationStr());
        opcode(op::TUPLE2);
      }
      opcode(op::REDUCE);
      memo_[&l] = put();
      return;
    }
    opcode(op::EMPTY_LIST);
    memo_[&l] = put();
    writeBatches(l.elements.size(), op::APPEND, op::APPENDS, [&](size_t i) { write(l.elements[i]); });
  }

  void writeDict(const IValue& v, bool ordered) {
    const DictObj& d = v.toDictRef();
    if (getMemoized(&d)) return;
    auto write_entry = [&](size_t i) {
      write(d.items()[i].first);
      write(d.items()[i].second);
    };
    if (ordered) {
      writeGlobal("collections", "OrderedDict");
      opcode(op::EMPTY_TUPLE);
      opcode(op::REDUCE);
      memo_[&d] = put();
    } else if (options_.type_tags) {
      writeGlobal("torch.jit._pickle", "restore_type_tag");
      opcode(op::EMPTY_DICT);
      opcode(op::MARK);
      for (size_t i = 0; i < d.size(); ++i) write_entry(i);
      opcode(op::SETITEMS);
      writeString(DictType::create(d.key_type, d.value_type)->annotationStr());
      opcode(op::TUPLE2);
      opcode(op::REDUCE);
      memo_[&d] = put();
      return;
    } else {
      opcode(op::EMPTY_DICT);
      memo_[&d] = put();
    }
    writeBatches(d.size(), op::SETITEM, op::SETITEMS, write_entry);
  }

  void writeTensor(const Tensor& t) {
    KILN_CHECK(t.defined(), "pickle: cannot pickle an undefined tensor");
    if (getMemoized(t.impl())) return;
    writeGlobal("torch._utils", "_rebuild_tensor_v2");
    opcode(op::MARK);
    writeStorage(t);
    writeInt(t.storageOffset());
    writeIntTuple(t.sizes());
    writeIntTuple(t.strides());
    opcode(t.requiresGrad() ? op::NEWTRUE : op::NEWFALSE);
    // backward_hooks: always an empty OrderedDict.
    writeGlobal("collections", "OrderedDict");
    opcode(op::EMPTY_TUPLE);
    opcode(op::REDUCE);
    opcode(op::TUPLE);
    opcode(op::REDUCE);
    memo_[t.impl()] = put();
  }

  void writeStorage(const Tensor& t) {
    const Storage* storage = t.storage().get();
    auto it = storage_memo_.find(storage);
    if (it != storage_memo_.end()) {
      ScalarType seen = storages_[it->second.second].dtype;
      KILN_CHECK(seen == t.dtype(), "pickle: tensors view one storage as both ", scalarTypeName(seen), " and ",
                 scalarTypeName(t.dtype()), ", which torch cannot load");
      return get(it->second.first);
    }
    std::string key = std::to_string(storages_.size());
    int64_t numel = static_cast<int64_t>(storage->nbytes() / t.itemsize());
    opcode(op::MARK);
    writeString("storage");
    writeGlobal("torch", detail::str(scalarTypeShortName(t.dtype()), "Storage"));
    writeString(key);
    writeString("cpu");
    writeInt(numel);
    opcode(op::TUPLE);
    opcode(op::BINPERSID);
    storage_memo_[storage] = {put(), storages_.size()};
    storages_.push_back(PickledStorage{key, t.storage(), t.dtype(), numel});
  }

  void writeObject(const IValue& v) {
    const ObjectObj& o = v.toObjectRef();
    if (getMemoized(&o)) return;
    const std::string& name = o.type->name();
    size_t dot = name.rfind('.');
    KILN_CHECK(dot != std::string::npos && dot > 0 && dot + 1 < name.size(), "pickle: class '", name,
               "' has no qualified name");
    if (options_.on_class && classes_.insert(o.type.get()).second) options_.on_class(o.type);
    writeGlobal(name.substr(0, dot), name.substr(dot + 1));
    opcode(op::EMPTY_TUPLE);
    opcode(op::NEWOBJ);
    std::optional<IValue> state = options_.get_state ? options_.get_state(v) : std::nullopt;
    if (state) {
      write(*state);
    } else {
      opcode(op::EMPTY_DICT);
      opcode(op::MARK);
      for (size_t i = 0; i < o.type->numAttributes(); ++i) {
        writeString(o.type->attributeName(i));
        write(i < o.slots.size() ? o.slots[i] : IValue());
      }
      opcode(op::SETITEMS);
    }
    opcode(op::BUILD);
    memo_[&o] = put();
  }

  void writeDevice(Device d) {
    std::string text = d.str();
    auto it = devices_.find(text);
    if (it != devices_.end()) return get(it->second);
    writeGlobal("torch", "device");
    writeString(text);
    opcode(op::TUPLE1);
    opcode(op::REDUCE);
    devices_[text] = put();
  }

  static constexpr size_t kBatch = 1000;

  const PickleOptions& options_;
  std::string out_;
  uint32_t next_memo_ = 0;
  size_t depth_ = 0;
  std::unordered_map<const void*, uint32_t> memo_;
  std::unordered_set<const ClassType*> classes_;  // reported to on_class
  std::unordered_map<std::string, uint32_t> strings_;
  std::unordered_map<std::string, uint32_t> globals_;
  std::unordered_map<std::string, uint32_t> devices_;
  // storage -> (memo id of its persistent id, index into storages_)
  std::unordered_map<const Storage*, std::pair<uint32_t, size_t>> storage_memo_;
  std::vector<PickledStorage> storages_;
};

}  // namespace

IValue unpickle(std::string_view data, const UnpickleOptions& options, size_t* end) {
  return Unpickler(data, options).run(end);
}

PickleResult pickle(const IValue& value, const PickleOptions& options) { return Pickler(options).run(value); }

TypePtr commonElementType(const std::vector<IValue>& values) {
  auto container_type = [](const IValue& v) -> TypePtr {
    if (v.isList()) return ListType::create(v.toListRef().element_type);
    if (v.isTuple()) return tupleElementType(v.toTupleRef());
    return DictType::create(v.toDictRef().key_type, v.toDictRef().value_type);
  };
  return commonType(values, [&](const IValue& v) { return staticTypeOf(v, container_type); });
}

}  // namespace kiln
