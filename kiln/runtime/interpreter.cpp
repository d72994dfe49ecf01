#include "kiln/runtime/interpreter.h"

#include <sstream>

#include "kiln/ir/graph.h"
#include "kiln/ops/prim_ops.h"
#include "kiln/runtime/code.h"
#include "kiln/runtime/function.h"
#include "kiln/runtime/thread_pool.h"

namespace kiln {
namespace detail {

namespace {

struct Frame {
  std::shared_ptr<const Code> code;
  size_t pc = 0;
  size_t base = 0;  // first register of this frame in the register file
};

TypePtr outputType(const Code& code) {
  const auto& outputs = code.graph()->outputs();
  if (outputs.size() == 1) return outputs[0]->type();
  std::vector<TypePtr> types;
  for (const Value* v : outputs) types.push_back(v->type());
  return TupleType::create(std::move(types));
}

// The traceback 1.13 prints for an error inside TorchScript, innermost call
// last; empty when no frame knows its source (graphs from IR text).
std::string traceback(const std::vector<Frame>& frames) {
  std::ostringstream out;
  bool any = false;
  for (const Frame& f : frames) {
    const Node* node = f.code->nodeAt(f.pc);
    // Only program text has a file name; ranges into IR text do not count.
    auto where = node ? node->sourceRange().fileLineCol() : std::nullopt;
    if (!where) continue;
    out << "  File \"" << std::get<0>(*where) << "\", line " << std::get<1>(*where) << ", in " << f.code->name() << "\n"
        << node->sourceRange().underlinedLine() << "\n";
    any = true;
  }
  return any ? out.str() : std::string();
}

}  // namespace

class InterpreterStateImpl : public std::enable_shared_from_this<InterpreterStateImpl> {
 public:
  explicit InterpreterStateImpl(std::shared_ptr<const Code> code) : num_outputs_(code->numOutputs()) {
    pushFrame(std::move(code));
  }

  // Runs until the outermost frame returns (true) or a `wait` suspends (false).
  bool run();
  // Continues a suspended (or not yet started) execution on this thread and
  // reports the end through the completion future.
  void resume();
  // The value the completion future gets: the single output or a tuple.
  IValue result() {
    if (num_outputs_ == 1) return std::move(stack[0]);
    return IValue::tuple(std::move(stack));
  }
  IntrusivePtr<FutureObj> completion() {
    if (!completion_) completion_ = makeIntrusive<FutureObj>(outputType(*frames_.front().code));
    return completion_;
  }
  void setCompletion(IntrusivePtr<FutureObj> future) { completion_ = std::move(future); }
  size_t numOutputs() const { return num_outputs_; }

  Stack stack;

 private:
  void pushFrame(std::shared_ptr<const Code> code) {
    size_t base = registers_.size();
    registers_.resize(base + code->numRegisters());
    frames_.push_back({std::move(code), 0, base});
  }
  void suspendOn(const IntrusivePtr<FutureObj>& future);
  // The future on top of the stack becomes its value; false while it has none.
  bool replaceFutureByValue();
  [[noreturn]] void rethrowWithTraceback();
  void fork(const Code& code, const Instruction& inst, size_t pc);

  std::vector<IValue> registers_;
  std::vector<Frame> frames_;
  IntrusivePtr<FutureObj> completion_;
  size_t num_outputs_;
};

bool InterpreterStateImpl::run() {
  Frame* frame = &frames_.back();
  const Code* code = frame->code.get();
  const Instruction* instructions = code->instructions().data();
  IValue* registers = registers_.data() + frame->base;
  size_t pc = frame->pc;
  const Instruction* inst = nullptr;
  // Re-reads the current frame after a call or return changed frames_.
  auto enterFrame = [&] {
    frame = &frames_.back();
    code = frame->code.get();
    instructions = code->instructions().data();
    registers = registers_.data() + frame->base;
    pc = frame->pc;
  };
  // Threaded dispatch: every instruction ends with its own indirect jump to
  // the next one, which the branch predictor learns per opcode pair; one
  // shared `switch` jump mispredicts on almost every instruction. The table
  // is in OpCode order.
  static const void* const kDispatch[] = {&&LOAD, &&MOVE, &&STORE, &&DROP, &&DROPR, &&LOADC, &&OP,
                                          &&JF,   &&JMP,  &&LOOP,  &&CALL, &&FORK,  &&WAIT,  &&RET};
  static_assert(sizeof(kDispatch) / sizeof(kDispatch[0]) == static_cast<size_t>(OpCode::RET) + 1);
#define KILN_DISPATCH()     \
  inst = &instructions[pc]; \
  goto* kDispatch[static_cast<size_t>(inst->op)]
#define KILN_NEXT() \
  ++pc;             \
  KILN_DISPATCH()
  try {
    KILN_DISPATCH();
  LOAD:
    stack.push_back(registers[inst->x]);
    KILN_NEXT();
  MOVE:
    stack.push_back(std::move(registers[inst->x]));
    KILN_NEXT();
  STORE:
    registers[inst->x] = std::move(stack.back());
    stack.pop_back();
    KILN_NEXT();
  DROP:
    stack.pop_back();
    KILN_NEXT();
  DROPR:
    registers[inst->x] = IValue();
    KILN_NEXT();
  LOADC:
    stack.push_back(code->constant(inst->x));
    KILN_NEXT();
  OP:
    code->operation(inst->x)(stack);
    KILN_NEXT();
  JF : {
    bool taken = stack.back().toBool();
    stack.pop_back();
    pc += taken ? 1 : inst->x;
    KILN_DISPATCH();
  }
  JMP:
    pc += inst->x;
    KILN_DISPATCH();
  LOOP : {
    IValue* loop = registers + inst->x;  // trip count, maximum, condition
    int64_t trip = loop[0].toInt();
    if (((inst->flags & kLoopCheckMax) && trip >= loop[1].toInt()) ||
        ((inst->flags & kLoopCheckCond) && !loop[2].toBool())) {
      pc += inst->y;
      KILN_DISPATCH();
    }
    loop[0].setInt(trip + 1);
    if (inst->flags & kLoopStoreTrip) registers[inst->z] = IValue(trip);
    if (inst->flags & kLoopBackEdge) {
      pc -= inst->n;
      KILN_DISPATCH();
    }
    KILN_NEXT();
  }
  CALL : {
    Function* callee = code->function(inst->x);
    if (auto* graph_function = dynamic_cast<GraphFunction*>(callee)) {
      frame->pc = pc + 1;
      pushFrame(graph_function->executor().getPlanFor(stack).code);
      enterFrame();
      KILN_DISPATCH();
    }
    callee->run(stack);
    KILN_NEXT();
  }
  FORK:
    fork(*code, *inst, pc);
    KILN_NEXT();
  WAIT:
    // (No locals with destructors here: a computed goto leaves the scope
    // without running them.)
    if (!replaceFutureByValue()) {
      frame->pc = pc;  // the wait runs again on resumption
      suspendOn(stack.back().toFuture());
      return false;
    }
    KILN_NEXT();
  RET:
    registers_.resize(frame->base);
    frames_.pop_back();
    if (frames_.empty()) return true;
    enterFrame();
    KILN_DISPATCH();
  } catch (...) {
    frame->pc = pc;
    rethrowWithTraceback();
  }
#undef KILN_NEXT
#undef KILN_DISPATCH
}

bool InterpreterStateImpl::replaceFutureByValue() {
  IntrusivePtr<FutureObj> future = stack.back().toFuture();
  if (!future->completed()) return false;
  KILN_CHECK(!future->hasError(), future->errorMessage());
  stack.back() = future->value();
  return true;
}

void InterpreterStateImpl::rethrowWithTraceback() {
  std::string trace = traceback(frames_);
  // Without source, the operator's own exception (and its type) is clearest.
  if (trace.empty()) throw;
  std::string last_line;
  try {
    throw;
  } catch (const ScriptException& e) {
    last_line = e.what();
  } catch (const std::exception& e) {
    std::string what = e.what();
    // An error from a nested interpreter already has its traceback.
    if (what.rfind("The following operation failed", 0) == 0) throw;
    last_line = "RuntimeError: " + what;
  }
  KILN_ERROR("The following operation failed in the TorchScript interpreter.\n",
             "Traceback of TorchScript (most recent call last):\n", trace, last_line);
}

void InterpreterStateImpl::fork(const Code& code, const Instruction& inst, size_t pc) {
  auto* body = static_cast<GraphFunction*>(code.function(inst.x));
  Stack args(std::make_move_iterator(stack.end() - inst.n), std::make_move_iterator(stack.end()));
  stack.resize(stack.size() - inst.n);
  auto task = std::make_shared<InterpreterStateImpl>(body->executor().getPlanFor(args).code);
  task->stack = std::move(args);
  TypePtr future_type = code.nodeAt(pc)->output()->type();
  auto future = makeIntrusive<FutureObj>(
      future_type->kind() == TypeKind::Future ? future_type->cast<FutureType>()->elementType() : AnyType::get());
  task->setCompletion(future);
  launchTask([task] { task->resume(); });
  stack.emplace_back(std::move(future));
}

void InterpreterStateImpl::suspendOn(const IntrusivePtr<FutureObj>& future) {
  completion();  // exists before anyone can resume and finish
  future->addCallback([self = shared_from_this()](FutureObj&) { launchTask([self] { self->resume(); }); });
}

void InterpreterStateImpl::resume() {
  IntrusivePtr<FutureObj> done = completion();
  try {
    if (!run()) return;  // suspended again; a later callback resumes
  } catch (const std::exception& e) {
    done->setError(e.what());
    return;
  }
  done->markCompleted(result());
}

}  // namespace detail

InterpreterState::InterpreterState(std::shared_ptr<const Code> code)
    : impl_(std::make_shared<detail::InterpreterStateImpl>(std::move(code))) {}

InterpreterState::~InterpreterState() = default;

void InterpreterState::run(Stack& stack) {
  impl_->stack = std::move(stack);
  bool finished = impl_->run();
  if (!finished) {
    // Suspended at a wait: another thread finishes; block until it does.
    IValue result = impl_->completion()->wait();  // rethrows the error of a failed execution
    stack.clear();
    if (impl_->numOutputs() == 1) {
      stack.push_back(std::move(result));
    } else {
      stack = std::move(result.toTupleRef().elements);
    }
    return;
  }
  stack = std::move(impl_->stack);
}

IntrusivePtr<FutureObj> InterpreterState::runAsync(Stack& stack) {
  impl_->stack = std::move(stack);
  stack.clear();
  IntrusivePtr<FutureObj> done = impl_->completion();
  try {
    if (impl_->run()) done->markCompleted(impl_->result());
  } catch (const std::exception& e) {
    done->setError(e.what());
  }
  return done;
}

}  // namespace kiln
