#include "kiln/runtime/code.h"

#include <limits>
#include <ostream>
#include <set>
#include <unordered_map>

#include "kiln/core/dispatch_hook.h"
#include "kiln/ir/graph.h"
#include "kiln/runtime/function.h"

namespace kiln {

const char* opCodeName(OpCode op) {
  switch (op) {
    case OpCode::LOAD: return "LOAD";
    case OpCode::MOVE: return "MOVE";
    case OpCode::STORE: return "STORE";
    case OpCode::DROP: return "DROP";
    case OpCode::DROPR: return "DROPR";
    case OpCode::LOADC: return "LOADC";
    case OpCode::OP: return "OP";
    case OpCode::JF: return "JF";
    case OpCode::JMP: return "JMP";
    case OpCode::LOOP: return "LOOP";
    case OpCode::CALL: return "CALL";
    case OpCode::FORK: return "FORK";
    case OpCode::WAIT: return "WAIT";
    case OpCode::RET: return "RET";
  }
  return "?";
}

namespace {

bool isConstantNode(const Node* n) { return n->kind() == prim::Constant; }

bool isConstantTrue(const Value* v) {
  auto c = toIValue(v);
  return c && c->isBool() && c->toBool();
}

bool isConstantMaxInt(const Value* v) {
  auto c = toIValue(v);
  return c && c->isInt() && c->toInt() == std::numeric_limits<int64_t>::max();
}

}  // namespace

// Decides where each value dies (moves and drops), then emits instructions.
// An operation that records autograd for its tensor arguments that require
// grad. prim::ConstantChunk (peephole's form of a constant `chunk`) has no
// derivative of its own: it runs as the aten::chunk it stands for.
Operation recordedOperation(const Node& node, Operation op) {
  if (node.kind() == prim::ConstantChunk) {
    static const OperatorPtr chunk = findOperator(Symbol::fromQualString("aten::chunk"), "");
    if (!chunk) return op;
    int64_t chunks = node.i(attr::chunks), dim = node.i(attr::dim);
    return [chunks, dim](Stack& stack) {
      stack.emplace_back(chunks);
      stack.emplace_back(dim);
      runOperatorRecorded(*chunk, stack);
      std::vector<IValue> parts = std::move(stack.back().toListRef().elements);
      stack.pop_back();
      for (IValue& part : parts) stack.push_back(std::move(part));
    };
  }
  OperatorPtr op_ptr = node.maybeOperator();
  // TorchScript's own builtins (list, dict, number ops) move tensors without
  // computing on them, and ops without tensor results have nothing to record.
  if (!op_ptr || op_ptr->isNodeDependent() || op_ptr->exposure() == OpExposure::ScriptOnly) return op;
  bool tensor_result = false;
  for (const Value* out : node.outputs()) {
    TypeKind kind = out->type()->kind();
    tensor_result |= kind == TypeKind::Tensor || kind == TypeKind::List || kind == TypeKind::Optional;
  }
  if (!tensor_result) return op;
  return [op_ptr](Stack& stack) { runOperatorRecorded(*op_ptr, stack); };
}

class CodeBuilder {
 public:
  CodeBuilder(Code& code, const FunctionResolver& resolver, bool record_autograd)
      : code_(code), resolver_(resolver), record_autograd_(record_autograd) {}

  void build() {
    const Graph& graph = *code_.graph_;
    Block* top = code_.graph_->block();
    numberNodes(top);
    for (const Value* v : graph.inputs()) decideDeath(v, top);
    decideDeathsIn(top);

    code_.num_inputs_ = graph.inputs().size();
    code_.num_outputs_ = graph.outputs().size();
    for (const Value* v : graph.inputs()) registerFor(v);
    emitStores(top->inputs(), nullptr);
    emitBlock(top);
    emitBlockOutputs(top);
    emit(OpCode::RET, nullptr);
    removeStoreMovePairs();
    code_.num_registers_ = next_register_;
  }

 private:
  // --- liveness -------------------------------------------------------------

  void numberNodes(const Block* block) {
    for (const Node* n : block->nodes()) {
      order_[n] = next_order_++;
      for (const Block* b : n->blocks()) numberNodes(b);
    }
    order_[block->returnNode()] = next_order_++;
  }

  void decideDeathsIn(const Block* block) {
    for (const Node* n : block->nodes()) {
      for (const Block* b : n->blocks()) {
        for (const Value* v : b->inputs()) decideDeath(v, b);
        decideDeathsIn(b);
      }
      if (isConstantNode(n)) continue;
      for (const Value* v : n->outputs()) decideDeath(v, block);
    }
  }

  // The node of `block` that is `n` or contains it. A use outside the block
  // that defines the value is bad input (the IR parser does not lint).
  static const Node* ancestorIn(const Node* n, const Block* block, const Value* v) {
    const Node* user = n;
    while (n->owningBlock() != block) {
      n = n->owningBlock()->owningNode();
      KILN_CHECK(n, "%", v->debugName(), " is used by ", user->kind(), " outside the block that defines it");
    }
    return n;
  }

  void decideDeath(const Value* v, const Block* defining_block) {
    if (!v->hasUses()) {
      unused_.insert(v);
      return;
    }
    killIn(v, defining_block, v->uses());
  }

  // Makes `v` die inside `block`, given its uses there (in nested blocks too).
  void killIn(const Value* v, const Block* block, const std::vector<Use>& uses) {
    if (uses.empty()) {
      drops_at_start_[block].push_back(v);
      return;
    }
    const Node* last = nullptr;
    for (const Use& u : uses) {
      const Node* a = ancestorIn(u.user, block, v);
      if (!last || order_.at(a) > order_.at(last)) last = a;
    }
    std::vector<Use> nested;
    const Use* last_direct = nullptr;
    for (const Use& u : uses) {
      if (u.user == last) {
        if (!last_direct || u.offset > last_direct->offset) last_direct = &u;
      } else if (ancestorIn(u.user, block, v) == last) {
        nested.push_back(u);
      }
    }
    if (nested.empty()) {
      moves_.insert({last, last_direct->offset});
      return;
    }
    if (last->kind() != prim::If) {
      // Read on every iteration of a loop: alive until the loop is done.
      drops_after_[last].push_back(v);
      return;
    }
    for (const Block* branch : last->blocks()) {
      std::vector<Use> in_branch;
      for (const Use& u : nested) {
        const Block* b = u.user->owningBlock();
        while (b->owningNode() != last) b = b->owningNode()->owningBlock();
        if (b == branch) in_branch.push_back(u);
      }
      killIn(v, branch, in_branch);
    }
  }

  // A value used once, by the very next instruction, goes through its
  // register as `STORE r; MOVE r`: drop the pair and leave it on the stack.
  void removeStoreMovePairs() {
    auto& insts = code_.instructions_;
    std::vector<size_t> register_refs(next_register_, 0);
    std::vector<bool> is_target(insts.size() + 1, false);
    for (size_t pc = 0; pc < insts.size(); ++pc) {
      const Instruction& in = insts[pc];
      switch (in.op) {
        case OpCode::LOAD:
        case OpCode::MOVE:
        case OpCode::STORE:
        case OpCode::DROPR: ++register_refs[in.x]; break;
        case OpCode::JF:
        case OpCode::JMP: is_target[pc + in.x] = true; break;
        case OpCode::LOOP:
          is_target[pc + in.y] = true;
          if (in.flags & kLoopBackEdge) is_target[pc - in.n] = true;
          if (in.flags & kLoopStoreTrip) ++register_refs[in.z];
          break;
        default: break;
      }
    }
    std::vector<size_t> new_index(insts.size() + 1);
    std::vector<bool> keep(insts.size(), true);
    for (size_t pc = 0; pc + 1 < insts.size(); ++pc) {
      const Instruction& a = insts[pc];
      const Instruction& b = insts[pc + 1];
      if (a.op == OpCode::STORE && b.op == OpCode::MOVE && a.x == b.x && register_refs[a.x] == 2 &&
          !is_target[pc + 1] && keep[pc]) {
        keep[pc] = keep[pc + 1] = false;
      }
    }
    size_t next = 0;
    for (size_t pc = 0; pc < insts.size(); ++pc) {
      new_index[pc] = next;
      if (keep[pc]) ++next;
    }
    new_index[insts.size()] = next;
    std::vector<Instruction> kept;
    std::vector<const Node*> kept_nodes;
    for (size_t pc = 0; pc < insts.size(); ++pc) {
      if (!keep[pc]) continue;
      Instruction in = insts[pc];
      auto relocate = [&](int32_t offset) {
        return static_cast<int32_t>(new_index[pc + offset]) - static_cast<int32_t>(new_index[pc]);
      };
      if (in.op == OpCode::JF || in.op == OpCode::JMP) in.x = relocate(in.x);
      if (in.op == OpCode::LOOP) {
        in.y = relocate(in.y);
        if (in.flags & kLoopBackEdge) in.n = static_cast<uint16_t>(-relocate(-static_cast<int32_t>(in.n)));
      }
      kept.push_back(in);
      kept_nodes.push_back(code_.instruction_nodes_[pc]);
    }
    insts = std::move(kept);
    code_.instruction_nodes_ = std::move(kept_nodes);
  }

  // --- registers and constants ---------------------------------------------

  int32_t registerFor(const Value* v) {
    auto [it, added] = registers_.emplace(v, 0);
    if (added) it->second = next_register_++;
    return it->second;
  }

  int32_t constantIndex(IValue value) {
    code_.constants_.push_back(std::move(value));
    return static_cast<int32_t>(code_.constants_.size() - 1);
  }

  // --- emission ----------------------------------------------------------------

  size_t emit(OpCode op, const Node* node, int32_t x = 0, uint16_t n = 0, int32_t y = 0, uint8_t flags = 0,
              int32_t z = 0) {
    code_.instructions_.push_back({op, flags, n, x, y, z});
    code_.instruction_nodes_.push_back(node);
    return code_.instructions_.size() - 1;
  }

  size_t here() const { return code_.instructions_.size(); }

  void patchJump(size_t at, size_t target) {
    code_.instructions_[at].x = static_cast<int32_t>(target) - static_cast<int32_t>(at);
  }

  // Pushes input `i` of `user` (a node or a block's return node).
  void emitUse(const Node* user, size_t i) {
    const Value* v = user->input(i);
    if (isConstantNode(v->node())) {
      auto value = toIValue(v);
      KILN_CHECK(value, "the constant ", v->debugName(), " has no value the interpreter can load");
      emit(OpCode::LOADC, user, constantIndex(std::move(*value)));
      return;
    }
    auto reg = registers_.find(v);
    KILN_INTERNAL_ASSERT(reg != registers_.end(), "%", v->debugName(), " is used before it is defined");
    emit(moves_.count({user, i}) ? OpCode::MOVE : OpCode::LOAD, user, reg->second);
  }

  void emitUses(const Node* user, size_t first = 0) {
    for (size_t i = first; i < user->inputs().size(); ++i) emitUse(user, i);
  }

  // Pops the values of `outputs` (pushed in order) into their registers.
  template <typename Values>
  void emitStores(const Values& outputs, const Node* node) {
    for (size_t i = outputs.size(); i-- > 0;) {
      const Value* v = outputs[i];
      if (unused_.count(v)) {
        emit(OpCode::DROP, node);
      } else {
        emit(OpCode::STORE, node, registerFor(v));
      }
    }
  }

  void emitDrops(const std::vector<const Value*>& values, const Node* node) {
    for (const Value* v : values) emit(OpCode::DROPR, node, registerFor(v));
  }

  void emitBlock(const Block* block) {
    if (auto it = drops_at_start_.find(block); it != drops_at_start_.end()) emitDrops(it->second, nullptr);
    for (const Node* n : block->nodes()) emitNode(n);
  }

  void emitBlockOutputs(const Block* block) { emitUses(block->returnNode()); }

  void emitNode(const Node* n) {
    switch (n->kind()) {
      case prim::Constant: return;
      case prim::If: emitIf(n); break;
      case prim::Loop: emitLoop(n); break;
      case prim::CallFunction: emitCallFunction(n); break;
      case prim::CallMethod: emitCallMethod(n); break;
      case prim::Enter: emitEnter(n); break;
      case prim::Exit: emitExit(n); break;
      case prim::fork: emitFork(n); break;
      case aten::wait:
        emitUses(n);
        emit(OpCode::WAIT, n);
        emitStores(n->outputs(), n);
        break;
      default: emitOperator(n); break;
    }
    if (auto it = drops_after_.find(n); it != drops_after_.end()) emitDrops(it->second, n);
  }

  void emitOperator(const Node* n) {
    Operation op = findOperation(*n);
    if (!op) n->getOperator();  // raises the "no overload matches" error with the candidates
    if (record_autograd_) op = recordedOperation(*n, std::move(op));
    emitUses(n);
    code_.operations_.push_back(std::move(op));
    code_.operation_names_.push_back(n->kind().toQualString());
    emit(OpCode::OP, n, static_cast<int32_t>(code_.operations_.size() - 1));
    emitStores(n->outputs(), n);
  }

  void emitIf(const Node* n) {
    KILN_CHECK(n->inputs().size() == 1 && n->blocks().size() == 2, "prim::If takes one condition and two blocks");
    for (const Block* b : n->blocks()) {
      KILN_CHECK(b->outputs().size() == n->outputs().size(), "prim::If: a block returns ", b->outputs().size(),
                 " values for ", n->outputs().size(), " outputs");
    }
    emitUse(n, 0);
    size_t jump_to_else = emit(OpCode::JF, n);
    emitBranch(n, n->blocks()[0]);
    size_t jump_to_end = emit(OpCode::JMP, n);
    patchJump(jump_to_else, here());
    emitBranch(n, n->blocks()[1]);
    patchJump(jump_to_end, here());
  }

  void emitBranch(const Node* n, const Block* branch) {
    emitBlock(branch);
    emitBlockOutputs(branch);
    emitStores(n->outputs(), n);
  }

  void emitLoop(const Node* n) {
    KILN_CHECK(n->inputs().size() >= 2 && n->blocks().size() == 1,
               "prim::Loop takes a trip count, a condition, the carried values and one block");
    const Block* body = n->blocks()[0];
    const size_t carried_count = n->inputs().size() - 2;
    KILN_CHECK(body->inputs().size() == carried_count + 1 && body->outputs().size() == carried_count + 1 &&
                   n->outputs().size() == carried_count,
               "prim::Loop with ", carried_count, " carried values needs ", carried_count + 1,
               " block inputs and outputs and ", carried_count, " node outputs");
    const bool check_max = !isConstantMaxInt(n->input(0));
    const bool check_cond = !(isConstantTrue(n->input(1)) && isConstantTrue(body->outputs()[0]));
    const bool push_trip = !unused_.count(body->inputs()[0]);
    const int32_t base = next_register_;
    next_register_ += 3;

    // An unchecked maximum or condition is a constant: nothing to load.
    if (check_max) {
      emitUse(n, 0);
      emit(OpCode::STORE, n, base + 1);
    }
    if (check_cond) {
      emitUse(n, 1);
      emit(OpCode::STORE, n, base + 2);
    }
    emitUses(n, 2);
    auto carried = body->inputs().slice(1);
    // Carried values live in the body's parameter registers, unused or not:
    // the loop's outputs are read from there.
    for (size_t i = carried.size(); i-- > 0;) emit(OpCode::STORE, n, registerFor(carried[i]));
    emit(OpCode::LOADC, n, constantIndex(IValue(int64_t{0})));
    emit(OpCode::STORE, n, base);

    const auto flags = static_cast<uint8_t>((check_max ? kLoopCheckMax : 0) | (check_cond ? kLoopCheckCond : 0) |
                                            (push_trip ? kLoopStoreTrip : 0));
    const int32_t trip_register = push_trip ? registerFor(body->inputs()[0]) : 0;
    size_t head = emit(OpCode::LOOP, n, base, 0, 0, flags, trip_register);
    emitBlock(body);
    const Node* ret = body->returnNode();
    if (check_cond) {
      emitUse(ret, 0);
      emit(OpCode::STORE, n, base + 2);
    }
    emitUses(ret, 1);
    for (size_t i = carried.size(); i-- > 0;) emit(OpCode::STORE, n, registerFor(carried[i]));
    // The back edge repeats the head's test, saving a jump per iteration.
    size_t back_distance = here() - (head + 1);
    if (back_distance <= UINT16_MAX) {
      emit(OpCode::LOOP, n, base, static_cast<uint16_t>(back_distance), 1, flags | kLoopBackEdge, trip_register);
    } else {
      patchJump(emit(OpCode::JMP, n), head);
    }
    code_.instructions_[head].y = static_cast<int32_t>(here() - head);

    for (size_t i = 0; i < carried.size(); ++i) {
      if (unused_.count(n->output(i))) {
        emit(OpCode::DROPR, n, registerFor(carried[i]));
      } else {
        emit(OpCode::MOVE, n, registerFor(carried[i]));
        emit(OpCode::STORE, n, registerFor(n->output(i)));
      }
    }
  }

  int32_t functionIndex(Function* f) {
    code_.functions_.push_back(f);
    return static_cast<int32_t>(code_.functions_.size() - 1);
  }

  void emitCall(const Node* n, Function* callee, size_t first_input) {
    emitUses(n, first_input);
    emit(OpCode::CALL, n, functionIndex(callee), static_cast<uint16_t>(n->inputs().size() - first_input));
    emitStores(n->outputs(), n);
  }

  void emitCallFunction(const Node* n) {
    KILN_CHECK(!n->inputs().empty(), "prim::CallFunction needs the function as its first input");
    const Node* constant = n->input(0)->node();
    KILN_CHECK(isConstantNode(constant) && constant->hasAttribute(attr::name),
               "prim::CallFunction: the callee must be a prim::Constant[name=...] of Function type");
    Function* callee = nullptr;
    if (auto type = constant->output()->type()->cast<FunctionType>(); type && type->function()) {
      callee = type->function().get();
    } else {
      KILN_CHECK(resolver_, "prim::CallFunction of '", constant->s(attr::name),
                 "' in a graph that has no compilation unit to find it in");
      callee = resolver_(*constant);
    }
    KILN_CHECK(callee, "prim::CallFunction: no function named '", constant->s(attr::name), "'");
    emitCall(n, callee, 1);
  }

  static Function* methodOf(const Node* n, const Value* self, const std::string& name) {
    auto cls = self->type()->cast<ClassType>();
    KILN_CHECK(cls, n->kind(), ": '", name, "' is called on a value of type ", self->type()->str(),
               ", which is not a class");
    Function* method = cls->findMethod(name);
    KILN_CHECK(method, n->kind(), ": class '", cls->name(), "' has no method '", name, "'");
    return method;
  }

  void emitCallMethod(const Node* n) {
    KILN_CHECK(!n->inputs().empty(), "prim::CallMethod needs the object as its first input");
    emitCall(n, methodOf(n, n->input(0), n->s(attr::name)), 0);
  }

  // `with obj:` calls obj.__enter__() and, on the way out, obj.__exit__(None, None, None).
  void emitEnter(const Node* n) { emitCall(n, methodOf(n, n->input(0), "__enter__"), 0); }

  void emitExit(const Node* n) {
    Function* exit = methodOf(n, n->input(0), "__exit__");
    emitUses(n);
    for (int i = 0; i < 3; ++i) emit(OpCode::LOADC, n, constantIndex(IValue()));
    emit(OpCode::CALL, n, functionIndex(exit), 4);
    emitStores(n->outputs(), n);
  }

  void emitFork(const Node* n) {
    KILN_CHECK(n->hasAttribute(attr::Subgraph), "prim::fork needs a Subgraph attribute");
    auto body = std::make_shared<GraphFunction>(code_.name_ + ".fork", n->g(attr::Subgraph), resolver_);
    code_.owned_functions_.push_back(body);
    emitUses(n);
    emit(OpCode::FORK, n, functionIndex(body.get()), static_cast<uint16_t>(n->inputs().size()));
    emitStores(n->outputs(), n);
  }

  Code& code_;
  const FunctionResolver& resolver_;
  bool record_autograd_;
  std::unordered_map<const Node*, size_t> order_;
  size_t next_order_ = 0;
  std::set<const Value*> unused_;
  std::set<std::pair<const Node*, size_t>> moves_;
  std::unordered_map<const Block*, std::vector<const Value*>> drops_at_start_;
  std::unordered_map<const Node*, std::vector<const Value*>> drops_after_;
  std::unordered_map<const Value*, int32_t> registers_;
  int32_t next_register_ = 0;
};

Code::Code(std::shared_ptr<Graph> graph, std::string name, const FunctionResolver& resolver, bool record_autograd)
    : graph_(std::move(graph)), name_(std::move(name)) {
  CodeBuilder(*this, resolver, record_autograd).build();
}

Code::~Code() = default;

void Code::dump(std::ostream& out) const {
  for (size_t pc = 0; pc < instructions_.size(); ++pc) {
    const Instruction& inst = instructions_[pc];
    out << pc << " " << opCodeName(inst.op);
    switch (inst.op) {
      case OpCode::OP: out << " " << operation_names_[inst.x]; break;
      case OpCode::CALL:
      case OpCode::FORK: out << " " << functions_[inst.x]->name() << " " << inst.n; break;
      case OpCode::LOADC: constants_[inst.x].repr(out << " "); break;
      case OpCode::JF:
      case OpCode::JMP: out << " " << static_cast<int64_t>(pc) + inst.x; break;
      case OpCode::LOOP:
        out << " " << inst.x << " exit " << pc + inst.y;
        if (inst.flags & kLoopBackEdge) out << " continue " << pc - inst.n;
        if (inst.flags & kLoopCheckMax) out << " max";
        if (inst.flags & kLoopCheckCond) out << " cond";
        if (inst.flags & kLoopStoreTrip) out << " trip->" << inst.z;
        break;
      case OpCode::DROP:
      case OpCode::WAIT:
      case OpCode::RET: break;
      default: out << " " << inst.x; break;
    }
    out << "\n";
  }
}

std::ostream& operator<<(std::ostream& out, const Code& code) {
  code.dump(out);
  return out;
}

}  // namespace kiln
