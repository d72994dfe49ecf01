#include "kiln/frontend/tracer.h"

#include <iostream>
#include <mutex>
#include <utility>

#include "kiln/core/function.h"
#include "kiln/frontend/sugared_value.h"

namespace kiln::tracer {

namespace {

thread_local TracingState* current_state = nullptr;

std::mutex& handlerMutex() {
  static auto* m = new std::mutex();
  return *m;
}

std::function<void(const std::string&)>& warningHandler() {
  static auto* handler = new std::function<void(const std::string&)>();
  return *handler;
}

const void* identity(const Tensor& t) { return t.impl(); }

bool holdsTensors(const IValue& v) {
  if (v.isTensor()) return true;
  if (v.isTuple()) {
    for (const IValue& e : v.toTupleRef().elements) {
      if (holdsTensors(e)) return true;
    }
  }
  if (v.isList()) {
    for (const IValue& e : v.toListRef().elements) {
      if (holdsTensors(e)) return true;
    }
  }
  return false;
}

// The element type of a list argument: the schema's when it has no type
// variables (`Tensor?[]` for aten::index), else the list's own.
TypePtr listElementType(const IValue& list, const TypePtr& expected) {
  const TypePtr* declared = nullptr;
  if (expected) {
    TypePtr t = expected->kind() == TypeKind::Optional ? expected->cast<OptionalType>()->elementType() : expected;
    if (auto lt = t->cast<ListType>(); lt && !lt->elementType()->hasFreeVariables()) declared = &lt->elementType();
  }
  return declared ? *declared : list.toListRef().element_type;
}

// The type a graph input or output of this runtime value gets: complete
// tensor types, tuples of them, Tensor[] for lists.
TypePtr boundaryType(const IValue& v) {
  if (v.isTensor()) return TensorType::fromTensor(v.toTensor());
  if (v.isDict()) return DictType::create(v.toDictRef().key_type, TensorType::get());
  if (v.isTuple()) {
    std::vector<TypePtr> elements;
    for (const IValue& e : v.toTupleRef().elements) elements.push_back(boundaryType(e));
    return TupleType::create(std::move(elements));
  }
  if (v.isList()) return ListType::create(unshapedType(v.toListRef().element_type));
  return v.type();
}

// Whether a value can be a trace's input: tensors, and tuples and lists of them.
bool traceableInput(const IValue& v) {
  if (v.isTensor()) return v.toTensor().defined();
  if (v.isTuple()) {
    for (const IValue& e : v.toTupleRef().elements) {
      if (!traceableInput(e)) return false;
    }
    return true;
  }
  if (v.isList()) {
    for (const IValue& e : v.toListRef().elements) {
      if (!e.isTensor()) return false;
    }
    return true;
  }
  if (v.isDict()) {
    const DictObj& dict = v.toDictRef();
    TypeKind key = dict.key_type->kind();
    if (key != TypeKind::String && key != TypeKind::Int) return false;
    for (const auto& [k, value] : dict.items()) {
      if (!value.isTensor() || !value.toTensor().defined()) return false;
    }
    return true;
  }
  return false;
}

// The value a node's output should have as its type: a tensor's complete type, else the declared one.
TypePtr resultType(const IValue& v, const TypePtr& declared) {
  if (v.isTensor() && v.toTensor().defined()) return TensorType::fromTensor(v.toTensor());
  if (!declared || declared->hasFreeVariables()) return v.type();
  return declared;
}

}  // namespace

TracingState::TracingState(TraceContext context) : graph_(std::make_shared<Graph>()), context_(std::move(context)) {
  frames_.push_back(Frame{graph_, IValue(), nullptr, {}, {}, {}, 0});
}
TracingState::~TracingState() = default;

bool TracingState::isTraced(const IValue& v) const {
  return v.isTensor() && v.toTensor().defined() && values_.count(identity(v.toTensor())) > 0;
}

Value* TracingState::getValue(const IValue& v, const TypePtr& expected) {
  if (v.isTensor()) {
    Tensor t = v.toTensor();
    if (t.defined()) {
      if (auto it = values_.find(identity(t)); it != values_.end()) {
        Value* value = it->second.second;
        if (context_.value_name && !value->hasDebugName()) {
          std::string name = context_.value_name(t);
          if (!name.empty() && Value::isValidName(name)) value->setDebugName(name);
        }
        return resolve(value, t);
      }
      if (escaped_.count(identity(t))) {
        KILN_ERROR("kiln.trace: a tensor computed by a submodule call that raised is used after it");
      }
      if (auto it = tensor_attributes_.find(identity(t)); it != tensor_attributes_.end()) {
        if (Value* attribute = attributeValue(it->second.module, it->second.name)) return attribute;
      }
    }
    return insertConstant(v);
  }
  if (v.isObject()) {
    // 1.13's words (an object's value in a trace is its GetAttr chain from `self`).
    KILN_CHECK(isTracedModule(v), "Tried to trace <", v.toObjectRef().type->name(), " object at ",
               static_cast<const void*>(&v.toObjectRef()),
               "> but it is not part of the active trace. Modules that are called during a trace must be registered "
               "as submodules of the thing being traced.");
    return attributeValue(&v.toObjectRef(), "");
  }
  if (v.isList()) {
    TypePtr element = listElementType(v, expected);
    TypeKind kind =
        element->kind() == TypeKind::Optional ? element->cast<OptionalType>()->elementType()->kind() : element->kind();
    // 1.13 records int[] and Tensor[] arguments element by element (a size
    // may be traced, a tensor is); other lists are constants.
    if (kind == TypeKind::Tensor || kind == TypeKind::Int) {
      std::vector<Value*> elements;
      for (const IValue& e : v.toListRef().elements) elements.push_back(getValue(e, element));
      return graph_->insertNode(graph_->createList(element, elements))->output();
    }
    return insertConstant(v);
  }
  if (v.isTuple() && holdsTensors(v)) {
    std::vector<Value*> elements;
    for (const IValue& e : v.toTupleRef().elements) elements.push_back(getValue(e));
    return graph_->insertNode(graph_->createTuple(elements))->output();
  }
  return insertConstant(v);
}

Value* TracingState::insertConstant(const IValue& v) {
  if (current_range_.valid()) return graph_->insertConstant(v, current_range_);
  return graph_->insertConstant(v);
}

Value* TracingState::getOutput(const Tensor& t, size_t index) {
  if (!t.defined()) return graph_->insertConstant(IValue());
  auto it = values_.find(identity(t));
  if (it == values_.end()) {
    KILN_ERROR("output ", index, " (", IValue(t),
               ") of traced region did not have observable data dependence with "
               "trace inputs; this probably indicates your program cannot be understood by the tracer.");
  }
  return resolve(it->second.second, t);
}

// --- module tracing -----------------------------------------------------------------------------

void TracingState::setModule(const IValue& module, Value* self) {
  KILN_CHECK(frames_.size() == 1 && !tracesModule(), "setModule: the trace has a module already");
  frames_.front().module = module;
  frames_.front().self = self;
  const ObjectObj* root = &module.toObjectRef();
  std::function<void(ObjectObj&)> walk = [&](ObjectObj& object) {
    const ClassType& cls = *object.type;
    for (size_t i = 0; i < cls.numAttributes(); ++i) {
      const IValue& value = object.slot(i);
      if (value.isObject() && cls.attributeKind(i) == SlotKind::Module) {
        ObjectObj* sub = &value.toObjectRef();
        if (sub != root && modules_.emplace(sub, Owner{&object, cls.attributeName(i)}).second) walk(*sub);
      } else if (value.isTensor() && value.toTensor().defined()) {
        // The first place a tensor is found names it (a shared parameter reads as its first owner's).
        tensor_attributes_.emplace(identity(value.toTensor()), Owner{&object, cls.attributeName(i)});
      }
    }
  };
  walk(module.toObjectRef());
}

bool TracingState::isTracedModule(const IValue& module) const {
  if (!module.isObject() || !tracesModule()) return false;
  const ObjectObj* object = &module.toObjectRef();
  return object == &frames_.front().module.toObjectRef() || modules_.count(object) > 0;
}

std::optional<std::vector<std::string>> TracingState::modulePath(const ObjectObj* from, const ObjectObj* to) const {
  std::vector<std::string> atoms;
  for (const ObjectObj* current = to; current != from;) {
    auto it = modules_.find(current);
    if (it == modules_.end()) return std::nullopt;
    atoms.push_back(it->second.name);
    current = it->second.module;
  }
  return std::vector<std::string>(atoms.rbegin(), atoms.rend());
}

Value* TracingState::attributeValue(const ObjectObj* module, const std::string& name) {
  // The innermost method whose module holds the attribute reads it from its
  // `self`; the methods it calls get it as an input.
  for (size_t j = frames_.size(); j-- > 0;) {
    Frame& frame = frames_[j];
    if (frame.module.isNone()) continue;
    auto path = modulePath(&frame.module.toObjectRef(), module);
    if (!path) continue;
    if (!name.empty()) path->push_back(name);
    if (path->empty()) return liftInto(j, frame.self);
    std::string key;
    for (const std::string& atom : *path) key += (key.empty() ? "" : ".") + atom;
    Value*& chain = frame.attributes[key];
    if (!chain) {
      // A chain of its own per attribute, at the top of the graph, as 1.13 converts its TracedAttr nodes.
      Block* block = frame.graph->block();
      Node* top = block->nodes().begin() == block->nodes().end() ? block->returnNode() : *block->nodes().begin();
      WithInsertPoint guard(top);
      chain = frame.self;
      for (const std::string& atom : *path) chain = emitGetAttr(SourceRange(), *frame.graph, chain, atom);
    }
    return liftInto(j, chain);
  }
  return nullptr;
}

Value* TracingState::liftInto(size_t frame, Value* value, const Tensor& runtime) {
  for (size_t i = frame + 1; i < frames_.size(); ++i) {
    Frame& inner = frames_[i];
    auto it = inner.lifted.find(value);
    if (it != inner.lifted.end()) {
      value = it->second;
      continue;
    }
    Value* input = inner.graph->addInput();
    input->setType(runtime.defined() ? TensorType::fromTensor(runtime) : value->type());
    if (value->hasDebugName()) input->setDebugName(value->debugNameBase());
    inner.captures.push_back(value);
    inner.lifted.emplace(value, input);
    value = input;
  }
  return value;
}

Value* TracingState::resolve(Value* value, const Tensor& runtime) {
  if (value->owningGraph() == graph_.get()) return value;
  for (size_t j = frames_.size(); j-- > 0;) {
    if (frames_[j].graph.get() == value->owningGraph()) return liftInto(j, value, runtime);
  }
  if (auto it = finished_graphs_.find(value->owningGraph()); it != finished_graphs_.end()) {
    return resolve(exportValue(it->second, value), runtime);
  }
  KILN_ERROR("kiln.trace: a value of a finished submodule call is used outside it");
}

void TracingState::enterMethod(const IValue& module) {
  KILN_CHECK(isTracedModule(module), "enterMethod: not a module of this trace");
  auto graph = std::make_shared<Graph>();
  Value* self = graph->addInput("self");
  self->setType(module.toObjectRef().type);
  frames_.push_back(Frame{graph, module, self, {}, {}, {}, finished_.size()});
  graph_ = std::move(graph);
}

void TracingState::exitMethod(const std::string& method_name) {
  KILN_CHECK(frames_.size() > 1, "exitMethod: no method call is being traced");
  Frame frame = std::move(frames_.back());
  frames_.pop_back();
  graph_ = frames_.back().graph;
  const ClassType* cls = frame.module.toObjectRef().type.get();
  auto taken = [&](const std::string& name) {
    if (cls->findMethod(name)) return true;
    for (const FinishedCall& f : finished_) {
      if (f.method.module.toObjectRef().type.get() == cls && f.method.name == name) return true;
    }
    return false;
  };
  std::string name = method_name;
  for (size_t i = 1; taken(name); ++i) name = method_name + std::to_string(i);
  std::vector<Value*> inputs = {getValue(frame.module)};
  inputs.insert(inputs.end(), frame.captures.begin(), frame.captures.end());
  // No outputs yet: they are the method's values used after the call, added
  // as they are used (exportValue).
  Node* call = graph_->insertNode(graph_->create(prim::CallMethod, inputs, 0));
  call->s_(attr::name, name);
  finished_graphs_[frame.graph.get()] = finished_.size();
  finished_.push_back({MethodGraph{frame.module, name, frame.graph}, call, {}});
}

Value* TracingState::exportValue(size_t index, Value* value) {
  FinishedCall& f = finished_[index];
  Value*& out = f.exported[value];
  if (!out) {
    f.method.graph->registerOutput(value);
    out = f.call->addOutput();
    out->setType(value->type());
  }
  return out;
}

std::vector<TracingState::MethodGraph> TracingState::finishMethods() {
  std::vector<MethodGraph> methods;
  for (FinishedCall& f : finished_) {
    Graph& graph = *f.method.graph;
    Graph& caller = *f.call->owningGraph();
    if (graph.outputs().empty()) {
      // Nothing of the call is used after it: the method returns None.
      graph.registerOutput(graph.insertConstant(IValue()));
      f.call->addOutput()->setType(NoneType::get());
    } else if (graph.outputs().size() == 1) {
      f.call->output()->setType(unshapedType(f.call->output()->type()));
    } else {
      // Several outputs: the method returns a tuple and the caller unpacks
      // it (1.13's convertReturnsToTuples).
      std::vector<Value*> outputs(graph.outputs().begin(), graph.outputs().end());
      Node* tuple = graph.insertNode(graph.createTuple(outputs));
      while (!graph.outputs().empty()) graph.eraseOutput(graph.outputs().size() - 1);
      graph.registerOutput(tuple->output());
      WithInsertPoint guard(f.call);
      Node* call = caller.insertNode(
          caller.create(prim::CallMethod, std::vector<Value*>(f.call->inputs().begin(), f.call->inputs().end())));
      call->s_(attr::name, f.method.name);
      call->output()->setType(unshapedType(tuple->output()->type()));
      Node* unpack = caller.insertNode(caller.createTupleUnpack(call->output()));
      for (size_t i = 0; i < unpack->outputs().size(); ++i) {
        unpack->output(i)->setType(outputs[i]->type());
        f.call->output(i)->replaceAllUsesWith(unpack->output(i));
      }
      f.call->destroy();
      f.call = call;
    }
    methods.push_back(f.method);
  }
  finished_.clear();
  finished_graphs_.clear();
  return methods;
}

void TracingState::abandonMethod() {
  KILN_CHECK(frames_.size() > 1, "abandonMethod: no method call is being traced");
  // The call's graph goes, with the calls it finished.
  forgetValuesOf(*graph_);
  size_t first = frames_.back().finished_before;
  for (size_t i = first; i < finished_.size(); ++i) {
    forgetValuesOf(*finished_[i].method.graph);
    finished_graphs_.erase(finished_[i].method.graph.get());
  }
  finished_.resize(first);
  frames_.pop_back();
  graph_ = frames_.back().graph;
}

void TracingState::forgetValuesOf(const Graph& graph) {
  // The graph goes: no map entry may point into it. Its tensors are
  // remembered, to say why they cannot be used.
  for (auto it = values_.begin(); it != values_.end();) {
    if (it->second.second->owningGraph() == &graph) {
      escaped_.emplace(it->first, it->second.first);
      it = values_.erase(it);
    } else {
      ++it;
    }
  }
}

void TracingState::setValue(const IValue& v, Value* value) {
  if (v.isTensor()) {
    Tensor t = v.toTensor();
    if (t.defined()) {
      values_[identity(t)] = {t, value};
      escaped_.erase(identity(t));
    }
    return;
  }
  if (v.isTuple() && holdsTensors(v)) {
    Node* unpack = graph_->insertNode(graph_->createTupleUnpack(value));
    const auto& elements = v.toTupleRef().elements;
    for (size_t i = 0; i < elements.size(); ++i) setValue(elements[i], unpack->output(i));
    return;
  }
  if (v.isDict() && v.toDictRef().value_type->kind() == TypeKind::Tensor) {
    // As 1.13 reads a dict input: aten::__getitem__ of each key.
    for (const auto& [key, element] : v.toDictRef().items()) {
      Node* get = graph_->create(Symbol::fromQualString("aten::__getitem__"), {value, graph_->insertConstant(key)});
      get->output()->setType(TensorType::get());
      setValue(element, graph_->insertNode(get)->output());
    }
    return;
  }
  if (v.isList() && holdsTensors(v)) {
    const auto& elements = v.toListRef().elements;
    Node* unpack = graph_->insertNode(graph_->createListUnpack(value, elements.size()));
    for (size_t i = 0; i < elements.size(); ++i) {
      // Lists given as inputs keep `Tensor` elements (1.13 prints them so);
      // lists an operator made are unpacked into complete types.
      if (value->node()->kind() != prim::Param) unpack->output(i)->setType(resultType(elements[i], nullptr));
      setValue(elements[i], unpack->output(i));
    }
  }
}

void TracingState::runOperator(const Operator& op, Stack& stack) {
  const FunctionSchema& schema = op.schema();
  const auto& formals = schema.arguments();
  // A vararg operator's arguments are not described by its schema: run it
  // unrecorded (its results are constants to the trace).
  if (schema.isVararg() || stack.size() < formals.size()) {
    DispatchHookSuspended eager;
    op.operation()(stack);
    return;
  }
  // Inputs are looked up before the call: an in-place op rebinds its tensor.
  current_range_ = context_.source_range ? context_.source_range() : SourceRange();
  std::vector<Value*> inputs;
  size_t first = stack.size() - formals.size();
  for (size_t i = 0; i < formals.size(); ++i) inputs.push_back(getValue(stack[first + i], formals[i].type));
  SourceRange range = std::exchange(current_range_, SourceRange());
  {
    DispatchHookSuspended eager;
    ::kiln::runOperator(op, stack);  // through autograd, when an argument requires grad
  }
  size_t num_results = stack.size() - first;
  Node* node = graph_->insertNode(graph_->create(op.symbol(), inputs, num_results));
  if (range.valid()) node->setSourceRange(std::move(range));
  const auto& returns = schema.returns();
  for (size_t i = 0; i < num_results; ++i) {
    const IValue& result = stack[first + i];
    node->output(i)->setType(resultType(result, i < returns.size() ? returns[i].type : nullptr));
    setValue(result, node->output(i));
  }
}

void TracingState::runFunction(Function& fn, Stack& stack) {
  const auto& formals = fn.getSchema().arguments();
  KILN_CHECK(stack.size() >= formals.size(), fn.name(), "() expected ", formals.size(), " arguments");
  std::vector<Value*> inputs;
  size_t first = stack.size() - formals.size();
  // A method (of a scripted submodule) is called on its object, as 1.13 records it.
  bool method = !formals.empty() && formals[0].type->kind() == TypeKind::Class && stack[first].isObject();
  for (size_t i = 0; i < formals.size(); ++i) inputs.push_back(getValue(stack[first + i], formals[i].type));
  {
    DispatchHookSuspended eager;
    fn.run(stack);
  }
  size_t num_results = stack.size() - first;
  Node* call = nullptr;
  if (method) {
    call = graph_->insertNode(graph_->create(prim::CallMethod, inputs, num_results));
    call->s_(attr::name, fn.getSchema().name());
  } else {
    std::shared_ptr<Function> callee;
    if (auto it = owners_.find(&fn); it != owners_.end()) {
      callee = it->second;
    } else {
      callee = std::shared_ptr<Function>(&fn, [](Function*) {});
    }
    Node* constant = graph_->create(prim::Constant);
    constant->s_(attr::name, fn.name());
    constant->output()->setType(FunctionType::create(fn.name(), std::move(callee)));
    graph_->insertNode(constant);
    inputs.insert(inputs.begin(), constant->output());
    call = graph_->insertNode(graph_->create(prim::CallFunction, inputs, num_results));
  }
  const auto& returns = fn.getSchema().returns();
  for (size_t i = 0; i < num_results; ++i) {
    // A call's outputs keep the declared types, as 1.13 prints them.
    call->output(i)->setType(i < returns.size() ? returns[i].type : stack[first + i].type());
    setValue(stack[first + i], call->output(i));
  }
}

void TracingState::noteOwner(std::shared_ptr<Function> fn) {
  const Function* key = fn.get();
  owners_[key] = std::move(fn);
}

Value* TracingState::outputValue(const IValue& output, bool strict) {
  TracingState& state = *this;
  Graph& graph = *graph_;
  size_t tensor_index = 0;
  std::function<Value*(const IValue&)> output_value = [&](const IValue& v) -> Value* {
    if (v.isTensor()) return state.getOutput(v.toTensor(), tensor_index++);
    if (v.isTuple()) {
      std::vector<Value*> elements;
      for (const IValue& e : v.toTupleRef().elements) elements.push_back(output_value(e));
      return graph.insertNode(graph.createTuple(elements))->output();
    }
    if (v.isList() && v.toListRef().element_type->kind() == TypeKind::Tensor) {
      if (strict) {
        warn(
            "Encountering a list at the output of the tracer might cause the trace to be incorrect, this is only "
            "valid if the container structure does not change based on the module's inputs. Consider using a "
            "constant container instead (e.g. for `list`, use a `tuple` instead. for `dict`, use a `NamedTuple` "
            "instead). If you absolutely need this and know the side effects, pass strict=False to trace() to "
            "allow this behavior.");
      }
      std::vector<Value*> elements;
      for (const IValue& e : v.toListRef().elements) elements.push_back(output_value(e));
      return graph.insertNode(graph.createList(TensorType::get(), elements))->output();
    }
    if (v.isDict() && v.toDictRef().value_type->kind() == TypeKind::Tensor) {
      KILN_CHECK(!strict,
                 "Encountering a dict at the output of the tracer might cause the trace to be incorrect, this is "
                 "only valid if the container structure does not change based on the module's inputs. Consider "
                 "using a constant container instead (e.g. for `list`, use a `tuple` instead. for `dict`, use a "
                 "`NamedTuple` instead). If you absolutely need this and know the side effects, pass strict=False "
                 "to trace() to allow this behavior.");
      std::vector<Value*> keys, values;
      for (const auto& [key, value] : v.toDictRef().items()) {
        keys.push_back(graph.insertConstant(key));
        values.push_back(output_value(value));
      }
      const DictObj& dict = v.toDictRef();
      return graph.insertNode(graph.createDict(dict.key_type, TensorType::get(), keys, values))->output();
    }
    KILN_ERROR("Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from traced functions");
  };
  return output_value(output);
}

TracingState* tracingState() { return current_state; }

TraceScope::TraceScope(const Stack& inputs, const std::vector<std::string>& names, TraceContext context)
    : state_(std::make_shared<TracingState>(std::move(context))) {
  // A module as the first input is `self`: the trace of one of its methods.
  bool module = !inputs.empty() && inputs[0].isObject() && inputs[0].toObjectRef().type->isModule();
  bool all_traceable = true;
  for (size_t i = module ? 1 : 0; i < inputs.size(); ++i) all_traceable = all_traceable && traceableInput(inputs[i]);
  if (!all_traceable) {
    Stack arguments(inputs.begin() + (module ? 1 : 0), inputs.end());
    KILN_ERROR("Type '", annotationOf(IValue::tuple(arguments)),
               "' cannot be traced. Only Tensors and (possibly nested) Lists, Dicts, and Tuples of Tensors can be "
               "traced");
  }
  Graph& graph = *state_->graph();
  for (size_t i = 0; i < inputs.size(); ++i) {
    Value* input = graph.addInput(i < names.size() && Value::isValidName(names[i]) ? names[i] : "");
    input->setType(boundaryType(inputs[i]));
    if (module && i == 0) {
      state_->setModule(inputs[0], input);
    } else {
      state_->setValue(inputs[i], input);
    }
  }
  previous_state_ = std::exchange(current_state, state_.get());
  previous_hook_ = setDispatchHook(state_.get());
}

TraceScope::~TraceScope() {
  if (!active_) return;
  current_state = previous_state_;
  setDispatchHook(previous_hook_);
}

GraphPtr TraceScope::exit(const IValue& output, bool strict) {
  KILN_CHECK(active_, "the trace has ended already");
  // Outputs are looked up with the hook off: building them records nothing else.
  current_state = previous_state_;
  setDispatchHook(previous_hook_);
  active_ = false;
  Graph& graph = *state_->graph();
  graph.registerOutput(state_->outputValue(output, strict));
  methods_ = state_->finishMethods();
  return state_->graph();
}

TracingSuspended::TracingSuspended()
    : previous_state_(std::exchange(current_state, nullptr)),
      previous_hook_(previous_state_ ? setDispatchHook(nullptr) : dispatchHook()) {}

TracingSuspended::~TracingSuspended() {
  current_state = previous_state_;
  setDispatchHook(previous_hook_);
}

TraceResult trace(const Stack& inputs, const std::function<IValue(const Stack&)>& fn,
                  const std::vector<std::string>& names, bool strict, TraceContext context) {
  TraceScope scope(inputs, names, std::move(context));
  IValue output = fn(inputs);
  GraphPtr graph = scope.exit(output, strict);
  return {std::move(graph), std::move(output), std::move(scope.methods())};
}

void warn(const std::string& message) {
  std::function<void(const std::string&)> handler;
  {
    std::lock_guard lock(handlerMutex());
    handler = warningHandler();
  }
  if (handler) {
    handler(message);
  } else {
    std::cerr << "TracerWarning: " << message << "\n";
  }
}

void setWarningHandler(std::function<void(const std::string&)> handler) {
  std::lock_guard lock(handlerMutex());
  warningHandler() = std::move(handler);
}

std::string annotationOf(const IValue& v) {
  auto join = [](const std::vector<IValue>& elements) {
    std::string out;
    for (size_t i = 0; i < elements.size(); ++i) out += (i ? ", " : "") + annotationOf(elements[i]);
    return out;
  };
  switch (v.tag()) {
    case IValue::Tag::Tensor: return "Tensor";
    case IValue::Tag::Tuple: return "Tuple[" + join(v.toTupleRef().elements) + "]";
    case IValue::Tag::List: return "List[" + unshapedType(v.toListRef().element_type)->str() + "]";
    case IValue::Tag::Dict:
      return "Dict[" + v.toDictRef().key_type->str() + ", " + unshapedType(v.toDictRef().value_type)->str() + "]";
    case IValue::Tag::None: return "NoneType";
    default: return v.type()->str();
  }
}

}  // namespace kiln::tracer
