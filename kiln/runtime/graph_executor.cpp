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
  std::vector<NamedPass> stages[4];
};

PassRegistry& passRegistry() {
  static PassRegistry* registry = new PassRegistry();
  return *registry;
}

std::atomic<bool> optimize_enabled{true};
std::atomic<size_t> shape_specialization_limit{4};

std::vector<NamedPass> passesOf(PassStage stage) {
  PassRegistry& r = passRegistry();
  std::lock_guard lock(r.mutex);
  return r.stages[static_cast<int>(stage)];
}

// A run that forks or waits continues on other threads, where no plan follows it.
bool plannableMemory(const Code& code) {
  for (const Instruction& inst : code.instructions()) {
    if (inst.op == OpCode::FORK || inst.op == OpCode::WAIT) return false;
  }
  return true;
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
void setShapeSpecializationLimit(size_t limit) { shape_specialization_limit = limit; }
size_t shapeSpecializationLimit() { return shape_specialization_limit; }

struct GraphExecutor::PlansForSpec {
  std::vector<std::pair<ArgumentSpec, std::unique_ptr<ExecutionPlan>>> by_shape;
  std::unique_ptr<ExecutionPlan> any_shape;
};

namespace {

// A script that turns requires_grad on (`x.requires_grad_()`) records
// autograd from there, whatever its inputs.
bool makesLeavesRequireGrad(const Block* block) {
  static const Symbol requires_grad_ = Symbol::aten("requires_grad_");
  for (const Node* n : block->nodes()) {
    if (n->kind() == requires_grad_) return true;
    for (const Block* b : n->blocks()) {
      if (makesLeavesRequireGrad(b)) return true;
    }
  }
  return false;
}

}  // namespace

GraphExecutor::GraphExecutor(std::shared_ptr<Graph> graph, std::string name, FunctionResolver resolver)
    : graph_(std::move(graph)), name_(std::move(name)), resolver_(std::move(resolver)),
      num_inputs_(graph_->inputs().size()) {}

GraphExecutor::~GraphExecutor() = default;

std::unique_ptr<ExecutionPlan> GraphExecutor::compile(const ArgumentSpec& spec, bool with_shapes) const {
  auto plan = std::make_unique<ExecutionPlan>();
  plan->graph = graph_->copy();
  auto inputs = plan->graph->inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i]->setType(spec.refinedInputType(i, inputs[i]->type(), with_shapes));
    if (spec.isNone(i) && inputs[i]->type()->kind() == TypeKind::Optional && inputs[i]->hasUses()) {
      // The plan only runs for None here: uses read a None constant, so
      // `x is None` and the branches on it fold (1.13's specializeTypes).
      WithInsertPoint guard(plan->graph->block()->nodes().front());
      inputs[i]->replaceAllUsesWith(plan->graph->insertConstant(IValue()));
    }
  }
  // Gradients: the plan's ops record autograd (those in DifferentiableGraphs
  // as one node each), and its intermediates may be saved for backward, so
  // they get no static memory plan.
  const bool needs_gradient = spec.requiresGrad() || makesLeavesRequireGrad(plan->graph->block());
  for (const NamedPass& p : passesOf(PassStage::Required)) p.pass(plan->graph);
  if (graphExecutorOptimize()) {
    for (const NamedPass& p : passesOf(PassStage::Optimization)) p.pass(plan->graph);
    PassStage last = needs_gradient ? PassStage::Differentiation : PassStage::NondiffOptimization;
    for (const NamedPass& p : passesOf(last)) p.pass(plan->graph);
  }
  plan->code = std::make_shared<const Code>(plan->graph, name_, resolver_, needs_gradient);
  if (with_shapes && !needs_gradient && plannableMemory(*plan->code)) plan->memory = std::make_unique<MemoryPlanner>();
  return plan;
}

const ExecutionPlan& GraphExecutor::getPlanFor(const Stack& stack) {
  KILN_CHECK(stack.size() >= num_inputs_, name_, "() expected ", num_inputs_, " arguments but got ", stack.size());
  ArgumentSpec spec(stack.data() + stack.size() - num_inputs_, num_inputs_);
  bool with_shapes;
  {
    std::lock_guard lock(mutex_);
    auto it = plans_.find(spec);
    if (it != plans_.end()) {
      for (const auto& [shapes, plan] : it->second->by_shape) {
        if (shapes.sameShapes(spec)) return *plan;
      }
      if (it->second->any_shape) return *it->second->any_shape;
    }
    size_t specialized = it == plans_.end() ? 0 : it->second->by_shape.size();
    with_shapes = specialized < shapeSpecializationLimit();
  }
  // Compiled outside the lock: a slow compile must not hold up other specs.
  // When two threads race on one spec, the first plan stored wins.
  auto plan = compile(spec, with_shapes);
  std::lock_guard lock(mutex_);
  auto& plans = plans_[spec];
  if (!plans) plans = std::make_unique<PlansForSpec>();
  if (with_shapes) {
    for (const auto& [shapes, existing] : plans->by_shape) {
      if (shapes.sameShapes(spec)) return *existing;
    }
    plans->by_shape.emplace_back(std::move(spec), std::move(plan));
    return *plans->by_shape.back().second;
  }
  if (!plans->any_shape) plans->any_shape = std::move(plan);
  return *plans->any_shape;
}

void GraphExecutor::run(Stack& stack) {
  const ExecutionPlan& plan = getPlanFor(stack);
  if (plan.memory) {
    plan.memory->run([&] { InterpreterState(plan.code).run(stack); });
    return;
  }
  InterpreterState(plan.code).run(stack);
}

IntrusivePtr<FutureObj> GraphExecutor::runAsync(Stack& stack) {
  return InterpreterState(getPlanFor(stack).code).runAsync(stack);
}

size_t GraphExecutor::numPlans() const {
  std::lock_guard lock(mutex_);
  size_t count = 0;
  for (const auto& [spec, plans] : plans_) count += plans->by_shape.size() + (plans->any_shape ? 1 : 0);
  return count;
}

}  // namespace kiln
