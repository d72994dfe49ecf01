#include "kiln/ir/subgraph_utils.h"

#include <unordered_map>
#include <unordered_set>

namespace kiln {
namespace {

bool isTensor(const Value* v) { return v->type()->kind() == TypeKind::Tensor; }

// A new output of `subgraph_node` for the inner value `inner`, replacing the
// outer value `outer` everywhere.
void exposeOutput(Node* subgraph_node, Value* inner, Value* outer, const ValueReplaced& replaced) {
  getSubgraph(subgraph_node).registerOutput(inner);
  Value* output = subgraph_node->addOutput();
  if (replaced) replaced(outer, output);
  takeMetadata(output, outer);
  outer->replaceAllUsesWith(output);
}

// mergeNodeIntoSubgraph; with `all_outputs`, every output of `to_merge`
// becomes an output of the subgraph node, used or not.
Node* mergeNode(Node* to_merge, Node* subgraph_node, bool all_outputs, const ValueReplaced& replaced) {
  KILN_INTERNAL_ASSERT(to_merge->blocks().empty(), "cannot merge ", to_merge->kind().toQualString(), ": it has blocks");
  KILN_INTERNAL_ASSERT(to_merge->owningBlock() == subgraph_node->owningBlock());
  Graph& subgraph = getSubgraph(subgraph_node);
  KILN_INTERNAL_ASSERT(subgraph.inputs().size() == subgraph_node->inputs().size());

  std::unordered_map<const Value*, Value*> inner;
  size_t tensor_end = 0;
  for (size_t i = 0; i < subgraph_node->inputs().size(); ++i) {
    inner[subgraph_node->input(i)] = subgraph.inputs()[i];
    if (isTensor(subgraph_node->input(i))) tensor_end = i + 1;
  }

  WithInsertPoint guard(subgraph.nodes().front());
  for (Value* input : to_merge->inputs()) {
    if (inner.count(input)) continue;
    if (input->node()->kind() == prim::Constant) {
      Node* constant = subgraph.insertNode(subgraph.createClone(input->node(), [](const Value*) -> Value* {
        KILN_INTERNAL_ASSERT(false, "a constant has no inputs");
        return nullptr;
      }));
      inner[input] = constant->output();
      continue;
    }
    size_t position = isTensor(input) ? tensor_end++ : subgraph_node->inputs().size();
    Value* inner_input = subgraph.insertInput(position)->copyMetadata(input);
    subgraph_node->insertInput(position, input);
    inner[input] = inner_input;
  }
  Node* copy = subgraph.insertNode(subgraph.createClone(to_merge, [&](const Value* v) { return inner.at(v); }));

  for (size_t i = 0; i < to_merge->outputs().size(); ++i) {
    Value* out = to_merge->output(i);
    for (size_t p = subgraph_node->inputs().size(); p-- > 0;) {
      if (subgraph_node->input(p) != out) continue;
      subgraph.inputs()[p]->replaceAllUsesWith(copy->output(i));
      subgraph_node->removeInput(p);
      subgraph.eraseInput(p);
    }
    if (all_outputs || out->hasUses()) exposeOutput(subgraph_node, copy->output(i), out, replaced);
  }
  to_merge->destroy();
  return copy;
}

}  // namespace

Graph& getSubgraph(Node* n) { return *n->g(attr::Subgraph); }

void takeMetadata(Value* to, Value* from) {
  to->setType(from->type());
  if (!from->hasDebugName()) return;
  std::string name = from->debugName();
  from->setDebugName("");
  to->setDebugName(name);
}

Node* createSingletonSubgraph(Node* n, Symbol kind, const ValueReplaced& replaced) {
  Node* subgraph_node = n->owningGraph()->create(kind, 0);
  subgraph_node->g_(attr::Subgraph, std::make_shared<Graph>());
  subgraph_node->copyMetadata(n);
  subgraph_node->insertBefore(n);
  mergeNode(n, subgraph_node, /*all_outputs=*/true, replaced);
  return subgraph_node;
}

Node* mergeNodeIntoSubgraph(Node* to_merge, Node* subgraph_node, const ValueReplaced& replaced) {
  return mergeNode(to_merge, subgraph_node, /*all_outputs=*/false, replaced);
}

void mergeSubgraphs(Node* consumer, Node* producer, const ValueReplaced& replaced) {
  std::vector<Node*> nodes = unmergeSubgraph(producer, replaced);
  // Last to first: each node's users are inside `consumer` by the time it moves.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* n = *it;
    // Constants were copied in with their users.
    if (n->kind() == prim::Constant && !n->output()->hasUses()) {
      n->destroy();
    } else {
      mergeNodeIntoSubgraph(n, consumer, replaced);
    }
  }
}

std::vector<Node*> unmergeSubgraph(Node* subgraph_node, const ValueReplaced& replaced) {
  Graph* graph = subgraph_node->owningGraph();
  Graph& subgraph = getSubgraph(subgraph_node);
  std::unordered_map<const Value*, Value*> outer;
  for (size_t i = 0; i < subgraph.inputs().size(); ++i) outer[subgraph.inputs()[i]] = subgraph_node->input(i);

  // The outputs' names go to the values replacing them, not to `name.1`.
  std::vector<std::string> names;
  for (Value* out : subgraph_node->outputs()) {
    names.push_back(out->hasDebugName() ? out->debugName() : "");
    out->setDebugName("");
  }

  std::vector<Node*> nodes;
  std::unordered_set<const Value*> copied;
  WithInsertPoint guard(subgraph_node);
  for (Node* inner : subgraph.nodes()) {
    // Constants were copied in, not moved: the originals still hold their
    // names outside.
    if (inner->kind() == prim::Constant) inner->output()->setDebugName("");
    Node* copy = graph->insertNode(graph->createClone(inner, [&](const Value* v) { return outer.at(v); }));
    for (size_t i = 0; i < inner->outputs().size(); ++i) {
      outer[inner->output(i)] = copy->output(i);
      copied.insert(copy->output(i));
    }
    nodes.push_back(copy);
  }

  for (size_t i = 0; i < subgraph_node->outputs().size(); ++i) {
    Value* out = subgraph_node->output(i);
    Value* value = outer.at(subgraph.outputs()[i]);
    if (copied.count(value)) {
      value->setType(out->type());
      if (!names[i].empty()) value->setDebugName(names[i]);
    }
    if (replaced) replaced(out, value);
    out->replaceAllUsesWith(value);
  }
  subgraph_node->destroy();
  return nodes;
}

}  // namespace kiln
