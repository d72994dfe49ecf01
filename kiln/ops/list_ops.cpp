// TorchScript's list operators (len, append, pop, sort, slicing, ...) with
// PyTorch 1.13's schemas and semantics. Lists are shared and mutable: the
// in-place operators change the ListObj the caller holds, and new lists take
// their element type from the input list.
#include <algorithm>
#include <sstream>

#include "kiln/core/function.h"
#include "kiln/core/op_registration.h"
#include "kiln/ops/fold_rules.h"
#include "kiln/ops/sequence_util.h"
#include "kiln/ops/shape_rules.h"

namespace kiln {
namespace {

using Elements = std::vector<IValue>;

Elements& elementsOf(const IValue& list) { return list.toListRef().elements; }

// A new list with `like`'s element type.
IValue listLike(const IValue& like, Elements elements) {
  return IValue::list(like.toListRef().element_type, std::move(elements));
}

// A tensor's truth value (`bool(a < b)`, `bool(a == b)`) needs exactly one element.
Scalar soleElement(const Tensor& t) {
  KILN_CHECK(t.numel() == 1, "Boolean value of Tensor with ", t.numel() == 0 ? "no values" : "more than one value",
             " is ambiguous");
  return t.item();
}

bool tensorLess(const IValue& a, const IValue& b) {
  if (a.is(b)) return false;  // 1.13 orders a tensor against itself without reading it
  Scalar x = soleElement(a.toTensor()), y = soleElement(b.toTensor());
  if (x.isFloatingPoint() || y.isFloatingPoint()) return x.toDouble() < y.toDouble();
  return x.toLong() < y.toLong();
}

// `a < b` for the elements of the specialized lists (int[], str[], ...).
bool intLess(const IValue& a, const IValue& b) { return a.toInt() < b.toInt(); }
bool floatLess(const IValue& a, const IValue& b) { return a.toDouble() < b.toDouble(); }
bool boolLess(const IValue& a, const IValue& b) { return a.toBool() < b.toBool(); }
bool strLess(const IValue& a, const IValue& b) { return a.toStringRef() < b.toStringRef(); }

// The `__lt__(self, other: C) -> bool` of class C that sorting calls, or
// null, saying why not.
Function* objectSortMethod(const ClassType& cls, std::ostringstream& why_not) {
  if (Function* method = cls.findMethod("__lt__")) {
    const FunctionSchema& schema = method->getSchema();
    const auto& args = schema.arguments();
    const auto& returns = schema.returns();
    if (args.size() == 2 && *args[0].type == cls && *args[1].type == cls && returns.size() == 1 &&
        returns[0].type->kind() == TypeKind::Bool) {
      return method;
    }
  }
  why_not << "To sort a list of " << cls.annotationStr() << " it must define a __lt__ method with two inputs of type "
          << cls.annotationStr() << " that returns a bool";
  return nullptr;
}

// Python's `a < b` for the sortable element types: numbers, strings,
// one-element tensors, objects with __lt__, and tuples of those (lexicographic).
bool lessThan(const IValue& a, const IValue& b) {
  switch (a.tag()) {
    case IValue::Tag::Object: {
      if (a.is(b)) return false;
      std::ostringstream why_not;
      Function* lt = objectSortMethod(*a.toObjectRef().type, why_not);
      KILN_CHECK(lt, why_not.str());
      Stack stack{a, b};
      lt->run(stack);
      return stack.back().toBool();
    }
    case IValue::Tag::Int: return intLess(a, b);
    case IValue::Tag::Double: return floatLess(a, b);
    case IValue::Tag::Bool: return boolLess(a, b);
    case IValue::Tag::String: return strLess(a, b);
    case IValue::Tag::Tensor: return tensorLess(a, b);
    case IValue::Tag::Tuple: {
      const Elements& x = a.toTupleRef().elements;
      const Elements& y = b.toTupleRef().elements;
      for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
        if (lessThan(x[i], y[i])) return true;
        if (x[i] != y[i]) return false;
      }
      return false;
    }
    default: KILN_ERROR("sorting values of type ", a.type()->annotationStr(), " is not supported");
  }
}

// Stable, so that reverse=True keeps equal elements in order, as Python does.
template <typename Less>
void sortElements(Elements& elements, bool reverse, Less less) {
  if (reverse) {
    std::stable_sort(elements.begin(), elements.end(), [&](const IValue& a, const IValue& b) { return less(b, a); });
  } else {
    std::stable_sort(elements.begin(), elements.end(), less);
  }
}

template <bool (*Less)(const IValue&, const IValue&)>
auto sortKernel() {
  return [](const IValue& self, bool reverse) { sortElements(elementsOf(self), reverse, Less); };
}
template <bool (*Less)(const IValue&, const IValue&)>
auto sortedKernel() {
  return [](const IValue& input) {
    IValue out = listLike(input, elementsOf(input));
    sortElements(elementsOf(out), false, Less);
    return out;
  };
}

bool sortableTupleType(const TupleType& tuple, std::ostringstream& why_not) {
  for (const TypePtr& t : tuple.elements()) {
    switch (t->kind()) {
      case TypeKind::Int:
      case TypeKind::Bool:
      case TypeKind::Float:
      case TypeKind::String:
      case TypeKind::Tensor: continue;
      case TypeKind::Tuple:
        if (!sortableTupleType(*t->cast<TupleType>(), why_not)) return false;
        continue;
      case TypeKind::Class:
        if (!objectSortMethod(*t->cast<ClassType>(), why_not)) return false;
        continue;
      default:
        why_not << "Contained elements in " << tuple << " are not sortable. Only Int, Bool, Float, String, Tensor, "
                << "a User Defined Class with __lt__ method defined or Tuples of aforementionted types can be sorted.";
        return false;
    }
  }
  return true;
}

// sort.any reaches lists the specialized overloads do not take: tuples.
// Like 1.13 it asks every element to have the first one's (refined) type.
void checkSortableAny(const Elements& elements) {
  if (elements.empty()) return;
  TypePtr type = elements[0].type();
  for (const IValue& e : elements) {
    TypePtr t = e.type();
    KILN_CHECK(*t == *type, "Only values of same type can be compared. Found ", type->annotationStr(), " and ",
               t->annotationStr());
  }
  std::ostringstream why_not;
  if (const auto* tuple = type->cast<TupleType>()) {
    KILN_CHECK(sortableTupleType(*tuple, why_not), why_not.str());
    return;
  }
  if (const auto* cls = type->cast<ClassType>()) {
    KILN_CHECK(objectSortMethod(*cls, why_not), why_not.str());
    return;
  }
  KILN_ERROR(
      "Only list of Tensors, ints, floats, bools, strs, a User Defined Class that defines the __lt__ compare "
      "method or Tuples of aforementioned types can be sorted, got list of ",
      type->annotationStr());
}

// How 1.13 shows a missing element in "'x' is not in list": C++ stream text
// (floats with six significant digits, bools as 0 and 1).
std::string elementText(const IValue& v) {
  std::ostringstream out;
  if (v.isDouble()) {
    out << v.toDouble();
  } else if (v.isBool()) {
    out << static_cast<int>(v.toBool());
  } else {
    out << v;
  }
  return out.str();
}

Elements::iterator findElement(Elements& elements, const IValue& el) {
  return std::find_if(elements.begin(), elements.end(), [&](const IValue& e) { return e == el; });
}

int64_t indexOf(const IValue& self, const IValue& el) {
  Elements& elements = elementsOf(self);
  auto it = findElement(elements, el);
  KILN_CHECK(it != elements.end(), "'", elementText(el), "' is not in list");
  return it - elements.begin();
}

int64_t countOf(const IValue& self, const IValue& el) {
  const Elements& elements = elementsOf(self);
  return std::count_if(elements.begin(), elements.end(), [&](const IValue& e) { return e == el; });
}

void removeElement(const IValue& self, const IValue& el) {
  Elements& elements = elementsOf(self);
  auto it = findElement(elements, el);
  KILN_CHECK(it != elements.end(), "list.remove(x): x not in list");
  elements.erase(it);
}

bool contains(const IValue& list, const IValue& item) {
  const Elements& elements = elementsOf(list);
  return std::any_of(elements.begin(), elements.end(), [&](const IValue& e) { return e == item; });
}

// `a == b` on lists: element-wise `==`; a list equals itself without looking
// (c10::List's identity check), except for tensor lists, whose elements
// always need a truth value.
template <bool kTensors>
bool listsEqual(const IValue& a, const IValue& b) {
  if (!kTensors && a.is(b)) return true;
  const Elements& x = elementsOf(a);
  const Elements& y = elementsOf(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] != y[i]) return false;
  }
  return true;
}

// Python's min(l, r) / max(l, r) on lists: the first differing element
// decides, else the length; ties return r, as in 1.13.
template <bool kMin>
IValue pickList(const IValue& l, const IValue& r) {
  const Elements& a = elementsOf(r);
  const Elements& b = elementsOf(l);
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] == b[i]) continue;
    bool r_wins = kMin ? lessThan(a[i], b[i]) : lessThan(b[i], a[i]);
    return r_wins ? r : l;
  }
  if (kMin) return b.size() < a.size() ? l : r;
  return b.size() > a.size() ? l : r;
}

// min(l) / max(l): 1.13 keeps the current pick unless an element beats it
// (so NaN handling follows `<`).
template <bool kMin>
IValue pickElement(const IValue& self) {
  const Elements& elements = elementsOf(self);
  KILN_CHECK(!elements.empty(), kMin ? "min" : "max", "() arg is an empty sequence");
  const IValue* best = &elements[0];
  for (const IValue& e : elements) {
    if (kMin ? lessThan(e, *best) : lessThan(*best, e)) best = &e;
  }
  return *best;
}

// `l * n`. 1.13 reserves size * n elements first, so a negative count is an
// error for a non-empty list.
IValue repeatList(const IValue& list, int64_t n, const char* op) {
  const Elements& elements = elementsOf(list);
  KILN_CHECK(n >= 0 || elements.empty(), op, ": cannot repeat a list a negative number of times (", n, ")");
  Elements out;
  if (n > 0 && !elements.empty()) {
    KILN_CHECK(static_cast<uint64_t>(n) <= out.max_size() / elements.size(), op, ": a list of ", elements.size(),
               " elements repeated ", n, " times is too large");
    out.reserve(elements.size() * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), elements.begin(), elements.end());
  }
  return listLike(list, std::move(out));
}

void appendAll(Elements& dst, const Elements& src) {
  // `l.extend(l)` / `l += l`: copy first, the source is the destination.
  Elements copy = src;
  dst.insert(dst.end(), std::make_move_iterator(copy.begin()), std::make_move_iterator(copy.end()));
}

template <bool kTensors>
bool listsDiffer(const IValue& a, const IValue& b) {
  return !listsEqual<kTensors>(a, b);
}

const IValue& getItem(const IValue& list, int64_t idx) {
  const Elements& elements = elementsOf(list);
  return elements[detail::checkedIndex(idx, elements.size(), "list")];
}

// any(l) / all(l) with an element's truth value.
template <bool kAll, bool (*Truth)(const IValue&)>
bool truthOf(const IValue& self) {
  const Elements& e = elementsOf(self);
  return kAll ? std::all_of(e.begin(), e.end(), Truth) : std::any_of(e.begin(), e.end(), Truth);
}
bool strTruth(const IValue& v) { return !v.toStringRef().empty(); }
bool intTruth(const IValue& v) { return v.toInt() != 0; }
bool floatTruth(const IValue& v) { return v.toDouble() != 0; }
bool boolTruth(const IValue& v) { return v.toBool(); }

}  // namespace

KILN_REGISTER_SCRIPT_OPS(
    op("aten::len.t(t[] a) -> int", [](const IValue& a) { return static_cast<int64_t>(elementsOf(a).size()); }),
    op("aten::len.any(Any[] a) -> int", [](const IValue& a) { return static_cast<int64_t>(elementsOf(a).size()); }),
    op("aten::len.Tensor(Tensor t) -> int",
       [](const Tensor& t) {
         KILN_CHECK(t.dim() > 0, "len() of a 0-d tensor");
         return t.sizes()[0];
       }),

    // Element access and update.
    op("aten::__getitem__.t(t[](a) list, int idx) -> t(*)", getItem),
    op("aten::select.t(t[](a) list, int idx) -> t(*)", getItem),
    op("aten::_set_item.t(t[](a!) l, int idx, t(b -> *) el) -> t[](a!)",
       [](const IValue& l, int64_t idx, const IValue& el) {
         Elements& elements = elementsOf(l);
         elements[detail::checkedIndex(idx, elements.size(), "list")] = el;
         return l;
       }),
    op("aten::slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]",
       [](const IValue& l, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
         const Elements& elements = elementsOf(l);
         detail::SliceRange range = detail::sliceRange(static_cast<int64_t>(elements.size()), start, end, step);
         Elements out;
         out.reserve(static_cast<size_t>(range.count));
         for (int64_t i = 0, j = range.start; i < range.count; ++i, j += step) {
           out.push_back(elements[static_cast<size_t>(j)]);
         }
         return listLike(l, std::move(out));
       }),

    // Growing and shrinking in place.
    op("aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)",
       [](const IValue& self, const IValue& el) {
         elementsOf(self).push_back(el);
         return self;
       }),
    op("aten::insert.t(t[](a!) self, int idx, t(b -> *) el) -> ()",
       [](const IValue& self, int64_t idx, const IValue& el) {
         Elements& elements = elementsOf(self);
         int64_t n = static_cast<int64_t>(elements.size());
         int64_t i = std::clamp(idx < 0 ? idx + n : idx, int64_t{0}, n);
         elements.insert(elements.begin() + i, el);
       }),
    op("aten::extend.t(t[](a!) self, t[] other) -> ()",
       [](const IValue& self, const IValue& other) { appendAll(elementsOf(self), elementsOf(other)); }),
    op("aten::pop.t(t[](a!) self, int idx=-1) -> t(*)",
       [](const IValue& self, int64_t idx) {
         Elements& elements = elementsOf(self);
         KILN_CHECK(!elements.empty(), "pop from empty list");
         size_t i = detail::checkedIndex(idx, elements.size(), "list");
         IValue out = std::move(elements[i]);
         elements.erase(elements.begin() + static_cast<std::ptrdiff_t>(i));
         return out;
       }),
    op("aten::Delete.t(t[](a!) self, int idx) -> ()",
       [](const IValue& self, int64_t idx) {
         Elements& elements = elementsOf(self);
         KILN_CHECK(!elements.empty(), "pop index out of range");
         elements.erase(elements.begin() +
                        static_cast<std::ptrdiff_t>(detail::checkedIndex(idx, elements.size(), "list")));
       }),
    op("aten::clear.t(t[](a!) self) -> ()", [](const IValue& self) { elementsOf(self).clear(); }),
    op("aten::reverse.t(t[](a!) self) -> ()",
       [](const IValue& self) { std::reverse(elementsOf(self).begin(), elementsOf(self).end()); }),
    op("aten::copy.t(t[](a) self) -> t[]", [](const IValue& self) { return listLike(self, elementsOf(self)); }),
    op("aten::list.t(t[] l) -> t[]", [](const IValue& l) { return listLike(l, elementsOf(l)); }),

    // Concatenation and repetition.
    op("aten::add.t(t[] a, t[] b) -> t[]",
       [](const IValue& a, const IValue& b) {
         IValue out = listLike(a, elementsOf(a));
         appendAll(elementsOf(out), elementsOf(b));
         return out;
       }),
    op("aten::add_.t(t[](a!) self, t[] b) -> t[]",
       [](const IValue& self, const IValue& b) {
         appendAll(elementsOf(self), elementsOf(b));
         return self;
       }),
    op("aten::mul.left_t(t[] l, int n) -> t[]",
       [](const IValue& l, int64_t n) { return repeatList(l, n, "aten::mul"); }),
    op("aten::mul.right_(int n, t[] l) -> t[]",
       [](int64_t n, const IValue& l) { return repeatList(l, n, "aten::mul"); }),
    op("aten::mul_.t(t[](a!) l, int n) -> t[](a!)",
       [](const IValue& l, int64_t n) {
         Elements& elements = elementsOf(l);
         if (n <= 0) {
           elements.clear();
         } else {
           elements = elementsOf(repeatList(l, n, "aten::mul_"));
         }
         return l;
       }),

    // Sorting.
    op("aten::sort.int(int[](a!) self, bool reverse=False) -> ()", sortKernel<intLess>()),
    op("aten::sort.float(float[](a!) self, bool reverse=False) -> ()", sortKernel<floatLess>()),
    op("aten::sort.Tensor(Tensor[](a!) self, bool reverse=False) -> ()", sortKernel<tensorLess>()),
    op("aten::sort.bool(bool[](a!) self, bool reverse=False) -> ()", sortKernel<boolLess>()),
    op("aten::sort.str(str[](a!) self, bool reverse=False) -> ()", sortKernel<strLess>()),
    op("aten::sort.any(t[](a!) self, bool reverse=False) -> ()",
       [](const IValue& self, bool reverse) {
         checkSortableAny(elementsOf(self));
         sortElements(elementsOf(self), reverse, lessThan);
       }),
    op("aten::sorted.int(int[](a) input) -> int[]", sortedKernel<intLess>()),
    op("aten::sorted.float(float[](a) input) -> float[]", sortedKernel<floatLess>()),
    // Its results are its input tensors, reordered: as in torch, autograd
    // records nothing and each keeps its own history.
    op("aten::sorted.Tensor(Tensor[](a) input) -> Tensor[]", sortedKernel<tensorLess>())
        .traits(OpTrait::NeverRequiresGrad),
    op("aten::sorted.bool(bool[](a) input) -> bool[]", sortedKernel<boolLess>()),
    op("aten::sorted.str(str[](a) input) -> str[]", sortedKernel<strLess>()),
    op("aten::sorted.any(t[](a) self) -> t[]",
       [](const IValue& self) {
         checkSortableAny(elementsOf(self));
         IValue out = listLike(self, elementsOf(self));
         sortElements(elementsOf(out), false, lessThan);
         return out;
       }),

    // Searching.
    op("aten::index.list_int(int[] self, int el) -> int", indexOf),
    op("aten::index.list_float(float[] self, float el) -> int", indexOf),
    op("aten::index.list_bool(bool[] self, bool el) -> int", indexOf),
    op("aten::index.list_Tensor(Tensor[] self, Tensor el) -> int", indexOf),
    op("aten::index.list_str(str[] self, str el) -> int", indexOf),
    op("aten::count.int(int[] self, int el) -> int", countOf),
    op("aten::count.float(float[] self, float el) -> int", countOf),
    op("aten::count.bool(bool[] self, bool el) -> int", countOf),
    op("aten::count.Tensor(Tensor[] self, Tensor el) -> int", countOf),
    op("aten::count.str(str[] self, str el) -> int", countOf),
    op("aten::remove.int(int[](a!) self, int el) -> ()", removeElement),
    op("aten::remove.float(float[](a!) self, float el) -> ()", removeElement),
    op("aten::remove.bool(bool[](a!) self, bool el) -> ()", removeElement),
    op("aten::remove.Tensor(Tensor[](a!) self, Tensor el) -> ()", removeElement),
    op("aten::remove.str(str[](a!) self, str el) -> ()", removeElement),
    op("aten::__contains__.int_list(int[] l, int item) -> bool", contains),
    op("aten::__contains__.float_list(float[] l, float item) -> bool", contains),
    op("aten::__contains__.str_list(str[] l, str item) -> bool", contains),

    // Comparison.
    op("aten::eq.int_list(int[] a, int[] b) -> bool", listsEqual<false>).fold(folds::equalToItself),
    op("aten::eq.float_list(float[] a, float[] b) -> bool", listsEqual<false>),
    op("aten::eq.Tensor_list(Tensor[] a, Tensor[] b) -> bool", listsEqual<true>),
    op("aten::eq.bool_list(bool[] a, bool[] b) -> bool", listsEqual<false>).fold(folds::equalToItself),
    op("aten::eq.str_list(str[] a, str[] b) -> bool", listsEqual<false>),
    op("aten::ne.int_list(int[] a, int[] b) -> bool", listsDiffer<false>).fold(folds::equalToItself),
    op("aten::ne.float_list(float[] a, float[] b) -> bool", listsDiffer<false>),
    op("aten::ne.Tensor_list(Tensor[] a, Tensor[] b) -> bool", listsDiffer<true>),
    op("aten::ne.bool_list(bool[] a, bool[] b) -> bool", listsDiffer<false>).fold(folds::equalToItself),
    op("aten::ne.str_list(str[] a, str[] b) -> bool", listsDiffer<false>),
    op("prim::min.int_list(int[] l, int[] r) -> int[]", pickList<true>),
    op("prim::min.float_list(float[] l, float[] r) -> float[]", pickList<true>),
    op("prim::min.bool_list(bool[] l, bool[] r) -> bool[]", pickList<true>),
    op("prim::max.int_list(int[] l, int[] r) -> int[]", pickList<false>),
    op("prim::max.float_list(float[] l, float[] r) -> float[]", pickList<false>),
    op("prim::max.bool_list(bool[] l, bool[] r) -> bool[]", pickList<false>),
    op("prim::min.self_int(int[] self) -> int", pickElement<true>),
    op("prim::min.self_float(float[] self) -> float", pickElement<true>),
    op("prim::min.self_bool(bool[] self) -> bool", pickElement<true>),
    op("prim::max.self_int(int[] self) -> int", pickElement<false>),
    op("prim::max.self_float(float[] self) -> float", pickElement<false>),
    op("prim::max.self_bool(bool[] self) -> bool", pickElement<false>),

    // Reductions.
    op("aten::sum.int(int[] self) -> int",
       [](const IValue& self) {
         // 1.13 accumulates in a C++ int: sums wrap at 32 bits, and kiln's equal them.
         int32_t sum = 0;
         for (const IValue& e : elementsOf(self)) sum = static_cast<int32_t>(sum + e.toInt());
         return static_cast<int64_t>(sum);
       }),
    op("aten::sum.float(float[] self) -> float",
       [](const IValue& self) {
         double sum = 0;
         for (const IValue& e : elementsOf(self)) sum += e.toDouble();
         return sum;
       }),
    op("aten::sum.bool(bool[] self) -> int",
       [](const IValue& self) {
         const Elements& elements = elementsOf(self);
         return static_cast<int64_t>(
             std::count_if(elements.begin(), elements.end(), [](const IValue& e) { return e.toBool(); }));
       }),
    op("aten::any.str(str[] self) -> bool", truthOf<false, strTruth>),
    op("aten::any.int(int[] self) -> bool", truthOf<false, intTruth>),
    op("aten::any.float(float[] self) -> bool", truthOf<false, floatTruth>),
    op("aten::any.bool(bool[] self) -> bool", truthOf<false, boolTruth>),
    op("aten::all.int(int[] self) -> bool", truthOf<true, intTruth>),
    op("aten::all.float(float[] self) -> bool", truthOf<true, floatTruth>),
    op("aten::all.bool(bool[] self) -> bool", truthOf<true, boolTruth>), );

}  // namespace kiln
