#pragma once
// A callable TorchScript function as the rest of the system sees it: the
// methods of a class type, the callee of prim::CallFunction. The runtime's
// GraphFunction (a graph plus its executor) is the implementation that
// matters; the interface lives here so that types can name their methods
// without depending on the runtime.
#include <memory>
#include <string>

#include "kiln/core/function_schema.h"
#include "kiln/core/ivalue.h"

namespace kiln {

class Graph;

class Function {
 public:
  virtual ~Function() = default;
  // The qualified name (`__torch__.MyModule.forward`, `f`).
  virtual const std::string& name() const = 0;
  virtual const FunctionSchema& getSchema() const = 0;
  // Pops the arguments from the stack and pushes the results. Blocks on
  // futures it waits for.
  virtual void run(Stack& stack) = 0;
  // The graph a call to this function can be replaced by (the inliner's
  // view); null for functions that are not made of a graph.
  virtual std::shared_ptr<Graph> inlinableGraph() const { return nullptr; }
};

}  // namespace kiln
