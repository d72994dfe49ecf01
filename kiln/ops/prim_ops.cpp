// prim:: operators for building and taking apart values: tuples, lists,
// dicts, attributes, chunks, exceptions, type tests and printing. Control
// flow, constants, calls, fork and wait are the interpreter's own
// instructions (kiln/runtime/code.cpp), not operators.
#include <functional>
#include <iostream>
#include <mutex>

#include "kiln/core/op_registration.h"
#include "kiln/ir/graph.h"
#include "kiln/ops/prim_ops.h"
#include "kiln/tensor/shape.h"

namespace kiln {

namespace {

thread_local bool grad_enabled = true;

std::mutex print_mutex;
PrintHandler print_handler = [](const std::string& text) { std::cout << text << std::flush; };

// Pops the last n values into a vector, in order.
std::vector<IValue> popN(Stack& stack, size_t n) {
  std::vector<IValue> out(std::make_move_iterator(stack.end() - static_cast<ptrdiff_t>(n)),
                          std::make_move_iterator(stack.end()));
  stack.resize(stack.size() - n);
  return out;
}

int64_t normalizeIndex(int64_t index, size_t size, const char* what) {
  int64_t n = static_cast<int64_t>(size);
  KILN_CHECK_INDEX(index >= -n && index < n, what, " index out of range");
  return index < 0 ? index + n : index;
}

// The slot of `field` in the class type of a GetAttr/SetAttr node's object,
// when the type is known statically.
std::optional<size_t> staticSlot(const Node& n) {
  if (auto cls = n.input(0)->type()->cast<ClassType>()) return cls->findAttributeSlot(n.s(attr::name));
  return std::nullopt;
}

size_t slotOf(const ObjectObj& object, const std::string& field) {
  auto slot = object.type->findAttributeSlot(field);
  KILN_CHECK(slot, "object of type '", object.type->name(), "' has no attribute '", field, "'");
  return *slot;
}

bool isInstance(const IValue& value, const std::vector<TypePtr>& types) {
  TypePtr actual = value.type();
  for (const TypePtr& t : types) {
    // An empty list or dict is an instance of every list or dict type.
    if (t->kind() == TypeKind::List && value.isList() && value.toListRef().elements.empty()) return true;
    if (t->kind() == TypeKind::Dict && value.isDict() && value.toDictRef().empty()) return true;
    // A bare `list` or `dict` (isinstance(x, list)) is List[Any] / Dict[Any, Any]: any list or dict.
    if (auto list = t->cast<ListType>(); list && value.isList() && list->elementType()->kind() == TypeKind::Any)
      return true;
    if (auto dict = t->cast<DictType>(); dict && value.isDict() && dict->keyType()->kind() == TypeKind::Any)
      return true;
    // `Tuple[()]` stands for a bare `tuple` (1.13's AnyTupleType): any tuple.
    if (auto tuple = t->cast<TupleType>(); tuple && value.isTuple() && tuple->elements().empty()) return true;
    if (actual->isSubtypeOf(*t)) return true;
  }
  return false;
}

// t.tolist() as a nested list of `depth` levels (none: the value of a 0-dim
// tensor) of int (0), float (1), bool (2) or complex (3). As 1.13, an int
// wants an int64 tensor exactly, float and complex any of their kind.
IValue tensorToList(const Tensor& t, int64_t depth, int64_t element_kind) {
  KILN_CHECK(element_kind >= 0 && element_kind <= 3,
             "Unsupported element type for tolist; only int, float, complex and bool are supported");
  ScalarType dtype = t.dtype();
  bool fits = element_kind == 0   ? dtype == ScalarType::Long
              : element_kind == 1 ? isFloatingType(dtype)
              : element_kind == 2 ? dtype == ScalarType::Bool
                                  : isComplexType(dtype);
  KILN_CHECK(fits, "Output annotation element type and runtime tensor element type must match for tolist()");
  KILN_CHECK(t.dim() == depth, "Output annotation list dimension and runtime tensor dimension must match for tolist()");
  TypePtr leaf = element_kind == 0   ? IntType::get()
                 : element_kind == 1 ? FloatType::get()
                 : element_kind == 2 ? BoolType::get()
                                     : ComplexType::get();
  std::function<IValue(const Tensor&, int64_t)> convert = [&](const Tensor& x, int64_t level) -> IValue {
    if (level == depth) {
      Scalar v = x.item();
      if (element_kind == 0) return IValue(v.toLong());
      if (element_kind == 1) return IValue(v.toDouble());
      if (element_kind == 2) return IValue(v.toBool());
      return IValue(v.toComplexDouble());
    }
    TypePtr element = leaf;
    for (int64_t i = level + 1; i < depth; ++i) element = ListType::create(element);
    std::vector<IValue> items;
    for (int64_t i = 0; i < x.size(0); ++i) items.push_back(convert(select(x, 0, i), level + 1));
    return IValue::list(element, std::move(items));
  };
  return convert(t, 0);
}

KILN_REGISTER_SCRIPT_OPS(
    stackOp("prim::tolist(...) -> ...",
            [](Stack& stack) {
              int64_t element_kind = stack.back().toInt();
              int64_t depth = stack[stack.size() - 2].toInt();
              Tensor t = stack[stack.size() - 3].toTensor();
              stack.resize(stack.size() - 3);
              stack.push_back(tensorToList(t, depth, element_kind));
            }),
    nodeOp("prim::TupleConstruct",
           [](const Node& n) -> Operation {
             size_t count = n.inputs().size();
             TypePtr type = n.output()->type();
             // Only named tuples need their type kept; plain ones derive it.
             auto tuple_type = type->cast<TupleType>();
             if (!tuple_type || !tuple_type->name()) type = nullptr;
             return
                 [count, type](Stack& stack) { stack.emplace_back(makeIntrusive<TupleObj>(popN(stack, count), type)); };
           }),
    stackOp("prim::TupleUnpack(Any tup) -> ...",
            [](Stack& stack) {
              IValue tuple = std::move(stack.back());
              stack.pop_back();
              for (const IValue& e : tuple.toTupleRef().elements) stack.push_back(e);
            }),
    stackOp("prim::TupleIndex(Any tup, int i) -> Any",
            [](Stack& stack) {
              int64_t i = stack.back().toInt();
              IValue tuple = std::move(stack[stack.size() - 2]);
              stack.resize(stack.size() - 2);
              const auto& elements = tuple.toTupleRef().elements;
              stack.push_back(elements[normalizeIndex(i, elements.size(), "tuple")]);
            }),
    nodeOp("prim::TupleSlice",
           [](const Node& n) -> Operation {
             int64_t begin = n.i(attr::beg);
             int64_t end = n.i(attr::end);
             return [begin, end](Stack& stack) {
               IValue tuple = std::move(stack.back());
               stack.pop_back();
               const auto& elements = tuple.toTupleRef().elements;
               KILN_CHECK_INDEX(begin >= 0 && begin <= end && end <= static_cast<int64_t>(elements.size()),
                                "tuple slice [", begin, ":", end, "] out of range for a tuple of ", elements.size());
               stack.emplace_back(IValue::tuple({elements.begin() + begin, elements.begin() + end}));
             };
           }),
    nodeOp("prim::ListConstruct",
           [](const Node& n) -> Operation {
             size_t count = n.inputs().size();
             auto list_type = n.output()->type()->cast<ListType>();
             KILN_CHECK(list_type, "prim::ListConstruct must produce a list, not ", n.output()->type()->str());
             TypePtr element_type = list_type->elementType();
             return [count, element_type](Stack& stack) {
               stack.emplace_back(makeIntrusive<ListObj>(element_type, popN(stack, count)));
             };
           }),
    nodeOp("prim::ListUnpack",
           [](const Node& n) -> Operation {
             size_t count = n.outputs().size();
             return [count](Stack& stack) {
               IValue list = std::move(stack.back());
               stack.pop_back();
               const auto& elements = list.toListRef().elements;
               KILN_CHECK(elements.size() == count, "Expected ", count, " elements in a list but found ",
                          elements.size());
               stack.insert(stack.end(), elements.begin(), elements.end());
             };
           }),
    nodeOp("prim::DictConstruct",
           [](const Node& n) -> Operation {
             size_t count = n.inputs().size();
             KILN_CHECK(count % 2 == 0, "prim::DictConstruct takes keys and values in pairs, got ", count, " inputs");
             auto dict_type = n.output()->type()->cast<DictType>();
             KILN_CHECK(dict_type, "prim::DictConstruct must produce a dict, not ", n.output()->type()->str());
             TypePtr key_type = dict_type->keyType();
             TypePtr value_type = dict_type->valueType();
             return [count, key_type, value_type](Stack& stack) {
               auto dict = makeIntrusive<DictObj>(key_type, value_type);
               auto items = popN(stack, count);
               for (size_t i = 0; i < count; i += 2) dict->insertOrAssign(std::move(items[i]), std::move(items[i + 1]));
               stack.emplace_back(std::move(dict));
             };
           }),
    nodeOp("prim::ConstantChunk(...) -> ...",
           [](const Node& n) -> Operation {
             int64_t chunks = n.i(attr::chunks);
             int64_t dim = n.i(attr::dim);
             std::vector<bool> used;
             for (const Value* v : n.outputs()) used.push_back(v->hasUses());
             return [chunks, dim, used](Stack& stack) {
               Tensor t = stack.back().toTensor();
               stack.pop_back();
               std::vector<Tensor> pieces = chunk(t, chunks, dim);
               KILN_CHECK(pieces.size() <= used.size(), "Expected chunk to return ", used.size(), " outputs, but got ",
                          pieces.size());
               for (Tensor& p : pieces) stack.emplace_back(std::move(p));
               // chunk gives fewer pieces when the dim is short; that is
               // fine as long as nobody reads the missing ones.
               for (size_t i = pieces.size(); i < used.size(); ++i) {
                 KILN_CHECK(!used[i], "Expected chunk to return at least ", used.size(), " outputs, but got only ",
                            pieces.size());
                 stack.emplace_back();
               }
             };
           }),
    stackOp("prim::RaiseException(str msg, str? cls=None) -> ()",
            [](Stack& stack) {
              IValue cls = std::move(stack.back());
              std::string message = stack[stack.size() - 2].toStringRef();
              stack.resize(stack.size() - 2);
              std::string name = cls.isNone() ? "RuntimeError" : cls.toStringRef();
              throw ScriptException(name, message);
            }),
    stackOp("prim::Uninitialized() -> Any", [](Stack& stack) { stack.emplace_back(); }),
    stackOp("prim::unchecked_cast(t x) -> t", [](Stack&) {}),
    // kiln has no autograd; the flag is kept (per thread, as torch's) so
    // that `with torch.no_grad():` saves and restores it as 1.13 does.
    stackOp("aten::is_grad_enabled() -> bool", [](Stack& stack) { stack.emplace_back(isGradEnabled()); }),
    stackOp("aten::set_grad_enabled(bool val) -> ()",
            [](Stack& stack) {
              setGradEnabled(stack.back().toBool());
              stack.pop_back();
            }),
    nodeOp("prim::CreateObject",
           [](const Node& n) -> Operation {
             auto cls =
                 std::const_pointer_cast<ClassType>(std::dynamic_pointer_cast<const ClassType>(n.output()->type()));
             KILN_CHECK(cls, "prim::CreateObject must produce a class type, not ", n.output()->type()->str());
             return [cls](Stack& stack) { stack.emplace_back(makeIntrusive<ObjectObj>(cls)); };
           }),
    nodeOp("prim::GetAttr",
           [](const Node& n) -> Operation {
             std::string field = n.s(attr::name);
             if (auto slot = staticSlot(n)) {
               size_t s = *slot;
               return [s](Stack& stack) { stack.back() = IValue(stack.back().toObjectRef().slot(s)); };
             }
             return [field](Stack& stack) {
               ObjectObj& object = stack.back().toObjectRef();
               stack.back() = IValue(object.slot(slotOf(object, field)));
             };
           }),
    nodeOp("prim::SetAttr",
           [](const Node& n) -> Operation {
             std::string field = n.s(attr::name);
             return [field](Stack& stack) {
               IValue value = std::move(stack.back());
               IValue object = std::move(stack[stack.size() - 2]);
               stack.resize(stack.size() - 2);
               object.toObjectRef().setAttr(field, std::move(value));
             };
           }),
    nodeOp("prim::isinstance",
           [](const Node& n) -> Operation {
             std::vector<TypePtr> types = n.tys(attr::types);
             return [types](Stack& stack) { stack.back() = IValue(isInstance(stack.back(), types)); };
           }),
    nodeOp("prim::Print(...) -> ()", [](const Node& n) -> Operation {
      size_t count = n.inputs().size();
      return [count](Stack& stack) {
        std::ostringstream out;
        auto args = popN(stack, count);
        for (size_t i = 0; i < args.size(); ++i) out << (i ? " " : "") << args[i];
        out << "\n";
        std::lock_guard lock(print_mutex);
        print_handler(out.str());
      };
    }), );

}  // namespace

ScriptException::ScriptException(std::string python_class, std::string message)
    : Error(python_class + ": " + message), python_class_(std::move(python_class)), message_(std::move(message)) {}

bool isGradEnabled() { return grad_enabled; }
void setGradEnabled(bool enabled) { grad_enabled = enabled; }

void setPrintHandler(PrintHandler handler) {
  std::lock_guard lock(print_mutex);
  print_handler = std::move(handler);
}

}  // namespace kiln
