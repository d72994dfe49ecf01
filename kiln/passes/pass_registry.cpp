#include "kiln/passes/pass_registry.h"

#include <map>

#include "kiln/passes/accumulate_products.h"
#include "kiln/passes/analysis/shape_analysis.h"
#include "kiln/passes/batch_loop_matmuls.h"
#include "kiln/passes/batch_mm.h"
#include "kiln/passes/canonicalize_outputs.h"
#include "kiln/passes/cleanup.h"
#include "kiln/passes/common_subexpression_elimination.h"
#include "kiln/passes/constant_pooling.h"
#include "kiln/passes/constant_propagation.h"
#include "kiln/passes/copy_transposed_loop_weights.h"
#include "kiln/passes/create_autodiff_subgraphs.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/dnnl_blocked_layout.h"
#include "kiln/passes/fold_frozen_conv_add_sub.h"
#include "kiln/passes/fold_frozen_conv_batch_norm.h"
#include "kiln/passes/fold_frozen_conv_mul_div.h"
#include "kiln/passes/fold_frozen_linear_batch_norm.h"
#include "kiln/passes/frozen_graph_optimizations.h"
#include "kiln/passes/fuse_conv_post_ops.h"
#include "kiln/passes/fuse_dnnl_convolution.h"
#include "kiln/passes/inliner.h"
#include "kiln/passes/loop_unrolling.h"
#include "kiln/passes/lower_tuples.h"
#include "kiln/passes/normalize_ops.h"
#include "kiln/passes/optimize_for_inference.h"
#include "kiln/passes/peephole.h"
#include "kiln/passes/peephole_list_idioms.h"
#include "kiln/passes/pipeline.h"
#include "kiln/passes/prepack_dnnl_weights.h"
#include "kiln/passes/remove_dropout.h"
#include "kiln/passes/remove_mutation.h"
#include "kiln/util/error.h"

namespace kiln {

namespace {

std::map<std::string, GraphPass, std::less<>>& passes() {
  static std::map<std::string, GraphPass, std::less<>> table = {
      {"accumulate_products", [](const std::shared_ptr<Graph>& g) { accumulateProducts(g); }},
      {"batch_loop_matmuls", [](const std::shared_ptr<Graph>& g) { batchLoopMatmuls(g); }},
      {"batch_mm", batchMM},
      {"canonicalize_outputs", canonicalizeOutputs},
      {"cleanup", runCleanupPasses},
      {"constant_pooling", constantPooling},
      {"constant_propagation", constantPropagation},
      {"constant_propagation_immutable", constantPropagationImmutableTypes},
      {"copy_transposed_loop_weights", [](const std::shared_ptr<Graph>& g) { copyTransposedLoopWeights(g); }},
      {"cse", [](const std::shared_ptr<Graph>& g) { eliminateCommonSubexpression(g); }},
      {"dce", eliminateDeadCode},
      // Block 8 whatever the CPU, so tests print the same everywhere.
      {"create_autodiff_subgraphs", [](const std::shared_ptr<Graph>& g) { createAutodiffSubgraphs(g); }},
      {"dnnl_blocked_layout", [](const std::shared_ptr<Graph>& g) { useDnnlBlockedLayout(g, 8); }},
      {"fold_frozen_conv_add_sub", [](const std::shared_ptr<Graph>& g) { foldFrozenConvAddOrSub(g); }},
      {"fold_frozen_conv_batch_norm", [](const std::shared_ptr<Graph>& g) { foldFrozenConvBatchNorm(g); }},
      {"fold_frozen_conv_mul_div", [](const std::shared_ptr<Graph>& g) { foldFrozenConvMulOrDiv(g); }},
      {"fold_frozen_linear_batch_norm", [](const std::shared_ptr<Graph>& g) { foldFrozenLinearBatchNorm(g); }},
      {"fuse_conv_post_ops", [](const std::shared_ptr<Graph>& g) { fuseConvolutionPostOps(g); }},
      {"fuse_dnnl_convolution", [](const std::shared_ptr<Graph>& g) { fuseDnnlConvolutions(g); }},
      {"inline", inlineCalls},
      {"lower_tuples", lowerSimpleTuples},
      {"normalize_ops", normalizeOps},
      {"optimize", runOptimizationPasses},
      {"optimize_for_inference", optimizeFrozenGraphForInference},
      {"optimize_frozen", [](const std::shared_ptr<Graph>& g) { optimizeFrozenGraph(g); }},
      {"optimize_frozen_keep_numerics", [](const std::shared_ptr<Graph>& g) { optimizeFrozenGraph(g, false); }},
      {"prepack_dnnl_weights", [](const std::shared_ptr<Graph>& g) { prepackDnnlWeights(g); }},
      {"peephole", [](const std::shared_ptr<Graph>& g) { peepholeOptimize(g); }},
      {"peephole_list_idioms", [](const std::shared_ptr<Graph>& g) { peepholeOptimizeListIdioms(g); }},
      {"propagate_shapes", propagateShapes},
      {"remove_dropout", [](const std::shared_ptr<Graph>& g) { removeDropout(g); }},
      {"remove_mutation", [](const std::shared_ptr<Graph>& g) { removeMutation(g); }},
      {"required", runRequiredPasses},
      {"unroll_constant_loops",
       [](const std::shared_ptr<Graph>& g) { unrollLoops(g, UnrollPolicy::ConstantTripCounts); }},
      {"unroll_loops", [](const std::shared_ptr<Graph>& g) { unrollLoops(g); }},
  };
  return table;
}

}  // namespace

void registerPass(std::string name, GraphPass pass) {
  auto [it, inserted] = passes().emplace(std::move(name), std::move(pass));
  KILN_INTERNAL_ASSERT(inserted, "a pass named '", it->first, "' is already registered");
}

const GraphPass* findPass(std::string_view name) {
  auto it = passes().find(name);
  return it == passes().end() ? nullptr : &it->second;
}

std::vector<std::string> passNames() {
  std::vector<std::string> names;
  for (const auto& [name, pass] : passes()) names.push_back(name);
  return names;
}

}  // namespace kiln
