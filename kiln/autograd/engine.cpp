#include "kiln/autograd/engine.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "kiln/ops/prim_ops.h"
#include "kiln/runtime/thread_pool.h"
#include "kiln/tensor/factory.h"
#include "kiln/tensor/parallel.h"
#include "kiln/tensor/pointwise.h"
#include "kiln/util/error.h"

namespace kiln::autograd {

namespace {

// Grad mode for the backward pass (on only with create_graph), put back after.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(isGradEnabled()) { setGradEnabled(enabled); }
  ~GradModeGuard() { setGradEnabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

void accumulate(Tensor& slot, Tensor g) {
  if (!g.defined()) return;
  if (!slot.defined()) {
    slot = std::move(g);
  } else if (isGradEnabled() && (requiresGrad(slot) || requiresGrad(g))) {
    // create_graph: the sum is part of the gradient's history.
    slot = callRecorded("aten::add", "Tensor", {IValue(slot), IValue(g), IValue(Scalar(1))});
  } else {
    slot = add(slot, g);
  }
}

struct NodeState {
  TensorList buffer;
  int dependencies = 0;
};

struct ReadyOrder {
  bool operator()(Node* a, Node* b) const { return a->sequenceNr() < b->sequenceNr(); }
};

// Applies wave[k] for each k in `which`, on the thread pool when there are
// several: this thread takes nodes too, so that it never waits on a busy
// pool. The first error (in wave order) is raised here.
void runInParallel(const std::vector<Node*>& wave, const std::vector<size_t>& which, std::vector<TensorList>& inputs,
                   std::vector<TensorList>& outputs, bool grad_mode) {
  if (which.size() <= 1) {
    for (size_t k : which) outputs[k] = wave[k]->apply(std::move(inputs[k]));
    return;
  }
  struct Shared {
    std::vector<Node*> nodes;
    std::vector<TensorList> inputs;
    std::vector<TensorList> outputs;
    std::vector<std::exception_ptr> errors;
    std::atomic<size_t> next{0};
    std::atomic<size_t> done{0};
    std::mutex mutex;
    std::condition_variable all_done;
    bool grad_mode = false;
  };
  auto shared = std::make_shared<Shared>();
  for (size_t k : which) {
    shared->nodes.push_back(wave[k]);
    shared->inputs.push_back(std::move(inputs[k]));
  }
  size_t count = which.size();
  shared->outputs.resize(count);
  shared->errors.resize(count);
  shared->grad_mode = grad_mode;
  auto work = [](const std::shared_ptr<Shared>& s) {
    GradModeGuard mode(s->grad_mode);
    for (size_t i = s->next.fetch_add(1); i < s->nodes.size(); i = s->next.fetch_add(1)) {
      try {
        s->outputs[i] = s->nodes[i]->apply(std::move(s->inputs[i]));
      } catch (...) {
        s->errors[i] = std::current_exception();
      }
      if (s->done.fetch_add(1) + 1 == s->nodes.size()) {
        std::lock_guard<std::mutex> lock(s->mutex);
        s->all_done.notify_all();
      }
    }
  };
  size_t helpers = std::min(count - 1, static_cast<size_t>(std::max(getNumThreads() - 1, 1)));
  for (size_t h = 0; h < helpers; ++h) launchTask([shared, work] { work(shared); });
  work(shared);
  {
    std::unique_lock<std::mutex> lock(shared->mutex);
    shared->all_done.wait(lock, [&] { return shared->done.load() == count; });
  }
  for (size_t i = 0; i < count; ++i) {
    if (shared->errors[i]) std::rethrow_exception(shared->errors[i]);
    outputs[which[i]] = std::move(shared->outputs[i]);
  }
}

// Runs the graph from `roots` (edges with their gradients). `captures`:
// node inputs whose gradient is wanted (autograd.grad); when given, only
// nodes on a path to one run and no leaf accumulates. `accumulate_only`:
// backward(inputs=...): only these AccumulateGrads run.
TensorList runBackward(const std::vector<Edge>& roots, TensorList root_grads, bool keep_graph, bool create_graph,
                       const std::vector<Edge>& captures, const std::vector<Edge>& accumulate_only) {
  GradModeGuard grad_mode(create_graph);
  std::unordered_map<Node*, NodeState> states;
  // Dependencies: how many edges lead into each node from nodes reachable from the roots.
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (const Edge& e : roots) {
    if (e.valid() && seen.insert(e.function.get()).second) stack.push_back(e.function.get());
  }
  std::vector<Node*> order;  // discovery order, for the needed-set pass
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    order.push_back(node);
    for (const Edge& e : node->nextEdges()) {
      if (!e.valid()) continue;
      ++states[e.function.get()].dependencies;
      if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
    }
  }
  // With captures (or inputs=), run only what leads to a wanted node.
  std::unordered_set<Node*> needed;
  bool filter = !captures.empty() || !accumulate_only.empty();
  if (filter) {
    std::unordered_set<Node*> targets;
    for (const Edge& e : captures) {
      if (e.valid()) targets.insert(e.function.get());
    }
    for (const Edge& e : accumulate_only) {
      if (e.valid()) targets.insert(e.function.get());
    }
    // Reverse discovery order is not topological in general: iterate to a fixed point.
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        Node* node = *it;
        if (needed.count(node)) continue;
        bool is_needed = targets.count(node) > 0;
        for (const Edge& e : node->nextEdges()) {
          if (e.valid() && needed.count(e.function.get())) is_needed = true;
        }
        if (is_needed) {
          needed.insert(node);
          changed = true;
        }
      }
    }
  }
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> capture_slots;
  for (size_t i = 0; i < captures.size(); ++i) {
    if (captures[i].valid()) capture_slots[captures[i].function.get()].emplace_back(captures[i].input_nr, i);
  }
  TensorList captured(captures.size());

  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  auto feed = [&](const Edge& e, Tensor g) {
    NodeState& state = states[e.function.get()];
    if (state.buffer.empty()) state.buffer.resize(e.function->numInputs());
    accumulate(state.buffer[e.input_nr], std::move(g));
  };
  for (size_t i = 0; i < roots.size(); ++i) {
    if (roots[i].valid()) feed(roots[i], std::move(root_grads[i]));
  }
  for (const Edge& e : roots) {
    if (!e.valid()) continue;
    NodeState& state = states[e.function.get()];
    if (state.dependencies == 0) {
      state.dependencies = -1;  // queued once
      ready.push(e.function.get());
    }
  }
  // One step: a ready node's inputs (after its pre-hooks), and whether it runs.
  auto prepare = [&](Node* node, TensorList& inputs) {
    NodeState& state = states[node];
    inputs = std::move(state.buffer);
    if (inputs.empty()) inputs.resize(node->numInputs());
    for (auto& [input_nr, hook] : node->preHooks()) {
      if (input_nr < inputs.size() && inputs[input_nr].defined()) {
        Tensor replaced = hook(inputs[input_nr]);
        if (replaced.defined()) inputs[input_nr] = std::move(replaced);
      }
    }
    auto slots = capture_slots.find(node);
    if (slots != capture_slots.end()) {
      for (auto [input_nr, index] : slots->second) captured[index] = inputs[input_nr];
    }
    bool run = !filter || needed.count(node);
    if (run && !captures.empty() && dynamic_cast<AccumulateGrad*>(node)) run = false;
    if (run && !accumulate_only.empty() && dynamic_cast<AccumulateGrad*>(node)) {
      run = false;
      for (const Edge& e : accumulate_only) run |= e.function.get() == node;
    }
    return run;
  };
  // The node's outputs go to its next edges; nodes left without dependencies become ready.
  auto finish = [&](Node* node, TensorList& outputs) {
    const auto& edges = node->nextEdges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      if (i < outputs.size() && outputs[i].defined()) feed(e, std::move(outputs[i]));
      NodeState& next = states[e.function.get()];
      if (--next.dependencies == 0) ready.push(e.function.get());
    }
  };

  if (getNumThreads() <= 1) {
    // One node at a time, the latest recorded first (torch's order).
    while (!ready.empty()) {
      Node* node = ready.top();
      ready.pop();
      TensorList inputs;
      TensorList outputs;
      if (prepare(node, inputs)) {
        outputs = node->apply(std::move(inputs));
        if (!keep_graph) node->releaseVariables();
      }
      finish(node, outputs);
    }
    return captured;
  }
  // Waves: every ready node at once. Hooks, AccumulateGrads and Python
  // functions (which may run Python) stay on this thread; the others run on the
  // thread pool; their gradients are then fed in the wave's order, so that
  // sums come out the same whatever the timing.
  while (!ready.empty()) {
    std::vector<Node*> wave;
    while (!ready.empty()) {
      wave.push_back(ready.top());
      ready.pop();
    }
    std::vector<TensorList> inputs(wave.size());
    std::vector<TensorList> outputs(wave.size());
    std::vector<size_t> parallel;
    std::vector<bool> ran(wave.size(), false);
    for (size_t k = 0; k < wave.size(); ++k) {
      ran[k] = prepare(wave[k], inputs[k]);
      if (!ran[k]) continue;
      if (wave[k]->runsOnCallingThread()) {
        outputs[k] = wave[k]->apply(std::move(inputs[k]));
      } else {
        parallel.push_back(k);
      }
    }
    runInParallel(wave, parallel, inputs, outputs, create_graph);
    for (size_t k = 0; k < wave.size(); ++k) {
      if (ran[k] && !keep_graph) wave[k]->releaseVariables();
      finish(wave[k], outputs[k]);
    }
  }
  return captured;
}

std::vector<Edge> rootEdges(const TensorList& outputs, const TensorList& grad_outputs, TensorList& root_grads) {
  KILN_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(),
             "grad can be implicitly created only for "
             "scalar outputs");
  std::vector<Edge> roots;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    KILN_CHECK(requiresGrad(out), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    Tensor g = i < grad_outputs.size() ? grad_outputs[i] : Tensor();
    if (!g.defined()) {
      KILN_CHECK(out.numel() == 1, "grad can be implicitly created only for scalar outputs");
      g = ones(out.sizes(), out.dtype());
    } else {
      KILN_CHECK(g.sizes() == out.sizes(), "Mismatch in shape: grad_output[", i, "] has a shape of ",
                 shapeString(g.sizes()), " and output[", i, "] has a shape of ", shapeString(out.sizes()), ".");
    }
    roots.push_back(gradientEdge(out));
    root_grads.push_back(std::move(g));
  }
  return roots;
}

}  // namespace

void backward(const TensorList& outputs, const TensorList& grad_outputs, std::optional<bool> retain_graph,
              bool create_graph, const TensorList& inputs) {
  TensorList root_grads;
  std::vector<Edge> roots = rootEdges(outputs, grad_outputs, root_grads);
  std::vector<Edge> only;
  for (const Tensor& t : inputs) {
    KILN_CHECK(requiresGrad(t), "One of the differentiated Tensors does not require grad");
    KILN_CHECK(isLeaf(t), "backward(inputs=...) takes leaf tensors in kiln");
    only.push_back(gradientEdge(t));
  }
  runBackward(roots, std::move(root_grads), retain_graph.value_or(create_graph), create_graph, {}, only);
}

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  TensorList root_grads;
  std::vector<Edge> roots = rootEdges(outputs, grad_outputs, root_grads);
  std::vector<Edge> captures;
  for (const Tensor& t : inputs) {
    KILN_CHECK(requiresGrad(t), "One of the differentiated Tensors does not require grad");
    captures.push_back(gradientEdge(t));
  }
  TensorList result =
      runBackward(roots, std::move(root_grads), retain_graph.value_or(create_graph), create_graph, captures, {});
  for (size_t i = 0; i < result.size(); ++i) {
    KILN_CHECK(result[i].defined() || allow_unused,
               "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True "
               "if this is the desired behavior.");
  }
  return result;
}

}  // namespace kiln::autograd
