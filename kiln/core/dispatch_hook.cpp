#include "kiln/core/dispatch_hook.h"

#include <utility>

namespace kiln {

namespace {
thread_local DispatchHook* current_hook = nullptr;
AutogradDispatch autograd_dispatch = nullptr;

bool anyRequiresGrad(const Operator& op, const Stack& stack) {
  const FunctionSchema& schema = op.schema();
  size_t n = schema.arguments().size();
  if (schema.isVararg() || stack.size() < n) return false;
  for (size_t i = stack.size() - n; i < stack.size(); ++i) {
    const IValue& v = stack[i];
    if (v.isTensor()) {
      if (v.toTensor().defined() && v.toTensor().requiresGrad()) return true;
    } else if (v.isList()) {
      for (const IValue& e : v.toListRef().elements) {
        if (e.isTensor() && e.toTensor().defined() && e.toTensor().requiresGrad()) return true;
      }
    }
  }
  return false;
}
// View ops go through autograd even when nothing requires grad: their
// results are tracked as views of their base (torch's view + in-place rules).
bool returnsView(const Operator& op, const Stack& stack) {
  const FunctionSchema& schema = op.schema();
  size_t n = schema.arguments().size();
  if (n == 0 || schema.isVararg() || stack.size() < n || !stack[stack.size() - n].isTensor()) return false;
  for (const Argument& ret : schema.returns()) {
    if (ret.alias_info && !ret.alias_info->is_write) return true;
  }
  return false;
}
}  // namespace

void setAutogradDispatch(AutogradDispatch dispatch) { autograd_dispatch = dispatch; }

DispatchHook* dispatchHook() { return current_hook; }

DispatchHook* setDispatchHook(DispatchHook* hook) { return std::exchange(current_hook, hook); }

void runOperator(const Operator& op, Stack& stack) {
  if (current_hook) return current_hook->runOperator(op, stack);
  if (autograd_dispatch && (anyRequiresGrad(op, stack) || returnsView(op, stack))) return autograd_dispatch(op, stack);
  op.operation()(stack);
}

void runOperatorRecorded(const Operator& op, Stack& stack) {
  if (autograd_dispatch && (anyRequiresGrad(op, stack) || returnsView(op, stack))) return autograd_dispatch(op, stack);
  op.operation()(stack);
}

}  // namespace kiln
