#pragma once
// The tracer (torch.jit.trace's): records the operators a piece of eager
// code runs as a graph. A thread-local TracingState maps runtime values (a
// tensor by the identity of its TensorImpl) to the graph values that compute
// them; it is the thread's DispatchHook (kiln/core/dispatch_hook.h), so every
// operator run through runOperator and every TorchScript function called
// while it is active appends a node:
//   - an operator call becomes a node of its kind whose inputs are the traced
//     values of the tensor arguments; every other argument (Python numbers,
//     dtypes, None, defaults the schema filled in, tensors the trace has not
//     seen) becomes a prim::Constant; lists of tensors and of ints become
//     prim::ListConstruct of their elements, as 1.13 records them. Tensor
//     results get complete types (`Float(2, 3, strides=[3, 1], ...)`); a
//     Tensor[] result is unpacked with prim::ListUnpack. An in-place op's
//     result is the same tensor: its map entry moves to the node's output, so
//     later uses read the mutated value.
//   - a call of a TorchScript function becomes prim::CallFunction of a
//     Function-typed prim::Constant[name=...] holding the callee: its control
//     flow is kept, not its unrolled operators.
// Inputs are flattened at the boundaries as 1.13 does: a tuple input is one
// graph input of tuple type unpacked by prim::TupleUnpack (a list input:
// Tensor[] and prim::ListUnpack); tuple and list outputs are rebuilt with
// prim::TupleConstruct / prim::ListConstruct into the graph's one output.
//
// The state holds the tensors it maps, so a tensor freed during the trace
// cannot hand its address to a new one.
//
// Tracing a module (kiln.trace of a module, as 1.13's trace_module): the
// first input is the module object (`self`, given to TraceScope as the
// first example input). Its parameters, buffers and other tensor attributes,
// and those of its submodules, are read with a chain of prim::GetAttr from
// `self` where the traced code first uses them, one chain per attribute and
// method, inserted at the top of the graph (1.13's TracedAttr nodes after
// ConvertTracedAttrReferences). A call of a submodule's method is traced
// into a graph of its own (enterMethod / exitMethod): its first input is the
// submodule, and every value of an enclosing graph it uses becomes a
// further input, in order of first use (1.13 lambda-lifts its scope blocks
// the same way: the method's inputs are what it reads, not the Python
// arguments); its outputs are its values used after the call (exitMethod).
// A TorchScript method of a submodule (a scripted submodule) is recorded as
// prim::CallMethod by runFunction.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/core/dispatch_hook.h"
#include "kiln/ir/graph.h"

namespace kiln::tracer {

// What a front end (the Python binding) can tell the tracer about the code
// it traces; either may be empty.
struct TraceContext {
  // A name for a traced tensor (the caller's variable holding it), or "".
  std::function<std::string(const Tensor&)> value_name;
  // Where the code recording a node is (a Python file and line), for the
  // node and its constants (printed `# file.py:3:0`, as 1.13 does).
  std::function<SourceRange()> source_range;
};

class TracingState : public DispatchHook {
 public:
  explicit TracingState(TraceContext context = {});
  ~TracingState() override;

  const GraphPtr& graph() const { return graph_; }

  // The graph value computing `v`: a traced tensor's value (named by the
  // context when it has no name yet, as 1.13 names values when they are
  // first used); a tensor the trace has not seen as a constant; lists and
  // tuples holding tensors (and lists of ints) built from their elements;
  // anything else a constant.
  // `expected` (a schema's argument type, may be null) types the lists built.
  Value* getValue(const IValue& v, const TypePtr& expected = nullptr);
  // The value of output tensor number `index` (counting the tensors of the
  // output): as getValue, but unnamed, and a tensor the trace has not
  // seen raises, as in 1.13 (the trace would not depend on its inputs).
  Value* getOutput(const Tensor& t, size_t index);
  // Whether `v` is a tensor this trace computes.
  bool isTraced(const IValue& v) const;
  // Maps the tensors of `v` to `value`: a tensor directly; the elements of a
  // tuple or list of tensors through a prim::TupleUnpack / prim::ListUnpack.
  void setValue(const IValue& v, Value* value);

  void runOperator(const Operator& op, Stack& stack) override;
  void runFunction(Function& fn, Stack& stack) override;
  // Lets a recorded call of `fn` own it (the Python bindings hold functions
  // by shared_ptr); otherwise the trace points at the callee, which must
  // outlive the traced function.
  void noteOwner(std::shared_ptr<Function> fn);

  // Module tracing (see the top of this file). `module` is the traced
  // module's object, `self` the graph input standing for it.
  void setModule(const IValue& module, Value* self);
  bool tracesModule() const { return !frames_.front().module.isNone(); }
  // Whether `module` is the traced module or one of its submodules.
  bool isTracedModule(const IValue& module) const;
  // Starts recording a call of a method of `module` (a traced module) in a
  // graph of its own; everything recorded until exitMethod goes there.
  void enterMethod(const IValue& module);
  // Ends the call: the caller's graph records
  // `prim::CallMethod[name=...](module, inputs...)`. The method is named
  // `method_name`, or method_name1, method_name2, ... when the type has that
  // name already (1.13's mangleMethodName). Its outputs are not what the
  // Python code returned but, as 1.13 lifts its scope blocks
  // (MakeDefsDominateUses), the values of the method used after the call,
  // in order of first use: each becomes an output of the method and of the
  // call when it is first used (a result, a buffer changed in place, a
  // tensor kept in an attribute); a result returned unchanged from the
  // caller's values is no output.
  void exitMethod(const std::string& method_name);
  // Ends the call without a result (the traced code raised).
  void abandonMethod();
  // The methods the trace made (TraceScope::exit finishes them): a method
  // without outputs returns None; one with several returns a tuple the
  // caller unpacks (1.13's convertReturnsToTuples).
  struct MethodGraph {
    IValue module;
    std::string name;
    GraphPtr graph;  // `self`, then the values it reads; uncleaned
  };
  std::vector<MethodGraph> finishMethods();

  // The value standing for the traced output `v` (tensors, and tuples,
  // lists and dicts of them), as the graph's output is built (TraceScope::exit).
  Value* outputValue(const IValue& v, bool strict);

 private:
  // A constant at the source range of the operator being recorded.
  Value* insertConstant(const IValue& v);

  // One graph being recorded: the trace itself (frames_[0]) and, above it,
  // the submodule method calls in progress.
  struct Frame {
    GraphPtr graph;
    IValue module;  // None when tracing a function
    Value* self = nullptr;
    std::vector<Value*> captures;                        // enclosing graph's values read here
    std::unordered_map<Value*, Value*> lifted;           // such a value -> this graph's input
    std::unordered_map<std::string, Value*> attributes;  // `sub.w` -> its GetAttr chain here
    size_t finished_before = 0;                          // finished_.size() when the call started
  };
  // Where a module or tensor is an attribute: its module and name.
  struct Owner {
    const ObjectObj* module;
    std::string name;
  };
  // `value` (of some frame's graph) as a value of the current graph, lifted
  // into the method graphs between as inputs. `runtime` (may be undefined)
  // is the tensor it computes: lifted inputs get its complete type, as the
  // values 1.13 lifts out of its scope blocks have.
  Value* resolve(Value* value, const Tensor& runtime = Tensor());
  Value* liftInto(size_t frame, Value* value, const Tensor& runtime = Tensor());
  // Attribute `name` of `module` ("" for the module itself) read in the current graph.
  Value* attributeValue(const ObjectObj* module, const std::string& name);
  std::optional<std::vector<std::string>> modulePath(const ObjectObj* from, const ObjectObj* to) const;
  // Drops the map entries pointing into `graph` (a method call abandoned).
  void forgetValuesOf(const Graph& graph);
  // `value` of the finished method call `index` as a new output of its call.
  Value* exportValue(size_t index, Value* value);

  std::vector<Frame> frames_;
  std::unordered_map<const ObjectObj*, Owner> modules_;       // submodules of the traced module
  std::unordered_map<const void*, Owner> tensor_attributes_;  // TensorImpl -> its attribute
  // Tensors of an abandoned method call (kept alive, as values_ keeps its tensors).
  std::unordered_map<const void*, Tensor> escaped_;
  struct FinishedCall {
    MethodGraph method;
    Node* call;                                   // in the caller's graph
    std::unordered_map<Value*, Value*> exported;  // the method's value -> the call's output
  };
  std::vector<FinishedCall> finished_;

  std::unordered_map<const Graph*, size_t> finished_graphs_;
  GraphPtr graph_;  // the current frame's
  TraceContext context_;
  SourceRange current_range_;  // of the operator being recorded
  // TensorImpl -> (the tensor, kept alive; its graph value).
  std::unordered_map<const void*, std::pair<Tensor, Value*>> values_;
  std::unordered_map<const Function*, std::shared_ptr<Function>> owners_;
};

// This thread's trace (null when it is not tracing).
TracingState* tracingState();
inline bool isTracing() { return tracingState() != nullptr; }

// One trace on this thread, for as long as the scope lives. The constructor
// starts it with one graph input per example input (named by `names` where
// given; an input that is not a tensor or a tuple or list of tensors
// raises); a trace already active on this thread is put aside until this
// one ends. exit() makes `output` the graph's output and ends the trace;
// a scope left without exit() (an error) just ends it. `strict` (as
// torch.jit.trace's): a dict output raises and a list output warns;
// otherwise both are accepted.
class TraceScope {
 public:
  TraceScope(const Stack& inputs, const std::vector<std::string>& names, TraceContext context = {});
  ~TraceScope();  // abandons the trace unless exit() ran
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

  TracingState& state() { return *state_; }
  GraphPtr exit(const IValue& output, bool strict = true);
  // After exit: the methods a module trace made (TracingState::finishMethods).
  std::vector<TracingState::MethodGraph>& methods() { return methods_; }

 private:
  std::shared_ptr<TracingState> state_;
  TracingState* previous_state_;
  DispatchHook* previous_hook_;
  bool active_ = true;
  std::vector<TracingState::MethodGraph> methods_;
};

// No trace on this thread for the guard's lifetime (a trace active here
// resumes after it): work that must not be recorded, such as kiln.trace's
// checks when kiln.trace runs inside another trace.
class TracingSuspended {
 public:
  TracingSuspended();
  ~TracingSuspended();
  TracingSuspended(const TracingSuspended&) = delete;
  TracingSuspended& operator=(const TracingSuspended&) = delete;

 private:
  TracingState* previous_state_;
  DispatchHook* previous_hook_;
};

// Runs `fn` on `inputs` while tracing; returns the (raw, uncleaned) graph
// and fn's result.
struct TraceResult {
  GraphPtr graph;
  IValue output;
  std::vector<TracingState::MethodGraph> methods;  // of a module trace's submodule calls
};
TraceResult trace(const Stack& inputs, const std::function<IValue(const Stack&)>& fn,
                  const std::vector<std::string>& names = {}, bool strict = true, TraceContext context = {});

// Tracer warnings (a list output, a tensor turned into a Python number):
// the Python package turns them into kiln.TracerWarning; by default they go
// to stderr.
void warn(const std::string& message);
void setWarningHandler(std::function<void(const std::string&)> handler);

// The annotation text of a value's type as torch's trace errors print it
// (`Tuple[Tensor, int]`, `List[Tensor]`, `Dict[str, Tensor]`).
std::string annotationOf(const IValue& v);

}  // namespace kiln::tracer
