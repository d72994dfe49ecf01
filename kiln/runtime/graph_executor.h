#pragma once
// GraphExecutor (PyTorch's legacy graph executor): runs a graph by specializing
// it to the properties of its inputs. Each distinct ArgumentSpec gets an
// execution plan: a copy of the graph with refined input types, put through
// the required passes and the optimization pipeline, then linearized into
// Code. The first shapes seen for a spec get plans of their own, refined to
// complete sizes and strides (see setShapeSpecializationLimit). Later calls
// with the same spec and shapes reuse the plan. Safe to call from several
// threads at once.
//
// The passes are registered into the executor by the layers that define
// them (passes/, fuser/), so the runtime never includes their headers.
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "kiln/runtime/argument_spec.h"
#include "kiln/runtime/code.h"
#include "kiln/runtime/memory_plan.h"

namespace kiln {

struct ExecutionPlan {
  std::shared_ptr<Graph> graph;  // the specialized, optimized graph
  std::shared_ptr<const Code> code;
  // Plans whose input shapes are known place their intermediates in a
  // static memory plan (memory_plan.h); null for the others.
  std::unique_ptr<MemoryPlanner> memory;
};

using GraphPass = std::function<void(const std::shared_ptr<Graph>& graph)>;

enum class PassStage {
  Required,      // always run (lowering the interpreter depends on)
  Optimization,  // run when optimization is on (setGraphExecutorOptimize); keeps the graph differentiable
  // After Optimization, on plans that need no gradient: rewrites into ops
  // that have no derivative (batched products, in-place accumulation, fusion).
  NondiffOptimization,
  // After Optimization instead of NondiffOptimization, on plans whose inputs
  // require grad in grad mode: forms prim::DifferentiableGraphs and
  // optimizes inside them. The plan's other ops record autograd as they run.
  Differentiation,
};

// Adds a pass to the end of a stage. Passes of a stage run in registration order.
void registerGraphExecutorPass(PassStage stage, std::string name, GraphPass pass);
// Names of the registered passes of a stage, in order.
std::vector<std::string> graphExecutorPasses(PassStage stage);
// Optimization is on by default (torch._C._set_graph_executor_optimize).
void setGraphExecutorOptimize(bool optimize);
bool graphExecutorOptimize();
// How many distinct input shapes of one rank-level ArgumentSpec get a plan
// specialized to their exact sizes and strides before the executor settles
// on one plan that knows ranks only. 0 specializes to ranks only, as
// 1.13's legacy executor does. Default 4.
void setShapeSpecializationLimit(size_t limit);
size_t shapeSpecializationLimit();

class GraphExecutor {
 public:
  GraphExecutor(std::shared_ptr<Graph> graph, std::string name, FunctionResolver resolver = nullptr);
  ~GraphExecutor();

  // The plan for the graph's inputs, which are the last values of `stack`.
  const ExecutionPlan& getPlanFor(const Stack& stack);
  // Runs the graph: the stack holds the inputs before and the outputs after.
  void run(Stack& stack);
  // Starts running the graph; the future completes with its output (a
  // tuple when it has several), perhaps after a suspension at `wait`.
  IntrusivePtr<FutureObj> runAsync(Stack& stack);

  const std::shared_ptr<Graph>& graph() const { return graph_; }
  size_t numPlans() const;

 private:
  // The plans of one rank-level spec: one per specialized shape, and the
  // shape-generic one once the shapes are too many.
  struct PlansForSpec;

  std::unique_ptr<ExecutionPlan> compile(const ArgumentSpec& spec, bool with_shapes) const;

  std::shared_ptr<Graph> graph_;
  std::string name_;
  FunctionResolver resolver_;
  size_t num_inputs_;
  mutable std::mutex mutex_;
  std::unordered_map<ArgumentSpec, std::unique_ptr<PlansForSpec>, ArgumentSpecHash> plans_;
};

}  // namespace kiln
