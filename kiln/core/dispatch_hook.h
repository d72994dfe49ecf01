#pragma once
// Eager calls: everything that runs an operator outside a graph (the Python
// functions and Tensor methods, tensor indexing, C++ API users) goes through
// runOperator, and GraphFunction::run asks for the hook too, so that one
// per-thread hook sees every eager call made on its thread. The tracer
// (kiln/frontend/tracer.h) installs one to record a graph; the core knows
// nothing about it. (A header of its own, not operator.h: operator.h is
// included nearly everywhere, and only a few files call eagerly.)
#include "kiln/core/operator.h"

namespace kiln {

class Function;

class DispatchHook {
 public:
  virtual ~DispatchHook() = default;
  // Runs `op` on `stack` (arguments in, results out) and may observe it.
  // The hook is not installed while the operator runs.
  virtual void runOperator(const Operator& op, Stack& stack) = 0;
  // The same for a call of a TorchScript function (Function::run's contract).
  virtual void runFunction(Function& fn, Stack& stack) = 0;
};

// This thread's hook (null when none).
DispatchHook* dispatchHook();
// Installs `hook` for this thread (null removes it); returns the previous one.
DispatchHook* setDispatchHook(DispatchHook* hook);
// Runs the operator: through this thread's hook when one is installed, else
// through autograd when a tensor argument requires grad, else directly.
void runOperator(const Operator& op, Stack& stack);

// Autograd (kiln/autograd, a layer above) installs this at load time: it
// runs `op` and records it for backward when grad mode is on. runOperator
// calls it only when some tensor argument requires grad, so plain tensors
// pay one check per argument.
using AutogradDispatch = void (*)(const Operator& op, Stack& stack);
void setAutogradDispatch(AutogradDispatch dispatch);
// Runs `op` through autograd when a tensor argument requires grad, else
// directly, whatever hook is installed: the interpreter's calls in a plan
// whose inputs require grad (the executor records those plans' ops as torch
// records the nodes outside DifferentiableGraphs).
void runOperatorRecorded(const Operator& op, Stack& stack);

// Removes this thread's hook for its lifetime (what a hook does around the
// call it observes), and puts it back after.
class DispatchHookSuspended {
 public:
  DispatchHookSuspended() : previous_(setDispatchHook(nullptr)) {}
  ~DispatchHookSuspended() { setDispatchHook(previous_); }
  DispatchHookSuspended(const DispatchHookSuspended&) = delete;
  DispatchHookSuspended& operator=(const DispatchHookSuspended&) = delete;

 private:
  DispatchHook* previous_;
};

}  // namespace kiln
