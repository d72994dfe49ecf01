// kiln._C: the extension module behind the kiln Python package.
#include "bindings.h"
#include "kiln/tensor/kernels/vec_kernels.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/parallel_info.h"

namespace kiln::python {

PYBIND11_MODULE(_C, m) {
  m.doc() = "kiln: a TorchScript compiler and runtime (native part)";
  // pybind11 tries translators newest first: register the base class first.
  py::register_exception<kiln::Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<kiln::IndexError>(m, "IndexError", PyExc_IndexError);
  py::register_exception<kiln::TypeError>(m, "TypeError", PyExc_TypeError);
  m.def("set_num_threads", &setNumThreads, py::arg("n"));
  m.def("get_num_threads", &getNumThreads);
  m.def("parallel_info", &parallelInfo);
  // The vector width of the eager kernels: "avx512", "avx2" or "portable"
  // (KILN_DISABLE_AVX512=1 in the environment keeps AVX2).
  m.def("_vec_isa", [] { return kernels::vecIsaName(kernels::vecIsa()); });
  // Picks "avx512", "avx2" or "portable", or the widest below it that the
  // CPU runs; returns the one chosen. For tests and benchmarks.
  m.def(
      "_set_vec_isa",
      [](const std::string& name) {
        for (kernels::VecIsa isa : {kernels::VecIsa::Portable, kernels::VecIsa::Avx2, kernels::VecIsa::Avx512}) {
          if (name == kernels::vecIsaName(isa)) return kernels::vecIsaName(kernels::setVecIsa(isa));
        }
        throw kiln::Error("_set_vec_isa: expected 'avx512', 'avx2' or 'portable', got '" + name + "'");
      },
      py::arg("name"));
  bindTensor(m);
  bindAutograd(m);
  bindDispatch(m);
  bindIndexing(m);
  bindIR(m);
  bindRuntime(m);
  bindFrontend(m);
  bindTrace(m);
  bindObjects(m);
  bindEnumClasses(m);
  bindNn(m);
  bindSerialization(m);
  bindImportSource(m);
  bindFreeze(m);
  bindOptimizeForInference(m);
}

}  // namespace kiln::python
