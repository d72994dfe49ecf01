#include "kiln/autograd/engine.h"

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "kiln/ops/prim_ops.h"
#include "kiln/tensor/factory.h"
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
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    NodeState& state = states[node];
    TensorList inputs = std::move(state.buffer);
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
    TensorList outputs;
    if (run) {
      outputs = node->apply(std::move(inputs));
      if (!keep_graph) node->releaseVariables();
    }
    const auto& edges = node->nextEdges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      if (i < outputs.size() && outputs[i].defined()) feed(e, std::move(outputs[i]));
      NodeState& next = states[e.function.get()];
      if (--next.dependencies == 0) ready.push(e.function.get());
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
