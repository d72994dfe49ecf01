#include "kiln/frontend/convert_to_ssa.h"

#include "kiln/ir/graph.h"

namespace kiln {

// Placeholder until the pass lands.
void convertToSSA(std::shared_ptr<Graph>&) {}

}  // namespace kiln
