#pragma once
// TorchScript's builtin functions: operators that TorchScript 1.13 writes in
// TorchScript itself (`add(int a, Tensor b)` is `b + a`, `floordiv` of
// tensors is `torch.floor_divide`). Calls match them together with the
// registered operators of the same name, after those, and a matching one is
// inlined where it is called.
#include <memory>
#include <vector>

#include "kiln/core/function_schema.h"
#include "kiln/core/symbol.h"

namespace kiln {

class Graph;

struct ScriptBuiltin {
  FunctionSchema schema;
  std::shared_ptr<Graph> graph;  // in SSA form, to be inlined
};

// The builtin functions named `name` (`aten::add`), compiled on first use.
const std::vector<ScriptBuiltin>& scriptBuiltinsFor(Symbol name);

}  // namespace kiln
