#include "kiln/frontend/exit_transform.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

// Will: the block certainly reaches the exit; Might: it may; Wont: it does
// not; Throws: it always raises. Throws is Wont with the extra knowledge that
// nothing after it runs, which lets an if take the other branch's status
// instead of guarding what follows.
enum class ExitStatus { Will, Might, Wont, Throws };

// Whether the exit has been hit (one of the transformer's sentinels for the
// statically known cases, else a bool computed in the graph), and the values
// travelling to the exit's target.
struct ExitPair {
  Value* has_exited;
  std::vector<Value*> values;
};

std::vector<Value*> toVector(ArrayRef<Value*> values) { return {values.begin(), values.end()}; }

void replaceBlockOutputs(Block* block, const std::vector<Value*>& outputs) {
  while (!block->outputs().empty()) block->eraseOutput(0);
  for (Value* v : outputs) block->registerOutput(v);
}

class ExitTransformer {
 public:
  ExitTransformer(std::shared_ptr<Graph> graph, Symbol exit_kind) : graph_(std::move(graph)), exit_kind_(exit_kind) {
    WithInsertPoint guard(graph_->block()->nodes().front());
    true_val_ = graph_->insertConstant(true);
    false_val_ = graph_->insertConstant(false);
    // Never read: a block that throws leaves before anyone looks.
    throws_val_ = unitValue(BoolType::get());
  }

  void run() { transformExits(graph_->block()); }

 private:
  ExitPair wontExit() const { return {false_val_, {}}; }
  ExitPair throwsExit() const { return {throws_val_, {}}; }

  ExitStatus statusOf(const ExitPair& pair) const {
    if (pair.has_exited == true_val_) return ExitStatus::Will;
    if (pair.has_exited == false_val_) return ExitStatus::Wont;
    if (pair.has_exited == throws_val_) return ExitStatus::Throws;
    return ExitStatus::Might;
  }

  // One prim::Uninitialized per type, at the top of the graph.
  Value* unitValue(const TypePtr& type) {
    auto it = unit_values_.find(type);
    if (it != unit_values_.end()) return it->second;
    Value* unit = graph_->createUninitialized(type)->insertAfter(graph_->paramNode())->output();
    unit_values_.emplace(type, unit);
    return unit;
  }

  std::vector<Value*> uninitializedLike(ArrayRef<Value*> values) {
    std::vector<Value*> out;
    for (Value* v : values) out.push_back(unitValue(v->type()));
    return out;
  }

  static void addIfOutputs(Node* n, const std::vector<Value*>& then_outs, const std::vector<Value*>& else_outs) {
    for (Value* v : then_outs) n->blocks()[0]->registerOutput(v);
    for (Value* v : else_outs) n->blocks()[1]->registerOutput(v);
    for (size_t i = 0; i < then_outs.size(); ++i) {
      auto type = unifyTypes(then_outs[i]->type(), else_outs[i]->type(), /*default_to_union=*/true);
      KILN_INTERNAL_ASSERT(type, "exit values of types ", then_outs[i]->type()->str(), " and ",
                           else_outs[i]->type()->str(), " do not unify");
      n->addOutput()->setType(*type);
    }
  }

  // The exits of this kind inside `block` target it: a loop body for
  // continuations, the graph (or a closure) for returns.
  bool isTarget(Block* block) const {
    const Node* owner = block->owningNode();
    if (exit_kind_ == prim::LoopContinuation) return owner && owner->kind() == prim::Loop;
    return !owner || owner->kind() == prim::Closure;
  }

  ExitPair transformLoop(Node* loop) {
    Block* body = loop->blocks()[0];
    ExitPair body_pair = transformExits(body);
    // A loop may run zero times, so a body that throws does not make the loop throw.
    ExitStatus status = statusOf(body_pair);
    if (status == ExitStatus::Wont || status == ExitStatus::Throws) return wontExit();

    // Leave the loop once the exit is hit, and carry the flag and the exit
    // values out of it (not exited, uninitialized when the body never runs).
    WithInsertPoint insert(body);
    Node* stop_if = graph_->insertNode(graph_->create(prim::If, 0));
    stop_if->addInput(body_pair.has_exited);
    stop_if->addBlock()->registerOutput(false_val_);
    stop_if->addBlock()->registerOutput(body->outputs()[0]);
    Value* next_cond = stop_if->addOutput()->setType(BoolType::get());
    body->eraseOutput(0);
    body->insertOutput(0, next_cond);

    loop->addInput(false_val_);
    body->addInput()->setType(BoolType::get());
    body->registerOutput(body_pair.has_exited);
    Value* has_exited = loop->addOutput()->setType(BoolType::get());
    for (Value* v : body_pair.values) {
      const TypePtr& type = v->type();
      loop->addInput(unitValue(type));
      loop->addOutput()->setType(type);
      body->addInput()->setType(type);
      body->registerOutput(v);
    }
    auto outputs = loop->outputs();
    return {has_exited, toVector(outputs.slice(outputs.size() - body_pair.values.size()))};
  }

  static ExitStatus ifStatus(ExitStatus then_status, ExitStatus else_status) {
    if (then_status == ExitStatus::Throws) return else_status;
    if (else_status == ExitStatus::Throws) return then_status;
    if (then_status == ExitStatus::Wont && else_status == ExitStatus::Wont) return ExitStatus::Wont;
    if (then_status == ExitStatus::Will && else_status == ExitStatus::Will) return ExitStatus::Will;
    return ExitStatus::Might;
  }

  ExitPair transformIf(Node* n) {
    ExitPair then_pair = transformExits(n->blocks()[0]);
    ExitPair else_pair = transformExits(n->blocks()[1]);
    ExitStatus then_status = statusOf(then_pair);
    ExitStatus else_status = statusOf(else_pair);
    ExitStatus status = ifStatus(then_status, else_status);
    if (status == ExitStatus::Throws) return throwsExit();
    if (status == ExitStatus::Wont) return wontExit();

    // The branch that does not exit never has its exit values read.
    if (then_status == ExitStatus::Wont || then_status == ExitStatus::Throws) {
      then_pair.values = uninitializedLike(else_pair.values);
    } else if (else_status == ExitStatus::Wont || else_status == ExitStatus::Throws) {
      else_pair.values = uninitializedLike(then_pair.values);
    }

    Value* has_exited = true_val_;
    if (status != ExitStatus::Will) {
      addIfOutputs(n, {then_pair.has_exited}, {else_pair.has_exited});
      has_exited = n->outputs().back();
    }
    addIfOutputs(n, then_pair.values, else_pair.values);
    auto outputs = n->outputs();
    return {has_exited, toVector(outputs.slice(outputs.size() - then_pair.values.size()))};
  }

  // Runs the rest of `block`, from `it` on, only when the exit was not hit:
  // it moves into the else branch of a new if whose then branch exits again
  // with the same values, so that transforming the if merges both.
  ExitPair guardBlockNodes(Block* block, const ExitPair& pair, NodeIterator it) {
    Node* guard = graph_->create(prim::If, 0)->insertBefore(*it);
    guard->addInput(pair.has_exited);
    Block* exit_block = guard->addBlock();
    Block* rest_block = guard->addBlock();
    while (it != block->nodes().end()) {
      Node* n = *it++;
      n->moveBefore(rest_block->returnNode());
    }
    // After an exit only the flag and the exit values are read.
    std::vector<Value*> exit_outputs = uninitializedLike(block->outputs());
    for (size_t i = 0; i < exit_outputs.size(); ++i) {
      exit_block->registerOutput(exit_outputs[i]);
      rest_block->registerOutput(block->outputs()[i]);
      guard->addOutput()->setType(block->outputs()[i]->type());
    }
    replaceBlockOutputs(block, toVector(guard->outputs()));
    exportEscapingValues(guard);
    exit_block->appendNode(graph_->create(exit_kind_, pair.values, 0));
    return transformIf(guard);
  }

  static bool isInside(const Node* n, const Block* block) {
    for (const Block* b = n->owningBlock(); b; b = b->owningNode() ? b->owningNode()->owningBlock() : nullptr) {
      if (b == block) return true;
    }
    return false;
  }

  // Values the guarded nodes define and nodes outside the guard read leave
  // the guard as outputs (uninitialized when the exit was hit). Only a
  // prim::With body has such readers: it is no scope, so what it defines is
  // read after the with-statement. (1.13 leaves them inside and fails.)
  void exportEscapingValues(Node* guard) {
    Block* exit_block = guard->blocks()[0];
    Block* rest_block = guard->blocks()[1];
    for (Node* n : rest_block->nodes()) {
      for (Value* v : n->outputs()) {
        std::vector<Use> outside;
        for (const Use& use : v->uses()) {
          if (!isInside(use.user, rest_block)) outside.push_back(use);
        }
        if (outside.empty()) continue;
        exit_block->registerOutput(unitValue(v->type()));
        rest_block->registerOutput(v);
        Value* exported = guard->addOutput()->copyMetadata(v);
        for (const Use& use : outside) use.user->replaceInput(use.offset, exported);
      }
    }
  }

  // Nodes after an exit never run; their outputs may still feed block
  // outputs, which are never read either.
  void destroyAfterExit(Node* n) {
    for (Value* out : n->outputs()) {
      if (out->hasUses()) out->replaceAllUsesWith(unitValue(out->type()));
    }
    n->destroy();
  }

  void deleteNodesFrom(Block* block, NodeIterator it) {
    if (it == block->nodes().end()) return;
    Node* first = *it;
    // Last to first, so that each node's outputs have no users left.
    for (;;) {
      Node* last = block->nodes().back();
      destroyAfterExit(last);
      if (last == first) break;
    }
  }

  ExitPair transformExits(Block* block) {
    Block* prev_target = target_block_;
    if (isTarget(block)) target_block_ = block;
    ExitPair pair = wontExit();
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* n = *it++;
      switch (n->kind()) {
        case prim::RaiseException: pair = throwsExit(); break;
        case prim::ReturnStmt:
        case prim::LoopContinuation:
          if (n->kind() == exit_kind_) {
            pair = {true_val_, toVector(n->inputs())};
            n->destroy();
          }
          break;
        case prim::If: pair = transformIf(n); break;
        case prim::With: pair = transformExits(n->blocks()[0]); break;
        case prim::Closure:
          // A closure's returns stay inside it: defining it does not run it.
          transformExits(n->blocks()[0]);
          break;
        case prim::Loop: pair = transformLoop(n); break;
        default: break;
      }
      ExitStatus status = statusOf(pair);
      if (status == ExitStatus::Will || status == ExitStatus::Throws) {
        deleteNodesFrom(block, it);
        break;
      }
      if (status == ExitStatus::Might) {
        if (it != block->nodes().end()) pair = guardBlockNodes(block, pair, it);
        break;
      }
    }

    // The exit ends here: the block's outputs become the exit values when it
    // was hit. Exceptions stop here too: a loop may not run, and defining a
    // closure does not call it.
    if (target_block_ == block) {
      ExitStatus status = statusOf(pair);
      if (status == ExitStatus::Might) {
        Node* select = graph_->create(prim::If, 0)->insertBefore(block->returnNode());
        select->addBlock();
        select->addBlock();
        select->addInput(pair.has_exited);
        addIfOutputs(select, pair.values, toVector(block->outputs()));
        replaceBlockOutputs(block, toVector(select->outputs()));
      } else if (status == ExitStatus::Will) {
        replaceBlockOutputs(block, pair.values);
      }
      pair = wontExit();
    }
    target_block_ = prev_target;
    return pair;
  }

  std::shared_ptr<Graph> graph_;
  Symbol exit_kind_;
  Value* true_val_ = nullptr;
  Value* false_val_ = nullptr;
  Value* throws_val_ = nullptr;
  Block* target_block_ = nullptr;
  std::unordered_map<TypePtr, Value*> unit_values_;
};

// `if c: return a` followed by the guard `if not exited: return b` becomes
// one if: when the first if's flag output is a different constant in each
// branch, each branch takes a copy of the guard branch it selects.
bool inlineConsecutiveIfs(Node* first) {
  Node* second = first->next();
  if (first->kind() != prim::If || second->kind() != prim::If) return false;
  Value* cond = second->input(0);
  if (cond->node() != first) return false;
  // Equal constants would let constant propagation drop the second if, and
  // copying it into both branches would double the code.
  auto then_flag = toIValue(first->blocks()[0]->outputs()[cond->offset()]);
  auto else_flag = toIValue(first->blocks()[1]->outputs()[cond->offset()]);
  if (!then_flag || !else_flag || then_flag->toBool() == else_flag->toBool()) return false;

  bool flags[2] = {then_flag->toBool(), else_flag->toBool()};
  for (size_t i = 0; i < 2; ++i) {
    Block* into = first->blocks()[i];
    Block* from = second->blocks()[flags[i] ? 0 : 1];
    into->cloneFrom(from, [&](const Value* v) {
      Value* value = const_cast<Value*>(v);
      return v->node() == first ? into->outputs()[v->offset()] : value;
    });
  }
  for (Value* out : second->outputs()) {
    Value* merged = first->addOutput()->copyMetadata(out);
    out->replaceAllUsesWith(merged);
  }
  second->destroy();
  return true;
}

void inlineConsecutiveIfs(Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    for (Block* b : it->blocks()) inlineConsecutiveIfs(b);
    // After a merge the node may merge again with its new successor.
    if (!inlineConsecutiveIfs(*it)) ++it;
  }
}

// Pre-order over every node of the graph, nested blocks included.
void collectNodes(Block* block, std::vector<Node*>& out) {
  for (Node* n : block->nodes()) {
    out.push_back(n);
    for (Block* b : n->blocks()) collectNodes(b, out);
  }
}

// While exits are transformed, the body of each with-statement is the first
// block of a prim::With placed after its prim::Enter, and the prim::Exit the
// second, so that an exit inside the body skips the rest of the body but not
// the prim::Exit.
void convertEnterExitToWithBlocks(Graph& graph) {
  std::vector<Node*> nodes;
  collectNodes(graph.block(), nodes);
  // Innermost pairs come first: each prim::Exit closes the latest open prim::Enter.
  std::vector<std::pair<Node*, Node*>> pairs;
  std::vector<Node*> open;
  for (Node* n : nodes) {
    if (n->kind() == prim::Enter) {
      open.push_back(n);
    } else if (n->kind() == prim::Exit) {
      KILN_INTERNAL_ASSERT(!open.empty() && open.back()->input(0) == n->input(0), "unmatched prim::Exit");
      pairs.emplace_back(open.back(), n);
      open.pop_back();
    }
  }
  KILN_INTERNAL_ASSERT(open.empty(), "unmatched prim::Enter");
  for (auto [enter, exit] : pairs) {
    Node* with = graph.create(prim::With, 0);
    Block* body = with->addBlock();
    Block* exit_block = with->addBlock();
    for (Node* n = enter->next(); n != exit;) {
      Node* next = n->next();
      n->moveBefore(body->returnNode());
      n = next;
    }
    exit->moveBefore(exit_block->returnNode());
    with->insertAfter(enter);
  }
}

void convertWithBlocksToEnterExit(Graph& graph) {
  std::vector<Node*> nodes;
  collectNodes(graph.block(), nodes);
  for (Node* with : nodes) {
    if (with->kind() != prim::With) continue;
    std::vector<Node*> inner;
    for (Block* b : with->blocks()) {
      for (Node* n : b->nodes()) inner.push_back(n);
    }
    Node* after = with->prev();
    for (Node* n : inner) {
      n->moveAfter(after);
      after = n;
    }
    with->destroy();
  }
}

}  // namespace

void transformExits(const std::shared_ptr<Graph>& graph) {
  convertEnterExitToWithBlocks(*graph);
  ExitTransformer(graph, prim::LoopContinuation).run();
  ExitTransformer(graph, prim::ReturnStmt).run();
  inlineConsecutiveIfs(graph->block());
  convertWithBlocksToEnterExit(*graph);
}

}  // namespace kiln
