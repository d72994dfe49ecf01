#pragma once
// Code: a graph linearized into instructions for the interpreter (as PyTorch's
// Code is). Every non-constant value gets a register; an instruction (16 bytes)
// moves values between registers and the operand stack, runs an operator,
// or jumps. Code is immutable once built and shared by every execution of
// its graph.
//
// Values die as soon as they can: the last use of a value moves it out of
// its register instead of copying, and where the last use depends on control
// flow (a value used in one branch of an `if`, or inside a loop body) an
// explicit drop releases it after the loop or at the start of the branch
// that does not use it.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/operator.h"

namespace kiln {

class Graph;
class Node;
class Function;

enum class OpCode : uint8_t {
  LOAD,   // push a copy of register x
  MOVE,   // push register x, leaving None behind
  STORE,  // pop into register x
  DROP,   // pop and discard
  DROPR,  // set register x to None
  LOADC,  // push constant x
  OP,     // run operation x on the stack
  JF,     // pop a bool; when false, jump by x
  JMP,    // jump by x
  LOOP,   // loop test over registers x (trip count), x+1 (max), x+2 (condition); exits by y
  CALL,   // call function x with n arguments (a new frame when it is a graph)
  FORK,   // start function x on n arguments in the background; push its future
  WAIT,   // pop a future; push its value, suspending until it has one
  RET,    // return from the frame; the results are on the stack
};

const char* opCodeName(OpCode op);

struct Instruction {
  OpCode op;
  uint8_t flags;  // LOOP: what the loop test does (kLoop* below)
  uint16_t n;     // CALL, FORK: argument count; LOOP at the back edge: distance back to the body
  int32_t x;
  int32_t y;
  int32_t z;  // LOOP: the register that receives the trip count
};

constexpr uint8_t kLoopCheckMax = 1;   // `for`: compare the trip count with the maximum
constexpr uint8_t kLoopCheckCond = 2;  // `while`: test the condition register
constexpr uint8_t kLoopStoreTrip = 4;  // the body reads the trip count: store it in register z
constexpr uint8_t kLoopBackEdge = 8;   // at the body's end: continue `n` instructions back

// Finds the callee of a prim::CallFunction from the node that produced its
// function value (a prim::Constant of Function type, named by attr::name).
using FunctionResolver = std::function<Function*(const Node& function_constant)>;

class Code {
 public:
  // Builds code for `graph`; `name` appears in error tracebacks. With
  // `record_autograd`, every operator call goes through autograd's recording
  // (for plans whose inputs require grad); other code pays nothing for it.
  Code(std::shared_ptr<Graph> graph, std::string name, const FunctionResolver& resolver = nullptr,
       bool record_autograd = false);
  ~Code();
  Code(const Code&) = delete;
  Code& operator=(const Code&) = delete;

  const std::vector<Instruction>& instructions() const { return instructions_; }
  size_t numRegisters() const { return num_registers_; }
  size_t numInputs() const { return num_inputs_; }
  size_t numOutputs() const { return num_outputs_; }
  const Operation& operation(size_t i) const { return operations_[i]; }
  const IValue& constant(size_t i) const { return constants_[i]; }
  Function* function(size_t i) const { return functions_[i]; }
  // The node an instruction was emitted for (null for the entry and exit).
  const Node* nodeAt(size_t pc) const { return instruction_nodes_[pc]; }
  const std::string& name() const { return name_; }
  const std::shared_ptr<Graph>& graph() const { return graph_; }

  // One instruction per line: `%3 = OP aten::mul`.
  void dump(std::ostream& out) const;

 private:
  friend class CodeBuilder;

  std::shared_ptr<Graph> graph_;
  std::string name_;
  std::vector<Instruction> instructions_;
  std::vector<const Node*> instruction_nodes_;
  std::vector<Operation> operations_;
  std::vector<std::string> operation_names_;
  std::vector<IValue> constants_;
  std::vector<Function*> functions_;
  std::vector<std::shared_ptr<Function>> owned_functions_;  // fork bodies
  size_t num_registers_ = 0;
  size_t num_inputs_ = 0;
  size_t num_outputs_ = 0;
};

std::ostream& operator<<(std::ostream& out, const Code& code);

}  // namespace kiln
