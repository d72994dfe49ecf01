// Puts the passes' pipeline into the graph executor when the library loads:
// the runtime does not include pass headers (docs/architecture.md, "Layers"), so this
// layer, which sees both, connects them.
#include <cstdlib>
#include <string>

#include "kiln/autograd/graph_autodiff.h"
#include "kiln/fuser/graph_fuser.h"
#include "kiln/passes/fuse_conv_post_ops.h"
#include "kiln/passes/pipeline.h"
#include "kiln/runtime/graph_executor.h"

namespace kiln {
namespace {

const bool pipeline_registered = [] {
  registerGraphExecutorPass(PassStage::Required, "required", runRequiredPasses);
  registerGraphExecutorPass(PassStage::Optimization, "optimization", runDerivativePreservingOptimization);
  // What inference optimization does that stays right when parameters
  // change (docs/inference.md, "In the executor"): convolutions with their
  // activation and residual as oneDNN post-ops, weights read every call.
  // KILN_CONV_POST_OPS=0 turns it off.
  registerGraphExecutorPass(PassStage::NondiffOptimization, "nondiff_optimization", runNondiffOptimization);
  registerGraphExecutorPass(PassStage::NondiffOptimization, "conv_post_ops", [](const std::shared_ptr<Graph>& g) {
    static const bool enabled = [] {
      const char* env = std::getenv("KILN_CONV_POST_OPS");
      return !(env && std::string(env) == "0");
    }();
    if (enabled) fuseConvolutionPostOps(g);
  });
  // Fusion comes last: the groups it forms are opaque to the passes above.
  registerGraphExecutorPass(PassStage::NondiffOptimization, "fusion", fuseGraph);
  // Plans whose inputs require grad: DifferentiableGraphs, with what the
  // stage above does run inside their forward and backward graphs.
  registerGraphExecutorPass(PassStage::Differentiation, "differentiation", [](const std::shared_ptr<Graph>& g) {
    autograd::createAndDifferentiateSubgraphs(g, [](const std::shared_ptr<Graph>& inside) {
      runNondiffOptimization(inside);
      fuseGraph(inside);
    });
  });
  return true;
}();

}  // namespace
}  // namespace kiln
