#include "kiln/frontend/convert_to_ssa.h"

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kiln/frontend/canonicalize_modified_loops.h"
#include "kiln/frontend/exit_transform.h"
#include "kiln/ir/graph.h"
#include "kiln/util/error.h"

namespace kiln {
namespace {

// What each variable holds in one block, chained to the enclosing blocks.
// T is a pointer type; null means "not set".
template <typename T>
class Environment {
 public:
  explicit Environment(std::shared_ptr<Environment> next) : next_(std::move(next)) {}

  const std::shared_ptr<Environment>& next() const { return next_; }
  T findInThisFrame(const std::string& name) const {
    auto it = table_.find(name);
    return it == table_.end() ? nullptr : it->second;
  }
  T findInAnyFrame(const std::string& name) const {
    for (const Environment* env = this; env; env = env->next_.get()) {
      if (T found = env->findInThisFrame(name)) return found;
    }
    return nullptr;
  }
  void set(const std::string& name, T value) { table_[name] = std::move(value); }
  // In name order, which is the order 1.13 gives control-flow outputs.
  std::vector<std::string> definedVariables() const {
    std::vector<std::string> names;
    for (const auto& entry : table_) names.push_back(entry.first);
    return names;
  }

 private:
  std::shared_ptr<Environment> next_;
  std::map<std::string, T> table_;
};

Node* createStore(Graph& g, const std::string& name, Value* v) {
  return g.create(prim::Store, {v}, 0)->s_(attr::name, name);
}

Node* createLoad(Graph& g, const std::string& name, const TypePtr& type) {
  Node* n = g.create(prim::Load, 1)->s_(attr::name, name);
  n->output()->setType(type);
  return n;
}

// Types of one variable from two paths; a Union when nothing narrower fits
// (such a variable was declared with a Union or Optional type, else the
// emitter rejects its later uses).
TypePtr unifyOrUnion(const TypePtr& a, const TypePtr& b) {
  auto unified = unifyTypes(a, b, /*default_to_union=*/true);
  KILN_INTERNAL_ASSERT(unified, "types ", a->str(), " and ", b->str(), " do not unify");
  return *unified;
}

Value* identity(const Value* v) { return const_cast<Value*>(v); }

void inlineBlockBeforeNode(Node* before, Block* block) {
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* n = *it++;
    n->moveBefore(before);
  }
}

// Makes control flow explicit in loads and stores: an if gets an output for
// each variable both branches leave defined (one stored in a branch and
// defined before counts), a loop carries each variable its body stores that
// was defined before it. Each new output is stored after the node; the
// values flowing in are loaded, those flowing out are loaded at the block's
// end, and loop-carried block inputs are stored at the body's start.
class ControlFlowLoadStores {
 public:
  void run(Graph& graph) { addLoadStores(graph.block()); }

 private:
  using TypeEnvironment = Environment<TypePtr>;

  static void addBlockInput(Block* b, const TypePtr& type, const std::string& name) {
    Graph& g = *b->owningGraph();
    createStore(g, name, b->addInput(name)->setType(type))->insertAfter(b->paramNode());
  }

  static void addBlockOutput(Block* b, const TypePtr& type, const std::string& name) {
    Graph& g = *b->owningGraph();
    b->registerOutput(b->appendNode(createLoad(g, name, type))->output());
  }

  static void addNodeOutput(Node* n, const TypePtr& type, const std::string& name) {
    Value* out = n->addOutput()->setType(type);
    if (meaningfulName(name)) out->setDebugName(name);
    createStore(*n->owningGraph(), name, out)->insertAfter(n);
  }

  static void addNodeInput(Node* n, const TypePtr& type, const std::string& name) {
    n->addInput(createLoad(*n->owningGraph(), name, type)->insertBefore(n)->output());
  }

  void addIfLoadStores(Node* n) {
    Block* then_block = n->blocks()[0];
    Block* else_block = n->blocks()[1];
    auto then_vars = addLoadStores(then_block);
    auto else_vars = addLoadStores(else_block);
    std::set<std::string> mutated;
    for (const std::string& v : then_vars->definedVariables()) {
      if (else_vars->findInAnyFrame(v)) mutated.insert(v);
    }
    for (const std::string& v : else_vars->definedVariables()) {
      if (then_vars->findInAnyFrame(v)) mutated.insert(v);
    }
    for (const std::string& name : mutated) {
      TypePtr then_type = then_vars->findInAnyFrame(name);
      TypePtr else_type = else_vars->findInAnyFrame(name);
      addBlockOutput(then_block, then_type, name);
      addBlockOutput(else_block, else_type, name);
      addNodeOutput(n, unifyOrUnion(then_type, else_type), name);
    }
  }

  void addLoopLoadStores(Node* n) {
    Block* body = n->blocks()[0];
    auto body_vars = addLoadStores(body);
    for (const std::string& name : body_vars->definedVariables()) {
      // Variables local to the body are not carried.
      TypePtr outer_type = env_->findInAnyFrame(name);
      if (!outer_type) continue;
      // The loop runs zero or more times: carried values have the type of
      // both what enters and what the body leaves. (1.13 fails here when
      // that takes a Union; kiln carries the Union.)
      TypePtr body_type = body_vars->findInThisFrame(name);
      TypePtr unified = unifyOrUnion(outer_type, body_type);
      addNodeInput(n, outer_type, name);
      addBlockInput(body, unified, name);
      addBlockOutput(body, body_type, name);
      addNodeOutput(n, unified, name);
    }
  }

  // The types each variable was stored with in `block` (nested control flow
  // included, since it stores its outputs after itself).
  std::shared_ptr<TypeEnvironment> addLoadStores(Block* block) {
    env_ = std::make_shared<TypeEnvironment>(env_);
    for (Node* n : block->nodes()) {
      switch (n->kind()) {
        case prim::If: addIfLoadStores(n); break;
        case prim::Loop: addLoopLoadStores(n); break;
        case prim::Closure:
          for (Block* b : n->blocks()) addLoadStores(b);
          break;
        case prim::ComprehensionScope: addLoadStores(n->blocks()[0]); break;
        case prim::Store: env_->set(n->s(attr::name), n->input()->type()); break;
        default: break;
      }
    }
    auto frame = env_;
    env_ = env_->next();
    return frame;
  }

  std::shared_ptr<TypeEnvironment> env_;
};

// Replaces prim::BreakStmt and prim::ContinueStmt by
// `prim::LoopContinuation(%continue_cond, %carried...)`: false for a break,
// a copy of the loop condition for a continue, and loads of the innermost
// loop's carried variables (what its body outputs).
class LoopContinuations {
 public:
  void run(Block* block) {
    graph_ = block->owningGraph();
    {
      WithInsertPoint guard(block->nodes().front());
      false_val_ = graph_->insertConstant(false);
    }
    assignExitContinuations(block);
  }

 private:
  void addLoopCarriedOutputs(Node* continuation) {
    WithInsertPoint insert(continuation);
    for (Value* out : current_loop_->blocks()[0]->outputs()) {
      Node* load = out->node();
      KILN_INTERNAL_ASSERT(load->kind() == prim::Load, "loop body output is not a load");
      continuation->addInput(graph_->insertNode(graph_->createClone(load, identity))->output());
    }
  }

  void assignExitContinuations(Block* block) {
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* n = *it++;
      switch (n->kind()) {
        case prim::If:
          assignExitContinuations(n->blocks()[0]);
          assignExitContinuations(n->blocks()[1]);
          break;
        case prim::Closure: LoopContinuations().run(n->blocks()[0]); break;
        case prim::Loop: {
          Node* outer_loop = current_loop_;
          current_loop_ = n;
          assignExitContinuations(n->blocks()[0]);
          current_loop_ = outer_loop;
          break;
        }
        case prim::ContinueStmt: {
          Node* continuation = graph_->create(prim::LoopContinuation, 0)->insertAfter(n);
          Block* cond = continuation->addBlock();
          cond->cloneFrom(current_loop_->blocks()[1], identity);
          inlineBlockBeforeNode(n, cond);
          continuation->addInput(cond->outputs()[0]);
          continuation->eraseBlock(0);
          addLoopCarriedOutputs(continuation);
          n->destroy();
          break;
        }
        case prim::BreakStmt: {
          Node* continuation = graph_->create(prim::LoopContinuation, 0)->insertAfter(n);
          continuation->addInput(false_val_);
          addLoopCarriedOutputs(continuation);
          n->destroy();
          break;
        }
        default: break;
      }
    }
  }

  Graph* graph_ = nullptr;
  Value* false_val_ = nullptr;
  Node* current_loop_ = nullptr;
};

// The emitter's loop has its condition in a second block. A copy of it goes
// before the loop (the initial condition, the loop's second input) and the
// block itself to the end of the body (the body's first output).
void inlineLoopCondition(Node* loop) {
  Block* body = loop->blocks()[0];
  Block* cond = loop->blocks()[1];
  Block* initial = loop->addBlock();
  initial->cloneFrom(cond, identity);
  inlineBlockBeforeNode(loop, initial);
  loop->insertInput(1, initial->outputs()[0]);
  loop->eraseBlock(2);

  inlineBlockBeforeNode(body->returnNode(), cond);
  body->insertOutput(0, cond->outputs()[0]);
  loop->eraseBlock(1);
}

void inlineLoopConditions(Block* block) {
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) inlineLoopConditions(b);
    if (n->kind() == prim::Loop) inlineLoopCondition(n);
  }
}

// With every control-flow output in place, a load reads the value last
// stored under its name in the block or an enclosing one.
class EraseLoadStores {
 public:
  void run(Graph& graph) { eraseLoadStores(graph.block()); }

 private:
  using ValueEnvironment = Environment<Value*>;

  void eraseLoadStores(Block* block) {
    env_ = std::make_shared<ValueEnvironment>(env_);
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* n = *it++;
      switch (n->kind()) {
        case prim::Store:
          env_->set(n->s(attr::name), n->input());
          n->destroy();
          break;
        case prim::Load: {
          const std::string& name = n->s(attr::name);
          Value* value = env_->findInAnyFrame(name);
          KILN_INTERNAL_ASSERT(value, "load of '", name, "' before any store");
          n->output()->replaceAllUsesWith(value);
          n->destroy();
          break;
        }
        case prim::ComprehensionScope: {
          // Its stores stay local; its nodes join the enclosing block.
          Block* body = n->blocks()[0];
          eraseLoadStores(body);
          inlineBlockBeforeNode(n, body);
          n->destroy();
          break;
        }
        default:
          for (Block* b : n->blocks()) eraseLoadStores(b);
          break;
      }
    }
    env_ = env_->next();
  }

  std::shared_ptr<ValueEnvironment> env_;
};

}  // namespace

bool meaningfulName(const std::string& name) {
  if (name.empty() || name[0] == '$') return false;
  if (name[0] != '_') return true;
  for (size_t i = 1; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return true;
  }
  return false;
}

void convertToSSA(std::shared_ptr<Graph>& graph) {
  ControlFlowLoadStores().run(*graph);
  LoopContinuations().run(graph->block());
  inlineLoopConditions(graph->block());
  EraseLoadStores().run(*graph);
  transformExits(graph);
  canonicalizeModifiedLoops(graph);
}

}  // namespace kiln
