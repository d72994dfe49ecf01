// kiln._C: the extension module behind the kiln Python package.
#include "bindings.h"
#include "kiln/tensor/parallel.h"

namespace kiln::python {

PYBIND11_MODULE(_C, m) {
  m.doc() = "kiln: a TorchScript compiler and runtime (native part)";
  // pybind11 tries translators newest first: register the base class first.
  py::register_exception<kiln::Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<kiln::IndexError>(m, "IndexError", PyExc_IndexError);
  py::register_exception<kiln::TypeError>(m, "TypeError", PyExc_TypeError);
  m.def("set_num_threads", &setNumThreads, py::arg("n"));
  m.def("get_num_threads", &getNumThreads);
  bindTensor(m);
  bindDispatch(m);
  bindIndexing(m);
  bindIR(m);
  bindRuntime(m);
  bindFrontend(m);
  bindTrace(m);
  bindObjects(m);
  bindNn(m);
  bindSerialization(m);
}

}  // namespace kiln::python
