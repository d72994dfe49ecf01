// kiln.optimize_for_inference's native part: the module entry point and the
// graph passes it runs (for kiln.jit.optimize_frozen_graph_for_inference).
#include <pybind11/stl.h>

#include "bindings.h"
#include "kiln/api/optimize_for_inference.h"
#include "kiln/ir/graph.h"
#include "kiln/passes/optimize_for_inference.h"
#include "kiln/tensor/blocked_conv.h"
#include "kiln/util/large_alloc_cache.h"

namespace kiln::python {

void bindOptimizeForInference(py::module_& m) {
  m.def(
      "_optimize_for_inference",
      [](py::handle obj, const std::vector<std::string>& other_methods) {
        auto value = objectToIValue(obj, nullptr);
        KILN_CHECK(value && value->isObject() && value->toObjectRef().type->isModule(),
                   "optimize_for_inference expects the object of a scripted module");
        Module module(value->toObject());
        Module optimized = optimizeForInference(module, other_methods);
        return objectToPython(IValue(optimized._ivalue()));
      },
      py::arg("module"), py::arg("other_methods"),
      "kiln::optimizeForInference: the module in eval mode, frozen, its convolutions fused on oneDNN.");
  m.def(
      "_optimize_frozen_graph_for_inference",
      [](const std::shared_ptr<Graph>& graph) { optimizeFrozenGraphForInference(graph); }, py::arg("graph"),
      "The inference passes on a frozen graph, in place.");
  m.def("_dnnl_channel_block", &dnnlChannelBlock,
        "The channel block of oneDNN's blocked layout on this CPU (16, 8, or 0: none).");
  m.def("_large_alloc_cached_bytes", &largeAllocCachedBytes,
        "Bytes of freed large blocks the allocator keeps for reuse (kiln/util/large_alloc_cache.h).");
  m.def(
      "_dnnl_converted_weights",
      [] {
        ConvertedConvWeightStats stats = convertedConvWeightStats();
        return py::make_tuple(stats.count, stats.bytes);
      },
      "(count, bytes) of the convolution weights oneDNN runs converted (Winograd's layout), kept once per "
      "weight and layout; those of freed modules are dropped first.");
}

}  // namespace kiln::python
