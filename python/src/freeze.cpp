// kiln.freeze's native part: freezing a scripted module's object, and the
// frozen-graph optimizations on a graph (kiln.jit.run_frozen_optimizations).
#include <pybind11/stl.h>

#include "bindings.h"
#include "kiln/api/freeze.h"
#include "kiln/ir/graph.h"
#include "kiln/passes/frozen_graph_optimizations.h"

namespace kiln::python {

namespace {

Module moduleOf(py::handle obj) {
  auto value = objectToIValue(obj, nullptr);
  KILN_CHECK(value && value->isObject() && value->toObjectRef().type->isModule(),
             "freeze expects the object of a scripted module");
  return Module(value->toObject());
}

}  // namespace

void bindFreeze(py::module_& m) {
  m.def(
      "_freeze_module",
      [](py::handle obj, const std::vector<std::string>& preserved_attrs, std::optional<bool> optimize_numerics) {
        Module module = moduleOf(obj);
        Module frozen = optimize_numerics ? freeze(module, preserved_attrs, *optimize_numerics)
                                          : freezeModule(module, preserved_attrs);
        return objectToPython(IValue(frozen._ivalue()));
      },
      py::arg("module"), py::arg("preserved_attrs"), py::arg("optimize_numerics") = py::none(),
      "The frozen copy of a scripted module's object: kiln::freeze with optimize_numerics given, else "
      "kiln::freezeModule (torch._C._freeze_module: no frozen-graph optimizations, no training-mode check).");
  m.def(
      "_optimize_frozen_graph",
      [](const std::shared_ptr<Graph>& graph, bool optimize_numerics) {
        optimizeFrozenGraph(graph, optimize_numerics);
      },
      py::arg("graph"), py::arg("optimize_numerics") = true,
      "The frozen-graph optimizations, in place (torch._C._jit_pass_optimize_frozen_graph).");
}

}  // namespace kiln::python
