#include "kiln/runtime/graph_executor.h"

#include <atomic>

#include "kiln/ir/graph.h"
#include "kiln/runtime/interpreter.h"

namespace kiln {

namespace {

struct NamedPass {
  std::string name;
  GraphPass pass;
};

struct PassRegistry {
  std::mutex mutex;
  std::vector<NamedPass> stages[2];
};

PassRegistry& passRegistry() {
  static PassRegistry* registry = new PassRegistry();
  return *registry;
}

std::atomic<bool> optimize_enabled{true};

std::vector<NamedPass> passesOf(PassStage stage) {
  PassRegistry& r = passRegistry();
  std::lock_guard lock(r.mutex);
  return r.stages[static_cast<int>(stage)];
}

}  // namespace

void registerGraphExecutorPass(PassStage stage, std::string name, GraphPass pass) {
  PassRegistry& r = passRegistry();
  std::lock_guard lock(r.mutex);
  r.stages[static_cast<int>(stage)].push_back({std::move(name), std::move(pass)});
}

std::vector<std::string> graphExecutorPasses(PassStage stage) {
  std::vector<std::string> names;
  for (const NamedPass& p : passesOf(stage)) names.push_back(p.name);
  return names;
}

void setGraphExecutorOptimize(bool optimize) { optimize_enabled = optimize; }
bool graphExecutorOptimize() { return optimize_enabled; }

GraphExecutor::GraphExecutor(std::shared_ptr<Graph> graph, std::string name, FunctionResolver resolver)
    : graph_(std::move(graph)), name_(std::move(name)), resolver_(std::move(resolver)),
      num_inputs_(graph_->inputs().size()) {}

std::unique_ptr<ExecutionPlan> GraphExecutor::compile(const ArgumentSpec& spec) const {
  auto plan = std::make_unique<ExecutionPlan>();
  plan->graph = graph_->copy();
  auto inputs = plan->graph->inputs();
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i]->setType(spec.refinedInputType(i, inputs[i]->type()));
  for (const NamedPass& p : passesOf(PassStage::Required)) p.pass(plan->graph);
  if (graphExecutorOptimize()) {
    for (const NamedPass& p : passesOf(PassStage::Optimization)) p.pass(plan->graph);
  }
  plan->code = std::make_shared<const Code>(plan->graph, name_, resolver_);
  return plan;
}

const ExecutionPlan& GraphExecutor::getPlanFor(const Stack& stack) {
  KILN_CHECK(stack.size() >= num_inputs_, name_, "() expected ", num_inputs_, " arguments but got ", stack.size());
  ArgumentSpec spec(stack.data() + stack.size() - num_inputs_, num_inputs_);
  {
    std::lock_guard lock(mutex_);
    auto it = plans_.find(spec);
    if (it != plans_.end()) return *it->second;
  }
  // Compiled outside the lock: a slow compile must not hold up other specs.
  // When two threads race on one spec, the first plan stored wins.
  auto plan = compile(spec);
  std::lock_guard lock(mutex_);
  auto [it, added] = plans_.emplace(std::move(spec), std::move(plan));
  return *it->second;
}

void GraphExecutor::run(Stack& stack) { InterpreterState(getPlanFor(stack).code).run(stack); }

IntrusivePtr<FutureObj> GraphExecutor::runAsync(Stack& stack) {
  return InterpreterState(getPlanFor(stack).code).runAsync(stack);
}

size_t GraphExecutor::numPlans() const {
  std::lock_guard lock(mutex_);
  return plans_.size();
}

}  // namespace kiln
