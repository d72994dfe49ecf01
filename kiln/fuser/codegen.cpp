// PLACEHOLDER (replaced by the codegen work): accepts a few ops, generates nothing.
#include "kiln/fuser/codegen.h"

#include "kiln/ir/graph.h"

namespace kiln::fuser {

bool isFusibleNode(const Node* n) {
  static const char* kinds[] = {"aten::add", "aten::sub", "aten::mul", "aten::div", "aten::tanh", "aten::sigmoid",
                                "aten::relu"};
  for (const char* k : kinds)
    if (n->kind() == Symbol::fromQualString(k)) return true;
  return false;
}

std::optional<std::vector<ScalarType>> inferKernelTypes(const Graph&, const std::vector<KernelInput>&,
                                                        std::string* why) {
  if (why) *why = "kernel generation is not implemented yet";
  return std::nullopt;
}

std::string generateKernelSource(const KernelSpec&) { return {}; }

}  // namespace kiln::fuser
