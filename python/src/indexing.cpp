// Python indexing (t[...] and t[...] = v), following PyTorch 1.13's
// python_variable_indexing.cpp. Basic indices (ints, slices, None, Ellipsis,
// bools, 0-dim integer tensors) become views made by select/slice/unsqueeze;
// tensors and sequences become advanced indices, gathered by aten::index or
// written by index_put_.
//
// Every step runs an operator through runOperator, so that a trace records
// the same aten::select / slice / unsqueeze / index / copy_ / fill_ /
// index_put_ nodes as torch's tracer does.
#include "bindings.h"
#include "kiln/core/dispatch_hook.h"
#include "kiln/frontend/tracer.h"
#include "kiln/tensor/index.h"
#include "kiln/tensor/scalar_convert.h"
#include "kiln/tensor/shape.h"

namespace kiln::python {

namespace {

bool isTensor(py::handle obj) { return py::isinstance<Tensor>(obj); }

// --- the operators indexing runs ------------------------------------------------------------

const Operator& findOp(const char* name, const char* overload) {
  OperatorPtr op = findOperator(Symbol::fromQualString(name), overload);
  KILN_INTERNAL_ASSERT(op, "indexing needs ", name, ".", overload);
  return *op;  // registered operators live as long as the process
}

Tensor call(const Operator& op, Stack stack) {
  runOperator(op, stack);
  return stack.back().toTensor();
}

Tensor opSelect(const Tensor& self, int64_t dim, int64_t index) {
  static const Operator& op = findOp("aten::select", "int");
  return call(op, {IValue(self), IValue(dim), IValue(index)});
}

Tensor opSlice(const Tensor& self, int64_t dim, int64_t start, int64_t stop, int64_t step) {
  static const Operator& op = findOp("aten::slice", "Tensor");
  return call(op, {IValue(self), IValue(dim), IValue(start), IValue(stop), IValue(step)});
}

Tensor opUnsqueeze(const Tensor& self, int64_t dim) {
  static const Operator& op = findOp("aten::unsqueeze", "");
  return call(op, {IValue(self), IValue(dim)});
}

Tensor opAlias(const Tensor& self) {
  static const Operator& op = findOp("aten::alias", "");
  return call(op, {IValue(self)});
}

Tensor opView(const Tensor& self, IntArrayRef sizes) {
  static const Operator& op = findOp("aten::view", "");
  return call(op, {IValue(self), IValue(std::vector<int64_t>(sizes.begin(), sizes.end()))});
}

Tensor opExpand(const Tensor& self, IntArrayRef sizes) {
  static const Operator& op = findOp("aten::expand", "");
  return call(op, {IValue(self), IValue(std::vector<int64_t>(sizes.begin(), sizes.end())), IValue(false)});
}

// Advanced indices as the Tensor?[] list aten::index and index_put_ take
// (undefined entries: dims not indexed).
IValue indexList(const std::vector<Tensor>& indices) {
  std::vector<IValue> elements;
  for (const Tensor& t : indices) elements.push_back(t.defined() ? IValue(t) : IValue());
  return IValue::list(OptionalType::create(TensorType::get()), std::move(elements));
}

Tensor opIndex(const Tensor& self, const std::vector<Tensor>& indices) {
  static const Operator& op = findOp("aten::index", "Tensor");
  return call(op, {IValue(self), indexList(indices)});
}

void opIndexPut(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values) {
  static const Operator& op = findOp("aten::index_put_", "");
  call(op, {IValue(self), indexList(indices), IValue(values), IValue(false)});
}

void opCopy(const Tensor& self, const Tensor& src) {
  static const Operator& op = findOp("aten::copy_", "");
  call(op, {IValue(self), IValue(src), IValue(false)});
}

void opFill(const Tensor& self, const Tensor& value) {
  static const Operator& op = findOp("aten::fill_", "Tensor");
  call(op, {IValue(self), IValue(value)});
}

// A list index made into a tensor: 1.13's trace records its conversion to
// int64 (aten::to of the constant).
Tensor opToLong(const Tensor& self) {
  static const Operator& op = findOp("aten::to", "device");
  return call(op, {IValue(self), IValue(Device(DeviceType::CPU)), IValue(static_cast<int64_t>(ScalarType::Long)),
                   IValue(false), IValue(false), IValue()});
}

bool isNumpyInteger(py::handle obj) {
  static auto* integer = new py::object(py::module_::import("numpy").attr("integer"));
  return py::isinstance(obj, *integer);
}

// An int index: a Python int (not bool) or a numpy integer.
bool isInt(py::handle obj) { return (PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr())) || isNumpyInteger(obj); }

std::string typeName(py::handle obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

// One parsed index element.
struct Item {
  enum class Kind { Int, Slice, Ellipsis, None, Bool, Tensor } kind;
  int64_t value = 0;                      // Int; Bool (0/1)
  int64_t start = 0, stop = 0, step = 1;  // Slice
  Tensor tensor;
  bool from_sequence = false;  // a Python sequence turned into a tensor
};

// A list (or numpy array) used as an index: bool data gives a mask, anything
// else int64 (an empty list included), as torch's indexing_tensor_from_data.
Tensor sequenceToTensor(py::handle obj) {
  py::module_ np = py::module_::import("numpy");
  py::object array = np.attr("array")(obj);
  std::string kind = py::str(array.attr("dtype").attr("kind"));
  if (kind != "b") {
    KILN_CHECK_TYPE(kind == "i" || kind == "u" || kind == "f" || py::int_(array.attr("size")).cast<int64_t>() == 0,
                    "new(): invalid data type '", std::string(py::str(array.attr("dtype"))), "'");
    array = array.attr("astype")(np.attr("int64"));
  }
  return py::module_::import("kiln._C").attr("from_numpy")(array).cast<Tensor>();
}

Item parseItem(py::handle obj) {
  Item item;
  if (isInt(obj)) {
    item.kind = Item::Kind::Int;
    item.value = obj.cast<int64_t>();
  } else if (PySlice_Check(obj.ptr())) {
    Py_ssize_t start = 0, stop = 0, step = 0;
    if (PySlice_Unpack(obj.ptr(), &start, &stop, &step) != 0) throw py::error_already_set();
    item.kind = Item::Kind::Slice;
    item.start = start;
    item.stop = stop;
    item.step = step;
  } else if (obj.ptr() == Py_Ellipsis) {
    item.kind = Item::Kind::Ellipsis;
  } else if (obj.is_none()) {
    item.kind = Item::Kind::None;
  } else if (PyBool_Check(obj.ptr())) {
    item.kind = Item::Kind::Bool;
    item.value = obj.ptr() == Py_True;
  } else if (isTensor(obj)) {
    item.kind = Item::Kind::Tensor;
    item.tensor = obj.cast<Tensor>();
  } else if (PySequence_Check(obj.ptr())) {
    item.kind = Item::Kind::Tensor;
    item.tensor = sequenceToTensor(obj);
    if (tracer::isTracing() && item.tensor.dtype() != ScalarType::Bool) item.tensor = opToLong(item.tensor);
    item.from_sequence = true;
  } else {
    PyObject* index = PyNumber_Index(obj.ptr());
    if (index == nullptr) {
      PyErr_Clear();
      throw py::index_error(
          "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got " +
          typeName(obj) + ")");
    }
    item.kind = Item::Kind::Int;
    item.value = py::reinterpret_steal<py::object>(index).cast<int64_t>();
  }
  return item;
}

// NumPy's rule for when a non-tuple sequence index means a tuple of indices:
// when it holds a slice, Ellipsis, None, a tensor or another sequence.
bool treatSequenceAsTuple(py::handle index) {
  if (PyTuple_Check(index.ptr())) return true;
  if (isTensor(index) || !PySequence_Check(index.ptr())) return false;
  Py_ssize_t n = PySequence_Size(index.ptr());
  if (n < 0) {
    PyErr_Clear();
    return false;
  }
  if (n >= 32) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* raw = PySequence_GetItem(index.ptr(), i);
    if (raw == nullptr) {
      PyErr_Clear();
      return false;
    }
    py::object obj = py::reinterpret_steal<py::object>(raw);
    if (isTensor(obj) || PySequence_Check(raw) || PySlice_Check(raw) || raw == Py_Ellipsis || obj.is_none()) {
      return true;
    }
  }
  return false;
}

std::vector<Item> parseIndex(py::handle index) {
  std::vector<Item> items;
  if (treatSequenceAsTuple(index)) {
    for (py::handle obj : py::tuple(py::reinterpret_borrow<py::object>(index))) items.push_back(parseItem(obj));
  } else {
    items.push_back(parseItem(index));
  }
  return items;
}

// The dims the index consumes: everything but None, Ellipsis and bools; a mask its rank.
int64_t specifiedDims(const std::vector<Item>& items) {
  int64_t count = 0;
  for (const Item& item : items) {
    switch (item.kind) {
      case Item::Kind::Tensor: {
        const ScalarType t = item.tensor.dtype();
        const bool mask = !item.from_sequence && (t == ScalarType::Bool || t == ScalarType::Byte);
        count += mask ? item.tensor.dim() : 1;
        break;
      }
      case Item::Kind::Int:
      case Item::Kind::Slice: ++count; break;
      default: break;
    }
  }
  return count;
}

Tensor applySelect(const Tensor& self, int64_t dim, int64_t index, int64_t real_dim) {
  KILN_CHECK_INDEX(!(index == 0 && dim == 0 && self.dim() == 0),
                   "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
                   "convert a 0-dim tensor to a number");
  const int64_t size = dim < self.dim() ? self.sizes()[dim] : 0;
  KILN_CHECK_INDEX(index >= -size && index < size, "index ", index, " is out of bounds for dimension ", real_dim,
                   " with size ", size);
  return opSelect(self, dim, index);
}

Tensor applySlice(const Tensor& self, int64_t dim, const Item& item) {
  if (item.step <= 0) throw py::value_error("step must be greater than zero");
  // A slice of everything is skipped, except in a trace (as in torch: the
  // trace must not depend on the example's size).
  if (!tracer::isTracing() && dim < self.dim() && item.start == 0 && item.step == 1 && item.stop >= self.sizes()[dim]) {
    return self;
  }
  return opSlice(self, dim, item.start, item.stop, item.step);
}

// A bool index: one position (true) or none (false) along a new dim.
Tensor boolIndex(bool value) {
  Tensor t = empty(DimVector{value ? 1 : 0}, ScalarType::Long);
  if (value) *t.data<int64_t>() = 0;
  return t;
}

void recordIndex(std::vector<Tensor>& indices, int64_t& dim, const Tensor& index) {
  indices.resize(static_cast<size_t>(dim + 1));
  indices[dim] = index;
  ++dim;
}

// Applies the basic indices as views and collects the advanced ones, each
// at the dim of the result it indexes.
Tensor applySlicing(const Tensor& self, const std::vector<Item>& items, std::vector<Tensor>& indices) {
  const int64_t specified = specifiedDims(items);
  KILN_CHECK_INDEX(specified <= self.dim(), "too many indices for tensor of dimension ", self.dim());
  Tensor result = self;
  int64_t dim = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& item = items[i];
    switch (item.kind) {
      case Item::Kind::Int: result = applySelect(result, dim, item.value, static_cast<int64_t>(i)); break;
      case Item::Kind::Slice: result = applySlice(result, dim++, item); break;
      case Item::Kind::Ellipsis: dim += self.dim() - specified; break;
      case Item::Kind::None: result = opUnsqueeze(result, dim++); break;
      case Item::Kind::Bool:
        result = opUnsqueeze(result, dim);
        recordIndex(indices, dim, boolIndex(item.value != 0));
        break;
      case Item::Kind::Tensor: {
        const Tensor& t = item.tensor;
        const ScalarType type = t.dtype();
        if (t.dim() == 0 && isIntegralType(type, /*include_bool=*/true)) {
          if (type != ScalarType::Bool && type != ScalarType::Byte) {
            result = applySelect(result, dim, t.item().toLong(), static_cast<int64_t>(i));
          } else {
            result = opUnsqueeze(result, dim);
            recordIndex(indices, dim, boolIndex(t.item().toBool()));
          }
        } else {
          recordIndex(indices, dim, t);
        }
        break;
      }
    }
  }
  return result;
}

// A lone int or slice indexes dim 0 directly (no "too many indices" check, as in torch).
std::optional<Tensor> applyLoneBasicIndex(const Tensor& self, py::handle index) {
  if (!isInt(index) && !PySlice_Check(index.ptr())) return std::nullopt;
  Item item = parseItem(index);
  if (item.kind == Item::Kind::Int) return applySelect(self, 0, item.value, 0);
  return applySlice(self, 0, item);
}

Tensor getItem(const Tensor& self, py::handle index) {
  if (index.is_none()) return opUnsqueeze(self, 0);
  if (index.ptr() == Py_Ellipsis) return opAlias(self);
  std::vector<Tensor> indices;
  std::optional<Tensor> basic = applyLoneBasicIndex(self, index);
  Tensor sliced = basic ? *basic : applySlicing(self, parseIndex(index), indices);
  // A new tensor object even when the index selects everything.
  if (indices.empty()) return sliced.isSame(self) ? opAlias(sliced) : sliced;
  py::gil_scoped_release no_gil;
  return opIndex(sliced, indices);
}

// A Python number as a 0-dim tensor of the destination's dtype (overflow
// checked, as torch's scalar_tensor).
Tensor valueToTensor(py::handle value, ScalarType dtype) {
  if (isTensor(value)) return value.cast<Tensor>();
  auto checked = [dtype](const Scalar& s) {
    checkScalarFits(s, dtype);
    return scalarToTensor(s, dtype);
  };
  if (isInt(value) || PyBool_Check(value.ptr())) return checked(Scalar(value.cast<int64_t>()));
  if (PyFloat_Check(value.ptr())) return checked(Scalar(value.cast<double>()));
  throw py::type_error("can't assign a " + typeName(value) + " to a kiln tensor of dtype " +
                       std::string(scalarTypeName(dtype)));
}

// `src` without its leading size-1 dims (they may exceed the destination's rank).
Tensor stripLeadingOnes(const Tensor& src) {
  IntArrayRef sizes = src.sizes();
  size_t first = 0;
  while (first < sizes.size() && sizes[first] == 1) ++first;
  if (first == 0) return src;
  return opView(src, sizes.slice(first));
}

void copyTo(Tensor dst, const Tensor& src) {
  const bool same_shape =
      dst.dim() == src.dim() && std::equal(dst.sizes().begin(), dst.sizes().end(), src.sizes().begin());
  if (same_shape) {
    opCopy(dst, src);
  } else if (src.dim() == 0) {
    opFill(dst, src);
  } else {
    opCopy(dst, opExpand(stripLeadingOnes(src), dst.sizes()));
  }
}

void setItem(Tensor& self, py::handle index, py::handle py_value) {
  Tensor value = valueToTensor(py_value, self.dtype());
  if (index.ptr() == Py_False) return;
  if (index.ptr() == Py_Ellipsis) return copyTo(self, value);
  if (index.is_none() || index.ptr() == Py_True) return copyTo(opUnsqueeze(self, 0), value);
  std::vector<Tensor> indices;
  std::optional<Tensor> basic = applyLoneBasicIndex(self, index);
  Tensor sliced = basic ? *basic : applySlicing(self, parseIndex(index), indices);
  py::gil_scoped_release no_gil;
  if (indices.empty()) return copyTo(sliced, value);
  opIndexPut(sliced, indices, stripLeadingOnes(value));
}

}  // namespace

void bindIndexing(py::module_& m) {
  py::object cls = m.attr("Tensor");
  py::setattr(cls, "__getitem__",
              py::cpp_function([](const Tensor& self, py::handle index) { return getItem(self, index); },
                               py::name("__getitem__"), py::is_method(cls)));
  py::setattr(cls, "__setitem__",
              py::cpp_function([](Tensor& self, py::handle index, py::handle value) { setItem(self, index, value); },
                               py::name("__setitem__"), py::is_method(cls)));
  py::setattr(cls, "__delitem__",
              py::cpp_function(
                  [](const Tensor&, py::handle) { throw py::type_error("Tensor does not support deleting items"); },
                  py::name("__delitem__"), py::is_method(cls)));
}

}  // namespace kiln::python
