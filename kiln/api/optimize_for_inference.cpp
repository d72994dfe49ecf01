#include "kiln/api/optimize_for_inference.h"

#include "kiln/api/freeze.h"
#include "kiln/passes/optimize_for_inference.h"

namespace kiln {

Module optimizeForInference(Module& module, const std::vector<std::string>& other_methods) {
  module.eval();
  Module frozen = freeze(module, other_methods, /*optimize_numerics=*/true);
  std::vector<std::string> methods{"forward"};
  methods.insert(methods.end(), other_methods.begin(), other_methods.end());
  for (const std::string& name : methods) {
    if (!frozen.find_method(name)) continue;
    optimizeFrozenGraphForInference(frozen.get_method(name).graph());
  }
  return frozen;
}

}  // namespace kiln
