#pragma once
// InterpreterState: one execution of a Code (as PyTorch's InterpreterState). It
// holds everything an execution needs (registers, operand stack, the frames
// of calls in progress), so it can stop at a `wait` on a future that is not
// ready and continue later, on whichever thread completes that future.
// TorchScript calls push frames instead of recursing in C++.
#include <memory>

#include "kiln/core/ivalue.h"

namespace kiln {

class Code;

namespace detail {
class InterpreterStateImpl;
}

class InterpreterState {
 public:
  explicit InterpreterState(std::shared_ptr<const Code> code);
  ~InterpreterState();

  // Runs to the end: `stack` holds the inputs before and the outputs after.
  // Errors carry the TorchScript traceback when the graph has source ranges.
  void run(Stack& stack);
  // Starts running. The future completes with the output (a tuple when the
  // code has several) when done, which may be later on another thread if
  // the execution waits on a future that is not ready.
  IntrusivePtr<FutureObj> runAsync(Stack& stack);

 private:
  std::shared_ptr<detail::InterpreterStateImpl> impl_;
};

}  // namespace kiln
