// Python values as the arguments of script functions and methods, converted
// the way torch 1.13 converts them (its toIValue): by the parameter's type,
// with Python's own conversions. An int parameter takes anything with
// __index__ or __int__ but a float, a float anything with __float__, a bool
// anything with __bool__ (and None); List[int], List[float], List[bool] and
// List[Tensor] take any sequence (a range, a tuple, not a str), other lists
// any iterable; a tuple any iterable, a dict anything dict() takes; a class
// parameter any object with the class's attributes, copied into a new
// object. Operators called from Python do not come here (dispatch.cpp).
#include "bindings.h"
#include "kiln/core/interface_type.h"

namespace kiln::python {

namespace {

// The Python exception being raised (cleared) as the reason.
void takePythonError(CastFailure* why) {
  py::error_already_set error;
  why->python_error = true;
  why->message = error.what();
}

void castError(CastFailure* why, std::string message) {
  why->python_error = false;
  why->message = std::move(message);
}

constexpr const char* kUnableToCast =
    "Unable to cast Python instance to C++ type (#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode "
    "for details)";

bool isPythonIntLike(py::handle obj) { return PyLong_Check(obj.ptr()) && !PyBool_Check(obj.ptr()); }

std::optional<int64_t> pythonToInt(py::handle obj) {
  if (PyFloat_Check(obj.ptr())) return std::nullopt;
  if (py::isinstance<Tensor>(obj)) {
    // int(t): the value of a one-element tensor, truncated.
    Tensor t = obj.cast<Tensor>();
    if (t.numel() != 1) return std::nullopt;
    Scalar s = t.item();
    if (s.isComplex()) return std::nullopt;
    return s.isFloatingPoint() ? static_cast<int64_t>(s.toDouble()) : s.toLong();
  }
  py::object number;
  if (PyLong_Check(obj.ptr())) {
    number = py::reinterpret_borrow<py::object>(obj);
  } else if (PyIndex_Check(obj.ptr())) {
    number = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  } else if (PyNumber_Check(obj.ptr())) {
    number = py::reinterpret_steal<py::object>(PyNumber_Long(obj.ptr()));
  }
  if (!number) {
    PyErr_Clear();
    return std::nullopt;
  }
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  if (overflow != 0 || (value == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return std::nullopt;
  }
  return static_cast<int64_t>(value);
}

std::optional<double> pythonToDouble(py::handle obj) {
  double value = PyFloat_AsDouble(obj.ptr());
  if (value == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    return std::nullopt;
  }
  return value;
}

std::optional<bool> pythonToBool(py::handle obj) {
  if (obj.ptr() == Py_True) return true;
  if (obj.ptr() == Py_False) return false;
  if (obj.is_none()) return false;
  // Only a number-like truth (__bool__), not a container's length.
  PyNumberMethods* number = Py_TYPE(obj.ptr())->tp_as_number;
  if (number && number->nb_bool) {
    int result = number->nb_bool(obj.ptr());
    if (result == 0 || result == 1) return result == 1;
    PyErr_Clear();
  }
  return std::nullopt;
}

std::optional<std::complex<double>> pythonToComplex(py::handle obj) {
  Py_complex z = PyComplex_AsCComplex(obj.ptr());
  if (z.real == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    return std::nullopt;
  }
  return std::complex<double>(z.real, z.imag);
}

std::optional<std::string> pythonToString(py::handle obj) {
  if (py::isinstance<py::str>(obj)) return obj.cast<std::string>();
  if (PyBytes_Check(obj.ptr())) return std::string(PyBytes_AsString(obj.ptr()), PyBytes_Size(obj.ptr()));
  if (PyByteArray_Check(obj.ptr())) {
    return std::string(PyByteArray_AsString(obj.ptr()), PyByteArray_Size(obj.ptr()));
  }
  return std::nullopt;
}

// A device from its name ("cpu", "cuda:1", b"cpu"), or from an object with
// a str `type` and an int or None `index` (torch.device).
std::optional<IValue> pythonToDevice(py::handle obj) {
  if (auto name = pythonToString(obj)) return IValue(Device::parse(*name));  // a bad name raises, as in 1.13
  if (!py::hasattr(obj, "type") || !py::hasattr(obj, "index")) return std::nullopt;
  py::object type = obj.attr("type");
  py::object index = obj.attr("index");
  if (!py::isinstance<py::str>(type) || !(index.is_none() || isPythonIntLike(index))) return std::nullopt;
  std::string name = type.cast<std::string>();
  if (!index.is_none()) name += ":" + std::to_string(index.cast<int64_t>());
  return IValue(Device::parse(name));
}

// A sequence as pybind11 casts one to std::vector: not a str or bytes.
bool isVectorSequence(py::handle obj) {
  return PySequence_Check(obj.ptr()) && !PyBytes_Check(obj.ptr()) && !PyUnicode_Check(obj.ptr()) &&
         !py::isinstance<Tensor>(obj);
}

std::optional<IValue> listToIValue(py::handle obj, const ListType& type, CastFailure* why) {
  const TypePtr& element = type.elementType();
  std::vector<IValue> items;
  switch (element->kind()) {
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Bool:
    case TypeKind::Tensor: {
      if (!isVectorSequence(obj)) {
        castError(why, kUnableToCast);
        return std::nullopt;
      }
      Py_ssize_t size = PySequence_Size(obj.ptr());
      if (size < 0) {
        takePythonError(why);
        return std::nullopt;
      }
      for (Py_ssize_t i = 0; i < size; ++i) {
        auto item = py::reinterpret_steal<py::object>(PySequence_GetItem(obj.ptr(), i));
        if (!item) {
          takePythonError(why);
          return std::nullopt;
        }
        CastFailure ignored;
        auto v = scriptValueToIValue(item, element, &ignored);
        if (!v) {
          castError(why, kUnableToCast);
          return std::nullopt;
        }
        items.push_back(std::move(*v));
      }
      break;
    }
    default: {
      auto iterator = py::reinterpret_steal<py::object>(PyObject_GetIter(obj.ptr()));
      if (!iterator) {
        takePythonError(why);
        return std::nullopt;
      }
      while (auto item = py::reinterpret_steal<py::object>(PyIter_Next(iterator.ptr()))) {
        auto v = scriptValueToIValue(item, element, why);
        if (!v) return std::nullopt;
        items.push_back(std::move(*v));
      }
      if (PyErr_Occurred()) {
        takePythonError(why);
        return std::nullopt;
      }
    }
  }
  return IValue::list(element, std::move(items));
}

std::optional<IValue> tupleToIValue(py::handle obj, const TypePtr& type, CastFailure* why) {
  py::tuple tuple;
  if (PyTuple_Check(obj.ptr())) {
    tuple = py::reinterpret_borrow<py::tuple>(obj);
  } else {
    tuple = py::reinterpret_steal<py::tuple>(PySequence_Tuple(obj.ptr()));
    if (!tuple) {
      takePythonError(why);
      return std::nullopt;
    }
  }
  const auto& elements = type->cast<TupleType>()->elements();
  if (tuple.size() != elements.size()) {
    castError(why, "Object " + std::string(py::str(obj)) + " had a different number of elements than type " +
                       type->annotationStr());
    return std::nullopt;
  }
  std::vector<IValue> items;
  for (size_t i = 0; i < elements.size(); ++i) {
    auto v = scriptValueToIValue(py::handle(PyTuple_GET_ITEM(tuple.ptr(), i)), elements[i], why);
    if (!v) return std::nullopt;
    items.push_back(std::move(*v));
  }
  // A NamedTuple parameter's value carries its name and fields.
  return IValue(makeIntrusive<TupleObj>(std::move(items), type->cast<TupleType>()->isNamed() ? type : nullptr));
}

std::optional<IValue> dictToIValue(py::handle obj, const DictType& type, CastFailure* why) {
  py::dict dict;
  if (PyDict_Check(obj.ptr())) {
    dict = py::reinterpret_borrow<py::dict>(obj);
  } else {
    // What dict(obj) makes: pairs, a mapping.
    dict = py::reinterpret_steal<py::dict>(PyObject_CallOneArg(reinterpret_cast<PyObject*>(&PyDict_Type), obj.ptr()));
    if (!dict) {
      takePythonError(why);
      return std::nullopt;
    }
  }
  auto out = makeIntrusive<DictObj>(type.keyType(), type.valueType());
  for (auto [key, value] : dict) {
    auto k = scriptValueToIValue(key, type.keyType(), why);
    if (!k) return std::nullopt;
    auto v = scriptValueToIValue(value, type.valueType(), why);
    if (!v) return std::nullopt;
    out->insertOrAssign(std::move(*k), std::move(*v));
  }
  return IValue(std::move(out));
}

// A script object of the class, or a new one holding copies of the Python
// object's attributes of the class's names (whatever the object's class).
std::optional<IValue> classToIValue(py::handle obj, const TypePtr& type, CastFailure* why) {
  if (auto v = objectToIValue(obj, type)) return v;
  if (objectToIValue(obj, nullptr)) return std::nullopt;  // an object of another class
  auto cls = std::const_pointer_cast<ClassType>(std::static_pointer_cast<const ClassType>(type));
  if (cls->isModule() || dynamic_cast<const InterfaceType*>(cls.get())) return std::nullopt;
  auto object = makeIntrusive<ObjectObj>(cls);
  for (size_t slot = 0; slot < cls->numAttributes(); ++slot) {
    const std::string& name = cls->attributeName(slot);
    if (!py::hasattr(obj, name.c_str())) {
      castError(why,
                "Tried to cast object to type " + type->annotationStr() + " but object was missing attribute " + name);
      return std::nullopt;
    }
    CastFailure inner;
    py::object attribute = obj.attr(name.c_str());
    auto v = scriptValueToIValue(attribute, cls->attributeType(slot), &inner);
    if (!v) {
      castError(why, "Could not cast attribute '" + name + "' to type " + cls->attributeType(slot)->annotationStr() +
                         ": " + inner.message);
      return std::nullopt;
    }
    object->slot(slot) = std::move(*v);
  }
  return IValue(std::move(object));
}

}  // namespace

std::string CastFailure::details() const {
  return (python_error ? "\n Python error details: " : "\nCast error details: ") + message;
}

std::optional<IValue> scriptValueToIValue(py::handle obj, const TypePtr& type, CastFailure* why) {
  auto fail = [&]() -> std::optional<IValue> {
    castError(why, kUnableToCast);
    return std::nullopt;
  };
  switch (type->kind()) {
    case TypeKind::Tensor:
      if (py::isinstance<Tensor>(obj)) return IValue(obj.cast<Tensor>());
      if (py::isinstance<py::array>(obj)) return IValue(tensorFromNumpy(py::reinterpret_borrow<py::array>(obj)));
      return fail();
    case TypeKind::Int: {
      if (auto dtype = dtypeFromObject(obj)) return IValue(static_cast<int64_t>(*dtype));
      if (auto v = pythonToInt(obj)) return IValue(*v);
      return fail();
    }
    case TypeKind::Float: {
      if (py::isinstance<Tensor>(obj)) {
        Tensor t = obj.cast<Tensor>();
        if (t.numel() != 1 || t.item().isComplex()) return fail();
        return IValue(t.item().toDouble());
      }
      if (auto v = pythonToDouble(obj)) return IValue(*v);
      return fail();
    }
    case TypeKind::Bool:
      if (auto v = pythonToBool(obj)) return IValue(*v);
      return fail();
    case TypeKind::Complex:
      if (auto v = pythonToComplex(obj)) return IValue(*v);
      return fail();
    case TypeKind::Number:
      if (auto dtype = dtypeFromObject(obj)) return IValue(static_cast<int64_t>(*dtype));
      if (PyLong_Check(obj.ptr())) {
        if (auto v = pythonToInt(obj)) return IValue(*v);
        return fail();
      }
      if (PyFloat_Check(obj.ptr())) return IValue(PyFloat_AsDouble(obj.ptr()));
      if (PyComplex_CheckExact(obj.ptr())) return IValue(*pythonToComplex(obj));
      castError(why, "Cannot cast " + std::string(py::str(obj)) + " to " + type->annotationStr());
      return std::nullopt;
    case TypeKind::String:
      if (auto v = pythonToString(obj)) return IValue(std::move(*v));
      return fail();
    case TypeKind::None:
      if (obj.is_none()) return IValue();
      castError(why, "Cannot cast " + std::string(py::str(obj)) + " to None");
      return std::nullopt;
    case TypeKind::Device:
      if (auto v = pythonToDevice(obj)) return v;
      return fail();
    case TypeKind::Optional:
      if (obj.is_none()) return IValue();
      return scriptValueToIValue(obj, type->cast<OptionalType>()->elementType(), why);
    case TypeKind::List: return listToIValue(obj, *type->cast<ListType>(), why);
    case TypeKind::Tuple: return tupleToIValue(obj, type, why);
    case TypeKind::Dict: return dictToIValue(obj, *type->cast<DictType>(), why);
    case TypeKind::Class: return classToIValue(obj, type, why);
    default: {
      // Any and Union infer the value's own type; the rest take what
      // kiln's operators take.
      Argument arg;
      arg.type = type;
      py::object value = withTensorsForArrays(obj);
      if (auto v = toIValue(value, arg, /*relaxed=*/false)) return v;
      if (type->kind() == TypeKind::Union) {
        // Why, in 1.13's words: the type the value has on its own.
        arg.type = VarType::create("t");
        if (auto inferred = toIValue(value, arg, /*relaxed=*/false)) {
          castError(why, "Expected a member of " + type->annotationStr() + " but instead found type " +
                             inferred->type()->annotationStr());
          return std::nullopt;
        }
      }
      return fail();
    }
  }
}

}  // namespace kiln::python
