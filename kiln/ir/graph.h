#pragma once
// The graph IR (PyTorch's; docs/ir.md): a Graph owns Blocks, Nodes and Values. A Block is
// a list of Nodes with inputs and outputs; a Node is one operation with input
// Values, output Values, attributes and nested Blocks (prim::If, prim::Loop);
// a Value is defined by exactly one Node (SSA) and knows its uses.
//
// Every Block's nodes form a circular doubly linked list whose sentinel is
// the block's prim::Return node (its inputs are the block's outputs); the
// block's inputs are the outputs of a prim::Param node outside the list.
// Nodes carry a position number so isBefore/isAfter are O(1) amortized.
//
// Ownership: everything belongs to its Graph and dies with it; hold a
// std::shared_ptr<Graph> while holding raw Node*/Value*/Block* pointers.
#include <functional>
#include <iosfwd>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "kiln/core/ivalue.h"
#include "kiln/core/operator.h"
#include "kiln/core/symbol.h"
#include "kiln/core/type.h"
#include "kiln/ir/named_value.h"
#include "kiln/ir/source_range.h"
#include "kiln/util/array_ref.h"

namespace kiln {

class Graph;
class Block;
class Node;
class Value;
using GraphPtr = std::shared_ptr<Graph>;

// One use of a Value: input `offset` of `user`.
struct Use {
  Node* user;
  size_t offset;
  friend bool operator==(const Use& a, const Use& b) { return a.user == b.user && a.offset == b.offset; }
};

// A scope path (`__module.encoder/__module.encoder.layer0`) recorded on
// nodes by the tracer; printed after the inputs as `, scope: ...`.
class Scope;
using ScopePtr = std::shared_ptr<Scope>;
class Scope : public std::enable_shared_from_this<Scope> {
 public:
  Scope() = default;
  Scope(ScopePtr parent, std::string name) : parent_(std::move(parent)), name_(std::move(name)) {}
  ScopePtr push(std::string name);
  const ScopePtr& parent() const { return parent_; }
  bool isRoot() const { return !parent_; }
  const std::string& name() const { return name_; }
  // The names from below the root down to this scope, joined by `separator`.
  std::string namesFromRoot(const std::string& separator = "/") const;

 private:
  ScopePtr parent_;
  std::string name_;
};

enum class AttributeKind { f, fs, i, is, s, ss, t, ts, g, gs, ty, tys, ival };
const char* attributeKindName(AttributeKind kind);

class Value {
 public:
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  const TypePtr& type() const { return type_; }
  Value* setType(TypePtr type);
  // Sets the type to the complete type of `t`.
  Value* inferTypeFrom(const Tensor& t);
  bool requiresGrad() const;
  bool isCompleteTensor() const;

  Node* node() { return node_; }
  const Node* node() const { return node_; }
  // Position in node()->outputs().
  size_t offset() const { return offset_; }
  void setOffset(size_t offset) { offset_ = offset; }
  // A number unique within the graph (the printed name when there is no debug name).
  size_t unique() const { return unique_; }
  const std::vector<Use>& uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }
  Graph* owningGraph();
  const Graph* owningGraph() const;

  // Debug names: `x`, `x.1`. A name already held by another value moves that
  // value to `x.<n>` (the next free suffix), as PyTorch 1.13 does.
  static bool isValidName(const std::string& name);
  bool hasDebugName() const { return !unique_name_.empty(); }
  std::string debugName() const;
  // The name without its numeric suffix (`x` for `x.3`).
  std::string debugNameBase() const;
  Value* setDebugName(const std::string& name);
  // Copies the type and debug name.
  Value* copyMetadata(Value* from);

  // Points every use at `to` instead.
  void replaceAllUsesWith(Value* to);
  void replaceFirstUseWith(Value* to);
  // Only the uses after `node` (in program order, nested blocks included).
  void replaceAllUsesAfterNodeWith(const Node* node, Value* to);
  // Only the uses inside blocks that `node` dominates (those after it).
  void replaceAllUsesDominatedByNodeWith(const Node* node, Value* to);

 private:
  friend class Node;
  friend class Graph;
  Value(Node* node, size_t offset);

  Node* node_;
  size_t offset_;
  size_t unique_;
  std::vector<Use> uses_;
  std::string unique_name_;
  TypePtr type_;
};

class Node;

// The nodes of a block in order; iterating reverse() walks backwards.
// An iterator stays valid unless the node it points to moves or is destroyed.
class NodeIterator {
 public:
  using iterator_category = std::bidirectional_iterator_tag;
  using value_type = Node*;
  using difference_type = std::ptrdiff_t;
  using pointer = Node* const*;
  using reference = Node*;

  NodeIterator(Node* cur, bool reverse) : cur_(cur), reverse_(reverse) {}
  Node* operator*() const { return cur_; }
  Node* operator->() const { return cur_; }
  NodeIterator& operator++();
  NodeIterator operator++(int) {
    NodeIterator old = *this;
    ++*this;
    return old;
  }
  NodeIterator& operator--();
  // Destroys the current node and steps back, so the next ++ reaches the
  // node after it.
  void destroyCurrent();
  friend bool operator==(const NodeIterator& a, const NodeIterator& b) { return a.cur_ == b.cur_; }
  friend bool operator!=(const NodeIterator& a, const NodeIterator& b) { return a.cur_ != b.cur_; }

 private:
  Node* cur_;
  bool reverse_;
};

class NodeList {
 public:
  NodeList(Node* sentinel, bool reverse) : sentinel_(sentinel), reverse_(reverse) {}
  NodeIterator begin() const;
  NodeIterator end() const { return NodeIterator(sentinel_, reverse_); }
  NodeList reverse() const { return NodeList(sentinel_, !reverse_); }
  Node* front() const { return *begin(); }
  Node* back() const { return *reverse().begin(); }
  bool empty() const { return *begin() == sentinel_; }

 private:
  Node* sentinel_;
  bool reverse_;
};

class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  Symbol kind() const { return kind_; }
  Graph* owningGraph() { return graph_; }
  const Graph* owningGraph() const { return graph_; }
  Block* owningBlock() { return owning_block_; }
  const Block* owningBlock() const { return owning_block_; }
  // Whether this node is in a block's list (created nodes are not until inserted).
  bool inBlockList() const;

  ArrayRef<Value*> inputs() { return inputs_; }
  ArrayRef<const Value*> inputs() const;
  ArrayRef<Value*> outputs() { return outputs_; }
  ArrayRef<const Value*> outputs() const;
  Value* input(size_t i) { return inputs_.at(i); }
  const Value* input(size_t i) const { return inputs_.at(i); }
  Value* output(size_t i) { return outputs_.at(i); }
  const Value* output(size_t i) const { return outputs_.at(i); }
  // The only input / output; raises when there is not exactly one.
  Value* input();
  Value* output();
  const Value* output() const;
  bool hasUses() const;

  ArrayRef<Block*> blocks() { return blocks_; }
  ArrayRef<const Block*> blocks() const;
  Block* addBlock();
  void eraseBlock(size_t i);

  // Input editing keeps the use lists right.
  Value* addInput(Value* value);
  Value* insertInput(size_t i, Value* value);
  // Replaces input i; returns the old value.
  Value* replaceInput(size_t i, Value* new_value);
  // Replaces every occurrence of `from` among the inputs.
  void replaceInputWith(Value* from, Value* to);
  void removeInput(size_t i);
  void removeAllInputs();
  // Reorders the inputs: new input i is old input permutation[i].
  void permuteInputs(const std::vector<size_t>& permutation);

  Value* addOutput();
  Value* insertOutput(size_t i);
  // The output must have no uses.
  void eraseOutput(size_t i);
  void replaceAllUsesWith(Node* other);

  // List position. The node must not be in a list yet for insert*, and must
  // be for move*; destroy() unlinks and frees the node (its outputs must be unused).
  Node* insertBefore(Node* n);
  Node* insertAfter(Node* n);
  void moveBefore(Node* n);
  void moveAfter(Node* n);
  void removeFromList();
  void destroy();
  Node* next() { return next_; }
  Node* prev() { return prev_; }
  const Node* next() const { return next_; }
  const Node* prev() const { return prev_; }

  // Program order across blocks: false for the same node, and for a node and
  // one nested inside it. O(1) amortized within a block.
  bool isBefore(const Node* n) const;
  bool isAfter(const Node* n) const;
  // Whether `dominator` runs before this node in this node's block or in one
  // enclosing it (so its outputs are in scope here).
  bool isDominatedBy(const Node* dominator) const;

  // Inputs by schema argument name, and constant inputs.
  Value* namedInput(const std::string& name);
  Value* namedInput(Symbol name);
  bool isConstant(Symbol name) const;
  // The value of a constant input, by schema argument name.
  std::optional<IValue> get(Symbol name) const;
  template <typename T>
  std::optional<T> get(Symbol name) const;

  // The operator this node calls, chosen among the overloads of kind() by the
  // input types; null when none matches.
  const FunctionSchema* maybeSchema() const;
  const FunctionSchema& schema() const;
  std::shared_ptr<const Operator> maybeOperator() const;
  // Records the overload a compiler matched for this node (its inputs must
  // fit it), so that maybeOperator() need not search for it again.
  void setOperator(std::shared_ptr<const Operator> op) { op_ = std::move(op); }
  const Operator& getOperator() const;
  // Whether the node's inputs fit `schema` (names, arity, types).
  bool matches(const FunctionSchema& schema) const;
  bool matches(std::string_view schema_text) const;

  // Attributes, in insertion order. Names are attr:: symbols.
  bool hasAttribute(Symbol name) const;
  bool hasAttributes() const { return !attributes_.empty(); }
  size_t numAttributes() const { return attributes_.size(); }
  AttributeKind kindOf(Symbol name) const;
  std::vector<Symbol> attributeNames() const;
  Node* removeAttribute(Symbol name);
  // Copies every attribute of `other` (graphs deeply, tensors by reference).
  Node* copyAttributes(const Node& other);

#define KILN_NODE_ATTRIBUTE(method, Type)                                                                          \
  Node* method##_(Symbol name, Type value) { return setAttribute(name, AttributeKind::method, std::move(value)); } \
  const Type& method(Symbol name) const { return getAttribute<Type>(name, AttributeKind::method); }
  KILN_NODE_ATTRIBUTE(f, double)
  KILN_NODE_ATTRIBUTE(fs, std::vector<double>)
  KILN_NODE_ATTRIBUTE(i, int64_t)
  KILN_NODE_ATTRIBUTE(is, std::vector<int64_t>)
  KILN_NODE_ATTRIBUTE(s, std::string)
  KILN_NODE_ATTRIBUTE(ss, std::vector<std::string>)
  KILN_NODE_ATTRIBUTE(t, Tensor)
  KILN_NODE_ATTRIBUTE(ts, std::vector<Tensor>)
  KILN_NODE_ATTRIBUTE(g, GraphPtr)
  KILN_NODE_ATTRIBUTE(gs, std::vector<GraphPtr>)
  KILN_NODE_ATTRIBUTE(ty, TypePtr)
  KILN_NODE_ATTRIBUTE(tys, std::vector<TypePtr>)
  KILN_NODE_ATTRIBUTE(ival, IValue)
#undef KILN_NODE_ATTRIBUTE

  const SourceRange& sourceRange() const { return source_range_; }
  Node* setSourceRange(SourceRange range) {
    source_range_ = std::move(range);
    return this;
  }
  const ScopePtr& scope() const { return scope_; }
  Node* setScope(ScopePtr scope) {
    scope_ = std::move(scope);
    return this;
  }
  std::string scopeName() const;
  // Copies the source range and scope.
  Node* copyMetadata(const Node* from);

  // The node's line of IR text (with its nested blocks).
  std::ostream& print(std::ostream& out, size_t level, std::vector<const Node*>* groups,
                      bool print_source_locations = true, bool print_attributes = true, bool print_scopes = true,
                      bool print_body = true) const;
  void dump() const;

 private:
  friend class Graph;
  friend class Block;
  friend class Value;
  friend class NodeIterator;
  friend class IRParser;
  Node(Graph* graph, Symbol kind);
  ~Node() = default;

  struct Attribute {
    Symbol name;
    AttributeKind kind;
    std::variant<double, std::vector<double>, int64_t, std::vector<int64_t>, std::string, std::vector<std::string>,
                 Tensor, std::vector<Tensor>, GraphPtr, std::vector<GraphPtr>, TypePtr, std::vector<TypePtr>, IValue>
        value;
  };
  template <typename T>
  Node* setAttribute(Symbol name, AttributeKind kind, T value);
  template <typename T>
  const T& getAttribute(Symbol name, AttributeKind kind) const;
  const Attribute& findAttribute(Symbol name) const;
  void printAttributes(std::ostream& out, bool ignore_subgraph) const;
  void printAttributeValue(std::ostream& out, const Attribute& a) const;

  void linkBefore(Node* n);  // puts this (unlinked) node before n in n's list
  void assignTopoPosition();
  void dropInput(size_t i);  // removes this node's use of input i
  std::vector<Use>::iterator findUseForInput(size_t i);
  std::optional<size_t> argumentIndex(Symbol name) const;

  Node* next_ = nullptr;
  Node* prev_ = nullptr;
  Symbol kind_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Block*> blocks_;
  Graph* graph_;
  Block* owning_block_ = nullptr;
  SourceRange source_range_;
  ScopePtr scope_;
  int64_t topo_position_ = 0;
  std::vector<Attribute> attributes_;
  mutable std::shared_ptr<const Operator> op_;  // cache for maybeOperator()
  mutable bool kind_has_no_operators_ = false;  // prim::Constant, prim::ListConstruct, ...
};

class Block {
 public:
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  ArrayRef<Value*> inputs();
  ArrayRef<const Value*> inputs() const;
  ArrayRef<Value*> outputs();
  ArrayRef<const Value*> outputs() const;
  NodeList nodes() { return NodeList(output_, false); }
  NodeList nodes() const { return NodeList(output_, false); }
  Node* paramNode() { return input_; }
  const Node* paramNode() const { return input_; }
  Node* returnNode() { return output_; }
  const Node* returnNode() const { return output_; }
  Node* owningNode() { return owning_node_; }
  const Node* owningNode() const { return owning_node_; }
  Graph* owningGraph() { return graph_; }
  const Graph* owningGraph() const { return graph_; }

  Value* addInput(const std::string& name = "");
  Value* insertInput(size_t i, const std::string& name = "");
  void eraseInput(size_t i);
  size_t registerOutput(Value* v);
  void insertOutput(size_t i, Value* v);
  void eraseOutput(size_t i);
  void replaceOutput(size_t i, Value* v);
  void permuteOutputs(const std::vector<size_t>& permutation);

  Node* appendNode(Node* n);
  Node* prependNode(Node* n);

  // Appends a copy of `src`'s nodes to this block and registers copies of
  // its outputs as outputs of this block; `value_map` maps values used in
  // `src` but defined outside it.
  void cloneFrom(const Block* src, const std::function<Value*(const Value*)>& value_map);

 private:
  friend class Graph;
  friend class Node;
  explicit Block(Graph* graph, Node* owning_node);
  void destroy();
  void reIndexTopology();

  Graph* graph_;
  Node* output_;  // prim::Return: the sentinel of the node list
  Node* input_;   // prim::Param
  Node* owning_node_;
};

// Where Graph::insertNode puts nodes (before a node, or at the end of a block).
class Graph : public std::enable_shared_from_this<Graph> {
 public:
  Graph();
  explicit Graph(ScopePtr root_scope);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Block* block() { return block_; }
  const Block* block() const { return block_; }
  ArrayRef<Value*> inputs() { return block_->inputs(); }
  ArrayRef<const Value*> inputs() const;
  ArrayRef<Value*> outputs() { return block_->outputs(); }
  ArrayRef<const Value*> outputs() const;
  NodeList nodes() { return block_->nodes(); }
  NodeList nodes() const;
  Node* paramNode() { return block_->paramNode(); }
  Node* returnNode() { return block_->returnNode(); }

  Value* addInput(const std::string& name = "") { return block_->addInput(name); }
  Value* insertInput(size_t i, const std::string& name = "") { return block_->insertInput(i, name); }
  void eraseInput(size_t i) { block_->eraseInput(i); }
  size_t registerOutput(Value* v) { return block_->registerOutput(v); }
  void eraseOutput(size_t i) { block_->eraseOutput(i); }

  // A new node, not yet in any block.
  Node* create(Symbol kind, size_t num_outputs = 1);
  Node* create(Symbol kind, ArrayRef<Value*> inputs, size_t num_outputs = 1);
  // A copy of `n` (attributes, blocks) whose inputs are `value_map` of n's.
  Node* createClone(const Node* n, const std::function<Value*(const Value*)>& value_map, bool copy_blocks = true);
  Node* createNone();
  Node* createUninitialized(TypePtr type);
  Node* createTuple(ArrayRef<Value*> values, TypePtr tuple_type = nullptr);
  Node* createTupleUnpack(Value* tuple);
  Node* createTupleIndex(Value* tuple, Value* index, TypePtr output_type);
  Node* createList(const TypePtr& element_type, ArrayRef<Value*> values);
  Node* createListUnpack(Value* list, size_t size);
  Node* createDict(const TypePtr& key_type, const TypePtr& value_type, ArrayRef<Value*> keys, ArrayRef<Value*> values);
  Node* createGetAttr(Value* obj, const std::string& field);
  Node* createSetAttr(Value* obj, const std::string& field, Value* new_value);

  // Insertion point: insertNode() puts nodes before it.
  Node* insertNode(Node* n);
  void setInsertPoint(Node* n);
  void setInsertPoint(Block* b) { setInsertPoint(b->returnNode()); }
  Node* insertPoint() { return insert_before_; }
  Block* insertBlock() { return insert_before_->owningBlock(); }
  Node* appendNode(Node* n) { return block_->appendNode(n); }
  Node* prependNode(Node* n) { return block_->prependNode(n); }

  // A prim::Constant for `value` at the insertion point.
  Value* insertConstant(const IValue& value, std::optional<SourceRange> range = std::nullopt,
                        std::optional<ScopePtr> scope = std::nullopt);

  // An argument for insert() (see named_value.h).
  using NamedValue = kiln::NamedValue;
  // Inserts a call of `kind`, choosing the overload whose schema the
  // arguments fit (defaults fill missing ones); returns its output (a tuple
  // of the outputs when the schema returns several). Raises kiln::Error
  // listing the overloads when none fits.
  Value* insert(Symbol kind, std::vector<NamedValue> args, std::vector<NamedValue> kwargs = {},
                std::optional<SourceRange> range = std::nullopt);

  // Scopes for nodes created from now on.
  const ScopePtr& currentScope() const { return current_scope_; }
  void setCurrentScope(ScopePtr scope) { current_scope_ = std::move(scope); }
  void pushScope(const std::string& name) { current_scope_ = current_scope_->push(name); }
  void popScope();

  // A deep copy (subgraph attributes too); `value_map`, when given, receives
  // old -> new for every value.
  GraphPtr copy() const;
  GraphPtr copy(std::unordered_map<const Value*, Value*>& value_map) const;
  // Inlines `callee` at the insertion point with `inputs` for its inputs;
  // returns the values of its outputs.
  std::vector<Value*> insertGraph(const Graph& callee, ArrayRef<Value*> inputs);

  // Raises kiln::Error naming the first broken invariant: use lists,
  // definition before use (topological order and block scoping), node and
  // value ownership, block arities of prim::If and prim::Loop, debug names.
  void lint() const;

  // The IR text; `print_source_locations` adds `# file:line:col` comments.
  std::ostream& print(std::ostream& out, bool print_source_locations = true) const;
  std::string toString(bool print_source_locations = true) const;
  void dump() const;

  // Whether `n` is a live node of this graph.
  bool hasNode(const Node* n) const { return all_nodes_.count(n) > 0; }

 private:
  friend class Node;
  friend class Value;
  friend class Block;
  friend class GraphLinter;
  Node* newNode(Symbol kind);
  Value* newValue(Node* node, size_t offset);
  Block* newBlock(Node* owning_node);
  void freeNode(Node* n);
  void freeValue(Value* v);
  void freeBlock(Block* b);

  std::unordered_set<const Node*> all_nodes_;
  std::unordered_set<const Value*> all_values_;
  std::unordered_set<const Block*> all_blocks_;
  size_t next_unique_ = 0;
  std::unordered_map<std::string, Value*> unique_names_;
  std::unordered_map<std::string, size_t> name_base_suffix_;
  ScopePtr current_scope_;
  Block* block_;
  Node* insert_before_;
  int64_t predicted_insert_count_ = 0;
};

// What runs `node`: the operation of its schema's operator, else the
// operation registered for its kind (vararg prim ops); empty when neither exists.
Operation findOperation(const Node& node);

std::ostream& operator<<(std::ostream& out, const Graph& g);
std::ostream& operator<<(std::ostream& out, const Node& n);

// Sets the graph's insertion point for the guard's lifetime.
class WithInsertPoint {
 public:
  explicit WithInsertPoint(Node* n);
  explicit WithInsertPoint(Block* b) : WithInsertPoint(b->returnNode()) {}
  ~WithInsertPoint();
  WithInsertPoint(const WithInsertPoint&) = delete;
  WithInsertPoint& operator=(const WithInsertPoint&) = delete;

 private:
  Graph* graph_;
  Node* previous_;
};

// Sets the graph's current scope for the guard's lifetime.
class WithCurrentScope {
 public:
  WithCurrentScope(Graph& graph, ScopePtr scope);
  ~WithCurrentScope();
  WithCurrentScope(const WithCurrentScope&) = delete;
  WithCurrentScope& operator=(const WithCurrentScope&) = delete;

 private:
  Graph& graph_;
  ScopePtr previous_;
};

// The value of a prim::Constant output (or nullopt for any other value).
std::optional<IValue> toIValue(const Value* v);

template <typename T>
std::optional<T> Node::get(Symbol name) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  if constexpr (std::is_same_v<T, IValue>) {
    return v;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return v->toInt();
  } else if constexpr (std::is_same_v<T, double>) {
    return v->toDouble();
  } else if constexpr (std::is_same_v<T, bool>) {
    return v->toBool();
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v->toStringRef();
  } else if constexpr (std::is_same_v<T, Tensor>) {
    return v->toTensor();
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    return v->toIntVector();
  } else {
    static_assert(sizeof(T) == 0, "Node::get<T>: unsupported T");
  }
}

}  // namespace kiln
