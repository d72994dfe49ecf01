// Puts the passes' pipeline into the graph executor when the library loads:
// the runtime does not include pass headers (docs/architecture.md, "Layers"), so this
// layer, which sees both, connects them.
#include "kiln/fuser/graph_fuser.h"
#include "kiln/passes/pipeline.h"
#include "kiln/runtime/graph_executor.h"

namespace kiln {
namespace {

const bool pipeline_registered = [] {
  registerGraphExecutorPass(PassStage::Required, "required", runRequiredPasses);
  registerGraphExecutorPass(PassStage::Optimization, "optimization", runOptimizationPasses);
  // Fusion comes last: the groups it forms are opaque to the passes above.
  registerGraphExecutorPass(PassStage::Optimization, "fusion", fuseGraph);
  return true;
}();

}  // namespace
}  // namespace kiln
