#pragma once
// Shared pieces of the kiln._C extension.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "kiln/core/operator.h"
#include "kiln/frontend/resolver.h"

namespace kiln {
class GraphFunction;
class Function;
}  // namespace kiln

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
// numpy arrays, also inside lists, tuples and dicts, as kiln tensors
// (sharing memory); other values as they are.
py::object withTensorsForArrays(py::handle obj);
// A Python bool, int or float as its IValue; nullopt for anything else.
std::optional<IValue> numberToIValue(py::handle obj);
// None, bool, int, float, str and tuples of these (the Python values
// TorchScript takes as constants) as IValues; nullopt for anything else.
std::optional<IValue> constantFromPython(py::handle obj);

// Why a Python value did not convert to a script type: a cast's reason, or
// the Python error raised trying (as torch 1.13 words them after its
// mismatch message).
struct CastFailure {
  bool python_error = false;
  std::string message;
  // "\nCast error details: ..." or "\n Python error details: ...".
  std::string details() const;
};
// A Python value as an argument of a script function of type `type`, as
// torch 1.13 converts one (script_value.cpp); nullopt, saying why, when it
// does not fit.
std::optional<IValue> scriptValueToIValue(py::handle obj, const TypePtr& type, CastFailure* why);
// Argument `position` of a call of `f` from Python, converted to its schema
// type (numpy arrays as tensors); raises naming the argument when it does
// not fit.
IValue argumentToIValue(const GraphFunction& f, size_t position, py::handle given);

void bindTensor(py::module_& m);
void bindAutograd(py::module_& m);
void bindDispatch(py::module_& m);
void bindIndexing(py::module_& m);
void bindIR(py::module_& m);
void bindRuntime(py::module_& m);
void bindFrontend(py::module_& m);
void bindTrace(py::module_& m);
void bindObjects(py::module_& m);
void bindNn(py::module_& m);
void bindSerialization(py::module_& m);
void bindImportSource(py::module_& m);
void bindFreeze(py::module_& m);
void bindOptimizeForInference(py::module_& m);
// `.code` and `.code_with_constants` (the code and a dict {"c0": value, ...}
// of its CONSTANTS) of a function; `as_method` leaves `self` unannotated.
std::string functionCode(const Function& function, bool as_method);
py::tuple functionCodeWithConstants(const Function& function, bool as_method);

// Names resolved through a Python callable (see frontend.cpp).
ResolverPtr makePythonResolver(py::object lookup, std::string caller);
// Script objects (object.cpp): a kiln._C.ScriptObject as the IValue of a
// class type (nullopt when it is not one, or not of that type; any class
// when type is null), and back.
std::optional<IValue> objectToIValue(py::handle obj, const TypePtr& type);
py::object objectToPython(const IValue& value);
// The class type a kiln._C.ClassType stands for, or null.
std::shared_ptr<ClassType> classTypeFromPython(py::handle obj);
// Enum classes (enum_class.cpp): a kiln._C.EnumClass as the value its name
// stands for in script code (null for anything else); a Python Enum member
// as the object script code holds for it (of `type`, when not null), and back.
void bindEnumClasses(py::module_& m);
SugaredValuePtr enumClassValue(py::handle obj);
std::optional<IValue> enumMemberToIValue(py::handle obj, const TypePtr& type);
std::optional<py::object> enumMemberToPython(const IValue& value);

}  // namespace kiln::python
