#include "kiln/api/optimize_for_inference.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "kiln/api/freeze.h"
#include "kiln/passes/convolution_rank_checks.h"
#include "kiln/passes/frozen_graph_optimizations.h"
#include "kiln/passes/optimize_for_inference.h"
#include "kiln/util/large_alloc_cache.h"

namespace kiln {

Module optimizeForInference(Module& module, const std::vector<std::string>& other_methods) {
  module.eval();
  Module frozen = freeze(module, other_methods, /*optimize_numerics=*/true);
  // Freezing again turns what the first pass left as attributes (batch
  // norms' running statistics, once `training` is a constant false) into
  // constants, so the folds below see them.
  frozen = freeze(frozen, other_methods, /*optimize_numerics=*/true);
  std::vector<std::string> methods{"forward"};
  methods.insert(methods.end(), other_methods.begin(), other_methods.end());
  for (const std::string& name : methods) {
    if (!frozen.find_method(name)) continue;
    const auto& graph = frozen.get_method(name).graph();
    if (checkRankBeforeConvolution(graph)) optimizeFrozenGraph(graph, /*optimize_numerics=*/true);
    optimizeFrozenGraphForInference(graph);
  }
  // The weights the folds and prepacking replaced are garbage now, and in
  // sizes no call will ask for: hand them back instead of keeping them in
  // the allocator's cache of large blocks (or in malloc's heap).
  releaseLargeAllocCache();
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  return frozen;
}

}  // namespace kiln
