#include "kiln/core/dispatch_hook.h"

#include <utility>

namespace kiln {

namespace {
thread_local DispatchHook* current_hook = nullptr;
}  // namespace

DispatchHook* dispatchHook() { return current_hook; }

DispatchHook* setDispatchHook(DispatchHook* hook) { return std::exchange(current_hook, hook); }

void runOperator(const Operator& op, Stack& stack) {
  if (current_hook) return current_hook->runOperator(op, stack);
  op.operation()(stack);
}

}  // namespace kiln
