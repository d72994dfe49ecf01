// Support for kiln.nn in the extension: a kiln.Tensor made from another
// tensor aliases it (the same tensor, as a Python subclass instance), which
// lets kiln.nn.Parameter subclass kiln.Tensor in Python.
#include "bindings.h"

namespace kiln::python {

void bindNn(py::module_& m) {
  // kiln.Tensor is bound in tensor.cpp; this adds its constructor.
  auto tensor = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  tensor.def(py::init([](const Tensor& data) { return Tensor(data); }), py::arg("data"),
             "kiln.Tensor(t): a tensor object naming the same tensor as t (no copy); Python subclasses of "
             "kiln.Tensor (kiln.nn.Parameter) are made this way.");
}

}  // namespace kiln::python
