#pragma once
// Shared pieces of the kiln._C extension.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "kiln/core/operator.h"

namespace kiln::python {

namespace py = pybind11;

// Python value -> IValue for an expected type; nullopt when it does not fit.
// `relaxed` also accepts Python numbers for Tensor arguments (as torch does).
std::optional<IValue> toIValue(py::handle obj, const Argument& arg, bool relaxed);
// IValue -> Python (tensors become kiln.Tensor).
py::object toPython(const IValue& value);
// The dtype object (kiln.float32, ...) for a ScalarType, and back.
py::object dtypeObject(ScalarType type);
std::optional<ScalarType> dtypeFromObject(py::handle obj);

// A tensor sharing memory with a numpy array (kiln.from_numpy).
Tensor tensorFromNumpy(const pybind11::array& array);

void bindTensor(py::module_& m);
void bindDispatch(py::module_& m);
void bindIndexing(py::module_& m);
void bindIR(py::module_& m);
void bindRuntime(py::module_& m);
void bindFrontend(py::module_& m);
void bindNn(py::module_& m);

}  // namespace kiln::python
