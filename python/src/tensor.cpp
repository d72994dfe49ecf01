// kiln.Tensor: the Python face of kiln::Tensor, and numpy interop.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "kiln/frontend/tracer.h"
#include "kiln/tensor/copy.h"

namespace kiln::python {

namespace {

std::vector<py::object>& dtypeObjects() {
  static auto* objects = new std::vector<py::object>(kNumScalarTypes);
  return *objects;
}

py::dtype numpyDtype(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return py::dtype::of<uint8_t>();
    case ScalarType::Char: return py::dtype::of<int8_t>();
    case ScalarType::Short: return py::dtype::of<int16_t>();
    case ScalarType::Int: return py::dtype::of<int32_t>();
    case ScalarType::Long: return py::dtype::of<int64_t>();
    case ScalarType::Half: return py::dtype("float16");
    case ScalarType::Float: return py::dtype::of<float>();
    case ScalarType::Double: return py::dtype::of<double>();
    case ScalarType::Bool: return py::dtype::of<bool>();
    case ScalarType::ComplexFloat: return py::dtype("complex64");
    case ScalarType::ComplexDouble: return py::dtype("complex128");
    default: KILN_ERROR("numpy() does not support dtype ", t);
  }
}

ScalarType fromNumpyDtype(const py::dtype& d) {
  char kind = d.kind();
  size_t size = d.itemsize();
  if (kind == 'f' && size == 4) return ScalarType::Float;
  if (kind == 'f' && size == 8) return ScalarType::Double;
  if (kind == 'f' && size == 2) return ScalarType::Half;
  if (kind == 'i' && size == 8) return ScalarType::Long;
  if (kind == 'i' && size == 4) return ScalarType::Int;
  if (kind == 'i' && size == 2) return ScalarType::Short;
  if (kind == 'i' && size == 1) return ScalarType::Char;
  if (kind == 'u' && size == 1) return ScalarType::Byte;
  if (kind == 'b') return ScalarType::Bool;
  if (kind == 'c' && size == 8) return ScalarType::ComplexFloat;
  if (kind == 'c' && size == 16) return ScalarType::ComplexDouble;
  KILN_CHECK_TYPE(false, "can't convert np.ndarray of type ",
                  py::str(static_cast<const py::handle&>(d)).cast<std::string>(),
                  ". The only supported types are: float64, float32, float16, complex64, complex128, int64, int32, "
                  "int16, int8, uint8, and bool.");
}

void releasePyObject(void* context) {
  py::gil_scoped_acquire gil;
  Py_DECREF(static_cast<PyObject*>(context));
}

Tensor fromNumpy(py::array array) {
  ScalarType dtype = fromNumpyDtype(array.dtype());
  const auto ndim = array.ndim();
  DimVector sizes, strides;
  int64_t item = array.itemsize();
  int64_t extent = 1;
  bool empty_array = false;
  for (py::ssize_t d = 0; d < ndim; ++d) {
    int64_t stride = array.strides(d);
    KILN_CHECK(stride >= 0,
               "At least one stride in the given numpy array is negative, and tensors with negative "
               "strides are not currently supported. (You can probably work around this by making a "
               "copy of your array with array.copy().)");
    KILN_CHECK(stride % item == 0, "given numpy array strides not a multiple of the element byte size");
    sizes.push_back(array.shape(d));
    strides.push_back(stride / item);
    if (array.shape(d) == 0) empty_array = true;
    extent += (array.shape(d) - 1) * (stride / item);
  }
  if (empty_array) extent = 0;
  PyObject* owner = array.ptr();
  Py_INCREF(owner);
  auto storage = makeIntrusive<Storage>(const_cast<void*>(array.data()), static_cast<size_t>(extent * item),
                                        &releasePyObject, owner);
  return Tensor(makeIntrusive<TensorImpl>(std::move(storage), dtype, sizes, strides, 0));
}

py::array toNumpy(const Tensor& t) {
  std::vector<py::ssize_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<py::ssize_t> strides;
  for (int64_t s : t.strides()) strides.push_back(s * static_cast<int64_t>(t.itemsize()));
  auto* keep = new Tensor(t);
  py::capsule base(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(numpyDtype(t.dtype()), shape, strides, t.rawData(), base);
}

// A tensor becoming a Python number: in a trace the number is a constant
// from now on, which torch's tracer warns about (TracerWarning).
void warnConversion(const char* what) {
  if (!tracer::isTracing()) return;
  tracer::warn(std::string("Converting a tensor to a Python ") + what +
               " might cause the trace to be incorrect. We can't record the data flow of Python values, so this "
               "value will be treated as a constant in the future. This means that the trace might not generalize "
               "to other inputs!");
}

py::object itemOf(const Tensor& t, const char* what) {
  warnConversion(what);
  return toPython(IValue(t.item()));
}

}  // namespace

Tensor tensorFromNumpy(const py::array& array) { return fromNumpy(array); }

py::object dtypeObject(ScalarType type) {
  auto& objects = dtypeObjects();
  int code = static_cast<int>(type);
  KILN_CHECK(code >= 0 && code < kNumScalarTypes && objects[code], "no Python dtype object for ", type);
  return objects[code];
}

std::optional<ScalarType> dtypeFromObject(py::handle obj) {
  if (!py::hasattr(obj, "_kiln_dtype_code")) return std::nullopt;
  return scalarTypeFromInt(obj.attr("_kiln_dtype_code").cast<int64_t>());
}

void bindTensor(py::module_& m) {
  m.def("_register_dtype", [](int64_t code, py::object obj) {
    scalarTypeFromInt(code);  // validates
    dtypeObjects().at(code) = std::move(obj);
  });
  m.def("_wrap_number", [](py::object value) {
    if (PyBool_Check(value.ptr())) return scalarToTensor(Scalar(value.cast<bool>()));
    if (PyLong_Check(value.ptr())) return scalarToTensor(Scalar(value.cast<int64_t>()));
    KILN_CHECK_TYPE(PyFloat_Check(value.ptr()), "expected a Python number, got ",
                    std::string(py::str(py::type::handle_of(value).attr("__name__"))));
    return scalarToTensor(Scalar(value.cast<double>()));
  });
  m.def("from_numpy", &fromNumpy, py::arg("ndarray"), "A tensor sharing memory with a numpy array.");

  py::class_<Tensor>(m, "Tensor", py::dynamic_attr())
      // requires_grad, grad, grad_fn, is_leaf, backward: python/src/autograd.cpp.
      .def_property_readonly(
          "shape",
          [](const Tensor& t) { return py::tuple(py::cast(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()))); })
      .def_property_readonly("dtype", [](const Tensor& t) { return dtypeObject(t.dtype()); })
      .def_property_readonly("ndim", &Tensor::dim)
      .def_property_readonly("_is_wrapped_number", &Tensor::isWrappedNumber)
      .def_property_readonly("device", [](const Tensor&) { return py::str("cpu"); })
      .def("dim", &Tensor::dim)
      .def("ndimension", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("nelement", &Tensor::numel)
      .def("element_size", &Tensor::itemsize)
      .def("is_contiguous", &Tensor::isContiguous)
      .def("is_floating_point", [](const Tensor& t) { return isFloatingType(t.dtype()); })
      .def("storage_offset", &Tensor::storageOffset)
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.rawData()); })
      .def("_storage_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.storage()->data()); })
      .def(
          "size",
          [](const Tensor& t, std::optional<int64_t> dim) -> py::object {
            if (dim) return py::int_(t.size(*dim));
            return py::tuple(py::cast(std::vector<int64_t>(t.sizes().begin(), t.sizes().end())));
          },
          py::arg("dim") = py::none())
      .def(
          "stride",
          [](const Tensor& t, std::optional<int64_t> dim) -> py::object {
            if (dim) return py::int_(t.stride(*dim));
            return py::tuple(py::cast(std::vector<int64_t>(t.strides().begin(), t.strides().end())));
          },
          py::arg("dim") = py::none())
      .def("item", [](const Tensor& t) { return itemOf(t, "number"); })
      .def("__float__", [](const Tensor& t) { return py::float_(itemOf(t, "float")); })
      .def("__int__", [](const Tensor& t) { return py::int_(itemOf(t, "integer")); })
      .def("__index__", [](const Tensor& t) { return py::int_(itemOf(t, "index")); })
      .def("__bool__",
           [](const Tensor& t) {
             KILN_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
             return py::bool_(itemOf(t, "boolean"));
           })
      .def("numpy", &toNumpy)
      .def("_same_tensor", [](const Tensor& a, const Tensor& b) { return a.isSame(b); })
      // The tensor's identity (its TensorImpl), for Python objects over one tensor.
      .def("_impl_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.impl()); });
}

}  // namespace kiln::python
