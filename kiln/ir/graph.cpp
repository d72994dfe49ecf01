#include "kiln/ir/graph.h"

#include <algorithm>
#include <charconv>
#include <iostream>
#include <limits>
#include <sstream>
#include <string_view>

namespace kiln {

namespace {

// Node positions: the Param node sits at the lowest value, the Return node at
// the highest; appended nodes step by kAppendInterval, inserted ones split
// the gap, and a block renumbers when a gap runs out.
constexpr int64_t kLowerBound = std::numeric_limits<int64_t>::min();
constexpr int64_t kUpperBound = std::numeric_limits<int64_t>::max();
constexpr int64_t kAppendInterval = int64_t{1} << 40;

template <typename T>
ArrayRef<const T*> constRef(const std::vector<T*>& v) {
  return ArrayRef<const T*>(const_cast<const T* const*>(v.data()), v.size());
}

}  // namespace

// --- Scope ---------------------------------------------------------------------------

ScopePtr Scope::push(std::string name) { return std::make_shared<Scope>(shared_from_this(), std::move(name)); }

std::string Scope::namesFromRoot(const std::string& separator) const {
  if (isRoot()) return name_;
  std::string out = name_;
  for (const Scope* s = parent_.get(); !s->isRoot(); s = s->parent_.get()) out = s->name_ + separator + out;
  return out;
}

const char* attributeKindName(AttributeKind kind) {
  switch (kind) {
    case AttributeKind::f: return "f";
    case AttributeKind::fs: return "fs";
    case AttributeKind::i: return "i";
    case AttributeKind::is: return "is";
    case AttributeKind::s: return "s";
    case AttributeKind::ss: return "ss";
    case AttributeKind::t: return "t";
    case AttributeKind::ts: return "ts";
    case AttributeKind::g: return "g";
    case AttributeKind::gs: return "gs";
    case AttributeKind::ty: return "ty";
    case AttributeKind::tys: return "tys";
    case AttributeKind::ival: return "ival";
  }
  return "?";
}

// --- Value ---------------------------------------------------------------------------

namespace {
// A node's resolved operator depends only on its kind and its inputs'
// types: replacing an input by a value of the same type keeps it. The
// frontend replaces every variable load this way, so forgetting the
// operator would make each node match its schemas a second time.
bool sameType(const TypePtr& a, const TypePtr& b) { return a == b || *a == *b; }
}  // namespace

Value::Value(Node* node, size_t offset)
    : node_(node), offset_(offset), unique_(node->owningGraph()->next_unique_++), type_(TensorType::get()) {}

Value* Value::setType(TypePtr type) {
  KILN_INTERNAL_ASSERT(type, "a value's type cannot be null");
  if (!sameType(type_, type)) {
    for (Use& use : uses_) use.user->op_ = nullptr;  // overload resolution depends on input types
  }
  type_ = std::move(type);
  return this;
}

Value* Value::inferTypeFrom(const Tensor& t) { return setType(TensorType::fromTensor(t)); }

bool Value::requiresGrad() const {
  auto t = type_->cast<TensorType>();
  return t && t->requiresGrad().value_or(false);
}

bool Value::isCompleteTensor() const {
  auto t = type_->cast<TensorType>();
  return t && t->isComplete();
}

Graph* Value::owningGraph() { return node_->owningGraph(); }
const Graph* Value::owningGraph() const { return node_->owningGraph(); }

bool Value::isValidName(const std::string& name) {
  if (name.empty()) return true;
  // Bare numbers are how unnamed values print, so they cannot be names.
  return name.find_first_not_of("0123456789") != std::string::npos;
}

std::string Value::debugName() const { return hasDebugName() ? unique_name_ : std::to_string(unique_); }

std::string Value::debugNameBase() const {
  std::string name = debugName();
  size_t dot = name.find_last_of('.');
  if (dot != std::string::npos && dot + 1 < name.size() &&
      name.find_first_not_of("0123456789", dot + 1) == std::string::npos) {
    return name.substr(0, dot);
  }
  return name;
}

Value* Value::setDebugName(const std::string& name) {
  KILN_CHECK(isValidName(name), "invalid value name '", name, "': names cannot be numbers");
  Graph* g = owningGraph();
  auto& names = g->unique_names_;
  if (hasDebugName()) {
    names.erase(unique_name_);
    unique_name_.clear();
  }
  if (name.empty()) return this;
  auto [taken, fresh] = names.try_emplace(name, this);
  if (!fresh) {
    // The value holding the name moves to `base.<n>`: the first free suffix
    // at or after the name's own suffix and those handed out before. (The
    // frontend names every variable load this way: this runs constantly.)
    Value* holder = taken->second;
    taken->second = this;
    size_t suffix = 1;
    std::string_view base = name;
    size_t dot = name.find_last_of('.');
    if (dot != std::string::npos && dot + 1 < name.size() &&
        name.find_first_not_of("0123456789", dot + 1) == std::string::npos) {
      std::from_chars(name.data() + dot + 1, name.data() + name.size(), suffix);
      base = base.substr(0, dot);
    }
    auto [known, first_time] = g->name_base_suffix_.try_emplace(std::string(base), 0);
    if (!first_time) suffix = std::max(suffix, known->second + 1);
    std::string replacement;
    replacement.reserve(base.size() + 8);
    do {
      replacement.assign(base);
      replacement += '.';
      replacement += std::to_string(suffix++);
    } while (names.count(replacement) > 0);
    known->second = suffix;
    // `base.<n>` is never a bare number, so it is a valid name.
    holder->unique_name_ = replacement;
    names.emplace(std::move(replacement), holder);
  }
  unique_name_ = name;
  return this;
}

Value* Value::copyMetadata(Value* from) {
  setType(from->type());
  if (from->hasDebugName()) setDebugName(from->debugName());
  return this;
}

void Value::replaceFirstUseWith(Value* to) {
  KILN_INTERNAL_ASSERT(owningGraph() == to->owningGraph(), "values of different graphs");
  KILN_INTERNAL_ASSERT(!uses_.empty());
  Use u = uses_.front();
  u.user->inputs_[u.offset] = to;
  if (!sameType(type_, to->type_)) u.user->op_ = nullptr;
  to->uses_.push_back(u);
  uses_.erase(uses_.begin());
}

void Value::replaceAllUsesWith(Value* to) {
  if (to == this) return;
  while (!uses_.empty()) replaceFirstUseWith(to);
}

namespace {
template <typename Pred>
void replaceUsesWhere(std::vector<Use>& uses, Value* to, Pred pred) {
  for (const Use& u : uses) {
    if (pred(u)) {
      u.user->replaceInput(u.offset, to);
    }
  }
}
}  // namespace

void Value::replaceAllUsesAfterNodeWith(const Node* node, Value* to) {
  std::vector<Use> uses = uses_;  // replaceInput edits uses_
  replaceUsesWhere(uses, to, [&](const Use& u) { return u.user->isAfter(node); });
}

void Value::replaceAllUsesDominatedByNodeWith(const Node* node, Value* to) {
  std::vector<Use> uses = uses_;
  replaceUsesWhere(uses, to, [&](const Use& u) { return u.user->isDominatedBy(node); });
}

// --- node lists ----------------------------------------------------------------------

NodeIterator& NodeIterator::operator++() {
  cur_ = reverse_ ? cur_->prev_ : cur_->next_;
  return *this;
}

NodeIterator& NodeIterator::operator--() {
  cur_ = reverse_ ? cur_->next_ : cur_->prev_;
  return *this;
}

void NodeIterator::destroyCurrent() {
  Node* n = cur_;
  --*this;
  n->destroy();
}

NodeIterator NodeList::begin() const {
  return NodeIterator(reverse_ ? sentinel_->prev() : sentinel_->next(), reverse_);
}

// --- Node ----------------------------------------------------------------------------

Node::Node(Graph* graph, Symbol kind) : kind_(kind), graph_(graph), scope_(graph->current_scope_) {}

bool Node::inBlockList() const { return next_ != nullptr; }

ArrayRef<const Value*> Node::inputs() const { return constRef(inputs_); }
ArrayRef<const Value*> Node::outputs() const { return constRef(outputs_); }
ArrayRef<const Block*> Node::blocks() const { return constRef(blocks_); }

Value* Node::input() {
  KILN_INTERNAL_ASSERT(inputs_.size() == 1, kind_, " has ", inputs_.size(), " inputs, not 1");
  return inputs_[0];
}
Value* Node::output() {
  KILN_INTERNAL_ASSERT(outputs_.size() == 1, kind_, " has ", outputs_.size(), " outputs, not 1");
  return outputs_[0];
}
const Value* Node::output() const { return const_cast<Node*>(this)->output(); }

bool Node::hasUses() const {
  return std::any_of(outputs_.begin(), outputs_.end(), [](const Value* v) { return v->hasUses(); });
}

Block* Node::addBlock() {
  op_ = nullptr;
  blocks_.push_back(graph_->newBlock(this));
  return blocks_.back();
}

void Node::eraseBlock(size_t i) {
  KILN_INTERNAL_ASSERT(i < blocks_.size());
  op_ = nullptr;
  Block* b = blocks_[i];
  blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
  b->destroy();
}

Value* Node::addInput(Value* value) {
  KILN_INTERNAL_ASSERT(value->owningGraph() == graph_, "input from another graph");
  op_ = nullptr;
  value->uses_.push_back({this, inputs_.size()});
  inputs_.push_back(value);
  return value;
}

std::vector<Use>::iterator Node::findUseForInput(size_t i) {
  std::vector<Use>& uses = inputs_[i]->uses_;
  auto it = std::find(uses.begin(), uses.end(), Use{this, i});
  KILN_INTERNAL_ASSERT(it != uses.end(), "use list of %", inputs_[i]->debugName(), " is missing input ", i, " of ",
                       kind_);
  return it;
}

Value* Node::insertInput(size_t i, Value* value) {
  KILN_INTERNAL_ASSERT(i <= inputs_.size() && value->owningGraph() == graph_);
  op_ = nullptr;
  for (size_t j = inputs_.size(); j-- > i;) findUseForInput(j)->offset += 1;
  inputs_.insert(inputs_.begin() + static_cast<std::ptrdiff_t>(i), value);
  value->uses_.push_back({this, i});
  return value;
}

void Node::dropInput(size_t i) {
  inputs_[i]->uses_.erase(findUseForInput(i));
  inputs_[i] = nullptr;
}

Value* Node::replaceInput(size_t i, Value* new_value) {
  KILN_INTERNAL_ASSERT(i < inputs_.size() && new_value->owningGraph() == graph_);
  Value* old = inputs_[i];
  if (!sameType(old->type(), new_value->type())) op_ = nullptr;
  dropInput(i);
  inputs_[i] = new_value;
  new_value->uses_.push_back({this, i});
  return old;
}

void Node::replaceInputWith(Value* from, Value* to) {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i] == from) replaceInput(i, to);
  }
}

void Node::removeInput(size_t i) {
  KILN_INTERNAL_ASSERT(i < inputs_.size());
  op_ = nullptr;
  dropInput(i);
  for (size_t j = i + 1; j < inputs_.size(); ++j) findUseForInput(j)->offset -= 1;
  inputs_.erase(inputs_.begin() + static_cast<std::ptrdiff_t>(i));
}

void Node::removeAllInputs() {
  op_ = nullptr;
  for (size_t i = 0; i < inputs_.size(); ++i) dropInput(i);
  inputs_.clear();
}

void Node::permuteInputs(const std::vector<size_t>& permutation) {
  KILN_INTERNAL_ASSERT(permutation.size() == inputs_.size());
  std::vector<Value*> reordered;
  std::vector<bool> seen(inputs_.size(), false);
  for (size_t p : permutation) {
    KILN_INTERNAL_ASSERT(p < inputs_.size() && !seen[p], "not a permutation");
    seen[p] = true;
    reordered.push_back(inputs_[p]);
  }
  removeAllInputs();
  for (Value* v : reordered) addInput(v);
}

Value* Node::addOutput() {
  op_ = nullptr;
  outputs_.push_back(graph_->newValue(this, outputs_.size()));
  return outputs_.back();
}

Value* Node::insertOutput(size_t i) {
  KILN_INTERNAL_ASSERT(i <= outputs_.size());
  op_ = nullptr;
  outputs_.insert(outputs_.begin() + static_cast<std::ptrdiff_t>(i), graph_->newValue(this, i));
  for (size_t j = i + 1; j < outputs_.size(); ++j) outputs_[j]->offset_ = j;
  return outputs_[i];
}

void Node::eraseOutput(size_t i) {
  KILN_INTERNAL_ASSERT(i < outputs_.size());
  KILN_INTERNAL_ASSERT(!outputs_[i]->hasUses(), "erasing output %", outputs_[i]->debugName(), " of ", kind_,
                       " which still has uses");
  op_ = nullptr;
  Value* v = outputs_[i];
  outputs_.erase(outputs_.begin() + static_cast<std::ptrdiff_t>(i));
  graph_->freeValue(v);
  for (size_t j = i; j < outputs_.size(); ++j) outputs_[j]->offset_ = j;
}

void Node::replaceAllUsesWith(Node* other) {
  KILN_INTERNAL_ASSERT(outputs_.size() == other->outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) outputs_[i]->replaceAllUsesWith(other->outputs_[i]);
}

void Node::linkBefore(Node* n) {
  KILN_INTERNAL_ASSERT(!inBlockList(), kind_, " is already in a block");
  KILN_INTERNAL_ASSERT(n->inBlockList() && n->owning_block_, "inserting next to a node that is not in a block");
  KILN_INTERNAL_ASSERT(n->graph_ == graph_, "inserting a node next to a node of another graph");
  owning_block_ = n->owning_block_;
  Node* prev = n->prev_;
  prev->next_ = this;
  prev_ = prev;
  next_ = n;
  n->prev_ = this;
  assignTopoPosition();
}

Node* Node::insertBefore(Node* n) {
  KILN_INTERNAL_ASSERT(n->kind_ != prim::Param, "cannot insert before a block's prim::Param node");
  linkBefore(n);
  return this;
}

Node* Node::insertAfter(Node* n) {
  KILN_INTERNAL_ASSERT(n->kind_ != prim::Return || n->owning_block_ == nullptr,
                       "cannot insert after a block's prim::Return node");
  // After the Param node is the front of the list.
  Node* before = n->kind_ == prim::Param && n->owning_block_ ? n->owning_block_->output_->next_ : n->next_;
  KILN_INTERNAL_ASSERT(before, "inserting next to a node that is not in a block");
  linkBefore(before);
  return this;
}

void Node::moveBefore(Node* n) {
  removeFromList();
  insertBefore(n);
}

void Node::moveAfter(Node* n) {
  removeFromList();
  insertAfter(n);
}

void Node::removeFromList() {
  KILN_INTERNAL_ASSERT(inBlockList(), kind_, " is not in a block");
  KILN_INTERNAL_ASSERT(kind_ != prim::Return, "cannot remove a block's prim::Return node");
  owning_block_ = nullptr;
  prev_->next_ = next_;
  next_->prev_ = prev_;
  next_ = prev_ = nullptr;
}

void Node::destroy() {
  while (!outputs_.empty()) eraseOutput(outputs_.size() - 1);
  while (!blocks_.empty()) eraseBlock(blocks_.size() - 1);
  removeAllInputs();
  if (inBlockList() && kind_ != prim::Return) removeFromList();
  graph_->freeNode(this);
}

void Node::assignTopoPosition() {
  Block* b = owning_block_;
  bool is_first = prev_ == b->output_;
  bool is_last = next_ == b->output_;
  if (is_first && is_last) {
    topo_position_ = 0;
    return;
  }
  if (is_last) {
    if (prev_->topo_position_ >= kUpperBound - kAppendInterval) return b->reIndexTopology();
    topo_position_ = prev_->topo_position_ + kAppendInterval;
    return;
  }
  if (is_first) {
    if (next_->topo_position_ <= kLowerBound + kAppendInterval) return b->reIndexTopology();
    topo_position_ = next_->topo_position_ - kAppendInterval;
    return;
  }
  // Unsigned arithmetic: the gap between far-apart positions overflows int64.
  uint64_t gap = static_cast<uint64_t>(next_->topo_position_) - static_cast<uint64_t>(prev_->topo_position_);
  if (gap <= 1) return b->reIndexTopology();
  // Repeated inserts at one point leave room for the ones still to come.
  uint64_t divisor = 2;
  if (next_ == graph_->insert_before_) divisor += static_cast<uint64_t>(graph_->predicted_insert_count_++);
  uint64_t step = std::max<uint64_t>(1, gap / divisor);
  topo_position_ = static_cast<int64_t>(static_cast<uint64_t>(prev_->topo_position_) + step);
}

bool Node::isBefore(const Node* n) const {
  // Walk both nodes up to the innermost block holding both, then compare positions there.
  for (const Node* lhs = this; lhs; lhs = lhs->owning_block_ ? lhs->owning_block_->owning_node_ : nullptr) {
    for (const Node* rhs = n; rhs && rhs->owning_block_; rhs = rhs->owning_block_->owning_node_) {
      if (lhs->owning_block_ == rhs->owning_block_) return lhs->topo_position_ < rhs->topo_position_;
    }
    if (!lhs->owning_block_) break;
  }
  return false;
}

bool Node::isAfter(const Node* n) const { return n->isBefore(this); }

bool Node::isDominatedBy(const Node* dominator) const {
  for (const Node* node = this; node && node->owning_block_; node = node->owning_block_->owning_node_) {
    if (node->owning_block_ == dominator->owning_block_) return dominator->isBefore(node);
  }
  return false;
}

std::optional<size_t> Node::argumentIndex(Symbol name) const {
  const FunctionSchema* s = maybeSchema();
  KILN_CHECK(s, "no registered schema of ", kind_, " matches this node's inputs, so its inputs have no names");
  return s->argumentIndex(name.name());
}

Value* Node::namedInput(const std::string& name) { return namedInput(Symbol::attr(name)); }

Value* Node::namedInput(Symbol name) {
  auto i = argumentIndex(name);
  KILN_CHECK(i && *i < inputs_.size(), kind_, " has no input named '", name.name(), "'");
  return inputs_[*i];
}

bool Node::isConstant(Symbol name) const { return get(name).has_value(); }

std::optional<IValue> Node::get(Symbol name) const {
  auto i = argumentIndex(name);
  KILN_CHECK(i && *i < inputs_.size(), kind_, " has no input named '", name.name(), "'");
  return toIValue(inputs_[*i]);
}

// --- attributes ----------------------------------------------------------------------

bool Node::hasAttribute(Symbol name) const {
  return std::any_of(attributes_.begin(), attributes_.end(), [&](const Attribute& a) { return a.name == name; });
}

const Node::Attribute& Node::findAttribute(Symbol name) const {
  for (const Attribute& a : attributes_) {
    if (a.name == name) return a;
  }
  KILN_ERROR(kind_, " has no attribute '", name.name(), "'");
}

AttributeKind Node::kindOf(Symbol name) const { return findAttribute(name).kind; }

std::vector<Symbol> Node::attributeNames() const {
  std::vector<Symbol> out;
  for (const Attribute& a : attributes_) out.push_back(a.name);
  return out;
}

Node* Node::removeAttribute(Symbol name) {
  auto it = std::find_if(attributes_.begin(), attributes_.end(), [&](const Attribute& a) { return a.name == name; });
  KILN_CHECK(it != attributes_.end(), kind_, " has no attribute '", name.name(), "'");
  attributes_.erase(it);
  return this;
}

template <typename T>
Node* Node::setAttribute(Symbol name, AttributeKind kind, T value) {
  KILN_CHECK(name.isAttr(), "attribute names are attr:: symbols, got ", name);
  for (Attribute& a : attributes_) {
    if (a.name == name) {
      a.kind = kind;
      a.value = std::move(value);
      return this;
    }
  }
  attributes_.push_back({name, kind, std::move(value)});
  return this;
}

template <typename T>
const T& Node::getAttribute(Symbol name, AttributeKind kind) const {
  const Attribute& a = findAttribute(name);
  KILN_CHECK(a.kind == kind, "attribute '", name.name(), "' of ", kind_, " is of kind ", attributeKindName(a.kind),
             ", not ", attributeKindName(kind));
  return std::get<T>(a.value);
}

#define KILN_INSTANTIATE_ATTRIBUTE(Type)                                \
  template Node* Node::setAttribute<Type>(Symbol, AttributeKind, Type); \
  template const Type& Node::getAttribute<Type>(Symbol, AttributeKind) const;
KILN_INSTANTIATE_ATTRIBUTE(double)
KILN_INSTANTIATE_ATTRIBUTE(std::vector<double>)
KILN_INSTANTIATE_ATTRIBUTE(int64_t)
KILN_INSTANTIATE_ATTRIBUTE(std::vector<int64_t>)
KILN_INSTANTIATE_ATTRIBUTE(std::string)
KILN_INSTANTIATE_ATTRIBUTE(std::vector<std::string>)
KILN_INSTANTIATE_ATTRIBUTE(Tensor)
KILN_INSTANTIATE_ATTRIBUTE(std::vector<Tensor>)
KILN_INSTANTIATE_ATTRIBUTE(GraphPtr)
KILN_INSTANTIATE_ATTRIBUTE(std::vector<GraphPtr>)
KILN_INSTANTIATE_ATTRIBUTE(TypePtr)
KILN_INSTANTIATE_ATTRIBUTE(std::vector<TypePtr>)
KILN_INSTANTIATE_ATTRIBUTE(IValue)
#undef KILN_INSTANTIATE_ATTRIBUTE

Node* Node::copyAttributes(const Node& other) {
  attributes_.clear();
  for (const Attribute& a : other.attributes_) {
    Attribute copy = a;
    // Subgraphs are owned by their node: copy them, as PyTorch does.
    if (auto* g = std::get_if<GraphPtr>(&copy.value)) {
      *g = (*g)->copy();
    } else if (auto* gs = std::get_if<std::vector<GraphPtr>>(&copy.value)) {
      for (GraphPtr& sub : *gs) sub = sub->copy();
    }
    attributes_.push_back(std::move(copy));
  }
  return this;
}

std::string Node::scopeName() const { return scope_ ? scope_->namesFromRoot() : ""; }

Node* Node::copyMetadata(const Node* from) {
  source_range_ = from->source_range_;
  if (from->scope_ && !from->scope_->isRoot()) scope_ = from->scope_;
  return this;
}

void Node::dump() const { print(std::cout, 0, nullptr) << std::flush; }

// --- Block ---------------------------------------------------------------------------

Block::Block(Graph* graph, Node* owning_node)
    : graph_(graph), output_(graph->newNode(prim::Return)), input_(graph->newNode(prim::Param)),
      owning_node_(owning_node) {
  // The Return node is the list's sentinel: a list of one.
  output_->next_ = output_;
  output_->prev_ = output_;
  output_->owning_block_ = this;
  output_->topo_position_ = kUpperBound;
  input_->owning_block_ = this;
  input_->topo_position_ = kLowerBound;
}

ArrayRef<Value*> Block::inputs() { return input_->outputs(); }
ArrayRef<const Value*> Block::inputs() const { return static_cast<const Node*>(input_)->outputs(); }
ArrayRef<Value*> Block::outputs() { return output_->inputs(); }
ArrayRef<const Value*> Block::outputs() const { return static_cast<const Node*>(output_)->inputs(); }

Value* Block::addInput(const std::string& name) { return input_->addOutput()->setDebugName(name); }
Value* Block::insertInput(size_t i, const std::string& name) { return input_->insertOutput(i)->setDebugName(name); }
void Block::eraseInput(size_t i) { input_->eraseOutput(i); }
size_t Block::registerOutput(Value* v) {
  output_->addInput(v);
  return output_->inputs_.size() - 1;
}
void Block::insertOutput(size_t i, Value* v) { output_->insertInput(i, v); }
void Block::eraseOutput(size_t i) { output_->removeInput(i); }
void Block::replaceOutput(size_t i, Value* v) { output_->replaceInput(i, v); }
void Block::permuteOutputs(const std::vector<size_t>& permutation) { output_->permuteInputs(permutation); }

Node* Block::appendNode(Node* n) {
  KILN_INTERNAL_ASSERT(n->graph_ == graph_ && !n->inBlockList());
  return n->insertBefore(output_);
}

Node* Block::prependNode(Node* n) {
  KILN_INTERNAL_ASSERT(n->graph_ == graph_ && !n->inBlockList());
  n->linkBefore(output_->next_);
  return n;
}

void Block::reIndexTopology() {
  int64_t position = kLowerBound;
  for (Node* n : nodes()) {
    KILN_INTERNAL_ASSERT(position <= kUpperBound - 2 * kAppendInterval, "too many nodes in one block");
    position += kAppendInterval;
    n->topo_position_ = position;
  }
}

void Block::cloneFrom(const Block* src, const std::function<Value*(const Value*)>& value_map) {
  std::unordered_map<const Value*, Value*> local;
  auto env = [&](const Value* v) -> Value* {
    auto it = local.find(v);
    return it != local.end() ? it->second : value_map(v);
  };
  for (const Value* input : src->inputs()) local[input] = addInput()->copyMetadata(const_cast<Value*>(input));
  for (const Node* node : src->nodes()) {
    Node* copy = appendNode(graph_->createClone(node, env));
    for (size_t i = 0; i < node->outputs().size(); ++i) local[node->outputs()[i]] = copy->outputs_[i];
  }
  for (const Value* output : src->outputs()) registerOutput(env(output));
}

void Block::destroy() {
  // The Return node is the list's sentinel: it goes last.
  output_->removeAllInputs();
  for (auto it = nodes().reverse().begin(), end = nodes().reverse().end(); it != end; ++it) it.destroyCurrent();
  output_->destroy();
  input_->destroy();
  graph_->freeBlock(this);
}

// --- Graph ---------------------------------------------------------------------------

Graph::Graph() : Graph(std::make_shared<Scope>()) {}

Graph::Graph(ScopePtr root_scope) : current_scope_(std::move(root_scope)), block_(nullptr), insert_before_(nullptr) {
  block_ = newBlock(nullptr);
  insert_before_ = block_->returnNode();
}

Graph::~Graph() {
  for (const Node* n : all_nodes_) delete n;
  for (const Value* v : all_values_) delete v;
  for (const Block* b : all_blocks_) delete b;
}

ArrayRef<const Value*> Graph::inputs() const { return static_cast<const Block*>(block_)->inputs(); }
ArrayRef<const Value*> Graph::outputs() const { return static_cast<const Block*>(block_)->outputs(); }
NodeList Graph::nodes() const { return static_cast<const Block*>(block_)->nodes(); }

Node* Graph::newNode(Symbol kind) {
  Node* n = new Node(this, kind);
  all_nodes_.insert(n);
  return n;
}

Value* Graph::newValue(Node* node, size_t offset) {
  Value* v = new Value(node, offset);
  all_values_.insert(v);
  return v;
}

Block* Graph::newBlock(Node* owning_node) {
  Block* b = new Block(this, owning_node);
  all_blocks_.insert(b);
  return b;
}

void Graph::freeNode(Node* n) {
  KILN_INTERNAL_ASSERT(all_nodes_.erase(n) == 1, "freeing a node twice");
  if (insert_before_ == n) insert_before_ = block_->returnNode();
  delete n;
}

void Graph::freeValue(Value* v) {
  v->setDebugName("");
  KILN_INTERNAL_ASSERT(all_values_.erase(v) == 1, "freeing a value twice");
  delete v;
}

void Graph::freeBlock(Block* b) {
  KILN_INTERNAL_ASSERT(all_blocks_.erase(b) == 1, "freeing a block twice");
  delete b;
}

Node* Graph::create(Symbol kind, size_t num_outputs) {
  Node* n = newNode(kind);
  for (size_t i = 0; i < num_outputs; ++i) n->addOutput();
  return n;
}

Node* Graph::create(Symbol kind, ArrayRef<Value*> inputs, size_t num_outputs) {
  Node* n = create(kind, num_outputs);
  for (Value* v : inputs) n->addInput(v);
  return n;
}

Node* Graph::createClone(const Node* n, const std::function<Value*(const Value*)>& value_map, bool copy_blocks) {
  Node* r = newNode(n->kind());
  for (const Value* o : n->outputs()) r->addOutput()->copyMetadata(const_cast<Value*>(o));
  r->copyAttributes(*n);
  r->copyMetadata(n);
  for (const Value* i : n->inputs()) r->addInput(value_map(i));
  if (copy_blocks) {
    for (const Block* b : n->blocks()) r->addBlock()->cloneFrom(b, value_map);
  }
  return r;
}

Node* Graph::createNone() {
  Node* n = create(prim::Constant);
  n->output()->setType(NoneType::get());
  return n;
}

Node* Graph::createUninitialized(TypePtr type) {
  Node* n = create(prim::Uninitialized);
  n->output()->setType(std::move(type));
  return n;
}

Node* Graph::createTuple(ArrayRef<Value*> values, TypePtr tuple_type) {
  if (!tuple_type) {
    std::vector<TypePtr> types;
    for (Value* v : values) types.push_back(v->type());
    tuple_type = TupleType::create(std::move(types));
  }
  Node* n = create(prim::TupleConstruct, values);
  n->output()->setType(std::move(tuple_type));
  return n;
}

Node* Graph::createTupleUnpack(Value* tuple) {
  auto tt = tuple->type()->cast<TupleType>();
  KILN_CHECK(tt, "prim::TupleUnpack of a value of type ", *tuple->type());
  Node* n = create(prim::TupleUnpack, {tuple}, 0);
  for (const TypePtr& t : tt->elements()) n->addOutput()->setType(t);
  return n;
}

Node* Graph::createTupleIndex(Value* tuple, Value* index, TypePtr output_type) {
  Node* n = create(prim::TupleIndex, {tuple, index});
  n->output()->setType(std::move(output_type));
  return n;
}

Node* Graph::createList(const TypePtr& element_type, ArrayRef<Value*> values) {
  for (Value* v : values) {
    KILN_CHECK(v->type()->isSubtypeOf(*element_type), "list element of type ", *v->type(),
               " does not fit the element type ", *element_type);
  }
  Node* n = create(prim::ListConstruct, values);
  n->output()->setType(ListType::create(element_type));
  return n;
}

Node* Graph::createListUnpack(Value* list, size_t size) {
  auto lt = list->type()->cast<ListType>();
  KILN_CHECK(lt, "prim::ListUnpack of a value of type ", *list->type());
  Node* n = create(prim::ListUnpack, {list}, size);
  for (Value* o : n->outputs()) o->setType(lt->elementType());
  return n;
}

Node* Graph::createDict(const TypePtr& key_type, const TypePtr& value_type, ArrayRef<Value*> keys,
                        ArrayRef<Value*> values) {
  KILN_CHECK(keys.size() == values.size(), "a dict needs as many keys as values");
  Node* n = create(prim::DictConstruct, 1);
  for (size_t i = 0; i < keys.size(); ++i) {
    n->addInput(keys[i]);
    n->addInput(values[i]);
  }
  n->output()->setType(DictType::create(key_type, value_type));
  return n;
}

Node* Graph::createGetAttr(Value* obj, const std::string& field) {
  auto ct = obj->type()->cast<ClassType>();
  KILN_CHECK(ct, "prim::GetAttr on a value of type ", *obj->type());
  auto slot = ct->findAttributeSlot(field);
  KILN_CHECK(slot, "class ", ct->name(), " has no attribute '", field, "'");
  Node* n = create(prim::GetAttr, {obj});
  n->s_(attr::name, field);
  n->output()->setType(ct->attributeType(*slot));
  return n;
}

Node* Graph::createSetAttr(Value* obj, const std::string& field, Value* new_value) {
  Node* n = create(prim::SetAttr, {obj, new_value}, 0);
  n->s_(attr::name, field);
  return n;
}

Node* Graph::insertNode(Node* n) {
  KILN_INTERNAL_ASSERT(insert_before_->inBlockList(), "the insertion point is no longer in a block");
  return n->insertBefore(insert_before_);
}

void Graph::setInsertPoint(Node* n) {
  KILN_INTERNAL_ASSERT(n->owningGraph() == this && n->inBlockList(), "insertion point outside this graph");
  insert_before_ = n;
  predicted_insert_count_ = 0;
}

void Graph::popScope() {
  KILN_CHECK(current_scope_->parent(), "popping the root scope");
  current_scope_ = current_scope_->parent();
}

Value* Graph::insertConstant(const IValue& value, std::optional<SourceRange> range, std::optional<ScopePtr> scope) {
  Node* n = create(prim::Constant);
  Value* out = n->output();
  switch (value.tag()) {
    case IValue::Tag::None: out->setType(NoneType::get()); break;
    case IValue::Tag::Tensor: {
      Tensor t = value.toTensor();
      if (!t.defined()) {
        out->setType(NoneType::get());
        break;
      }
      out->inferTypeFrom(t);
      n->t_(attr::value, t);
      break;
    }
    case IValue::Tag::Int:
      n->i_(attr::value, value.toInt());
      out->setType(IntType::get());
      break;
    case IValue::Tag::Double:
      n->f_(attr::value, value.toDouble());
      out->setType(FloatType::get());
      break;
    case IValue::Tag::Bool:
      n->i_(attr::value, value.toBool());
      out->setType(BoolType::get());
      break;
    case IValue::Tag::String:
      n->s_(attr::value, value.toStringRef());
      out->setType(StringType::get());
      break;
    case IValue::Tag::Device:
      n->s_(attr::value, value.toDevice().str());
      out->setType(DeviceObjType::get());
      break;
    case IValue::Tag::Complex:
    case IValue::Tag::List:
    case IValue::Tag::Tuple:
    case IValue::Tag::Dict:
      n->ival_(attr::value, value);
      out->setType(value.type());
      break;
    case IValue::Tag::Object:
    case IValue::Tag::Future: n->destroy(); KILN_ERROR("cannot insert a constant of type ", value.tagName());
  }
  if (range) n->setSourceRange(*range);
  if (scope) n->setScope(*scope);
  return insertNode(n)->output();
}

namespace {
Value* failOutsideValue(const Value* v) {
  KILN_ERROR("Graph::copy found a use of %", v->debugName(), " which is not in scope; run lint()");
}
}  // namespace

GraphPtr Graph::copy() const {
  auto g = std::make_shared<Graph>(current_scope_);
  g->block_->cloneFrom(block_, failOutsideValue);
  return g;
}

GraphPtr Graph::copy(std::unordered_map<const Value*, Value*>& value_map) const {
  GraphPtr g = copy();
  // cloneFrom creates values in the order of a walk over the graph: walk both
  // graphs together to pair them.
  std::function<void(const Block*, Block*)> pair = [&](const Block* a, Block* b) {
    for (size_t i = 0; i < a->inputs().size(); ++i) value_map[a->inputs()[i]] = b->inputs()[i];
    auto an = a->nodes().begin();
    auto bn = b->nodes().begin();
    for (; an != a->nodes().end(); ++an, ++bn) {
      for (size_t i = 0; i < an->outputs().size(); ++i) value_map[an->outputs()[i]] = bn->outputs()[i];
      for (size_t i = 0; i < an->blocks().size(); ++i) pair(an->blocks()[i], bn->blocks()[i]);
    }
  };
  pair(block_, g->block_);
  return g;
}

std::vector<Value*> Graph::insertGraph(const Graph& callee, ArrayRef<Value*> inputs) {
  KILN_CHECK(inputs.size() == callee.inputs().size(), "inlining a graph of ", callee.inputs().size(), " inputs with ",
             inputs.size(), " values");
  std::unordered_map<const Value*, Value*> env;
  for (size_t i = 0; i < inputs.size(); ++i) env[callee.inputs()[i]] = inputs[i];
  auto lookup = [&](const Value* v) -> Value* {
    auto it = env.find(v);
    KILN_CHECK(it != env.end(), "inlined graph uses %", v->debugName(), " which is not in scope");
    return it->second;
  };
  for (const Node* n : callee.nodes()) {
    Node* copy = insertNode(createClone(n, lookup));
    for (size_t i = 0; i < n->outputs().size(); ++i) env[n->outputs()[i]] = copy->outputs()[i];
  }
  std::vector<Value*> outputs;
  for (const Value* o : callee.outputs()) outputs.push_back(lookup(o));
  return outputs;
}

std::string Graph::toString(bool print_source_locations) const {
  std::ostringstream out;
  print(out, print_source_locations);
  return out.str();
}

void Graph::dump() const { std::cout << toString() << std::flush; }

std::ostream& operator<<(std::ostream& out, const Graph& g) { return g.print(out, true); }

std::ostream& operator<<(std::ostream& out, const Node& n) { return n.print(out, 0, nullptr); }

WithInsertPoint::WithInsertPoint(Node* n) : graph_(n->owningGraph()), previous_(graph_->insertPoint()) {
  graph_->setInsertPoint(n);
}

WithInsertPoint::~WithInsertPoint() {
  // The previous point may have been destroyed meanwhile.
  if (graph_->hasNode(previous_) && previous_->inBlockList()) graph_->setInsertPoint(previous_);
}

WithCurrentScope::WithCurrentScope(Graph& graph, ScopePtr scope) : graph_(graph), previous_(graph.currentScope()) {
  graph_.setCurrentScope(std::move(scope));
}

WithCurrentScope::~WithCurrentScope() { graph_.setCurrentScope(previous_); }

// --- constants -----------------------------------------------------------------------

std::optional<IValue> toIValue(const Value* v) {
  const Node* n = v->node();
  if (n->kind() != prim::Constant || n->outputs().size() != 1) return std::nullopt;
  const TypePtr& type = v->type();
  if (!n->hasAttribute(attr::value)) {
    // A constant without a value is None (typed None or Optional).
    if (type->kind() == TypeKind::None || type->kind() == TypeKind::Optional) return IValue();
    return std::nullopt;
  }
  switch (n->kindOf(attr::value)) {
    case AttributeKind::t: return IValue(n->t(attr::value));
    case AttributeKind::i:
      if (type->kind() == TypeKind::Bool) return IValue(n->i(attr::value) != 0);
      if (type->kind() == TypeKind::Float) return IValue(static_cast<double>(n->i(attr::value)));
      return IValue(n->i(attr::value));
    case AttributeKind::f: return IValue(n->f(attr::value));
    case AttributeKind::s:
      if (type->kind() == TypeKind::Device) return IValue(Device::parse(n->s(attr::value)));
      return IValue(n->s(attr::value));
    case AttributeKind::ival: return n->ival(attr::value);
    case AttributeKind::is: return IValue(n->is(attr::value));
    case AttributeKind::fs: return IValue(n->fs(attr::value));
    case AttributeKind::ss: return IValue(n->ss(attr::value));
    case AttributeKind::ts: return IValue(n->ts(attr::value));
    default: return std::nullopt;
  }
}

}  // namespace kiln
