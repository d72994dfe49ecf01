// Graph::lint: checks every invariant the IR relies on and names the first
// one broken.
#include <sstream>
#include <unordered_set>

#include "kiln/ir/graph.h"

namespace kiln {

namespace {
std::string nodeText(const Node* n) {
  std::ostringstream out;
  n->print(out, 0, nullptr, false, true, false, false);
  return out.str();
}
}  // namespace

class GraphLinter {
 public:
  explicit GraphLinter(const Graph& g) : g_(g) {}

  void run() {
    checkBlock(g_.block(), nullptr);
    checkOwnership();
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(const Node* n, const Args&... what) const {
    std::string where;
    if (n && n->kind() != prim::Param && n->kind() != prim::Return) where = detail::str("\n  in node: ", nodeText(n));
    throw Error(detail::str("Graph::lint: ", what..., where));
  }

  void defineValue(const Value* v, const Node* n, size_t offset) {
    if (!g_.hasNode(v->node()) || v->node() != n) fail(n, "%", v->debugName(), " does not point to its node");
    if (v->offset() != offset)
      fail(n, "%", v->debugName(), " has offset ", v->offset(), " but is output ", offset, " of its node");
    if (!v->type()) fail(n, "%", v->debugName(), " has no type");
    if (!values_.insert(v).second) fail(n, "%", v->debugName(), " is defined twice");
    if (!uniques_.insert(v->unique()).second) fail(n, "two values share the unique number ", v->unique());
    in_scope_.insert(v);
    scope_stack_.back().push_back(v);
    for (const Use& u : v->uses()) {
      if (!g_.hasNode(u.user)) fail(n, "%", v->debugName(), " has a use by a destroyed node");
      if (u.offset >= u.user->inputs().size() || u.user->inputs()[u.offset] != v) {
        fail(u.user, "the use list of %", v->debugName(), " names input ", u.offset,
             " of a node whose input there is another value");
      }
    }
  }

  void useValue(const Value* v, const Node* user, size_t offset) {
    if (!v) fail(user, "input ", offset, " is null");
    if (!g_.hasNode(v->node())) fail(user, "input ", offset, " is a value of a destroyed node or of another graph");
    if (!in_scope_.count(v)) {
      fail(user, "%", v->debugName(), " is used (input ", offset,
           ") where it is not defined: after its definition's block ended, or before its definition");
    }
    size_t count = 0;
    for (const Use& u : v->uses()) count += u.user == user && u.offset == offset;
    if (count != 1) fail(user, "the use list of %", v->debugName(), " has ", count, " entries for input ", offset);
  }

  void checkBlock(const Block* b, const Node* owner) {
    if (b->owningNode() != owner) fail(owner, "a block does not point to the node owning it");
    if (b->owningGraph() != &g_) fail(owner, "a block belongs to another graph");
    blocks_.insert(b);
    scope_stack_.emplace_back();
    const Node* param = b->paramNode();
    const Node* ret = b->returnNode();
    if (param->kind() != prim::Param || ret->kind() != prim::Return)
      fail(owner, "a block's Param/Return nodes have the wrong kind");
    if (param->owningBlock() != b || ret->owningBlock() != b)
      fail(owner, "a block's Param/Return node points to another block");
    if (!param->inputs().empty() || !ret->outputs().empty())
      fail(owner, "a block's Param node has inputs or its Return node outputs");
    nodes_.insert(param);
    nodes_.insert(ret);
    for (size_t i = 0; i < param->outputs().size(); ++i) defineValue(param->outputs()[i], param, i);
    const Node* prev = ret;
    for (const Node* n : b->nodes()) {
      if (n->prev() != prev) fail(n, "the node list's back links are broken");
      if (n->owningBlock() != b) fail(n, "a node in a block's list points to another block");
      if (n->owningGraph() != &g_ || !g_.hasNode(n))
        fail(n, "a node in the list belongs to another graph or was destroyed");
      if (n->kind() == prim::Param || n->kind() == prim::Return) fail(n, "a Param or Return node inside a node list");
      if (!nodes_.insert(n).second) fail(n, "a node appears twice in the node lists");
      if (prev != ret && !prev->isBefore(n)) fail(n, "node positions are out of order");
      for (size_t i = 0; i < n->inputs().size(); ++i) useValue(n->inputs()[i], n, i);
      checkArity(n);
      for (const Block* sub : n->blocks()) checkBlock(sub, n);
      for (size_t i = 0; i < n->outputs().size(); ++i) defineValue(n->outputs()[i], n, i);
      prev = n;
    }
    if (ret->prev() != prev) fail(owner, "the node list's back links are broken at the end of a block");
    for (size_t i = 0; i < ret->inputs().size(); ++i) useValue(ret->inputs()[i], ret, i);
    for (const Value* v : scope_stack_.back()) in_scope_.erase(v);
    scope_stack_.pop_back();
  }

  void checkArity(const Node* n) {
    if (n->kind() == prim::If) {
      if (n->inputs().size() != 1) fail(n, "prim::If takes one input (the condition), not ", n->inputs().size());
      if (n->blocks().size() != 2) fail(n, "prim::If needs 2 blocks, not ", n->blocks().size());
      for (const Block* b : n->blocks()) {
        if (!b->inputs().empty()) fail(n, "the blocks of prim::If take no inputs");
        if (b->outputs().size() != n->outputs().size()) {
          fail(n, "a block of prim::If returns ", b->outputs().size(), " values but the node has ", n->outputs().size(),
               " outputs");
        }
      }
    } else if (n->kind() == prim::Loop) {
      if (n->blocks().size() != 1) fail(n, "prim::Loop needs 1 block, not ", n->blocks().size());
      if (n->inputs().size() < 2) fail(n, "prim::Loop takes a trip count and a condition before its carried values");
      size_t carried = n->inputs().size() - 2;
      const Block* body = n->blocks()[0];
      if (n->outputs().size() != carried)
        fail(n, "prim::Loop has ", carried, " carried inputs but ", n->outputs().size(), " outputs");
      if (body->inputs().size() != carried + 1)
        fail(n, "the body of prim::Loop takes the iteration number and ", carried, " carried values, not ",
             body->inputs().size(), " inputs");
      if (body->outputs().size() != carried + 1)
        fail(n, "the body of prim::Loop returns the condition and ", carried, " carried values, not ",
             body->outputs().size(), " outputs");
    } else if (n->kind() == prim::Constant) {
      if (!n->inputs().empty() || n->outputs().size() != 1) fail(n, "prim::Constant has no inputs and one output");
    }
  }

  void checkOwnership() {
    // Every node the graph owns must be in a block: created nodes are
    // inserted or destroyed.
    for (const Node* n : g_.all_nodes_) {
      if (!nodes_.count(n)) {
        fail(nullptr, "a node of kind ", n->kind().toQualString(),
             " was created but is not in any block (insert or destroy it)");
      }
    }
    for (const Value* v : g_.all_values_) {
      if (!values_.count(v)) fail(nullptr, "%", v->debugName(), " belongs to the graph but to no node in it");
    }
    for (const Block* b : g_.all_blocks_) {
      if (!blocks_.count(b)) fail(nullptr, "a block belongs to the graph but to no node in it");
    }
    for (const auto& [name, v] : g_.unique_names_) {
      if (!values_.count(v)) fail(nullptr, "the debug name '", name, "' belongs to a value that is not in the graph");
      if (v->debugName() != name) fail(nullptr, "the debug name table maps '", name, "' to %", v->debugName());
    }
    for (const Value* v : values_) {
      if (!v->hasDebugName()) continue;
      auto it = g_.unique_names_.find(v->debugName());
      if (it == g_.unique_names_.end() || it->second != v)
        fail(nullptr, "%", v->debugName(), " is missing from the debug name table");
    }
  }

  const Graph& g_;
  std::unordered_set<const Value*> in_scope_;
  std::vector<std::vector<const Value*>> scope_stack_;
  std::unordered_set<const Value*> values_;
  std::unordered_set<size_t> uniques_;
  std::unordered_set<const Node*> nodes_;
  std::unordered_set<const Block*> blocks_;
};

void Graph::lint() const { GraphLinter(*this).run(); }

}  // namespace kiln
